import CPulseAudio
import FoundationEssentials
import Glibc

/// Pulls float32 interleaved frames: fills at most `frames` frames into the buffer and returns
/// how many it wrote; 0 means the end. Called on the mainloop thread.
typealias FramePuller = (_ buffer: UnsafeMutablePointer<Float>, _ frames: Int) -> Int

/// The prompt's playback stream: s16 or float32 at the source's rate and channel count, connected
/// corked to one sink with a small buffer, fed from a `FramePuller` on the loop thread, and
/// drained so that its last sample is heard before it ends.
///
/// libpulse: `pa_stream_new_with_proplist`, `pa_stream_connect_playback`
/// (`PA_STREAM_START_CORKED | PA_STREAM_ADJUST_LATENCY`), `pa_stream_begin_write`,
/// `pa_stream_write`, `pa_stream_drain`, `pa_stream_cork`.
final class PromptStream: @unchecked Sendable {
    /// What a stream was made for: a kept stream plays another prompt only of the same shape
    /// (`ReadyStreamKeeper`).
    struct Shape: Sendable, Equatable {
        /// `pa_sink_info.name` it was connected to.
        var sinkName: String
        /// Sample rate in Hz, channel count, sample format, as `init` took them.
        var rate: Int
        var channels: Int
        var format: StreamSampleFormat
        /// `latencyMs` as `init` took it (nil: `defaultBuffer`).
        var latencyMs: Int?
    }

    /// The default buffer, in ms: `tlength` 220 and `minreq` 100. With
    /// `PA_STREAM_ADJUST_LATENCY` the server runs the sink at (tlength − 2·minreq)/2 = 10 ms
    /// for this stream (PulseAudio's and pipewire-pulse's rule; `node.latency` 480/48000), as
    /// low as a 40 ms `tlength` gives, while the client is woken for 100 ms of audio at a time
    /// instead of about 10: a 60 s prompt costs a third of the CPU. The buffered audio does not
    /// delay an interruption: the fade-out is a volume ramp on the stream, then a flush.
    static let defaultBuffer: (tlengthMs: Int, minreqMs: Int?) = (220, 100)

    let connection: PulseConnection
    private let stream: OpaquePointer
    private let box: StreamBox
    let shape: Shape
    /// The properties this stream's prompt set (at creation, or at the last `rearm`).
    private var given: [String: String]

    /// Whether a prompt with `properties` may be played on this stream (`rearm`): it sets the
    /// same property names, so that every value is replaced and none of the last prompt's is
    /// left (pipewire-pulse 0.3.65 ignores `pa_stream_proplist_remove`: measured, the names
    /// stayed), with the same `media.role` and `application.name`, which the server's saved
    /// volume was chosen by when the stream was created.
    func carries(sameNamesAs properties: [String: String]) -> Bool {
        Set(given.keys) == Set(properties.keys)
            && given[PulseConnection.mediaRoleKey] == properties[PulseConnection.mediaRoleKey]
            && given["application.name"] == properties["application.name"]
    }

