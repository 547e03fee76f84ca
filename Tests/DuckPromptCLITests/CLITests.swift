import Foundation
import Testing
@testable import DuckPromptCLI
import DuckPrompt
import DuckPromptTestSupport

// Runs of the built `duckprompt` binary with no sound server reachable: help, versions,
// usage errors, bad files and an unreachable server, checked by stdout, stderr and exit code.
// Then the argument scanner itself.

/// The server every run is pointed at: nothing listens there.
let unreachableServer = "unix:/nonexistent/duckprompt-test"

/// One finished run of the binary.
typealias Run = ProcessResult

enum Binary {
    /// Runs the built `duckprompt` (`duckpromptBinaryURL`) with `arguments` through the shared
    /// runner, no server reachable (`PULSE_SERVER` points nowhere, `XDG_RUNTIME_DIR` and the
    /// other variables that redirect libpulse removed, an empty config home), in a scratch
    /// directory. Records an issue when it outlives `limit` seconds (it is then terminated).
    /// - Parameters:
    ///   - input: a file (or FIFO) for standard input; default /dev/null.
    ///   - signal: sent `signal.after` seconds after the start, if the binary still runs.
    static func run(_ arguments: [String], limit: Double = 30, environment extra: [String: String] = [:],
                    input: FileHandle = .nullDevice, signal: (number: Int32, after: Double)? = nil) throws -> Run {
        let binary = try #require(duckpromptBinaryURL, "duckprompt binary not found next to the tests; set DUCKPROMPT_BIN")
        let dir = try Scratch()
        var environment = ProcessInfo.processInfo.environment
        for key in ["XDG_RUNTIME_DIR", "PULSE_SINK", "PULSE_SOURCE", "PULSE_COOKIE", "DISPLAY"] {
            environment.removeValue(forKey: key)
        }
        environment["PULSE_SERVER"] = unreachableServer
        // No user config file leaks in: an empty config home unless the test gives one.
        environment["XDG_CONFIG_HOME"] = dir.url.appendingPathComponent("config").path
        environment.removeValue(forKey: "DUCKPROMPT_DEVICE")
        for (k, v) in extra { environment[k] = v }
        let result = try DuckPromptTestSupport.run(arguments, executable: binary, environment: environment,
                                                   inheritEnvironment: false, input: .file(input), directory: dir.url,
                                                   limit: limit, signal: signal, check: false)
        if result.timedOut { Issue.record("duckprompt \(arguments) still running after \(limit) s; terminated") }
        return result
    }
}

extension Scratch {
    /// A 0.2 s 1 kHz WAV at 48 kHz with `channels` channels (default mono), made by sox.
    func wav(_ name: String = "x.wav", channels: Int = 1) throws -> String {
        let path = path(name)
        try DuckPromptTestSupport.run(["sox", "-n", "-r", "48000", "-c", "\(channels)", path, "synth", "0.2", "sine", "1000"])
        return path
    }
}

/// An error run: the status, nothing on stdout, exactly one line on stderr starting `duckprompt: `.
func expectError(_ run: Run, status: Int32, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(run.status == status, "\(run)", sourceLocation: sourceLocation)
    #expect(run.stdout.isEmpty, "\(run)", sourceLocation: sourceLocation)
    #expect(run.stderr.hasSuffix("\n"), "\(run)", sourceLocation: sourceLocation)
    #expect(run.errorLines.count == 1, "\(run)", sourceLocation: sourceLocation)
    #expect(run.stderr.hasPrefix("duckprompt: "), "\(run)", sourceLocation: sourceLocation)
}

// MARK: - Help and version

@Suite("duckprompt help and version")
struct HelpRunTests {
    @Test("help exits 0 with OVERVIEW, USAGE and OPTIONS on stdout", arguments: [
        ["--help"], ["-h"], ["help"],
        ["play", "--help"], ["play", "-h"], ["help", "play"], ["play", "--duck", "-6dB", "--help"],
        ["devices", "--help"], ["help", "devices"],
        ["route", "--help"], ["help", "route"], ["serve", "--help"], ["help", "serve"],
        ["lab", "--help"], ["help", "lab"],
    ])
    func help(arguments: [String]) throws {
        let run = try Binary.run(arguments)
        #expect(run.status == 0, "\(run)")
        #expect(run.stderr.isEmpty, "\(run)")
        for heading in ["OVERVIEW: ", "USAGE: duckprompt", "OPTIONS:"] {
            #expect(run.stdout.contains(heading), "\(heading) missing:\n\(run)")
        }
    }

