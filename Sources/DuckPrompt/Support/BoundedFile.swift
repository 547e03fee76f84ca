import FoundationEssentials
import Glibc

/// Why `BoundedFile` did not return a file's bytes. `reason` is for a user and follows the
/// file's name: `no such file`, `permission denied`, `is a directory`, `is not a regular file
/// (a character device)`, `is larger than 16 MiB`.
package struct FileReadError: Error, Equatable, Sendable {
    package enum Kind: Equatable, Sendable {
        /// `ENOENT`.
        case missing
        /// Cannot be opened or read: `EACCES`, `EIO` …
        case unreadable
        /// A directory, a device, a socket (or a FIFO where none is allowed).
        case notRegularFile
        /// Over the caller's limit.
        case tooLarge
    }

    package var kind: Kind
    package var reason: String
}

/// Every whole-file read of the library, with a size limit: sink dumps (`devices --from`),
/// the config file, journals. A limit keeps a mistaken path (`/dev/zero`, a 100 MB log) from
/// taking seconds and gigabytes before it is refused: a regular file is judged by its size
/// before a byte is read, a pipe (`--from <(pactl list sinks)`, standard input) by what it
/// sends, read to at most one byte past the limit.
///
/// Pure POSIX (`POSIX`'s wrappers); safe from any thread. `open(2)` with `O_NONBLOCK` (a FIFO
/// without a writer does not block the open) through `openInput`, `fstat(2)`, `read(2)`
/// retried on `EINTR`.
package enum BoundedFile {
    /// Largest sink dump read (`devices --from`): a `pw-dump` of a busy desktop is about
    /// 0.5 MiB, a `pactl list` of 300 streams about 1 MiB.
    package static let dumpLimit = 16 << 20
    /// Largest config file read: a real one is under 1 KiB.
    package static let configLimit = 1 << 20
    /// Largest journal read: a real one is a few KiB (about 0.3 KiB a stream).
    package static let journalLimit = 1 << 20

    /// What kinds of file a read accepts.
    package enum Accept: Sendable {
        /// Regular files only (config, journals).
        case regularFiles
        /// Regular files, FIFOs and pipes (`devices --from <(pactl list sinks)`).
        case regularFilesAndPipes
        /// Anything that reads (standard input: a terminal too), still within the limit.
        case anything
    }

    /// `16 MiB`, `1 MiB`, `512 KiB`, `100 bytes`.
    package static func describe(bytes: Int) -> String {
        if bytes >= 1 << 20, bytes % (1 << 20) == 0 { return "\(bytes >> 20) MiB" }
        if bytes >= 1 << 10, bytes % (1 << 10) == 0 { return "\(bytes >> 10) KiB" }
        return "\(bytes) bytes"
    }

    /// Reads the file at `path`, following symbolic links.
    /// - Parameters:
    ///   - path: any path.
    ///   - limit: the most bytes accepted.
    ///   - accept: which kinds of file are read; a FIFO or pipe (`/dev/fd/63` of `<(…)`) is
    ///     read to its end (its writer closing it) or to one byte past `limit`.
    /// - Throws: `FileReadError`. `openInput(path:)`, then `read(descriptor:limit:accept:)`.
    package static func read(path: String, limit: Int, accept: Accept = .regularFiles) throws(FileReadError) -> Data {
        let (fd, status): (Int32, stat)
        do throws(Errno) { (fd, status) = try openInput(path: path) } catch {
            throw error.call == "fstat" ? statFailure(error) : openFailure(error.rawValue)
        }
        defer { try? POSIX.close(fd) }
        return try read(descriptor: fd, status: status, limit: limit, accept: accept)
    }

    /// Opens an input file by name, following symbolic links, and reads its status, so that
    /// every check is made on what was opened (a path swapped for a FIFO or a device after a
    /// check is never read): the one open of `BoundedFile.read(path:)` and `AudioSource`.
    /// `O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC`: opening a FIFO does not wait for a
    /// writer, a terminal does not become the controlling one.
    /// - Returns: the descriptor, still `O_NONBLOCK` (`clearNonBlocking` before a blocking
    ///   read), the caller's to close; its status (type in `st_mode & S_IFMT`, `st_size` in
    ///   bytes).
    /// - Throws: `Errno` from `open` or `fstat` (`call` tells which); nothing stays open then.
    ///   `open(2)`, `fstat(2)`.
    static func openInput(path: String) throws(Errno) -> (descriptor: Int32, status: stat) {
        let fd = try POSIX.open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        do throws(Errno) {
            return (fd, try POSIX.fstat(fd))
        } catch {
            try? POSIX.close(fd)
            throw error
        }
    }

    /// Clears `O_NONBLOCK` on `fd`, so that reads wait for data. Best effort: left as it is
    /// when its flags cannot be read. `fcntl(2)` `F_GETFL`, `F_SETFL`.
    static func clearNonBlocking(_ fd: Int32) {
        guard let flags = try? POSIX.fcntl(fd, F_GETFL) else { return }
        _ = try? POSIX.fcntl(fd, F_SETFL, flags & ~O_NONBLOCK)
    }

    /// The reason for a failed `fstat(2)`.
    private static func statFailure(_ err: Errno) -> FileReadError {
        FileReadError(kind: .unreadable, reason: "cannot stat: \(err)")
    }

    /// The reason for a failed `open(2)`/`openat(2)`.
    package static func openFailure(_ err: Int32) -> FileReadError {
        switch err {
        case ENOENT, ENOTDIR: FileReadError(kind: .missing, reason: "no such file")
        case EACCES, EPERM: FileReadError(kind: .unreadable, reason: "permission denied")
        case EISDIR: FileReadError(kind: .notRegularFile, reason: "is a directory")
        case ENXIO, ENODEV: FileReadError(kind: .notRegularFile, reason: "is not a regular file (a socket or a device without a driver)")
        default: FileReadError(kind: .unreadable, reason: "cannot open: \(String(cString: strerror(err)))")
        }
    }

    /// Reads an open descriptor to its end: a file of a kind `accept` admits, of at most
    /// `limit` bytes. The descriptor stays open.
    /// - Throws: `FileReadError`. `fstat(2)`, `fcntl(2)` (a pipe is read blocking), `read(2)`.
    package static func read(descriptor fd: Int32, limit: Int, accept: Accept) throws(FileReadError) -> Data {
        let st: stat
        do throws(Errno) { st = try POSIX.fstat(fd) } catch { throw statFailure(error) }
        return try read(descriptor: fd, status: st, limit: limit, accept: accept)
    }

    /// `read(descriptor:limit:accept:)` of a descriptor whose status `st` was just read.
    private static func read(descriptor fd: Int32, status st: stat, limit: Int, accept: Accept) throws(FileReadError) -> Data {
        let type = st.st_mode & S_IFMT
        let isPipe = type == S_IFIFO
        let accepted = switch accept {
        case .regularFiles: type == S_IFREG
        case .regularFilesAndPipes: type == S_IFREG || isPipe
        case .anything: true
        }
        guard accepted else {
            throw FileReadError(kind: .notRegularFile, reason: type == S_IFDIR ? "is a directory"
                                : "is not a regular file (\(typeName(type)))")
        }
        let tooLarge = FileReadError(kind: .tooLarge, reason: "is larger than \(describe(bytes: limit))")
        guard type != S_IFREG || Int(st.st_size) <= limit else { throw tooLarge }
        if type != S_IFREG { clearNonBlocking(fd) }
        var data = Data()
        data.reserveCapacity(type == S_IFREG ? Int(st.st_size) : 65536)
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            // One byte past the limit is enough to know it is over.
            let wanted = min(buffer.count, limit + 1 - data.count)
            let n: Int
            switch buffer.withUnsafeMutableBytes({ bytes in
                Result { () throws(Errno) in try POSIX.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: bytes[..<wanted])) }
            }) {
            case .success(let count): n = count
            case .failure(let err): throw FileReadError(kind: .unreadable, reason: "cannot read: \(err)")
            }
            if n == 0 { return data }
            data.append(contentsOf: buffer[0..<n])
            if data.count > limit { throw tooLarge }
        }
    }

    /// `a character device`, `a FIFO` … for `S_IFMT` bits.
    static func typeName(_ type: mode_t) -> String {
        switch type {
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFIFO: "a FIFO"
        case S_IFSOCK: "a socket"
        case S_IFLNK: "a symbolic link"
        case S_IFDIR: "a directory"
        default: "of file type \(String(type, radix: 8))"
        }
    }
}

/// Up to `count` bytes of an open file from `offset` (`pread`, its offset untouched); fewer at
/// its end, none when it cannot be read.
package func readBytes(from fd: Int32, at offset: Int, count: Int) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: count)
    var filled = 0
    while filled < count {
        let n = bytes.withUnsafeMutableBytes { buffer in
            (try? POSIX.pread(fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]), at: offset + filled)) ?? 0
        }
        if n <= 0 { break }
        filled += n
    }
    return Array(bytes[0..<filled])
}
