import DuckPromptTestSupport
import Foundation
import DuckPromptProbe
import Testing

/// D-Bus activation as a user gets it: `Scripts/install` into a temporary prefix, a session bus
/// of its own (`dbus-daemon --session`, `XDG_DATA_HOME` at the prefix's `share`, where the
/// standard session service directories begin), and a plain `gdbus call` of `Play`: nobody
/// starts `duckprompt serve`; the bus does, from the installed activation file.
@Suite(.serialized)
struct ServiceActivationTests {
    static let scripts = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Scripts")

    /// A `dbus-daemon --session --nofork` on a socket in `directory`, reading its service
    /// files from `dataHome`/dbus-1/services; SIGKILLed at the end.
    final class SessionBus {
        let daemon: Background
        let address: String

        init(directory: String, dataHome: String) throws {
            address = "unix:path=\(directory)/bus"
            daemon = try Background(["dbus-daemon", "--session", "--nofork", "--nopidfile", "--address=\(address)"],
                                    environment: ["XDG_DATA_HOME": dataHome], captureStderr: true)
            guard eventually(timeout: timeLimit(5), { FileManager.default.fileExists(atPath: "\(directory)/bus") }) else {
                throw TestFailure("dbus-daemon made no socket: \(String(decoding: daemon.bytes, as: UTF8.self))")
            }
        }

        /// A `gdbus call` on this bus: its result or error text, and status.
        func call(_ destination: String, _ path: String, _ method: String, _ args: [String]) throws -> ProcessResult {
            try run(["gdbus", "call", "--session", "--dest", destination, "--object-path", path, "--method", method] + args,
                    environment: ["DBUS_SESSION_BUS_ADDRESS": address], check: false)
        }

        deinit { daemon.stop() }
    }

    @Test("A plain gdbus call starts the installed service (D-Bus activation): PREFIX/bin/duckprompt serve --exit-idle 60 plays the prompt, heard, the music ducked and exact after")
    func activatedByACall() throws {
        let (rig, speaker, app, before) = try PrompterIntegrationTests.musicOnSpeaker("activated", volume: 50000)
        _ = rig
        let prefix = FileManager.default.temporaryDirectory.appendingPathComponent("duckprompt-activation-\(rig.tag)").path
        try FileManager.default.createDirectory(atPath: prefix, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: prefix) }
        try run([Self.scripts.appendingPathComponent("install").path, "--prefix", prefix, "--binary", duckpromptBinary])
        let bus = try SessionBus(directory: prefix, dataHome: "\(prefix)/share")
        let name = ServiceIntegrationTests.name, path = ServiceIntegrationTests.path
        let monitor = try Background(["gdbus", "monitor", "--session", "--dest", name],
                                     environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        defer { monitor.stop() }
        let recorder = try MonitorRecorder(sink: speaker)
        try recorder.waitForAudio(seconds: 0.5)
        // The service, once started, is ended whatever the test's outcome.
        var servicePID: pid_t? = nil
        defer {
            if let servicePID {
                kill(servicePID, SIGTERM)
                _ = eventually(timeout: timeLimit(10)) { kill(servicePID, 0) != 0 }
            }
        }

        let prompt = try DuckIntegrationTests.prompt(seconds: 1.0)
        let played = try bus.call(name, path, "\(name).Play", ["['\(prompt)']", "{}"])
        let id = try ServiceIntegrationTests.Service.id(played)
        let owner = try bus.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.GetConnectionUnixProcessID", [name])
        let pid = try #require(owner.stdout.firstMatch(of: /uint32 (\d+)/).flatMap { pid_t($0.1) }, "\(owner.stdout) \(owner.stderr)")
        servicePID = pid
        let cmdline = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline"))
            .split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        #expect(cmdline == ["\(prefix)/bin/duckprompt", "serve", "--exit-idle", "60"], "\(cmdline)")

        let (lowest, outcome, heard) = try ServiceIntegrationTests.listenedThrough(app: app, before: before, recorder: recorder) {
            try ServiceIntegrationTests.Service.finished(id, in: monitor, timeout: 10)
        }
        #expect(outcome == "played", "\(String(decoding: monitor.bytes, as: UTF8.self))")
        #expect(lowest < before[0] / 2, "the music was not ducked: lowest \(lowest) of \(before[0])")
        #expect(try eventually(timeout: timeLimit(2)) { try Pactl.volume(ofApp: app) == before })
        #expect(heard >= 80, "the prompt was heard in \(heard) 10 ms windows of 100")
    }
}