    @Test("each help describes its own subcommand")
    func helpTopics() throws {
        let main = try Binary.run(["--help"])
        #expect(main.stdout.contains("SUBCOMMANDS:"))
        for verb in ["play", "devices", "route"] { #expect(main.stdout.contains("  \(verb)")) }
        #expect(main.stdout.contains("\n  64                      Usage error"))

        let play = try Binary.run(["play", "--help"])
        #expect(play.stdout.contains("USAGE: duckprompt play [options] FILE"))
        #expect(play.stdout.contains("ARGUMENTS:"))
        for option in ["--device", "--duck GAIN", "--attack-ms", "--release-ms", "--property", "--server"] {
            #expect(play.stdout.contains(option), "\(option) missing from play --help")
        }
        #expect(try Binary.run(["devices", "--help"]).stdout.contains("USAGE: duckprompt devices"))
        #expect(try Binary.run(["route", "--help"]).stdout.contains("USAGE: duckprompt route"))
        #expect(try Binary.run(["help", "play"]).stdout == play.stdout)
    }

    @Test("--version names duckprompt, libpulse and libsndfile with versions", arguments: [["--version"], ["-V"]])
    func version(arguments: [String]) throws {
        let run = try Binary.run(arguments)
        #expect(run.status == 0, "\(run)")
        #expect(run.stderr.isEmpty)
        #expect(run.stdout.hasPrefix("duckprompt \(DuckPromptCLI.version) "), "\(run)")
        #expect(run.stdout.firstMatch(of: /libpulse \d+\.\d+/) != nil, "\(run)")
        #expect(run.stdout.firstMatch(of: /libsndfile \d+\.\d+/) != nil, "\(run)")
        #expect(run.stdout.split(separator: "\n").count == 1)
    }
}

// MARK: - Usage errors

@Suite("duckprompt usage errors")
struct UsageRunTests {
    @Test("usage errors exit 64 with one line", arguments: [
        [],                                                   // no subcommand
        ["frobnicate"],                                       // unknown subcommand
        ["help", "frobnicate"],
        ["play", "--frobnicate", "/nonexistent/x.wav"],       // unknown long option
        ["play", "-q", "/nonexistent/x.wav"],                 // unknown short option
        ["devices", "--frobnicate"],
        ["route", "--verbose"],
        ["play"],                                             // no FILE
        ["play", "--duck", "-20dB"],
        ["play", "-", "a.wav", "-"],                          // standard input twice
        ["play", "--duck", "loud", "/nonexistent/x.wav"],
        ["play", "--duck", "6dB", "/nonexistent/x.wav"],      // would raise the others
        ["play", "--duck=6", "/nonexistent/x.wav"],
        ["play", "--duck", "0%", "/nonexistent/x.wav"],       // silence, not a gain
        ["play", "--duck", "-infdB", "/nonexistent/x.wav"],
        ["play", "--duck", "-1e300dB", "/nonexistent/x.wav"], // would trap in Ramp
        ["play", "--duck", "-201dB", "/nonexistent/x.wav"],
        ["play", "--duck-mode", "crush", "/nonexistent/x.wav"],
        ["play", "--priority", "urgent", "/nonexistent/x.wav"],
        ["say", "--priority", "", "hello"],
        ["play", "--attack-ms", "-5", "/nonexistent/x.wav"],
        ["play", "--attack-ms", "soon", "/nonexistent/x.wav"],
        ["play", "--release-ms", "60001", "/nonexistent/x.wav"],
        ["play", "--latency-msec", "0", "/nonexistent/x.wav"],
        ["play", "--timeout", "0", "/nonexistent/x.wav"],
        ["play", "--timeout", "-1", "/nonexistent/x.wav"],
        ["play", "--property", "=x", "/nonexistent/x.wav"],
        ["play", "--property", "novalue", "/nonexistent/x.wav"],
        ["play", "--client-name", "", "/nonexistent/x.wav"],
        ["play", "/nonexistent/x.wav", "--duck"],             // option without its value
        ["play", "--verbose=yes", "/nonexistent/x.wav"],      // flag with a value
        ["devices", "extra"],
        ["devices", "--timeout", "0"],
        ["route", "--timeout", "soon"],
        ["play", "--json", "/nonexistent/x.wav"],             // --json without --dry-run
        ["play", "--dry-run", "--keep-awake", "5", "/nonexistent/x.wav"],
        ["say", "--keep-awake", "0", "hello"],
        ["play", "--dry-run=yes", "/nonexistent/x.wav"],
    ])
    func usage(arguments: [String]) throws {
        expectError(try Binary.run(arguments), status: 64)
    }

