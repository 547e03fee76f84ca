import Foundation
import Synchronization
import Testing
@testable import DuckPrompt
@testable import DuckPromptCore

/// `AudioSource.truncation(inLog:)` on libsndfile 1.2's `SFC_GET_LOG_INFO` text.
@Suite("AudioSource truncation")
struct AudioSourceTruncationTests {
    /// The log of the first 2000 bytes of a 4844-byte 16-bit mono WAV (libsndfile 1.2.0).
    static let cutLog = """
        File : /tmp/trunc.wav
        Length : 2000
        RIFF : 4836 (should be 1992)
        WAVE
        fmt  : 16
          Format        : 0x1 => WAVE_FORMAT_PCM
          Channels      : 1
          Sample Rate   : 48000
        data : 4800 (should be 1956)
        End

        """

    @Test("a data chunk cut short gives the promised and the held bytes; the RIFF line is not read")
    func cutFile() {
        let found = AudioSource.truncation(inLog: Self.cutLog)
        #expect(found?.promised == 4800)
        #expect(found?.held == 1956)
    }

    @Test("a whole file, a data chunk that holds more than promised; AIFF, AU, 8SVX, W64 and RF64 lines as libsndfile 1.2.0 writes them")
    func otherLogs() {
        #expect(AudioSource.truncation(inLog: "RIFF : 4836\nWAVE\ndata : 4800\nEnd\n") == nil)
        #expect(AudioSource.truncation(inLog: "data : 1000 (should be 4000)\n") == nil)
        // The first halves of 3 s stereo 16-bit files made by sox (RF64: by libsndfile).
        for (line, promised, held) in [(" SSND : 576008 (should be 287964)", 576008, 287964),
                                       ("  Data Size   : 576000 (should be 287978)", 576000, 287978),
                                       (" BODY : 288000 (should be 143950)", 288000, 143950),
                                       ("riff : 576104 (should be 288052)", 576104, 288052),
                                       ("  Riff size : 576096 (should be 288044)", 576096, 288044)] {
            let found = AudioSource.truncation(inLog: "File : x\n\(line)\nEnd\n")
            #expect(found?.promised == promised, "\(line)")
            #expect(found?.held == held, "\(line)")
        }
    }

    @Test("the sizes a streaming writer puts in its header are not a truncation")
    func pipePlaceholders() {
        // ffmpeg's 0xFFFFFFFF (and less the header), sox's WAV 0x7FFFF000 and AIFF 0x7F000008.
        for line in ["data : 4294967295 (should be 4800)", "data : 4294967287 (should be 4800)",
                     "data : 2147479552 (should be 529200)", " SSND : 2130706440 (should be 529208)",
                     "data : 4800 (should be 0)", "  Data Size   : -1"] {
            #expect(AudioSource.truncation(inLog: line + "\n") == nil, "\(line)")
        }
    }

    @Test("lines that only look alike are skipped, and a WAV's RIFF line is not read")
    func otherShapes() {
        #expect(AudioSource.truncation(inLog: "data : 4800 (maybe 12)\n") == nil)
        #expect(AudioSource.truncation(inLog: "data 4800 (should be 12)\n") == nil)
        #expect(AudioSource.truncation(inLog: "data : x (should be 12)\n") == nil)
        #expect(AudioSource.truncation(inLog: "RIFF : 4836 (should be 1992)\n") == nil)
        #expect(AudioSource.truncation(inLog: "  Bytes/sec     : 48283 (should be 48282)\n") == nil)
    }
}

/// The audio size an MP3's Xing, Info or VBRI header gives, and the size of an ID3v2 tag.
@Suite("AudioSource MP3 headers")
struct MPEGHeaderTests {
    /// A first frame: the 4 header bytes, then `tag`, its flags and fields at `offset`.
    static func frame(_ header: [UInt8], tag: String? = nil, at offset: Int = 36, fields: [UInt8] = []) -> [UInt8] {
        var bytes = header + [UInt8](repeating: 0, count: 60)
        if let tag { bytes.replaceSubrange(offset..<offset + 4 + fields.count, with: Array(tag.utf8) + fields) }
        return bytes
    }

