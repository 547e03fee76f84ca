import CPulseAudio

/// One `pa_stream` of mono or interleaved float32 (`PA_SAMPLE_FLOAT32LE`) on a
/// `PulseConnection`, for the measuring target (`DuckPromptProbe`): what `PlaybackStream` and
/// `RecordStream` share — creating the stream, waiting until it is connected, its index,
/// disconnecting it. The prompt's own stream is `PromptStream`.
///
/// Threading: every member is called with the connection's loop lock held
/// (`PulseConnection.withLock`), from a thread other than the loop's; the subclasses' callbacks
/// run on the loop thread with the lock held, so they must not wait for anything.
/// Ownership: a connected stream retains itself once (its C callbacks reach it unretained
/// through `userdata`) and releases that in `disconnectLocked()`: call it once for every
/// stream that connected, or the stream, its callbacks and its connection are never freed.
package class PulseStream: @unchecked Sendable {
    package let connection: PulseConnection
    let stream: OpaquePointer
    /// The stream's sample format: float32, `rate` Hz, `channels` channels.
    var spec: pa_sample_spec
    /// The retain that `connectLocked` takes and `disconnectLocked` gives back.
    private var retained: Unmanaged<PulseStream>?

    /// Creates the stream, not yet connected. Lock held.
    /// - Parameters:
    ///   - name: the stream's name (`media.name`).
    ///   - rate: sample rate in Hz (1 … `PA_RATE_MAX`).
    ///   - channels: channel count (1 … 32), the server's default map for that count.
    ///   - properties: more stream properties (`application.name`, `media.role` …).
    /// - Throws: `DuckPromptError(.unavailable)` when libpulse refuses (the sample spec, or a
    ///   context that is not connected). libpulse: `pa_stream_new_with_proplist` (no channel
    ///   map; no property list when `properties` is empty, as `pa_stream_new`),
    ///   `pa_stream_set_state_callback` (wakes the loop's waits).
    init(connection: PulseConnection, name: String, rate: Int, channels: Int, properties: [String: String]) throws {
        self.connection = connection
        spec = pa_sample_spec(format: PA_SAMPLE_FLOAT32LE, rate: UInt32(rate), channels: UInt8(channels))
        var props: OpaquePointer? = nil
        if !properties.isEmpty {
            props = libpulse.pa_proplist_new()
            for (k, v) in properties { _ = libpulse.pa_proplist_sets(props, k, v) }
        }
        defer { if let props { libpulse.pa_proplist_free(props) } }
        guard let created = libpulse.pa_stream_new_with_proplist(connection.context, name, &spec, nil, props) else {
            throw DuckPromptError(.unavailable, "cannot create the stream '\(name)': \(connection.lastErrorLocked)")
        }
        stream = created
        libpulse.pa_stream_set_state_callback(stream, { _, userdata in
            libpulse.pa_threaded_mainloop_signal(OpaquePointer(userdata), 0)
        }, UnsafeMutableRawPointer(connection.mainloop))
    }

    /// What the subclasses' C callbacks get as `userdata`: this stream, unretained.
    var userdata: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// The server's buffer metrics but for a playback `tlength` or a record `fragsize`, in ms
    /// of the stream's sample spec (`pa_usec_to_bytes`); every other field is -1, the server's
    /// default.
    func bufferAttr(tlengthMs: Int? = nil, fragmentMs: Int? = nil) -> pa_buffer_attr {
        func bytes(_ ms: Int?) -> UInt32 { ms.map { UInt32(libpulse.pa_usec_to_bytes(UInt64($0) * 1000, &spec)) } ?? UInt32.max }
        return pa_buffer_attr(maxlength: UInt32.max, tlength: bytes(tlengthMs), prebuf: UInt32.max,
                              minreq: UInt32.max, fragsize: bytes(fragmentMs))
    }

    /// Runs `connect` (a `pa_stream_connect_playback` or `pa_stream_connect_record` of the
    /// stream) and takes the stream's retain on success; on failure frees the stream
    /// (`pa_stream_unref`) and throws `DuckPromptError(.unavailable)` "`refused`: reason"
    /// (`pa_context_errno`). Lock held.
    func connectLocked(refused: String, _ connect: (OpaquePointer) -> Int32) throws {
        guard connect(stream) >= 0 else {
            let reason = connection.lastErrorLocked
            clearCallbacksLocked()
            libpulse.pa_stream_unref(stream)
            throw DuckPromptError(.unavailable, "\(refused): \(reason)")
        }
        retained = Unmanaged.passRetained(self)
    }

    /// Waits until every stream of `streams` is connected (`PA_STREAM_READY`), one after the
    /// other, for at most the connection's `answerTimeout` in all. Lock held (the wait
    /// releases it: `pa_threaded_mainloop_wait`).
    /// - Parameters:
    ///   - refused: the error's text when the server refuses a stream, before its reason.
    ///   - what: what was waited for, in the error when the server does not answer.
    /// - Throws: `DuckPromptError(.unavailable)`: "`refused`: reason" when a stream failed or
    ///   ended or the connection is lost; `PulseConnection.silentServerError(what)` when the
    ///   time ran out. libpulse: `pa_stream_get_state`.
    package static func waitReadyLocked(_ streams: [PulseStream], refused: String, what: String) throws {
        guard let connection = streams.first?.connection else { return }
        let deadline = ContinuousClock.now + connection.answerTimeout
        try connection.withWakeupLocked(at: deadline) {
            for stream in streams.map(\.stream) {
                while libpulse.pa_stream_get_state(stream) != PA_STREAM_READY {
                    let state = libpulse.pa_stream_get_state(stream)
                    if state == PA_STREAM_FAILED || state == PA_STREAM_TERMINATED || !connection.isAliveLocked {
                        throw DuckPromptError(.unavailable, "\(refused): \(connection.lastErrorLocked)")
                    }
                    guard ContinuousClock.now < deadline else { throw connection.silentServerError(what) }
                    connection.waitLocked()
                }
            }
        }
    }

    /// The stream's index on the server (its sink-input or source-output), `PA_INVALID_INDEX`
    /// before it is connected. Lock held. libpulse: `pa_stream_get_index`.
    package var indexLocked: UInt32 { libpulse.pa_stream_get_index(stream) }

    private func clearCallbacksLocked() {
        libpulse.pa_stream_set_write_callback(stream, nil, nil)
        libpulse.pa_stream_set_read_callback(stream, nil, nil)
        libpulse.pa_stream_set_state_callback(stream, nil, nil)
    }

    /// Ends the stream: no callback runs from now on, the server removes it, and the stream's
    /// retain is given back. Lock held; once for every connected stream (a second call does
    /// nothing). libpulse: `pa_stream_disconnect`, `pa_stream_unref`.
    package func disconnectLocked() {
        guard let retained else { return }
        self.retained = nil
        clearCallbacksLocked()
        _ = libpulse.pa_stream_disconnect(stream)
        libpulse.pa_stream_unref(stream)
        retained.release()
    }
}
