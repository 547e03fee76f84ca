import DuckPrompt
import Glibc

/// One monitor recording's running sums (loop thread; guarded by the loop lock).
private final class LevelBox: @unchecked Sendable {
    let sink: String
    var stream: RecordStream?
    /// Finished windows: RMS in dBFS, nil for digital silence.
    var levels: [Double?] = []
    /// Per finished window: whether a chunk with a hole (zeros for samples the server did not
    /// have) went into it.
    var holes: [Bool] = []
    var holeInWindow = false
    var sumOfSquares = 0.0
    var inWindow = 0
    /// Frames received in all (holes the server reported count as silence).
    var frames = 0
    /// The earliest instant frame 0 can have been heard, in monotonic ns: the least of
    /// (a chunk's arrival − the frames received by then ÷ rate) over every chunk, and at most
    /// when the recording started.
    var origin: Int64
    /// The server's timing answers: (monotonic ns, the frame heard then), one a chunk.
    var timings: [(nanoseconds: UInt64, frames: Double)] = []
    let bytesPerSecond = Double(BenchProbe.rate * 4 * MonitorLevels.channels)
    init(sink: String, started: Int64) {
        self.sink = sink
        origin = started
    }
}

/// Records sinks' monitors for `duckprompt lab` and keeps what a listener heard as 10 ms RMS
/// levels (`LevelTimeline`), not the samples: a long run costs 100 values a second a sink.
///
/// All recordings share one connection. Each is stereo float32 at 48 kHz, 10 ms fragments; a
/// window's level is the RMS of both channels' samples (a sine at full scale in both is
/// -3 dBFS). A window's time comes from the chunks' arrival stamps: frame 0 is placed at the
/// earliest (arrival − frames so far ÷ rate), so every frame is placed no later than it was
/// heard, within the server's scheduling jitter of it. That bound is the fallback: after each
/// chunk the recording asks the server which of its frames is being heard
/// (`MonitorTiming.heardFrame`), and a window is placed by the answer nearest to it. This
/// matters on PulseAudio, whose null sink renders a block of up to its latency ahead and hands
/// it to the monitor at once, and on both servers after a sink was suspended
/// (module-suspend-on-idle, WirePlumber's suspend-node), whose monitor sends nothing
/// meanwhile: the windows after the pause are placed by the answers that follow it, and the
/// pause is silent windows.
/// Thread-safe: every call takes the loop lock.
/// libpulse: a `RecordStream` on `SINK.monitor` (`pa_stream_connect_record` with
/// `PA_STREAM_ADJUST_LATENCY` and `PA_STREAM_DONT_MOVE`, `pa_stream_peek`, `pa_stream_drop`,
/// `pa_stream_update_timing_info`).
package final class MonitorLevels: @unchecked Sendable {
    /// Frames per window at the recording rate (10 ms at 48 kHz).
    static let framesPerWindow = BenchProbe.rate / 100
    /// Channels recorded: a stereo sink's own two, so that a level does not depend on how a
    /// server mixes them down (PulseAudio averages left and right, PipeWire adds them).
    static let channels = 2

    private let connection: PulseConnection
    private var boxes: [LevelBox] = []

    /// Connects to the server at `server` (nil: the default).
    /// - Throws: `.unavailable` when no server answers within `timeout`.
    package init(server: String?, timeout: Duration = .seconds(5)) throws {
        connection = try PulseConnection(server: server, clientName: "duckprompt lab recorder", timeout: timeout)
    }

    deinit { stop() }

    /// The sinks being recorded.
    package var sinks: [String] { connection.withLock { boxes.map(\.sink) } }

    /// Starts recording `sink`'s monitor; nothing when it is recorded already.
    /// - Throws: `.unavailable` when the server refuses the stream or does not connect it in
    ///   time.
    package func record(_ sink: String) throws {
        try connection.withLock {
            guard !boxes.contains(where: { $0.sink == sink }) else { return }
            let box = LevelBox(sink: sink, started: Int64(monotonicNanoseconds()))
            // PA_STREAM_DONT_MOVE (RecordStream): PulseAudio otherwise moves a recorder to
            // another monitor when the default sink changes or its sink goes
            // (module-stream-restore: every recorder of the lab shares one restore id), and the
            // levels would be another sink's.
            let stream = try RecordStream(connection: connection, source: "\(sink).monitor", name: "monitor of \(sink)",
                                          rate: BenchProbe.rate, channels: Self.channels, fragmentMs: 10,
                                          properties: [StreamLog.labProperty: "recorder"],
                                          onChunk: { samples, holes, arrival in Self.add(samples, holes: holes, arrival: arrival, to: box) },
                                          onTiming: { timing in Self.note(timing, in: box) })
            box.stream = stream
            boxes.append(box)
            try PulseStream.waitReadyLocked([stream], refused: "cannot record \(sink).monitor",
                                            what: "recording \(sink).monitor")
        }
    }

    /// A chunk's samples (`RecordStream.Chunk`; holes are zeros) added to the windows' squares,
    /// and the arrival bound of frame 0 (loop thread).
    private static func add(_ samples: UnsafeBufferPointer<Float>, holes: Int, arrival: UInt64, to box: LevelBox) {
        let frames = samples.count / channels
        // Where in the chunk the holes were is not told: every window it touches is marked.
        if holes > 0 { box.holeInWindow = true }
        for frame in 0..<frames {
            for channel in 0..<channels {
                let sample = Double(samples[frame * channels + channel])
                box.sumOfSquares += sample * sample
            }
            box.inWindow += 1
            if box.inWindow == framesPerWindow {
                box.levels.append(LevelTimeline.decibels(sumOfSquares: box.sumOfSquares, count: framesPerWindow * channels))
                box.holes.append(box.holeInWindow)
                box.holeInWindow = holes > 0 && frame + 1 < frames
                box.sumOfSquares = 0
                box.inWindow = 0
            }
        }
        box.frames += frames
        box.origin = min(box.origin, Int64(arrival) - Int64(box.frames) * 1_000_000_000 / Int64(BenchProbe.rate))
    }

    /// The server's timing answer, as the frame heard then (`MonitorTiming.heardFrame`; loop
    /// thread).
    private static func note(_ timing: RecordStream.TimingInfo, in box: LevelBox) {
        guard let heard = MonitorTiming.heardFrame(timing, framesReceived: box.frames, bytesPerSecond: box.bytesPerSecond,
                                                   rate: BenchProbe.rate) else { return }
        box.timings.append(heard)
    }

    /// What each sink's monitor heard so far, windows placed on a clock whose 0 is `zero`
    /// (monotonic ns) by `placed(levels:timings:origin:zero:)`; a sink that delivered nothing
    /// yet has no windows.
    package func timelines(zero: UInt64) -> [(sink: String, timeline: LevelTimeline)] {
        connection.withLock {
            boxes.map { box in
                (box.sink, Self.placed(levels: box.levels, holes: box.holes, timings: box.timings, origin: box.origin,
                                       zero: zero))
            }
        }
    }

    /// The windows on a regular 10 ms grid of the lab's clock. Each window goes where the
    /// timing answer nearest to it (by frame) puts it: answer k says frame f_k was heard at
    /// t_k, so frame f was heard at t_k + (f − f_k) ÷ rate. Grid slots no window lands in
    /// (the sink was suspended) are silence; a later window replaces an earlier one in the
    /// same slot. With no answer, every window follows `origin` (the arrival bound). Pure.
    /// The timeline's `gaps`: the windows marked in `holes` (`.hole`), and runs of at least
    /// `LevelTimeline.shortestGap` empty slots (`.noSamples`: the monitor sends nothing only
    /// while its sink is suspended, and the lab keeps every recorded sink awake).
    /// - Parameters:
    ///   - levels: the windows in recording order (dBFS, nil for silence).
    ///   - holes: per window, whether a hole went into it (none when shorter).
    ///   - timings: (monotonic ns, frame heard then), frames rising.
    ///   - origin: monotonic ns of frame 0 by the arrival bound.
    ///   - zero: the lab clock's 0 in monotonic ns.
    static func placed(levels: [Double?], holes: [Bool] = [], timings: [(nanoseconds: UInt64, frames: Double)],
                       origin: Int64, zero: UInt64) -> LevelTimeline {
        let rate = Double(BenchProbe.rate), window = Double(framesPerWindow)
        let start = Double(origin - Int64(zero)) / 1e9
        let marked = levels.indices.map { $0 < holes.count && holes[$0] }
        guard !timings.isEmpty, !levels.isEmpty else {
            return LevelTimeline(start: start, levels: levels,
                                 gaps: LevelTimeline.gaps(start: start, holes: marked, missing: []))
        }
        var k = 0
        let times = levels.indices.map { w -> Double in
            let frame = Double(w) * window
            while k + 1 < timings.count && abs(timings[k + 1].frames - frame) <= abs(timings[k].frames - frame) { k += 1 }
            return (Double(timings[k].nanoseconds) - Double(zero)) / 1e9 + (frame - timings[k].frames) / rate
        }
        let first = times.min() ?? start
        let slots = times.map { Int((($0 - first) / LevelTimeline.windowSeconds).rounded()) }
        var grid = [Double?](repeating: nil, count: (slots.max() ?? 0) + 1)
        var filled = [Bool](repeating: false, count: grid.count), holed = filled
        for (window, (slot, level)) in zip(slots, levels).enumerated() {
            grid[slot] = level
            filled[slot] = true
            holed[slot] = marked[window]
        }
        return LevelTimeline(start: first, levels: grid,
                             gaps: LevelTimeline.gaps(start: first, holes: holed, missing: filled.map { !$0 }))
    }

    /// Ends every recording (`RecordStream.disconnectLocked`: `pa_stream_disconnect`); what
    /// was recorded stays readable.
    package func stop() {
        connection.withLock {
            for box in boxes {
                box.stream?.disconnectLocked()
                box.stream = nil
            }
        }
    }
}
