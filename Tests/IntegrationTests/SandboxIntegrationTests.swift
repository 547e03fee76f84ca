import DuckPromptTestSupport
import Foundation
import DuckPromptProbe
import Testing

/// Issue 32: a sandboxed app must not read host files through the service. Real sandboxes: the
/// app's client (python3-gi, as Pure Maps) runs in bubblewrap with only its own files and the
/// filtered session bus of an xdg-dbus-proxy, which itself runs in bubblewrap as Flatpak runs
/// it (with the app's `/.flatpak-info` bound, or without, where only its mount namespace tells).
/// The host's copy of the prompt is not mounted in the sandbox. Play by path is AccessDenied,
/// with one message for every path; PlayFd and Say play, heard on the speaker's monitor.
@Suite(.serialized)
struct SandboxIntegrationTests {
    typealias Service = ServiceIntegrationTests.Service

    /// The client the sandboxed app runs: python3-gi calls written from Docs/dbus.md. Prints
    /// one line per step: `play PATH: NAME: MESSAGE` or `play PATH: id N`, then
    /// `playfd: OUTCOME MESSAGE` and `say: OUTCOME MESSAGE` once each has finished.
    static let client = #"""
        import os, sys
        from gi.repository import Gio, GLib

        NAME = IFACE = "io.github.duckprompt.DuckPrompt1"
        PATH = "/io/github/duckprompt/DuckPrompt1"
        bus = Gio.bus_get_sync(Gio.BusType.SESSION)
        finished = {}
        loop = GLib.MainLoop()

        def on_signal(connection, sender, path, iface, signal, params):
            args = params.unpack()
            if signal == "PromptFinished":
                finished[args[0]] = (args[1], args[2])
                loop.quit()

        bus.signal_subscribe(NAME, IFACE, "PromptFinished", PATH, None, Gio.DBusSignalFlags.NONE, on_signal)

        def wait(id):
            while id not in finished:
                loop.run()
            return "%s %s" % finished[id]

        def error_text(error):
            name = Gio.DBusError.get_remote_error(error)
            message = error.message
            prefix = "GDBus.Error:%s: " % name
            if name and message.startswith(prefix):
                message = message[len(prefix):]
            return "%s: %s" % (name, message)

        for path in sys.argv[1:]:
            try:
                reply = bus.call_sync(NAME, PATH, IFACE, "Play", GLib.Variant("(asa{sv})", ([path], {})),
                                      GLib.VariantType("(t)"), Gio.DBusCallFlags.NONE, -1, None)
                print("play %s: id %d" % (path, reply.unpack()[0]), flush=True)
            except GLib.Error as error:
                print("play %s: %s" % (path, error_text(error)), flush=True)

