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
    ///   - inputs: the sink-inputs the plan was made from (their PipeWire node properties).
    ///   - onPipeWire: the server is pipewire-pulse (`pa_server_info.server_name`): the volumes
    ///     of ducked streams are followed through their PipeWire nodes (`PipeWireWatch`).
    init(connection: PulseConnection, plan: DuckPlan, inputs: [SinkInput] = [], onPipeWire: Bool = false) throws {
        self.connection = connection
        self.plan = plan
        pending = PendingOperations(mainloop: connection.mainloop)
        let inbox = EventInbox(mainloop: connection.mainloop)
        self.inbox = inbox
        subscribed = plan.depth < 0 || !plan.entries.isEmpty
        if subscribed { try connection.subscribe(into: inbox) }
        watch = subscribed && onPipeWire ? connection.withLock {
            let watch = connection.pipeWireWatchLocked()
            watch?.inboxes.append(inbox)
            return watch
        } : nil
        if watch != nil {
            let ducked = Set(plan.entries.map(\.index))
            connection.withLock {
                for input in inputs where ducked.contains(input.index) { followLocked(input) }
            }
        }
    }

    /// Whether sink-input events are followed: the plan ducks, or took over ducked streams.
    private let subscribed: Bool

    /// On PipeWire, the nodes of ducked streams, followed for each volume they apply: a user's
    /// change that one of our writes overwrote a millisecond later is seen there, never in a
    /// libpulse info (`PipeWireWatch`). nil on PulseAudio, or when PipeWire cannot be reached.
    private let watch: PipeWireWatch?
    /// Sink-input index of each node followed. Lock held.
    private var nodes: [UInt32: UInt32] = [:]
    /// Sink-inputs whose node has reported its volume: from then on only the node's values are
    /// fed to the plan (libpulse infos of them are skipped: two accounts of one stream, each in
    /// its own order, would make an old state look like a new change). Lock held.
    private var followed: Set<UInt32> = []
    /// Whether the first ramp has waited for the nodes' first values (`awaitFollowedLocked`).
    private var awaitedFollowed = false

    deinit {
        if let watch {
            connection.withLock {
                for node in nodes.keys { watch.unwatchLocked(node: node) }
                watch.inboxes.removeAll { $0 === inbox }
            }
        }
        if subscribed { connection.unsubscribe(inbox) }
    }

    /// Starts following `input`'s PipeWire node, if there is a watch and it names one. Lock held.
    private func followLocked(_ input: SinkInput) {
        guard let watch, !nodes.values.contains(input.index), let node = watch.watchLocked(input) else { return }
        nodes[node] = input.index
    }

    /// How long the first ramp waits for the followed nodes' first values; a node that has not
    /// answered by then is followed through libpulse until it does.
    static let followWait: Duration = .milliseconds(200)

    /// Waits until every followed node has reported its volume (or was lost), so that no change
    /// falls between the snapshot and the subscription. Lock held.
    private func awaitFollowedLocked() {
        awaitedFollowed = true
        guard watch != nil, !nodes.isEmpty else { return }
        let deadline = ContinuousClock.now + Self.followWait
        connection.withWakeupLocked(at: deadline) {
            while true {
                handleEventsLocked()
                if nodes.values.allSatisfy({ followed.contains($0) }) { return }
                guard connection.isAliveLocked, ContinuousClock.now < deadline else { return }
                if inbox.isEmpty { connection.waitLocked() }
            }
        }
    }

    /// Events and actions, traced with `DUCKPROMPT_DEBUG=1` (`DebugTrace`).
    private func trace(_ text: @autoclosure () -> String) { DebugTrace.write(text()) }

    /// Sends actions without waiting for the answers, each volume write right after a read
    /// of the stream (its info), so that a user's change the server applied just before our
    /// write is seen (and written again once our write has overtaken it: `DuckPlan.changed`).
    /// Without the read, a change that landed within a millisecond or so before one of our
    /// writes was overwritten without a trace: 4 of 70 changes at random points of a release
    /// on PipeWire were lost; with it, none of 100. Up to `readEach` writes, one info request
    /// each; more (a busy desktop), one list of every sink-input before them. Lock held.
    /// A stream followed through its PipeWire node needs no read: the node reports each value.
    private func sendLocked(_ actions: [DuckAction]) {
        let writes = actions.volumeWrites
        let unfollowed = writes.reduce(0) { $0 + (followed.contains($1.index) ? 0 : 1) }
        if unfollowed > Self.readEach { connection.requestSinkInputLocked(nil, into: inbox) }
        for (index, volume) in writes {
            trace("setVolume \(index) \(volume.values.map(String.init).joined(separator: ","))")
            touched.insert(index)
            if unfollowed <= Self.readEach && !followed.contains(index) {
                connection.requestSinkInputLocked(index, into: inbox)
            }
            connection.setSinkInputVolumeLocked(index, volume, pending: pending)
        }
    }

    /// Up to this many writes at once, each is preceded by a read of its stream; more, by one
    /// read of them all.
    static let readEach = 32

    /// Handles what arrived in the inbox: asks for the info of new and changed sink-inputs,
    /// feeds infos and removals to the plan, sends what it says. Lock held.
    private func handleEventsLocked() {
        let events = inbox.events
        inbox.events.removeAll()
        var actions: [DuckAction] = []
        for event in events where event.facility == .sinkInput {
            trace("event \(event)")
            switch event.change {
            // A followed stream's node reports its volume itself.
            case .changed where followed.contains(event.index): break
            case .new, .changed: connection.requestSinkInputLocked(event.index, into: inbox)
            case .removed: actions += plan.ended(index: event.index)
            }
        }
        let lost = inbox.lostNodes
        inbox.lostNodes.removeAll()
        for node in lost {
            // Followed through libpulse again, from a fresh read.
            let indices = node == UInt32.max ? Array(nodes.values) : nodes[node].map { [$0] } ?? []
            if node == UInt32.max {
                nodes.removeAll()
            } else if nodes.removeValue(forKey: node) != nil {
                watch?.unwatchLocked(node: node)
            }
            for index in indices {
                followed.remove(index)
                connection.requestSinkInputLocked(index, into: inbox)
            }
        }
        let infos = inbox.sinkInputs
        inbox.sinkInputs.removeAll()
        for info in infos {
            trace("info \(info.index) \(info.volume.values.map(String.init).joined(separator: ","))")
            if DuckPlan.isOwn(info) {
                plan.exclude(info.index)
                continue
            }
            if followed.contains(info.index) && plan.entries.contains(where: { $0.index == info.index }) { continue }
            actions += plan.appeared(info)
            if watch != nil && plan.entries.contains(where: { $0.index == info.index }) { followLocked(info) }
        }
        let volumes = inbox.nodeVolumes
        inbox.nodeVolumes.removeAll()
        for (node, volume) in volumes {
            guard let index = nodes[node] else { continue }
            trace("node \(node) of \(index) \(volume.values.map(String.init).joined(separator: ","))")
            followed.insert(index)
            actions += plan.changed(index: index, volume: volume)
        }
        // The journal first: a crash right after a write must find the stream journaled.
        if !events.isEmpty || !infos.isEmpty || !volumes.isEmpty { journal?.update(plan) }
        sendLocked(actions)
    }

    /// Ducks the streams of players that refused their `Pause` (`DuckPlan.pauseRefused`): their
    /// info is asked for now (`pa_context_get_sink_input_info`), and the next ramp step takes
    /// them in. Thread-safe.
    func duck(refused streams: [UInt32]) {
        connection.withLock {
            plan.pauseRefused(streams: streams)
            for index in streams { connection.requestSinkInputLocked(index, into: inbox) }
        }
    }

    /// Excludes the prompt's own stream (once its index is known). Thread-safe.
    func exclude(_ index: UInt32) {
        connection.withLock { plan.exclude(index) }
    }

    /// Runs until `gain` is reached over `durationMs` (a `Ramp`) and `until` holds, following
    /// events meanwhile. With a `gain`, returns once the server has acknowledged the last
    /// step's writes and every write has come back in a sink-input info (or `echoWait`
    /// passed).
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
            if !awaitedFollowed { awaitFollowedLocked() }
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
                    // An acknowledged write is not yet an applied one: pipewire-pulse answers a
                    // set-volume at once and changes the stream when its node has taken it
                    // (100 streams: 6 of them still at full volume when the prompt was heard,
                    // CI at b8abb47). The ramp ends when every write has come back in a
                    // sink-input info, or `echoWait` passed.
                    if gain != nil {
                        connection.waitLocked(for: pending)
                        if subscribed { awaitEchoesLocked() }
                    }
                    guard connection.isAliveLocked else { throw connection.lostErrorLocked(what) }
                    return true
                }
                if stop() { return false }
                // A sign of life asked for every 500 ms: a server that stops answering ends
                // the wait `answerTimeout` after it stopped.
                let now = ContinuousClock.now
                let probeDue = connection.checkAnsweringLocked(now: now)
                guard connection.isAliveLocked else { throw connection.lostErrorLocked(what) }
                if let deadline, now >= deadline { throw connection.stallLocked(what) }
                var wake = min(now + .seconds(1), probeDue)
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
    /// the writes acknowledged and seen back, and saved volumes left ducked by streams that
    /// ended repaired. Only then is the journal removed: when the connection died or the server
    /// stopped answering, it stays for the next duckprompt (or `duckprompt restore`) to finish
    /// the job once the server is back.
    ///
    /// After the last write, it follows events until every write has come back in a
    /// sink-input info (at most `echoWait`): a user's change that the server applied just
    /// before one of our last writes is seen then and its level written again.
    /// - Returns: whether everything was confirmed restored (the journal is removed).
    @discardableResult
    func finish() -> Bool {
        let (confirmed, repairs) = connection.withLock { () -> (Bool, [(key: RestoreKey, volume: ChannelVolumes)]) in
            guard connection.isAliveLocked else { return (false, []) }
            handleEventsLocked()
            let release = plan.release()
            trace("release: \(release)")
            sendLocked(release)
            let repairs = release.savedRepairs
            connection.waitLocked(for: pending)
            if subscribed { awaitEchoesLocked() }
            return (connection.isAliveLocked && pending.outstanding == 0, repairs)
        }
        guard confirmed, connection.repairSavedVolumes(repairs) else {
            trace("not confirmed: the journal is kept")
            return false
        }
        journal?.remove()
        return true
    }

    /// How long a ramp's end and `finish` wait for the last writes to come back.
    static let echoWait: Duration = .milliseconds(250)

    /// How many streams the last `awaitEchoesLocked` left not seen at their last volume when
    /// `echoWait` passed (0: all were). Lock held.
    private(set) var lateStreams = 0

    /// Follows events, lock held, until every write in flight has come back (`isSettled`),
    /// the connection is lost, or `echoWait` passed.
    private func awaitEchoesLocked() {
        lateStreams = 0
        let deadline = ContinuousClock.now + Self.echoWait
        connection.withWakeupLocked(at: deadline) {
            while true {
                handleEventsLocked()
                if plan.isSettled && pending.outstanding == 0 { return }
                guard connection.isAliveLocked else { return }
                guard ContinuousClock.now < deadline else {
                    // The server is behind: what it has not applied yet lands later.
                    lateStreams = plan.unsettledCount
                    trace("echoes: after \(Int(Self.echoWait.seconds * 1000)) ms, \(pending.outstanding) writes unanswered, "
                          + "\(lateStreams) streams not seen at their last volume; going on")
                    return
                }
                if inbox.isEmpty { connection.waitLocked() }
            }
        }
    }
}
