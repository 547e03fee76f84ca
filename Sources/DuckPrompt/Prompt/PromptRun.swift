import FoundationEssentials
import Glibc

extension DuckPrompt {
    /// The end of an error message when a prompt's duck could not be confirmed restored.
    static func keptJournalNote(_ path: String) -> String {
        "; what it ducked is journaled in \(path) and is restored by the next duckprompt "
            + "command, or `duckprompt restore`, once the server answers"
    }

    /// Runs one prompt on the calling thread, from its place in the queue to its release or
    /// handover: `PromptLifecycle` decides each step, `PromptRun` carries it out. `play` and
    /// `playBlocking` call it once the sources are open and the options checked. `started` is
    /// a connection begun before the queue (its handshake overlaps the wait); `control` carries
    /// cancellation and a newer prompt's stop request.
    /// - Throws: what `play(_:options:server:)` documents.
    static func runPrompt(_ sources: [any PromptSource], connection started: PulseConnection, options: PlayOptions,
                          server: ServerOptions, control: InterruptControl, entered: QueueEntry,
                          turn: Result<RuntimeLock, any Error>? = nil,
                          reconnect: (() throws -> PulseConnection)? = nil, keeper: ReadyStreamKeeper? = nil,
                          calls: PromptCalls? = nil, buses: SessionBusPool? = nil,
                          onStarted: @escaping (RouteDecision, Int) -> Void = { _, _ in },
                          onTiming: @escaping (Prompter.Timing) -> Void = { _ in },
                          onAudioEnded: () -> Void = {}) throws -> PlayReport {
        let run = PromptRun(sources: sources, connection: started, options: options, server: server, control: control,
                            entered: entered, turn: turn, reconnect: reconnect, keeper: keeper, calls: calls,
                            buses: buses, onStarted: onStarted, onTiming: onTiming)
        defer { run.close() }
        var lifecycle = PromptLifecycle()
        var action = lifecycle.start()
        var audioOver = false
        while true {
            DebugTrace.write("prompt: \(action)")
            // The prompt's audio is over (played whole, faded out, stopped or failed before it
            // played) once the lifecycle turns to its volume and its duck: told once, before
            // the duck is handed over or released.
            if !audioOver, action.endsAudio {
                audioOver = true
                onAudioEnded()
            }
            if case .end(let ending) = action { return try run.end(ending) }
            let event: PromptLifecycle.Event
            do { event = try run.perform(action) } catch { event = .failed(PromptRun.failure(of: error)) }
            action = lifecycle.handle(event)
        }
    }
}

/// Carries out a `PromptLifecycle`'s actions for one prompt: the queue and the duck lock, the
/// server's snapshot and the route, the `DuckSession` and the `PromptStream`s. Used by one
/// thread, once (`DuckPrompt.runPrompt`); `close()` releases what it holds.
final class PromptRun {
    private let sources: [any PromptSource]
    private let options: PlayOptions
    private let server: ServerOptions
    private let control: InterruptControl
    private let called = ContinuousClock.now
    /// Begun before the queue; replaced when the server went away meanwhile.
    private var connection: PulseConnection

    private let store: JournalStore
    private let ticket: Ticket
    /// The turn, when a `TurnWaiter` waited for it: its lock, or why the prompt will not play.
    private let turn: Result<RuntimeLock, any Error>?
    private var lock: RuntimeLock?
    private var watcher: StopWatcher?
    /// The lock taken back after a handover no one adopted.
    private var reclaimed: RuntimeLock?
    /// What was undone first for prompts that died mid-duck.
    private var notes: [String] = []
    /// The duck of the prompt this one interrupted (or followed), adopted.
    private var handed: DuckJournal?

