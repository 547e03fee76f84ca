import DuckPrompt
import Glibc

/// Level analysis of a mono recording at `BenchProbe.rate` (48 kHz), in 10 ms windows: what
/// the integration tests measure a prompt, a duck and its ramps by. Pure functions; a window
/// is `window` frames.
package enum Levels {
    /// Frames per 10 ms window at `BenchProbe.rate`.
    package static let window = BenchProbe.rate / 100

    /// Level of one frequency per 10 ms window (Goertzel over a 20 ms Hann-windowed span
    /// centred on it), in dB relative to a full-scale sine. -200 for silence.
    package static func tone(_ samples: [Float], hertz: Double) -> [Double] {
        let span = window * 2
        guard samples.count >= span else { return [] }
        let k = 2 * cos(2 * Double.pi * hertz / Double(BenchProbe.rate))
        var levels: [Double] = []
        var start = 0
        let hann = (0..<span).map { 0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(span - 1)) }
        while start + span <= samples.count {
            var s1 = 0.0, s2 = 0.0
            for i in 0..<span {
                let s = Double(samples[start + i]) * hann[i] + k * s1 - s2
                s2 = s1
                s1 = s
            }
            let power = s1 * s1 + s2 * s2 - k * s1 * s2
            let amplitude = 2 * sqrt(max(power, 0)) / (Double(span) * 0.5)
            levels.append(amplitude > 1e-10 ? 20 * log10(amplitude) : -200)
            start += window
        }
        return levels
    }

    /// RMS per 10 ms window in dBFS. -200 for silence.
    package static func rms(_ samples: [Float]) -> [Double] {
        stride(from: 0, to: samples.count - window + 1, by: window).map { start in
            var sum = 0.0
            for i in start..<start + window { sum += Double(samples[i]) * Double(samples[i]) }
            return LevelTimeline.decibels(sumOfSquares: sum, count: window) ?? -200
        }
    }

    /// The median of `values` (`LevelTimeline.median`), -200 when there are none.
    package static func median(_ values: some Collection<Double>) -> Double {
        LevelTimeline.median(Array(values)) ?? -200
    }

    /// Each window replaced by the median of the `span` windows centred on it, the same
    /// length and indices as `levels` (the first and last `span / 2` windows, which have no
    /// whole span, keep the median of their nearest whole span). A volume step lasts and
    /// passes whole; a dropout or a splash of up to `span / 2` windows (an underrun on a
    /// loaded machine, another prompt's edge) is gone.
    package static func medianFiltered(_ levels: [Double], span: Int = 5) -> [Double] {
        let half = span / 2
        guard levels.count >= span else { return levels }
        return levels.indices.map { i in
            let centre = min(max(i, half), levels.count - 1 - half)
            return median(levels[(centre - half)...(centre + half)])
        }
    }

    /// The most a ramped volume may change the level from one 10 ms window to the next, in dB,
    /// after `largestStep`'s median. A ramp moves 1 dB per write, about one write per window;
    /// the 20 dB duck set in one write shows as 10.5 to 16.7 dB in one window (`tone`'s 20 ms
    /// span, any alignment; `rms` more). The margin is for a dropout at a ramp's end, which
    /// the median cannot tell from the ramp (3.5 dB seen under ThreadSanitizer).
    package static let rampStepLimit = 6.0

    /// The largest change in dB between neighbouring 10 ms windows once a median over five
    /// windows has removed dropouts: a ramp stays near 1 dB per window, a volume set in one
    /// write shows whole. `detail` names the window and the raw levels around it.
    package static func largestStep(_ levels: [Double]) -> (dB: Double, detail: String) {
        let smooth = medianFiltered(levels)
        guard smooth.count >= 2 else { return (99, "fewer than two windows") }
        let steps = zip(smooth, smooth.dropFirst()).map { abs($1 - $0) }
        let at = steps.indices.max { steps[$0] < steps[$1] }!
        let raw = levels[max(0, at - 4)..<min(levels.count, at + 6)].map { formatted("%.1f", $0) }
        return (steps[at], formatted("%.2f dB at window %ld of %ld (raw: ", steps[at], at, steps.count)
                    + raw.joined(separator: " ") + ")")
    }

    /// Runs of windows at or above `threshold`, bridging gaps of up to `gap` windows, with at
    /// least `minCount` windows above, in time order, as (first, last, count of windows
    /// above): the prompts heard, without the stray window another prompt's edge splashes into
    /// their frequency.
    package static func runs(_ levels: [Double], above threshold: Double, gap: Int = 2,
                     minCount: Int = 10) -> [(first: Int, last: Int, count: Int)] {
        var found: [(first: Int, last: Int, count: Int)] = []
        var current: (first: Int, last: Int, count: Int)? = nil
        for i in levels.indices where levels[i] >= threshold {
            if let c = current, i - c.last <= gap + 1 {
                current = (c.first, i, c.count + 1)
            } else {
                if let c = current, c.count >= minCount { found.append(c) }
                current = (i, i, 1)
            }
        }
        if let c = current, c.count >= minCount { found.append(c) }
        return found
    }

    /// How many 10 ms windows' worth of sound a recording holds that has one sound at a steady
    /// level and silence around it: the recording's energy over the energy of a window the
    /// sound fills (the median of the windows within 1 dB of the loudest, by `rms`). Unlike a
    /// count of windows above a threshold, a dropout inside the sound (an underrun that delays
    /// its rest) does not add the window it splits: the energy is the same. nil when no window
    /// is above `floor` dBFS.
    package static func heardWindows(_ samples: [Float], floor: Double = -60) -> Double? {
        let levels = rms(samples)
        guard let loudest = levels.max(), loudest > floor else { return nil }
        let full = median(levels.filter { $0 >= loudest - 1 })
        return levels.filter { $0 > floor }.reduce(0.0) { $0 + pow(10, ($1 - full) / 10) }
    }

    /// Indices of windows at or above `threshold`, as (first, last, count).
    package static func span(_ levels: [Double], above threshold: Double) -> (first: Int, last: Int, count: Int)? {
        let hits = levels.indices.filter { levels[$0] >= threshold }
        guard let first = hits.first, let last = hits.last else { return nil }
        return (first, last, hits.count)
    }
}
