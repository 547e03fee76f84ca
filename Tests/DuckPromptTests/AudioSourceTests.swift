import Foundation
import Testing
@testable import DuckPrompt

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

    @Test("a whole file, a data chunk that holds more than promised, and an AIFF SSND chunk")
    func otherLogs() {
        #expect(AudioSource.truncation(inLog: "RIFF : 4836\nWAVE\ndata : 4800\nEnd\n") == nil)
        #expect(AudioSource.truncation(inLog: "data : 1000 (should be 4000)\n") == nil)
        let aiff = AudioSource.truncation(inLog: "FORM : 9000\nSSND : 8000 (should be 120)\n")
        #expect(aiff?.promised == 8000)
        #expect(aiff?.held == 120)
    }

    @Test("the sizes a WAV written to a pipe puts in its header are not a truncation")
    func pipePlaceholders() {
        #expect(AudioSource.truncation(inLog: "data : 4294967295 (should be 4800)\n") == nil)
        #expect(AudioSource.truncation(inLog: "data : 4294967287 (should be 4800)\n") == nil)
        #expect(AudioSource.truncation(inLog: "data : 4800 (should be 0)\n") == nil)
    }

    @Test("lines that only look alike are skipped")
    func otherShapes() {
        #expect(AudioSource.truncation(inLog: "data : 4800 (maybe 12)\n") == nil)
        #expect(AudioSource.truncation(inLog: "data 4800 (should be 12)\n") == nil)
        #expect(AudioSource.truncation(inLog: "  data : 4800 (should be 12)\n") == nil)
        #expect(AudioSource.truncation(inLog: "data : x (should be 12)\n") == nil)
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
