import CSndFile
import FoundationEssentials

// Whether a file was cut short, per format (README "Truncated files"): libsndfile's log for the
// containers that state a data size, the end-of-stream page for Ogg, an MP3's Xing/Info/VBRI
// byte count against the file, and decoding the last frames for the rest.
extension AudioSource {
    /// Why an opened file is cut short, or nil when it is whole, as far as its format tells.
    ///
    /// - Containers whose header gives the size of the audio data (WAV, RF64, AIFF/AIFC, AU,
    ///   CAF, 8SVX, VOC, W64): libsndfile's log (`SFC_GET_LOG_INFO`) reports a size over what the file
    ///   holds; `truncation(inLog:)` reads it (VOC: `Seems to be a truncated file.`).
    /// - Ogg (Vorbis, Opus): a stream without its end-of-stream page (the log says the last
    ///   page lacks the bit, or libsndfile found no last page: `SF_INFO.frames` is
    ///   `SF_COUNT_MAX`).
    /// - MP3: checked before libsndfile opens it (`refuseCutMPEG`); nothing here.
    /// - Any other seekable format whose header gives a frame count (FLAC's STREAMINFO, the
    ///   sizes above): the last `tailFrames` are decoded (`sf_seek`, `sf_readf_float`); a
    ///   failed seek, a decoding error (`sf_error`) or an end before the count is a
    ///   truncation. Then `sf_seek` back to frame 0.
    static func truncation(in handle: OpaquePointer, info: SF_INFO) -> String? {
        var buffer = [CChar](repeating: 0, count: 16384)
        _ = libsndfile.sf_command(handle, Int32(SFC_GET_LOG_INFO), &buffer, Int32(buffer.count))
        let log = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if let (promised, held) = truncation(inLog: log) {
            return "its header promises \(promised) bytes, the file holds \(held)"
        }
        if log.contains("Seems to be a truncated file.") { return "libsndfile's log says it seems to be a truncated file" }
        let major = info.format & Int32(SF_FORMAT_TYPEMASK)
        let subtype = info.format & Int32(SF_FORMAT_SUBMASK)
        if major == Int32(SF_FORMAT_OGG) {
            // Vorbis and Opus find their last page when it is there; other Ogg codecs of
            // libsndfile (Speex) never report a length.
            let findsEnd = subtype == Int32(SF_FORMAT_VORBIS) || subtype == Int32(SF_FORMAT_OPUS)
            if log.contains("lacks an end-of-stream bit") || (info.frames == sf_count_t.max && findsEnd) {
                return "its Ogg stream ends without its last page (no end-of-stream flag)"
            }
            return nil
        }
        if major == Int32(SF_FORMAT_MPEG) { return nil }
        guard info.seekable != 0, info.frames != sf_count_t.max else { return nil }
        let frames = Int64(info.frames)
        let start = max(0, frames - Int64(tailFrames))
        var chunk = [Float](repeating: 0, count: 1024 * Int(info.channels))
        let position = libsndfile.sf_seek(handle, sf_count_t(start), SEEK_SET)
        guard position >= 0 else {
            return "its header promises \(frames) frames and the file ends before the last of them"
        }
        var end = Int64(position)
        while true {
            let n = chunk.withUnsafeMutableBufferPointer { libsndfile.sf_readf_float(handle, $0.baseAddress, 1024) }
            if n <= 0 { break }
            end += Int64(n)
        }
        if libsndfile.sf_error(handle) != 0 {
            return "decoding its last frames failed (\(errorText(handle)))"
        }
        if end < frames {
            return "its header promises \(frames) frames and the file ends before the last of them"
        }
        guard libsndfile.sf_seek(handle, 0, SEEK_SET) == 0 else {
            return "after its last frames, its start cannot be reached again (\(errorText(handle)))"
        }
        return nil
    }