    @Test("speechd-module with a bad config file answers speech-dispatcher's INIT with 399 naming the line, and exits 78")
    func speechdModuleBadConfig() throws {
        let dir = try Scratch()
        let conf = dir.path("duckprompt.conf"), input = dir.path("input")
        try "# ours\nDuckpromptPriority urgent\n".write(toFile: conf, atomically: true, encoding: .utf8)
        try "INIT\n".write(toFile: input, atomically: true, encoding: .utf8)
        let run = try Binary.run(["speechd-module", conf], input: try #require(FileHandle(forReadingAtPath: input)))
        let message = "\(conf):2: DuckpromptPriority must be important, message, text, notification or progress, not 'urgent'"
        #expect(run.status == 78, "\(run)")
        #expect(run.stdout == "399-\(message)\n399 ERR CANT INIT MODULE\n", "\(run)")
        #expect(run.stderr == "duckprompt: \(message)\n", "\(run)")
    }

    @Test("messages say what was wrong")
    func messages() throws {
        #expect(try Binary.run([]).stderr.contains("missing subcommand"))
        #expect(try Binary.run(["frobnicate"]).stderr.contains("'frobnicate'"))
        #expect(try Binary.run(["play", "--frobnicate", "x.wav"]).stderr.contains("'--frobnicate'"))
        #expect(try Binary.run(["play"]).stderr.contains("FILE"))
        #expect(try Binary.run(["play", "--duck", "loud", "x.wav"]).stderr.contains("'loud'"))
        #expect(try Binary.run(["play", "--duck", "6dB", "x.wav"]).stderr.contains("duck +6dB is out of range"))
        #expect(try Binary.run(["play", "--attack-ms", "-5", "x.wav"]).stderr.contains("attack-ms -5 ms is out of range"))
        #expect(try Binary.run(["play", "--timeout", "0", "x.wav"]).stderr.contains("--timeout '0'"))
    }
}

// MARK: - Files

@Suite("duckprompt play with bad files")
struct FileRunTests {
    @Test("a missing file exits 66 naming it")
    func missing() throws {
        let dir = try Scratch()
        let path = dir.path("missing.wav")
        let run = try Binary.run(["play", path])
        expectError(run, status: 66)
        #expect(run.stderr == "duckprompt: \(path): no such file\n", "\(run)")
    }

    @Test("play and say whose standard error is a pipe no one reads any more: their exit code, not SIGPIPE", arguments: [
        ["play", "/nonexistent/x.wav"], ["say", "--voice", "no-such-voice", "hello"],
    ])
    func closedStandardError(arguments: [String]) throws {
        // A prompt killed by SIGPIPE mid-duck would leave the music ducked until the next
        // command: `duckprompt play … 2>&1 | head -c0`, or a supervisor that closed its end.
        let readable = try Binary.run(arguments)
        let pipe = Pipe()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: duckpromptBinary)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["PULSE_SERVER"] = unreachableServer
        process.environment = environment
        process.standardOutput = pipe
        process.standardError = pipe
        try pipe.fileHandleForReading.close()
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationReason == .exit, "killed by signal \(process.terminationStatus)")
        #expect(process.terminationStatus == readable.status && readable.status != 0,
                "exit \(process.terminationStatus); with a readable standard error \(readable)")
    }

    @Test("a text file named .wav exits 65 naming it")
    func notAudio() throws {
        let dir = try Scratch()
        let path = dir.path("x.wav")
        try Data("this is not audio\n".utf8).write(to: URL(fileURLWithPath: path))
        let run = try Binary.run(["play", path])
        expectError(run, status: 65)
        #expect(run.stderr.hasPrefix("duckprompt: \(path): "), "\(run)")
    }

    @Test("an empty file exits 65")
    func empty() throws {
        let dir = try Scratch()
        let path = dir.path("empty.wav")
        try Data().write(to: URL(fileURLWithPath: path))
        expectError(try Binary.run(["play", path]), status: 65)
    }

    @Test("a directory exits 66 naming it")
    func directory() throws {
        let dir = try Scratch()
        let run = try Binary.run(["play", dir.url.path])
        expectError(run, status: 66)
        #expect(run.stderr.hasPrefix("duckprompt: \(dir.url.path): "), "\(run)")
    }

    @Test("a file checks before the server: bad file with no server is still 65/66")
    func fileBeforeServer() throws {
        // The server is unreachable in every run; the file errors must win over 69.
        let run = try Binary.run(["play", "--timeout", "0.5", "/nonexistent/dir/x.wav"])
        expectError(run, status: 66)
    }
}

// MARK: - No server

@Suite("duckprompt with no sound server")
struct NoServerRunTests {
    @Test("play of a valid WAV exits 69 naming the server, quickly", arguments: [
        [], ["--duck", "-20dB"], ["--duck=-20dB"], ["--duck", "50%"], ["--duck", "0dB"], ["--duck", "-200dB"], ["--duck", "1%"],
        ["--duck-mode", "none"], ["-d", "@DEFAULT_SINK@"], ["--property", "media.role=event"],
        ["--attack-ms", "0", "--release-ms", "0"], ["--volume", "-6dB", "--latency-msec", "20"],
    ])
    func play(options: [String]) throws {
        let dir = try Scratch()
        let wav = try dir.wav()
        let run = try Binary.run(["play"] + options + [wav])
        expectError(run, status: 69)
        #expect(run.stderr.contains(unreachableServer), "\(run)")
        #expect(run.seconds < timeLimit(6), "took \(run.seconds) s")
    }

