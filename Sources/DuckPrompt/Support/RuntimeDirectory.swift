import FoundationEssentials
import Glibc

/// The per-user directory that holds the duck journals, the prompt queue and the runtime lock:
/// `$XDG_RUNTIME_DIR/duckprompt/`, or `/tmp/duckprompt-<uid>/` without an (absolute)
/// `XDG_RUNTIME_DIR`. Created mode 0700 when missing; refused when it is a symbolic link, not a
/// directory, not owned by the effective uid, or writable by group or others.
///
/// The directory is opened once (`O_DIRECTORY|O_NOFOLLOW`) and every file is reached relative
/// to that descriptor, through the wrappers below (one per C call), so swapping the path for a
/// link later changes nothing. Files are opened with `O_NOFOLLOW`: a symbolic link is never
/// followed. Failed calls return an `Errno`; `Errno.failure(_:)` turns one into
/// `DuckPromptError(.internal)` with `strerror`'s text. `EINTR` is retried in one place
/// (`retryOnInterrupt`).
///
/// Threading: immutable; methods may be called from any thread.
package final class RuntimeDirectory: Sendable {
    /// The directory, e.g. `/run/user/1000/duckprompt`.
    package let path: String
    /// The open directory.
    private let descriptor: Int32

    /// Opens the directory of the environment's `XDG_RUNTIME_DIR` (see `init(runtimeDir:)`).
    package convenience init(environment: [String: String] = Environment.values("XDG_RUNTIME_DIR")) throws {
        try self.init(runtimeDir: environment["XDG_RUNTIME_DIR"])
    }

    /// Opens, creating it if missing, the `duckprompt` directory under `runtimeDir`.
    ///
    /// - Parameter runtimeDir: an `XDG_RUNTIME_DIR`; nil, empty or relative uses
    ///   `/tmp/duckprompt-<uid>`. `runtimeDir` itself must exist: only the `duckprompt`
    ///   directory inside it is created.
    /// - Throws: `DuckPromptError(.internal)` naming the path when it cannot be created or
    ///   opened, or is a symbolic link, not a directory, owned by another uid, or group- or
    ///   other-writable.
    /// `mkdir(2)`, `open(2)` with `O_DIRECTORY|O_NOFOLLOW`, `fstat(2)`, `fchmod(2)`.
    package init(runtimeDir: String?) throws {
        let path = Self.path(runtimeDir: runtimeDir)
        self.path = path
        let created = mkdir(path, 0o700) == 0
        if !created, errno != EEXIST {
            throw Errno.current.failure("cannot create the journal directory \(path)")
        }
        let fd = Glibc.open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            let err = Errno.current
            var st = stat()
            if lstat(path, &st) == 0 {
                if st.st_mode & S_IFMT == S_IFLNK {
                    throw DuckPromptError(.internal, "refusing the journal directory \(path): it is a symbolic link")
                }
                if st.st_mode & S_IFMT != S_IFDIR {
                    throw DuckPromptError(.internal, "refusing the journal directory \(path): it is not a directory")
                }
            }
            throw err.failure("cannot open the journal directory \(path)")
        }
        do {
            var st = stat()
            guard fstat(fd, &st) == 0 else { throw Errno.current.failure("cannot stat \(path)") }
            guard st.st_mode & S_IFMT == S_IFDIR else {
                throw DuckPromptError(.internal, "refusing the journal directory \(path): it is not a directory")
            }
            guard st.st_uid == geteuid() else {
                throw DuckPromptError(.internal, "refusing the journal directory \(path): it belongs to uid \(st.st_uid), not \(geteuid())")
            }
            if created, fchmod(fd, 0o700) != 0 { throw Errno.current.failure("cannot set mode 0700 on \(path)") }
            if !created, st.st_mode & 0o022 != 0 {
                throw DuckPromptError(.internal, "refusing the journal directory \(path): group or others may write to it (mode \(String(st.st_mode & 0o7777, radix: 8)); chmod 700 it)")
            }
        } catch {
            close(fd)
            throw error
        }
        descriptor = fd
    }

    deinit { close(descriptor) }

    /// `$XDG_RUNTIME_DIR/duckprompt` for an absolute `runtimeDir`, else `/tmp/duckprompt-<uid>`.
    package static func path(runtimeDir: String?) -> String {
        if let dir = runtimeDir, dir.hasPrefix("/") {
            var d = dir
            while d.count > 1, d.hasSuffix("/") { d.removeLast() }
            return d == "/" ? "/duckprompt" : d + "/duckprompt"
        }
        return "/tmp/duckprompt-\(geteuid())"
    }

    /// The path of `name` in the directory, for messages.
    func path(of name: String) -> String { path + "/" + name }

    // MARK: - One wrapper per call

    /// Opens `name` in the directory, never following a symbolic link (it fails with
    /// `.tooManySymbolicLinkLevels`), closed on exec.
    /// - Parameters:
    ///   - flags: `O_RDONLY`, `O_CREAT | O_EXCL | O_RDWR` …; `O_NOFOLLOW | O_CLOEXEC` are added.
    ///   - mode: the permissions of a file `O_CREAT` makes, before the umask.
    /// - Returns: the new descriptor, the caller's to close.
    /// `openat(2)` with `O_NOFOLLOW | O_CLOEXEC`.
    func open(_ name: String, _ flags: Int32, mode: mode_t = 0o600) -> Result<Int32, Errno> {
        retryOnInterrupt { openat(descriptor, name, flags | O_NOFOLLOW | O_CLOEXEC, mode) }
    }

    /// Removes `name` from the directory (a symbolic link itself, never its target).
    /// `unlinkat(2)`.
    @discardableResult
    func unlink(_ name: String) -> Result<Void, Errno> {
        retryOnInterrupt { unlinkat(descriptor, name, 0) }.map { _ in }
    }

    /// Renames `name` to `newName` in the directory, atomically, replacing what is at
    /// `newName` (a symbolic link there is replaced, not followed). `renameat(2)`.
    func rename(_ name: String, to newName: String) -> Result<Void, Errno> {
        retryOnInterrupt { renameat(descriptor, name, descriptor, newName) }.map { _ in }
    }

    /// Creates the FIFO `name` in the directory with `mode` (before the umask). `mkfifoat(3)`.
    func makeFIFO(_ name: String, mode: mode_t) -> Result<Void, Errno> {
        retryOnInterrupt { mkfifoat(descriptor, name, mode) }.map { _ in }
    }

    /// Flushes the directory's entries to disk: a rename survives a crash once this returns.
    /// `fsync(2)` of the directory.
    @discardableResult
    func sync() -> Result<Void, Errno> {
        retryOnInterrupt { fsync(descriptor) }.map { _ in }
    }

    /// The names in the directory but `.` and `..`, read through a new descriptor of the same
    /// directory (so that reads from two threads do not share an offset).
    /// - Throws: `DuckPromptError(.internal)` "cannot list …" naming the directory.
    /// `openat(2)` of `.` with `O_DIRECTORY`, `fdopendir(3)`, `readdir(3)`.
    func names() throws -> [String] {
        let opened = retryOnInterrupt { openat(descriptor, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        let fd = try opened.orThrow("cannot list \(path)")
        guard let dir = fdopendir(fd) else {
            let err = Errno.current
            close(fd)
            throw err.failure("cannot list \(path)")
        }
        defer { closedir(dir) }
        var names: [String] = []
        while true {
            // readdir returns nil at the end and on an error; only an error sets errno.
            errno = 0
            guard let entry = readdir(dir) else {
                if errno != 0 { throw Errno.current.failure("cannot list \(path)") }
                return names
            }
            let name = withUnsafePointer(to: &entry.pointee.d_name) {
                String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
            }
            if name != ".", name != ".." { names.append(name) }
        }
    }

    /// The bytes of `name`, a regular file of at most `limit` bytes (`BoundedFile`), opened
    /// without following a symbolic link (a link fails as `.notRegularFile`, "is a symbolic
    /// link; not followed"), nor blocking on a FIFO, nor taking a terminal.
    /// `openat(2)` with `O_RDONLY | O_NONBLOCK | O_NOCTTY`, `BoundedFile.read(descriptor:)`.
    func read(_ name: String, limit: Int) -> Result<Data, FileReadError> {
        let fd: Int32
        switch open(name, O_RDONLY | O_NONBLOCK | O_NOCTTY) {
        case .success(let opened): fd = opened
        case .failure(.noSuchFileOrDirectory):
            return .failure(FileReadError(kind: .missing, reason: "no such file"))
        case .failure(.tooManySymbolicLinkLevels):
            return .failure(FileReadError(kind: .notRegularFile, reason: "is a symbolic link; not followed"))
        case .failure(let err): return .failure(BoundedFile.openFailure(err.rawValue))
        }
        defer { close(fd) }
        return Result { () throws(FileReadError) in
            try BoundedFile.read(descriptor: fd, limit: limit, accept: .regularFiles)
        }
    }

    /// Writes `data` as `name`, atomically: a new temporary file in the directory,
    /// `.<name>.<random hex>.tmp` (`O_CREAT|O_EXCL`, mode exactly 0600), written in full,
    /// `fsync`ed, then renamed over `name` (a rename replaces a symbolic link at that name, it
    /// does not follow it), and the directory `fsync`ed. Readers see the old file or the new
    /// one, never a part.
    /// - Throws: `DuckPromptError(.internal)` naming the file when a step fails; the temporary
    ///   file is removed then.
    /// `openat(2)`, `fchmod(2)`, `write(2)`, `fsync(2)`, `close(2)`, `renameat(2)`.
    func writeAtomically(_ data: Data, as name: String) throws {
        var temp = ""
        var opened: Result<Int32, Errno> = .failure(.fileExists)
        for _ in 0..<64 {
            temp = ".\(name).\(String(UInt32.random(in: 0...UInt32.max), radix: 16)).tmp"
            opened = open(temp, O_CREAT | O_EXCL | O_WRONLY, mode: 0o600)
            if case .failure(.fileExists) = opened { continue }
            break
        }
        var fd = try opened.orThrow("cannot create a temporary file in \(path)")
        var renamed = false
        defer {
            if fd >= 0 { close(fd) }
            if !renamed { unlink(temp) }
        }
        // The mode given to openat is masked by the umask; make it exactly 0600.
        try retryOnInterrupt { fchmod(fd, 0o600) }.orThrow("cannot set mode 0600 on \(path(of: temp))")
        try data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
            var offset = 0
            while offset < buffer.count {
                offset += try retryOnInterrupt { Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset) }
                    .orThrow("cannot write \(path(of: temp))")
            }
        }
        try retryOnInterrupt { fsync(fd) }.orThrow("cannot fsync \(path(of: temp))")
        // Not retried: Linux closes the descriptor even when close fails with EINTR.
        let closed = close(fd)
        fd = -1
        guard closed == 0 else { throw Errno.current.failure("cannot close \(path(of: temp))") }
        try rename(temp, to: name).orThrow("cannot rename \(path(of: temp)) to \(path(of: name))")
        renamed = true
        sync()
    }
}

