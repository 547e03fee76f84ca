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
/// `DuckPromptError(.internal)` with `strerror`'s text. The C calls are `POSIX`'s wrappers,
/// which retry `EINTR`.
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
        var created = true
        do throws(Errno) { try POSIX.mkdir(path, 0o700) } catch .fileExists { created = false } catch {
            throw error.failure("cannot create the journal directory \(path)")
        }
        let fd: Int32
        do throws(Errno) { fd = try POSIX.open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) } catch {
            if let st = try? POSIX.lstat(path) {
                if st.st_mode & S_IFMT == S_IFLNK {
                    throw DuckPromptError(.internal, "refusing the journal directory \(path): it is a symbolic link")
                }
                if st.st_mode & S_IFMT != S_IFDIR {
                    throw DuckPromptError(.internal, "refusing the journal directory \(path): it is not a directory")
                }
            }
            throw error.failure("cannot open the journal directory \(path)")
        }
        do {
            let st = try orThrow("cannot stat \(path)", POSIX.fstat(fd))
            guard st.st_mode & S_IFMT == S_IFDIR else {
                throw DuckPromptError(.internal, "refusing the journal directory \(path): it is not a directory")
            }
            guard st.st_uid == geteuid() else {
                throw DuckPromptError(.internal, "refusing the journal directory \(path): it belongs to uid \(st.st_uid), not \(geteuid())")
            }
            if created {
                try orThrow("cannot set mode 0700 on \(path)", POSIX.fchmod(fd, 0o700))
            }
            if !created, st.st_mode & 0o022 != 0 {
                throw DuckPromptError(.internal, "refusing the journal directory \(path): group or others may write to it (mode \(String(st.st_mode & 0o7777, radix: 8)); chmod 700 it)")
            }
        } catch {
            try? POSIX.close(fd)
            throw error
        }
        descriptor = fd
    }

    deinit { try? POSIX.close(descriptor) }

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
        Result { () throws(Errno) in try POSIX.openat(descriptor, name, flags | O_NOFOLLOW | O_CLOEXEC, mode: mode) }
    }

    /// Removes `name` from the directory (a symbolic link itself, never its target).
    /// `unlinkat(2)`.
    @discardableResult
    func unlink(_ name: String) -> Result<Void, Errno> {
        Result { () throws(Errno) in try POSIX.unlinkat(descriptor, name) }
    }

    /// Renames `name` to `newName` in the directory, atomically, replacing what is at
    /// `newName` (a symbolic link there is replaced, not followed). `renameat(2)`.
    func rename(_ name: String, to newName: String) -> Result<Void, Errno> {
        Result { () throws(Errno) in try POSIX.renameat(descriptor, name, newName) }
    }

    /// Creates the FIFO `name` in the directory with `mode` (before the umask). `mkfifoat(3)`.
    func makeFIFO(_ name: String, mode: mode_t) -> Result<Void, Errno> {
        Result { () throws(Errno) in try POSIX.mkfifoat(descriptor, name, mode) }
    }

    /// Flushes the directory's entries to disk: a rename survives a crash once this returns.
    /// `fsync(2)` of the directory.
    @discardableResult
    func sync() -> Result<Void, Errno> {
        Result { () throws(Errno) in try POSIX.fsync(descriptor) }
    }

    /// The names in the directory but `.` and `..`, read through a new descriptor of the same
    /// directory (so that reads from two threads do not share an offset).
    /// - Throws: `DuckPromptError(.internal)` "cannot list …" naming the directory.
    /// `openat(2)` of `.` with `O_DIRECTORY`, `fdopendir(3)`, `readdir(3)`.
    func names() throws -> [String] {
        do throws(Errno) {
            let fd = try POSIX.openat(descriptor, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            let dir: OpaquePointer
            do throws(Errno) { dir = try POSIX.fdopendir(fd) } catch {
                try? POSIX.close(fd)
                throw error
            }
            defer { POSIX.closedir(dir) }
            var names: [String] = []
            while let entry = try POSIX.readdir(dir) {
                let name = POSIX.name(of: entry)
                if name != ".", name != ".." { names.append(name) }
            }
            return names
        } catch {
            throw error.failure("cannot list \(path)")
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
        defer { try? POSIX.close(fd) }
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
            if fd >= 0 { try? POSIX.close(fd) }
            if !renamed { unlink(temp) }
        }
        // The mode given to openat is masked by the umask; make it exactly 0600.
        try orThrow("cannot set mode 0600 on \(path(of: temp))", POSIX.fchmod(fd, 0o600))
        try data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
            var offset = 0
            while offset < buffer.count {
                offset += try orThrow("cannot write \(path(of: temp))",
                                      POSIX.write(fd, UnsafeRawBufferPointer(rebasing: buffer[offset...])))
            }
        }
        try orThrow("cannot fsync \(path(of: temp))", POSIX.fsync(fd))
        // Not retried: Linux closes the descriptor even when close fails with EINTR.
        let closing = fd
        fd = -1
        try orThrow("cannot close \(path(of: temp))", POSIX.close(closing))
        try rename(temp, to: name).orThrow("cannot rename \(path(of: temp)) to \(path(of: name))")
        renamed = true
        sync()
    }
}
