/// A volume ramp in dB: where each step lands and when, planned in 10 ms steps.
///
/// Pure value type. The gains are relative to each stream's own volume: 0 dB is the stream as
/// it was found, the duck depth (e.g. -20 dB) is fully ducked.
public struct Ramp: Sendable, Equatable {
    /// One step: at `offsetMs` after the ramp starts, apply `gain`. The first step comes one
    /// interval after the start; the last one, at the full duration, lands exactly on `to`.
    public struct Step: Sendable, Equatable {
        /// Milliseconds from the ramp's start.
        public var offsetMs: Int
        /// Gain in dB relative to the stream's own volume.
        public var gain: Double
    }

    /// Shortest interval between two steps, in ms: the size of the window in which a listener
    /// must not hear more than `maxStepDecibels` change.
    public static let stepIntervalMs = 10
    /// Largest change between two steps, in dB. Kept well below the 3 dB per 10 ms bound: a
    /// 10 ms window that straddles two steps still changes by at most 2 dB.
    public static let maxStepDecibels = 1.0

    public let steps: [Step]

    /// Plans a ramp from one gain to another, linear in dB.
    ///
    /// - Parameters:
    ///   - from: starting gain in dB (finite).
    ///   - to: final gain in dB (finite); the last step is exactly `to`.
    ///   - durationMs: requested length in ms (>= 0). A ramp that would need steps larger than
    ///     `maxStepDecibels` per 10 ms is lengthened to `|to - from| / maxStepDecibels * 10` ms.
    public init(from: Double, to: Double, durationMs: Int) {
        let span = to - from
        // A span that is zero, or not finite (a mute: -inf dB), is one step: there is no
        // smooth way to reach -inf in dB steps, and callers limit depths (-200 dB in the CLI).
        if span == 0 || !span.isFinite || abs(span) > 1000 {
            steps = [Step(offsetMs: 0, gain: to)]
            return
        }
        let byTime = max(1, (max(0, durationMs) + Ramp.stepIntervalMs - 1) / Ramp.stepIntervalMs)
        let byDepth = Int((abs(span) / Ramp.maxStepDecibels).rounded(.up))
        let count = max(byTime, byDepth)
        let interval = max(Ramp.stepIntervalMs, durationMs / count)
        steps = (1...count).map { i in
            Step(offsetMs: i * interval, gain: i == count ? to : from + span * Double(i) / Double(count))
        }
    }

    /// Total length in ms: the offset of the last step.
    public var durationMs: Int { steps.last?.offsetMs ?? 0 }
}