    private var route: RouteDecision?
    private var session: DuckSession?
    /// The MPRIS players this prompt pauses (spoken word), and those a handed-over duck kept
    /// paused; nil until routed.
    private var pauser: PlayerPauser?
    /// Players dead prompts left paused, taken over at the turn (resumed at this release).
    private var adopted: [PausedPlayer] = []
    /// The duck was handed to the next prompt, and with it the paused players.
    private var handedOver = false
    private var depth = 0.0
    private var preRoll = 0
    /// Consecutive sources of one format play as one gapless stream (`PromptSequence`); the
    /// first carries the pre-roll's silence.
    private var groups: [any PromptSource] = []
    /// One per part, opened in part order.
    private var streams: [PromptStream] = []
    private var properties: [String: String] = [:]
    /// The saved volume for the prompt's `media.role`, read under a relative `--volume`: only a
    /// real read, never a silent one (`ready`).
    private var slot: ChannelVolumes?
    /// Whether the saved volume was read (or found unknown): it is read once, from the first stream.
    private var slotRead = false
    /// The server is pipewire-pulse (`pa_server_info.server_name`), known once routed.
    private var onPipeWire = false
    /// What a listener may not have heard (`PlayReport.warnings`).
    private var warnings: [String] = []
    /// The calls the session and system buses know of (`PromptCalls`; none when nil); the
    /// server's call streams are read from its snapshot.
    private let calls: PromptCalls?
    /// The prompt's own volume relative to the saved one (`PromptPlan.promptGain`).
    private var promptGain: Decibels?
    /// What the call policy did (`PlayReport.callNote`).
    private var callNote: String?

    /// Connects again when the held connection failed (the `Prompter`'s, which replaces its own).
    private let reconnect: () throws -> PulseConnection
    /// A held prompter's stream kept ready: taken for the first part when it fits, given the
    /// last part's stream once the prompt played whole. Nil for a one-shot prompt.
    private let keeper: ReadyStreamKeeper?
    /// The held prompter's session-bus connections, lent to the players' pauser.
    private let buses: SessionBusPool?
    /// Whether this prompt holds the mirror's sink-input reads (`holdMirrorInputs`) until `close()`.
    private var holdsMirror = false
    /// The frames of the stream given to `keeper` (no longer in `streams`).
    private var keptFrames: Int64 = 0
    /// Whether the first part plays on the stream `keeper` kept (`makeStream`), not yet seen
    /// playing (`hold`).
    private var onKeptStream = false
    /// Told once, when the first part starts: the route and the pre-roll (ms).
    private let onStarted: (RouteDecision, Int) -> Void
    /// Told once, after `onStarted`: when the first sample reaches the device, and the end.
    private let onTiming: (Prompter.Timing) -> Void

    /// - Parameters:
    ///   - entered: the queue entry: the caller (a `Prompter`, in `play`) enters the queue
    ///     first, so that prompts queue in call order.
    ///   - turn: the turn, when the caller waited for it (`TurnWaiter`); nil waits at `.waitTurn`.
    ///   - reconnect: makes a new connection when `connection` failed meanwhile.
    ///   - keeper: the held prompter's kept stream (nil: every stream is made and closed here).
    ///   - calls: the calls on the session and system buses (the prompter's `PromptCalls`).
    ///   - buses: the held prompter's session-bus connections, for the players (nil: the
    ///     prompt connects).
    ///   - onStarted: called once the first sample of the prompt's own audio (after the
    ///     pre-roll) has been handed to the server on the uncorked stream, with the route and
    ///     the pre-roll in ms; on libpulse's loop thread, so it must not wait.
    ///   - onTiming: called once after `onStarted`, when the server said where the stream
    ///     stands (`PromptStream.announceAudio`): when the prompt's first own sample reaches the
    ///     device and its audio ends there, on the monotonic clock; on the loop thread too.
    init(sources: [any PromptSource], connection: PulseConnection, options: PlayOptions, server: ServerOptions,
         control: InterruptControl, entered: QueueEntry, turn: Result<RuntimeLock, any Error>? = nil,
         reconnect: (() throws -> PulseConnection)? = nil, keeper: ReadyStreamKeeper? = nil,
         calls: PromptCalls? = nil, buses: SessionBusPool? = nil,
         onStarted: @escaping (RouteDecision, Int) -> Void = { _, _ in },
         onTiming: @escaping (Prompter.Timing) -> Void = { _ in }) {
        self.turn = turn
        self.calls = calls
        self.buses = buses
        self.sources = sources
        self.connection = connection
        self.options = options
        self.server = server
        self.control = control
        store = entered.store
        ticket = entered.ticket
        self.reconnect = reconnect ?? { try PulseConnection(server) }
        self.keeper = keeper
        self.onStarted = onStarted
        self.onTiming = onTiming
    }

