import DuckPrompt
import DuckPromptProbe
import Foundation

/// Test audio written by the bench itself (no sox needed): 16-bit PCM WAV of a sine.
enum TestSignal {
    /// Writes `seconds` of a `hertz` sine at `amplitude` (starting at phase 0, so the first
    /// sample after the first is already loud), `channels` channels at 48 kHz.
    static func writeSine(to path: String, hertz: Double, seconds: Double, amplitude: Double,
                          channels: Int = 1) throws {
        let rate = BenchProbe.rate
        let frames = Int(seconds * Double(rate))
        var pcm = Data(capacity: frames * channels * 2)
        for n in 0..<frames {
            let v = Int16((amplitude * sin(2 * Double.pi * hertz * Double(n) / Double(rate)) * 32767).rounded())
            for _ in 0..<channels { withUnsafeBytes(of: v.littleEndian) { pcm.append(contentsOf: $0) } }
        }
        var header = Data()
        func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { header.append(contentsOf: $0) } }
        func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { header.append(contentsOf: $0) } }
        header.append(contentsOf: Array("RIFF".utf8)); u32(UInt32(36 + pcm.count))
        header.append(contentsOf: Array("WAVEfmt ".utf8)); u32(16); u16(1); u16(UInt16(channels))
        u32(UInt32(rate)); u32(UInt32(rate * channels * 2)); u16(UInt16(channels * 2)); u16(16)
        header.append(contentsOf: Array("data".utf8)); u32(UInt32(pcm.count))
        try (header + pcm).write(to: URL(fileURLWithPath: path))
    }
}
