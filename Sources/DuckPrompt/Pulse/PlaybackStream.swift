import CPulseAudio

/// A playback stream of float32 samples that plays what `fill` writes for as long as it is
/// connected: the bench's and the tests' tones, music and load (`BenchProbe.playTones`). It
/// never ends by itself and is not drained; `disconnectLocked()` stops it at once.
///
/// Threading and ownership as `PulseStream`: made and ended with the loop lock held; `fill`
/// runs on the loop thread, lock held.
/// libpulse: `pa_stream_connect_playback` (`PA_STREAM_ADJUST_LATENCY`), then in the write
/// callback `pa_stream_begin_write` and `pa_stream_write`.
package final class PlaybackStream: PulseStream, @unchecked Sendable {
    /// Fills every sample of the buffer (interleaved frames, -1 … 1) with the next audio to
    /// play. On the loop thread, lock held: it must not wait for anything.
    package typealias Fill = (_ samples: UnsafeMutableBufferPointer<Float>) -> Void

    private let fill: Fill

    /// Creates the stream and starts connecting it to `sink`; does not wait
    /// (`waitReadyLocked`). Lock held.
    /// - Parameters:
    ///   - sink: the sink's name, or nil for the server's default.
    ///   - name, rate, channels, properties: as `PulseStream`.
    ///   - tlengthMs: the stream's buffer (`pa_buffer_attr.tlength`) in ms; the other metrics
    ///     are the server's. With `PA_STREAM_ADJUST_LATENCY` the server runs the sink for it: a
    ///     long buffer costs the server and this process fewer wake-ups.
    ///   - fill: what to play, asked for as much as the server requests each time (the write
    ///     callback's `nbytes`, as far as one `pa_stream_begin_write` buffer holds).
    /// - Throws: `DuckPromptError(.unavailable)` when libpulse refuses the stream or its
    ///   connection (the server's refusal, e.g. PulseAudio's 256 sink-inputs a sink, shows
    ///   later, in `waitReadyLocked`). libpulse: `pa_stream_new_with_proplist`,
    ///   `pa_stream_set_write_callback`, `pa_stream_connect_playback`.
    package init(connection: PulseConnection, sink: String?, name: String, rate: Int, channels: Int, tlengthMs: Int,
                 properties: [String: String] = [:], fill: @escaping Fill) throws {
        self.fill = fill
        try super.init(connection: connection, name: name, rate: rate, channels: channels, properties: properties)
        libpulse.pa_stream_set_write_callback(stream, { stream, nbytes, userdata in
            Unmanaged<PlaybackStream>.fromOpaque(userdata!).takeUnretainedValue().write(stream!, requested: nbytes)
        }, userdata)
        var attr = bufferAttr(tlengthMs: tlengthMs)
        try connectLocked(refused: "cannot connect the stream '\(name)'") {
            libpulse.pa_stream_connect_playback($0, sink, &attr, PA_STREAM_ADJUST_LATENCY, nil, nil)
        }
    }

    /// The write callback's body, on the loop thread: one buffer of up to `requested` bytes,
    /// whole frames, filled by `fill` and written. libpulse: `pa_stream_begin_write`,
    /// `pa_stream_write` (`PA_SEEK_RELATIVE`).
    private func write(_ stream: OpaquePointer, requested: Int) {
        let frameBytes = MemoryLayout<Float>.size * Int(spec.channels)
        var data: UnsafeMutableRawPointer? = nil
        var size = requested
        guard libpulse.pa_stream_begin_write(stream, &data, &size) >= 0, let data, size >= frameBytes else { return }
        let frames = size / frameBytes
        let samples = frames * Int(spec.channels)
        fill(UnsafeMutableBufferPointer(start: data.bindMemory(to: Float.self, capacity: samples), count: samples))
        _ = libpulse.pa_stream_write(stream, data, frames * frameBytes, nil, 0, PA_SEEK_RELATIVE)
    }
}