    /// Flags 15 (frames, bytes, TOC, quality), 1000 frames, 0x0001_0203 bytes.
    static let lame: [UInt8] = [0, 0, 0, 15, 0, 0, 0x03, 0xE8, 0, 1, 2, 3]

    @Test("the bytes field of Xing and Info after the side information and of VBRI at 36; none elsewhere")
    func tags() {
        let stereo1: [UInt8] = [0xFF, 0xFB, 0x90, 0x64]   // MPEG-1 Layer III, joint stereo
        let mono1: [UInt8] = [0xFF, 0xFB, 0x90, 0xC4]     // MPEG-1, mono: side info 17
        let mono2: [UInt8] = [0xFF, 0xF3, 0x40, 0xC4]     // MPEG-2, mono: side info 9
        let stereo2: [UInt8] = [0xFF, 0xF3, 0x40, 0x64]   // MPEG-2, stereo: side info 17
        for (header, tag, offset) in [(stereo1, "Xing", 36), (stereo1, "Info", 36), (mono1, "Info", 21),
                                      (mono2, "Xing", 13), (stereo2, "Info", 21)] {
            #expect(AudioSource.mpegAudioBytes(Self.frame(header, tag: tag, at: offset, fields: Self.lame)) == 0x0001_0203,
                    "\(tag) at \(offset)")
        }
        // Flags 2 alone: the bytes come first. Flags 1 alone: no bytes field.
        #expect(AudioSource.mpegAudioBytes(Self.frame(stereo1, tag: "Xing", at: 36, fields: [0, 0, 0, 2, 0, 0, 1, 0])) == 256)
        #expect(AudioSource.mpegAudioBytes(Self.frame(stereo1, tag: "Xing", at: 36, fields: [0, 0, 0, 1, 0, 0, 1, 0])) == nil)
        // VBRI: version, delay, quality (2 bytes each), then the bytes.
        #expect(AudioSource.mpegAudioBytes(Self.frame(stereo2, tag: "VBRI", at: 36, fields: [0, 1, 0, 0, 0, 75, 0, 0, 4, 0])) == 1024)
        #expect(AudioSource.mpegAudioBytes(Self.frame(stereo1)) == nil)
        #expect(AudioSource.mpegAudioBytes(Self.frame(mono1, tag: "Info", at: 36, fields: Self.lame)) == nil)
        #expect(AudioSource.mpegAudioBytes(Self.frame([0x49, 0x44, 0x33, 0x04], tag: "Xing", at: 36, fields: Self.lame)) == nil)
        #expect(AudioSource.mpegAudioBytes(Self.frame([0xFF, 0xEB, 0x90, 0x64], tag: "Xing", at: 36, fields: Self.lame)) == nil)
        #expect(AudioSource.mpegAudioBytes([0xFF, 0xFB]) == nil)
    }

    @Test("an ID3v2 tag's size: header, syncsafe size, footer")
    func id3() {
        #expect(AudioSource.id3v2Size(Array("ID3".utf8) + [4, 0, 0, 0, 0, 2, 0x01]) == 10 + 257)
        #expect(AudioSource.id3v2Size(Array("ID3".utf8) + [4, 0, 0x10, 0, 0, 0, 0x7F]) == 10 + 127 + 10)
        #expect(AudioSource.id3v2Size(Array("ID3".utf8) + [4, 0, 0, 0, 0, 0x80, 0]) == 0)  // not syncsafe
        #expect(AudioSource.id3v2Size([0xFF, 0xFB, 0x90, 0x64, 0, 0, 0, 0, 0, 0]) == 0)
        #expect(AudioSource.id3v2Size(Array("ID3".utf8)) == 0)
    }
}

