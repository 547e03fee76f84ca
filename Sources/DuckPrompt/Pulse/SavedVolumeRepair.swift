import CPulseAudio
import FoundationEssentials
import Glibc

extension PulseConnection {
    /// Makes the server's saved volume for each key be the given volume again, after a stream
    /// ended while ducked (the server saved its ducked volume, and the next stream of that
    /// application or role would start ducked).
    ///
    /// How: for each key, a playback stream that carries the same `media.role`,
    /// `application.name` and `application.id` connects corked (it never plays a sample), its
    /// volume is set to the original, and it stays ~0.5 s so the restore policy saves that
    /// volume; then it disconnects. This works on PulseAudio (module-stream-restore) and on
    /// PipeWire (WirePlumber restore-stream), where `pa_ext_stream_restore_write` reports
    /// success but changes nothing (measured on 0.3.65).
    ///
    /// Blocks for about `holdMs`; call without the lock.
    /// - Returns: whether every repair was made: each stream was created, its volume write
    ///   acknowledged, and the connection was still up after the hold. False leaves the saved
    ///   volumes as the server has them (the caller keeps its journal, to try again).
    /// libpulse: `pa_stream_connect_playback` (`PA_STREAM_START_CORKED`),
    /// `pa_context_set_sink_input_volume`, `pa_stream_disconnect`.
    @discardableResult
    func repairSavedVolumes(_ repairs: [(key: RestoreKey, volume: ChannelVolumes)], holdMs: Int = 500) -> Bool {
        guard !repairs.isEmpty else { return true }
        var streams: [(stream: OpaquePointer, volume: ChannelVolumes)] = []
        let sent = withLock { () -> Bool in
            for repair in repairs {
                let channels = max(1, min(repair.volume.values.count, Int(PA_CHANNELS_MAX)))
                var spec = pa_sample_spec(format: PA_SAMPLE_S16LE, rate: 48000, channels: UInt8(channels))
                var map = pa_channel_map()
                _ = libpulse.pa_channel_map_init_extend(&map, UInt32(channels), PA_CHANNEL_MAP_DEFAULT)
                let props = libpulse.pa_proplist_new()
                defer { libpulse.pa_proplist_free(props) }
                if let v = repair.key.mediaRole { _ = libpulse.pa_proplist_sets(props, PA_PROP_MEDIA_ROLE, v) }
                if let v = repair.key.applicationName { _ = libpulse.pa_proplist_sets(props, PA_PROP_APPLICATION_NAME, v) }
                if let v = repair.key.applicationID { _ = libpulse.pa_proplist_sets(props, PA_PROP_APPLICATION_ID, v) }
                _ = libpulse.pa_proplist_sets(props, PA_PROP_MEDIA_NAME, "duckprompt saved-volume repair")
                _ = libpulse.pa_proplist_sets(props, "duckprompt.repair", "1")
                guard let stream = libpulse.pa_stream_new_with_proplist(context, "duckprompt saved-volume repair",
                                                               &spec, &map, props) else { return false }
                libpulse.pa_stream_set_state_callback(stream, { _, userdata in
                    libpulse.pa_threaded_mainloop_signal(OpaquePointer(userdata), 0)
                }, UnsafeMutableRawPointer(mainloop))
                // No volume at connect: the server must restore the saved (ducked) one, so that
                // setting the original afterwards is a change it saves.
                if libpulse.pa_stream_connect_playback(stream, nil, nil, PA_STREAM_START_CORKED, nil, nil) < 0 {
                    libpulse.pa_stream_unref(stream)
                    return false
                }
                streams.append((stream, repair.volume))
            }
            // Wait until each is connected, then set its volume as a client would.
            let deadline = ContinuousClock.now + answerTimeout
            let pending = PendingOperations(mainloop: mainloop)
            var ready = 0
            withWakeupLocked(at: deadline) {
                for (stream, volume) in streams {
                    while libpulse.pa_stream_get_state(stream) == PA_STREAM_CREATING && isAliveLocked
                            && ContinuousClock.now < deadline {
                        waitLocked()
                    }
                    if libpulse.pa_stream_get_state(stream) == PA_STREAM_READY {
                        setSinkInputVolumeLocked(libpulse.pa_stream_get_index(stream), volume, pending: pending)
                        ready += 1
                    }
                }
            }
            waitLocked(for: pending)
            return ready == repairs.count && pending.outstanding == 0 && pending.failures == 0
        }
        if sent { sleepThread(for: .milliseconds(holdMs)) }
        return withLock {
            for (stream, _) in streams {
                libpulse.pa_stream_set_state_callback(stream, nil, nil)
                _ = libpulse.pa_stream_disconnect(stream)
                libpulse.pa_stream_unref(stream)
            }
            return sent && isAliveLocked
        }
    }
}
