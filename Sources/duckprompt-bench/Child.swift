import DuckPrompt
import DuckPromptProbe
import Foundation

/// A finished child process, timed on the monotonic clock.
struct ChildRun {
    /// `monotonicNanoseconds()` just before `posix_spawnp`.
    var started: UInt64
    /// `monotonicNanoseconds()` when `wait4` returned.
    var exited: UInt64
    /// Exit status (128+N for signal N).
    var status: Int32
    /// User + system CPU seconds (`ru_utime + ru_stime`).
    var cpuSeconds: Double
    /// Peak resident set size in MiB: the last `VmHWM` of /proc/PID/status seen while it ran
    /// (sampled every 20 ms). Not `ru_maxrss`: posix_spawn's child shares this process's
    /// memory until it execs, and Linux carries that high-water mark into `ru_maxrss`.
    var peakRSSMiB: Double
    /// The first 500 bytes of standard error, for a failure note.
    var stderr: String

    var wallSeconds: Double { Double(exited - started) / 1e9 }
}

/// A child started with `posix_spawnp`; `wait()` reaps it with `wait4` for its rusage.
final class Child: @unchecked Sendable {
    let pid: pid_t
    let started: UInt64
    private let errPath: String
    private let lock = NSLock()
    private var highWaterKiB = 0.0
    private var exited = false

    /// Starts `arguments` (PATH lookup), standard input and output on /dev/null unless a
    /// descriptor is given for them, standard error to a temporary file, signal mask cleared,
    /// environment inherited.
    /// - Parameters:
    ///   - input, output: descriptors the child gets as its standard input or output
    ///     (`posix_spawn_file_actions_adddup2`), e.g. a pipe's end; the caller closes its copy.
    init(_ arguments: [String], input: Int32? = nil, output: Int32? = nil) throws {
        errPath = NSTemporaryDirectory() + "duckprompt-bench-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).err"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let input { posix_spawn_file_actions_adddup2(&actions, input, 0) } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
        if let output { posix_spawn_file_actions_adddup2(&actions, output, 1) } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attr, &empty)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK))
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var pid: pid_t = 0
        let start = monotonicNanoseconds()
        let rc = posix_spawnp(&pid, arguments[0], &actions, &attr, argv, environ)
        guard rc == 0 else { throw BenchError("cannot start \(arguments[0]): \(String(cString: strerror(rc)))") }
        self.pid = pid
        started = start
        Thread { [self] in
            while !lock.withLock({ exited }) {
                if let kib = statusKiB(of: self.pid, "VmHWM:") {
                    lock.withLock { highWaterKiB = max(highWaterKiB, kib) }
                }
                pause(ms: 20)
            }
        }.start()
    }

    /// Blocks until the child ends.
    func wait() -> ChildRun {
        let (status, usage) = (try? POSIX.wait4(pid)) ?? (0, rusage())
        let exited = monotonicNanoseconds()
        let peak = lock.withLock { () -> Double in
            self.exited = true
            return highWaterKiB
        }
        let err = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        unlink(errPath)
        let code: Int32 = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return ChildRun(started: started, exited: exited, status: code,
                        cpuSeconds: seconds(usage.ru_utime) + seconds(usage.ru_stime),
                        peakRSSMiB: peak / 1024, stderr: String(err.prefix(500)))
    }

    /// Runs `arguments` to the end.
    static func run(_ arguments: [String]) throws -> ChildRun { try Child(arguments).wait() }
}

/// A memory field of /proc/PID/status (`VmRSS:`, `VmHWM:`), in KiB; nil when the process is gone.
func statusKiB(of pid: pid_t, _ field: String) -> Double? {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field) }) else { return nil }
    return Double(line.split(separator: " ").dropFirst().first ?? "")
}

/// Runs a command for its output (versions, machine facts); nil when it fails.
func output(of arguments: [String]) -> String? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    process.standardInput = FileHandle.nullDevice
    guard (try? process.run()) != nil else { return nil }
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { return nil }
    return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Sleeps on the calling thread.
func pause(ms: Int) { Thread.sleep(forTimeInterval: Double(ms) / 1000) }

/// The sound servers' processes, by `/proc/PID/comm`.
let serverProcessNames: Set<String> = ["pipewire", "pipewire-pulse", "wireplumber", "pulseaudio"]

/// CPU time so far of every process named in `names` that runs with this process's
/// `XDG_RUNTIME_DIR` (the private servers `duckprompt lab` started, not a desktop's own):
/// `utime + stime` of /proc/PID/stat, in clock ticks (`sysconf(_SC_CLK_TCK)` a second).
func cpuTicks(of names: Set<String>) -> Int {
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return 0 }
    let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"].map { Data("XDG_RUNTIME_DIR=\($0)\0".utf8) }
    var total = 0
    for pid in entries where pid.first?.isNumber == true {
        guard let comm = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8),
              names.contains(comm.trimmingCharacters(in: .whitespacesAndNewlines)),
              runtime.map({ mine in
                  (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/environ")))?.range(of: mine) != nil
              }) ?? true,
              let ticks = cpuTicks(ofProcess: pid) else { continue }
        total += ticks
    }
    return total
}

/// CPU time so far of one process, all its threads (those that ended too): `utime + stime` of
/// /proc/PID/stat, in clock ticks (`sysconf(_SC_CLK_TCK)` a second); nil when it is gone.
func cpuTicks(ofProcess pid: String) -> Int? {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = stat.lastIndex(of: ")") else { return nil }
    // After "(comm)": state is field 3, utime 14, stime 15.
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    guard fields.count > 12, let utime = Int(fields[11]), let stime = Int(fields[12]) else { return nil }
    return utime + stime
}

/// Waits until the sound servers have settled after a change: until two windows of `windowMs`
/// in a row each use less than `percent` of one core, or `limitMs` passed. (Measured on
/// PipeWire with 300 silent streams playing: 30–55 % of a core steady, and 120–140 % for
/// 2.5–5 s after a prompt that ducked them all, while WirePlumber handles the 4200 writes.)
/// - Returns: how long it waited in ms, and whether the servers settled.
func waitUntilServersSettle(percent: Double = 75, windowMs: Int = 250, limitMs: Int = 15_000) -> (waitedMs: Int, settled: Bool) {
    let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
    let began = monotonicNanoseconds()
    var quietWindows = 0
    var before = cpuTicks(of: serverProcessNames)
    while true {
        pause(ms: windowMs)
        let now = cpuTicks(of: serverProcessNames)
        let used = Double(now - before) / ticksPerSecond / (Double(windowMs) / 1000) * 100
        before = now
        quietWindows = used < percent ? quietWindows + 1 : 0
        let waited = Int((monotonicNanoseconds() - began) / 1_000_000)
        if quietWindows >= 2 { return (waited, true) }
        if waited >= limitMs { return (waited, false) }
    }
}
