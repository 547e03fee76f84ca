import CPulseAudio
import DuckPrompt
import FoundationEssentials
import Glibc

/// The monotonic clock (`CLOCK_MONOTONIC`) in nanoseconds: the clock `BenchProbe` stamps
/// recorded audio with, so that a caller can relate it to when it started a process.
package func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// A tone generator for one playback stream (loop thread only).
private final class ToneBox: @unchecked Sendable {
    let step: Double
    let amplitude: Float
    var phase = 0.0
    init(hertz: Double, amplitude: Float) {
        step = 2 * Double.pi * hertz / Double(BenchProbe.rate)
        self.amplitude = amplitude
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
    /// A timing update is on its way.
    var timingPending = false
    var bytesPerSecond = 0.0
}

/// Measuring aids for `duckprompt-bench` and the integration tests: playback streams that play
/// a tone (or silence) for as long as they are open, a monitor recording whose every chunk is
/// stamped on arrival, and a sink-input list. A target of its own (`DuckPromptProbe`), so that
/// an app embedding the library does not carry it; it reaches libpulse through the library's
/// `PulseConnection` (`package` access) and its own `pa_stream`s.
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
    private var streams: [OpaquePointer] = []
    private var tones: [ToneBox] = []
    private let capture = CaptureBox()
    private var recording: OpaquePointer?

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

    private var spec: pa_sample_spec {
        pa_sample_spec(format: PA_SAMPLE_FLOAT32LE, rate: UInt32(Self.rate), channels: 1)
    }

    /// Buffer metrics: the server's defaults but for a playback `tlength` or a record
    /// `fragsize`, in ms of `spec`.
    private func bufferAttr(tlengthMs: Int? = nil, fragsizeMs: Int? = nil) -> pa_buffer_attr {
        var spec = self.spec
        func bytes(_ ms: Int?) -> UInt32 { ms.map { UInt32(pa_usec_to_bytes(UInt64($0) * 1000, &spec)) } ?? UInt32.max }
        return pa_buffer_attr(maxlength: UInt32.max, tlength: bytes(tlengthMs), prebuf: UInt32.max,
                              minreq: UInt32.max, fragsize: bytes(fragsizeMs))
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
        var attr = bufferAttr(tlengthMs: latencyMs)
        var spec = self.spec
        let props = pa_proplist_new()
        defer { pa_proplist_free(props) }
        for (k, v) in properties { pa_proplist_sets(props, k, v) }
        var opened: [OpaquePointer] = []
        // In batches: pipewire-pulse answers "Timeout" when hundreds are asked for at once.
        for batch in stride(from: 0, to: count, by: 16) { try connection.withLock {
            let first = opened.count
            for i in batch..<min(count, batch + 16) {
                guard let stream = pa_stream_new_with_proplist(connection.context, "tone \(i)", &spec, nil, props) else {
                    throw DuckPromptError(.unavailable, "cannot create tone stream \(i): \(connection.lastErrorLocked)")
                }
                let box = ToneBox(hertz: hertz, amplitude: amplitude)
                tones.append(box)
                streams.append(stream)
                opened.append(stream)
                pa_stream_set_state_callback(stream, { _, userdata in
                    pa_threaded_mainloop_signal(OpaquePointer(userdata), 0)
                }, UnsafeMutableRawPointer(connection.mainloop))
                pa_stream_set_write_callback(stream, { stream, nbytes, userdata in
                    BenchProbe.fillTone(stream!, requested: nbytes,
                                        box: Unmanaged<ToneBox>.fromOpaque(userdata!).takeUnretainedValue())
                }, Unmanaged.passUnretained(box).toOpaque())
                if pa_stream_connect_playback(stream, sinks[i % sinks.count], &attr, PA_STREAM_ADJUST_LATENCY,
                                              nil, nil) < 0 {
                    throw DuckPromptError(.unavailable, "cannot connect tone stream \(i): \(connection.lastErrorLocked)")
                }
            }
            try waitAllReady(Array(opened[first...]), what: "connecting \(count) tone streams")
        } }
        return connection.withLock { opened.map { pa_stream_get_index($0) } }
    }

    /// Waits, lock held, until every stream is READY. Throws when one fails or the timeout passes.
    private func waitAllReady(_ list: [OpaquePointer], what: String) throws {
        let deadline = ContinuousClock.now + connection.answerTimeout
        try connection.withWakeupLocked(at: deadline) {
            for stream in list {
                while pa_stream_get_state(stream) != PA_STREAM_READY {
                    let state = pa_stream_get_state(stream)
                    if state == PA_STREAM_FAILED || state == PA_STREAM_TERMINATED || !connection.isAliveLocked {
                        throw DuckPromptError(.unavailable, "\(what): \(connection.lastErrorLocked)")
                    }
                    guard ContinuousClock.now < deadline else { throw connection.silentServerError(what) }
                    connection.waitLocked()
                }
            }
        }
    }

    /// The write callback: a continuous sine (or zeros), on the loop thread.
    private static func fillTone(_ stream: OpaquePointer, requested: Int, box: ToneBox) {
        var data: UnsafeMutableRawPointer? = nil
        var size = requested
        guard pa_stream_begin_write(stream, &data, &size) >= 0, let data, size >= 4 else { return }
        let frames = size / 4
        let buffer = data.bindMemory(to: Float.self, capacity: frames)
        if box.amplitude == 0 {
            buffer.update(repeating: 0, count: frames)
        } else {
            for i in 0..<frames {
                buffer[i] = box.amplitude * Float(sin(box.phase))
                box.phase += box.step
                if box.phase > 2 * Double.pi { box.phase -= 2 * Double.pi }
            }
        }
        pa_stream_write(stream, data, frames * 4, nil, 0, PA_SEEK_RELATIVE)
    }