    /// Creates the stream and starts connecting it to `sinkName`, corked unless `corked` is
    /// false (it then plays as soon as its buffer is filled); does not wait.
    ///
    /// - Parameters:
    ///   - rate: sample rate in Hz (1 … `PA_RATE_MAX`).
    ///   - channels: channel count (1 … 32), WAVEEX channel order.
    ///   - sinkName: `pa_sink_info.name` of the routed sink.
    ///   - properties: stream properties (`media.role`, `media.name` …).
    ///   - volume: the stream's own gain, or nil for the server's saved volume.
    ///   - latencyMs: target buffer (`pa_buffer_attr.tlength`) in ms, with the server's default
    ///     `minreq` (as `paplay --latency-msec`); nil: `defaultBuffer`.
    ///   - corked: connect with `PA_STREAM_START_CORKED` (default) and wait for `start()`.
    ///   - format: the stream's sample format; `pull` hands out floats either way, which are
    ///     converted (× 32768, rounded, clamped) for `.s16le`.
    /// - Throws: `.internal` when libpulse refuses the sample spec or the connection.
    init(connection: PulseConnection, rate: Int, channels: Int, sinkName: String,
         properties: [String: String], volume: Decibels?, latencyMs: Int?, corked: Bool = true,
         format: StreamSampleFormat = .float32le, pull: @escaping FramePuller) throws {
        self.connection = connection
        shape = Shape(sinkName: sinkName, rate: rate, channels: channels, format: format, latencyMs: latencyMs)
        given = properties
        box = StreamBox(mainloop: connection.mainloop, channels: channels, format: format, pull: pull)
        box.uncorked = !corked
        var spec = pa_sample_spec(format: format == .s16le ? PA_SAMPLE_S16LE : PA_SAMPLE_FLOAT32LE,
                                  rate: UInt32(rate), channels: UInt8(channels))
        guard libpulse.pa_sample_spec_valid(&spec) != 0 else {
            throw DuckPromptError(.unsupportedData,
                "\(rate) Hz with \(channels) channels is not a sample format the server accepts")
        }
        var map = pa_channel_map()
        _ = libpulse.pa_channel_map_init_extend(&map, UInt32(channels), PA_CHANNEL_MAP_WAVEEX)
        let props = libpulse.pa_proplist_new()
        defer { libpulse.pa_proplist_free(props) }
        for (k, v) in properties { _ = libpulse.pa_proplist_sets(props, k, v) }
        let created: OpaquePointer? = connection.withLock {
            libpulse.pa_stream_new_with_proplist(connection.context, properties[PA_PROP_MEDIA_NAME] ?? "prompt",
                                        &spec, &map, props)
        }
        guard let created else {
            throw DuckPromptError(.internal, "cannot create the prompt stream: \(connection.withLock { connection.lastErrorLocked })")
        }
        stream = created
        box.stream = created
        var attr = pa_buffer_attr()
        attr.maxlength = UInt32.max
        attr.prebuf = UInt32.max
        attr.fragsize = UInt32.max
        let buffer = latencyMs.map { (tlengthMs: max(1, $0), minreqMs: nil as Int?) } ?? Self.defaultBuffer
        attr.tlength = UInt32(libpulse.pa_usec_to_bytes(UInt64(buffer.tlengthMs) * 1000, &spec))
        attr.minreq = buffer.minreqMs.map { UInt32(libpulse.pa_usec_to_bytes(UInt64($0) * 1000, &spec)) } ?? UInt32.max
        var cv = pa_cvolume()
        if let volume {
            _ = libpulse.pa_cvolume_set(&cv, UInt32(channels), VolumeMath.volume(fromDecibels: volume.value))
        }
        let flags = pa_stream_flags_t((corked ? PA_STREAM_START_CORKED.rawValue : 0) | PA_STREAM_ADJUST_LATENCY.rawValue)
        let userdata = Unmanaged.passUnretained(box).toOpaque()
        let result: Int32 = connection.withLock {
            libpulse.pa_stream_set_state_callback(stream, { _, userdata in
                let box = Unmanaged<StreamBox>.fromOpaque(userdata!).takeUnretainedValue()
                libpulse.pa_threaded_mainloop_signal(box.mainloop, 0)
            }, userdata)
            libpulse.pa_stream_set_moved_callback(stream, { _, userdata in
                let box = Unmanaged<StreamBox>.fromOpaque(userdata!).takeUnretainedValue()
                box.moved = true
                libpulse.pa_threaded_mainloop_signal(box.mainloop, 0)
            }, userdata)
            libpulse.pa_stream_set_write_callback(stream, { stream, nbytes, userdata in
                let box = Unmanaged<StreamBox>.fromOpaque(userdata!).takeUnretainedValue()
                PromptStream.fill(stream!, requested: nbytes, box: box)
            }, userdata)
            if volume != nil {
                return libpulse.pa_stream_connect_playback(stream, sinkName, &attr, flags, &cv, nil)
            }
            return libpulse.pa_stream_connect_playback(stream, sinkName, &attr, flags, nil, nil)
        }
        if result < 0 {
            let reason = connection.withLock { connection.lastErrorLocked }
            connection.withLock { libpulse.pa_stream_unref(stream) }
            throw DuckPromptError(.unavailable, "cannot play on sink '\(sinkName)': \(reason)")
        }
    }

