import DuckPrompt
import DuckPromptTestSupport
import Foundation
import DuckPromptProbe
import Testing

/// The service's limits against a misbehaving client (`PromptLimits`, Docs/dbus.md), each
/// answered with `Error.LimitsExceeded`, and a client that leaves the bus (its prompts stay).
/// The calls that need one connection for many calls, or a passed descriptor, are made from
/// Python on PyGObject (Gio), as Pure Maps would make them.
extension ServiceIntegrationTests {
    /// Runs a Python program that is given a `Gio.DBusProxy` of the service as `proxy`.
    static func python(_ body: String, _ arguments: [String] = []) throws -> ProcessResult {
        let program = """
            import sys
            from gi.repository import Gio, GLib
            bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
            proxy = Gio.DBusProxy.new_sync(bus, Gio.DBusProxyFlags.DO_NOT_LOAD_PROPERTIES, None,
                '\(name)', '\(path)', '\(name)', None)
            def error_name(e):
                return Gio.DBusError.get_remote_error(e) or str(e)
            def wait_held(pid, fds, seconds=10):
                # Until process pid holds each pipe of fds (a PlayFd's descriptor, still read).
                import os, time
                want = {os.readlink('/proc/self/fd/%d' % fd) for fd in fds}
                deadline = time.monotonic() + seconds
                while time.monotonic() < deadline:
                    held = set()
                    for name in os.listdir('/proc/%d/fd' % pid):
                        try: held.add(os.readlink('/proc/%d/fd/%s' % (pid, name)))
                        except OSError: pass
                    if want <= held: return
                    time.sleep(0.01)
                raise SystemExit('the service holds %d of the %d pipes' % (len(want & held), len(want)))

            """ + body
        return try run(["/usr/bin/python3", "-c", program] + arguments, check: false)
    }

    @Test("Limits: a 17th unfinished prompt of one client, a text over 5000 characters, audio over 300 s, a descriptor over 64 MiB: each Error.LimitsExceeded naming it, nothing ducked by the refused ones")
    func limits() throws {
        let (rig, _, app, before) = try PrompterIntegrationTests.musicOnSpeaker("served-limits", volume: 50000)
        let service = try Service()
        // One connection: 16 prompts are taken, the 17th is refused; then they are cancelled.
        let prompt = try DuckIntegrationTests.prompt(seconds: 1.0)
        let many = try Self.python("""
            ids = []
            for i in range(17):
                try:
                    ids.append(proxy.call_sync('Play', GLib.Variant('(asa{sv})', ([sys.argv[1]], {})),
                                               Gio.DBusCallFlags.NONE, 5000, None)[0])
                except GLib.Error as e:
                    print('refused', len(ids) + 1, error_name(e), e.message)
            for i in ids:
                proxy.call_sync('Cancel', GLib.Variant('(t)', (i,)), Gio.DBusCallFlags.NONE, 5000, None)
            print('taken', len(ids))
            """, [prompt])
        #expect(many.stdout.contains("refused 17 \(Self.name).Error.LimitsExceeded"), "\(many.stdout) \(many.stderr)")
        #expect(many.stdout.contains("16 prompts queued or playing"), "\(many.stdout)")
        #expect(many.stdout.contains("taken 16"), "\(many.stdout) \(many.stderr)")
        #expect(try eventually(timeout: timeLimit(5)) { try Pactl.volume(ofApp: app) == before },
                "the music did not come back after the 16 prompts were cancelled")

        let text = String(repeating: "Turn left. ", count: 460)  // 5060 characters
        let long = try service.call("Say", "'\(text)'", "{}")
        #expect(long.stderr.contains("\(Self.name).Error.LimitsExceeded"), "\(long.stderr)")
        #expect(long.stderr.contains("5060 characters"), "\(long.stderr)")

        let lasting = try TestAudio.sine("served-301s.wav", hertz: 440, seconds: 301, channels: 1, rate: 8000)
        let tooLong = try service.call("Play", "['\(lasting)']", "{}")
        #expect(tooLong.stderr.contains("\(Self.name).Error.LimitsExceeded"), "\(tooLong.stderr)")
        #expect(tooLong.stderr.contains("lasts 301 s"), "\(tooLong.stderr)")
        let split = try service.call("Play", "['\(lasting)', '\(prompt)']", "{}")
        #expect(split.stderr.contains("lasts 302 s"), "files together: \(split.stderr)")

