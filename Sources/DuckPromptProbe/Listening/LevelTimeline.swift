import DuckPrompt
import Glibc

/// What a listener heard on one sink: its monitor's level, one RMS value per 10 ms window.
/// Pure: built by `MonitorLevels` from a recording, read by `ListeningAnalysis`.
package struct LevelTimeline: Sendable, Equatable {
    /// The length of one window, in seconds (480 frames at 48 kHz).
    package static let windowSeconds = 0.01
    /// The level above which a window counts as heard, in dBFS RMS: 50 dB under the lab's
    /// music ducked by 20 dB, far over a null sink's silence (digital zero).
    package static let heardThreshold = -70.0
    /// Quiet windows a stretch may hold and still be one stretch (a word gap, a part boundary).
    package static let bridgedWindows = 5
    /// The fewest windows a stretch needs to count (20 ms).
    package static let shortestStretch = 2

    /// When the first window began, in seconds on the lab's clock (0 = COMMAND started).
    package var start: Double
    /// RMS level of each window in dBFS; nil for digital silence (every sample 0), and for a
    /// window no sample arrived for (then in `gaps` too).
    package var levels: [Double?]
    /// The stretches within the timeline the monitor's recording has no true samples for
    /// (`Gap.Reason`): a nil level there is not silence heard, but nothing known.
    package var gaps: [Gap]

    package init(start: Double, levels: [Double?], gaps: [Gap] = []) {
        self.start = start
        self.levels = levels
        self.gaps = gaps
    }

    /// When the last window ends.
    package var end: Double { time(ofWindow: levels.count) }

    /// A stretch of the lab's clock the recording has no samples for.
    package struct Gap: Sendable, Equatable {
        package enum Reason: String, Sendable, Codable, Equatable {
            /// The server reported a hole in the recording (`pa_stream_peek` with no data):
            /// recorded as zeros.
            case hole
            /// No sample arrived for it: windows went missing between the ones placed
            /// (`MonitorLevels.placed`), a recording that stalled or lost data.
            case noSamples = "no-samples"
            /// Before the recording's first window or after its last one: it started late, or
            /// ended (failed, its server gone) before the run did.
            case notRecording = "not-recording"
        }
        package var start: Double
        package var end: Double
        package var reason: Reason
        package init(start: Double, end: Double, reason: Reason) {
            self.start = start
            self.end = end
            self.reason = reason
        }
    }

    /// The fewest missing windows in a row that count as a gap (30 ms): placement by the
    /// server's timing answers leaves a single empty slot now and then (its jitter).
    package static let shortestGap = 3

    /// What of `from ..< to` (seconds on the lab's clock) the recording has no samples for:
    /// its `gaps` clipped to it, and what of it lies before `start` or after `end`
    /// (`.notRecording`), in time order.
    package func unrecorded(from: Double, to: Double) -> [Gap] {
        guard from < to else { return [] }
        var parts: [Gap] = []
        if from < start { parts.append(Gap(start: from, end: min(to, start), reason: .notRecording)) }
        for gap in gaps where gap.start < to && gap.end > from {
            parts.append(Gap(start: max(gap.start, from), end: min(gap.end, to), reason: gap.reason))
        }
        if to > end { parts.append(Gap(start: max(from, end), end: to, reason: .notRecording)) }
        return parts
    }

    /// Gaps from per-window marks: runs of `marked` windows (`hole`, at least one window) and
    /// of `missing` ones (`noSamples`, at least `shortestGap` windows), in time order.
    package static func gaps(start: Double, holes: [Bool], missing: [Bool]) -> [Gap] {
        func runs(_ marks: [Bool], shortest: Int, reason: Gap.Reason) -> [Gap] {
            var found: [Gap] = []
            var first: Int?
            for i in 0...marks.count {
                let marked = i < marks.count && marks[i]
                if marked, first == nil { first = i }
                if !marked, let begin = first {
                    if i - begin >= shortest {
                        found.append(Gap(start: start + Double(begin) * windowSeconds, end: start + Double(i) * windowSeconds,
                                         reason: reason))
                    }
                    first = nil
                }
            }
            return found
        }
        return (runs(holes, shortest: 1, reason: .hole) + runs(missing, shortest: shortestGap, reason: .noSamples))
            .sorted { $0.start < $1.start }
    }

    /// A stretch of time on the lab's clock, in seconds.
    package struct Stretch: Sendable, Equatable {
        package var start: Double
        package var end: Double
        /// The median level of its windows that were heard, in dBFS RMS.
        package var level: Double
        package init(start: Double, end: Double, level: Double) {
            self.start = start
            self.end = end
            self.level = level
        }
    }

    /// The window that holds `time` (may be out of range).
    package func window(at time: Double) -> Int {
        Int(((time - start) / Self.windowSeconds + 1e-6).rounded(.down))
    }

    /// When window `index` begins.
    package func time(ofWindow index: Int) -> Double { start + Double(index) * Self.windowSeconds }

    /// The stretches in which sound was heard: windows above `heardThreshold`, joined across
    /// at most `bridgedWindows` quiet ones, at least `shortestStretch` windows long.
    package var heardStretches: [Stretch] {
        var stretches: [Stretch] = []
        var first: Int?
        var last = 0
        func close() {
            guard let begin = first, last - begin + 1 >= Self.shortestStretch else { return }
            let heard = (begin...last).compactMap { levels[$0] }.filter { $0 > Self.heardThreshold }
            stretches.append(Stretch(start: time(ofWindow: begin), end: time(ofWindow: last + 1),
                                     level: Self.median(heard) ?? Self.heardThreshold))
        }
        for (i, level) in levels.enumerated() {
            guard let level, level > Self.heardThreshold else { continue }
            if let _ = first, i - last - 1 <= Self.bridgedWindows {
                last = i
            } else {
                close()
                first = i
                last = i
            }
        }
        close()
        return stretches
    }

    /// The median level of the windows that begin in `from ..< to` (seconds on the lab's
    /// clock), digital silence counting as -200 dBFS; nil when no window begins there.
    package func medianLevel(from: Double, to: Double) -> Double? {
        // A nanosecond's slack: 0.02 / 0.01 is 2.0000000000000004 in binary.
        let lower = max(0, Int(((from - start) / Self.windowSeconds - 1e-6).rounded(.up)))
        let upper = min(levels.count, Int(((to - start) / Self.windowSeconds - 1e-6).rounded(.up)))
        guard lower < upper else { return nil }
        return Self.median(levels[lower..<upper].map { $0 ?? -200 })
    }

    /// The median of `values`; nil when there are none.
    package static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let mid = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
    }

    /// RMS of `sumOfSquares` over `count` samples in dBFS (a full-scale square wave is 0);
    /// nil for digital silence.
    package static func decibels(sumOfSquares: Double, count: Int) -> Double? {
        guard count > 0, sumOfSquares > 0 else { return nil }
        return 10 * log10(sumOfSquares / Double(count))
    }
}
