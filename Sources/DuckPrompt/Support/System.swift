import FoundationEssentials
import Glibc

// The few things the library took from Foundation proper (NSLock, Thread, FileHandle,
// String(format:), trimmingCharacters), over POSIX and the standard library, so that the
// library, the CLI and the executable need only FoundationEssentials: Foundation and its ICU
// cost every prompt about 10 MB of RSS and several ms of start-up (Docs/performance.md).

/// A mutual-exclusion lock (`pthread_mutex_t`, default attributes: not recursive), used as
/// `NSLock` was.
package final class Lock: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    package init() { pthread_mutex_init(mutex, nil) }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    package func lock() { pthread_mutex_lock(mutex) }
    package func unlock() { pthread_mutex_unlock(mutex) }

    package func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// Runs `body` on a new detached thread (`pthread_create`), as `Thread.start()` did; for
/// blocking work (libpulse waits, file locks) that must not hold a Swift concurrency thread.
package func startThread(_ body: @escaping @Sendable () -> Void) {
    final class Start {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    let start = Unmanaged.passRetained(Start(body)).toOpaque()
    var thread = pthread_t()
    let result = pthread_create(&thread, nil, { argument in
        Unmanaged<Start>.fromOpaque(argument!).takeRetainedValue().body()
        return nil
    }, start)
    precondition(result == 0, "pthread_create failed: \(result)")
    pthread_detach(thread)
}

/// Blocks the calling thread for `duration` (`nanosleep`, resumed after signals); nothing for
/// a duration ≤ 0.
package func sleepThread(for duration: Duration) {
    let (seconds, attoseconds) = duration.components
    guard seconds > 0 || (seconds == 0 && attoseconds > 0) else { return }
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
}

/// `printf`-style formatting (`vsnprintf`, the C locale's decimal point), as
/// `String(format:)` did: `formatted("%.1f", 2.25)` is `"2.2"`.
package func formatted(_ format: String, _ arguments: CVarArg...) -> String {
    withVaList(arguments) { list in
        var buffer = [CChar](repeating: 0, count: 128)
        // vsnprintf consumes the va_list: a second pass needs a fresh one.
        let needed = Int(vsnprintf(&buffer, buffer.count, format, list))
        if needed < buffer.count { return String(decoding: buffer.prefix(needed).map { UInt8(bitPattern: $0) }, as: UTF8.self) }
        return withVaList(arguments) { again in
            var large = [CChar](repeating: 0, count: needed + 1)
            _ = vsnprintf(&large, large.count, format, again)
            return String(decoding: large.prefix(needed).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }
}

extension StringProtocol {
    /// Without leading and trailing white space and newlines (`Character.isWhitespace`).
    package func trimmingWhitespace() -> SubSequence {
        trimming { $0.isWhitespace }
    }

    /// Without the leading and trailing characters for which `isTrimmed` holds.
    package func trimming(_ isTrimmed: (Character) -> Bool) -> SubSequence {
        guard let first = firstIndex(where: { !isTrimmed($0) }),
              let last = lastIndex(where: { !isTrimmed($0) }) else { return self[endIndex...] }
        return self[first...last]
    }
}

/// The process's standard input and error, unbuffered (`read(2)`, `write(2)`).
package enum StandardStreams {
    /// All of standard input, to its end. Throws `.noInput` (66) when it cannot be read.
    package static func readInput() throws -> [UInt8] {
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
            if n == 0 { return data }
            if n < 0 {
                if errno == EINTR { continue }
                throw DuckPromptError(.noInput, "standard input: \(String(cString: strerror(errno)))")
            }
            data.append(contentsOf: chunk[0..<n])
        }
    }

    /// Writes `text` to standard error as it is (no newline added).
    package static func writeError(_ text: String) {
        write(STDERR_FILENO, text)
    }

    /// Writes `text` to standard output as it is (no newline added).
    package static func writeOutput(_ text: String) {
        write(STDOUT_FILENO, text)
    }

    private static func write(_ fd: Int32, _ text: String) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return }
                offset += n
            }
        }
    }
}