/// Real files made by sox, lame and opusenc (Scripts/setup installs them), whole and cut.
@Suite("AudioSource truncated files", .serialized)
struct TruncatedFileTests {
    /// A temporary directory with a 3 s stereo 44.1 kHz sine WAV, removed at the end. (Half
    /// of a 1.5 s Opus file holds no audio page: libsndfile calls it malformed.)
    final class Files {
        let directory: URL
        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("dp-trunc-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try tool(["sox", "-n", "-r", "44100", "-c", "2", "-b", "16", path("source.wav"), "synth", "3", "sine", "440", "vol", "0.5"])
        }
        deinit { try? FileManager.default.removeItem(at: directory) }

        func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

        func tool(_ arguments: [String]) throws {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            p.arguments = arguments
            p.standardInput = FileHandle.nullDevice
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            p.waitUntilExit()
            try #require(p.terminationStatus == 0, "\(arguments) failed")
        }

        /// `source.wav` encoded as `name` (the encoder chosen by the extension).
        func encoded(_ name: String) throws -> String {
            let source = path("source.wav"), target = path(name)
            switch name.split(separator: ".").last {
            case "mp3": try tool(["lame", "--quiet", source, target])
            case "opus": try tool(["opusenc", "--quiet", source, target])
            default: try tool(["sox", source, target])
            }
            return target
        }

        /// The first `bytes` of `path` (default half), as `cut-NAME`.
        func cut(_ path: String, keeping bytes: Int? = nil) throws -> String {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            let target = self.path("cut-" + URL(fileURLWithPath: path).lastPathComponent)
            try data.prefix(bytes ?? data.count / 2).write(to: URL(fileURLWithPath: target))
            return target
        }
    }

    static let formats = ["wav", "aiff", "au", "w64", "8svx", "voc", "flac", "ogg", "opus", "mp3"]

    @Test("a whole file opens and decodes to its header's length from the first frame", arguments: formats)
    func whole(format: String) throws {
        let files = try Files()
        let source = try AudioSource(path: try files.encoded("x.\(format)"))
        var buffer = [Float](repeating: 0, count: 4096 * source.channels)
        var total: Int64 = 0
        while true {
            let n = buffer.withUnsafeMutableBufferPointer { source.read(into: $0.baseAddress!, frames: 4096) }
            if n == 0 { break }
            total += Int64(n)
        }
        // The check decoded the last frames, then went back to frame 0: the whole length
        // comes out once.
        #expect(total == source.frames)
        #expect(source.frames >= 132300 * 99 / 100, "\(source.frames) frames")
    }

    @Test("a FLAC file's samples after the check are the WAV's it was made from, from the first")
    func flacSamples() throws {
        let files = try Files()
        let flac = try AudioSource(path: try files.encoded("x.flac"))
        let wav = try AudioSource(path: files.path("source.wav"))
        var a = [Float](repeating: 1, count: 8192 * 2), b = [Float](repeating: 2, count: 8192 * 2)
        let n = a.withUnsafeMutableBufferPointer { flac.read(into: $0.baseAddress!, frames: 8192) }
        let m = b.withUnsafeMutableBufferPointer { wav.read(into: $0.baseAddress!, frames: 8192) }
        #expect(n == 8192 && m == 8192)
        #expect(a == b)
    }

