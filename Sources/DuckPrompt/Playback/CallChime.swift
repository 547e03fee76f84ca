import Glibc

/// The call earcon (`CallChimeTone`) as a prompt source: mono, 48000 Hz, sent as float32.
/// `--during-call chime` plays it in place of the prompt's own sources.
package final class CallChime: LibrarySource, @unchecked Sendable {
    package let name = "call chime"
    package let rate = 48_000
    package let channels = 1
    package var duration: Double { Double(frames.count) / Double(rate) }
    package var streamFormat: StreamSampleFormat { .float32le }
    private let frames = CallChimeTone.frames(rate: 48_000)
    /// Read by one thread (the stream's pull).
    private var position = 0

    package init() {}

    package func read(into buffer: UnsafeMutablePointer<Float>, frames wanted: Int) -> Int {
        let n = min(wanted, frames.count - position)
        guard n > 0 else { return 0 }
        frames.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress! + position, count: n) }
        position += n
        return n
    }
}

/// The earcon a prompt plays instead of its speech during a call (`--during-call chime`): two
/// short rising notes (E5 then A5, 659.26 and 880 Hz), 120 and 180 ms with 10 ms raised-cosine
/// edges and 40 ms between them, at -12 dBFS peak; 340 ms in all. Short enough not to cover
/// the caller's words, different enough from a ring tone not to be taken for one. The
/// frames are computed (`frames(rate:)`), so the earcon ships inside the package (no file to
/// find or lose).
enum CallChimeTone {
    /// Each note: frequency in Hz, start and length in ms.
    static let notes: [(hz: Double, startMs: Int, lengthMs: Int)] = [(659.26, 0, 120), (880, 160, 180)]
    /// Peak amplitude: -12 dBFS.
    static let peak = 0.2512
    /// Edge length, ms.
    static let edgeMs = 10

    /// Its length in ms.
    package static var lengthMs: Int { notes.map { $0.startMs + $0.lengthMs }.max() ?? 0 }

    /// The earcon as mono float frames at `rate` Hz.
    package static func frames(rate: Int) -> [Float] {
        var out = [Float](repeating: 0, count: lengthMs * rate / 1000)
        let edge = Double(edgeMs * rate / 1000)
        for note in notes {
            let start = note.startMs * rate / 1000
            let count = note.lengthMs * rate / 1000
            for i in 0..<count where start + i < out.count {
                let fromEdge = Double(min(i, count - 1 - i))
                let gain = fromEdge >= edge ? 1 : 0.5 - 0.5 * cos(Double.pi * fromEdge / edge)
                out[start + i] += Float(peak * gain * sin(2 * Double.pi * note.hz * Double(i) / Double(rate)))
            }
        }
        return out
    }
}
