import DuckPrompt
import FoundationEssentials
import Glibc

/// A tone generator for one playback stream (loop thread only).
private final class ToneBox: @unchecked Sendable {
    let step: Double
    let amplitude: Float
    var phase = 0.0
    init(hertz: Double, amplitude: Float) {
        step = 2 * Double.pi * hertz / Double(BenchProbe.rate)
        self.amplitude = amplitude
    }

    /// The next samples: a continuous sine (or zeros), as `PlaybackStream` asks for them.
    func fill(_ buffer: UnsafeMutableBufferPointer<Float>) {
        if amplitude == 0 {
            buffer.update(repeating: 0)
        } else {
            for i in buffer.indices {
                buffer[i] = amplitude * Float(sin(phase))
                phase += step
                if phase > 2 * Double.pi { phase -= 2 * Double.pi }
            }
        }
    }
}

/// What a monitor recording has received so far (guarded by the loop lock).
private final class CaptureBox: @unchecked Sendable {
    var samples: [Float] = []
    /// (arrival in monotonic ns, frames received in all by then), one per read callback.
    var arrivals: [(nanoseconds: UInt64, frames: Int)] = []
    var holes = 0
    /// (monotonic ns, frame position heard at that instant), one per timing update.
    var timings: [(nanoseconds: UInt64, frames: Double)] = []
    var bytesPerSecond = 0.0

    /// A read callback's audio (`RecordStream.Chunk`).
    func add(_ chunk: UnsafeBufferPointer<Float>, holes: Int, arrival: UInt64) {
        samples.append(contentsOf: chunk)
        self.holes += holes
        arrivals.append((arrival, samples.count))
    }

    /// Records which frame of the recording was being heard on the sink when the server
    /// answered (`MonitorTiming.heardFrame`).
    func note(_ timing: RecordStream.TimingInfo) {
        guard let heard = MonitorTiming.heardFrame(timing, framesReceived: samples.count,
                                                    bytesPerSecond: bytesPerSecond, rate: BenchProbe.rate) else { return }
        timings.append(heard)
    }
}