    /// Releases the streams, the locks and the queue entry, in that order.
    func close() {
        // Paused players are never left behind by a prompt that did not hand them over (one
        // that failed before its release, or whose route failed after it adopted some).
        if !handedOver {
            if let pauser {
                pauser.resumeAll()
            } else if !adopted.isEmpty, let bus = try? SessionBusClient() {
                _ = PlayerPauser.resume(adopted, on: bus)
            }
        }
        for stream in streams { stream.close() }
        streams.removeAll()
        if holdsMirror { connection.holdMirrorInputs(false) }
        reclaimed?.release()
        watcher?.cancel()
        lock?.release()
        ticket.leave()
    }

    /// The lifecycle's view of an error thrown by a step.
    static func failure(of error: any Error) -> PromptLifecycle.Failure {
        switch error {
        case let error as DuckPromptError: .error(error)
        case is CancellationError: .cancelled
        default: .error(DuckPromptError(.internal, "\(error)"))
        }
    }

    /// Carries out one action (not `.end`) and says what came of it.
    /// - Throws: what the step throws; the lifecycle is told through `.failed`.
    func perform(_ action: PromptLifecycle.Action) throws -> PromptLifecycle.Event {
        switch action {
        case .waitTurn:
            try waitTurn()
            return .turnCame
        case .route:
            // Files checked at the call are opened now, before anything is ducked.
            for source in sources { try source.openIfLibrarySource() }
            return .routed(try routeAndPlan())
        case .openStream(let part, let corked):
            precondition(part == streams.count, "parts are opened in order")
            let opened = try makeStream(part, corked: corked)
            streams.append(opened)
            // `onStarted` when the first sample of the prompt's own audio (after the pre-roll's
            // silence) goes to the server on the uncorked stream (the loop thread: it must not
            // wait).
            if part == 0, let route {
                let preRoll = preRoll
                // The prompt's own audio, without the pre-roll's silence: every part, end to end.
                let audioUs = Int64((groups.reduce(0) { $0 + (($1 as? SilencePrefixed)?.inner.duration ?? $1.duration) }
                    * 1_000_000).rounded())
                opened.announceAudio(after: (groups[0] as? SilencePrefixed)?.silenceFrames ?? 0, { [onStarted] in
                    onStarted(route, preRoll)
                }, timed: { [onTiming] firstUs in
                    onTiming(Prompter.Timing(firstSampleUs: firstUs, endUs: firstUs + audioUs))
                })
            }
            return .streamOpened(part: part)
        case .readyStream(let part):
            try ready(part)
            return .streamReady(part: part)
        case .startStream(let part):
            stream(part).start()
            return .streamStarted(part: part)
        case .rampDown:
            // Spoken word stops at the start of the attack (journaled before, at the route).
            if let pauser, !pauser.toPause.isEmpty {
                pauser.pauseAll()
                duck.journal?.setPlayers(pauser.paused)
                // A player that would not pause plays on: ducked with the others.
                if !pauser.refused.isEmpty { duck.duck(refused: pauser.refused) }
            }
            // Ramp down while the first stream connects and prefills, corked (or plays its
            // pre-roll).
            let done = try duck.run(toGain: depth, durationMs: options.attackMs, stop: stopRequested)
            // The server had not applied the whole duck when the prompt went on: said, since
            // the prompt may then have been heard over streams not yet down.
            let late = connection.withLock { duck.lateStreams }
            if done, late > 0 {
                warnings.append("the server had not applied the duck to \(late) stream(s) "
                    + "\(Int(DuckSession.echoWait.seconds * 1000)) ms after the attack; the prompt played on (the server is busy)")
            }
            return done ? .attackDone : .stopped(stopCause)
        case .hold(let part):
            // Hold the duck, following streams that come, change or go, until the last sample
            // has been played.
            // The kept stream, started (here or uncorked at once, `makeStream`), must be seen
            // playing first; else the prompt plays again on a new stream.
            if part == 0, onKeptStream {
                onKeptStream = false
                if try !stream(0).confirmPlaying(stop: stopRequested) { try replayOnNewStream() }
            }
            // The first part's duration includes its pre-roll's silence.
            let length = groups[part].duration
            var deadline = ContinuousClock.now + .milliseconds(Int(length * 1000)) + connection.answerTimeout
            let playing = stream(part)
            let stop = stopRequested
            var done = false
            while true {
                done = try duck.run(toGain: nil, until: { playing.drainedLocked }, stop: { stop() || playing.movedLocked },
                                    deadline: deadline, what: "playing the prompt")
                // Its sink went away (the server moved the stream): the device's new sink takes
                // it, or it stops; the duck holds meanwhile.
                guard !done, !control.isStopped else { break }
                let waited = ContinuousClock.now
                if let failure = try followDevice(playing) { return .stopped(.error(failure)) }
                deadline += ContinuousClock.now - waited
            }
            if done { try playing.checkPlayedThrough() }
            if done, part == groups.count - 1 { checkAudible(playing) }
            return done ? .drained(part: part) : .stopped(stopCause)
        case .fadeOut(let part):
            stream(part).fadeOutAndStop(restoring: slot)
            return .fadedOut
        case .restorePromptVolume:
            if let slot, let last = streams.last { last.setOwnVolume(slot) }
            return .promptVolumeRestored
        case .checkQueue:
            // Played whole: its last stream is drained, and kept ready for the next prompt
            // (a cancelled one's was stopped: the keeper does not reuse it, `isReusableLocked`).
            // Its frames are counted first: the next prompt may be playing on it by the end.
            if let keeper, let last = streams.popLast() {
                keptFrames = last.framesWritten
                keeper.keep(last)
            }
            // A prompt that keeps its duck (a cancel that keeps it, or a held prompter's
            // `keepDuckAfterPlaying`) hands it over as if the next prompt waited already.
            let keeps = control.duckKept != nil
            return .queueChecked(anotherWaits: keeps || anotherPromptWaits(store: store, ticket: ticket))
        case .handOver:
            guard let lock else { return .handedOver(false) }
            let keepFor = control.duckKept ?? .zero
            switch handOver(duck, store: store, ticket: ticket, lock: lock, keepFor: keepFor) {
            case .handedOver:
                handedOver = true
                return .handedOver(true)
            case .reclaimed(let again):
                reclaimed = again
                return .handedOver(false)
            case .kept: return .handedOver(false)
            }
        case .release:
            // The players come back as the others ramp up.
            if let pauser, !pauser.paused.isEmpty {
                pauser.resumeAll()
                duck.journal?.setPlayers([])
            }
            _ = try? duck.run(toGain: 0, durationMs: options.releaseMs)
            return .released
        case .finishDuck:
            // Nothing journaled: nothing can be left unconfirmed.
            return .duckFinished(confirmed: duck.finish() || duck.journal == nil)
        case .end:
            preconditionFailure("runPrompt ends on .end")
        }
    }

