import FoundationEssentials
import Glibc

/// One duck at a time per user: an exclusive `flock(2)` on `lock` in the journal directory
/// (`RuntimeDirectory`). Concurrent duckprompt processes serialize on it, so a stream is
/// never ducked by two prompts at once and restored to a ducked level.
///
/// The kernel drops the lock when its holder dies, `kill -9` included: a dead prompt never
/// blocks the next one (its journal is then found by `JournalStore.orphans`). The file is
/// never deleted (deleting a file others wait on would let two holders lock different inodes);
/// while held it contains the holder's pid, for messages.
///
/// Threading: `release()` may be called from any thread, once or more; `deinit` releases.
/// The lock belongs to the open file, not the thread: two `RuntimeLock`s of one process exclude
/// each other too.
package final class RuntimeLock: @unchecked Sendable {
    /// The lock file, e.g. `/run/user/1000/duckprompt/lock`.
    package let path: String
    private let mutex = Lock()
    /// The open lock file; -1 once released.
    private var fd: Int32
    /// Whether `fd` holds the lock (a look that found it taken holds nothing to undo).
    private var held = false
    private let directory: RuntimeDirectory

    private init(fd: Int32, path: String, directory: RuntimeDirectory) {
        self.fd = fd
        self.path = path
        self.directory = directory
    }

    deinit { release() }

    /// The name of the lock file in the journal directory.
    package static let fileName = "lock"

    /// Takes the lock, waiting while another process holds it. Polls every 10 ms so that it
    /// notices cancellation and the timeout; blocks the calling thread meanwhile (see the
    /// `async` variant for tasks).
    ///
    /// - Parameters:
    ///   - directory: the runtime directory that holds the lock file.
    ///   - timeout: the longest wait; nil waits for as long as it takes; zero tries once.
    ///   - cancelled: polled before every attempt; true stops the wait.
    /// - Returns: the held lock; `release()` it (or drop it) when the duck is undone.
    /// - Throws: `DuckPromptError(.unavailable)` on timeout ("another duckprompt prompt is still
    ///   playing …", with the holder's pid when known); `CancellationError` when cancelled;
    ///   `DuckPromptError(.internal)` naming the file when it cannot be opened or locked.
    /// `openat(2)` with `O_CREAT|O_NOFOLLOW|O_RDWR|O_CLOEXEC` (0600), `flock(2)`
    /// `LOCK_EX|LOCK_NB`.
    package static func acquire(in directory: RuntimeDirectory, timeout: Duration?,
                               cancelled: () -> Bool = { false }) throws -> RuntimeLock {
        let lock = try open(in: directory)
        let start = ContinuousClock.now
        // Made before the first look: a release after it rings it.
        let bell = WaiterBell(in: directory)
        while true {
            if cancelled() { throw CancellationError() }
            if try lock.tryLock() { return lock }
            let waited = start.duration(to: .now)
            if let timeout, waited >= timeout { throw lock.busy(waited: waited) }
            bell.wait(until: timeout.map { start + $0 })
        }
    }

    /// Takes the lock if no one holds it.
    /// - Returns: the held lock, or nil when another holder has it.
    /// - Throws: `DuckPromptError(.internal)` naming the file when it cannot be opened or
    ///   locked. `flock(2)` `LOCK_EX|LOCK_NB`.
    package static func tryAcquire(in directory: RuntimeDirectory) throws -> RuntimeLock? {
        let lock = try open(in: directory)
        return try lock.tryLock() ? lock : nil
    }

    /// Whether this object still holds the lock.
    package var isHeld: Bool {
        mutex.lock()
        defer { mutex.unlock() }
        return fd >= 0
    }

    /// Releases the lock (empties the file, unlocks, closes it) and rings the queue's waiters
    /// (`WaiterBell.ringAll`). Idempotent; an object that never held the lock only closes its
    /// file. `flock(2)` `LOCK_UN`, `close(2)`.
    package func release() {
        let wasHeld = mutex.withLock { () -> Bool in
            guard fd >= 0 else { return false }
            let wasHeld = held
            if held {
                try? POSIX.ftruncate(fd, 0)
                try? POSIX.flock(fd, LOCK_UN)
            }
            try? POSIX.close(fd)
            fd = -1
            held = false
            return wasHeld
        }
        if wasHeld { WaiterBell.ringAll(in: directory) }
    }

    // MARK: - Internals

    /// Opens (creating) the lock file; the returned object does not hold the lock yet.
    private static func open(in directory: RuntimeDirectory) throws -> RuntimeLock {
        let path = directory.path(of: fileName)
        let fd: Int32
        switch directory.open(fileName, O_CREAT | O_RDWR, mode: 0o600) {
        case .success(let opened): fd = opened
        case .failure(.tooManySymbolicLinkLevels):
            throw DuckPromptError(.internal, "refusing the lock file \(path): it is a symbolic link")
        case .failure(let err): throw err.failure("cannot open the lock file \(path)")
        }
        guard let st = try? POSIX.fstat(fd), st.st_mode & S_IFMT == S_IFREG else {
            try? POSIX.close(fd)
            throw DuckPromptError(.internal, "refusing the lock file \(path): it is not a regular file")
        }
        return RuntimeLock(fd: fd, path: path, directory: directory)
    }

    /// One `flock(LOCK_EX|LOCK_NB)`; on success, writes our pid into the file.
    private func tryLock() throws -> Bool {
        mutex.lock()
        defer { mutex.unlock() }
        precondition(fd >= 0, "RuntimeLock used after release")
        do throws(Errno) { try POSIX.flock(fd, LOCK_EX | LOCK_NB) } catch .wouldBlock { return false } catch {
            throw error.failure("cannot lock \(path)")
        }
        held = true
        let text = Array("\(getpid())\n".utf8)
        _ = text.withUnsafeBytes { try? POSIX.pwrite(fd, $0, at: 0) }
        try? POSIX.ftruncate(fd, text.count)  // after the write: see `Ticket.write(playing:)`
        return true
    }

    /// The holder's pid as written in the file, if it names a live process.
    private func holder() -> Int32? {
        mutex.lock()
        defer { mutex.unlock() }
        var buffer = [UInt8](repeating: 0, count: 32)
        let n = buffer.withUnsafeMutableBytes { (try? POSIX.pread(fd, into: $0, at: 0)) ?? -1 }
        guard n > 0, let text = String(bytes: buffer[0..<n], encoding: .utf8),
              let pid = Int32(text.trimmingWhitespace()), pid > 0,
              ProcessLiveness.exists(pid) else { return nil }
        return pid
    }

    private func busy(waited: Duration) -> DuckPromptError {
        let who = holder().map { " (pid \($0) holds \(path))" } ?? " (\(path) is locked)"
        let secs = Self.seconds(waited)
        let after = secs < 0.05 ? "" : formatted("; gave up after %.1f s", secs)
        return DuckPromptError(.unavailable, "another duckprompt prompt is still playing\(who)\(after)")
    }

    private static func seconds(_ d: Duration) -> Double {
        let (s, atto) = d.components
        return Double(s) + Double(atto) * 1e-18
    }
}