    /// Disconnects every tone stream (`pa_stream_disconnect`, `pa_stream_unref`).
    package func stopTones() {
        connection.withLock {
            for stream in streams {
                pa_stream_set_write_callback(stream, nil, nil)
                pa_stream_set_state_callback(stream, nil, nil)
                pa_stream_disconnect(stream)
                pa_stream_unref(stream)
            }
            streams.removeAll()
            tones.removeAll()
        }
    }

    /// Starts recording `sink`'s monitor (mono float32 at `rate`), asking the server for a
    /// fragment of `fragmentMs`; every chunk is stamped with `monotonicNanoseconds()` as it
    /// arrives. A hole the server reports is recorded as zeros, so frame counts stay true.
    /// Waits until the recording stream is connected.
    /// - Throws: `.unavailable` when the server refuses the stream.
    /// libpulse: `pa_stream_connect_record` (`PA_STREAM_ADJUST_LATENCY`, `PA_STREAM_DONT_MOVE`), `pa_stream_peek`.
    package func startRecording(monitorOf sink: String, fragmentMs: Int) throws {
        precondition(recording == nil, "one recording per probe")
        var attr = bufferAttr(fragsizeMs: fragmentMs)
        var spec = self.spec
        capture.bytesPerSecond = Double(pa_bytes_per_second(&spec))
        try connection.withLock {
            guard let stream = pa_stream_new(connection.context, "bench monitor", &spec, nil) else {
                throw DuckPromptError(.unavailable, "cannot create the recording stream: \(connection.lastErrorLocked)")
            }
            recording = stream
            pa_stream_set_state_callback(stream, { _, userdata in
                pa_threaded_mainloop_signal(OpaquePointer(userdata), 0)
            }, UnsafeMutableRawPointer(connection.mainloop))
            pa_stream_set_read_callback(stream, { stream, _, userdata in
                let box = Unmanaged<CaptureBox>.fromOpaque(userdata!).takeUnretainedValue()
                let now = monotonicNanoseconds()
                var data: UnsafeRawPointer? = nil
                var size = 0
                while pa_stream_peek(stream, &data, &size) >= 0, size > 0 {
                    if let data {
                        let floats = data.bindMemory(to: Float.self, capacity: size / 4)
                        box.samples.append(contentsOf: UnsafeBufferPointer(start: floats, count: size / 4))
                    } else {
                        box.holes += 1
                        box.samples.append(contentsOf: repeatElement(0, count: size / 4))
                    }
                    pa_stream_drop(stream)
                }
                box.arrivals.append((now, box.samples.count))
                BenchProbe.requestTiming(stream!, box: box)
            }, Unmanaged.passUnretained(capture).toOpaque())
            // Never moved to another monitor (PulseAudio moves a recorder when the default
            // sink changes: the levels would be another sink's).
            let flags = pa_stream_flags_t(PA_STREAM_ADJUST_LATENCY.rawValue | PA_STREAM_DONT_MOVE.rawValue)
            if pa_stream_connect_record(stream, "\(sink).monitor", &attr, flags) < 0 {
                throw DuckPromptError(.unavailable, "cannot record \(sink).monitor: \(connection.lastErrorLocked)")
            }
            try waitAllReady([stream], what: "recording \(sink).monitor")
        }
    }

    /// Asks the server for the recording's timing (one request at a time, after each chunk).
    /// libpulse: `pa_stream_update_timing_info`.
    private static func requestTiming(_ stream: OpaquePointer, box: CaptureBox) {
        guard !box.timingPending else { return }
        guard let op = pa_stream_update_timing_info(stream, { stream, success, userdata in
            let box = Unmanaged<CaptureBox>.fromOpaque(userdata!).takeUnretainedValue()
            box.timingPending = false
            guard success != 0, let stream else { return }
            BenchProbe.noteTiming(stream, box: box)
        }, Unmanaged.passUnretained(box).toOpaque()) else { return }
        box.timingPending = true
        pa_operation_unref(op)
    }

    /// Records which frame of the recording was being heard on the sink when the server
    /// answered (`MonitorTiming.heardFrame`).
    private static func noteTiming(_ stream: OpaquePointer, box: CaptureBox) {
        guard let heard = MonitorTiming.heardFrame(stream, framesReceived: box.samples.count,
                                                    bytesPerSecond: box.bytesPerSecond, rate: BenchProbe.rate) else { return }
        box.timings.append(heard)
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

    /// Ends the recording (`pa_stream_disconnect`).
    package func stopRecording() {
        connection.withLock {
            guard let stream = recording else { return }
            pa_stream_set_read_callback(stream, nil, nil)
            pa_stream_set_state_callback(stream, nil, nil)
            pa_stream_disconnect(stream)
            pa_stream_unref(stream)
            recording = nil
        }
    }

    /// Every sink-input on the server, in one round trip.
    /// libpulse: `pa_context_get_sink_input_info_list`.
    package func sinkInputs() throws -> [SinkInput] {
        try connection.sinkInputList()
    }
}