    /// The prompt's result for its ending: the report, or the error to throw. A cancelled
    /// prompt's report is kept for its caller (`PlayCancellation.report`).
    func end(_ ending: PromptLifecycle.Ending) throws -> PlayReport {
        let report = route.map { route in
            PlayReport(route: route, duckedStreams: session?.touched.sorted() ?? [],
                       framesPlayed: streams.reduce(keptFrames) { $0 + $1.framesWritten },
                       recoveryNotes: notes + (pauser?.warnings ?? []), preRollMs: preRoll,
                       playerNotes: pauser?.notes ?? [], warnings: warnings, callNote: callNote)
        }
        if let error = Self.error(for: ending, journalPath: session?.journal?.path,
                                  server: connection.serverDescription) {
            if error is CancellationError { control.report = report }
            throw error
        }
        guard let report else { preconditionFailure("played without a route") }
        return report
    }

    /// What a prompt that ended so throws; nil when it played (whole, its duck released or
    /// handed over).
    /// - Parameters:
    ///   - journalPath: the prompt's journal, when it wrote one: named in the message when the
    ///     duck could not be confirmed restored.
    ///   - server: the server as a user would name it.
    /// - Returns: `.dropped` (75) "prompt interrupted by …" for an interruption,
    ///   `CancellationError` for a cancel, the failure itself (with the kept journal's note),
    ///   or `.unavailable` (69) when the server went away before every volume was restored.
    static func error(for ending: PromptLifecycle.Ending, journalPath: String?, server: String) -> (any Error)? {
        switch ending {
        case .played:
            return nil
        case .interrupted(let request):
            return DuckPromptError(.dropped, "prompt \(request.reason)", dropReason: request.drop)
        case .cancelled:
            return CancellationError()
        case .failed(let error, let journalKept):
            // The server died or stalled (or refused the stream): what is not confirmed
            // restored stays journaled for the next duckprompt or `duckprompt restore`.
            guard journalKept, let journalPath else { return error }
            return DuckPromptError(error.code, error.message + DuckPrompt.keptJournalNote(journalPath))
        case .lostDuringRelease:
            return DuckPromptError(.unavailable, "the sound server at \(server) went away before every volume "
                + "was restored" + DuckPrompt.keptJournalNote(journalPath ?? "the journal directory"))
        }
    }

