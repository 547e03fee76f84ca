/// A volume ramp in dB: where each step lands and when, planned in 10 ms steps.
///
/// Pure value type. The gains are relative to each stream's own volume: 0 dB is the stream as
/// it was found, the duck depth (e.g. -20 dB) is fully ducked.
package struct Ramp: Sendable, Equatable {
    /// One step: at `offsetMs` after the ramp starts, apply `gain`. The first step comes one
    /// interval after the start; the last one, at the full duration, lands exactly on `to`.
    package struct Step: Sendable, Equatable {
        /// Milliseconds from the ramp's start.
        package var offsetMs: Int
        /// Gain in dB relative to the stream's own volume.
        package var gain: Double
    }

    /// Shortest interval between two steps, in ms: the size of the window in which a listener
    /// must not hear more than `maxStepDecibels` change.
    package static let stepIntervalMs = 10
    /// Largest change between two steps, in dB. Kept well below the 3 dB per 10 ms bound: a
    /// 10 ms window that straddles two steps still changes by at most 2 dB.
    package static let maxStepDecibels = 1.0

    /// Most volume writes one ramp sends, all streams together, before its steps grow: a busy
    /// desktop's server (WirePlumber saves every change) must not be flooded. 100 streams
    /// ramped over 20 dB in 1 dB steps stay within it.
    package static let writeBudget = 2000
    /// Largest change between two steps when the budget makes steps grow, in dB: the bound a
    /// listener's 10 ms window must not exceed.
    package static let maxBusyStepDecibels = 3.0

    package let steps: [Step]

    /// Plans a ramp from one gain to another, linear in dB.
    ///
    /// - Parameters:
    ///   - from: starting gain in dB (finite).
    ///   - to: final gain in dB (finite); the last step is exactly `to`.
    ///   - durationMs: requested length in ms (>= 0). A ramp that would need steps larger than
    ///     `maxStepDecibels` per 10 ms is lengthened to `|to - from| / maxStepDecibels * 10` ms.
    ///   - streams: how many streams every step writes (>= 1). When the steps times the streams
    ///     exceed `writeBudget`, the ramp takes fewer, larger steps (at most
    ///     `maxBusyStepDecibels` each) over the same length.
    package init(from: Double, to: Double, durationMs: Int, streams: Int = 1) {
        let span = to - from
        // A span that is zero, or not finite (a mute: -inf dB), is one step: there is no
        // smooth way to reach -inf in dB steps. Depths are within PlayOptions.duckRange
        // (-200 dB; `PlayOptions.validate()` refuses more before anything is ducked, and a
        // journal is validated against it), so a span over 1000 dB is never asked for: were
        // it, one step rather than a million.
        if span == 0 || !span.isFinite || abs(span) > 1000 {
            steps = [Step(offsetMs: 0, gain: to)]
            return
        }
        let byTime = max(1, (max(0, durationMs) + Ramp.stepIntervalMs - 1) / Ramp.stepIntervalMs)
        let byDepth = Int((abs(span) / Ramp.maxStepDecibels).rounded(.up))
        var count = max(byTime, byDepth)
        var shortest = Ramp.stepIntervalMs
        if max(1, streams) * count > Ramp.writeBudget {
            let fewest = Int((abs(span) / Ramp.maxBusyStepDecibels).rounded(.up))
            count = min(count, max(fewest, Ramp.writeBudget / max(1, streams), 1))
            // Steps over 1.5 dB come at least two intervals apart, so that no 10 ms window
            // holds two of them.
            if abs(span) / Double(count) > 1.5 { shortest = 2 * Ramp.stepIntervalMs }
        }
        let interval = max(shortest, durationMs / count)
        steps = (1...count).map { i in
            Step(offsetMs: i * interval, gain: i == count ? to : from + span * Double(i) / Double(count))
        }
    }

    /// Total length in ms: the offset of the last step.
    package var durationMs: Int { steps.last?.offsetMs ?? 0 }
}

/// When to send each step of a `Ramp`.
///
/// Pure value type; the caller passes the time. Each step is due at its planned offset; steps
/// are never skipped, and two are sent at least `minimumSpacingMs` apart, so that no 10 ms
/// window (closed at both ends) holds more than 3 dB of steps however late the caller wakes.
/// A wake-up late by less than the interval minus that spacing (4 ms for 1 dB steps 10 ms
/// apart) delays only the step it was for: the next one is still due at its own offset; later
/// wake-ups stretch the ramp by the difference. (A ramp that waited a whole interval after
/// every late step grew by about 1 ms a step: 40 ms over a 500 ms release.) The spacing holds
/// for the sends; a server that stalls may apply queued steps closer together.
package struct RampSchedule: Sendable {
    package let ramp: Ramp
    /// Index in `ramp.steps` of the next step to send.
    package private(set) var next = 0
    /// When the last step was sent, in ms from the ramp's start.
    private var lastSentMs: Double? = nil

    package init(_ ramp: Ramp) { self.ramp = ramp }

    /// Whether every step has been sent.
    package var isDone: Bool { next >= ramp.steps.count }

    /// Least time between two sends, in ms, for steps of `stepDecibels`: a closed 10 ms
    /// window holds at most two steps of up to 1.5 dB (6 ms apart), or one larger step (11 ms).
    package static func minimumSpacingMs(stepDecibels: Double) -> Double {
        Double(Ramp.stepIntervalMs) * (abs(stepDecibels) <= 1.5 + 1e-9 ? 0.5 : 1) + 1
    }

    /// When the next step is due, in ms from the ramp's start; nil when all were sent.
    package var dueMs: Double? {
        guard !isDone else { return nil }
        let step = ramp.steps[next]
        let planned = Double(step.offsetMs)
        guard let lastSentMs else { return planned }
        let previous = next > 0 ? ramp.steps[next - 1].gain : step.gain
        return max(planned, lastSentMs + Self.minimumSpacingMs(stepDecibels: step.gain - previous))
    }

    /// The next step, if it is due at `elapsedMs` (ms from the ramp's start); it counts as sent.
    package mutating func take(atMs elapsedMs: Double) -> Ramp.Step? {
        guard let due = dueMs, elapsedMs >= due else { return nil }
        defer { next += 1 }
        lastSentMs = elapsedMs
        return ramp.steps[next]
    }
}
