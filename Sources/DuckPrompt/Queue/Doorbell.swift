import Glibc

/// Wakes a playing prompt when a newer one asks it to stop, without polling: a FIFO in the
/// queue directory (`ticket-<seq>.bell`) that its owner holds open and waits on, and that the
/// newer prompt writes one byte to (`ring`) after writing the stop file.
///
/// Not inotify on the directory: closing an inotify descriptor that holds a watch waits for an
/// SRCU grace period, measured here at up to 15–20 ms, and the kernel does it at process exit
/// too: every prompt's exit came that much later (Docs/performance-notes.md).
///
/// The owner opens the FIFO read-write, so that opening it never blocks and `poll(2)` never
/// reports end-of-file; the descriptor is closed when the last reference goes (the waiting
/// thread may outlive the ticket). The name is removed by `Ticket.leave()`, or by
/// `PromptQueue.liveTickets()` once its ticket is gone.
///
/// Threading: one thread calls `wait`; any thread may call `wake`.
final class Doorbell: @unchecked Sendable {
    private let fd: Int32

    /// Creates the FIFO `name` in `directory` (mode 0600, replacing a stale one) and opens it.
    /// Nil when the file system refuses FIFOs: the owner then polls for stop files.
    /// `mkfifoat(3)`, `openat(2)` with `O_RDWR | O_NONBLOCK | O_NOFOLLOW`.
    init?(in directory: RuntimeDirectory, name: String) {
        directory.unlink(name)
        guard case .success = directory.makeFIFO(name, mode: 0o600) else { return nil }
        guard case .success(let fd) = directory.open(name, O_RDWR | O_NONBLOCK) else {
            directory.unlink(name)
            return nil
        }
        self.fd = fd
    }

    deinit { try? POSIX.close(fd) }

    /// Returns when the bell was rung or `wake()` was called since the last call (or since
    /// `init`), or after `timeoutMs`; drains what was written. `poll(2)`.
    /// - Returns: true when it was rung or woken, false on the timeout.
    @discardableResult
    func wait(timeoutMs: Int32) -> Bool {
        var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
        let ready = (try? POSIX.poll(&fds, until: .now + .milliseconds(timeoutMs))) ?? -1
        var buffer = [UInt8](repeating: 0, count: 64)
        while buffer.withUnsafeMutableBytes({ (try? POSIX.read(fd, into: $0)) ?? -1 }) > 0 {}
        return ready > 0
    }

    /// Makes the current or next `wait` return (the owner's own threads).
    func wake() {
        Self.ringOnce(fd)
    }

    /// Writes one byte to `fd`, without waiting: a full bell is rung already. `write(2)`.
    private static func ringOnce(_ fd: Int32) {
        _ = withUnsafeBytes(of: UInt8(1)) { try? POSIX.write(fd, $0) }
    }

    /// Rings another prompt's bell: one byte, without blocking. Best effort: a bell that is
    /// gone or full needs nothing more (its owner looks at the stop file within a second).
    /// `openat(2)` with `O_WRONLY | O_NONBLOCK | O_NOFOLLOW`; it must be a FIFO.
    static func ring(in directory: RuntimeDirectory, name: String) {
        guard case .success(let fd) = directory.open(name, O_WRONLY | O_NONBLOCK) else { return }
        defer { try? POSIX.close(fd) }
        guard let st = try? POSIX.fstat(fd), st.st_mode & S_IFMT == S_IFIFO else { return }
        ringOnce(fd)
    }
}
