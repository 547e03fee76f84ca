/// When a frame written to a playback stream reaches the device, told from the server's timing
/// answer for the stream (`pa_timing_info`): the byte the server reads at the answer's instant
/// (`read_index`) is played out by the sink `sink_usec` later (what it rendered ahead, which its
/// monitor already shows), and every byte after it a byte's time later, as libpulse's
/// `pa_stream_get_time` relates them. What the service's `PromptTiming` says. Pure: no server.
package enum StreamClock {
    /// The CLOCK_MONOTONIC µs at which the byte at `position` of the stream reaches the device
    /// (leaves the sink's buffer), or nil when the server could not say where it reads
    /// (`readIndex` nil: `read_index_corrupt`) or `bytesPerSecond` is not positive.
    /// - Parameters:
    ///   - position: the byte of the stream, counted as the server counts `write_index`.
    ///   - readIndex: the answer's `read_index`, in bytes.
    ///   - sinkUs: the answer's `sink_usec`, in µs.
    ///   - bytesPerSecond: the stream's (`pa_bytes_per_second`).
    ///   - stampMonotonicUs: the answer's `timestamp` on the monotonic clock, in µs
    ///     (`monotonicUs(ofRealtimeUs:…)`).
    /// A byte the server has read already gives an instant before the answer.
    package static func deviceTimeUs(ofByte position: Int64, readIndex: Int64?, sinkUs: UInt64, bytesPerSecond: Int,
                                     stampMonotonicUs: Int64) -> Int64? {
        guard let readIndex, bytesPerSecond > 0 else { return nil }
        let ahead = Double(position - readIndex) / Double(bytesPerSecond) * 1_000_000
        return stampMonotonicUs + Int64(ahead.rounded()) + Int64(clamping: sinkUs)
    }

    /// A CLOCK_REALTIME instant (a `pa_timing_info.timestamp`) on the monotonic clock, in µs,
    /// from both clocks read together now: `realtimeUs` − `realNowUs` + `monotonicNowUs`.
    package static func monotonicUs(ofRealtimeUs realtimeUs: Int64, realNowUs: Int64, monotonicNowUs: Int64) -> Int64 {
        realtimeUs - realNowUs + monotonicNowUs
    }
}
