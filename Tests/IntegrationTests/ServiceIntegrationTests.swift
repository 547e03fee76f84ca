import DuckPrompt
import DuckPromptTestSupport
import Foundation
import DuckPromptProbe
import Testing

/// `duckprompt serve` on the session bus `duckprompt lab` starts (a real
/// `dbus-daemon --session`), called as apps call it: `gdbus` here (the Python and GJS clients
/// are in ServiceClientTests). What a listener hears is checked on the speaker's monitor.
@Suite(.serialized)
struct ServiceIntegrationTests {
    static let name = "io.github.duckprompt.DuckPrompt1"
    static let path = "/io/github/duckprompt/DuckPrompt1"

    /// A running `duckprompt serve` (its stderr collected) and a `gdbus monitor` of its
    /// signals; both stopped at the end.
    final class Service {
        let process: Background
        let monitor: Background

        /// - Parameter launcher: a command that runs `duckprompt serve` (e.g. `prlimit …`).
        /// - Parameter environment: set on top of the test's environment (`DUCKPROMPT_DEBUG`).
        init(_ options: [String] = [], launcher: [String] = [], environment: [String: String] = [:]) throws {
            monitor = try Background(["gdbus", "monitor", "--session", "--dest", ServiceIntegrationTests.name])
            do {
                process = try Background(launcher + [duckpromptBinary, "serve"] + options, environment: environment,
                                         captureStderr: true)
            } catch {
                monitor.stop()
                throw error
            }
            // A service that did not start takes its monitor with it (a monitor left running
            // outlives the test, and its bus).
            guard (try? eventually(timeout: timeLimit(5), { try Self.owned() })) == true else {
                monitor.stop()
                process.stop()
                throw TestFailure("serve did not take its bus name: \(String(decoding: process.bytes, as: UTF8.self))")
            }
        }

        static func owned() throws -> Bool {
            try run(["gdbus", "call", "--session", "--dest", "org.freedesktop.DBus", "--object-path",
                     "/org/freedesktop/DBus", "--method", "org.freedesktop.DBus.NameHasOwner",
                     ServiceIntegrationTests.name]).stdout.contains("true")
        }

        /// `gdbus call` of one method: its result or error text, and status.
        func call(_ method: String, _ args: String...) throws -> ProcessResult {
            try run(["gdbus", "call", "--session", "--dest", ServiceIntegrationTests.name, "--object-path",
                     ServiceIntegrationTests.path, "--method", "\(ServiceIntegrationTests.name).\(method)"] + args,
                    check: false)
        }

        /// The id in a `(uint64 N,)` answer.
        static func id(_ result: ProcessResult) throws -> UInt64 {
            guard result.status == 0, let match = result.stdout.firstMatch(of: /uint64 (\d+)/),
                  let id = UInt64(match.1) else {
                throw TestFailure("no id in \(result.stdout) \(result.stderr)")
            }
            return id
        }

        var signals: String { String(decoding: monitor.bytes, as: UTF8.self) }

        /// Waits for `PromptFinished` of `id`; returns its outcome word.
        func finished(_ id: UInt64, timeout: Double = 15) throws -> String {
            try Self.finished(id, in: monitor, timeout: timeout)
        }

        /// Waits for `PromptFinished` of `id` in what a `gdbus monitor` printed; its outcome word.
        static func finished(_ id: UInt64, in monitor: Background, timeout: Double = 15) throws -> String {
            let signals = { String(decoding: monitor.bytes, as: UTF8.self) }
            var outcome: String? = nil
            _ = eventually(timeout: timeLimit(timeout)) {
                let m = signals().firstMatch(of: try! Regex("PromptFinished \\(uint64 \(id), '([a-z]+)'"))
                outcome = m.map { String($0.output[1].substring ?? "") }
                return outcome != nil
            }
            guard let outcome else { throw TestFailure("no PromptFinished for \(id): \(signals())") }
            return outcome
        }

        /// A test that failed before `stop()` leaves no service behind to answer the next one.
        deinit {
            if process.process.isRunning { _ = stop() }
        }

        func stop() -> Int32? {
            kill(process.process.processIdentifier, SIGTERM)
            let status = process.wait(timeout: timeLimit(10))
            monitor.stop()
            if status != 0 {
                // What it wrote (a crash's backtrace) goes with the test's failure.
                FileHandle.standardError.write(Data("serve ended \(String(describing: status)):\n".utf8) + process.bytes)
            }
            return status
        }
    }

