import DuckPrompt
import DuckPromptService
import FoundationEssentials
import Glibc

/// The lab's private world: a runtime directory (mode 0700) that is the servers' and
/// COMMAND's `XDG_RUNTIME_DIR`, the servers' own HOME inside it, a session bus of its own
/// (`dbus-daemon`, on which `duckprompt serve` is activatable), and the sound server: pipewire +
/// wireplumber (no hardware monitors) + pipewire-pulse, or pulseaudio -n. Started in that
/// order, stopped in the reverse one, by pid.
package final class LabServers: @unchecked Sendable {
    /// The private runtime directory.
    package let directory: String
    package let kind: LabServerKind
    /// Every process running, in start order (a restarted server in its first one's place).
    package var processes: [LabProcess] { lock.withLock { started } }
    private let lock = Lock()
    /// Guarded by `lock`.
    private var started: [LabProcess] = []
    private var stopping = false
    /// Where the pid of the process serving the pulse protocol is (pipewire-pulse or
    /// pulseaudio), rewritten when it is started again.
    package var pulseServerPidFile: String { "\(directory)/pulse-server.pid" }
    /// The libpulse server string of the lab (`unix:DIR/pulse/native`).
    package var pulseServer: String { "unix:\(directory)/pulse/native" }
    /// The lab bus's address (`unix:path=DIR/bus`).
    package var busAddress: String { "unix:path=\(directory)/bus" }
    package var logs: String { "\(directory)/logs" }

    /// The Debian package of each program the lab starts, for the error when one is missing.
    package static let packages = ["dbus-daemon": "dbus-daemon", "pipewire": "pipewire-bin", "wireplumber": "wireplumber",
                                   "pipewire-pulse": "pipewire-pulse", "pulseaudio": "pulseaudio"]

    /// The programs a lab on `kind` starts, in order.
    package static func programs(for kind: LabServerKind) -> [String] {
        kind == .pipewire ? ["dbus-daemon", "pipewire", "wireplumber", "pipewire-pulse"] : ["dbus-daemon", "pulseaudio"]
    }

    /// Makes the directory and starts the bus and the server; returns once the server
    /// answers libpulse.
    /// - Parameters:
    ///   - environment: the caller's environment (PATH is looked in; nothing of the user's
    ///     session is passed on: `environment(base:)`).
    ///   - serviceBinary: the `duckprompt` binary, made activatable on the lab's bus.
    /// - Throws: `.unavailable` (exit 69) naming a missing program and its Debian package, or
    ///   the server that did not answer within 10 s (its log's last lines in the message).
    package init(kind: LabServerKind, environment: [String: String], serviceBinary: String?) throws {
        self.kind = kind
        for program in Self.programs(for: kind) where LabProcess.find(program, path: environment["PATH"]) == nil {
            throw DuckPromptError(.unavailable, "cannot start a private \(kind.rawValue): \(program) is not installed "
                                  + "(Debian package \(Self.packages[program] ?? program))")
        }
        var template = Array("\(Self.parent(environment))/duckprompt-lab.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw DuckPromptError(.unavailable, "cannot make the lab's directory: \(String(cString: strerror(errno)))")
        }
        directory = String(cString: made)
        chmod(directory, 0o700)
        for sub in ["logs", "home/.config/wireplumber/main.lua.d", "home/.config/wireplumber/bluetooth.lua.d",
                    "home/.local/state", "dbus-services"] {
            try FileManager.default.createDirectory(atPath: "\(directory)/\(sub)", withIntermediateDirectories: true)
        }
        // Made before any server or client: pipewire-pulse 0.3.65 stat()s it, then mkdir()s it,
        // and exits when a client's libpulse made it in between.
        mkdir("\(directory)/pulse", 0o700)
        do {
            try start(environment: environment, serviceBinary: serviceBinary)
        } catch {
            stop()
            throw error
        }
    }

    /// Where the lab's directory is made: `TMPDIR` when set; else /dev/shm when it is a tmpfs
    /// one may write to, as a desktop's `XDG_RUNTIME_DIR` (/run/user/UID, which systemd-logind
    /// mounts as a tmpfs) is, so that what duckprompt keeps there (queue, journal: written
    /// with fsync) costs what it costs a user; else /tmp. The mount from /proc/self/mounts.
    static func parent(_ environment: [String: String]) -> String {
        if let tmp = environment["TMPDIR"], !tmp.isEmpty { return tmp }
        let mounts = FileManager.default.contents(atPath: "/proc/self/mounts").map { String(decoding: $0, as: UTF8.self) } ?? ""
        let shmIsTmpfs = mounts.split(separator: "\n").contains { line in
            let fields = line.split(separator: " ")
            return fields.count > 2 && fields[1] == "/dev/shm" && fields[2] == "tmpfs"
        }
        return shmIsTmpfs && access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : "/tmp"
    }

    /// What the servers, the bus and COMMAND run with: the caller's environment without
    /// anything that reaches the user's session (`PULSE_*`, `PIPEWIRE_*`, `DISPLAY`,
    /// `WAYLAND_DISPLAY`, `DBUS_SESSION_BUS_ADDRESS`), and the lab's runtime directory, sound
    /// server, PipeWire socket, bus and a client.conf without autospawn.
    package func environment(base: [String: String]) -> [String: String] {
        var env = base.filter { key, _ in
            !key.hasPrefix("PULSE_") && !key.hasPrefix("PIPEWIRE_") && !["DISPLAY", "WAYLAND_DISPLAY",
                "DBUS_SESSION_BUS_ADDRESS", "DBUS_STARTER_ADDRESS", "DBUS_STARTER_BUS_TYPE", "JACK_DEFAULT_SERVER"].contains(key)
        }
        env["XDG_RUNTIME_DIR"] = directory
        env["PULSE_SERVER"] = pulseServer
        env["PULSE_CLIENTCONFIG"] = "\(directory)/client.conf"
        env["PIPEWIRE_REMOTE"] = "\(directory)/pipewire-0"
        env["DBUS_SESSION_BUS_ADDRESS"] = busAddress
        env["DUCKPROMPT_LAB_DIR"] = directory
        env["DUCKPROMPT_LAB_SERVER"] = kind.rawValue
        return env
    }

    private func start(environment base: [String: String], serviceBinary: String?) throws {
        try write("autospawn = no\ncookie-file = \(directory)/home/.config/pulse/cookie\n", to: "client.conf")
        try write("""
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <keep_umask/>
              <listen>\(busAddress)</listen>
              <auth>EXTERNAL</auth>
              <servicedir>\(directory)/dbus-services</servicedir>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>

            """, to: "bus.conf")
        if let serviceBinary {
            // --exit-idle: once COMMAND is done, the lab waits for it to leave by itself, so
            // that the prompts an app fired and forgot are heard whole (`waitForActivated`).
            try write("[D-BUS Service]\nName=\(DuckPromptService.busName)\nExec=\(serviceBinary) serve --exit-idle \(Self.serviceIdleSeconds)\n",
                      to: "dbus-services/\(DuckPromptService.busName).service")
        }
        let clients = environment(base: base)
        // The servers get a HOME of their own: nothing of the user's configuration or saved
        // volumes is read or written.
        var servers = clients
        servers["HOME"] = "\(directory)/home"
        servers["XDG_CONFIG_HOME"] = "\(directory)/home/.config"
        servers["XDG_STATE_HOME"] = "\(directory)/home/.local/state"
        // The bus runs with the clients' environment: a service it activates inherits it.
        try spawn("dbus-daemon", ["dbus-daemon", "--nofork", "--config-file=\(directory)/bus.conf"], clients)
        try waitFor("the session bus", socket: "bus")
        switch kind {
        case .pipewire:
            // No hardware monitors: a lab must not open the machine's sound cards or cameras,
            // and the bluez monitor loads the logind module, which exits where there is no
            // /run/systemd/seats (a container).
            try write("-- duckprompt lab: headless, no hardware.\nalsa_monitor.enabled = false\n"
                      + "v4l2_monitor.enabled = false\nlibcamera_monitor.enabled = false\n",
                      to: "home/.config/wireplumber/main.lua.d/80-duckprompt-lab.lua")
            try write("-- duckprompt lab: headless, no hardware.\nbluez_monitor.enabled = false\n",
                      to: "home/.config/wireplumber/bluetooth.lua.d/80-duckprompt-lab.lua")
            try spawn("pipewire", ["pipewire"], servers)
            try waitFor("pipewire", socket: "pipewire-0")
            try spawn("wireplumber", ["wireplumber"], servers)
            try supervise("pipewire-pulse", ["pipewire-pulse"], servers)
        case .pulseaudio:
            // -n: no default.pa; the restore policy a desktop has, nothing that moves, corks
            // or ducks streams by itself.
            try supervise("pulseaudio", ["pulseaudio", "-n", "--daemonize=no", "--exit-idle-time=-1", "--disallow-exit",
                                     "--log-target=stderr", "--use-pid-file=no", "-L", "module-native-protocol-unix",
                                     "-L", "module-stream-restore", "-L", "module-always-sink",
                                     "-L", "module-suspend-on-idle"], servers)
        }
        try waitFor(kind.rawValue, socket: "pulse/native")
    }

    private func write(_ text: String, to file: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: "\(directory)/\(file)"))
    }

    private func spawn(_ name: String, _ arguments: [String], _ environment: [String: String]) throws {
        let process = try LabProcess(name: name, arguments, environment: environment, output: "\(logs)/\(name).log")
        lock.withLock { started.append(process) }
    }

    /// Starts the server of the pulse protocol, and starts it again 0.2 s after it dies, as a
    /// desktop's systemd does (`Restart=`), so that a client's behaviour when its server
    /// crashes can be tested: kill -9 the pid in `pulseServerPidFile`.
    private func supervise(_ name: String, _ arguments: [String], _ environment: [String: String]) throws {
        let first = try LabProcess(name: name, arguments, environment: environment, output: "\(logs)/\(name).log")
        let index = lock.withLock { () -> Int in
            started.append(first)
            return started.count - 1
        }
        try writePid(first.pid)
        startThread { [self] in
            var current = first
            while true {
                let status = current.wait() ?? 0
                if !lock.withLock({ stopping }) {
                    // On the lab's standard error, so that a CI log tells why its clients were
                    // refused for a moment (a test's kill -9, or a crash of the server).
                    let how = status > 128 ? "signal \(status - 128)" : "status \(status)"
                    StandardStreams.writeError("lab: \(name) (pid \(current.pid)) ended (\(how))\(lastLines(of: name)); starting it again\n")
                }
                sleepThread(for: .milliseconds(200))
                // Under the lock: stop() either sees the new process or keeps it from starting.
                let next = lock.withLock { () -> LabProcess? in
                    guard !stopping,
                          let next = try? LabProcess(name: name, arguments, environment: environment, output: "\(logs)/\(name).log")
                    else { return nil }
                    started[index] = next
                    return next
                }
                guard let next else { return }
                try? writePid(next.pid)
                current = next
            }
        }
    }

    /// Writes `pid` to `pulseServerPidFile`, whole (a new file renamed over the old).
    private func writePid(_ pid: pid_t) throws {
        try write("\(pid)\n", to: "pulse-server.pid.new")
        rename("\(directory)/pulse-server.pid.new", pulseServerPidFile)
    }

    /// Waits up to 10 s for `socket` (relative to the directory) to exist.
    /// - Throws: `.unavailable` when a server ended or the time ran out, with its log's end.
    private func waitFor(_ what: String, socket: String) throws {
        let deadline = ContinuousClock.now + .seconds(10)
        var status = stat()
        while stat("\(directory)/\(socket)", &status) != 0 || status.st_mode & S_IFMT != S_IFSOCK {
            if let dead = processes.first(where: { $0.exitStatus != nil }) {
                lock.withLock { stopping = true }
                throw DuckPromptError(.unavailable, "\(dead.name) exited (status \(dead.exitStatus ?? 0)) before "
                                      + "\(what) was ready\(lastLines(of: dead.name))")
            }
            guard ContinuousClock.now < deadline else {
                throw DuckPromptError(.unavailable, "\(what) was not ready after 10 s\(lastLines(of: processes.last?.name ?? ""))")
            }
            sleepThread(for: .milliseconds(20))
        }
    }

    /// `: LAST LINE` of a process's log, for an error message; empty when there is none.
    package func lastLines(of name: String) -> String {
        guard let data = FileManager.default.contents(atPath: "\(logs)/\(name).log") else { return "" }
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").suffix(1)
        return lines.isEmpty ? "" : ": " + lines.joined(separator: " / ")
    }

    /// How long the lab's activated `duckprompt serve` stays with nothing to do.
    package static let serviceIdleSeconds = 2

    /// Waits until what the bus activated (`duckprompt serve`) has left by itself, at most
    /// `limit`, or until `stop` returns true (looked at every 50 ms).
    /// - Returns: whether it did (or there was none), and the pids of what was running when
    ///   the wait began (for the report).
    package func waitForActivated(limit: Duration, or stop: () -> Bool) -> (left: Bool, seen: [pid_t]) {
        guard let bus = processes.first else { return (true, []) }
        let seen = LabProcess.members(ofGroup: bus.pid).filter(LabProcess.isRunning)
        let deadline = ContinuousClock.now + limit
        while LabProcess.members(ofGroup: bus.pid).contains(where: LabProcess.isRunning) {
            guard ContinuousClock.now < deadline, !stop() else { return (false, seen) }
            sleepThread(for: .milliseconds(50))
        }
        return (true, seen)
    }

    /// Stops every process, last started first: first what the bus activated (in the bus's
    /// process group), then each server and the bus with its group and descendants. Safe to
    /// call twice.
    package func stop() {
        lock.withLock { stopping = true }
        // First what the bus started (`duckprompt serve`), while the sound server is still
        // there for it to restore every volume.
        if let bus = processes.first { LabProcess.stop(LabProcess.members(ofGroup: bus.pid)) }
        for process in processes.reversed() { process.stop() }
    }

    /// Removes the directory and everything in it.
    package func remove() {
        try? FileManager.default.removeItem(atPath: directory)
    }
}