    /// The write callback's body, on the loop thread: pull frames, write, drain at the end.
    private static func fill(_ stream: OpaquePointer, requested: Int, box: StreamBox) {
        guard !box.reachedEnd else { return }
        let frameBytes = box.channels * (box.format == .s16le ? MemoryLayout<Int16>.size : MemoryLayout<Float>.size)
        var remaining = requested
        while remaining >= frameBytes {
            var data: UnsafeMutableRawPointer? = nil
            var size = remaining
            guard libpulse.pa_stream_begin_write(stream, &data, &size) >= 0, let data, size >= frameBytes else { return }
            let frames: Int
            switch box.format {
            case .float32le:
                let floats = data.bindMemory(to: Float.self, capacity: size / 4)
                frames = box.pull(floats, size / frameBytes)
                box.replay?.append(contentsOf: UnsafeBufferPointer(start: floats, count: frames * box.channels))
            case .s16le:
                let samples = size / frameBytes * box.channels
                if box.floats.count < samples { box.floats = [Float](repeating: 0, count: samples) }
                frames = box.floats.withUnsafeMutableBufferPointer { box.pull($0.baseAddress!, size / frameBytes) }
                Self.convert(box.floats, count: frames * box.channels, to: data.bindMemory(to: Int16.self, capacity: samples))
                box.replay?.append(contentsOf: box.floats[0..<(frames * box.channels)])
            }
            if frames == 0 {
                _ = libpulse.pa_stream_cancel_write(stream)
                box.reachedEnd = true
                box.keep(libpulse.pa_stream_drain(stream, { _, _, userdata in
                    let box = Unmanaged<StreamBox>.fromOpaque(userdata!).takeUnretainedValue()
                    box.drained = true
                    libpulse.pa_threaded_mainloop_signal(box.mainloop, 0)
                }, Unmanaged.passUnretained(box).toOpaque()))
                return
            }
            _ = libpulse.pa_stream_write(stream, data, frames * frameBytes, nil, 0,
                                         box.writeAtReadIndex ? PA_SEEK_RELATIVE_ON_READ : PA_SEEK_RELATIVE)
            box.writeAtReadIndex = false
            box.framesWritten += Int64(frames)
            box.announceIfDue()
            remaining -= frames * frameBytes
        }
    }

    /// Float samples in -1 … 1 to s16: × 32768, rounded, clamped to -32768 … 32767. Exact for
    /// floats that were 16-bit samples / 32768.
    static func convert(_ floats: [Float], count: Int, to out: UnsafeMutablePointer<Int16>) {
        for i in 0..<count {
            out[i] = Int16(clamping: Int((floats[i] * 32768).rounded()))
        }
    }

    /// Waits until the stream is connected (or failed); returns its sink-input index.
    /// - Throws: `.unavailable` when the server refused the stream, the connection dropped,
    ///   or the server did not answer within the connection's `answerTimeout`.
    func waitReady() throws -> UInt32 {
        let deadline = ContinuousClock.now + connection.answerTimeout
        return try connection.withLock {
            try connection.withWakeupLocked(at: deadline) {
                while true {
                    let state = libpulse.pa_stream_get_state(stream)
                    if state == PA_STREAM_READY { return libpulse.pa_stream_get_index(stream) }
                    if connection.stalled { throw connection.silentServerError("connecting the prompt stream") }
                    if state == PA_STREAM_FAILED || state == PA_STREAM_TERMINATED || !connection.isAliveLocked {
                        throw DuckPromptError(.unavailable,
                            "the server refused the prompt stream: \(connection.lastErrorLocked)")
                    }
                    guard ContinuousClock.now < deadline else {
                        throw connection.stallLocked("connecting the prompt stream")
                    }
                    connection.waitLocked()
                }
            }
        }
    }

    /// Uncorks: playback starts. `pa_stream_cork(s, 0)`.
    func start() {
        connection.withLock { startLocked() }
    }

    /// `start()`, lock held.
    private func startLocked() {
        if uncorkWithheld {
            uncorkWithheld = false
        } else {
            let op = libpulse.pa_stream_cork(stream, 0, nil, nil)
            if let op { libpulse.pa_operation_unref(op) }
        }
        box.uncorked = true
        box.announceIfDue()
    }