    @Test("Play through gdbus: heard on the routed speaker, the music ducked and then exact, PromptStarted and PromptFinished played")
    func playHeard() throws {
        let (rig, speaker, service, recorder, app, before) = try Self.listening("served-music")
        _ = rig
        let prompt = try DuckIntegrationTests.prompt(seconds: 1.0)
        // The keys D-Bus gained with the table (PromptOption), as gdbus types them.
        let id = try Service.id(try service.call("Play", "['\(prompt)']",
                                                 "{'duck-exempt-role': <['phone', 'a11y']>, 'latency-msec': <uint32 100>}"))
        let (lowest, outcome, heard) = try Self.listenedThrough(app: app, before: before, recorder: recorder) {
            try service.finished(id)
        }
        #expect(outcome == "played", "\(service.signals)")
        #expect(lowest < before[0] / 2, "the music was not ducked: lowest \(lowest) of \(before[0])")
        #expect(try eventually(timeout: timeLimit(2)) { try Pactl.volume(ofApp: app) == before })
        #expect(service.signals.contains("PromptStarted (uint64 \(id), '\(speaker)'"), "\(service.signals)")
        #expect(heard >= 80, "the prompt was heard in \(heard) 10 ms windows of 100")
        #expect(service.stop() == 0)
    }

    /// While a 1 s, 1 kHz prompt plays: the music's lowest volume (first channel), watched
    /// until it is under half of `before` (3 s at most); then `finished()` (the prompt's
    /// outcome), 0.3 s more of the recording, and the 10 ms windows in which the prompt's tone
    /// is above -40 dB.
    static func listenedThrough(app: String, before: [Int], recorder: MonitorRecorder,
                                finished: () throws -> String) throws -> (lowest: Int, outcome: String, heard: Int) {
        var lowest = before[0]
        _ = eventually(timeout: timeLimit(3)) {
            lowest = min(lowest, (try? Pactl.volume(ofApp: app))?.first ?? lowest)
            return lowest < before[0] / 2
        }
        let outcome = try finished()
        try recorder.waitForMoreAudio(seconds: 0.3)
        let heard = Levels.tone(recorder.stop(), hertz: 1000).filter { $0 > -40 }.count
        return (lowest, outcome, heard)
    }

