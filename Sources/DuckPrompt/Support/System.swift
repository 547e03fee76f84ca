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
    POSIX.nanosleep(duration)
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

/// The process's standard error, unbuffered (`write(2)`).
package enum StandardStreams {
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
                let n = (try? POSIX.write(fd, UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[offset...])))) ?? -1
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

    /// Every variable (`environ`), for a process that passes the environment on (`lab`).
    package static var all: [String: String] {
        var found: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let eq = text.firstIndex(of: "=") {
                found[String(text[..<eq])] = String(text[text.index(after: eq)...])
            }
            entry += 1
        }
        return found
    }
}

/// The process's file descriptors: how many are open and how many may be.
package enum Descriptors {
    /// The descriptors open now: the entries of `/proc/self/fd` (`opendir`, `readdir`), the
    /// directory's own not counted; nil when it cannot be read (which may itself mean none is
    /// left).
    package static func openCount() -> Int? {
        guard let directory = try? POSIX.opendir("/proc/self/fd") else { return nil }
        defer { POSIX.closedir(directory) }
        var count = 0
        while let entry = try? POSIX.readdir(directory) {
            let name = POSIX.name(of: entry)
            if name != "." && name != ".." { count += 1 }
        }
        return count - 1
    }

    /// The most descriptors the process may have open: `RLIMIT_NOFILE`'s soft limit
    /// (`getrlimit`); nil when unlimited or unreadable.
    package static func limit() -> Int? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return nil }
        return Int(clamping: limit.rlim_cur)
    }
}

/// glibc's `mallopt(3)` (in `<malloc.h>`, which the Glibc module does not import).
@_silgen_name("mallopt")
private func mallocOption(_ parameter: Int32, _ value: Int32) -> Int32

/// Has glibc map every allocation of 128 KiB or more on its own and unmap it when freed
/// (`mallopt(M_MMAP_THRESHOLD, 131072)`, which also ends the threshold's growth): by default
/// the threshold rises to the largest block freed (up to 32 MiB), and later blocks that size
/// stay in the heap once freed, so a long-lived process keeps the most memory any input ever
/// needed (`duckprompt serve`: 22 MB grew to 55 MB after three 64 MiB descriptors it read and
/// refused, and stayed there).
package func unmapLargeAllocationsWhenFreed() {
    _ = mallocOption(-3 /* M_MMAP_THRESHOLD */, 128 * 1024)
}
