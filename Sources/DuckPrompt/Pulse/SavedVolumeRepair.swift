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
    /// Blocks for about `holdMs`; call without the lock. Failures are ignored (best effort: a
    /// repair that fails leaves the saved volume as the server has it).
    /// libpulse: `pa_stream_connect_playback` (`PA_STREAM_START_CORKED`),
    /// `pa_context_set_sink_input_volume`, `pa_stream_disconnect`.
    func repairSavedVolumes(_ repairs: [(key: RestoreKey, volume: ChannelVolumes)], holdMs: Int = 500) {
        guard !repairs.isEmpty else { return }
        var streams: [(stream: OpaquePointer, volume: ChannelVolumes)] = []
        withLock {
            for repair in repairs {
                let channels = max(1, min(repair.volume.values.count, Int(PA_CHANNELS_MAX)))
                var spec = pa_sample_spec(format: PA_SAMPLE_S16LE, rate: 48000, channels: UInt8(channels))
                var map = pa_channel_map()
                pa_channel_map_init_extend(&map, UInt32(channels), PA_CHANNEL_MAP_DEFAULT)
                let props = pa_proplist_new()
                defer { pa_proplist_free(props) }
                if let v = repair.key.mediaRole { pa_proplist_sets(props, PA_PROP_MEDIA_ROLE, v) }
                if let v = repair.key.applicationName { pa_proplist_sets(props, PA_PROP_APPLICATION_NAME, v) }
                if let v = repair.key.applicationID { pa_proplist_sets(props, PA_PROP_APPLICATION_ID, v) }
                pa_proplist_sets(props, PA_PROP_MEDIA_NAME, "duckprompt saved-volume repair")
                pa_proplist_sets(props, "duckprompt.repair", "1")
                guard let stream = pa_stream_new_with_proplist(context, "duckprompt saved-volume repair",
                                                               &spec, &map, props) else { continue }
                pa_stream_set_state_callback(stream, { _, userdata in
                    pa_threaded_mainloop_signal(OpaquePointer(userdata), 0)
                }, UnsafeMutableRawPointer(mainloop))
                // No volume at connect: the server must restore the saved (ducked) one, so that
                // setting the original afterwards is a change it saves.
                if pa_stream_connect_playback(stream, nil, nil, PA_STREAM_START_CORKED, nil, nil) < 0 {
                    pa_stream_unref(stream)
                    continue
                }
                streams.append((stream, repair.volume))
            }
            // Wait until each is connected, then set its volume as a client would.
            let deadline = ContinuousClock.now + answerTimeout
            let pending = PendingOperations(mainloop: mainloop)
            withWakeupLocked(at: deadline) {
                for (stream, volume) in streams {
                    while pa_stream_get_state(stream) == PA_STREAM_CREATING && isAliveLocked
                            && ContinuousClock.now < deadline {
                        waitLocked()
                    }
                    if pa_stream_get_state(stream) == PA_STREAM_READY {
                        setSinkInputVolumeLocked(pa_stream_get_index(stream), volume, pending: pending)
                    }
                }
            }
            waitLocked(for: pending)
        }
        sleepThread(for: .milliseconds(holdMs))
        withLock {
            for (stream, _) in streams {
                pa_stream_set_state_callback(stream, nil, nil)
                pa_stream_disconnect(stream)
                pa_stream_unref(stream)
            }
        }
    }
}