    @Test("--server overrides PULSE_SERVER in the message")
    func explicitServer() throws {
        let dir = try Scratch()
        let wav = try dir.wav()
        let other = "unix:/nonexistent/duckprompt-other"
        let run = try Binary.run(["play", "-s", other, wav])
        expectError(run, status: 69)
        #expect(run.stderr.contains(other), "\(run)")
    }

    @Test("libespeak-ng is loaded for speech only: not by play of a file, nor --version")
    func speechLibraryOnDemand() throws {
        let dir = try Scratch()
        let wav = try dir.wav()
        // LD_DEBUG=libs: glibc's loader writes every library it looks for to stderr.
        let loader = ["LD_DEBUG": "libs"]
        let play = try Binary.run(["play", wav], environment: loader)
        #expect(play.status == 69, "\(play)")
        #expect(play.stderr.contains("libpulse.so.0"), "\(play)")   // the trace is there
        #expect(!play.stderr.contains("libespeak-ng"), "\(play)")
        let version = try Binary.run(["--version"], environment: loader)
        #expect(version.status == 0, "\(version)")
        #expect(!version.stderr.contains("libespeak-ng"), "\(version)")
        let say = try Binary.run(["say", "Turn left"], environment: loader)
        #expect(say.status == 69, "\(say)")
        #expect(say.stderr.contains("libespeak-ng.so.1"), "\(say)")
    }

    @Test("devices and route exit 69 naming the server, and where to try them without one", arguments: [
        ["devices"], ["devices", "--json"], ["route"], ["route", "--json"], ["devices", "-d", "#3"],
    ])
    func listing(arguments: [String]) throws {
        let run = try Binary.run(arguments)
        expectError(run, status: 69)
        #expect(run.stderr.contains(unreachableServer), "\(run)")
        let program = try #require(duckpromptBinaryURL).path
        let command = "\(program) \(arguments[0])" + (arguments.count > 1 ? " …" : "")
        #expect(run.stderr.contains("(no PipeWire or PulseAudio runs for this user? `\(program) lab -- \(command)` "
                                    + "runs it on a private one)"), "\(run)")
        #expect(run.seconds < timeLimit(6), "took \(run.seconds) s")
    }
}

// MARK: - ArgumentScanner

@Suite("ArgumentScanner")
struct ArgumentScannerTests {
    let play = PlayCommand.scanner

    @Test("--name=value and --name value, values starting with '-' taken literally")
    func longValues() throws {
        let inline = try play.scan(["--duck=-20dB", "x.wav"], verb: "play")
        #expect(inline.last("duck") == "-20dB")
        #expect(inline.positionals == ["x.wav"])

        let separate = try play.scan(["--duck", "-20dB", "x.wav"], verb: "play")
        #expect(separate.last("duck") == "-20dB")
        #expect(separate.positionals == ["x.wav"])

        let negative = try play.scan(["--attack-ms", "-5", "--release-ms", "--", "x.wav"], verb: "play")
        #expect(negative.last("attack-ms") == "-5")
        #expect(negative.last("release-ms") == "--")
        #expect(negative.positionals == ["x.wav"])

        let withEquals = try play.scan(["--property=media.role=event"], verb: "play")
        #expect(withEquals.all("property") == ["media.role=event"])

        let empty = try play.scan(["--duck=", "x.wav"], verb: "play")
        #expect(empty.last("duck") == "")
    }

    @Test("-xVALUE and -x VALUE")
    func shortValues() throws {
        let glued = try play.scan(["-dNAME", "x.wav"], verb: "play")
        #expect(glued.last("device") == "NAME")
        #expect(glued.positionals == ["x.wav"])

        let separate = try play.scan(["-d", "#3", "-s", "unix:/tmp/s", "x.wav"], verb: "play")
        #expect(separate.last("device") == "#3")
        #expect(separate.last("server") == "unix:/tmp/s")

        let flags = try play.scan(["-v", "-h"], verb: "play")
        #expect(flags.has("verbose"))
        #expect(flags.has("help"))
        #expect(!flags.has("device"))
    }

    @Test("-- ends options; '-' is a file")
    func endOfOptions() throws {
        let r = try play.scan(["--duck", "-6dB", "--", "--duck", "-x.wav"], verb: "play")
        #expect(r.last("duck") == "-6dB")
        #expect(r.positionals == ["--duck", "-x.wav"])
        #expect(r.options.count == 1)

        let second = try play.scan(["--", "--"], verb: "play")
        #expect(second.positionals == ["--"])

        let dash = try play.scan(["-"], verb: "play")
        #expect(dash.positionals == ["-"])
    }