    /// Pauses playback, keeping what is buffered (a prompt whose sink went away, while it looks
    /// for the device's new one): `pa_stream_cork(s, 1)`; `start()` resumes. Lock held.
    func pauseLocked() {
        if let op = libpulse.pa_stream_cork(stream, 1, nil, nil) { libpulse.pa_operation_unref(op) }
    }

    /// Whether the next `start()` sends no uncork (`withholdUncork()`). Lock held.
    private var uncorkWithheld = false

    /// For tests (`ReadyStreamKeeper.withholdUncorks`): the next `start()` does everything but
    /// tell the server, so the stream stays corked there and takes no byte, as a kept stream
    /// PipeWire 0.3.65 did not run again after its uncork (`KeptStreamStart`).
    func withholdUncork() {
        connection.withLock { uncorkWithheld = true }
    }

    /// Calls `announce` once the stream plays (uncorked) and the first frame after
    /// `silenceFrames` (the pre-roll) has been handed to the server (`pa_stream_write`), then
    /// asks the server where the stream stands and calls `timed` with the CLOCK_MONOTONIC µs
    /// at which that frame reaches the device (`StreamClock`; not called when the server
    /// cannot say): both on the loop thread, with the connection's lock held, so they must not
    /// wait for anything. libpulse: `pa_stream_update_timing_info`, `pa_stream_get_timing_info`.
    func announceAudio(after silenceFrames: Int, _ announce: @escaping () -> Void,
                       timed: ((Int64) -> Void)? = nil) {
        connection.withLock {
            box.audioFrom = Int64(silenceFrames)
            box.onAudioTiming = timed
            box.onAudio = announce
            box.announceIfDue()
        }
    }

    /// Whether the last sample has been played (`pa_stream_drain` acknowledged). Lock held.
    var drainedLocked: Bool { box.drained }

    /// Whether the server moved the stream to another sink since the last look (its sink went
    /// away: a Bluetooth profile switch, a device unplugged; or a user moved it); the flag is
    /// cleared. Lock held. libpulse: `pa_stream_set_moved_callback`.
    func takeMovedLocked() -> Bool {
        defer { box.moved = false }
        return box.moved
    }

    /// Whether the server moved the stream (`takeMovedLocked`), not clearing it. Lock held.
    var movedLocked: Bool { box.moved }

    /// The name of the sink the stream plays on now (`pa_stream_get_device_name`); nil when
    /// not known. Lock held.
    var sinkNameLocked: String? { libpulse.pa_stream_get_device_name(stream).map { String(cString: $0) } }

    /// Moves the stream to `sink` and waits for the server's answer; the move's own moved
    /// notice is cleared. Call without the lock.
    /// - Throws: `.unavailable` when the server refuses (the sink is gone) or does not answer.
    /// libpulse: `pa_context_move_sink_input_by_name`.
    func move(to sink: String) throws {
        let ok = try connection.withLock { () -> Bool in
            let index = libpulse.pa_stream_get_index(stream)
            final class Answer { var success: Int32 = -1; let mainloop: OpaquePointer; init(_ m: OpaquePointer) { mainloop = m } }
            let answer = Answer(connection.mainloop)
            let op = libpulse.pa_context_move_sink_input_by_name(connection.context, index, sink, { _, success, userdata in
                let answer = Unmanaged<Answer>.fromOpaque(userdata!).takeUnretainedValue()
                answer.success = success
                libpulse.pa_threaded_mainloop_signal(answer.mainloop, 0)
            }, Unmanaged.passUnretained(answer).toOpaque())
            try withExtendedLifetime(answer) { try connection.waitLocked(for: op, what: "moving the prompt to \(sink)") }
            box.moved = false
            return answer.success > 0
        }
        if !ok { throw DuckPromptError(.unavailable, "the server would not move the prompt to sink '\(sink)'") }
    }

