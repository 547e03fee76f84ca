import FoundationEssentials
import Glibc

/// Whether a process runs, from `/proc`: its start time and state (`/proc/PID/stat`) tell a
/// journal's or a ticket's owner from a later process that reused its pid, and from a zombie.
///
/// Pure reads; safe from any thread. Without /proc every answer is "not there".
package enum ProcessLiveness {
    /// A process's start time, clock ticks after boot: field 22 (`starttime`) of
    /// `/proc/PID/stat`. Nil when the process does not exist (or /proc is not readable).
    static func start(of pid: Int32) -> UInt64? {
        statLine(of: pid).flatMap(parseStart)
    }

    /// Whether `pid` runs and started at `start` (clock ticks after boot), and is not a zombie
    /// (a zombie has closed its files, so its locks are free). A pid that exists with another
    /// start time was reused: the process asked about is dead. `/proc/PID/stat`.
    static func isRunning(pid: Int32, start: UInt64) -> Bool {
        guard let text = statLine(of: pid), let started = parseStart(stat: text) else { return false }
        let state = parseState(stat: text)
        return started == start && state != "Z" && state != "X"
    }

    /// Whether `pid` runs, whenever it started: it exists and is not a zombie.
    /// `/proc/PID/stat`'s state.
    package static func isRunning(_ pid: Int32) -> Bool {
        guard let text = statLine(of: pid), let state = parseState(stat: text) else { return false }
        return state != "Z" && state != "X"
    }

    /// Whether any process has `pid`, a zombie included. `stat(2)` of `/proc/PID`.
    static func exists(_ pid: Int32) -> Bool {
        (try? POSIX.stat("/proc/\(pid)")) != nil
    }

    /// The text of `/proc/PID/stat`, nil for a pid ≤ 0 or when it cannot be read.
    /// `open(2)` and `read(2)` into a 4 KiB buffer (the line is about 300 bytes), not
    /// `String(contentsOfFile:)`, whose first use cost about 0.2 ms of the command's start
    /// (`ServiceMark.mayBeRunning`, on the way to the service; measured with perf).
    private static func statLine(of pid: Int32) -> String? {
        guard pid > 0, let fd = try? POSIX.open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC) else { return nil }
        defer { try? POSIX.close(fd) }
        var bytes = [UInt8](repeating: 0, count: 4096)
        var count = 0
        while count < bytes.count {
            let read = try? bytes.withUnsafeMutableBytes { buffer throws(Errno) in
                try POSIX.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[count...]))
            }
            guard let read else { return nil }
            if read == 0 { break }
            count += read
        }
        return String(decoding: bytes[..<count], as: UTF8.self)
    }

    /// Field 22 of a `/proc/PID/stat` line. The command name (field 2) is in parentheses and may
    /// hold spaces and parentheses itself, so fields are counted after the last `)`.
    static func parseStart(stat: String) -> UInt64? {
        guard let close = stat.lastIndex(of: ")") else { return nil }
        // A Character separator: the stdlib's split, not _StringProcessing's for a String one
        // (whose generic types cost the handed-over command 30 µs to make at run time).
        let fields = stat[stat.index(after: close)...].split(separator: " " as Character, omittingEmptySubsequences: true)
        // fields[0] is field 3 (state), so field 22 is fields[19].
        guard fields.count > 19 else { return nil }
        return UInt64(fields[19].trimmingWhitespace())
    }

    /// The state letter of a `/proc/PID/stat` line (field 3: `R`, `S`, `Z` …).
    static func parseState(stat: String) -> Character? {
        guard let close = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(after: close)...].first { $0 != " " }
    }
}