    @Test("repeated options: --property accumulates, the last value wins otherwise")
    func repeated() throws {
        let r = try play.scan(["--property", "a=1", "--duck", "-10dB", "--property=b=2=3", "-dX",
                               "--duck", "-20dB", "--property", "a=4", "-dY"], verb: "play")
        #expect(r.all("property") == ["a=1", "b=2=3", "a=4"])
        #expect(r.last("duck") == "-20dB")
        #expect(r.last("device") == "Y")
        #expect(r.all("duck") == ["-10dB", "-20dB"])
        #expect(r.positionals.isEmpty)
    }

    @Test("options after the file are options")
    func interleaved() throws {
        let r = try play.scan(["x.wav", "--duck", "-3dB"], verb: "play")
        #expect(r.positionals == ["x.wav"])
        #expect(r.last("duck") == "-3dB")
    }

    @Test("scanner errors are usage errors naming the option", arguments: [
        (["--frobnicate"], "'--frobnicate'"),
        (["-q"], "'-q'"),
        (["--duck"], "--duck needs a value"),
        (["-d"], "--device needs a value"),
        (["--help=yes"], "--help takes no value"),
        (["-vx"], "-v takes no value"),
        (["--=x"], "unknown option"),
    ])
    func errors(arguments: [String], fragment: String) {
        let error = #expect(throws: UsageError.self) { try play.scan(arguments, verb: "play") }
        #expect(error?.message.contains(fragment) == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("play") == true)
    }

    @Test("devices takes --json and no play options")
    func devicesScanner() throws {
        let r = try DevicesCommand.scanner.scan(["--json", "-dX"], verb: "devices")
        #expect(r.has("json"))
        #expect(r.last("device") == "X")
        #expect(throws: UsageError.self) { try DevicesCommand.scanner.scan(["--duck", "-20dB"], verb: "devices") }
    }

    @Test("option values: milliseconds, durations, properties, gains, through the table")
    func optionValues() throws {
        #expect(try OptionValue.value(.attackMs, words: ["200"]) == .whole(200))
        #expect(try OptionValue.value(.attackMs, words: ["100", "250ms"]) == .whole(250))
        #expect(try OptionValue.value(.attackMs, words: ["0"]) == .whole(0))
        // A negative number is a whole number: its range is validate()'s.
        #expect(try OptionValue.value(.attackMs, words: ["-5"]) == .whole(-5))
        #expect(throws: DuckPromptError.self) { try OptionValue.value(.attackMs, words: ["1.5"]) }
        #expect(throws: DuckPromptError.self) { try OptionValue.value(.rate, words: ["fast"]) }

        #expect(try OptionValue.milliseconds("5", option: "timeout") == 5000)
        #expect(try OptionValue.milliseconds("2.5s", option: "timeout") == 2500)
        #expect(try OptionValue.milliseconds("500ms", option: "timeout") == 500)
        for bad in ["0", "-1", "0ms", "soon", "601", "nan", ""] {
            #expect(throws: UsageError.self, "\(bad)") { try OptionValue.milliseconds(bad, option: "timeout") }
        }

        let properties = try OptionValue.value(.property, words: ["media.role=event", "k=", "j=a=b", "k=x"])
        #expect(properties == .properties(["media.role": "event", "k": "x", "j": "a=b"]))
        #expect(throws: DuckPromptError.self) { try OptionValue.value(.property, words: ["kv"]) }
        var options = PlayOptions()
        #expect(throws: DuckPromptError.self) {
            try PromptOption.property.apply(try OptionValue.value(.property, words: ["=v"]), to: &options)
        }

        #expect(try OptionValue.value(.duck, words: ["-20dB"]) == .gain(Decibels(-20)))
        let error = #expect(throws: DuckPromptError.self) { try OptionValue.value(.duck, words: ["loud"]) }
        #expect(error?.message.hasPrefix("duck 'loud' is not a volume") == true)
    }
}