    /// Stops playback at once (an interrupted prompt): `pa_stream_cork(s, 1)` and
    /// `pa_stream_flush`. Lock held.
    func stopLocked() {
        box.reachedEnd = true
        box.uncorked = false
        if let op = libpulse.pa_stream_cork(stream, 1, nil, nil) { libpulse.pa_operation_unref(op) }
        if let op = libpulse.pa_stream_flush(stream, nil, nil) { libpulse.pa_operation_unref(op) }
    }

    /// Stops an interrupted prompt without a click: its own volume falls by 60 dB over
    /// `durationMs` (default 50) in 5 ms steps, then the stream is corked and flushed and its
    /// volume set back — to `own` when given (the saved slot, under a relative `--volume`),
    /// else to where the fade began — so the server's saved prompt volume is unchanged. Call
    /// without the lock.
    /// libpulse: `pa_context_get_sink_input_info`, `pa_context_set_sink_input_volume`,
    /// `pa_stream_cork`, `pa_stream_flush`.
    func fadeOutAndStop(durationMs: Int = 50, restoring own: ChannelVolumes? = nil) {
        let index = connection.withLock { libpulse.pa_stream_get_index(stream) }
        // A volume of 0 is not faded (and, on PipeWire, may be no volume yet: never written back).
        if index != dp_pa_invalid_index(), let input = try? connection.sinkInput(index), input.hasVolume,
           !input.volume.values.allSatisfy({ $0 == 0 }) {
            let pending = PendingOperations(mainloop: connection.mainloop)
            let steps = max(1, durationMs / 5)
            let start = ContinuousClock.now
            for step in 1...steps {
                // Each step acknowledged before the next, on a 5 ms grid: a busy server must
                // not apply the whole fade at once.
                let volume = VolumeMath.scale(input.volume, by: -60 * Double(step) / Double(steps))
                setVolumeAndWait(index, volume, pending: pending)
                let due = start + .milliseconds(5 * step)
                let now = ContinuousClock.now
                sleepThread(for: due - now)
            }
            // Let the last, silent step be rendered before the stream stops.
            sleepThread(for: .milliseconds(10))
            connection.withLock {
                stopLocked()
                // Its own volume back: the server saves it for media.role=navigation, and the
                // next prompt must not start 60 dB down.
                setVolumeAndWaitLocked(index, own ?? input.volume, pending: pending)
            }
            return
        }
        connection.withLock { stopLocked() }
    }

    /// A stream's own volume and mute, as read from the server.
    struct OwnVolume: Equatable {
        /// `pa_sink_input_info.volume`, one `pa_volume_t` per channel.
        var volume: ChannelVolumes
        /// `pa_sink_input_info.mute`.
        var muted: Bool
        /// Whether a prompt at this volume is silence: muted, or every channel at 0 (-inf dB).
        var isSilent: Bool { muted || volume.values.allSatisfy { $0 == 0 } }
    }

