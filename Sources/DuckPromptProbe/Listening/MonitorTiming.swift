import DuckPrompt
import Glibc

/// Where a monitor recording stands against the listener's clock, from the server's timing
/// answer (`RecordStream.TimingInfo`): the recording's frame that was being heard on the sink
/// at the server's timestamp. Shared by `BenchProbe` (its samples) and `MonitorLevels` (its
/// windows).
enum MonitorTiming {
    /// The frame heard at the instant of a recording's timing `info`: the frames received
    /// so far, plus those still on their way (`write_index` − `read_index`, which libpulse
    /// corrects for what it holds unread), plus what the monitor source holds
    /// (`source_usec`), minus what the sink rendered ahead of playing it (`sink_usec`: a null
    /// sink renders a block ahead, and its monitor gets the block at once), as libpulse's
    /// `pa_stream_get_time` relates them, at the server's `timestamp` (CLOCK_REALTIME, taken to
    /// the monotonic clock as this is called: call it when the answer arrives). Only the
    /// difference of the two indices is used: frames are counted from the recording's last
    /// clearing, and a server may drop frames on overflow.
    /// - Parameters:
    ///   - framesReceived: frames the recording has received so far.
    ///   - bytesPerSecond: of the recording's sample spec (`pa_bytes_per_second`).
    ///   - rate: its frames per second.
    /// - Returns: (monotonic ns, frame heard, fractional); nil when an index is marked
    ///   corrupt. libpulse: `pa_timing_info`, through `RecordStream`'s `onTiming`.
    static func heardFrame(_ info: RecordStream.TimingInfo, framesReceived: Int, bytesPerSecond: Double,
                           rate: Int) -> (nanoseconds: UInt64, frames: Double)? {
        guard info.writeIndexValid, info.readIndexValid, bytesPerSecond > 0 else { return nil }
        var real = timespec(), mono = timespec()
        clock_gettime(CLOCK_REALTIME, &real)
        clock_gettime(CLOCK_MONOTONIC, &mono)
        let realNow = Double(real.tv_sec) * 1e9 + Double(real.tv_nsec)
        let monoNow = Double(mono.tv_sec) * 1e9 + Double(mono.tv_nsec)
        let stamp = info.realtimeNanoseconds
        let onTheWay = Double(info.writeIndex - info.readIndex) / bytesPerSecond
            + Double(info.sourceMicroseconds) / 1e6 - Double(info.sinkMicroseconds) / 1e6
        let frames = Double(framesReceived) + onTheWay * Double(rate)
        let at = stamp - realNow + monoNow
        guard at > 0 else { return nil }
        return (UInt64(at), frames)
    }
}
