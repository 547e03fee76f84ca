import CPulseAudio
import Glibc

/// The monotonic clock (`CLOCK_MONOTONIC`, `clock_gettime`) in nanoseconds: the clock a
/// `RecordStream` stamps each chunk with on arrival, so that a caller (the bench, the tests,
/// the lab) can relate what was recorded to when it started a process. (In a file that
/// imports `CPulseAudio` too: libpulse's headers bring in `timespec` as well, and in
/// Support/System.swift, which imports Glibc alone, a build refused its fields under
/// MemberImportVisibility, "missing import of defining module 'CPulseAudio'".)
package func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// The realtime clock (`CLOCK_REALTIME`, `clock_gettime`) in nanoseconds: the clock of a
/// `pa_timing_info.timestamp`, read beside `monotonicNanoseconds()` to take one to the other
/// (`StreamClock.monotonicUs`). Here for the same reason as `monotonicNanoseconds()`.
package func realtimeNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// A `timeval` (a `pa_timing_info.timestamp`) in µs. Here for the same reason as
/// `monotonicNanoseconds()`: its fields need both modules in sight, debug and release.
func microseconds(of time: timeval) -> Int64 {
    Int64(time.tv_sec) * 1_000_000 + Int64(time.tv_usec)
}

/// A record stream of float32 samples on one source, such as a sink's monitor
/// (`SINK.monitor`): every chunk the server sends is handed to `onChunk` with its arrival
/// stamp, and after each one the server is asked where the stream stands (`onTiming`). What
/// the bench, the tests' `MonitorRecorder` and the lab's `MonitorLevels` listen with.
///
/// Threading and ownership as `PulseStream`: made and ended with the loop lock held; the
/// callbacks run on the loop thread, lock held, so they must not wait for anything.
/// libpulse: `pa_stream_connect_record` (`PA_STREAM_ADJUST_LATENCY`, `PA_STREAM_DONT_MOVE`),
/// then in the read callback `pa_stream_peek` and `pa_stream_drop`, and
/// `pa_stream_update_timing_info`.
package final class RecordStream: PulseStream, @unchecked Sendable {
    /// One read callback's audio: the samples received (interleaved frames; each hole the
    /// server reported is as many zeros, so frame counts stay true), how many holes there were,
    /// and when the callback ran (`monotonicNanoseconds()`, before the first sample was read).
    /// The buffer is valid only during the call. On the loop thread, lock held.
    package typealias Chunk = (_ samples: UnsafeBufferPointer<Float>, _ holes: Int, _ arrival: UInt64) -> Void

    /// The server's answer about the stream (`pa_timing_info`), as `pa_stream_get_timing_info`
    /// holds it once `pa_stream_update_timing_info` is acknowledged.
    package struct TimingInfo: Sendable {
        /// When the server took it (`timestamp`), in ns of `CLOCK_REALTIME`.
        package var realtimeNanoseconds: Double
        /// The bytes the server has written into the stream's buffer (`write_index`), and
        /// whether that is known (`write_index_corrupt` == 0).
        package var writeIndex: Int64
        package var writeIndexValid: Bool
        /// The bytes read from it (`read_index`, corrected for what libpulse holds unread), and
        /// whether that is known (`read_index_corrupt` == 0).
        package var readIndex: Int64
        package var readIndexValid: Bool
        /// What the source holds before it reaches the stream (`source_usec`), in µs.
        package var sourceMicroseconds: UInt64
        /// What the sink rendered ahead of playing it (`sink_usec`), in µs: a monitor's audio
        /// arrives that much before it is heard.
        package var sinkMicroseconds: UInt64

        init(_ info: pa_timing_info) {
            realtimeNanoseconds = Double(info.timestamp.tv_sec) * 1e9 + Double(info.timestamp.tv_usec) * 1e3
            writeIndex = info.write_index
            writeIndexValid = info.write_index_corrupt == 0
            readIndex = info.read_index
            readIndexValid = info.read_index_corrupt == 0
            sourceMicroseconds = info.source_usec
            sinkMicroseconds = info.sink_usec
        }
    }

    /// The stream's bytes per second (`pa_bytes_per_second` of its sample spec).
    package let bytesPerSecond: Double

    private let onChunk: Chunk
    private let onTiming: ((TimingInfo) -> Void)?
    /// The current read callback's samples (loop thread).
    private var chunk: [Float] = []
    /// The timing request on its way (one at a time), cancelled by `disconnectLocked()`.
    private var timingRequest: OpaquePointer?

    /// Creates the stream and starts recording `source`; does not wait (`waitReadyLocked`).
    /// Lock held.
    /// - Parameters:
    ///   - source: the source's name, e.g. `SINK.monitor`.
    ///   - name, rate, channels, properties: as `PulseStream`.
    ///   - fragmentMs: the fragment the server is asked to send at a time
    ///     (`pa_buffer_attr.fragsize`), in ms; the other metrics are the server's.
    ///   - corked: connect it corked (`PA_STREAM_START_CORKED`): it records nothing, and
    ///     its `fragmentMs` still counts toward the source's latency (`LatencyAnchors`).
    ///   - onChunk: each read callback's audio (`Chunk`).
    ///   - onTiming: when given, the server is asked for the stream's timing after each chunk,
    ///     one request at a time, and each answer is handed to it (on the loop thread, lock
    ///     held); an answer that failed or carries no timing info is dropped.
    /// - Throws: `DuckPromptError(.unavailable)` when libpulse refuses the stream or its
    ///   connection (the server's refusal, e.g. no such source, shows later, in
    ///   `waitReadyLocked`). libpulse: `pa_stream_new_with_proplist`,
    ///   `pa_stream_set_read_callback`, `pa_stream_connect_record` with
    ///   `PA_STREAM_ADJUST_LATENCY` and `PA_STREAM_DONT_MOVE`: never moved to another source
    ///   (PulseAudio moves a recorder when the default sink changes or its sink goes,
    ///   module-stream-restore, and the audio would be another sink's).
    package init(connection: PulseConnection, source: String, name: String, rate: Int, channels: Int, fragmentMs: Int,
                 properties: [String: String] = [:], corked: Bool = false, onChunk: @escaping Chunk,
                 onTiming: ((TimingInfo) -> Void)? = nil) throws {
        self.onChunk = onChunk
        self.onTiming = onTiming
        var spec = pa_sample_spec(format: PA_SAMPLE_FLOAT32LE, rate: UInt32(rate), channels: UInt8(channels))
        bytesPerSecond = Double(libpulse.pa_bytes_per_second(&spec))
        try super.init(connection: connection, name: name, rate: rate, channels: channels, properties: properties)
        libpulse.pa_stream_set_read_callback(stream, { stream, _, userdata in
            Unmanaged<RecordStream>.fromOpaque(userdata!).takeUnretainedValue().read(stream!)
        }, userdata)
        var attr = bufferAttr(fragmentMs: fragmentMs)
        let flags = pa_stream_flags_t(PA_STREAM_ADJUST_LATENCY.rawValue | PA_STREAM_DONT_MOVE.rawValue
            | (corked ? PA_STREAM_START_CORKED.rawValue : 0))
        try connectLocked(refused: "cannot record \(source)") {
            libpulse.pa_stream_connect_record($0, source, &attr, flags)
        }
    }

    /// The read callback's body, on the loop thread: every fragment the server has sent
    /// (`pa_stream_peek`, a hole as zeros, `pa_stream_drop`) to `onChunk` at once, then the
    /// timing request.
    private func read(_ stream: OpaquePointer) {
        let arrival = monotonicNanoseconds()
        let channels = Int(spec.channels)
        chunk.removeAll(keepingCapacity: true)
        var holes = 0
        var data: UnsafeRawPointer? = nil
        var size = 0
        while libpulse.pa_stream_peek(stream, &data, &size) >= 0, size > 0 {
            let samples = size / (MemoryLayout<Float>.size * channels) * channels
            if let data {
                chunk.append(contentsOf: UnsafeBufferPointer(start: data.bindMemory(to: Float.self, capacity: samples),
                                                             count: samples))
            } else {
                holes += 1
                chunk.append(contentsOf: repeatElement(0, count: samples))
            }
            _ = libpulse.pa_stream_drop(stream)
        }
        chunk.withUnsafeBufferPointer { onChunk($0, holes, arrival) }
        requestTimingLocked(stream)
    }

    /// Asks the server where the stream stands, unless an answer is on its way. Loop thread.
    /// libpulse: `pa_stream_update_timing_info`.
    private func requestTimingLocked(_ stream: OpaquePointer) {
        guard onTiming != nil, timingRequest == nil else { return }
        timingRequest = libpulse.pa_stream_update_timing_info(stream, { stream, success, userdata in
            let me = Unmanaged<RecordStream>.fromOpaque(userdata!).takeUnretainedValue()
            if let request = me.timingRequest { libpulse.pa_operation_unref(request) }
            me.timingRequest = nil
            guard success != 0, let stream, let info = libpulse.pa_stream_get_timing_info(stream)?.pointee else { return }
            me.onTiming?(TimingInfo(info))
        }, userdata)
    }

    /// Ends the recording as `PulseStream.disconnectLocked()`, its timing request cancelled
    /// first (`pa_operation_cancel`: its callback will not run). Lock held.
    override package func disconnectLocked() {
        if let request = timingRequest {
            libpulse.pa_operation_cancel(request)
            libpulse.pa_operation_unref(request)
            timingRequest = nil
        }
        super.disconnectLocked()
    }
}