        fd = os.open("/app/prompt.wav", os.O_RDONLY)
        reply, _ = bus.call_with_unix_fd_list_sync(NAME, PATH, IFACE, "PlayFd", GLib.Variant("(ha{sv})", (0, {})),
                                                   GLib.VariantType("(t)"), Gio.DBusCallFlags.NONE, -1,
                                                   Gio.UnixFDList.new_from_array([fd]), None)
        print("playfd:", wait(reply.unpack()[0]), flush=True)
        reply = bus.call_sync(NAME, PATH, IFACE, "Say", GLib.Variant("(sa{sv})", ("Turn left", {})),
                              GLib.VariantType("(t)"), Gio.DBusCallFlags.NONE, -1, None)
        print("say:", wait(reply.unpack()[0]), flush=True)
        """#

    /// A sandbox: its directory (the app's files and the proxy's socket), the proxy, and a way
    /// to run the client in it.
    final class Sandbox {
        let directory: URL
        let proxy: Background

        /// Starts xdg-dbus-proxy in bubblewrap (the host's files read-only, `/.flatpak-info`
        /// bound when `flatpakInfo`), filtering the session bus down to the service's name.
        init(flatpakInfo: Bool, prompt: String) throws {
            directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("dp-sandbox-\(UUID().uuidString)")
            let app = directory.appendingPathComponent("app"), bus = directory.appendingPathComponent("bus")
            try FileManager.default.createDirectory(at: app, withIntermediateDirectories: true)
            try FileManager.default.createDirectory(at: bus, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: prompt, toPath: app.appendingPathComponent("prompt.wav").path)
            try SandboxIntegrationTests.client.write(to: app.appendingPathComponent("client.py"), atomically: true, encoding: .utf8)
            let info = directory.appendingPathComponent("flatpak-info")
            try "[Application]\nname=org.example.Maps\n".write(to: info, atomically: true, encoding: .utf8)
            guard let address = ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"] else {
                throw TestFailure("no DBUS_SESSION_BUS_ADDRESS: run in duckprompt lab")
            }
            guard let busPath = address.firstMatch(of: /unix:path=([^,]+)/).map({ String($0.1) }) else {
                throw TestFailure("the session bus is not at a unix:path: \(address)")
            }
            // The proxy's own root, as Flatpak gives it: the system read-only, the bus socket's
            // directory, its socket's directory, and the app's /.flatpak-info when asked.
            let busDirectory = (busPath as NSString).deletingLastPathComponent
            var args = ["bwrap", "--die-with-parent", "--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc",
                        "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/bin", "/bin",
                        "--proc", "/proc", "--dev", "/dev", "--ro-bind", busDirectory, busDirectory,
                        "--bind", bus.path, bus.path]
            if flatpakInfo { args += ["--ro-bind", info.path, "/.flatpak-info"] }
            args += ["--", "xdg-dbus-proxy", address, bus.appendingPathComponent("socket").path, "--filter",
                     "--talk=io.github.duckprompt.DuckPrompt1"]
            proxy = try Background(args, captureStderr: true)
            let socket = bus.appendingPathComponent("socket").path
            guard eventually(timeout: timeLimit(5), { FileManager.default.fileExists(atPath: socket) }) else {
                proxy.stop()
                throw TestFailure("xdg-dbus-proxy made no socket: \(String(decoding: proxy.bytes, as: UTF8.self))")
            }
        }

        /// Runs the client in bubblewrap: /usr (and /etc) read-only, a tmpfs /tmp, the app's
        /// files at /app, the proxy's socket as its session bus; nothing else of the host.
        func runClient(paths: [String]) throws -> ProcessResult {
            let app = directory.appendingPathComponent("app").path, bus = directory.appendingPathComponent("bus").path
            return try run(["bwrap", "--die-with-parent", "--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc",
                            "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/bin", "/bin",
                            "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--ro-bind", app, "/app",
                            "--bind", bus, "/run/bus", "--unsetenv", "XDG_RUNTIME_DIR",
                            "--setenv", "DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/bus/socket",
                            "--", "/usr/bin/python3", "/app/client.py"] + paths, check: false)
        }

        /// Stops the proxy (bubblewrap takes it along: `--die-with-parent`) and removes the files.
        func close() {
            proxy.stop()
            try? FileManager.default.removeItem(at: directory)
        }
    }

    /// One run of the sandboxed client against a running service: the host's prompt by its
    /// absolute path, a missing file, a directory and a file that is not audio are each refused
    /// alike; its own file by descriptor and a text are played and heard.
    func sandboxed(flatpakInfo: Bool) throws {
        let (rig, speaker) = try Rig.defaultSpeaker()
        defer { withExtendedLifetime(rig) {} }
        let prompt = try TestAudio.sine("sandbox-prompt.wav", hertz: 1000, seconds: 0.8, channels: 1)
        let service = try Service()
        let sandbox = try Sandbox(flatpakInfo: flatpakInfo, prompt: prompt)
        defer { sandbox.close() }
        let notAudio = TestAudio.directory.appendingPathComponent("not-audio.wav").path
        try "not audio".write(toFile: notAudio, atomically: true, encoding: .utf8)
        let probes = [prompt, "/nonexistent/turn-left.wav", TestAudio.directory.path, notAudio, "relative.wav"]

        let recorder = try MonitorRecorder(sink: speaker)
        try recorder.waitForAudio(seconds: 0.3)
        let result = try sandbox.runClient(paths: probes)
        try recorder.waitForMoreAudio(seconds: 0.3)
        let heard = Levels.tone(recorder.stop(), hertz: 1000).filter { $0 > -40 }.count
        print("[\(TestServer.kind)] sandboxed client (flatpak-info \(flatpakInfo)): \(result.stdout) \(result.stderr); 1 kHz heard in \(heard) windows")
        #expect(result.status == 0, "the client failed: \(result.stdout) \(result.stderr)")

        let lines = result.stdout.split(separator: "\n").map(String.init)
        let refusals = probes.map { path in lines.first { $0.hasPrefix("play \(path): ") }?.dropFirst("play \(path): ".count) }
        for (path, refusal) in zip(probes, refusals) {
            #expect(refusal?.hasPrefix("io.github.duckprompt.DuckPrompt1.Error.AccessDenied: ") == true,
                    "Play \(path) from the sandbox: \(refusal.map(String.init) ?? "no answer")")
            #expect(refusal?.contains("PlayFd") == true, "the refusal does not name PlayFd: \(refusal.map(String.init) ?? "")")
        }
        #expect(Set(refusals.map { $0.map(String.init) ?? "" }).count == 1, "the answers tell paths apart: \(refusals)")
        #expect(lines.contains { $0.hasPrefix("playfd: played") }, "\(result.stdout)")
        #expect(lines.contains { $0.hasPrefix("say: played") }, "\(result.stdout)")
        // 0.8 s of 1 kHz by descriptor: about 80 windows.
        #expect(heard >= 60, "the prompt passed by descriptor was heard in \(heard) 10 ms windows")
        #expect(service.stop() == 0)
    }

    @Test("A Flatpak app (xdg-dbus-proxy with /.flatpak-info, in bubblewrap): Play by path AccessDenied alike for every path; PlayFd and Say heard")
    func flatpak() throws { try sandboxed(flatpakInfo: true) }

    @Test("Another mount namespace (bubblewrap, no /.flatpak-info): the same")
    func mountNamespace() throws { try sandboxed(flatpakInfo: false) }

    @Test("A caller beside the service (gdbus on the host) still plays by path")
    func hostCallerPlays() throws {
        let (rig, _) = try Rig.defaultSpeaker()
        defer { withExtendedLifetime(rig) {} }
        let prompt = try TestAudio.sine("sandbox-prompt.wav", hertz: 1000, seconds: 0.8, channels: 1)
        let service = try Service()
        let id = try Service.id(try service.call("Play", "['\(prompt)']", "{}"))
        #expect(try service.finished(id) == "played", "\(service.signals)")
        #expect(service.stop() == 0)
    }
}
