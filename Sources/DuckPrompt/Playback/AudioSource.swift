import CSndFile
import FoundationEssentials
import Glibc

/// A decoded audio file or standard input: libsndfile reads it and hands out float32
/// interleaved frames.
///
/// Opening checks everything a bad input can get wrong, before any server is touched, so a
/// bad file never changes a volume.
public final class AudioSource: LibrarySource, @unchecked Sendable {
    /// Channel counts and rates that play: 1 to 8 channels, 8 to 192 kHz.
    public static let channelRange = 1...8
    public static let rateRange = 8_000...192_000

    /// The most bytes read from standard input, a FIFO or a device, which are kept in memory
    /// (64 MiB: 5.8 min of 48 kHz stereo 16-bit WAV); `/dev/zero` would fill it.
    public static let inputLimit = 64 << 20

    /// Path as given (`-` for standard input; for a passed descriptor, the name it was given).
    public let path: String
    public var name: String {
        if let descriptorName { return descriptorName }
        return path == "-" ? "standard input" : URL(fileURLWithPath: path).lastPathComponent
    }
    /// The name a passed descriptor's audio goes by (`init(descriptor:name:deadline:)`).
    private let descriptorName: String?
    /// Sample rate in Hz (`SF_INFO.samplerate`).
    public let rate: Int
    /// Channel count (`SF_INFO.channels`); channel order is the file's (WAVEEX for WAV).
    public let channels: Int
    /// Length in frames as the header says (`SF_INFO.frames`); approximate for some formats.
    public let frames: Int64
    /// The format's name, e.g. `WAV (Microsoft)` (`SFC_GET_FORMAT_INFO`).
    public let formatName: String
    /// `.s16le` for 8- and 16-bit integer samples (`SF_INFO.format`'s subtype), else
    /// `.float32le`: see `StreamSampleFormat.forLibsndfile(format:)`.
    package let streamFormat: StreamSampleFormat
    private var file: OpaquePointer?
    /// Standard input's bytes, kept alive for libsndfile's virtual I/O.
    private let memory: MemoryFile?
    /// A regular file's descriptor, open for `sf_open_fd` until deinit.
    private var descriptor: Int32?
    /// Which regular file was opened, and as it was then (its `fstat`); nil for any other input.
    package let identity: FileIdentity?

    /// A regular file as `fstat(2)` saw it: `st_dev`, `st_ino`, `st_size`, and `st_mtim` in
    /// ns since 1970.
    package struct FileIdentity: Sendable, Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modifiedNanoseconds: Int64

