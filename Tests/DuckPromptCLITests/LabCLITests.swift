import DuckPromptTestSupport
import Foundation
import Testing
@testable import DuckPromptCLI
import DuckPrompt
import DuckPromptLab

// `duckprompt lab`'s command line: parsed without a server, and the binary's usage errors,
// which start nothing (exit 64 before any server; 127 for a command that does not exist).

@Suite("duckprompt lab arguments")
struct LabCLITests {
    @Test("options before --, the command after it")
    func parses() throws {
        let options = try LabCommand.parse(["--server", "pulseaudio", "--device", "speaker", "--device=hdmi=tv",
                                            "--default", "tv", "--music", "--report", "-", "--timeout", "90s", "--keep",
                                            "--", "duckprompt", "play", "--music", "a.wav"])
        #expect(options.server == .pulseaudio)
        #expect(options.devices == [EmulatedDevice(kind: .speaker, name: "speaker"), EmulatedDevice(kind: .hdmi, name: "tv")])
        #expect(options.defaultSink == "tv" && options.music == .defaultSink && options.musicSink == "tv")
        #expect(options.report == "-" && options.timeoutMs == 90_000 && options.keep)
        #expect(options.command == ["duckprompt", "play", "--music", "a.wav"])
        #expect(options.listens)
        #expect(options.offersService)
        let suite = try LabCommand.parse(["--device", "none", "--no-listen", "--no-service", "--", "swift", "test"])
        #expect(suite.noDevices && suite.devices.isEmpty && !suite.listens && !suite.offersService)
        #expect(suite.command == ["swift", "test"])
    }

    @Test("--music takes a sink only when one follows it", arguments: [
        (["--music", "--"], LabOptions.Music.defaultSink),
        (["--music", "bt_headset", "--"], .sink("bt_headset")),
        (["--music=bt_headset", "--"], .sink("bt_headset")),
        (["--music", "--keep", "--"], .defaultSink),
    ])
    func music(arguments: [String], expected: LabOptions.Music) throws {
        #expect(try LabCommand.parse(arguments + ["true"]).music == expected)
    }

    @Test("--timeout", arguments: [("90", 90_000), ("2.5s", 2500), ("500ms", 500), ("10m", 600_000), ("1h", 3_600_000)])
    func timeout(text: String, ms: Int) throws {
        #expect(try LabCommand.duration(text) == ms)
    }

    @Test("usage errors name the problem", arguments: [
        (["true"], "lab needs -- before the command"),
        (["--"], "lab needs a command after --"),
        (["--server", "jack", "--", "true"], "--server 'jack' is not pipewire or pulseaudio"),
        (["--device", "radio", "--", "true"], "--device 'radio': the kind is one of"),
        (["--timeout", "0", "--", "true"], "--timeout '0' is out of range"),
        (["--timeout", "soon", "--", "true"], "--timeout 'soon' is not a time"),
        (["--keep=yes", "--", "true"], "option --keep takes no value"),
        (["--frobnicate", "--", "true"], "unknown option '--frobnicate' for lab"),
        (["--keep", "paplay", "--", "true"], "'paplay' comes before it"),
        (["--default", "tv", "--", "true"], "--default 'tv' is not one of the lab's devices"),
        (["--report"], "lab needs -- before the command"),
    ])
    func usage(arguments: [String], message: String) throws {
        do {
            _ = try LabCommand.parse(arguments)
            Issue.record("accepted \(arguments)")
        } catch let error as UsageError {
            #expect(error.message.contains(message), "\(error.message)")
        }
    }

    @Test("the binary: a usage error exits 64 with one line; a command that does not exist exits 127 before any server starts")
    func binary() throws {
        let usage = try Binary.run(["lab", "--server", "jack", "--", "true"])
        #expect(usage.status == 64, "\(usage)")
        #expect(usage.errorLines == ["duckprompt: --server 'jack' is not pipewire or pulseaudio"], "\(usage)")
        let missing = try Binary.run(["lab", "--", "no-such-command-duckprompt"])
        #expect(missing.status == 127, "\(missing)")
        #expect(missing.stderr.contains("no-such-command-duckprompt: command not found"), "\(missing)")
        #expect(!missing.stderr.contains("private"), "no server is started: \(missing)")
    }
}
