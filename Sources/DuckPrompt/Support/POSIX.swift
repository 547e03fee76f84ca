import CLinux
import FoundationEssentials
import Glibc

/// The library's POSIX calls on descriptors, paths and directories: one thin wrapper per C call,
/// named after it (after swift-system's `Internals/Syscalls.swift`). A call that fails throws
/// an `Errno` carrying `errno` and the call's name; a call that can be interrupted by a signal
/// is retried on `EINTR` here (`retryOnInterrupt`), the one place that does it. Callers turn an
/// `Errno` into their own message (`Errno.failure(_:)`, `BoundedFile.openFailure`,
/// `AudioSource`'s "no such file").
///
/// Not here: `close(2)` is never retried (Linux closes the descriptor even when it fails with
/// `EINTR`); calls that cannot fail the way these do (`getpid`, `geteuid`, `clock_gettime`,
/// string functions) are called directly.
///
/// Threading: every wrapper may be called from any thread; `errno` is per thread. The service's
/// bus loop and the lab's process waits use them too (`package`).
package enum POSIX {
    /// Opens `path`.
    /// - Parameters:
    ///   - flags: as given (`O_CLOEXEC` is the caller's to add).
    ///   - mode: the permissions of a file `O_CREAT` makes, before the umask.
    /// - Returns: the new descriptor, the caller's to close.
    /// - Throws: `Errno` ("open"). `open(2)`, retried on `EINTR`.
    static func open(_ path: String, _ flags: Int32, mode: mode_t = 0) throws(Errno) -> Int32 {
        try retryOnInterrupt("open") { Glibc.open(path, flags, mode) }
    }

    /// Opens `name` relative to the directory `directory`.
    /// - Returns: the new descriptor, the caller's to close.
    /// - Throws: `Errno` ("openat"). `openat(2)`, retried on `EINTR`.
    static func openat(_ directory: Int32, _ name: String, _ flags: Int32, mode: mode_t = 0) throws(Errno) -> Int32 {
        try retryOnInterrupt("openat") { Glibc.openat(directory, name, flags, mode) }
    }

    /// Closes `fd`. Not retried: the descriptor is closed even when this throws `EINTR`.
    /// - Throws: `Errno` ("close"). `close(2)`.
    static func close(_ fd: Int32) throws(Errno) {
        guard Glibc.close(fd) == 0 else { throw Errno.current("close") }
    }

    /// Reads into `buffer` from the descriptor's offset.
    /// - Returns: bytes read, 0 at the end.
    /// - Throws: `Errno` ("read"): `EAGAIN` on an empty non-blocking descriptor. `read(2)`,
    ///   retried on `EINTR`.
    package static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(Errno) -> Int {
        try retryOnInterrupt("read") { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }

    /// Writes `bytes` at the descriptor's offset.
    /// - Returns: bytes written, which may be fewer than `bytes.count`.
    /// - Throws: `Errno` ("write"). `write(2)`, retried on `EINTR`.
    static func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(Errno) -> Int {
        try retryOnInterrupt("write") { Glibc.write(fd, bytes.baseAddress, bytes.count) }
    }

    /// Reads into `buffer` from byte `offset`, the descriptor's offset untouched.
    /// - Returns: bytes read, 0 at the end.
    /// - Throws: `Errno` ("pread"). `pread(2)`, retried on `EINTR`.
    static func pread(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws(Errno) -> Int {
        try retryOnInterrupt("pread") { Glibc.pread(fd, buffer.baseAddress, buffer.count, off_t(offset)) }
    }

    /// Writes `bytes` at byte `offset`, the descriptor's offset untouched.
    /// - Returns: bytes written.
    /// - Throws: `Errno` ("pwrite"). `pwrite(2)`, retried on `EINTR`.
    static func pwrite(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int) throws(Errno) -> Int {
        try retryOnInterrupt("pwrite") { Glibc.pwrite(fd, bytes.baseAddress, bytes.count, off_t(offset)) }
    }

    /// The status of an open file: its type and mode (`st_mode`), size in bytes, owner.
    /// - Throws: `Errno` ("fstat"). `fstat(2)`, retried on `EINTR`.
    static func fstat(_ fd: Int32) throws(Errno) -> Glibc.stat {
        var status = Glibc.stat()
        try retryOnInterrupt("fstat") { Glibc.fstat(fd, &status) }
        return status
    }

    /// The status of `path` itself, a symbolic link not followed.
    /// - Throws: `Errno` ("lstat"). `lstat(2)`, retried on `EINTR`.
    static func lstat(_ path: String) throws(Errno) -> Glibc.stat {
        var status = Glibc.stat()
        try retryOnInterrupt("lstat") { Glibc.lstat(path, &status) }
        return status
    }

    /// The status of `path`, symbolic links followed.
    /// - Throws: `Errno` ("stat"): `ENOENT` when nothing is there. `stat(2)`, retried on `EINTR`.
    static func stat(_ path: String) throws(Errno) -> Glibc.stat {
        var status = Glibc.stat()
        try retryOnInterrupt("stat") { cStat(path, &status) }
        return status
    }

    /// A descriptor's flags, or another query without an argument (`F_GETFL`, `F_GETFD`).
    /// - Throws: `Errno` ("fcntl"). `fcntl(2)`, retried on `EINTR`.
    @discardableResult
    static func fcntl(_ fd: Int32, _ command: Int32) throws(Errno) -> Int32 {
        try retryOnInterrupt("fcntl") { Glibc.fcntl(fd, command) }
    }

    /// A command with an integer argument: `F_SETFL`, `F_SETFD`, `F_DUPFD_CLOEXEC` (which
    /// returns the new descriptor).
    /// - Throws: `Errno` ("fcntl"). `fcntl(2)`, retried on `EINTR`.
    @discardableResult
    static func fcntl(_ fd: Int32, _ command: Int32, _ argument: Int32) throws(Errno) -> Int32 {
        try retryOnInterrupt("fcntl") { Glibc.fcntl(fd, command, argument) }
    }

    /// Takes or drops an advisory lock on the whole file: `LOCK_SH`, `LOCK_EX`, `LOCK_UN`,
    /// with `LOCK_NB` not to wait.
    /// - Throws: `Errno` ("flock"): `.wouldBlock` when `LOCK_NB` finds it held. `flock(2)`,
    ///   retried on `EINTR` (a blocking lock waits again).
    static func flock(_ fd: Int32, _ operation: Int32) throws(Errno) {
        try retryOnInterrupt("flock") { cFlock(fd, operation) }
    }

    /// Cuts or extends an open file to `length` bytes.
    /// - Throws: `Errno` ("ftruncate"). `ftruncate(2)`, retried on `EINTR`.
    static func ftruncate(_ fd: Int32, _ length: Int) throws(Errno) {
        try retryOnInterrupt("ftruncate") { Glibc.ftruncate(fd, off_t(length)) }
    }

    /// Sets an open file's permission bits to `mode` exactly (no umask).
    /// - Throws: `Errno` ("fchmod"). `fchmod(2)`, retried on `EINTR`.
    static func fchmod(_ fd: Int32, _ mode: mode_t) throws(Errno) {
        try retryOnInterrupt("fchmod") { Glibc.fchmod(fd, mode) }
    }

    /// Flushes an open file (or directory's entries) to disk.
    /// - Throws: `Errno` ("fsync"). `fsync(2)`, retried on `EINTR`.
    static func fsync(_ fd: Int32) throws(Errno) {
        try retryOnInterrupt("fsync") { Glibc.fsync(fd) }
    }

    /// Creates the directory `path` with `mode` (before the umask).
    /// - Throws: `Errno` ("mkdir"): `.fileExists` when something is there. `mkdir(2)`,
    ///   retried on `EINTR`.
    static func mkdir(_ path: String, _ mode: mode_t) throws(Errno) {
        try retryOnInterrupt("mkdir") { Glibc.mkdir(path, mode) }
    }

    /// Removes `name` from the directory `directory` (a symbolic link itself, not its target).
    /// - Throws: `Errno` ("unlinkat"). `unlinkat(2)` without flags, retried on `EINTR`.
    static func unlinkat(_ directory: Int32, _ name: String) throws(Errno) {
        try retryOnInterrupt("unlinkat") { Glibc.unlinkat(directory, name, 0) }
    }

    /// Renames `name` to `newName`, both in the directory `directory`, atomically.
    /// - Throws: `Errno` ("renameat"). `renameat(2)`, retried on `EINTR`.
    static func renameat(_ directory: Int32, _ name: String, _ newName: String) throws(Errno) {
        try retryOnInterrupt("renameat") { Glibc.renameat(directory, name, directory, newName) }
    }

    /// Creates the FIFO `name` in the directory `directory` with `mode` (before the umask).
    /// - Throws: `Errno` ("mkfifoat"). `mkfifoat(3)`, retried on `EINTR`.
    static func mkfifoat(_ directory: Int32, _ name: String, _ mode: mode_t) throws(Errno) {
        try retryOnInterrupt("mkfifoat") { Glibc.mkfifoat(directory, name, mode) }
    }

    /// An anonymous file in memory (`memfd_create(2)` with `MFD_CLOEXEC`, through CLinux), to
    /// pass bytes held in memory to another process as a descriptor it can read to its end.
    /// - Returns: the descriptor, the caller's to close.
    /// - Throws: `Errno` ("memfd_create"), retried on `EINTR`.
    static func memfdCreate(_ name: String) throws(Errno) -> Int32 {
        try retryOnInterrupt("memfd_create") { duckprompt_memfd_create(name) }
    }

    /// A new pipe; both ends the caller's to close.
    /// - Throws: `Errno` ("pipe"): out of descriptors. `pipe(2)`, retried on `EINTR`.
    static func pipe() throws(Errno) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        try retryOnInterrupt("pipe") { Glibc.pipe(&fds) }
        return (fds[0], fds[1])
    }

    /// Waits until one of `fds` has an event (their `revents` set), or until `deadline`.
    /// - Parameter deadline: nil waits without end; one that passed does not wait.
    /// - Returns: how many descriptors have events, 0 when the time ran out.
    /// - Throws: `Errno` ("poll"). `poll(2)` with the milliseconds left to `deadline` (rounded
    ///   up), retried on `EINTR` with the time then left.
    package static func poll(_ fds: inout [pollfd], until deadline: ContinuousClock.Instant?) throws(Errno) -> Int32 {
        try retryOnInterrupt("poll") { () -> Int32 in
            var timeout: Int32 = -1
            if let deadline {
                let left = max(.zero, deadline - ContinuousClock.now)
                timeout = left.waitMilliseconds
            }
            return Glibc.poll(&fds, nfds_t(fds.count), timeout)
        }
    }

    /// A directory stream over the open directory `fd`, which it takes over (`closedir`
    /// closes both); `fd` stays the caller's when this throws.
    /// - Throws: `Errno` ("fdopendir"). `fdopendir(3)`.
    static func fdopendir(_ fd: Int32) throws(Errno) -> OpaquePointer {
        guard let stream = Glibc.fdopendir(fd) else { throw Errno.current("fdopendir") }
        return stream
    }

    /// A directory stream over `path`.
    /// - Throws: `Errno` ("opendir"). `opendir(3)`.
    static func opendir(_ path: String) throws(Errno) -> OpaquePointer {
        guard let stream = Glibc.opendir(path) else { throw Errno.current("opendir") }
        return stream
    }

    /// The next entry of a directory stream, nil at its end (valid until the next call).
    /// - Throws: `Errno` ("readdir"). `readdir(3)`, which returns nil both at the end and on
    ///   an error; only an error sets `errno`.
    static func readdir(_ stream: OpaquePointer) throws(Errno) -> UnsafeMutablePointer<dirent>? {
        errno = 0
        guard let entry = Glibc.readdir(stream) else {
            if errno != 0 { throw Errno.current("readdir") }
            return nil
        }
        return entry
    }

    /// Closes a directory stream and its descriptor. `closedir(3)`; a failure is ignored.
    static func closedir(_ stream: OpaquePointer) {
        _ = Glibc.closedir(stream)
    }

    /// The name of a directory entry (`d_name`).
    static func name(of entry: UnsafeMutablePointer<dirent>) -> String {
        withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }

    /// Waits for the child `pid` to end and reaps it.
    /// - Returns: its status as `waitpid(2)` reports it (`WIFEXITED`…).
    /// - Throws: `Errno` ("waitpid"): `ECHILD` when it is no child (or already reaped).
    ///   `waitpid(2)` with no options, retried on `EINTR`.
    package static func waitpid(_ pid: pid_t) throws(Errno) -> Int32 {
        var status: Int32 = 0
        try retryOnInterrupt("waitpid") { Glibc.waitpid(pid, &status, 0) }
        return status
    }

    /// Waits for the child `pid` to end and reaps it, with the resources it used.
    /// - Returns: its status as `wait4(2)` reports it, and its `rusage` (CPU time, peak RSS).
    /// - Throws: `Errno` ("wait4"). `wait4(2)` with no options, retried on `EINTR`.
    package static func wait4(_ pid: pid_t) throws(Errno) -> (status: Int32, usage: rusage) {
        var status: Int32 = 0
        var usage = rusage()
        try retryOnInterrupt("wait4") { Glibc.wait4(pid, &status, 0, &usage) }
        return (status, usage)
    }

    /// Blocks the calling thread for `duration`; nothing for a duration ≤ 0.
    /// `nanosleep(2)`, resumed after a signal with the time left.
    static func nanosleep(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        guard seconds > 0 || (seconds == 0 && attoseconds > 0) else { return }
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while Glibc.nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }

    /// Asks the kernel to send `signal` to this process when the thread that created it (its
    /// parent's) exits.
    /// - Throws: `Errno` ("prctl"). `prctl(2)` `PR_SET_PDEATHSIG` (through `CLinux`: prctl is
    ///   variadic).
    static func setParentDeathSignal(_ signal: Int32) throws(Errno) {
        try retryOnInterrupt("prctl") { duckprompt_set_parent_death_signal(signal) }
    }

    /// Calls `call` until it does not fail with `EINTR`: the one loop of the library that
    /// retries an interrupted call.
    /// - Returns: the call's result (≥ 0).
    /// - Throws: the `errno` it failed with, named `name`.
    @discardableResult
    private static func retryOnInterrupt<T: SignedInteger>(_ name: StaticString, _ call: () -> T) throws(Errno) -> T {
        while true {
            let result = call()
            if result >= 0 { return result }
            let err = Errno.current(name)
            if err != .interrupted { throw err }
        }
    }
}

/// The error number of a failed C call (`errno`), with the call's name and Swift names for the
/// numbers callers tell apart. Two are equal when their numbers are (`.failure(.fileExists)`
/// matches whichever call failed).
package struct Errno: Error, Equatable, Sendable, CustomStringConvertible {
    package var rawValue: Int32
    /// The C call that failed (`openat`), empty when not told.
    package var call: String

    init(_ rawValue: Int32, call: String = "") {
        self.rawValue = rawValue
        self.call = call
    }

    /// The calling thread's `errno` now.
    static var current: Errno { Errno(errno) }

    /// The calling thread's `errno` now, from the call `name`.
    static func current(_ name: StaticString) -> Errno { Errno(errno, call: "\(name)") }

    package static func == (a: Errno, b: Errno) -> Bool { a.rawValue == b.rawValue }

    /// `EINTR`.
    static let interrupted = Errno(EINTR)
    /// `ENOENT`.
    static let noSuchFileOrDirectory = Errno(ENOENT)
    /// `EEXIST`.
    static let fileExists = Errno(EEXIST)
    /// `ELOOP`: what `O_NOFOLLOW` fails with on a symbolic link.
    static let tooManySymbolicLinkLevels = Errno(ELOOP)
    /// `EWOULDBLOCK` (`EAGAIN`): a non-blocking lock held by another, an empty non-blocking
    /// descriptor.
    static let wouldBlock = Errno(EWOULDBLOCK)

    /// `strerror(3)`'s text: "No such file or directory".
    package var description: String { String(cString: strerror(rawValue)) }

    /// `DuckPromptError(.internal)`: "`what`: `strerror`", e.g. "cannot lock /run/user/1000/
    /// duckprompt/lock: Bad file descriptor".
    func failure(_ what: String) -> DuckPromptError {
        DuckPromptError(.internal, "\(what): \(description)")
    }
}

extension Result where Failure == Errno {
    /// The value, or `DuckPromptError(.internal)` "`what`: `strerror`" (`Errno.failure`).
    @discardableResult
    func orThrow(_ what: @autoclosure () -> String) throws(DuckPromptError) -> Success {
        switch self {
        case .success(let value): return value
        case .failure(let err): throw err.failure(what())
        }
    }
}

/// `call`'s value, or `DuckPromptError(.internal)` "`what`: `strerror`" when it throws
/// (`Errno.failure`): `try orThrow("cannot stat \(path)", POSIX.fstat(fd))`.
@discardableResult
func orThrow<T>(_ what: @autoclosure () -> String, _ call: @autoclosure () throws(Errno) -> T) throws(DuckPromptError) -> T {
    do { return try call() } catch { throw error.failure(what()) }
}

// The C functions whose names are also types' (`struct stat`, `struct flock`): named at file
// scope, where the call resolves to the function.
private func cStat(_ path: String, _ status: inout stat) -> Int32 { stat(path, &status) }
private func cFlock(_ fd: Int32, _ operation: Int32) -> Int32 { flock(fd, operation) }