        init(_ status: stat) {
            device = UInt64(status.st_dev)
            inode = UInt64(status.st_ino)
            size = Int64(status.st_size)
            modifiedNanoseconds = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
        }
    }

    /// Opens and validates an audio file, or standard input when `path` is `-`.
    ///
    /// - Parameters:
    ///   - path: a file libsndfile can read (WAV, FLAC, Ogg Vorbis/Opus, MP3 …), or `-`.
    ///   - cancellation: while standard input, a FIFO or a character device is read (whole,
    ///     before libsndfile sees it), `cancel()` stops the wait at once; nil waits for the end.
    /// - Throws: `DuckPromptError(.noInput)` (66) when the file is missing or unreadable;
    ///   `.unsupportedData` (65) when libsndfile cannot decode it (the message lists the formats
    ///   it reads), standard input, a FIFO or a device holds more than `inputLimit` bytes,
    ///   its format is one libsndfile reads but the file is malformed
    ///   (`SF_ERR_MALFORMED_FILE`: damaged or truncated), it holds no frames, it is truncated
    ///   (`truncation(in:info:)` and `refuseCutMPEG` say what counts), or it has more than 8
    ///   channels or a rate outside 8 … 192 kHz;
    ///   `CancellationError` when `cancellation` was cancelled while input was awaited.
    /// libsndfile: `sf_open_fd(SFM_READ)` (a regular file), `sf_open_virtual` (any other input,
    /// read whole first), `sf_strerror`.
    package convenience init(path: String, cancellation: PlayCancellation? = nil) throws {
        try self.init(input: path == "-" ? .descriptor(STDIN_FILENO, name: nil, deadline: nil) : .path(path, regularOnly: false),
                      cancellation: cancellation)
    }

    /// Opens and validates the audio read whole from a passed descriptor (a D-Bus caller's
    /// `PlayFd`): its bytes up to `inputLimit`, until its end or `deadline`. Reads only that
    /// descriptor, and does not close it.
    ///
    /// - Parameters:
    ///   - descriptor: a file, pipe or socket open for reading.
    ///   - name: what messages and the stream's `media.name` call it.
    ///   - deadline: when a descriptor that has not ended is given up (nil: never).
    /// - Throws: `.noInput` (66) when it cannot be read or has not ended by `deadline`; what
    ///   `init(path:)` throws for standard input.
    public convenience init(descriptor: Int32, name: String, deadline: ContinuousClock.Instant? = nil) throws {
        try self.init(input: .descriptor(descriptor, name: name, deadline: deadline), cancellation: nil)
    }

    /// Opens and validates an audio file by name that must be a regular file (a D-Bus caller's
    /// `Play`): never a FIFO or a device, whose open or read could wait for ever.
    /// - Throws: `.noInput` (66) for anything that is not a regular file the caller may read;
    ///   what `init(path:)` throws.
    public convenience init(regularFile path: String) throws {
        try self.init(input: .path(path, regularOnly: true), cancellation: nil)
    }

    private enum Input {
        /// `regularOnly`: refuse a FIFO, socket or device instead of reading it whole.
        case path(String, regularOnly: Bool)
        /// Read whole into memory: standard input (no name), or a passed descriptor.
        case descriptor(Int32, name: String?, deadline: ContinuousClock.Instant?)

        var regularOnly: Bool {
            if case .path(_, regularOnly: true) = self { true } else { false }
        }
    }

    private init(input: Input, cancellation: PlayCancellation?) throws {
        var info = SF_INFO()
        let handle: OpaquePointer?
        let path: String, label: String
        switch input {
        case .path(let p, _): (path, label, descriptorName) = (p, p, nil)
        case .descriptor(_, let name?, _): (path, label, descriptorName) = (name, name, name)
        case .descriptor(_, nil, _): (path, label, descriptorName) = ("-", "standard input", nil)
        }
        self.path = path
        var identity: FileIdentity?
        if case .descriptor(let fd, _, let deadline) = input {
            let data = try WaitingInput.readAll(fd, label: label, wake: cancellation?.control.cancelDescriptor(),
                                                limit: Self.inputLimit, deadline: deadline)
            guard !data.isEmpty else { throw DuckPromptError(.unsupportedData, "\(label) is empty") }
            let memory = MemoryFile(data)
            self.memory = memory
            try Self.refuseCutMPEG(memory: memory, label: label)
            handle = memory.open(&info)
        } else {
            // Opened once, and every check made on what was opened, so a file swapped for a
            // FIFO or a device after the check is never read (O_NONBLOCK: opening a FIFO does
            // not wait for a writer): `BoundedFile.openInput`.
            let (fd, status): (Int32, stat)
            do throws(Errno) { (fd, status) = try BoundedFile.openInput(path: path) } catch {
                throw Self.openError(path, error.rawValue)
            }
            let type = status.st_mode & S_IFMT
            if type == S_IFDIR || (type != S_IFREG && input.regularOnly) {
                try? POSIX.close(fd)
                throw DuckPromptError(.noInput, type == S_IFDIR ? "\(path): is a directory" : "\(path): not a regular file")
            }
            if type == S_IFREG {
                memory = nil
                descriptor = fd
                identity = FileIdentity(status)
                BoundedFile.clearNonBlocking(fd)
                // SF_FALSE: the descriptor is closed in deinit, after sf_close; or here, when
                // the init fails before it is whole (no deinit then).
                do {
                    try Self.refuseCutMPEG(descriptor: fd, size: Int(status.st_size), label: label)
                } catch {
                    try? POSIX.close(fd)
                    throw error
                }
                handle = libsndfile.sf_open_fd(fd, Int32(SFM_READ), &info, 0)
                if handle == nil { try? POSIX.close(fd) }
            } else {
                // A FIFO (or /dev/stdin, a process substitution), opened above with O_NONBLOCK
                // (a blocking open(2) would wait for a writer, deaf to SIGINT/SIGTERM/SIGHUP,
                // which the CLI blocks in this thread), and read from that descriptor: closing it and opening the path again let a
                // writer that had opened in between write to no reader and leave (the read
                // then waited for a writer that never came: seen under ThreadSanitizer).
                defer { try? POSIX.close(fd) }
                let data = try WaitingInput.readAll(fd, label: label, wake: cancellation?.control.cancelDescriptor(),
                                                    limit: Self.inputLimit)
                guard !data.isEmpty else { throw DuckPromptError(.unsupportedData, "\(path): is empty") }
                let memory = MemoryFile(data)
                self.memory = memory
                try Self.refuseCutMPEG(memory: memory, label: label)
                handle = memory.open(&info)
            }
        }
        guard let handle else {
            let reason = String(String(libraryString: libsndfile.sf_strerror(nil)).trimming { ". \n".contains($0) })
            // A format libsndfile reads, whose headers do not add up: half of an Opus file
            // whose first audio page is cut, a CAF cut anywhere.
            if libsndfile.sf_error(nil) == Int32(SF_ERR_MALFORMED_FILE) {
                throw DuckPromptError(.unsupportedData, "\(label): damaged or truncated (libsndfile: \(reason))")
            }
            throw DuckPromptError(.unsupportedData,
                "\(label): not audio libsndfile can read (\(reason)); it reads \(AudioSource.readableFormats.joined(separator: ", "))")
        }
        file = handle
        self.identity = identity
        rate = Int(info.samplerate)
        channels = Int(info.channels)
        frames = Int64(info.frames)
        streamFormat = StreamSampleFormat.forLibsndfile(format: info.format)
        var format = SF_FORMAT_INFO()
        format.format = info.format & Int32(SF_FORMAT_TYPEMASK)
        if libsndfile.sf_command(handle, Int32(SFC_GET_FORMAT_INFO), &format, Int32(MemoryLayout<SF_FORMAT_INFO>.size)) == 0,
           let name = format.name {
            formatName = String(cString: name)
        } else {
            formatName = "unknown"
        }
        guard Self.channelRange.contains(channels) else {
            throw DuckPromptError(.unsupportedData, "\(label): \(channels) channels is not supported (1 to 8)")
        }
        guard Self.rateRange.contains(rate) else {
            throw DuckPromptError(.unsupportedData, "\(label): \(rate) Hz is not supported (8000 to 192000 Hz)")
        }
        guard frames > 0 else {
            throw DuckPromptError(.unsupportedData, "\(label): holds no audio frames")
        }
        if let reason = Self.truncation(in: handle, info: info) {
            throw DuckPromptError(.unsupportedData, "\(label): truncated: \(reason)")
        }
    }

    /// Frames decoded at the end of a file to see that it is all there (`truncation(in:info:)`).
    static let tailFrames = 4096

    static func errorText(_ handle: OpaquePointer) -> String {
        String(String(libraryString: libsndfile.sf_strerror(handle)).trimming { ". \n".contains($0) })
    }

    /// The error for a path that `open(2)` or `fstat(2)` refused with `code`.
    private static func openError(_ path: String, _ code: Int32) -> DuckPromptError {
        switch code {
        case ENOENT, ENOTDIR: DuckPromptError(.noInput, "\(path): no such file")
        case EACCES, EPERM: DuckPromptError(.noInput, "\(path): permission denied")
        default: DuckPromptError(.noInput, "\(path): \(String(cString: strerror(code)))")
        }
    }

    deinit {
        if let file { _ = libsndfile.sf_close(file) }
        if let descriptor { try? POSIX.close(descriptor) }
    }

    /// Reads up to `count` frames of float32 interleaved samples into `buffer`.
    /// - Returns: frames read; 0 at the end. libsndfile: `sf_readf_float`.
    public func read(into buffer: UnsafeMutablePointer<Float>, frames count: Int) -> Int {
        guard let file, count > 0 else { return 0 }
        return Int(libsndfile.sf_readf_float(file, buffer, sf_count_t(count)))
    }

    /// A regular file's size in bytes, as opened; nil for audio read into memory.
    package var fileSize: Int64? { identity?.size }

    /// A regular file's descriptor for another process to read (`duckprompt play` handing its
    /// prompt to `duckprompt serve`, `PlayFd`), opened as `init(path:)` opens it but not read:
    /// the service checks the audio as this init would (and the command checks it here only
    /// when the service refuses it, for the message its own path gives), so a handed-over
    /// prompt loads no libsndfile in the command. The descriptor is at offset 0, blocking; the
    /// caller closes it.
    /// - Returns: nil when `path` is `-`, cannot be opened, or is not a regular file of 1 byte
    ///   to `inputLimit`: the caller opens it with `init(path:)`, which says what is wrong (or
    ///   streams a larger file).
    /// `open(2)`, `fstat(2)` (`BoundedFile.openInput`), `fcntl(2)`.
    package static func unreadDescriptor(path: String) -> Int32? {
        guard path != "-", let (fd, status) = try? BoundedFile.openInput(path: path) else { return nil }
        guard status.st_mode & S_IFMT == S_IFREG, status.st_size > 0, status.st_size <= Self.inputLimit else {
            try? POSIX.close(fd)
            return nil
        }
        BoundedFile.clearNonBlocking(fd)
        return fd
    }

    /// A new descriptor of this audio's bytes from their first, for another process to read to
    /// its end (`duckprompt play` handing its prompt to `duckprompt serve`, `PlayFd`): a regular
    /// file opened again through `/proc/self/fd/N` (the same file, with an offset of its own:
    /// never another file put at the path since), audio read into memory (standard input, a
    /// FIFO) copied into a `memfd_create(2)` file. The caller closes it.
    /// - Throws: `DuckPromptError(.noInput)` when it cannot be made (out of descriptors or memory).
    package func handOverDescriptor() throws -> Int32 {
        do throws(Errno) {
            if let descriptor {
                return try POSIX.open("/proc/self/fd/\(descriptor)", O_RDONLY | O_CLOEXEC | O_NOCTTY)
            }
            guard let memory else { throw Errno(EBADF, call: "handOverDescriptor") }
            let fd = try POSIX.memfdCreate("duckprompt-prompt")
            do throws(Errno) {
                var written = 0
                while written < memory.data.count {
                    written += try memory.data.withUnsafeBytes { bytes in
                        Result { () throws(Errno) -> Int in
                            try POSIX.pwrite(fd, UnsafeRawBufferPointer(rebasing: bytes[written...]), at: written)
                        }
                    }.get()
                }
            } catch {
                try? POSIX.close(fd)
                throw error
            }
            return fd
        } catch {
            throw DuckPromptError(.noInput, "\(path): cannot pass it on: \(String(cString: strerror(error.rawValue)))")
        }
    }

    /// Duration in seconds according to the header.
    public var duration: Double { Double(frames) / Double(rate) }

    /// libsndfile's version string (`sf_version_string`).
    public static var libraryVersion: String { String(libraryString: libsndfile.sf_version_string()) }

    /// The container formats the installed libsndfile reads, by name
    /// (`SFC_GET_FORMAT_MAJOR_COUNT`, `SFC_GET_FORMAT_MAJOR`).
    public static let readableFormats: [String] = {
        var count: Int32 = 0
        _ = libsndfile.sf_command(nil, Int32(SFC_GET_FORMAT_MAJOR_COUNT), &count, Int32(MemoryLayout<Int32>.size))
        return (0..<count).compactMap { i in
            var info = SF_FORMAT_INFO()
            info.format = i
            _ = libsndfile.sf_command(nil, Int32(SFC_GET_FORMAT_MAJOR), &info, Int32(MemoryLayout<SF_FORMAT_INFO>.size))
            guard let ext = info.extension, let name = info.name else { return nil }
            return "\(String(cString: name)) (.\(String(cString: ext)))"
        }
    }()
}

