import FoundationEssentials
import Glibc

/// Drives a `DuckPlan` on a live server for the length of one prompt: ramps, and follows
/// sink-input events meanwhile — streams that start are ducked as they appear, a user's volume
/// change is kept (as the stream's own volume), a stream that ends is remembered so that the
/// server's saved volume for its application and role can be repaired at the end.
///
/// Threading: one thread (the prompt's driver) calls it; it holds the loop lock while it
/// looks at events and sends volumes, and waits on the loop's condition in between. Volume
/// writes are pipelined; `finish()` waits for them.
final class DuckSession: @unchecked Sendable {
    private let connection: PulseConnection
    private(set) var plan: DuckPlan
    private let pending: PendingOperations
    private let inbox: EventInbox
    /// Every sink-input ever ducked in this session (for the report).
    private(set) var touched: Set<UInt32> = []
    /// Keeps the crash journal in step with the plan (nil: no journal).
    var journal: JournalKeeper?

    /// - Parameters:
    ///   - plan: the streams found at the start and the depth.
    /// Subscribes to sink-input events when the plan ducks anything (depth < 0).
    /// - Throws: `.unavailable` when the server refuses the subscription.
    init(connection: PulseConnection, plan: DuckPlan) throws {
        self.connection = connection
        self.plan = plan
        pending = PendingOperations(mainloop: connection.mainloop)
        inbox = EventInbox(mainloop: connection.mainloop)
        subscribed = plan.depth < 0 || !plan.entries.isEmpty
        if subscribed { try connection.subscribe(into: inbox) }
    }

    /// Whether sink-input events are followed: the plan ducks, or took over ducked streams.
    private let subscribed: Bool

    deinit { if subscribed { connection.unsubscribe() } }

    /// `DUCKPROMPT_DEBUG=1` traces events and actions on stderr.
    private static let debug = Environment.value("DUCKPROMPT_DEBUG") != nil
    private func trace(_ text: @autoclosure () -> String) {
        if Self.debug { StandardStreams.writeError("duckprompt[debug]: \(text())\n") }
    }

    /// Sends actions without waiting for the answers. Lock held.
    private func sendLocked(_ actions: [DuckAction]) {
        for action in actions {
            trace("\(action)")
            if case .setVolume(let index, let volume) = action {
                touched.insert(index)
                connection.setSinkInputVolumeLocked(index, volume, pending: pending)
            }
        }
    }

    /// Handles what arrived in the inbox: asks for the info of new and changed sink-inputs,
    /// feeds infos and removals to the plan, sends what it says. Lock held.
    private func handleEventsLocked() {
        let events = inbox.events
        inbox.events.removeAll()
        var actions: [DuckAction] = []
        for event in events where event.facility == .sinkInput {
            trace("event \(event)")
            switch event.change {
            case .new, .changed: connection.requestSinkInputLocked(event.index, into: inbox)
            case .removed: actions += plan.ended(index: event.index)
            }
        }
        let infos = inbox.sinkInputs
        inbox.sinkInputs.removeAll()
        for info in infos {
            if DuckPlan.isOwn(info) {
                plan.exclude(info.index)
                continue
            }
            actions += plan.appeared(info)
        }
        // The journal first: a crash right after a write must find the stream journaled.
        if !events.isEmpty || !infos.isEmpty { journal?.update(plan) }
        sendLocked(actions)
    }

    /// Excludes the prompt's own stream (once its index is known). Thread-safe.
    func exclude(_ index: UInt32) {
        connection.withLock { plan.exclude(index) }
    }

