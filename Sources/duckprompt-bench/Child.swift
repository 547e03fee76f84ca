import DuckPrompt
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

    /// Starts `arguments` (PATH lookup), standard input and output on /dev/null, standard
    /// error to a temporary file, signal mask cleared, environment inherited.
    init(_ arguments: [String]) throws {
        errPath = NSTemporaryDirectory() + "duckprompt-bench-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).err"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
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
                if let status = try? String(contentsOfFile: "/proc/\(self.pid)/status", encoding: .utf8),
                   let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
                   let kib = Double(line.split(separator: " ").dropFirst().first ?? "") {
                    lock.withLock { highWaterKiB = max(highWaterKiB, kib) }
                }
                pause(ms: 20)
            }
        }.start()
    }

    /// Blocks until the child ends.
    func wait() -> ChildRun {
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
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
