import DuckPrompt
import Foundation
import Testing

/// `duckprompt serve` on the session bus Scripts/sound-server starts (a real
/// `dbus-daemon --session`), called as apps call it: `gdbus` here (the Python and GJS clients
/// are in ServiceClientTests). What a listener hears is checked on the speaker's monitor.
@Suite(.serialized)
struct ServiceIntegrationTests {
    typealias Rig = PlayIntegrationTests.Rig
    static let name = "io.github.duckprompt.DuckPrompt1"
    static let path = "/io/github/duckprompt/DuckPrompt1"

    /// A running `duckprompt serve` (its stderr collected) and a `gdbus monitor` of its
    /// signals; both stopped at the end.
    final class Service {
        let process: Background
        let monitor: Background

        init() throws {
            monitor = try Background(["gdbus", "monitor", "--session", "--dest", ServiceIntegrationTests.name])
            process = try Background([duckpromptBinary, "serve"], captureStderr: true)
            guard try eventually(timeout: timeLimit(5), { try Self.owned() }) else {
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
            var outcome: String? = nil
            _ = eventually(timeout: timeLimit(timeout)) {
                let m = signals.firstMatch(of: try! Regex("PromptFinished \\(uint64 \(id), '([a-z]+)'"))
                outcome = m.map { String($0.output[1].substring ?? "") }
                return outcome != nil
            }
            guard let outcome else { throw TestFailure("no PromptFinished for \(id): \(signals)") }
            return outcome
        }

        func stop() -> Int32? {
            kill(process.process.processIdentifier, SIGTERM)
            let status = process.wait(timeout: timeLimit(10))
            monitor.stop()
            return status
        }
    }

    @Test("Play through gdbus: heard on the routed speaker, the music ducked and then exact, PromptStarted and PromptFinished played")
    func playHeard() throws {
        try TestServer.requireServer()
        let rig = Rig()
        let speaker = try rig.speaker()
        try Pactl.call("set-default-sink", speaker)
        let app = "served-music-\(rig.tag)"
        try DuckIntegrationTests.player(rig, sink: speaker, app: app, role: "music", volume: 50000)
        let before = try #require(try Pactl.volume(ofApp: app))
        let service = try Service()
        let recorder = try MonitorRecorder(sink: speaker)
        try recorder.waitForAudio(seconds: 0.5)
        let prompt = try DuckIntegrationTests.prompt(seconds: 1.0)
        let id = try Service.id(try service.call("Play", "['\(prompt)']", "{}"))
        var lowest = before[0]
        _ = eventually(timeout: timeLimit(3)) {
            lowest = min(lowest, (try? Pactl.volume(ofApp: app))?.first ?? lowest)
            return lowest < before[0] / 2
        }
        let outcome = try service.finished(id)
        try recorder.waitForMoreAudio(seconds: 0.3)
        let samples = recorder.stop()
        #expect(outcome == "played", "\(service.signals)")
        #expect(lowest < before[0] / 2, "the music was not ducked: lowest \(lowest) of \(before[0])")
        #expect(try eventually(timeout: timeLimit(2)) { try Pactl.volume(ofApp: app) == before })
        #expect(service.signals.contains("PromptStarted (uint64 \(id), '\(speaker)'"), "\(service.signals)")
        let heard = Levels.tone(samples, hertz: 1000).filter { $0 > -40 }.count
        #expect(heard >= 80, "the prompt was heard in \(heard) 10 ms windows of 100")
        #expect(service.stop() == 0)
    }

    @Test("A missing file is io.github.duckprompt.DuckPrompt1.Error.NoInput naming it; an unknown option Error.Usage; nothing ducked")
    func errors() throws {
        try TestServer.requireServer()
        let rig = Rig()
        let speaker = try rig.speaker()
        try Pactl.call("set-default-sink", speaker)
        let app = "served-errors-\(rig.tag)"
        try DuckIntegrationTests.player(rig, sink: speaker, app: app, role: "music", volume: 50000)
        let before = try #require(try Pactl.volume(ofApp: app))
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
        #expect(try Pactl.volume(ofApp: app) == before)
        #expect(service.stop() == 0)
    }

    @Test("Cancel of a playing prompt: PromptFinished cancelled, the music exact again")
    func cancel() throws {
        try TestServer.requireServer()
        let rig = Rig()
        let speaker = try rig.speaker()
        try Pactl.call("set-default-sink", speaker)
        let app = "served-cancel-\(rig.tag)"
        try DuckIntegrationTests.player(rig, sink: speaker, app: app, role: "music", volume: 50000)
        let before = try #require(try Pactl.volume(ofApp: app))
        let service = try Service()
        let prompt = try DuckIntegrationTests.prompt(seconds: 4.0)
        let id = try Service.id(try service.call("Play", "['\(prompt)']", "{}"))
        try DuckIntegrationTests.waitDucked(app, from: before)
        let cancelled = try service.call("Cancel", "\(id)")
        #expect(cancelled.status == 0, "\(cancelled.stderr)")
        #expect(try service.finished(id, timeout: 3) == "cancelled")
        #expect(try eventually(timeout: timeLimit(2)) { try Pactl.volume(ofApp: app) == before })
        #expect(service.stop() == 0)
    }

    @Test("SIGTERM mid-prompt: the prompt fades out, every volume is back, exit 0")
    func sigterm() throws {
        try TestServer.requireServer()
        let rig = Rig()
        let speaker = try rig.speaker()
        try Pactl.call("set-default-sink", speaker)
        let app = "served-term-\(rig.tag)"
        try DuckIntegrationTests.player(rig, sink: speaker, app: app, role: "music", volume: 50000)
        let before = try #require(try Pactl.volume(ofApp: app))
        let service = try Service()
        let prompt = try DuckIntegrationTests.prompt(seconds: 4.0)
        _ = try Service.id(try service.call("Play", "['\(prompt)']", "{}"))
        try DuckIntegrationTests.waitDucked(app, from: before)
        #expect(service.stop() == 0, "\(String(decoding: service.process.bytes, as: UTF8.self))")
        #expect(try Pactl.volume(ofApp: app) == before)
        #expect(try !Service.owned())
    }
}