    /// The stream's own volume once the server really has it (`pa_context_get_sink_input_info`):
    /// at first, the volume its restore policy saved for the stream's `media.role`.
    ///
    /// pipewire-pulse answers 0 on every channel, not muted, until it has read the node's
    /// `Props` (its `VOLUME_INIT` has no channels): a few hundred µs after the stream is ready
    /// on a quiet machine, far longer on a loaded one. On PipeWire such a read is therefore
    /// not taken as a volume: the node's own `Props` are asked for (`PipeWireWatch`) and the
    /// sink-input read again after each of its change events, until a real value comes or
    /// `deadline`. A 0 the node itself reports is real (the user saved 0 for the role).
    /// - Parameter onPipeWire: the server is pipewire-pulse (`pa_server_info.server_name`).
    /// - Returns: nil when the stream has no index yet or no volume, or when on PipeWire no real
    ///   value came by `deadline`: then nothing may be computed from it.
    /// - Throws: `.unavailable` when the server does not answer.
    func ownVolume(onPipeWire: Bool, until deadline: ContinuousClock.Instant) throws -> OwnVolume? {
        let index = connection.withLock { libpulse.pa_stream_get_index(stream) }
        guard index != dp_pa_invalid_index(), var input = try connection.sinkInput(index), input.hasVolume else {
            return nil
        }
        var read = OwnVolume(volume: input.volume, muted: input.mute)
        guard onPipeWire, !read.muted, read.volume.values.allSatisfy({ $0 == 0 }) else { return read }
        DebugTrace.write("prompt stream #\(index): pipewire-pulse answers volume 0 (not yet read from its node)")
        let inbox = EventInbox(mainloop: connection.mainloop)
        try connection.subscribe(into: inbox)
        defer { connection.unsubscribe(inbox) }
        let (watch, node) = connection.withLock { () -> (PipeWireWatch?, UInt32?) in
            guard let watch = connection.pipeWireWatchLocked() else { return (nil, nil) }
            watch.inboxes.append(inbox)
            return (watch, watch.watchLocked(input))
        }
        defer {
            connection.withLock {
                if let node { watch?.unwatchLocked(node: node) }
                watch?.inboxes.removeAll { $0 === inbox }
            }
        }
        while true {
            // Wait for the node's volume or a change of the stream.
            let (nodeVolume, changed) = connection.withLock { () -> (ChannelVolumes?, Bool) in
                connection.withWakeupLocked(at: deadline) {
                    while true {
                        let volume = inbox.nodeVolumes.last { $0.node == node }?.volume
                        let changed = inbox.events.contains { $0.facility == .sinkInput && $0.index == index }
                        inbox.nodeVolumes.removeAll()
                        inbox.events.removeAll()
                        inbox.lostNodes.removeAll()
                        if volume != nil || changed || ContinuousClock.now >= deadline || !connection.isAliveLocked {
                            return (volume, changed)
                        }
                        connection.waitLocked()
                    }
                }
            }
            if nodeVolume == nil && !changed { return nil }
            guard let again = try connection.sinkInput(index) else { return nil }
            input = again
            read = OwnVolume(volume: input.volume, muted: input.mute)
            if read.muted || !read.volume.values.allSatisfy({ $0 == 0 }) { return read }
            // The node itself says 0: the saved volume really is 0.
            if let nodeVolume { return OwnVolume(volume: nodeVolume, muted: false) }
        }
    }

    /// Sets the stream's own volume (`pa_context_set_sink_input_volume`) and waits for the
    /// answer. The server's restore policy saves it for the stream's `media.role`.
    func setOwnVolume(_ volume: ChannelVolumes) {
        let index = connection.withLock { libpulse.pa_stream_get_index(stream) }
        guard index != dp_pa_invalid_index() else { return }
        setVolumeAndWait(index, volume, pending: PendingOperations(mainloop: connection.mainloop))
    }

    /// Sets sink-input `index`'s volume and waits for the server's answer. Call without the lock.
    /// libpulse: `pa_context_set_sink_input_volume`.
    private func setVolumeAndWait(_ index: UInt32, _ volume: ChannelVolumes, pending: PendingOperations) {
        connection.withLock { setVolumeAndWaitLocked(index, volume, pending: pending) }
    }

    /// `setVolumeAndWait` with the lock held.
    private func setVolumeAndWaitLocked(_ index: UInt32, _ volume: ChannelVolumes, pending: PendingOperations) {
        connection.setSinkInputVolumeLocked(index, volume, pending: pending)
        connection.waitLocked(for: pending)
    }

    // MARK: - Kept ready between prompts

    /// Corks a stream whose prompt played whole, to be kept for the next prompt of its shape
    /// (`rearm`): an empty, corked stream lets the sink suspend. Then asks where the server's
    /// read index stands (answered while the stream waits: the next prompt's
    /// `confirmPlaying` tells from it whether the server takes bytes again).
    /// libpulse: `pa_stream_cork(s, 1)`, `pa_stream_update_timing_info`.
    func park() {
        connection.withLock {
            box.pull = { _, _ in 0 }
            box.uncorked = false
            box.replay = nil
            box.parkedReadIndex = nil
            if let op = libpulse.pa_stream_cork(stream, 1, nil, nil) { libpulse.pa_operation_unref(op) }
            // Asked after the cork: the answer is the index of the corked stream, which the
            // server no longer reads.
            box.keep(libpulse.pa_stream_update_timing_info(stream, { stream, success, userdata in
                let box = Unmanaged<StreamBox>.fromOpaque(userdata!).takeUnretainedValue()
                if success != 0, let stream, let info = libpulse.pa_stream_get_timing_info(stream)?.pointee,
                   info.read_index_corrupt == 0 {
                    box.parkedReadIndex = info.read_index
                }
            }, Unmanaged.passUnretained(box).toOpaque()))
        }
    }

