import CSndFile
import Foundation

/// A decoded audio file: libsndfile reads it and hands out float32 interleaved frames.
///
/// Opening checks everything a bad input can get wrong, before any server is touched, so a
/// bad file never changes a volume.
public final class AudioSource: @unchecked Sendable {
    /// Path as given.
    public let path: String
    /// Sample rate in Hz (`SF_INFO.samplerate`).
    public let rate: Int
    /// Channel count (`SF_INFO.channels`); channel order is the file's (WAVEEX for WAV).
    public let channels: Int
    /// Length in frames as the file header says (`SF_INFO.frames`); may be approximate for
    /// compressed formats.
    public let frames: Int64
    /// The format's name, e.g. `WAV (Microsoft)` (`SFC_GET_FORMAT_INFO`).
    public let formatName: String
    private var file: OpaquePointer?

    /// Opens and validates an audio file.
    ///
    /// - Parameter path: a file libsndfile can read (WAV, FLAC, Ogg Vorbis/Opus, MP3 …).
    /// - Throws: `DuckPromptError(.noInput)` (66) when the file is missing or unreadable;
    ///   `.unsupportedData` (65) when libsndfile cannot decode it, it holds no frames, or its
    ///   rate or channel count is outside 1 … 384000 Hz and 1 … 32 channels.
    /// libsndfile: `sf_open(SFM_READ)`, `sf_strerror`.
    public init(path: String) throws {
        self.path = path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw DuckPromptError(.noInput, "\(path): no such file")
        }
        guard !isDirectory.boolValue else { throw DuckPromptError(.noInput, "\(path): is a directory") }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw DuckPromptError(.noInput, "\(path): permission denied")
        }
        var info = SF_INFO()
        guard let handle = sf_open(path, Int32(SFM_READ), &info) else {
            let reason = String(cString: sf_strerror(nil))
            throw DuckPromptError(.unsupportedData, "\(path): not an audio file libsndfile can read (\(reason))")
        }
        file = handle
        rate = Int(info.samplerate)
        channels = Int(info.channels)
        frames = Int64(info.frames)
        var format = SF_FORMAT_INFO()
        format.format = info.format & Int32(SF_FORMAT_TYPEMASK)
        if sf_command(handle, Int32(SFC_GET_FORMAT_INFO), &format, Int32(MemoryLayout<SF_FORMAT_INFO>.size)) == 0,
           let name = format.name {
            formatName = String(cString: name)
        } else {
            formatName = "unknown"
        }
        guard (1...32).contains(channels) else {
            throw DuckPromptError(.unsupportedData, "\(path): \(channels) channels is not supported (1 to 32)")
        }
        guard (1...384_000).contains(rate) else {
            throw DuckPromptError(.unsupportedData, "\(path): \(rate) Hz is not supported (1 to 384000 Hz)")
        }
        guard frames > 0 else {
            throw DuckPromptError(.unsupportedData, "\(path): holds no audio frames")
        }
    }

    deinit { if let file { sf_close(file) } }

    /// Reads up to `count` frames of float32 interleaved samples into `buffer`.
    /// - Returns: frames read; 0 at the end. libsndfile: `sf_readf_float`.
    public func read(into buffer: UnsafeMutablePointer<Float>, frames count: Int) -> Int {
        guard let file, count > 0 else { return 0 }
        return Int(sf_readf_float(file, buffer, sf_count_t(count)))
    }

    /// Duration in seconds according to the header.
    public var duration: Double { Double(frames) / Double(rate) }

    /// libsndfile's version string (`sf_version_string`).
    public static var libraryVersion: String { String(cString: sf_version_string()) }
}
