import FoundationEssentials
import Glibc

/// A hint that `duckprompt serve` runs for this user: `serve.pid` in the runtime directory
/// (`$XDG_RUNTIME_DIR/duckprompt/`), the service's pid and start time, written once it owns its
/// bus name and removed when it exits. `duckprompt play` reads it before it looks on the bus
/// (`ServiceHandoff`): no file, or a process that is no longer the one that wrote it (killed
/// with kill -9), and the command plays the prompt itself at once, with no connection to the
/// session bus (one `open(2)` that fails: a few µs, against 1.2-1.5 ms for a connection and a
/// call). A hint only: the bus decides, so a stale or forged file costs one look on the bus,
/// never another prompt.
package enum ServiceMark {
    static let name = "serve.pid"

    /// Writes the mark (atomically) for this process.
    /// - Returns: what removes it again, if it is still this process's; nil when it could not
    ///   be written (then the command looks on the bus only when the mark of an earlier
    ///   service says so: it plays itself).
    package static func write() -> (@Sendable () -> Void)? {
        guard let directory = try? RuntimeDirectory() else { return nil }
        let pid = getpid()
        guard let start = ProcessLiveness.start(of: pid),
              (try? directory.writeAtomically(Data("\(pid) \(start)\n".utf8), as: name)) != nil else { return nil }
        return {
            if case .success(let data) = directory.read(name, limit: 64), let mark = mark(in: data),
               mark.pid == pid, mark.start == start {
                _ = directory.unlink(name)
            }
        }
    }

    /// Whether a service may run: the mark is there and its process still runs (the same
    /// process: its start time). Reads `$XDG_RUNTIME_DIR/duckprompt/serve.pid` by path
    /// (`O_NOFOLLOW`), creating nothing; `/proc/PID/stat` when it is there.
    package static func mayBeRunning(environment: [String: String] = Environment.values("XDG_RUNTIME_DIR")) -> Bool {
        let path = RuntimeDirectory.path(runtimeDir: environment["XDG_RUNTIME_DIR"]) + "/" + name
        guard let fd = try? POSIX.open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK) else { return false }
        defer { try? POSIX.close(fd) }
        var bytes = [UInt8](repeating: 0, count: 64)
        let count = (try? bytes.withUnsafeMutableBytes { buffer in try POSIX.read(fd, into: buffer) }) ?? 0
        guard let mark = mark(in: Data(bytes.prefix(count))) else { return false }
        return ProcessLiveness.isRunning(pid: mark.pid, start: mark.start)
    }

    /// "PID START" as written.
    private static func mark(in data: Data) -> (pid: Int32, start: UInt64)? {
        let words = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isWhitespace)
        guard words.count == 2, let pid = Int32(words[0]), let start = UInt64(words[1]) else { return nil }
        return (pid, start)
    }
}
