/// The life of one prompt, from its turn in the queue to its end, as a state machine: each
/// event goes in, the one action the driver must carry out next comes out, and the driver
/// reports back what came of it as the next event. No I/O, no clock: the driver
/// (`DuckPrompt.runPrompt`, `Prompt/PromptRun.swift`) waits, talks to the server and the queue,
/// and feeds what happened here; table tests drive it the same way (`PromptLifecycleTests`).
///
/// The order it keeps:
/// 1. wait for this prompt's turn (`waitTurn`), then read the server and route (`route`);
/// 2. open the first part's stream corked (uncorked at once when there is nothing to duck, no
///    pre-roll and no relative volume: no attack to wait for); a sleeping sink gets it ready and
///    started first (its pre-roll of silence overlaps the attack), and so does a busy desktop
///    (32 streams or more to duck: linked before the attack floods the server with writes);
/// 3. the attack (`rampDown`);
/// 4. per part: ready it, uncork it, open the next part's stream (corked, prefilled while this
///    one plays), hold the duck until this one has drained (`hold`);
/// 5. the prompt's own volume is set back (`restorePromptVolume`, only under a relative
///    `--volume`); then, played whole or cancelled with another prompt waiting
///    (`checkQueue`), or interrupted by a newer prompt, the duck is handed over (`handOver`),
///    so that the music does not come up between the two prompts, else released
///    (`release`, then `finishDuck`: every write confirmed, the journal removed);
/// 6. the end (`end`), with its `Ending`.
///
/// A stop (the caller cancelled, or a newer prompt interrupts this one) during the attack ends
/// the prompt before any part plays; while a part plays, that part fades out first. A failure
/// (the server died or stalled, refused a stream) before anything could have been ducked ends
/// the prompt at once; after, the duck is released as far as the server lets it, and what is
/// not confirmed stays journaled.
package struct PromptLifecycle: Sendable, Equatable {
    /// What the route and the duck plan said about this prompt (`Event.routed`).
    package struct Routing: Sendable, Equatable {
        /// Streams of one format play as one stream: how many streams the prompt takes (>= 1).
        var parts: Int
        /// Silence first, in ms, because the sink is asleep (0: it is running).
        var preRollMs: Int
        /// Whether there is any stream to duck (the plan has entries).
        var ducks: Bool
        /// As many streams to duck as a busy desktop has (`PromptPlan.busyDesktopStreams`).
        var busy: Bool = false
        /// `--volume` is set: the prompt's own volume is set relative to the saved one, and
        /// set back at the end.
        var relativeVolume: Bool = false

        package init(parts: Int, preRollMs: Int, ducks: Bool, busy: Bool = false, relativeVolume: Bool = false) {
            self.parts = parts
            self.preRollMs = preRollMs
            self.ducks = ducks
            self.busy = busy
            self.relativeVolume = relativeVolume
        }
    }

    /// Why a prompt stopped early, or failed.
    package enum Failure: Sendable, Equatable {
        /// The caller cancelled (a signal, `PlayCancellation.cancel()`, Task cancellation).
        case cancelled
        /// A newer prompt interrupted it (the stop file's reason, e.g. "interrupted by a
        /// message prompt").
        case interrupted(reason: StopRequest)
        /// An error: no server, the server died or stalled, the stream was refused, the prompt
        /// was dropped or expired in the queue.
        case error(DuckPromptError)
    }

    /// How the prompt ended (`Action.end`).
    package enum Ending: Sendable, Equatable {
        /// Played whole; the duck released (`handedOver` false) or handed to the next prompt.
        case played(handedOver: Bool)
        /// Stopped by a newer prompt; the duck handed over (or released when no prompt took it).
        case interrupted(reason: StopRequest)
        /// Stopped by the caller; the duck released, or handed to a prompt that waited (or came
        /// while a cancel that keeps the duck kept it).
        case cancelled
        /// Failed. `journalKept`: what was ducked could not be confirmed restored and stays
        /// journaled for the next duckprompt or `duckprompt restore`.
        case failed(DuckPromptError, journalKept: Bool)
        /// Played (or stopped) and released, but the server went away before every volume was
        /// confirmed restored: the journal is kept.
        case lostDuringRelease
    }

    /// What the driver does next. Each is answered by the event named.
    package enum Action: Sendable, Equatable {
        /// Wait for this prompt's turn in the queue, take the duck lock, recover dead prompts'
        /// journals and adopt a handed-over duck → `turnCame` (or `failed`).
        case waitTurn
        /// Connect if needed, read the server, route, plan the duck and journal it → `routed`.
        case route
        /// Create part `part`'s stream on the routed sink, corked or not → `streamOpened`.
        case openStream(part: Int, corked: Bool)
        /// Wait until part `part`'s stream is connected; set its relative volume → `streamReady`.
        case readyStream(part: Int)
        /// Uncork part `part`'s stream → `streamStarted`.
        case startStream(part: Int)
        /// Ramp every ducked stream down over the attack → `attackDone` (or `stopped`).
        case rampDown
        /// Hold the duck until part `part` has drained → `drained` (or `stopped`).
        case hold(part: Int)
        /// Fade part `part` out (50 ms) and stop it → `fadedOut`.
        case fadeOut(part: Int)
        /// Set the prompt's own volume back to the saved one → `promptVolumeRestored`.
        case restorePromptVolume
        /// Is another prompt waiting its turn? → `queueChecked`.
        case checkQueue
        /// Hand the duck over to the next prompt → `handedOver`.
        case handOver
        /// Ramp every ducked stream back over the release → `released`.
        case release
        /// Confirm every volume restored and remove the journal → `duckFinished`.
        case finishDuck
        /// Done: return or throw by the ending.
        case end(Ending)
    }

    /// What the driver reports.
    package enum Event: Sendable, Equatable {
        case turnCame
        case routed(Routing)
        case streamOpened(part: Int)
        case streamReady(part: Int)
        case streamStarted(part: Int)
        case attackDone
        case drained(part: Int)
        /// A ramp or a hold returned early: the caller cancelled, or a newer prompt stops this one.
        case stopped(Failure)
        case fadedOut
        case promptVolumeRestored
        case queueChecked(anotherWaits: Bool)
        /// What became of the handover: `true` when the next prompt took (or will take) the
        /// duck, `false` when no prompt was left and this one took it back to release it.
        case handedOver(Bool)
        case released
        case duckFinished(confirmed: Bool)
        /// Any step threw (the driver maps the error: `CancellationError` to `.cancelled`).
        case failed(Failure)
    }

    /// Where the prompt is.
    enum State: Sendable, Equatable {
        case idle
        case waitingTurn
        case routing
        /// The first stream is being prepared before the attack.
        case preparing
        case attack
        /// Part `part` is being readied, started, and played until drained.
        case playing(part: Int)
        /// Part `part` fades out because of `why`.
        case fadingOut(part: Int, why: Failure)
        /// The prompt's own volume is set back; then the duck ends for the reason `after`.
        case restoringVolume(after: Stop)
        /// Is another prompt waiting? Then the duck ended for the reason given is handed over.
        case checkingQueue(Stop)
        case handingOver(Stop)
        case releasing(Stop)
        case finishing(Stop)
        case done(Ending)
    }

    /// Why the duck is being ended: played whole, or stopped early (`Failure`).
    enum Stop: Sendable, Equatable {
        case played
        case stopped(Failure)
    }

    private(set) var state: State = .idle
    private(set) var routing: Routing? = nil
    /// Of the current part: what was done to its stream (driver's answers so far).
    private var opened = Set<Int>(), ready = Set<Int>(), started = Set<Int>()

    package init() {}

    /// The first action: wait for this prompt's turn.
    package mutating func start() -> Action {
        precondition(state == .idle, "start() once")
        state = .waitingTurn
        return .waitTurn
    }

    /// Feeds one event; returns the next action. An event that cannot happen in the current
    /// state is a bug of the driver (it traps).
    package mutating func handle(_ event: Event) -> Action {
        switch (state, event) {
        case (.waitingTurn, .turnCame):
            state = .routing
            return .route

        case (.routing, .routed(let r)):
            precondition(r.parts >= 1, "a prompt has at least one part")
            routing = r
            state = .preparing
            // Nothing to duck, no pre-roll, no relative volume: no attack to wait for, the
            // first stream starts as soon as it is filled (no cork round trip).
            return .openStream(part: 0, corked: !atOnceStarted)

        case (.preparing, .streamOpened(0)):
            opened.insert(0)
            if atOnceStarted { started.insert(0) }
            return nextBeforeAttack()
        case (.preparing, .streamReady(0)):
            ready.insert(0)
            return nextBeforeAttack()
        case (.preparing, .streamStarted(0)):
            started.insert(0)
            return nextBeforeAttack()

        case (.attack, .attackDone):
            state = .playing(part: 0)
            return nextInPart(0)
        case (.attack, .stopped(let why)):
            // Stopped during the attack: no part has played (a pre-roll is silence).
            return endPrompt(.stopped(why))

        case (.playing(let part), .streamReady(let p)) where p == part:
            ready.insert(p)
            return nextInPart(part)
        case (.playing(let part), .streamStarted(let p)) where p == part:
            started.insert(p)
            return nextInPart(part)
        case (.playing(let part), .streamOpened(let p)) where p == part || p == part + 1:
            opened.insert(p)
            return nextInPart(part)
        case (.playing(let part), .drained(let p)) where p == part:
            guard let routing, part + 1 < routing.parts else { return endPrompt(.played) }
            state = .playing(part: part + 1)
            return nextInPart(part + 1)
        case (.playing(let part), .stopped(let why)):
            state = .fadingOut(part: part, why: why)
            return .fadeOut(part: part)

        case (.fadingOut(_, let why), .fadedOut):
            return endPrompt(.stopped(why))

        case (.restoringVolume(let stop), .promptVolumeRestored):
            return endDuck(stop)

        case (.checkingQueue(let stop), .queueChecked(let another)):
            if another {
                state = .handingOver(stop)
                return .handOver
            }
            state = .releasing(stop)
            return .release

        case (.handingOver(let stop), .handedOver(let taken)):
            if taken {
                switch stop {
                case .played: return finish(.played(handedOver: true))
                case .stopped(.interrupted(let reason)): return finish(.interrupted(reason: reason))
                case .stopped(.cancelled): return finish(.cancelled)
                case .stopped(let other): preconditionFailure("only a played, cancelled or interrupted prompt hands over, not \(other)")
                }
            }
            // No prompt was left to adopt it: this prompt releases it after all.
            state = .releasing(stop)
            return .release

        case (.releasing(let stop), .released):
            state = .finishing(stop)
            return .finishDuck

        case (.finishing(let stop), .duckFinished(let confirmed)):
            switch stop {
            case .played: return finish(confirmed ? .played(handedOver: false) : .lostDuringRelease)
            case .stopped(.cancelled): return finish(confirmed ? .cancelled : .lostDuringRelease)
            case .stopped(.interrupted(let reason)):
                return finish(confirmed ? .interrupted(reason: reason) : .lostDuringRelease)
            case .stopped(.error(let error)): return finish(.failed(error, journalKept: !confirmed))
            }

        case (_, .failed(let why)):
            return fail(why)

        default:
            preconditionFailure("PromptLifecycle: event \(event) in state \(state)")
        }
    }

    /// Whether the first stream was opened uncorked (it plays as soon as it is filled).
    private var atOnceStarted: Bool {
        guard let routing else { return false }
        return routing.preRollMs == 0 && !routing.ducks && !routing.relativeVolume
    }

    /// Before the attack: a sleeping sink's stream (pre-roll) or a busy desktop's is readied
    /// first, and a pre-roll started, so that it wakes the device during the attack.
    private mutating func nextBeforeAttack() -> Action {
        guard let routing else { preconditionFailure("routed before the attack") }
        let readyFirst = routing.preRollMs > 0 || routing.busy
        if readyFirst, !ready.contains(0) { return .readyStream(part: 0) }
        if routing.preRollMs > 0, !started.contains(0) { return .startStream(part: 0) }
        state = .attack
        return .rampDown
    }

    /// Within part `part`: ready its stream, start it, open the next part's, then hold.
    private mutating func nextInPart(_ part: Int) -> Action {
        guard let routing else { preconditionFailure("routed before playing") }
        if !opened.contains(part) { return .openStream(part: part, corked: true) }
        if !ready.contains(part) { return .readyStream(part: part) }
        if !started.contains(part) { return .startStream(part: part) }
        if part + 1 < routing.parts, !opened.contains(part + 1) { return .openStream(part: part + 1, corked: true) }
        return .hold(part: part)
    }

    /// The prompt's audio is over (played whole or stopped): set its own volume back, then
    /// end the duck.
    private mutating func endPrompt(_ stop: Stop) -> Action {
        if routing?.relativeVolume == true {
            state = .restoringVolume(after: stop)
            return .restorePromptVolume
        }
        return endDuck(stop)
    }

    /// Played whole or cancelled: hand over if another prompt waits (a cancel must not bring
    /// the music up between two prompts). Interrupted by a newer prompt: hand over. Failed:
    /// release.
    private mutating func endDuck(_ stop: Stop) -> Action {
        switch stop {
        case .played, .stopped(.cancelled):
            state = .checkingQueue(stop)
            return .checkQueue
        case .stopped(.interrupted):
            state = .handingOver(stop)
            return .handOver
        case .stopped(.error):
            state = .releasing(stop)
            return .release
        }
    }

    /// A step failed. Before routing nothing was ducked: the end. Later, the duck is released
    /// as far as the server allows. The steps that end the duck (restoring the prompt's volume,
    /// the queue check, the handover, the release, the confirmation) do not throw in
    /// `PromptRun` today; should one fail, the ending goes on with the next step.
    private mutating func fail(_ why: Failure) -> Action {
        switch state {
        case .idle, .waitingTurn, .routing:
            return finish(Self.ending(of: why, journalKept: false))
        case .preparing, .attack, .playing, .fadingOut:
            return endPrompt(.stopped(why))
        case .restoringVolume(let stop):
            // The prompt's volume could not be set back: end the duck as planned.
            return endDuck(stop)
        case .checkingQueue(let stop):
            // The queue could not be read: release, as when no prompt waits.
            state = .releasing(stop)
            return .release
        case .handingOver(let stop):
            state = .releasing(stop)
            return .release
        case .releasing(let stop):
            state = .finishing(stop)
            return .finishDuck
        case .finishing:
            // Nothing could be confirmed: as an unconfirmed release.
            return handle(.duckFinished(confirmed: false))
        case .done:
            preconditionFailure("PromptLifecycle: failure \(why) after the end")
        }
    }

    private static func ending(of failure: Failure, journalKept: Bool) -> Ending {
        switch failure {
        case .cancelled: .cancelled
        case .interrupted(let reason): .interrupted(reason: reason)
        case .error(let error): .failed(error, journalKept: journalKept)
        }
    }

    private mutating func finish(_ ending: Ending) -> Action {
        state = .done(ending)
        return .end(ending)
    }
}

extension PromptLifecycle.Action {
    /// Whether the prompt's audio is over by this action: the steps after the last part (its
    /// own volume set back, the queue checked, the duck handed over, released, confirmed) and
    /// the end. The first such action of a prompt is where its audio ended (played whole,
    /// faded out, stopped during the attack, failed).
    package var endsAudio: Bool {
        switch self {
        case .restorePromptVolume, .checkQueue, .handOver, .release, .finishDuck, .end: true
        case .waitTurn, .route, .openStream, .readyStream, .startStream, .rampDown, .hold, .fadeOut: false
        }
    }
}
