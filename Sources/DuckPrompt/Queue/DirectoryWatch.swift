import Glibc

/// Blocks a thread until a file appears in a directory, so that a playing prompt learns of a
/// stop request at once without polling: inotify (`IN_CREATE`, `IN_MOVED_TO`) plus a pipe that
/// `wake()` writes to.
///
/// Threading: one thread calls `wait`; any thread may call `wake`.
final class DirectoryWatch: @unchecked Sendable {
    private let inotifyFD: Int32
    private let wakeRead: Int32
    private let wakeWrite: Int32

    /// Nil when inotify or a pipe is not available (the caller polls instead).
    /// `inotify_init1(2)`, `inotify_add_watch(2)`, `pipe(2)`.
    init?(path: String) {
        let fd = inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK))
        guard fd >= 0 else { return nil }
        guard inotify_add_watch(fd, path, UInt32(IN_CREATE | IN_MOVED_TO)) >= 0 else {
            close(fd)
            return nil
        }
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            close(fd)
            return nil
        }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        inotifyFD = fd
        wakeRead = ends[0]
        wakeWrite = ends[1]
    }

    deinit {
        close(inotifyFD)
        close(wakeRead)
        close(wakeWrite)
    }

    /// Returns when a file was created in or moved into the directory since the last call (or
    /// since `init`), `wake()` was called, or `timeoutMs` passed. `poll(2)`.
    func wait(timeoutMs: Int32) {
        var fds = [pollfd(fd: inotifyFD, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
        _ = poll(&fds, 2, timeoutMs)
        var buffer = [UInt8](repeating: 0, count: 4096)
        for fd in [inotifyFD, wakeRead] {
            while buffer.withUnsafeMutableBytes({ read(fd, $0.baseAddress, $0.count) }) > 0 {}
        }
    }

    /// Makes the current or next `wait` return.
    func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }
}