    // MARK: - Steps

    private var duck: DuckSession {
        guard let session else { preconditionFailure("the duck is planned when the prompt is routed") }
        return session
    }

    private func stream(_ part: Int) -> PromptStream {
        guard streams.indices.contains(part) else { preconditionFailure("part \(part)'s stream is opened first") }
        return streams[part]
    }

    private var stopRequested: () -> Bool { { [control] in control.isStopped } }

    /// Why a ramp or a hold returned early: a newer prompt's stop request, else the caller.
    private var stopCause: PromptLifecycle.Failure {
        control.stopRequest.map { .interrupted(reason: $0) } ?? .cancelled
    }

    /// One duck at a time per user, in the order of the queue: waits for this prompt's turn
    /// (or is dropped); then undoes what a prompt that died left ducked, and takes over the
    /// duck a prompt handed over on this same server.
    private func waitTurn() throws {
        if let turn {
            lock = try turn.get()
        } else {
            lock = try ticket.waitTurn(deadline: options.expireMs.map { called + .milliseconds($0) },
                                       expireMs: options.expireMs, cancelled: { [control] in control.isCancelled })
        }
        // A newer prompt that interrupts this one says so in the queue.
        watcher = StopWatcher(ticket: ticket, control: control)
        // Also this process's own journal, kept by an earlier prompt of a held `Prompter`
        // whose server went away: the lock is ours, so no prompt of ours is mid-duck.
        // Their paused players this prompt takes over, as a handed-over duck's.
        let recovered = Recovery.recoverOrphans(store: store, server: server, includingOwn: true, adoptPlayers: true)
        notes = recovered.lines
        adopted = recovered.players
        // Only a duck on this same server can be taken over (another is left for its owner,
        // or restored once its owner is gone).
        let runtimeDir = Environment.value("XDG_RUNTIME_DIR")
        handed = store.takeHandover().flatMap { $0.server == server.server && $0.runtimeDir == runtimeDir ? $0 : nil }
    }