    @Test("A missing file is io.github.duckprompt.DuckPrompt1.Error.NoInput naming it; an unknown option or a relative path Error.Usage; a second service exits 69; nothing ducked")
    func errors() throws {
        let (rig, _, app, before) = try PrompterIntegrationTests.musicOnSpeaker("served-errors", volume: 50000)
        let service = try Service()
        let missing = try service.call("Play", "['/nonexistent/\(rig.tag).wav']", "{}")
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("\(Self.name).Error.NoInput"), "\(missing.stderr)")
        #expect(missing.stderr.contains("/nonexistent/\(rig.tag).wav"), "\(missing.stderr)")
        let prompt = try DuckIntegrationTests.prompt(seconds: 0.3)
        let unknown = try service.call("Play", "['\(prompt)']", "{'loudness': <1.0>}")
        #expect(unknown.stderr.contains("\(Self.name).Error.Usage"), "\(unknown.stderr)")
        #expect(unknown.stderr.contains("loudness"), "\(unknown.stderr)")
        let wrongType = try service.call("Play", "['\(prompt)']", "{'duck': <'-20dB'>}")
        #expect(wrongType.stderr.contains("\(Self.name).Error.Usage"), "\(wrongType.stderr)")
        // Relative to the service's working directory it might even exist: refused all the same.
        let relative = try service.call("Play", "['Docs/examples/turn-left.wav']", "{}")
        #expect(relative.stderr.contains("\(Self.name).Error.Usage") && relative.stderr.contains("not an absolute path"),
                "\(relative.stderr)")
        // A second service on the same bus: a one-line error and 69, not a crash (it was 139).
        let second = try run([duckpromptBinary, "serve"], check: false)
        #expect(second.status == 69, "\(second.status) \(second.stderr)")
        #expect(second.stderr == "duckprompt: cannot take the bus name \(Self.name): another process owns it\n", "\(second.stderr)")
        #expect(try Pactl.volume(ofApp: app) == before)
        #expect(service.stop() == 0)
    }

    /// Music on the speaker, a new service, and the speaker's monitor recorded (0.5 s of it
    /// received): the rig (keep it), the speaker, the service, the recorder, the music's app
    /// and volume before.
    static func listening(_ name: String) throws
        -> (rig: Rig, speaker: String, service: Service, recorder: MonitorRecorder, app: String, before: [Int]) {
        let (rig, speaker, app, before) = try PrompterIntegrationTests.musicOnSpeaker(name, volume: 50000)
        let service = try Service()
        let recorder = try MonitorRecorder(sink: speaker)
        try recorder.waitForAudio(seconds: 0.5)
        return (rig, speaker, service, recorder, app, before)
    }

    /// Music on the speaker and a 4 s prompt playing through a new service, the music ducked:
    /// the rig (keep it), the service, the prompt's id, the music's app and volume before.
    static func ducking(_ name: String) throws -> (rig: Rig, service: Service, id: UInt64, app: String, before: [Int]) {
        let (rig, _, app, before) = try PrompterIntegrationTests.musicOnSpeaker(name, volume: 50000)
        let service = try Service()
        let prompt = try DuckIntegrationTests.prompt(seconds: 4.0)
        let id = try Service.id(try service.call("Play", "['\(prompt)']", "{}"))
        try DuckIntegrationTests.waitDucked(app, from: before)
        return (rig, service, id, app, before)
    }

    /// A service on an idle rig whose speaker is the default sink.
    static func idleSpeaker(_ options: [String] = []) throws -> (rig: Rig, speaker: String, service: Service) {
        let (rig, speaker) = try Rig.defaultSpeaker()
        return (rig, speaker, try Service(options))
    }

    @Test("Cancel of a playing prompt: PromptFinished cancelled, the music exact again")
    func cancel() throws {
        let (rig, service, id, app, before) = try Self.ducking("served-cancel")
        _ = rig
        let cancelled = try service.call("Cancel", "\(id)")
        #expect(cancelled.status == 0, "\(cancelled.stderr)")
        #expect(try service.finished(id, timeout: 3) == "cancelled")
        #expect(try eventually(timeout: timeLimit(2)) { try Pactl.volume(ofApp: app) == before })
        #expect(service.stop() == 0)
    }

    @Test("RouteChanged when a Bluetooth headset appears (it takes the prompts) and again when it goes (back to the speaker); Route() agrees")
    func routeChanged() throws {
        let (rig, speaker, service) = try Self.idleSpeaker()
        let before = try service.call("Route")
        #expect(before.stdout.contains("'\(speaker)'"), "\(before.stdout) \(before.stderr)")
        let bt = try rig.bluetooth()
        #expect(eventually(timeout: timeLimit(3)) { service.signals.contains("RouteChanged ('\(bt)', 'bluetooth-a2dp'") },
                "\(service.signals)")
        #expect(try service.call("Route").stdout.contains("'\(bt)', 'bluetooth-a2dp'"))
        Pactl.unload(rig.modules.removeLast())
        #expect(eventually(timeout: timeLimit(3)) { service.signals.contains("RouteChanged ('\(speaker)', 'speaker'") },
                "\(service.signals)")
        #expect(service.stop() == 0)
    }

    @Test("--exit-idle 1: the service stays while a prompt plays, then leaves 1 s after it, exit 0, its bus name released")
    func exitIdle() throws {
        let (rig, _, service) = try Self.idleSpeaker(["--exit-idle", "1"])
        _ = rig
        let prompt = try DuckIntegrationTests.prompt(seconds: 2.0)
        let id = try Service.id(try service.call("Play", "['\(prompt)']", "{}"))
        #expect(try service.finished(id, timeout: 6) == "played", "it left while the prompt played: \(service.signals)")
        let ended = Date()
        let status = service.process.wait(timeout: timeLimit(5))
        let after = Date().timeIntervalSince(ended)
        #expect(status == 0, "\(String(decoding: service.process.bytes, as: UTF8.self))")
        #expect(after > 0.5 && after < timeLimit(2.5), "left \(after) s after the prompt ended")
        #expect(try !Service.owned())
        service.monitor.stop()
    }

    @Test("SIGTERM mid-prompt: the prompt fades out, every volume is back, exit 0")
    func sigterm() throws {
        let (rig, service, _, app, before) = try Self.ducking("served-term")
        _ = rig
        #expect(service.stop() == 0, "\(String(decoding: service.process.bytes, as: UTF8.self))")
        #expect(try Pactl.volume(ofApp: app) == before)
        #expect(try !Service.owned())
    }
}