        // /dev/zero never ends: the read stops at 64 MiB.
        let endless = try Self.python("""
            import os
            fd = os.open('/dev/zero', os.O_RDONLY)
            fds = Gio.UnixFDList.new_from_array([fd])
            try:
                proxy.call_with_unix_fd_list_sync('PlayFd', GLib.Variant('(ha{sv})', (0, {})),
                                                  Gio.DBusCallFlags.NONE, 20000, fds, None)
                print('taken')
            except GLib.Error as e:
                print('refused', error_name(e), e.message)
            """)
        #expect(endless.stdout.contains("refused \(Self.name).Error.LimitsExceeded"), "\(endless.stdout) \(endless.stderr)")
        #expect(endless.stdout.contains("64 MiB"), "\(endless.stdout)")

        // Descriptors still being read count toward the limit: 16 pipes whose writers stay
        // open hold 16 reads; the 17th PlayFd is refused at once. Then the writers close.
        let held = try Self.python("""
            import os, threading
            pipes = [os.pipe() for _ in range(17)]
            results = []
            def play(r):
                try:
                    proxy.call_with_unix_fd_list_sync('PlayFd', GLib.Variant('(ha{sv})', (0, {})),
                        Gio.DBusCallFlags.NONE, 20000, Gio.UnixFDList.new_from_array([r]), None)
                    results.append('taken')
                except GLib.Error as e:
                    results.append(error_name(e))
            threads = [threading.Thread(target=play, args=(r,)) for r, w in pipes[:16]]
            for t in threads: t.start()
            wait_held(int(sys.argv[1]), [r for r, w in pipes[:16]])
            play(pipes[16][0])
            print('17th', results[-1])
            for r, w in pipes: os.close(w)
            for t in threads: t.join()
            """, ["\(service.process.process.processIdentifier)"])
        #expect(held.stdout.contains("17th \(Self.name).Error.LimitsExceeded"), "\(held.stdout) \(held.stderr)")
        #expect(try Pactl.volume(ofApp: app) == before)
        _ = rig
        #expect(service.stop() == 0)
    }

    @Test("A client that leaves the bus right after Play: its bus name is gone, its prompt plays whole and the music comes back")
    func clientLeaves() throws {
        let (rig, _, service, recorder, app, before) = try Self.listening("served-leaves")
        _ = rig
        let prompt = try DuckIntegrationTests.prompt(seconds: 1.5)
        let gone = try Self.python("""
            i = proxy.call_sync('Play', GLib.Variant('(asa{sv})', ([sys.argv[1]], {})), Gio.DBusCallFlags.NONE, 5000, None)[0]
            print(i, bus.get_unique_name())
            """, [prompt])
        let fields = gone.stdout.split(separator: " ").map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        let id = try #require(fields.first.flatMap { UInt64($0) }, "\(gone.stdout) \(gone.stderr)")
        let client = try #require(fields.last)
        let owned = try run(["gdbus", "call", "--session", "--dest", "org.freedesktop.DBus", "--object-path",
                             "/org/freedesktop/DBus", "--method", "org.freedesktop.DBus.NameHasOwner", client])
        #expect(owned.stdout.contains("false"), "\(client) is still on the bus: \(owned.stdout)")
        #expect(try service.finished(id) == "played", "\(service.signals)")
        try recorder.waitForMoreAudio(seconds: 0.3)
        let heard = Levels.tone(recorder.stop(), hertz: 1000).filter { $0 > -40 }.count
        #expect(heard >= 130, "the prompt was heard in \(heard) 10 ms windows of 150")
        #expect(try eventually(timeout: timeLimit(2)) { try Pactl.volume(ofApp: app) == before })
        #expect(service.stop() == 0)
    }

    @Test("SIGTERM while a passed descriptor is still being read: the PlayFd caller gets Error.Unavailable saying so, nothing plays, the service exits 0")
    func stopWhileReading() throws {
        let (rig, _, service) = try Self.idleSpeaker()
        _ = rig
        let pid = service.process.process.processIdentifier
        // The pipe's writer stays open past the SIGTERM: the read is not done when it stops.
        let stopped = try Self.python("""
            import os, signal, threading, time
            r, w = os.pipe()
            os.write(w, open(sys.argv[2], 'rb').read(4096))
            result = []
            def play():
                try:
                    proxy.call_with_unix_fd_list_sync('PlayFd', GLib.Variant('(ha{sv})', (0, {})),
                        Gio.DBusCallFlags.NONE, 20000, Gio.UnixFDList.new_from_array([r]), None)
                    result.append('taken')
                except GLib.Error as e:
                    result.append(error_name(e) + ' ' + e.message)
            t = threading.Thread(target=play)
            t.start()
            wait_held(int(sys.argv[1]), [r])
            os.kill(int(sys.argv[1]), signal.SIGTERM)
            t.join(10)
            print('answer', result)
            os.close(w)
            """, ["\(pid)", try DuckIntegrationTests.prompt(seconds: 1.0)])
        #expect(stopped.stdout.contains("answer ['\(Self.name).Error.Unavailable"), "\(stopped.stdout) \(stopped.stderr)")
        #expect(stopped.stdout.contains("stopped before the call was answered"), "\(stopped.stdout)")
        #expect(service.process.wait(timeout: timeLimit(5)) == 0, "\(String(decoding: service.process.bytes, as: UTF8.self))")
        #expect(!service.signals.contains("PromptStarted"), "\(service.signals)")
        service.monitor.stop()
    }
}