    @Test("the first half of a file is refused with 65, naming it and saying it is truncated", arguments: formats)
    func half(format: String) throws {
        let files = try Files()
        let cut = try files.cut(try files.encoded("x.\(format)"))
        #expect {
            try AudioSource(path: cut)
        } throws: { error in
            guard let error = error as? DuckPromptError else { return false }
            return error.code == .unsupportedData && error.message.hasPrefix("\(cut): truncated: ")
        }
    }

    @Test("a file that lacks only its last 200 bytes is refused", arguments: ["flac", "mp3", "ogg", "opus", "wav"])
    func lastBytes(format: String) throws {
        let files = try Files()
        let whole = try files.encoded("x.\(format)")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: whole)[.size] as? Int)
        let cut = try files.cut(whole, keeping: size - 200)
        #expect(throws: DuckPromptError.self) { try AudioSource(path: cut) }
    }

    @Test("an MP3 with ID3v2 and ID3v1 tags plays whole; less 200 bytes (the ID3v1 tag and 72 of audio) is refused")
    func mp3WithTags() throws {
        let files = try Files()
        let whole = files.path("tagged.mp3")
        try files.tool(["lame", "--quiet", "--add-id3v2", "--tt", "Turn left", "--ta", "duckprompt",
                        files.path("source.wav"), whole])
        _ = try AudioSource(path: whole)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: whole)[.size] as? Int)
        let cut = try files.cut(whole, keeping: size - 200)
        #expect(throws: DuckPromptError.self) { try AudioSource(path: cut) }
        _ = try AudioSource(path: try files.cut(whole, keeping: size - 100))   // the ID3v1 tag alone is cut
    }

    @Test("an MP3 without a Xing or Info header is not refused: its length is libmpg123's guess")
    func mp3WithoutTag() throws {
        let files = try Files()
        let whole = files.path("notag.mp3")
        try files.tool(["lame", "--quiet", "-t", files.path("source.wav"), whole])
        let source = try AudioSource(path: whole)
        #expect(source.frames > 0)
    }
}

/// Which sample format a prompt's stream is sent in, and the float → s16 conversion.
@Suite("Stream sample format")
struct StreamSampleFormatTests {
    /// A minimal WAV: `formatTag` 1 (PCM) or 3 (IEEE float), mono, 48 kHz, `frames` of silence.
    static func wav(formatTag: UInt16, bits: UInt16, frames: Int) throws -> String {
        let bytesPerFrame = Int(bits / 8)
        var data = [UInt8]()
        func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { data += $0 } }
        func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { data += $0 } }
        data += Array("RIFF".utf8); u32(UInt32(36 + frames * bytesPerFrame)); data += Array("WAVE".utf8)
        data += Array("fmt ".utf8); u32(16); u16(formatTag); u16(1); u32(48000)
        u32(UInt32(48000 * bytesPerFrame)); u16(UInt16(bytesPerFrame)); u16(bits)
        data += Array("data".utf8); u32(UInt32(frames * bytesPerFrame))
        data += [UInt8](repeating: 0, count: frames * bytesPerFrame)
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("dp-format-\(formatTag)-\(bits)-\(getpid()).wav").path
        guard FileManager.default.createFile(atPath: path, contents: Data(data)) else { throw CocoaError(.fileWriteUnknown) }
        return path
    }

    @Test("16- and 8-bit PCM files are sent as s16, 24-bit PCM and float files as float32")
    func filesByBitDepth() throws {
        for (tag, bits, expected) in [(UInt16(1), UInt16(16), StreamSampleFormat.s16le), (1, 8, .s16le),
                                      (1, 24, .float32le), (3, 32, .float32le)] {
            let path = try Self.wav(formatTag: tag, bits: bits, frames: 480)
            defer { try? FileManager.default.removeItem(atPath: path) }
            let source = try AudioSource(path: path)
            #expect(source.streamFormat == expected, "format tag \(tag), \(bits) bits")
        }
    }

    @Test("a sequence is s16 only when every part is; silence before a source keeps its format")
    func wrappers() throws {
        let s16 = try AudioSource(path: try Self.wav(formatTag: 1, bits: 16, frames: 480))
        let float = try AudioSource(path: try Self.wav(formatTag: 3, bits: 32, frames: 480))
        #expect(PromptSequence([s16, s16]).streamFormat == .s16le)
        #expect(PromptSequence([s16, float]).streamFormat == .float32le)
        #expect(SilencePrefixed(s16, milliseconds: 100).streamFormat == .s16le)
        #expect(SilencePrefixed(float, milliseconds: 100).streamFormat == .float32le)
    }

    @Test("every 16-bit sample survives float and back; out-of-range floats are clamped")
    func conversion() {
        let all = (Int(Int16.min)...Int(Int16.max)).map { Float($0) / 32768 }
        var out = [Int16](repeating: 0, count: all.count)
        out.withUnsafeMutableBufferPointer { PromptStream.convert(all, count: all.count, to: $0.baseAddress!) }
        #expect(out.enumerated().allSatisfy { Int($0.element) == Int(Int16.min) + $0.offset })
        var edge = [Int16](repeating: 0, count: 4)
        edge.withUnsafeMutableBufferPointer { PromptStream.convert([1.0, 1.5, -1.5, 0.5], count: 4, to: $0.baseAddress!) }
        #expect(edge == [32767, 32767, -32768, 16384])
    }
}

