import DuckPrompt
import Glibc

/// Lines from a descriptor (the server's pipe on standard input), each without its `\n`:
/// `read(2)` through the library's `POSIX.read`, bytes kept until their newline, decoded as
/// UTF-8 (a bad sequence as U+FFFD).
struct LineReader {
    private let fd: Int32
    private var pending: [UInt8] = []
    private var ended = false

    init(fd: Int32) { self.fd = fd }

    /// The next line; nil at the end of input (or a read error), where a last line without its
    /// newline is dropped, as module_readline drops it.
    mutating func next() -> String? {
        while true {
            if let nl = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<nl], as: UTF8.self)
                pending.removeSubrange(...nl)
                return line
            }
            guard !ended else { return nil }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let n = (try? chunk.withUnsafeMutableBytes { try POSIX.read(fd, into: $0) }) ?? 0
            if n <= 0 { ended = true } else { pending += chunk[..<n] }
        }
    }
}