extension ServiceIntegrationTests {
    /// `clients` clients one after another (a process and a connection each; a client's
    /// prompts stay after it leaves), each calling `Play` of `prompt` 16 times: a line per
    /// call, `taken` or `refused NAME MESSAGE`.
    static func playFromClients(_ clients: Int, _ prompt: String) throws -> [Substring] {
        var lines: [Substring] = []
        for _ in 0..<clients {
            let result = try python("""
                for i in range(16):
                    try:
                        proxy.call_sync('Play', GLib.Variant('(asa{sv})', ([sys.argv[1]], {})), Gio.DBusCallFlags.NONE, 5000, None)
                        print('taken')
                    except GLib.Error as e:
                        print('refused', error_name(e), e.message)
                """, [prompt])
            lines += result.stdout.split(separator: "\n")
        }
        return lines
    }

    /// A number field of `/proc/PID/status` (`Threads`, `VmRSS` in kB).
    static func procStatus(_ pid: Int32, _ field: String) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
              let value = Int(line.dropFirst(field.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "") else {
            throw TestFailure("no \(field) in /proc/\(pid)/status")
        }
        return value
    }

    /// The process's CPU time so far, user and system, in s (`/proc/PID/stat` fields 14 and 15,
    /// in clock ticks of 1/100 s).
    static func cpuSeconds(_ pid: Int32) throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // After the command's closing parenthesis: field 3 onward.
        let fields = stat[stat.lastIndex(of: ")")!...].split(separator: " ").dropFirst()
        let values = Array(fields)
        guard values.count > 12, let user = Double(values[11]), let system = Double(values[12]) else {
            throw TestFailure("cannot read the CPU time in /proc/\(pid)/stat: \(stat)")
        }
        return (user + system) / 100
    }

    @Test("Memory is given back: three PlayFd of /dev/zero (64 MiB read, then refused) and three Say of 10 MB leave the service's RSS within 8 MB of where it was")
    func memoryGivenBack() throws {
        let (rig, _, service) = try Self.idleSpeaker()
        defer { withExtendedLifetime(rig) {} }
        let pid = service.process.process.processIdentifier
        func rssKiB() throws -> Int { try Self.procStatus(pid, "VmRSS") }
        let before = try rssKiB()
        let result = try Self.python("""
            import os
            for i in range(3):
                fd = os.open('/dev/zero', os.O_RDONLY)
                try:
                    bus.call_with_unix_fd_list_sync('\(Self.name)', '\(Self.path)', '\(Self.name)', 'PlayFd',
                        GLib.Variant('(ha{sv})', (0, {})), GLib.VariantType('(t)'), Gio.DBusCallFlags.NONE, 30000,
                        Gio.UnixFDList.new_from_array([fd]), None)
                    print('PlayFd taken')
                except GLib.Error as e:
                    print('PlayFd', error_name(e))
                try:
                    proxy.call_sync('Say', GLib.Variant('(sa{sv})', ('x' * 10000000, {})), Gio.DBusCallFlags.NONE, 30000, None)
                    print('Say taken')
                except GLib.Error as e:
                    print('Say', error_name(e))
            """)
        #expect(result.stdout.components(separatedBy: "\(Self.name).Error.LimitsExceeded").count == 7, "\(result.stdout) \(result.stderr)")
        let after = try rssKiB()
        print("[\(TestServer.kind)] serve's RSS \(before) kB, \(after) kB after the large inputs")
        // Under ThreadSanitizer its allocator keeps more of what was freed (8.2 MB once in CI).
        let limitKiB = ProcessInfo.processInfo.environment["DUCKPROMPT_TEST_SANITIZER"] == nil ? 8 * 1024 : 12 * 1024
        #expect(after - before < limitKiB, "RSS \(before) kB before, \(after) kB after")
        #expect(service.stop() == 0)
    }

    @Test("Limits over every client: five clients × 16 Play, 64 taken and 16 Error.LimitsExceeded; a Play of 65 files refused; SIGTERM with 64 queued ends within a second, the music exact")
    func limitsOverEveryClient() throws {
        let (rig, _, app, before) = try PrompterIntegrationTests.musicOnSpeaker("served-total", volume: 50000)
        defer { withExtendedLifetime(rig) {} }
        let service = try Service()
        // Long enough that none ends while the clients call.
        let prompt = try DuckIntegrationTests.prompt(seconds: 20.0)
        let lines = try Self.playFromClients(5, prompt)
        #expect(lines.filter { $0 == "taken" }.count == PromptLimits.promptsInTotal, "\(lines)")
        let refused = lines.filter { $0.hasPrefix("refused") }
        #expect(refused.count == 80 - PromptLimits.promptsInTotal, "\(lines)")
        #expect(refused.allSatisfy { $0.contains("\(Self.name).Error.LimitsExceeded") && $0.contains("the most it takes from all clients together") },
                "\(refused)")
        let many = try Self.python("""
            try:
                proxy.call_sync('Play', GLib.Variant('(asa{sv})', ([sys.argv[1]] * 65, {})), Gio.DBusCallFlags.NONE, 5000, None)
                print('taken')
            except GLib.Error as e:
                print('refused', error_name(e), e.message)
            """, [prompt])
        #expect(many.stdout.contains("refused \(Self.name).Error.LimitsExceeded"), "\(many.stdout) \(many.stderr)")
        #expect(many.stdout.contains("65 files; a prompt plays at most 64"), "\(many.stdout) \(many.stderr)")
        // Waiting prompts are cheap: no thread each (one waits for all their turns), and little
        // CPU time while 63 wait behind the one that plays.
        #expect(eventually(timeout: timeLimit(5)) { service.signals.contains("PromptStarted") }, "\(service.signals)")
        let pid = service.process.process.processIdentifier
        let threads = try Self.procStatus(pid, "Threads")
        let cpuBefore = try Self.cpuSeconds(pid)
        let wall = Date()
        _ = eventually(timeout: 2) { Date().timeIntervalSince(wall) >= 1 }
        let cpu = try Self.cpuSeconds(pid) - cpuBefore
        print("[\(TestServer.kind)] 64 prompts queued: \(threads) threads, \(cpu) s of CPU in 1 s")
        #expect(threads < 32, "\(threads) threads with 64 prompts queued")
        // (Before TurnWaiter: 75 threads and 0.97 s of CPU time in 1 s, PipeWire.)
        let cpuLimit = ProcessInfo.processInfo.environment["DUCKPROMPT_TEST_SANITIZER"] == nil ? 0.25 : 0.6
        #expect(cpu < cpuLimit, "\(cpu) s of CPU time in 1 s with 63 prompts waiting")
        // SIGTERM with the queue full: every prompt cancelled, the duck ramped back, the exit
        // within a second.
        let start = Date()
        #expect(service.stop() == 0)
        let seconds = Date().timeIntervalSince(start)
        #expect(seconds < timeLimit(1.0), "serve took \(seconds) s to end after SIGTERM with 64 prompts queued")
        #expect(try Pactl.volume(ofApp: app) == before, "the music was left at \(String(describing: try? Pactl.volume(ofApp: app)))")
    }

    @Test("A waiting Play holds none of its files open: four Play of 64 files behind a playing prompt leave serve with no descriptor of them; a file changed before its turn ends the prompt failed, the music exact")
    func filesOpenAtTurn() throws {
        let (rig, _, app, before) = try PrompterIntegrationTests.musicOnSpeaker("served-files", volume: 50000)
        defer { withExtendedLifetime(rig) {} }
        let service = try Service()
        let playing = try Service.id(try service.call("Play", "['\(try DuckIntegrationTests.prompt(seconds: 20.0))']", "{}"))
        #expect(eventually(timeout: timeLimit(5)) { service.signals.contains("PromptStarted (uint64 \(playing)") },
                "\(service.signals)")
        let pid = service.process.process.processIdentifier
        func descriptors() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd") }
        let playingOnly = try descriptors().count
        let playingTargets = try descriptors().compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)") }
        // Next in line: a file rewritten (another length) after the call.
        let changing = try TestAudio.sine("served-changing.wav", hertz: 440, seconds: 0.5, channels: 1)
        let changed = try Service.id(try service.call("Play", "['\(changing)']", "{}"))
        try run(["sox", "-n", "-r", "48000", "-c", "1", "-b", "16", changing, "synth", "0.7", "sine", "440", "vol", "0.5"])
        // Behind it, 4 × 64 files.
        let short = try TestAudio.sine("served-files-short.wav", hertz: 880, seconds: 0.1, channels: 1)
        let list = "[" + Array(repeating: "'\(short)'", count: PromptLimits.maxFiles).joined(separator: ", ") + "]"
        for _ in 0..<4 { _ = try Service.id(try service.call("Play", list, "{}")) }
        let open = try descriptors()
        let targets = open.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\($0)") }
        let held = targets.filter { $0 == short || $0 == changing }.count
        print("[\(TestServer.kind)] 5 Play waiting (257 files): serve holds \(held) of the files open, "
              + "\(open.count) descriptors in all, \(playingOnly) with one prompt playing")
        // (Before FileAtTurn: 257 of the files; 268 descriptors more, a ticket file and a
        // doorbell FIFO for each waiting prompt.)
        #expect(held == 0, "serve holds \(held) descriptors of waiting prompts' files")
        // One descriptor for each waiting prompt: its ticket file, whose lock shows it is alive.
        #expect(open.count - playingOnly <= 5 + 2, "\(open.count - playingOnly) descriptors more for 5 waiting prompts: \(targets.sorted()) against \(playingTargets.sorted())")
        _ = try service.call("Cancel", "\(playing)")
        #expect(try service.finished(changed) == "failed", "\(service.signals)")
        #expect(service.signals.contains("changed after the prompt was asked for"), "\(service.signals)")
        #expect(service.stop() == 0)
        #expect(try Pactl.volume(ofApp: app) == before, "the music was left at \(String(describing: try? Pactl.volume(ofApp: app)))")
    }

    @Test("Out of file descriptors (serve under prlimit --nofile=100): prompts are refused LimitsExceeded naming the descriptors, never Internal, Config or NoInput; SIGTERM restores the music exactly")
    func outOfDescriptors() throws {
        let (rig, _, app, before) = try PrompterIntegrationTests.musicOnSpeaker("served-nofile", volume: 50000)
        defer { withExtendedLifetime(rig) {} }
        // 100: 24 (PulseAudio) to 38 (PipeWire) in use with one prompt, 48 kept free, one more
        // for each waiting prompt (its ticket): some of the 64 prompts are refused.
        let service = try Service(launcher: ["prlimit", "--nofile=100:100", "--"])
        let prompt = try DuckIntegrationTests.prompt(seconds: 20.0)
        let lines = try Self.playFromClients(4, prompt)
        let refused = lines.filter { $0.hasPrefix("refused") }
        print("[\(TestServer.kind)] under 100 descriptors: \(lines.filter { $0 == "taken" }.count) taken, \(refused.count) refused")
        #expect(lines.contains("taken"), "\(lines)")
        #expect(!refused.isEmpty && refused.allSatisfy { $0.contains("\(Self.name).Error.LimitsExceeded") }, "\(refused)")
        #expect(refused.contains { $0.contains("file descriptors open (RLIMIT_NOFILE)") }, "\(refused)")
        #expect(eventually(timeout: timeLimit(5)) { service.signals.contains("PromptStarted") }, "\(service.signals)")
        #expect(service.stop() == 0)
        #expect(try Pactl.volume(ofApp: app) == before, "the music was left at \(String(describing: try? Pactl.volume(ofApp: app)))")
        #expect(!String(decoding: service.process.bytes, as: UTF8.self).contains("failed"),
                "a prompt failed: \(String(decoding: service.process.bytes, as: UTF8.self))")
    }
}