/// A FIFO no one writes: the wait for its end stops when the prompt is cancelled.
@Suite("AudioSource endless input")
struct EndlessInputTests {
    /// A FIFO in a new temporary directory; its path.
    static func fifo() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dp-fifo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("prompt.wav").path
        try #require(mkfifo(path, 0o600) == 0)
        return path
    }

    @Test("PlayCancellation.cancel() from another thread stops the wait; cancelled before, no wait at all")
    func blocking() throws {
        let path = try Self.fifo()
        defer { try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path) }
        let cancellation = PlayCancellation()
        // A thread of its own (the global queue may be busy with other tests' blocking work):
        // the wait must end soon after cancel(), however late cancel() comes.
        let cancelledAt = Mutex<ContinuousClock.Instant?>(nil)
        let canceller = Thread {
            Thread.sleep(forTimeInterval: 0.2)
            cancelledAt.withLock { $0 = .now }
            cancellation.cancel()
        }
        let start = ContinuousClock.now
        canceller.start()
        #expect(throws: CancellationError.self) { try AudioSource(path: path, cancellation: cancellation) }
        let end = ContinuousClock.now
        let cancelled = try #require(cancelledAt.withLock { $0 }, "the wait ended before cancel()")
        #expect(end - start >= .milliseconds(150), "\(end - start)")
        #expect(end - cancelled < .seconds(1), "the wait went on \(end - cancelled) after cancel()")
        let already = PlayCancellation()
        already.cancel()
        #expect(throws: CancellationError.self) { try AudioSource(path: path, cancellation: already) }
    }

    @Test("cancelling the Task of the async play(files:) stops the wait, before any server is asked")
    func async() async throws {
        let path = try Self.fifo()
        defer { try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path) }
        var server = ServerOptions()
        server.server = "unix:/nonexistent/duckprompt-test"
        let task = Task { try await DuckPrompt.play(files: [path], server: server) }
        try await Task.sleep(for: .milliseconds(200))
        let start = ContinuousClock.now
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        // Not a speed figure: without the cancellation the open of a FIFO no one writes waits for
        // ever. The test resumes on the cooperative pool, which other tests' blocking work can
        // hold (2 threads on 2 cores): 2.7 s once, with a build running beside `swift test`.
        #expect(ContinuousClock.now - start < .seconds(5))
    }
}

/// `AudioSource(regularFile:)`, the D-Bus service's `Play`: a FIFO, a device or a directory is
/// refused at once, never opened (the open of a FIFO no one writes would wait for ever).
@Suite("AudioSource regular files only")
struct RegularFileTests {
    @Test("a FIFO, /dev/zero and a directory: .noInput 'not a regular file' (or 'is a directory') without a wait")
    func refused() throws {
        let fifo = try EndlessInputTests.fifo()
        defer { try? FileManager.default.removeItem(atPath: URL(fileURLWithPath: fifo).deletingLastPathComponent().path) }
        for (path, words) in [(fifo, "not a regular file"), ("/dev/zero", "not a regular file"), ("/tmp", "is a directory")] {
            let start = ContinuousClock.now
            #expect {
                try AudioSource(regularFile: path)
            } throws: { error in
                let e = error as? DuckPromptError
                return e?.code == .noInput && e?.message == "\(path): \(words)"
            }
            #expect(ContinuousClock.now - start < .seconds(1), "\(path)")
        }
        // The same FIFO by init(path:) would be read whole (a FIFO the command is given): not
        // tried here, it would wait for a writer.
    }
}