    /// The size in bytes an MP3's first frame gives for the audio, itself included: the bytes
    /// field of a Xing or Info (LAME) header after the side information (flag 2), or of a VBRI
    /// header at byte 36; nil without one (lame writes no Info header into frames too small
    /// for it: 8 kbps mono at 8 to 22.05 kHz).
    /// - Parameter head: the file's bytes from its first frame on (past an ID3v2 tag:
    ///   `id3v2Size(_:)`); 64 bytes are enough.
    static func mpegAudioBytes(_ head: [UInt8]) -> Int? {
        guard head.count >= 4, head[0] == 0xFF, head[1] & 0xE0 == 0xE0 else { return nil }
        let version = (head[1] >> 3) & 3  // 3: MPEG-1, 2: MPEG-2, 0: MPEG-2.5, 1: reserved
        let mono = head[3] >> 6 == 3
        guard version != 1 else { return nil }
        let sideInfo = version == 3 ? (mono ? 17 : 32) : (mono ? 9 : 17)
        func word(_ offset: Int) -> Int? {
            guard head.count >= offset + 4 else { return nil }
            return head[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
        }
        func tag(_ offset: Int) -> String? {
            guard head.count >= offset + 4 else { return nil }
            return String(decoding: head[offset..<offset + 4], as: UTF8.self)
        }
        let xing = 4 + sideInfo
        if tag(xing) == "Xing" || tag(xing) == "Info", let flags = word(xing + 4), flags & 2 != 0 {
            return word(xing + 8 + (flags & 1 != 0 ? 4 : 0))
        }
        if tag(36) == "VBRI" { return word(36 + 10) }
        return nil
    }

    /// The length in bytes of an ID3v2 tag at the start of `head` (10-byte header, syncsafe
    /// size, a footer when flag 0x10 is set); 0 when there is none.
    static func id3v2Size(_ head: [UInt8]) -> Int {
        guard head.count >= 10, head[0] == 0x49, head[1] == 0x44, head[2] == 0x33,
              head[6..<10].allSatisfy({ $0 < 0x80 }) else { return 0 }
        let size = head[6..<10].reduce(0) { $0 << 7 | Int($1) }
        return 10 + size + (head[5] & 0x10 != 0 ? 10 : 0)
    }

    /// Throws `.unsupportedData` (65) for an MP3 whose Xing, Info (LAME) or VBRI header gives
    /// more bytes of audio than the file holds from its first frame on (`mpegAudioSizes`).
    /// Checked before libsndfile opens the file, as libmpg123 then prints a warning of its
    /// own about the size on standard error. Without such a header libmpg123 guesses the
    /// length from the file's size and the first frame's bit rate: a cut at a frame boundary
    /// cannot be told, and a whole VBR file can decode short of the guess. Nothing is
    /// decoded: seeking to an MP3's end makes libmpg123 read every frame header (2.8 ms for
    /// 60 s).
    static func refuseCutMPEG(memory: MemoryFile, label: String) throws {
        let data = memory.data
        try refuseCutMPEG(label: label, size: data.count) { offset, count in
            guard offset < data.count else { return [] }
            return Array(data[offset..<min(data.count, offset + count)])
        }
    }

    /// `refuseCutMPEG` for a regular file open on `fd`, `size` bytes long (`fstat`).
    static func refuseCutMPEG(descriptor fd: Int32, size: Int, label: String) throws {
        try refuseCutMPEG(label: label, size: size) { readBytes(from: fd, at: $0, count: $1) }
    }

    static func refuseCutMPEG(label: String, size: Int, bytes: (_ offset: Int, _ count: Int) -> [UInt8]) throws {
        guard let (promised, held) = mpegAudioSizes(size: size, bytes: bytes), held < promised else { return }
        throw DuckPromptError(.unsupportedData,
            "\(label): truncated: its header promises \(promised) bytes of audio, the file holds \(held)")
    }

    /// An MP3's audio size as its header gives it (`mpegAudioBytes`) and as the file holds
    /// it, from its first frame to its end (trailing ID3v1 or APE tags count as held), for a
    /// file of `size` bytes read through `bytes` (`pread` of a regular file, or the memory of
    /// standard input or a FIFO): 64 bytes (and 64 more past an ID3v2 tag). Nil when the
    /// header gives none.
    static func mpegAudioSizes(size: Int, bytes: (_ offset: Int, _ count: Int) -> [UInt8]) -> (promised: Int, held: Int)? {
        let head = bytes(0, 64)
        let start = id3v2Size(head)
        guard let promised = mpegAudioBytes(start == 0 ? head : bytes(start, 64)) else { return nil }
        return (promised, max(0, size - start))
    }

    /// A streaming writer that cannot seek back leaves a placeholder for the size in the
    /// header: 0xFFFFFFFF (ffmpeg), 0x7FFFF000 (sox's WAV), 0x7F000008 (sox's AIFF) … Sizes
    /// from this one up are taken as such, not as a truncation.
    static let placeholderSizes = 0x7F00_0000

    /// The sizes in a libsndfile log line of the form `LABEL : N (should be M)` with LABEL
    /// `data` (WAV, CAF), `SSND` (AIFF, AIFC), `Data Size` (AU), `BODY` (8SVX), `riff` (W64) or
    /// `Riff size` (RF64, whose `data` size lives in its `ds64` chunk), when N (promised by the header, bytes) is over M (held) and under
    /// `placeholderSizes`. A WAV's `RIFF` line is not read: writers get it wrong in files
    /// whose audio is whole. Read word by word: a `Regex` here cost
    /// 0.5 ms of start-up (the runtime compiles it).
    static func truncation(inLog log: String) -> (promised: Int, held: Int)? {
        let labels = ["data", "SSND", "Data Size", "BODY", "riff", "Riff size"]
        for line in log.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":"),
                  labels.contains(String(line[..<colon].trimming { $0 == " " })) else { continue }
            let words = line[line.index(after: colon)...].split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard words.count >= 4, let promised = Int(words[0]), words[1] == "(should", words[2] == "be",
                  words[3].hasSuffix(")"), let held = Int(words[3].dropLast()) else { continue }
            if promised > held, promised < placeholderSizes, held > 0 { return (promised, held) }
        }
        return nil
    }
}
