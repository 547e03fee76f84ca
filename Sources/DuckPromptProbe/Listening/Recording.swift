import DuckPrompt
import Glibc

/// A stretch of a monitor recording with the arrival stamp of every chunk.
///
/// When a frame was heard: a chunk that arrived at `t` ending at frame `F` holds frame `f`
/// no later than `t - (F - 1 - f) / rate` (the frames after it took that long to play). The
/// lowest such bound over the chunks that arrive within a second is the frame's time: this
/// removes the jitter of delivery and leaves the recorder's smallest delay, which is the same
/// for every tool measured.
package struct Recording {
    package var samples: [Float]
    package var arrivals: [(nanoseconds: UInt64, frames: Int)]
    /// The server's timing answers: (monotonic ns, frame heard then), `BenchProbe.timings`.
    package var timings: [(nanoseconds: UInt64, frames: Double)] = []
    package static let rate = Double(BenchProbe.rate)

    /// Monotonic ns at which frame `f` was heard on the sink, nil when no chunk holds it yet:
    /// by the server's timing answers within a second of its arrival (the median of their
    /// offsets between frame position and clock), or, with fewer than three of them or an
    /// implausible answer, by the arrival bound.
    package func time(ofFrame f: Int) -> UInt64? {
        guard let bound = boundTime(ofFrame: f) else { return nil }
        return timedTime(ofFrame: f, near: bound) ?? bound
    }

    /// How far the timing answers may put a frame from its arrival bound before they are
    /// not believed, in ns: a record fragment (5 or 20 ms) plus a null sink's block.
    package static let plausibleCorrection: Double = 40_000_000

    /// Frame `f`'s time by the timing answers within a second of `t` (its arrival bound); nil
    /// with fewer than 3, or when they put it further than `plausibleCorrection` from `t`.
    package func timedTime(ofFrame f: Int, near t: UInt64) -> UInt64? {
        let offsets = timings.filter { $0.nanoseconds + 1_000_000_000 >= t && $0.nanoseconds <= t + 1_000_000_000 }
            .map { Double($0.nanoseconds) - $0.frames / Recording.rate * 1e9 }.sorted()
        guard offsets.count >= 3 else { return nil }
        let at = offsets[offsets.count / 2] + Double(f) / Recording.rate * 1e9
        guard at > 0, abs(at - Double(t)) <= Recording.plausibleCorrection else { return nil }
        return UInt64(at)
    }

    /// Frame `f`'s time by the arrival bound: no later than any chunk holding it arrived,
    /// less the frames after it in that chunk.
    package func boundTime(ofFrame f: Int) -> UInt64? {
        var lo = 0, hi = arrivals.count
        while lo < hi {   // first chunk whose end is past f
            let mid = (lo + hi) / 2
            if arrivals[mid].frames > f { hi = mid } else { lo = mid + 1 }
        }
        guard lo < arrivals.count else { return nil }
        let horizon = arrivals[lo].nanoseconds + 1_000_000_000
        var best = UInt64.max
        var k = lo
        while k < arrivals.count && arrivals[k].nanoseconds <= horizon {
            let after = Double(arrivals[k].frames - 1 - f) / Recording.rate
            let bound = arrivals[k].nanoseconds &- UInt64(after * 1e9)
            best = min(best, bound)
            k += 1
        }
        return best
    }

    /// The first frame that arrived at or after `t` (the end when none has).
    package func firstFrame(arrivingAfter t: UInt64) -> Int {
        var previous = 0
        for a in arrivals {
            if a.nanoseconds >= t { return previous }
            previous = a.frames
        }
        return samples.count
    }

    /// The first and last frame of a 1 kHz blip (at amplitude 0.5) in `range`: where the
    /// sample-to-sample step exceeds `threshold`. A step filter passes 1 kHz at 0.5
    /// (step 0.065) and rejects the 200 Hz "music" at 0.1 (step 0.003), ducked or not.
    /// - Parameter sustained: when above 0, a first frame counts only when at least half of
    ///   the `sustained` steps from it pass too: a tone does, a single jump does not (PipeWire
    ///   applies a duck's volume ramp a cycle at a time, a step in louder music at each cycle).
    package func blip(in range: Range<Int>, threshold: Float = 0.02, sustained: Int = 0) -> (first: Int, last: Int)? {
        let lower = max(1, range.lowerBound), upper = min(samples.count, range.upperBound)
        guard lower < upper else { return nil }
        func passes(_ i: Int) -> Bool { abs(samples[i] - samples[i - 1]) > threshold }
        var first: Int? = nil, last = 0
        for i in lower..<upper where passes(i) {
            if first == nil, (i..<min(upper, i + sustained)).filter(passes).count * 2 >= sustained { first = i }
            if first != nil { last = i }
        }
        return first.map { ($0, last) }
    }
}

/// A prompt as the monitor heard it: its first and last sample, in monotonic ns.
package struct HeardPrompt {
    package var first: UInt64, last: UInt64
    /// How far the server's timing answers moved the first sample from its arrival bound, in
    /// ms (positive: later); nil when they were too few or implausible and the bound was used.
    package var correctionMs: Double?
}

extension Recording {
    /// The blip heard after `t` (monotonic ns: the run's start), placed by `time(ofFrame:)`;
    /// nil when none arrived after `t`. `sustained`: as `blip`'s.
    package func prompt(after t: UInt64, sustained: Int = 0) -> HeardPrompt? {
        guard let found = blip(in: firstFrame(arrivingAfter: t)..<samples.count, sustained: sustained),
              let bound = boundTime(ofFrame: found.first),
              let first = time(ofFrame: found.first), let last = time(ofFrame: found.last) else { return nil }
        let correction = timedTime(ofFrame: found.first, near: bound).map { (Double($0) - Double(bound)) / 1e6 }
        return HeardPrompt(first: first, last: last, correctionMs: correction)
    }
}

extension BenchProbe {
    /// The prompt a run that began at `started` and ended at `ended` (monotonic ns) played:
    /// waits until the recording holds 300 ms past `ended` (the monitor lags), then looks for
    /// it after `started`.
    package func heardPrompt(started: UInt64, ended: UInt64) -> HeardPrompt? {
        waitForRecording(past: ended, marginMs: 300)
        return snapshotRecording().prompt(after: started)
    }

    /// The recording so far, copied.
    package func snapshotRecording() -> Recording {
        let timings = self.timings
        return withRecording { samples, arrivals, _ in Recording(samples: samples, arrivals: arrivals, timings: timings) }
    }

    /// Waits until a chunk that arrived after `t` plus `marginMs` is in (at most 5 s).
    package func waitForRecording(past t: UInt64, marginMs: Int) {
        let needed = t + UInt64(marginMs) * 1_000_000
        let deadline = monotonicNanoseconds() + 5_000_000_000
        while recorded.lastArrival < needed && monotonicNanoseconds() < deadline { usleep(10_000) }
    }
}
