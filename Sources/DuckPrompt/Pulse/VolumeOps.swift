import CPulseAudio

/// Counts volume operations in flight, so that many can be pipelined and waited for once.
final class PendingOperations: @unchecked Sendable {
    let mainloop: OpaquePointer
    /// Guarded by the loop lock.
    var outstanding = 0
    /// Operations the server refused (e.g. the sink-input is gone). Guarded by the loop lock.
    var failures = 0
    init(mainloop: OpaquePointer) { self.mainloop = mainloop }
}

extension PulseConnection {
    /// Sends a sink-input volume without waiting for the answer. Call with the lock held.
    ///
    /// - Parameters:
    ///   - index: sink-input index (`pa_sink_input_info.index`).
    ///   - volume: per-channel `pa_volume_t` in the sink-input's channel order.
    ///   - pending: counts the operation until the server acknowledges it.
    /// libpulse: `pa_context_set_sink_input_volume`.
    func setSinkInputVolumeLocked(_ index: UInt32, _ volume: ChannelVolumes,
                                  pending: PendingOperations) {
        // Nothing is sent to a server that stopped answering: it would apply the writes
        // whenever it wakes, after this prompt has ended.
        guard !stalled else {
            pending.failures += 1
            return
        }
        var cv = cvolume(volume)
        let box = Unmanaged.passRetained(pending).toOpaque()
        let op = libpulse.pa_context_set_sink_input_volume(context, index, &cv, { _, success, userdata in
            let pending = Unmanaged<PendingOperations>.fromOpaque(userdata!).takeRetainedValue()
            pending.outstanding -= 1
            if success == 0 { pending.failures += 1 }
            libpulse.pa_threaded_mainloop_signal(pending.mainloop, 0)
        }, box)
        if let op {
            pending.outstanding += 1
            libpulse.pa_operation_unref(op)
        } else {
            Unmanaged<PendingOperations>.fromOpaque(box).release()
            pending.failures += 1
        }
    }

    /// Waits, lock held, until every operation counted by `pending` is acknowledged, the
    /// connection is lost, or `answerTimeout` passed (then the connection is stalled:
    /// `markStalledLocked`).
    func waitLocked(for pending: PendingOperations) {
        let deadline = ContinuousClock.now + answerTimeout
        withWakeupLocked(at: deadline) {
            while pending.outstanding > 0 && isAliveLocked {
                guard ContinuousClock.now < deadline else { return markStalledLocked() }
                waitLocked()
            }
        }
    }
}