    /// Whether a parked stream can play another prompt on `sinkName`: connected, still on that
    /// sink (the server moves a stream whose sink went away: `pa_stream_get_device_name`),
    /// its connection alive, its last prompt drained. Lock held.
    func isReusableLocked(on sinkName: String) -> Bool {
        guard connection.isAliveLocked, box.drained, libpulse.pa_stream_get_state(stream) == PA_STREAM_READY,
              let device = libpulse.pa_stream_get_device_name(stream) else { return false }
        return String(cString: device) == sinkName
    }

    /// Makes a parked stream play the next prompt (one that `carries(sameNamesAs:)`): its
    /// properties' values (`media.name` …) replaced by the new prompt's, its buffer filled from
    /// `pull` at once while still corked (`start()` uncorks), or, with `starting`, uncorked
    /// under the same hold of the loop lock, so that the uncork leaves with the writes (a
    /// second `withLock` waited up to 0.4 ms for the loop thread sending them).
    /// libpulse: `pa_stream_proplist_update` (`PA_UPDATE_REPLACE`), `pa_stream_writable_size`,
    /// then the writes of the write callback; `pa_stream_cork(s, 0)`.
    func rearm(properties: [String: String], pull: @escaping FramePuller, starting: Bool = false) {
        let props = libpulse.pa_proplist_new()
        defer { libpulse.pa_proplist_free(props) }
        for (k, v) in properties { _ = libpulse.pa_proplist_sets(props, k, v) }
        given = properties
        connection.withLock {
            if let op = libpulse.pa_stream_proplist_update(stream, PA_UPDATE_REPLACE, props, nil, nil) { libpulse.pa_operation_unref(op) }
            box.pull = pull
            box.reachedEnd = false
            box.drained = false
            box.framesWritten = 0
            box.writeAtReadIndex = true
            // Kept corked between prompts.
            box.uncorked = false
            box.onAudio = nil
            box.onAudioTiming = nil
            // Kept until the server is seen taking them (`confirmPlaying`).
            box.replay = []
            let writable = libpulse.pa_stream_writable_size(stream)
            if writable != Int.max, writable > 0 { Self.fill(stream, requested: writable, box: box) }
            if starting { startLocked() }
        }
    }

    /// Frames handed to the server so far.
    var framesWritten: Int64 { connection.withLock { box.framesWritten } }

    /// For a stream `rearm`ed and then started: waits until the server takes bytes from it
    /// (its read index passes the one it had once parked), asking every
    /// `KeptStreamStart.pollMs`, for at most `KeptStreamStart.limitMs` after the call.
    /// - Parameter stop: a stop came (an interruption or a cancel): returns at once, for the
    ///   hold to carry it out.
    /// - Returns: false when the server took nothing in that time (the stream does not play:
    ///   `reopened()`); true when it did, when a stop came, or when the server cannot say.
    /// - Throws: `.unavailable` when the server does not answer or the connection is lost.
    /// libpulse: `pa_stream_update_timing_info`, `pa_stream_get_timing_info`.
    func confirmPlaying(stop: () -> Bool) throws -> Bool {
        let started = ContinuousClock.now
        while true {
            let (parked, read) = try connection.withLock { (box.parkedReadIndex, try indexesLocked().read) }
            let elapsed = Int((ContinuousClock.now - started).seconds * 1000)
            switch KeptStreamStart.verdict(parkedReadIndex: parked, readIndex: read, elapsedMs: elapsed) {
            case .playing:
                connection.withLock { box.replay = nil }
                DebugTrace.write("kept stream: the server takes it after \(elapsed) ms (read index \(parked.map(String.init) ?? "?") → \(read.map(String.init) ?? "?"))")
                return true
            case .stuck:
                DebugTrace.write("kept stream: the server took nothing in \(elapsed) ms (read index \(parked.map(String.init) ?? "?") → \(read.map(String.init) ?? "?"))")
                return false
            case .waiting:
                if stop() { return true }
                sleepThread(for: .milliseconds(KeptStreamStart.pollMs))
            }
        }
    }

