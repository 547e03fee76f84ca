import CPulseAudio

/// Tells a server that stopped answering from one that has nothing to say. While a prompt
/// waits on the server for a long time (the attack, the prompt playing, the release), a small
/// request goes out every `interval`; one still unanswered after the connection's
/// `answerTimeout` marks the connection stalled (`PulseConnection.stallLocked`), so the
/// prompt ends at the stated timeout after the server stopped, not after every later wait has
/// also run out. Guarded by the loop lock.
final class LivenessProbe: @unchecked Sendable {
    /// How often a quiet wait asks the server for a sign of life.
    static let interval: Duration = .milliseconds(500)

    let mainloop: OpaquePointer
    /// When the request in flight was sent; nil when none is.
    var sentAt: ContinuousClock.Instant?
    /// When the last one was sent, answered or not.
    var lastSent: ContinuousClock.Instant?

    init(mainloop: OpaquePointer) { self.mainloop = mainloop }
}

extension PulseConnection {
    /// Sends a probe when none is in flight and `LivenessProbe.interval` has passed since the
    /// last; marks the connection stalled when the one in flight is older than
    /// `answerTimeout`. Lock held.
    /// - Returns: when to call again (a wait should wake by then).
    /// libpulse: `pa_context_get_server_info` (its answer is not read).
    func checkAnsweringLocked(now: ContinuousClock.Instant = .now) -> ContinuousClock.Instant {
        guard isAliveLocked else { return now + LivenessProbe.interval }
        if let sent = probe.sentAt {
            if now - sent >= answerTimeout { markStalledLocked() }
            return min(sent + answerTimeout, now + LivenessProbe.interval)
        }
        if let last = probe.lastSent, now - last < LivenessProbe.interval {
            return last + LivenessProbe.interval
        }
        let op = libpulse.pa_context_get_server_info(context, { _, _, userdata in
            let probe = Unmanaged<LivenessProbe>.fromOpaque(userdata!).takeUnretainedValue()
            probe.sentAt = nil
            libpulse.pa_threaded_mainloop_signal(probe.mainloop, 0)
        }, Unmanaged.passUnretained(probe).toOpaque())
        guard let op else { return now + LivenessProbe.interval }
        libpulse.pa_operation_unref(op)
        probe.sentAt = now
        probe.lastSent = now
        return min(now + answerTimeout, now + LivenessProbe.interval)
    }
}