@Suite("duckprompt config file errors")
struct ConfigFileCLITests {
    /// A config home holding `config.json` with `text`.
    static func configHome(_ text: String) throws -> String {
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("duckprompt-config-\(UInt32.random(in: 0..<UInt32.max))")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("duckprompt"),
                                                withIntermediateDirectories: true)
        try text.write(to: dir.appendingPathComponent("duckprompt/config.json"), atomically: true, encoding: .utf8)
        return dir.path
    }

    @Test("an unknown key, a wrong type, a bad kind: exit 78, one line naming the file and key",
          arguments: [("{\"prefer\": [\"x\"], \"duck\": -10}", "duck"),
                      ("{\"attack_ms\": \"fast\"}", "attack_ms"),
                      ("{\"never\": [\"hdmii\"]}", "hdmii"),
                      ("{not json", "config.json")])
    func badConfig(text: String, named: String) throws {
        let home = try Self.configHome(text)
        defer { try? FileManager.default.removeItem(atPath: home) }
        for verb in [["route"], ["devices"], ["play", "/nonexistent.wav"]] {
            let run = try Binary.run(verb, environment: ["XDG_CONFIG_HOME": home])
            #expect(run.status == 78, "\(verb): \(run.stderr)")
            #expect(run.stderr.hasPrefix("duckprompt: "), "\(run.stderr)")
            #expect(run.stderr.contains(named), "\(verb): \(run.stderr)")
            #expect(run.stderr.split(separator: "\n").count == 1)
        }
    }

    @Test("a valid config file is accepted (then there is no server: 69)")
    func goodConfig() throws {
        let home = try Self.configHome("{\"prefer\": [\"WH-*\"], \"never\": [\"hdmi\"], \"duck_db\": -12}")
        defer { try? FileManager.default.removeItem(atPath: home) }
        let run = try Binary.run(["route"], environment: ["XDG_CONFIG_HOME": home])
        #expect(run.status == 69, "\(run.stderr)")
    }
}

