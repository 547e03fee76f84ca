import FoundationEssentials

/// Several sources of the same rate and channel count played as one, back to back without a
/// gap (`duckprompt play chime.wav turn-left.wav`).
package final class PromptSequence: LibrarySource, @unchecked Sendable {
    package let parts: [any PromptSource]
    private var current = 0
    package var name: String { parts.map(\.name).joined(separator: " + ") }
    package var rate: Int { parts[0].rate }
    package var channels: Int { parts[0].channels }
    package var duration: Double { parts.reduce(0) { $0 + $1.duration } }
    /// `.s16le` when every part is, else `.float32le`.
    package var streamFormat: StreamSampleFormat { parts.allSatisfy { $0.sampleFormat == .s16le } ? .s16le : .float32le }

    /// - Precondition: `parts` is not empty and all have the same rate and channel count.
    package init(_ parts: [any PromptSource]) {
        precondition(!parts.isEmpty && parts.allSatisfy { $0.rate == parts[0].rate && $0.channels == parts[0].channels })
        self.parts = parts
    }

    package func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        var filled = 0
        while filled < frames, current < parts.count {
            let n = parts[current].read(into: buffer + filled * channels, frames: frames - filled)
            if n == 0 { current += 1 } else { filled += n }
        }
        return filled
    }

    /// Groups consecutive sources of the same format: each group plays as one gapless stream.
    package static func groups(_ sources: [any PromptSource]) -> [any PromptSource] {
        var groups: [[any PromptSource]] = []
        for source in sources {
            if let last = groups.last?.last, last.rate == source.rate, last.channels == source.channels {
                groups[groups.count - 1].append(source)
            } else {
                groups.append([source])
            }
        }
        return groups.map { $0.count == 1 ? $0[0] : PromptSequence($0) }
    }
}

/// A source preceded by silence: the pre-roll that lets a sleeping device (Bluetooth, HDMI)
/// wake up before the prompt's first sample.
package final class SilencePrefixed: LibrarySource, @unchecked Sendable {
    package let inner: any PromptSource
    /// Silence before the first sample, in frames at the inner source's rate.
    package let silenceFrames: Int
    private var silenceLeft: Int
    package var name: String { inner.name }
    package var rate: Int { inner.rate }
    package var channels: Int { inner.channels }
    package var duration: Double { inner.duration + Double(silenceFrames) / Double(rate) }
    package var streamFormat: StreamSampleFormat { inner.sampleFormat }

    /// - Parameters:
    ///   - milliseconds: silence length in ms (>= 0).
    package init(_ inner: any PromptSource, milliseconds: Int) {
        self.inner = inner
        silenceFrames = max(0, milliseconds) * inner.rate / 1000
        silenceLeft = silenceFrames
    }

    package func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        if silenceLeft > 0 {
            let n = min(frames, silenceLeft)
            buffer.initialize(repeating: 0, count: n * channels)
            silenceLeft -= n
            return n
        }
        return inner.read(into: buffer, frames: frames)
    }
}