    /// Reads the server, routes, plans the prompt (`PromptPlan`) and journals the duck before any
    /// volume is written.
    private func routeAndPlan() throws -> PromptLifecycle.Routing {
        // A server that went away while this prompt waited its turn (a restart) is connected
        // to again.
        if connection.hasFailed { connection = try reconnect() }
        try connection.waitUntilReady()
        // Other prompts may share the connection: a stop wakes its waits, which look at
        // `control.isStopped`, rather than interrupting them all.
        control.attach(connection, shared: true)
        // A held prompter's copy of the server, kept current from events, its sinks read now;
        // else all read now.
        var (snapshot, info) = try connection.routingSnapshot()
        DebugTrace.write("prompt: \(snapshot.sinks.count) sinks read, \(snapshot.sinkInputs.count) sink-inputs")
        onPipeWire = info.serverName.contains("PipeWire")
        // A call: the policy decides before anything is routed or ducked (`--during-call`).
        var calls = CallStreams.find(sinkInputs: snapshot.sinkInputs, sourceOutputs: snapshot.sourceOutputs)
        var decision = CallDecision.decide(options.duringCall, state: callState(calls), callDuck: options.callDuck)
        if decision == .wait {
            let since = ContinuousClock.now
            (snapshot, info) = try waitForCallEnd()
            calls = CallStreams.find(sinkInputs: snapshot.sinkInputs, sourceOutputs: snapshot.sourceOutputs)
            decision = .play
            callNote = CallDecision.deferredNote(seconds: (ContinuousClock.now - since).seconds)
        }
        if decision == .drop {
            throw DuckPromptError(.dropped, "prompt dropped: a call is on (\(lastCallCause ?? "a call"); --during-call drop)",
                                  dropReason: .duringCall)
        }
        callNote = callNote ?? decision.note
        let route = try DuckPrompt.route(snapshot, request: options.device, config: options.config)
        self.route = route
        // Spoken word is paused, not ducked: its players' streams stay off the duck.
        let pauser = PlayerPauser(inputs: snapshot.sinkInputs, mode: options.pauseMode, rules: options.config.players,
                                  rewindMs: options.rewindMs, inherited: (handed?.players ?? []) + adopted, buses: buses)
        self.pauser = pauser
        let players = pauser.paused + pauser.toPause
        groups = decision == .chime ? [CallChime()] : PromptSequence.groups(sources)
        let plan = PromptPlan(options: options, inputs: snapshot.sinkInputs, route: route, parts: groups.count,
                              excluding: pauser.excluded, pausing: pauser.pausedStreams,
                              playersPaused: players.count, pausesPlayer: !pauser.toPause.isEmpty,
                              handed: handed, call: decision, callStreams: calls.sinkInputs, pid: getpid(),
                              math: .libpulse)
        promptGain = plan.promptGain
        depth = plan.duck.depth
        let session = try DuckSession(connection: connection, plan: plan.duck, inputs: snapshot.sinkInputs,
                                      onPipeWire: onPipeWire)
        self.session = session
        // Its own ramp writes are not read back into the mirror one by one.
        connection.holdMirrorInputs(true)
        holdsMirror = true
        if plan.journals {
            // Journaled before the first volume write and the first Pause.
            session.journal = try JournalKeeper(store: store, plan: session.plan, server: server.server,
                                                serverName: info.serverName, players: players)
        }
        if handed != nil { store.removeHandover() }
        properties = plan.properties
        preRoll = plan.preRollMs
        if plan.silenceMs > 0 { groups[0] = SilencePrefixed(groups[0], milliseconds: plan.silenceMs) }
        return plan.routing
    }

    /// Part `part`'s stream on the routed sink, prefilled from its source: the stream kept
    /// ready by the prompter when it fits (its first part only), else a new one.
    private func makeStream(_ part: Int, corked: Bool) throws -> PromptStream {
        guard let route else { preconditionFailure("routed before a stream is made") }
        let source = groups[part]
        var props = properties
        props[PulseConnection.mediaNameKey] = options.properties[PulseConnection.mediaNameKey] ?? source.name
        let shape = PromptStream.Shape(sinkName: route.sink.name, rate: source.rate, channels: source.channels,
                                       format: source.sampleFormat, latencyMs: options.latencyMs)
        if part == 0, let kept = keeper?.take(shape, on: connection, properties: props) {
            onKeptStream = true
            kept.rearm(properties: props, pull: source.read, starting: !corked)
            return kept
        }
        return try PromptStream(connection: connection, rate: source.rate, channels: source.channels,
                                sinkName: route.sink.name, properties: props, volume: nil,
                                latencyMs: options.latencyMs, corked: corked,
                                format: source.sampleFormat, pull: source.read)
    }

