import FoundationEssentials

/// Several sources of the same rate and channel count played as one, back to back without a
/// gap (`duckprompt play chime.wav turn-left.wav`).
package final class PromptSequence: PromptSource, @unchecked Sendable {
    public let parts: [any PromptSource]
    private var current = 0
    public var name: String { parts.map(\.name).joined(separator: " + ") }
    public var rate: Int { parts[0].rate }
    public var channels: Int { parts[0].channels }
    public var duration: Double { parts.reduce(0) { $0 + $1.duration } }
    /// `.s16le` when every part is, else `.float32le`.
    public var streamFormat: StreamSampleFormat { parts.allSatisfy { $0.streamFormat == .s16le } ? .s16le : .float32le }

    /// - Precondition: `parts` is not empty and all have the same rate and channel count.
    public init(_ parts: [any PromptSource]) {
        precondition(!parts.isEmpty && parts.allSatisfy { $0.rate == parts[0].rate && $0.channels == parts[0].channels })
        self.parts = parts
    }

    public func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        var filled = 0
        while filled < frames, current < parts.count {
            let n = parts[current].read(into: buffer + filled * channels, frames: frames - filled)
            if n == 0 { current += 1 } else { filled += n }
        }
        return filled
    }

    /// Groups consecutive sources of the same format: each group plays as one gapless stream.
    public static func groups(_ sources: [any PromptSource]) -> [any PromptSource] {
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
package final class SilencePrefixed: PromptSource, @unchecked Sendable {
    public let inner: any PromptSource
    /// Silence before the first sample, in frames at the inner source's rate.
    public let silenceFrames: Int
    private var silenceLeft: Int
    public var name: String { inner.name }
    public var rate: Int { inner.rate }
    public var channels: Int { inner.channels }
    public var duration: Double { inner.duration + Double(silenceFrames) / Double(rate) }
    public var streamFormat: StreamSampleFormat { inner.streamFormat }

    /// - Parameters:
    ///   - milliseconds: silence length in ms (>= 0).
    public init(_ inner: any PromptSource, milliseconds: Int) {
        self.inner = inner
        silenceFrames = max(0, milliseconds) * inner.rate / 1000
        silenceLeft = silenceFrames
    }

    public func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) -> Int {
        if silenceLeft > 0 {
            let n = min(frames, silenceLeft)
            buffer.initialize(repeating: 0, count: n * channels)
            silenceLeft -= n
            return n
        }
        return inner.read(into: buffer, frames: frames)
    }
}