    /// The server's read and write indexes of the stream now, in bytes (nil when it cannot
    /// say). Lock held.
    /// - Throws: `.unavailable` when the server does not answer or the connection is lost.
    private func indexesLocked() throws -> (read: Int64?, write: Int64?) {
        box.lastReadIndex = nil
        box.lastWriteIndex = nil
        let op = libpulse.pa_stream_update_timing_info(stream, { stream, success, userdata in
            let box = Unmanaged<StreamBox>.fromOpaque(userdata!).takeUnretainedValue()
            if success != 0, let stream, let info = libpulse.pa_stream_get_timing_info(stream)?.pointee {
                box.lastReadIndex = info.read_index_corrupt == 0 ? info.read_index : nil
                box.lastWriteIndex = info.write_index_corrupt == 0 ? info.write_index : nil
            }
            libpulse.pa_threaded_mainloop_signal(box.mainloop, 0)
        }, Unmanaged.passUnretained(box).toOpaque())
        try connection.waitLocked(for: op, what: "reading where the prompt stream stands")
        return (box.lastReadIndex, box.lastWriteIndex)
    }

    /// After its drain was acknowledged: checks that the server took every byte written to
    /// the stream (`DrainCheck`), so that a prompt it did not play whole is never reported
    /// played.
    /// - Throws: `.unavailable` when it did not (naming the bytes taken and written), when the
    ///   server does not answer, or when the connection is lost.
    /// libpulse: `pa_stream_update_timing_info`, `pa_stream_get_timing_info`.
    func checkPlayedThrough() throws {
        let (read, write) = try connection.withLock { try indexesLocked() }
        DebugTrace.write("drained: read index \(read.map(String.init) ?? "?"), write index \(write.map(String.init) ?? "?")")
        guard !DrainCheck.tookEverything(readIndex: read, writeIndex: write), let read, let write else { return }
        throw DuckPromptError(.unavailable, "the sound server at \(connection.serverDescription) said the prompt "
            + "had played, but had taken only \(read) of its \(write) bytes")
    }

    /// A new stream of this one's shape, sink and properties, for the prompt this kept stream
    /// did not play (`confirmPlaying` false): connected corked (`start()` uncorks), fed first
    /// the frames this one was given since `rearm`, then the rest of the prompt. This one
    /// gives nothing more; the caller closes it.
    /// - Throws: as `init`.
    func reopened() throws -> PromptStream {
        let (recorded, rest) = connection.withLock { () -> ([Float], FramePuller) in
            defer {
                box.replay = nil
                box.pull = { _, _ in 0 }
            }
            return (box.replay ?? [], box.pull)
        }
        let channels = shape.channels
        var offset = 0
        let pull: FramePuller = { buffer, frames in
            guard offset < recorded.count else { return rest(buffer, frames) }
            let count = min(frames, (recorded.count - offset) / channels)
            recorded.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress! + offset, count: count * channels) }
            offset += count * channels
            return count
        }
        return try PromptStream(connection: connection, rate: shape.rate, channels: channels, sinkName: shape.sinkName,
                                properties: given, volume: nil, latencyMs: shape.latencyMs, corked: true,
                                format: shape.format, pull: pull)
    }

    /// Disconnects and releases the stream (`pa_stream_disconnect`, `pa_stream_unref`). No
    /// callback reaches its box afterwards: the stream's callbacks are cleared and its
    /// unanswered operations cancelled (`pa_operation_cancel`), since libpulse keeps the stream
    /// (and answers them) until the server confirms the disconnect. Call once.
    func close() {
        connection.withLock {
            libpulse.pa_stream_set_write_callback(stream, nil, nil)
            libpulse.pa_stream_set_state_callback(stream, nil, nil)
            libpulse.pa_stream_set_moved_callback(stream, nil, nil)
            box.cancelOperations()
            _ = libpulse.pa_stream_disconnect(stream)
            libpulse.pa_stream_unref(stream)
        }
    }
}