/// Every real dump in the fixtures classifies as EXPECTED.tsv says, through the command a user
/// runs: `duckprompt devices --from FILE --json`. Rows added to EXPECTED.tsv are picked up
/// without code changes.
@Suite("devices --from on the fixture dumps")
struct DevicesFromFixturesCLITests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("DuckPromptTests/Fixtures/sinks")

    struct Row: Sendable, CustomTestStringConvertible {
        var file: String
        var kind: String
        var external: Bool
        var testDescription: String { file }
    }

    static let rows: [Row] = {
        let text = (try? String(contentsOf: fixtures.appendingPathComponent("EXPECTED.tsv"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count >= 4 else { return nil }
            return Row(file: fields[0], kind: fields[2], external: fields[3] == "yes")
        }
    }()

    @Test("EXPECTED.tsv has rows")
    func hasRows() { #expect(Self.rows.count >= 14) }

    @Test("A sink a paste gives no name: the table's note line and the JSON's notes say it is a placeholder; a named dump has no notes")
    func placeholderNamed() throws {
        let grep = Self.fixtures.appendingPathComponent("pactl-grep-ports-lineout.txt").path
        let table = try Binary.run(["devices", "--from", grep])
        #expect(table.status == 0 && table.stdout.contains("note: (unnamed Sink #0): the dump gives this sink no name"),
                "\(table.stdout)")
        let run = try Binary.run(["devices", "--json", "--from", grep])
        let json = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let notes = try #require(json["notes"] as? [String], "\(run.stdout)")
        #expect(notes.count == 1 && notes[0].hasPrefix("(unnamed Sink #0): the dump gives this sink no name"), "\(notes)")
        let named = try Binary.run(["devices", "--json", "--from", Self.fixtures.appendingPathComponent(try #require(Self.rows.first).file).path])
        let namedJSON = try #require(try JSONSerialization.jsonObject(with: Data(named.stdout.utf8)) as? [String: Any])
        #expect(namedJSON["notes"] == nil)
    }

    @Test("kind and external", arguments: rows)
    func classify(_ row: Row) throws {
        let path = Self.fixtures.appendingPathComponent(row.file).path
        let run = try Binary.run(["devices", "--json", "--from", path])
        #expect(run.status == 0, "\(run.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let sinks = try #require(json["sinks"] as? [[String: Any]])
        #expect(sinks.count == 1, "one sink per fixture")
        let sink = try #require(sinks.first)
        #expect(sink["kind"] as? String == row.kind, "\(row.file): \(sink["kind"] ?? "none"), evidence \(sink["evidence"] ?? "")")
        #expect(sink["external"] as? Bool == row.external)
        for key in ["name", "kind", "external", "evidence", "state"] {
            #expect(sink[key] != nil, "\(row.file) lacks \(key)")
        }
        let route = try Binary.run(["route", "--json", "--from", path])
        let routeJSON = try #require(try JSONSerialization.jsonObject(with: Data(route.stdout.utf8)) as? [String: Any])
        #expect(routeJSON["reason"] is String)
    }

    @Test("a directory or a missing file: exit 66 saying which")
    func notAFile() throws {
        let directory = try Binary.run(["devices", "--from", "/tmp"])
        #expect(directory.status == 66)
        #expect(directory.stderr == "duckprompt: /tmp: is a directory\n")
        let missing = try Binary.run(["devices", "--from", "/nonexistent/dump.txt"])
        #expect(missing.status == 66)
        #expect(missing.stderr == "duckprompt: /nonexistent/dump.txt: no such file\n")
    }

    @Test("input that is no dump: exit 65 naming the formats read")
    func notADump() throws {
        let run = try Binary.run(["devices", "--from", "/etc/hostname"])
        #expect(run.status == 65)
        #expect(run.stderr.contains("pactl list sinks"), "\(run.stderr)")
        #expect(run.stderr.split(separator: "\n").count == 1)
    }

    @Test("a dump no reader takes: exit 65 naming the formats and the first line it could not read")
    func notADumpNamesLine() throws {
        let scratch = try Scratch()
        let path = scratch.path("paste.txt")
        try Data("$ pactl list sinks\n\n".utf8).write(to: URL(fileURLWithPath: path))
        let run = try Binary.run(["devices", "--from", path])
        #expect(run.status == 65)
        #expect(run.stderr.hasPrefix("duckprompt: \(path): is not a sink dump: duckprompt reads `pactl list sinks`"), "\(run.stderr)")
        #expect(run.stderr.hasSuffix("; line 1: '$ pactl list sinks' is in none of them"
                                     + DumpRefusal.nearest(.pactlText) + "\n"), "\(run.stderr)")
    }
}

@Suite("play inputs without a server")
struct PlayInputsCLITests {
    @Test("several files: a missing one anywhere is 66 before anything else")
    func severalFiles() throws {
        let scratch = try Scratch()
        let good = try scratch.wav("good.wav")
        let run = try Binary.run(["play", good, "/nonexistent/b.wav"])
        #expect(run.status == 66)
        #expect(run.stderr == "duckprompt: /nonexistent/b.wav: no such file\n")
    }

    @Test("M4A-like and over-wide inputs are refused with 65 and the list of formats")
    func refusedFormats() throws {
        let scratch = try Scratch()
        let fake = scratch.url.appendingPathComponent("song.m4a")
        // An MPEG-4 box header libsndfile does not read.
        try Data([0, 0, 0, 0x20, 0x66, 0x74, 0x79, 0x70, 0x4d, 0x34, 0x41, 0x20] + [UInt8](repeating: 0, count: 64)).write(to: fake)
        let run = try Binary.run(["play", fake.path])
        #expect(run.status == 65)
        #expect(run.stderr.contains("WAV"), "lists the formats read: \(run.stderr)")
        #expect(run.stderr.split(separator: "\n").count == 1)
        let whole = try scratch.wav("whole.wav")
        let truncated = scratch.url.appendingPathComponent("truncated.wav")
        try Data(try Data(contentsOf: URL(fileURLWithPath: whole)).prefix(4000)).write(to: truncated)
        let cut = try Binary.run(["play", truncated.path])
        #expect(cut.status == 65, "\(cut.stderr)")
        #expect(cut.stderr.contains("truncated"), "\(cut.stderr)")
        let wide = try scratch.wav("wide.wav", channels: 10)
        let tooWide = try Binary.run(["play", wide])
        #expect(tooWide.status == 65)
        #expect(tooWide.stderr.contains("10 channels"), "\(tooWide.stderr)")
    }
}

/// Hostile and odd input files (issue 13): dumps, the config file and journals are read within
/// a size limit, by kind, and refused with the documented code, one line naming the file.
/// No server answers here, so no volume can change; the integration tests check the same on
/// real servers with music playing.
@Suite("hostile input files")
struct HostileInputCLITests {
    static let fixture = DevicesFromFixturesCLITests.fixtures
        .appendingPathComponent("008-pa-amd-alc257-speaker-active-hp-unplugged.txt").path

    @Test("devices --from /dev/zero: 66, not a regular file, at once")
    func devZero() throws {
        let run = try Binary.run(["devices", "--from", "/dev/zero"], limit: 5)
        expectError(run, status: 66)
        #expect(run.stderr == "duckprompt: /dev/zero: is not a regular file (a character device)\n")
        #expect(run.seconds < timeLimit(1))
    }

    @Test("devices --from a 100 MB file: 65, larger than 16 MiB, at once; random bytes under it: 65, not text")
    func largeAndRandom() throws {
        let scratch = try Scratch()
        let large = scratch.path("large.txt")
        _ = FileManager.default.createFile(atPath: large, contents: nil)
        #expect(truncate(large, 100_000_000) == 0)
        let run = try Binary.run(["devices", "--from", large], limit: 10)
        expectError(run, status: 65)
        #expect(run.stderr == "duckprompt: \(large): is larger than 16 MiB: no sink dump is that large\n")
        #expect(run.seconds < timeLimit(1))

        // 1 MB of bytes that look random (a multiplicative hash of the offset), NULs among them.
        let random = scratch.path("random.bin")
        try Data((0..<1_000_000).map { (i: UInt32) in UInt8(truncatingIfNeeded: (i &* 2_654_435_761) >> 13) })
            .write(to: URL(fileURLWithPath: random))
        let bytes = try Binary.run(["devices", "--from", random], limit: 10)
        expectError(bytes, status: 65)
        #expect(bytes.stderr.hasPrefix("duckprompt: \(random): is not a sink dump (it holds NUL bytes, so it is not text)"))
    }

    @Test("a dump whose blocks name no sink: 65, no sinks found")
    func noNamedSink() throws {
        let scratch = try Scratch()
        let path = scratch.path("blocks.txt")
        try Data("Sink #1\n\tState: RUNNING\n\tMute: no\n".utf8).write(to: URL(fileURLWithPath: path))
        let run = try Binary.run(["devices", "--from", path])
        expectError(run, status: 65)
        #expect(run.stderr.hasPrefix("duckprompt: \(path): no sinks found (no sink block in it has a name or a port): duckprompt reads `pactl list sinks`"))
    }

    @Test("a config file of 50 MB or a FIFO: 78 naming it, at once")
    func config() throws {
        for kind in ["large", "fifo"] {
            let scratch = try Scratch()
            let file = scratch.path("config/duckprompt/config.json")
            try FileManager.default.createDirectory(atPath: scratch.path("config/duckprompt"), withIntermediateDirectories: true)
            if kind == "large" {
                _ = FileManager.default.createFile(atPath: file, contents: nil)
                #expect(truncate(file, 50_000_000) == 0)
            } else {
                #expect(mkfifo(file, 0o600) == 0)
            }
            let run = try Binary.run(["route", "--from", Self.fixture], limit: 10,
                                     environment: ["XDG_CONFIG_HOME": scratch.path("config")])
            expectError(run, status: 78)
            #expect(run.stderr == "duckprompt: \(file): "
                    + (kind == "large" ? "is larger than 1 MiB: a config file is a few lines of JSON\n" : "is not a regular file (a FIFO)\n"))
            #expect(run.seconds < timeLimit(1))
        }
    }

    /// A pid no process has: a child's, once it has exited.
    static func deadPid() throws -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/true")
        try p.run()
        p.waitUntilExit()
        return p.processIdentifier
    }

    @Test("restore with a forged journal (1000 %, 1000 channels, mute): 65, one line naming each file, removed, no server contacted",
          arguments: ["volume", "channels", "mute"])
    func forgedJournal(kind: String) throws {
        let scratch = try Scratch()
        let runtime = scratch.path("runtime")
        try FileManager.default.createDirectory(atPath: runtime + "/duckprompt", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let dead = try Self.deadPid()
        let original = switch kind {
        case "volume": "[655360, 655360]"
        case "channels": "[" + Array(repeating: "30000", count: 1000).joined(separator: ",") + "]"
        default: "[0, 0]"
        }
        let journal = """
            {"version": 1, "pid": \(dead), "processStart": 1, "serverName": "x", "depth": -20, "updated": 0,
             "streams": [{"index": 3, "original": {"values": \(original)}, "key": {"mediaRole": "music"}}], "ended": []}
            """
        let path = runtime + "/duckprompt/journal-\(dead).json"
        try Data(journal.utf8).write(to: URL(fileURLWithPath: path))
        let run = try Binary.run(["restore"], limit: 10, environment: ["XDG_RUNTIME_DIR": runtime])
        expectError(run, status: 65)
        let reason = switch kind {
        case "volume": "volume 655360 (1000 %) is above 99957 (153 %, +11 dB), the most a journal restores"
        case "channels": "1000 channels (a stream has 1 to 32)"
        default: "every channel's volume is 0: restoring it would mute the stream"
        }
        #expect(run.stderr == "duckprompt: journal \(path): refused: stream #3: \(reason); removed\n")
        #expect(!FileManager.default.fileExists(atPath: path))
        // The server (unreachable here) was not asked: the refusal came first.
        #expect(!run.stderr.contains(unreachableServer))
    }

    @Test("600 symbolic links in the journal directory: one warning line per run, not 600")
    func manyLinks() throws {
        let scratch = try Scratch()
        let runtime = scratch.path("runtime")
        let dir = runtime + "/duckprompt"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        for n in 1...600 {
            try FileManager.default.createSymbolicLink(atPath: "\(dir)/journal-\(4_000_000 + n).json", withDestinationPath: "/nonexistent")
        }
        for _ in 0..<2 {
            let run = try Binary.run(["restore"], limit: 10, environment: ["XDG_RUNTIME_DIR": runtime])
            expectError(run, status: 65)
            #expect(run.stderr == "duckprompt: journal \(dir): 600 files (journal-4000001.json … journal-4000600.json): "
                    + "is a symbolic link; not followed; all left in place\n")
        }
        // devices --from reads no journal; a play or devices on a server warns the same one line.
    }
}