/// The error number of a failed C call (`errno`), with Swift names for the ones callers tell
/// apart.
struct Errno: Error, Equatable, Sendable, CustomStringConvertible {
    var rawValue: Int32

    init(_ rawValue: Int32) { self.rawValue = rawValue }

    /// The calling thread's `errno` now.
    static var current: Errno { Errno(errno) }

    /// `EINTR`.
    static let interrupted = Errno(EINTR)
    /// `ENOENT`.
    static let noSuchFileOrDirectory = Errno(ENOENT)
    /// `EEXIST`.
    static let fileExists = Errno(EEXIST)
    /// `ELOOP`: what `O_NOFOLLOW` fails with on a symbolic link.
    static let tooManySymbolicLinkLevels = Errno(ELOOP)
    /// `EWOULDBLOCK` (`EAGAIN`): a non-blocking lock held by another.
    static let wouldBlock = Errno(EWOULDBLOCK)

    /// `strerror(3)`'s text: "No such file or directory".
    var description: String { String(cString: strerror(rawValue)) }

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

/// Calls `call` until it does not fail with `EINTR`: the one place every wrapper of a C call
/// that returns -1 and sets `errno` goes through.
/// - Returns: the call's result (≥ 0), or the `errno` it failed with.
func retryOnInterrupt<T: SignedInteger>(_ call: () -> T) -> Result<T, Errno> {
    while true {
        let result = call()
        if result >= 0 { return .success(result) }
        let err = Errno.current
        if err != .interrupted { return .failure(err) }
    }
}