/// The short clients of Examples/dbus, run as an app author would run them against
/// `duckprompt serve`: Python on PyGObject (Pure Maps), GJS (GNOME Maps), C on sd-bus (Navit).
/// Each must queue a prompt that is heard, duck the music and give it back exact, print the
/// signals, and name a D-Bus error.
@Suite(.serialized)
struct ServiceClientTests {
    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Examples/dbus")

    enum Client: String, CaseIterable, CustomStringConvertible {
        case python, gjs, c
        var description: String { rawValue }

        /// The command that runs this client with `arguments`.
        func command(_ arguments: [String]) throws -> [String] {
            switch self {
            case .python: return ["/usr/bin/python3", ServiceClientTests.examples.appendingPathComponent("play.py").path] + arguments
            case .gjs: return ["gjs", "-m", ServiceClientTests.examples.appendingPathComponent("play.js").path] + arguments
            case .c:
                let binary = TestAudio.directory.appendingPathComponent("play-c").path
                if !FileManager.default.isExecutableFile(atPath: binary) {
                    let flags = try run(["pkg-config", "--cflags", "--libs", "libsystemd"]).stdout
                        .split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
                    try run(["cc", "-Wall", "-o", binary, ServiceClientTests.examples.appendingPathComponent("play.c").path] + flags)
                }
                return [binary] + arguments
            }
        }
    }

    @Test("Each example client plays a prompt through the service: heard on the speaker, the music ducked and then exact, its signals printed",
          arguments: Client.allCases)
    func clientPlays(_ client: Client) throws {
        let (rig, speaker, app, before) = try PrompterIntegrationTests.musicOnSpeaker("client-\(client)", volume: 50000)
        _ = rig
        let service = try ServiceIntegrationTests.Service()
        let recorder = try MonitorRecorder(sink: speaker)
        try recorder.waitForAudio(seconds: 0.5)
        let prompt = try DuckIntegrationTests.prompt(seconds: 1.0)
        let run = try Background(try client.command([prompt, "message"]), captureStderr: true)
        var lowest = before[0]
        _ = eventually(timeout: timeLimit(3)) {
            lowest = min(lowest, (try? Pactl.volume(ofApp: app))?.first ?? lowest)
            return lowest < before[0] / 2
        }
        let status = run.wait(timeout: timeLimit(15))
        let output = String(decoding: run.bytes, as: UTF8.self)
        try recorder.waitForMoreAudio(seconds: 0.3)
        let samples = recorder.stop()
        #expect(status == 0, "\(client): \(output)")
        let id = try #require(output.firstMatch(of: /queued (\d+)/).map { String($0.1) }, "\(client): \(output)")
        #expect(output.contains("PromptStarted \(id) \(speaker)"), "\(client): \(output)")
        #expect(output.contains("PromptFinished \(id) played"), "\(client): \(output)")
        #expect(lowest < before[0] / 2, "\(client): the music was not ducked: lowest \(lowest) of \(before[0])")
        #expect(try eventually(timeout: timeLimit(2)) { try Pactl.volume(ofApp: app) == before })
        let heard = Levels.tone(samples, hertz: 1000).filter { $0 > -40 }.count
        #expect(heard >= 80, "\(client): the prompt was heard in \(heard) 10 ms windows of 100")
        #expect(service.stop() == 0)
    }

    @Test("Each example client names the D-Bus error of a missing file", arguments: Client.allCases)
    func clientNamesError(_ client: Client) throws {
        try TestServer.requireServer()
        let service = try ServiceIntegrationTests.Service()
        let missing = "/nonexistent/client-\(client).wav"
        let result = try run(try client.command([missing]), check: false)
        let output = result.stdout + result.stderr
        #expect(result.status == 1, "\(client): \(output)")
        #expect(output.contains("io.github.duckprompt.DuckPrompt1.Error.NoInput"), "\(client): \(output)")
        #expect(output.contains("\(missing): no such file"), "\(client): \(output)")
        #expect(service.stop() == 0)
    }
}