    /// Runs until `gain` is reached over `durationMs` (a `Ramp`) and `until` holds, following
    /// events meanwhile. With a `gain`, returns once the server has acknowledged the last
    /// step's writes (or `answerTimeout` passed).
    ///
    /// - Parameters:
    ///   - gain: target gain in dB (0 restores the originals exactly), or nil to keep the gain.
    ///   - durationMs: ramp length in ms.
    ///   - until: checked with the lock held; nil means "when the ramp is done".
    ///   - stop: checked with the lock held; when true, returns false at once (the streams
    ///     stay at the last gain sent).
    ///   - deadline: when `until` has not held by then, throws.
    /// - Throws: `.unavailable` when the connection is lost or the deadline passes.
    @discardableResult
    func run(toGain gain: Double?, durationMs: Int = 0, until: (() -> Bool)? = nil,
             stop: () -> Bool = { false }, deadline: ContinuousClock.Instant? = nil,
             what: String = "ducking") throws -> Bool {
        let start = ContinuousClock.now
        var schedule = gain.map { RampSchedule(Ramp(from: plan.gain, to: $0, durationMs: durationMs, streams: plan.entries.count)) }
        if plan.entries.isEmpty, let gain {
            // Nothing to ramp: land on the gain at once (new streams get it as they appear).
            connection.withLock { _ = plan.apply(gain: gain) }
            schedule = nil
        }
        func elapsedMs(_ now: ContinuousClock.Instant) -> Double { (now - start).seconds * 1000 }
        return try connection.withLock {
            while true {
                handleEventsLocked()
                // Sent at their offsets without waiting for the answers: pipewire-pulse takes
                // a step's writes for 300 streams faster pipelined than one step at a time
                // (measured: a median of 2.0 s to duck them one step at a time; 1.1-1.5 s
                // pipelined, in medians of other runs).
                if let step = schedule?.take(atMs: elapsedMs(.now)) {
                    sendLocked(plan.apply(gain: step.gain))
                    continue
                }
                if schedule?.isDone ?? true && (until?() ?? true) {
                    // A ramp ends when the server has applied its last step, not when it was
                    // sent: a busy server (pipewire-pulse with 100 streams to duck) takes tens
                    // of ms, and the prompt must not start before the duck has landed.
                    if gain != nil { connection.waitLocked(for: pending) }
                    return true
                }
                if stop() { return false }
                guard connection.isAliveLocked else {
                    throw DuckPromptError(.unavailable,
                        "lost the connection to the sound server at \(connection.serverDescription)")
                }
                let now = ContinuousClock.now
                if let deadline, now >= deadline { throw connection.silentServerError(what) }
                var wake = now + .seconds(1)
                if let due = schedule?.dueMs { wake = start + .microseconds(Int64((due * 1000).rounded(.up))) }
                if let deadline { wake = min(wake, deadline) }
                connection.withWakeupLocked(at: wake) {
                    if inbox.isEmpty { connection.waitLocked() }
                }
            }
        }
    }

    /// Hands the duck over to the next prompt instead of releasing it (this prompt was
    /// interrupted by a newer one): waits for the volume writes in flight, then writes
    /// `handover.json` with the plan and its gain. The streams stay where they are.
    /// - Returns: false when there is nothing to hand over (no journal: nothing was ducked).
    /// - Throws: `.internal` when the handover file cannot be written.
    func handOver() throws -> Bool {
        guard let journal else { return false }
        let current = connection.withLock { () -> DuckPlan in
            handleEventsLocked()
            connection.waitLocked(for: pending)
            return self.plan
        }
        try journal.handOver(current)
        return true
    }

    /// Takes back a duck that was handed over but not adopted (no prompt waits): `finish()`
    /// may then release it.
    func reclaim() -> Bool { journal?.reclaim() ?? false }

    /// The end of the duck: every stream at its own volume exactly (already ramped there),
    /// the writes acknowledged, and saved volumes left ducked by streams that ended repaired.
    /// - Returns: how many volume writes the server refused (streams that ended meanwhile).
    @discardableResult
    func finish() -> Int {
        let (failures, repairs) = connection.withLock { () -> (Int, [(key: RestoreKey, volume: ChannelVolumes)]) in
            handleEventsLocked()
            var repairs: [(key: RestoreKey, volume: ChannelVolumes)] = []
            let release = plan.release()
            trace("release: \(release)")
            for action in release {
                switch action {
                case .setVolume(let index, let volume):
                    connection.setSinkInputVolumeLocked(index, volume, pending: pending)
                case .repairSaved(let key, let volume):
                    repairs.append((key, volume))
                }
            }
            connection.waitLocked(for: pending)
            return (pending.failures, repairs)
        }
        connection.repairSavedVolumes(repairs)
        journal?.remove()
        return failures
    }
}