    /// The kept stream took nothing after its uncork (`KeptStreamStart`): the first part is
    /// played from its start on a new stream, made ready as any (`ready`) and started; the
    /// kept one is closed first, so that the two never both play.
    private func replayOnNewStream() throws {
        let stuck = stream(0)
        let fresh = try stuck.reopened()
        stuck.close()
        streams[0] = fresh
        try ready(0)
        fresh.start()
    }

    /// Waits until part `part`'s stream is connected, and keeps the duck off it. `--volume` is
    /// relative to the server's saved volume for the prompt's media.role (the user's
    /// pavucontrol setting for prompts): read from the first stream, which starts at it, and
    /// journaled, so that it is set back even if this prompt dies. Only a real read is used
    /// (`PromptStream.ownVolume(onPipeWire:until:)`), and a silent one (0, muted) is never
    /// scaled and written: a saved volume must never become silence.
    private func ready(_ part: Int) throws {
        let stream = stream(part)
        duck.exclude(try stream.waitReady())
        guard let gain = promptGain else { return }
        if !slotRead {
            slotRead = true
            let deadline = ContinuousClock.now + min(connection.answerTimeout, Self.volumeReadWait)
            let own = try stream.ownVolume(onPipeWire: onPipeWire, until: deadline)
            DebugTrace.write("prompt's saved volume: \(own.map { "\($0.volume)\($0.muted ? " muted" : "")" } ?? "unknown")")
            if let own, !own.isSilent {
                slot = own.volume
                let role = properties[PulseConnection.mediaRoleKey]
                duck.journal?.setPromptSlot(DuckJournal.Ended(key: RestoreKey(mediaRole: role), original: own.volume),
                                            plan: connection.withLock { duck.plan })
            }
        }
        if let slot { stream.setOwnVolume(VolumeMath.scale(slot, by: gain.value)) }
    }

    /// The call state of the server's streams and the buses' calls together; remembers what
    /// causes it for a message (`lastCallCause`).
    private func callState(_ streams: CallStreams.Found) -> CallState {
        let status = CallStatus(readings: streams.readings + (calls?.readings() ?? []))
        lastCallCause = status.cause?.detail
        if status.state != .none { DebugTrace.write("call: \(status.state) (\(status.cause?.detail ?? ""))") }
        return status.state
    }

    /// What made the last call state looked at (`callState`): "sink-input 12 (Linphone,
    /// media.role=phone)".
    private var lastCallCause: String?

    /// `--during-call defer`: waits until no call rings or is on, looking again at every server
    /// event (a stream that comes, changes or goes) and every change of the buses' calls
    /// (`PromptCalls.follow`); then reads the server afresh for the route. Holds the turn
    /// meanwhile: the prompts behind it wait too.
    /// - Throws: `.dropped` (`.expired`) when `--expire-ms` from the call passes first;
    ///   `CancellationError` or a newer prompt's stop; `.unavailable` when the server goes.
    private func waitForCallEnd() throws -> (Snapshot, ServerInfo) {
        let inbox = EventInbox(mainloop: connection.mainloop)
        try connection.subscribe(into: inbox)
        defer { connection.unsubscribe(inbox) }
        let unfollow = calls?.follow { [connection] in connection.post(.busCallsChanged, to: inbox) }
        defer { unfollow?() }
        let deadline = options.expireMs.map { called + .milliseconds($0) }
        while true {
            if control.isCancelled { throw CancellationError() }
            if let request = control.stopRequest {
                throw DuckPromptError(.dropped, "prompt \(request.reason)", dropReason: request.drop)
            }
            let (snapshot, info) = try connection.routingSnapshot()
            let streams = CallStreams.find(sinkInputs: snapshot.sinkInputs, sourceOutputs: snapshot.sourceOutputs)
            if !callState(streams).isOn { return (snapshot, info) }
            if let deadline, ContinuousClock.now >= deadline {
                throw DuckPromptError(.dropped, "prompt dropped: not started within \(options.expireMs ?? 0) ms "
                    + "(a call was on: \(lastCallCause ?? "a call"); --during-call defer)", dropReason: .expired)
            }
            // Without --expire-ms a day stands for "no deadline": the wait ends at an event.
            _ = try connection.withLock {
                try connection.nextEventsLocked(inbox, until: deadline ?? .now + .seconds(86_400),
                                                orWhen: { [control] in control.isStopped })
            }
        }
    }

