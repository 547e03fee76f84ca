import DuckPrompt
import FoundationEssentials
import Glibc

/// A process the lab started: spawned with `posix_spawnp` in a process group of its own (so
/// that a terminal's Ctrl-C reaches the lab, which stops everything in order), reaped with
/// `waitpid` (`POSIX.waitpid`), stopped by pid. The one file of the lab that spawns, signals and
/// reaps.
package final class LabProcess: @unchecked Sendable {
    package let name: String
    package let pid: pid_t
    private let condition = Condition()
    /// Its exit status once reaped (128 + N for signal N). Guarded by `condition`.
    private var status: Int32?

    /// Starts `arguments` (PATH of `environment` looked up), with `environment` alone, every
    /// signal unblocked and at its default.
    /// - Parameters:
    ///   - output: a file for standard output and error (a server's log), nil to share the
    ///     lab's own.
    ///   - input: nil for /dev/null, else the lab's standard input is passed on.
    /// - Throws: `.unavailable` naming the program when it cannot be started.
    /// POSIX: `posix_spawnp` with `POSIX_SPAWN_SETPGROUP | SETSIGMASK | SETSIGDEF`.
    package init(name: String, _ arguments: [String], environment: [String: String], output: String?,
                 passInput: Bool = false) throws {
        self.name = name
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if !passInput { posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0) }
        if let output {
            posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o600)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var empty = sigset_t(), all = sigset_t()
        sigemptyset(&empty)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attr, &empty)
        posix_spawnattr_setsigdefault(&attr, &all)
        posix_spawnattr_setpgroup(&attr, 0)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for p in argv { free(p) }
            for p in envp { free(p) }
        }
        // posix_spawnp looks the program up in the caller's PATH: the environment's is used.
        let program = Self.find(arguments[0], path: environment["PATH"]) ?? arguments[0]
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, program, &actions, &attr, argv, envp)
        guard rc == 0 else {
            throw DuckPromptError(.unavailable, "cannot start \(arguments[0]): \(String(cString: strerror(rc)))")
        }
        self.pid = pid
        startThread { [self] in
            let raw = (try? POSIX.waitpid(self.pid)) ?? 0
            let code: Int32 = (raw & 0x7f) == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
            condition.withLock {
                status = code
                condition.broadcast()
            }
        }
    }

    /// Whether a file named `program` is there (executable or not), looked up as `find` does.
    package static func exists(_ program: String, path: String?) -> Bool {
        if program.contains("/") { return access(program, F_OK) == 0 }
        return (path ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":").contains { access("\($0)/\(program)", F_OK) == 0 }
    }

    /// The absolute path of `program` in `path` (colon-separated), or nil when it is not
    /// there or not executable; a name with a slash is taken as it is.
    package static func find(_ program: String, path: String?) -> String? {
        if program.contains("/") { return access(program, X_OK) == 0 ? program : nil }
        for dir in (path ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(dir)/\(program)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// Its exit status once it ended, nil while it runs.
    package var exitStatus: Int32? { condition.withLock { status } }

    /// Waits until it ends or `deadline` passes (nil: no deadline), or `stop` returns true
    /// (looked at whenever `wake()` is called and every 100 ms).
    /// - Returns: its exit status, nil when it still runs.
    package func wait(until deadline: ContinuousClock.Instant? = nil, or stop: () -> Bool = { false }) -> Int32? {
        condition.withLock {
            while status == nil {
                if stop() { return nil }
                if let deadline, ContinuousClock.now >= deadline { return nil }
                var wait = 100
                if let deadline {
                    let left = deadline - ContinuousClock.now
                    wait = max(1, min(100, Int(left.waitMilliseconds)))
                }
                _ = condition.waitLocked(milliseconds: wait)
            }
            return status
        }
    }

    /// Wakes a `wait` so that it looks at its `stop` again.
    package func wake() { condition.broadcast() }

    /// Stops it and everything it started: SIGTERM to its process group and to every
    /// descendant (`/proc`, for those that left the group), SIGKILL to what is left after
    /// `grace`. Waits until it is reaped.
    /// POSIX: `kill`.
    package func stop(grace: Duration = .seconds(3)) {
        guard exitStatus == nil else { return }
        let tree = Self.descendants(of: pid)
        kill(-pid, SIGTERM)
        kill(pid, SIGTERM)
        for child in tree { kill(child, SIGTERM) }
        // A stopped process (SIGSTOP) must run to take the SIGTERM.
        kill(-pid, SIGCONT)
        if wait(until: .now + grace) == nil {
            kill(-pid, SIGKILL)
            kill(pid, SIGKILL)
        }
        for child in tree where Self.isRunning(child) { kill(child, SIGKILL) }
        _ = wait()
    }

    /// Stops processes the lab did not start itself (a service the bus activated): SIGTERM,
    /// SIGKILL to those still running after `grace`.
    package static func stop(_ pids: [pid_t], grace: Duration = .seconds(3)) {
        guard !pids.isEmpty else { return }
        for pid in pids { kill(pid, SIGTERM) }
        let deadline = ContinuousClock.now + grace
        while pids.contains(where: isRunning), ContinuousClock.now < deadline { sleepThread(for: .milliseconds(20)) }
        for pid in pids where isRunning(pid) { kill(pid, SIGKILL) }
    }

    /// Whether `pid` runs (not a zombie): `ProcessLiveness.isRunning`.
    package static func isRunning(_ pid: pid_t) -> Bool { ProcessLiveness.isRunning(pid) }

    /// Every process of process group `group` but its leader, from `/proc/*/stat`: what a
    /// process the lab started, itself a group leader, started and let go (dbus-daemon's
    /// activation forks twice, and its service's parent is then init).
    package static func members(ofGroup group: pid_t) -> [pid_t] {
        processTable().filter { $0.group == group && $0.pid != group }.map(\.pid)
    }

    /// Every descendant of `pid` (children, their children …), from `/proc/*/stat`.
    package static func descendants(of pid: pid_t) -> [pid_t] {
        let parent = Dictionary(processTable().map { ($0.pid, $0.parent) }, uniquingKeysWith: { a, _ in a })
        var found: [pid_t] = []
        var frontier: Set<pid_t> = [pid]
        while !frontier.isEmpty {
            let next = parent.filter { frontier.contains($0.value) }.map(\.key)
            found += next
            frontier = Set(next)
        }
        return found
    }

    /// Each process's pid, parent and process group (fields 4 and 5 of /proc/PID/stat).
    private static func processTable() -> [(pid: pid_t, parent: pid_t, group: pid_t)] {
        guard let dir = opendir("/proc") else { return [] }
        defer { closedir(dir) }
        var table: [(pid: pid_t, parent: pid_t, group: pid_t)] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let pid = pid_t(name),
                  let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 2, let parent = pid_t(fields[1]), let group = pid_t(fields[2]) {
                table.append((pid, parent, group))
            }
        }
        return table
    }
}