/// Bytes in memory that libsndfile reads through its virtual I/O (for standard input, which
/// cannot seek). `sf_open_virtual` with `SF_VIRTUAL_IO` callbacks.
final class MemoryFile: @unchecked Sendable {
    let data: [UInt8]
    var offset = 0
    init(_ data: [UInt8]) { self.data = data }

    func open(_ info: inout SF_INFO) -> OpaquePointer? {
        var io = SF_VIRTUAL_IO(
            get_filelen: { userdata in
                sf_count_t(Unmanaged<MemoryFile>.fromOpaque(userdata!).takeUnretainedValue().data.count)
            },
            seek: { offset, whence, userdata in
                let file = Unmanaged<MemoryFile>.fromOpaque(userdata!).takeUnretainedValue()
                let base = switch whence {
                case SEEK_CUR: file.offset
                case SEEK_END: file.data.count
                default: 0
                }
                file.offset = max(0, min(file.data.count, base + Int(offset)))
                return sf_count_t(file.offset)
            },
            read: { pointer, count, userdata in
                let file = Unmanaged<MemoryFile>.fromOpaque(userdata!).takeUnretainedValue()
                let n = max(0, min(Int(count), file.data.count - file.offset))
                if n > 0, let pointer {
                    file.data.withUnsafeBytes { raw in
                        pointer.copyMemory(from: raw.baseAddress!.advanced(by: file.offset), byteCount: n)
                    }
                }
                file.offset += n
                return sf_count_t(n)
            },
            write: { _, _, _ in 0 },
            tell: { userdata in
                sf_count_t(Unmanaged<MemoryFile>.fromOpaque(userdata!).takeUnretainedValue().offset)
            })
        return libsndfile.sf_open_virtual(&io, Int32(SFM_READ), &info, Unmanaged.passUnretained(self).toOpaque())
    }
}

extension StreamSampleFormat {
    /// The format for a libsndfile `SF_INFO.format`: `.s16le` for the subtypes `PCM_S8`,
    /// `PCM_U8`, `PCM_16`, `ULAW`, `ALAW`; else `.float32le`.
    static func forLibsndfile(format: Int32) -> StreamSampleFormat {
        switch format & Int32(SF_FORMAT_SUBMASK) {
        case Int32(SF_FORMAT_PCM_S8), Int32(SF_FORMAT_PCM_U8), Int32(SF_FORMAT_PCM_16),
             Int32(SF_FORMAT_ULAW), Int32(SF_FORMAT_ALAW):
            return .s16le
        default:
            return .float32le
        }
    }
}