    /// The prompt's sink went away while it played (the server moved its stream: a Bluetooth
    /// headset switched from A2DP to HFP, a device unplugged): follows the device to its new
    /// sink (`SinkSuccessor`: the same Bluetooth address), waiting up to `successorWait` for it
    /// to come, and later parts play there too. A stream moved while its sink is still there
    /// (the user moved it, with pavucontrol) is left where it was moved.
    /// - Returns: nil when the prompt plays on; the error that stops it when no sink of the
    ///   device came (`.unavailable`, naming the sink).
    /// - Throws: `.unavailable` when the server goes or refuses the move.
    private func followDevice(_ playing: PromptStream) throws -> DuckPromptError? {
        guard let route else { return nil }
        let gone = route.sink
        // Not heard where the server moved it (the speaker, for a headset) while it looks.
        let movedTo = connection.withLock { () -> String? in
            _ = playing.takeMovedLocked()
            playing.pauseLocked()
            return playing.sinkNameLocked
        }
        // The notice of its own last move, come late: nothing to do.
        if movedTo == gone.name {
            playing.start()
            return nil
        }
        let inbox = EventInbox(mainloop: connection.mainloop)
        try connection.subscribe(into: inbox)
        defer { connection.unsubscribe(inbox) }
        let deadline = ContinuousClock.now + Self.successorWait
        while true {
            let sinks = try connection.sinkList()
            if sinks.contains(where: { $0.name == gone.name }) {
                playing.start()
                notes.append("the prompt was moved from \(gone.name) to \(movedTo ?? "another sink") by another client: "
                    + "it played on there")
                return nil
            }
            if let next = SinkSuccessor.successor(of: gone, among: sinks) {
                DebugTrace.write("prompt: \(gone.name) went away; following the device to \(next.name)")
                try playing.move(to: next.name)
                playing.start()
                notes.append("followed the device from \(gone.name) to \(next.name), its new sink (\(gone.name) went away "
                    + "mid-prompt: a Bluetooth profile switch)")
                self.route?.sink = next
                return nil
            }
            if ContinuousClock.now >= deadline {
                return DuckPromptError(.unavailable, "the sink \(gone.name) went away mid-prompt and no sink of the same "
                    + "device came within \(Int(Self.successorWait.seconds * 1000)) ms (the server had moved it to "
                    + "\(movedTo ?? "another sink")): the prompt was stopped")
            }
            _ = try connection.withLock { try connection.nextEventsLocked(inbox, until: deadline) }
        }
    }

    /// How long a prompt whose sink went away waits for the device's new sink (`followDevice`).
    static let successorWait: Duration = .milliseconds(1500)

    /// How long a relative `--volume` waits for pipewire-pulse to know the stream's volume
    /// (`ready`); without it by then, the prompt plays at the server's volume, unscaled.
    static let volumeReadWait: Duration = .seconds(2)

    /// After the last sample: whether the prompt played at -inf dB or muted (its stream's own
    /// volume, `pa_context_get_sink_input_info`). Then a warning that names the role's saved
    /// volume goes into the report, for the command's stderr and the service's message.
    private func checkAudible(_ stream: PromptStream) {
        let deadline = ContinuousClock.now + min(connection.answerTimeout, .milliseconds(500))
        guard let own = try? stream.ownVolume(onPipeWire: onPipeWire, until: deadline), own.isSilent else { return }
        let role = properties[PulseConnection.mediaRoleKey] ?? "navigation"
        warnings.append(own.muted
            ? "played muted (the saved volume for media.role=\(role) is muted: unmute it in pavucontrol)"
            : "played at -inf dB (the saved volume for media.role=\(role) is 0: raise it in pavucontrol)")
    }
}
