import DuckPrompt
import Glibc

/// A sink's monitor recorded whole, mono float32 at `BenchProbe.rate` (48 kHz), in 10 ms
/// fragments, for the integration tests to measure with `Levels`: what a listener on that sink
/// heard from `init` on. One `BenchProbe` connection of its own (`pa_stream_connect_record`
/// on `SINK.monitor`), so that nothing else of the test delays it.
package final class MonitorRecorder: Sendable {
    private let probe: BenchProbe

    /// Starts recording `sink`'s monitor; returns once the stream is connected.
    /// - Throws: `DuckPromptError` `.unavailable` when no server answers or it refuses the
    ///   stream (no such sink).
    package init(sink: String) throws {
        probe = try BenchProbe(clientName: "duckprompt monitor recorder")
        try probe.startRecording(monitorOf: sink, fragmentMs: 10)
    }

    /// Stops recording and returns every sample received (a hole the server reported is zeros).
    package func stop() -> [Float] {
        let samples = probe.withRecording { samples, _, _ in samples }
        probe.stopRecording()
        return samples
    }

    /// Every sample received so far; the recording goes on.
    package func samples() -> [Float] { probe.withRecording { samples, _, _ in samples } }

    /// How many holes the server reported in the recording so far (each recorded as zeros:
    /// silence the sink did not play).
    package var holes: Int { probe.withRecording { _, _, holes in holes } }

    /// The last `frames` samples received, nil while fewer have come.
    package func latest(frames: Int) -> [Float]? {
        probe.withRecording { samples, _, _ in samples.count >= frames ? Array(samples.suffix(frames)) : nil }
    }

    /// The recording so far with its chunks' arrival stamps and the server's timing answers,
    /// to place a frame on the monotonic clock (`Recording.time(ofFrame:)`), once a chunk that
    /// arrived `marginMs` after `t` (monotonic ns) is in (at most 5 s): the monitor lags.
    package func recording(past t: UInt64, marginMs: Int = 300) -> Recording {
        probe.waitForRecording(past: t, marginMs: marginMs)
        return probe.snapshotRecording()
    }

    /// Seconds of audio received so far.
    package var receivedSeconds: Double { Double(probe.recorded.frames) / Double(BenchProbe.rate) }

    /// Waits until `seconds` more of audio than now have arrived: monitor data comes late and
    /// in chunks on PulseAudio, so wall-clock sleeps do not tell what was recorded.
    /// - Throws: `DuckPromptError` `.unavailable` when it has not within `timeout` seconds.
    package func waitForMoreAudio(seconds: Double, timeout: Double = 10) throws {
        try waitForAudio(seconds: receivedSeconds + seconds, timeout: timeout)
    }

    /// Waits until at least `seconds` of audio have arrived in all (monitor data may start late).
    /// - Throws: `DuckPromptError` `.unavailable` when they have not within `timeout` seconds.
    package func waitForAudio(seconds: Double, timeout: Double = 10) throws {
        let needed = Int(seconds * Double(BenchProbe.rate))
        let deadline = monotonicNanoseconds() + UInt64(timeout * 1e9)
        while probe.recorded.frames < needed {
            guard monotonicNanoseconds() < deadline else {
                throw DuckPromptError(.unavailable, "the monitor recorder got no audio within \(timeout) s")
            }
            usleep(20_000)
        }
    }
}