/// Reads of the process environment with `getenv(3)`. `ProcessInfo.processInfo.environment`
/// copies every variable into a new dictionary on each call (0.1 ms each, four times on a
/// prompt's path); these read only the names asked for.
@usableFromInline package enum Environment {
    /// The variable's value, or nil when it is not set.
    @usableFromInline package static func value(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// The named variables that are set, as a dictionary (for the `environment:` parameters
    /// that tests fill by hand).
    @usableFromInline package static func values(_ names: String...) -> [String: String] {
        var found: [String: String] = [:]
        for name in names { found[name] = value(name) }
        return found
    }
}

/// A descriptor that becomes readable once `signal()` was called (a self-pipe, `pipe`): a
/// `poll` on it and on an input is cut short from another thread (a signal's thread).
package final class WakePipe: @unchecked Sendable {
    private let ends: (read: Int32, write: Int32)

    /// - Returns: nil when no pipe can be made (`pipe` failed: out of descriptors).
    /// Both ends close on exec; the write end does not block (a full pipe is readable anyway).
    package init?() {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return nil }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(fds[1], F_SETFL, O_NONBLOCK)
        ends = (fds[0], fds[1])
    }

    deinit {
        close(ends.read)
        close(ends.write)
    }

    /// The end to `poll` for `POLLIN`.
    package var descriptor: Int32 { ends.read }

    /// Makes `descriptor` readable (one byte, never read back: it stays readable).
    package func signal() {
        var byte: UInt8 = 1
        _ = write(ends.write, &byte, 1)
    }
}

/// Input that may never end (a FIFO no one writes, a terminal, a pipe whose writer never
/// closes), read so that a cancellation stops the wait at once.
package enum WaitingInput {
    /// Opens `path`, a FIFO or a character device, for reading without waiting for a writer:
    /// `open(O_RDONLY | O_NONBLOCK)` returns at once on a FIFO that has none, where a
    /// blocking `open` would wait for one, deaf to signals the process blocks.
    /// - Throws: `.noInput` (66) naming the file and `strerror`.
    package static func open(_ path: String) throws -> Int32 {
        while true {
            let fd = Glibc.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            if fd >= 0 { return fd }
            if errno == EINTR { continue }
            throw DuckPromptError(.noInput, "\(path): \(String(cString: strerror(errno)))")
        }
    }

    /// Reads `fd` to its end (a FIFO: until its last writer closes it), waiting with `poll`
    /// on it and on `wake`.
    /// - Parameters:
    ///   - label: names the input in messages (`standard input`, the path).
    ///   - wake: a descriptor that becomes readable to stop the wait (`WakePipe`); nil waits
    ///     for the input alone.
    ///   - limit: the most bytes kept; one more is an error.
    /// - Throws: `CancellationError` once `wake` is readable (before or during the wait);
    ///   `.noInput` (66) when `read` fails; `.unsupportedData` (65) past `limit` bytes.
    /// A FIFO that no writer opened yet reads as not ready (Linux reports `POLLHUP` only
    /// after a writer came and went), so the wait lasts until a writer writes or a
    /// cancellation comes. `O_NONBLOCK` is never set here: standard input's file status is
    /// shared with the shell.
    package static func readAll(_ fd: Int32, label: String, wake: Int32?, limit: Int) throws -> [UInt8] {
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: wake ?? -1, events: Int16(POLLIN), revents: 0)]
        while true {
            fds[0].revents = 0
            fds[1].revents = 0
            let ready = poll(&fds, nfds_t(fds.count), -1)
            if ready < 0 {
                if errno == EINTR { continue }
                throw DuckPromptError(.noInput, "\(label): \(String(cString: strerror(errno)))")
            }
            if fds[1].revents != 0 { throw CancellationError() }
            guard fds[0].revents != 0 else { continue }
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n == 0 { return data }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw DuckPromptError(.noInput, "\(label): \(String(cString: strerror(errno)))")
            }
            guard data.count + n <= limit else {
                throw DuckPromptError(.unsupportedData,
                    "\(label): longer than \(limit >> 20) MiB, the most read from a pipe or device (give a file by name)")
            }
            data.append(contentsOf: chunk[0..<n])
        }
    }
}

/// Reads up to `count` bytes of the file at `path` from `offset` (`open`, `pread`): the head
/// of a file whose header libsndfile does not report. Empty when it cannot be read.
package func readBytes(of path: String, at offset: Int, count: Int) -> [UInt8] {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return [] }
    defer { close(fd) }
    var bytes = [UInt8](repeating: 0, count: count)
    var filled = 0
    while filled < count {
        let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + filled, count - filled, off_t(offset + filled)) }
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { break }
        filled += n
    }
    return Array(bytes[0..<filled])
}