/// Measuring aids for `duckprompt-bench` and the integration tests: playback streams that play
/// a tone (or silence) for as long as they are open, a monitor recording whose every chunk is
/// stamped on arrival, and a sink-input list. A target of its own (`DuckPromptProbe`), so that
/// an app embedding the library does not carry it; it reaches libpulse only through the
/// library's `package` API: a `PulseConnection` and its `PlaybackStream`s and `RecordStream`.
///
/// Each probe is one connection (its own `pa_threaded_mainloop` and `pa_context`), so a
/// recording is not delayed by another probe's queries. Thread-safe: every call takes the
/// loop lock.
/// libpulse: `pa_stream_connect_playback`, `pa_stream_connect_record`, `pa_stream_peek`,
/// `pa_context_get_sink_input_info_list`.
package final class BenchProbe: @unchecked Sendable {
    /// The sample rate of every stream a probe opens, in Hz (mono float32).
    package static let rate = 48_000

    private let connection: PulseConnection
    private var tones: [PlaybackStream] = []
    private let capture = CaptureBox()
    private var recording: RecordStream?

    /// Connects to `server` (a libpulse server string; nil: the default, `PULSE_SERVER`, then
    /// the user's socket).
    /// - Parameter timeout: how long connecting, and each later wait, may take (opening
    ///   hundreds of streams on pipewire-pulse takes seconds).
    /// - Throws: `.unavailable` when no server answers in time.
    package init(clientName: String, server: String? = nil, timeout: Duration = .seconds(5)) throws {
        connection = try PulseConnection(server: server, clientName: clientName, timeout: timeout)
    }

    deinit {
        stopTones()
        stopRecording()
    }

    /// Opens `count` playback streams, spread round-robin over `sinks`, each playing a sine
    /// of `hertz` at `amplitude` (0: silence) until `stopTones()`; waits until every one is
    /// connected. Every stream gets `properties` (`application.name`, `media.role` …).
    ///
    /// - Parameters:
    ///   - latencyMs: each stream's buffer (`pa_buffer_attr.tlength`); a long one costs the
    ///     server and this process fewer wake-ups.
    /// - Returns: the streams' sink-input indices, in opening order.
    /// - Throws: `.unavailable` when the server refuses a stream (PulseAudio allows at most
    ///   256 sink-inputs per sink) or they are not all connected within the probe's timeout.
    package func playTones(count: Int, sinks: [String], hertz: Double, amplitude: Float, latencyMs: Int,
                           properties: [String: String]) throws -> [UInt32] {
        precondition(count > 0 && !sinks.isEmpty, "playTones needs streams and sinks")
        var opened: [PlaybackStream] = []
        // In batches: pipewire-pulse answers "Timeout" when hundreds are asked for at once.
        for batch in stride(from: 0, to: count, by: 16) { try connection.withLock {
            let first = opened.count
            for i in batch..<min(count, batch + 16) {
                let tone = ToneBox(hertz: hertz, amplitude: amplitude)
                let stream = try PlaybackStream(connection: connection, sink: sinks[i % sinks.count], name: "tone \(i)",
                                                rate: Self.rate, channels: 1, tlengthMs: latencyMs,
                                                properties: properties, fill: tone.fill)
                tones.append(stream)
                opened.append(stream)
            }
            let what = "connecting \(count) tone streams"
            try PulseStream.waitReadyLocked(Array(opened[first...]), refused: what, what: what)
        } }
        return connection.withLock { opened.map(\.indexLocked) }
    }

    /// Disconnects every tone stream (`PlaybackStream.disconnectLocked`: `pa_stream_disconnect`).
    package func stopTones() {
        connection.withLock {
            for stream in tones { stream.disconnectLocked() }
            tones.removeAll()
        }
    }

    /// Starts recording `sink`'s monitor (mono float32 at `rate`), asking the server for a
    /// fragment of `fragmentMs`; every chunk is stamped with `monotonicNanoseconds()` as it
    /// arrives. A hole the server reports is recorded as zeros, so frame counts stay true.
    /// After each chunk the server is asked for the recording's timing (`timings`). Waits
    /// until the recording stream is connected.
    /// - Throws: `.unavailable` when the server refuses the stream.
    /// libpulse: through `RecordStream` (`pa_stream_connect_record` with
    /// `PA_STREAM_ADJUST_LATENCY` and `PA_STREAM_DONT_MOVE`, `pa_stream_peek`,
    /// `pa_stream_update_timing_info`).
    package func startRecording(monitorOf sink: String, fragmentMs: Int) throws {
        precondition(recording == nil, "one recording per probe")
        let capture = self.capture
        try connection.withLock {
            let stream = try RecordStream(connection: connection, source: "\(sink).monitor", name: "bench monitor",
                                          rate: Self.rate, channels: 1, fragmentMs: fragmentMs,
                                          onChunk: capture.add, onTiming: capture.note)
            recording = stream
            capture.bytesPerSecond = stream.bytesPerSecond
            try PulseStream.waitReadyLocked([stream], refused: "cannot record \(sink).monitor",
                                            what: "recording \(sink).monitor")
        }
    }

    /// Calls `body` with what was recorded so far (lock held: keep it short, copy what you
    /// need): the samples, the arrival stamps, and how many holes the server reported.
    package func withRecording<T>(_ body: ([Float], [(nanoseconds: UInt64, frames: Int)], Int) -> T) -> T {
        connection.withLock { body(capture.samples, capture.arrivals, capture.holes) }
    }

    /// The timing updates so far: (monotonic ns, the recording's frame heard on the sink at
    /// that instant, fractional), one per answer to `pa_stream_update_timing_info`, which the
    /// recording asks for after each chunk.
    package var timings: [(nanoseconds: UInt64, frames: Double)] {
        connection.withLock { capture.timings }
    }

    /// Frames recorded so far, and the arrival of the latest chunk (0 before the first).
    package var recorded: (frames: Int, lastArrival: UInt64) {
        connection.withLock { (capture.samples.count, capture.arrivals.last?.nanoseconds ?? 0) }
    }

    /// Drops everything recorded so far; frames are counted from 0 again (bounds memory
    /// between figures).
    package func clearRecording() {
        connection.withLock {
            capture.samples.removeAll(keepingCapacity: true)
            capture.arrivals.removeAll(keepingCapacity: true)
            capture.timings.removeAll(keepingCapacity: true)
        }
    }

    /// Ends the recording (`RecordStream.disconnectLocked`: `pa_stream_disconnect`).
    package func stopRecording() {
        connection.withLock {
            recording?.disconnectLocked()
            recording = nil
        }
    }

    /// Every sink-input on the server, in one round trip.
    /// libpulse: `pa_context_get_sink_input_info_list`.
    package func sinkInputs() throws -> [SinkInput] {
        try connection.sinkInputList()
    }
}
