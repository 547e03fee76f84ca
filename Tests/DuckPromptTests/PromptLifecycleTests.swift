import Testing
@testable import DuckPrompt
@testable import DuckPromptCore

/// A prompt's lifecycle as a state machine: events in, the next action out, no server (as
/// DuckPlanEventTests drives DuckPlan, and swift-nio's upgrader tests drive its state machine).
@Suite("PromptLifecycle")
struct PromptLifecycleTests {
    typealias Event = PromptLifecycle.Event
    typealias Action = PromptLifecycle.Action
    typealias Routing = PromptLifecycle.Routing

    static let lost = DuckPromptError(.unavailable, "the sound server went away")
    static let dropped = DuckPromptError(.dropped, "prompt dropped: not started within 100 ms")

    /// One row: the events fed after `start()`, and every action that came out (the first is
    /// `start()`'s).
    struct Row: Sendable, CustomStringConvertible {
        var name: String
        var steps: [(Event, Action)]
        var description: String { name }
    }

    /// From the turn to the hold of the first part of a plain prompt (one part, streams to
    /// duck, sink awake).
    static let plainStart: [(Event, Action)] = [
        (.turnCame, .route),
        (.routed(Routing(parts: 1, preRollMs: 0, ducks: true)), .openStream(part: 0, corked: true)),
        (.streamOpened(part: 0), .rampDown),
        (.attackDone, .readyStream(part: 0)),
        (.streamReady(part: 0), .startStream(part: 0)),
        (.streamStarted(part: 0), .hold(part: 0)),
    ]

    static let rows: [Row] = [
        Row(name: "one part, ducked, released", steps: plainStart + [
            (.drained(part: 0), .checkQueue),
            (.queueChecked(anotherWaits: false), .release),
            (.released, .finishDuck),
            (.duckFinished(confirmed: true), .end(.played(handedOver: false))),
        ]),
        Row(name: "nothing to duck: the stream starts uncorked, no start step", steps: [
            (.turnCame, .route),
            (.routed(Routing(parts: 1, preRollMs: 0, ducks: false)), .openStream(part: 0, corked: false)),
            (.streamOpened(part: 0), .rampDown),
            (.attackDone, .readyStream(part: 0)),
            (.streamReady(part: 0), .hold(part: 0)),
            (.drained(part: 0), .checkQueue),
            (.queueChecked(anotherWaits: false), .release),
            (.released, .finishDuck),
            (.duckFinished(confirmed: true), .end(.played(handedOver: false))),
        ]),
        Row(name: "a sleeping sink: readied and started before the attack (pre-roll)", steps: [
            (.turnCame, .route),
            (.routed(Routing(parts: 1, preRollMs: 300, ducks: true)), .openStream(part: 0, corked: true)),
            (.streamOpened(part: 0), .readyStream(part: 0)),
            (.streamReady(part: 0), .startStream(part: 0)),
            (.streamStarted(part: 0), .rampDown),
            (.attackDone, .hold(part: 0)),
            (.drained(part: 0), .checkQueue),
        ]),
        Row(name: "pre-roll with nothing to duck: still corked until readied and started", steps: [
            (.turnCame, .route),
            (.routed(Routing(parts: 1, preRollMs: 1000, ducks: false)), .openStream(part: 0, corked: true)),
            (.streamOpened(part: 0), .readyStream(part: 0)),
            (.streamReady(part: 0), .startStream(part: 0)),
            (.streamStarted(part: 0), .rampDown),
            (.attackDone, .hold(part: 0)),
        ]),
        Row(name: "a busy desktop: the stream is linked before the attack, started after", steps: [
            (.turnCame, .route),
            (.routed(Routing(parts: 1, preRollMs: 0, ducks: true, busy: true)), .openStream(part: 0, corked: true)),
            (.streamOpened(part: 0), .readyStream(part: 0)),
            (.streamReady(part: 0), .rampDown),
            (.attackDone, .startStream(part: 0)),
            (.streamStarted(part: 0), .hold(part: 0)),
        ]),
        Row(name: "three parts: each next stream opened while the one before plays", steps: [
            (.turnCame, .route),
            (.routed(Routing(parts: 3, preRollMs: 0, ducks: true)), .openStream(part: 0, corked: true)),
            (.streamOpened(part: 0), .rampDown),
            (.attackDone, .readyStream(part: 0)),
            (.streamReady(part: 0), .startStream(part: 0)),
            (.streamStarted(part: 0), .openStream(part: 1, corked: true)),
            (.streamOpened(part: 1), .hold(part: 0)),
            (.drained(part: 0), .readyStream(part: 1)),
            (.streamReady(part: 1), .startStream(part: 1)),
            (.streamStarted(part: 1), .openStream(part: 2, corked: true)),
            (.streamOpened(part: 2), .hold(part: 1)),
            (.drained(part: 1), .readyStream(part: 2)),
            (.streamReady(part: 2), .startStream(part: 2)),
            (.streamStarted(part: 2), .hold(part: 2)),
            (.drained(part: 2), .checkQueue),
            (.queueChecked(anotherWaits: false), .release),
        ]),
        Row(name: "played whole while another prompt waits: the duck is handed over", steps: plainStart + [
            (.drained(part: 0), .checkQueue),
            (.queueChecked(anotherWaits: true), .handOver),
            (.handedOver(true), .end(.played(handedOver: true))),
        ]),
        Row(name: "handed over but no prompt took it: released after all", steps: plainStart + [
            (.drained(part: 0), .checkQueue),
            (.queueChecked(anotherWaits: true), .handOver),
            (.handedOver(false), .release),
            (.released, .finishDuck),
            (.duckFinished(confirmed: true), .end(.played(handedOver: false))),
        ]),
        Row(name: "interrupted while playing: fades out, hands the duck over", steps: plainStart + [
            (.stopped(.interrupted(reason: StopRequest(drop: .interrupted, by: "a message prompt"))), .fadeOut(part: 0)),
            (.fadedOut, .handOver),
            (.handedOver(true), .end(.interrupted(reason: StopRequest(drop: .interrupted, by: "a message prompt")))),
        ]),
        Row(name: "interrupted, no one took the duck: released, still interrupted", steps: plainStart + [
            (.stopped(.interrupted(reason: StopRequest(drop: .interrupted, by: "an important prompt"))), .fadeOut(part: 0)),
            (.fadedOut, .handOver),
            (.handedOver(false), .release),
            (.released, .finishDuck),
            (.duckFinished(confirmed: true), .end(.interrupted(reason: StopRequest(drop: .interrupted, by: "an important prompt")))),
        ]),
        Row(name: "cancelled while playing, no prompt waiting: fades out, released", steps: plainStart + [
            (.stopped(.cancelled), .fadeOut(part: 0)),
            (.fadedOut, .checkQueue),
            (.queueChecked(anotherWaits: false), .release),
            (.released, .finishDuck),
            (.duckFinished(confirmed: true), .end(.cancelled)),
        ]),
        Row(name: "cancelled while playing, another prompt waiting: fades out, the duck handed over", steps: plainStart + [
            (.stopped(.cancelled), .fadeOut(part: 0)),
            (.fadedOut, .checkQueue),
            (.queueChecked(anotherWaits: true), .handOver),
            (.handedOver(true), .end(.cancelled)),
        ]),
        Row(name: "cancelled, the waiting prompt gone before it took the duck: released", steps: plainStart + [
            (.stopped(.cancelled), .fadeOut(part: 0)),
            (.fadedOut, .checkQueue),
            (.queueChecked(anotherWaits: true), .handOver),
            (.handedOver(false), .release),
            (.released, .finishDuck),
            (.duckFinished(confirmed: true), .end(.cancelled)),
        ]),
        Row(name: "cancelled during the attack: no part played, no fade", steps: [
            (.turnCame, .route),
            (.routed(Routing(parts: 2, preRollMs: 0, ducks: true)), .openStream(part: 0, corked: true)),
            (.streamOpened(part: 0), .rampDown),
            (.stopped(.cancelled), .checkQueue),
            (.queueChecked(anotherWaits: false), .release),
            (.released, .finishDuck),
            (.duckFinished(confirmed: true), .end(.cancelled)),
        ]),
        Row(name: "interrupted during the attack: handed over without a fade", steps: [
            (.turnCame, .route),
            (.routed(Routing(parts: 1, preRollMs: 0, ducks: true)), .openStream(part: 0, corked: true)),
            (.streamOpened(part: 0), .rampDown),
            (.stopped(.interrupted(reason: StopRequest(drop: .interrupted, by: "a message prompt"))), .handOver),
        ]),
        Row(name: "interrupted in the second part: that part fades", steps: [
            (.turnCame, .route),
            (.routed(Routing(parts: 2, preRollMs: 0, ducks: true)), .openStream(part: 0, corked: true)),
            (.streamOpened(part: 0), .rampDown),
            (.attackDone, .readyStream(part: 0)),
            (.streamReady(part: 0), .startStream(part: 0)),
            (.streamStarted(part: 0), .openStream(part: 1, corked: true)),
            (.streamOpened(part: 1), .hold(part: 0)),
            (.drained(part: 0), .readyStream(part: 1)),
            (.streamReady(part: 1), .startStream(part: 1)),
            (.streamStarted(part: 1), .hold(part: 1)),
            (.stopped(.cancelled), .fadeOut(part: 1)),
        ]),
        Row(name: "relative --volume: corked even with nothing to duck, set back before the end", steps: [
            (.turnCame, .route),
            (.routed(Routing(parts: 1, preRollMs: 0, ducks: false, relativeVolume: true)), .openStream(part: 0, corked: true)),
            (.streamOpened(part: 0), .rampDown),
            (.attackDone, .readyStream(part: 0)),
            (.streamReady(part: 0), .startStream(part: 0)),
            (.streamStarted(part: 0), .hold(part: 0)),
            (.drained(part: 0), .restorePromptVolume),
            (.promptVolumeRestored, .checkQueue),
        ]),
        Row(name: "relative --volume, interrupted: fade, volume back, then the handover", steps: [
            (.turnCame, .route),
            (.routed(Routing(parts: 1, preRollMs: 0, ducks: true, relativeVolume: true)), .openStream(part: 0, corked: true)),
            (.streamOpened(part: 0), .rampDown),
            (.attackDone, .readyStream(part: 0)),
            (.streamReady(part: 0), .startStream(part: 0)),
            (.streamStarted(part: 0), .hold(part: 0)),
            (.stopped(.interrupted(reason: StopRequest(drop: .interrupted, by: "a message prompt"))), .fadeOut(part: 0)),
            (.fadedOut, .restorePromptVolume),
            (.promptVolumeRestored, .handOver),
        ]),
        Row(name: "dropped or expired in the queue: the end, nothing to release", steps: [
            (.failed(.error(dropped)), .end(.failed(dropped, journalKept: false))),
        ]),
        Row(name: "cancelled while waiting its turn", steps: [
            (.failed(.cancelled), .end(.cancelled)),
        ]),
        Row(name: "no server when routing: the end, nothing was ducked", steps: [
            (.turnCame, .route),
            (.failed(.error(lost)), .end(.failed(lost, journalKept: false))),
        ]),
        Row(name: "the server dies while playing: released as far as it goes, journal kept", steps: plainStart + [
            (.failed(.error(lost)), .release),
            (.released, .finishDuck),
            (.duckFinished(confirmed: false), .end(.failed(lost, journalKept: true))),
        ]),
        Row(name: "a stream refused during the attack, the server still up: released, journal removed", steps: [
            (.turnCame, .route),
            (.routed(Routing(parts: 1, preRollMs: 0, ducks: true)), .openStream(part: 0, corked: true)),
            (.streamOpened(part: 0), .rampDown),
            (.failed(.error(lost)), .release),
            (.released, .finishDuck),
            (.duckFinished(confirmed: true), .end(.failed(lost, journalKept: false))),
        ]),
        Row(name: "the server dies while playing under a relative volume: set back first", steps: [
            (.turnCame, .route),
            (.routed(Routing(parts: 1, preRollMs: 300, ducks: true, relativeVolume: true)), .openStream(part: 0, corked: true)),
            (.failed(.error(lost)), .restorePromptVolume),
            (.promptVolumeRestored, .release),
            (.released, .finishDuck),
            (.duckFinished(confirmed: false), .end(.failed(lost, journalKept: true))),
        ]),
        Row(name: "the server goes away during the release: the journal is kept", steps: plainStart + [
            (.drained(part: 0), .checkQueue),
            (.queueChecked(anotherWaits: false), .release),
            (.released, .finishDuck),
            (.duckFinished(confirmed: false), .end(.lostDuringRelease)),
        ]),
        Row(name: "a failure while ending the duck does not stop the ending", steps: plainStart + [
            (.drained(part: 0), .checkQueue),
            (.queueChecked(anotherWaits: true), .handOver),
            (.failed(.error(lost)), .release),
            (.failed(.error(lost)), .finishDuck),
            (.failed(.error(lost)), .end(.lostDuringRelease)),
        ]),
        Row(name: "the server refuses the stream when it is readied: released, no fade", steps: [
            (.turnCame, .route),
            (.routed(Routing(parts: 1, preRollMs: 0, ducks: true)), .openStream(part: 0, corked: true)),
            (.streamOpened(part: 0), .rampDown),
            (.attackDone, .readyStream(part: 0)),
            (.failed(.error(lost)), .release),
            (.released, .finishDuck),
            (.duckFinished(confirmed: true), .end(.failed(lost, journalKept: false))),
        ]),
        Row(name: "a stop during a pre-roll's attack under a relative volume: volume back, handed over", steps: [
            (.turnCame, .route),
            (.routed(Routing(parts: 1, preRollMs: 300, ducks: true, relativeVolume: true)), .openStream(part: 0, corked: true)),
            (.streamOpened(part: 0), .readyStream(part: 0)),
            (.streamReady(part: 0), .startStream(part: 0)),
            (.streamStarted(part: 0), .rampDown),
            (.stopped(.interrupted(reason: StopRequest(drop: .interrupted, by: "a message prompt"))), .restorePromptVolume),
            (.promptVolumeRestored, .handOver),
            (.handedOver(true), .end(.interrupted(reason: StopRequest(drop: .interrupted, by: "a message prompt")))),
        ]),
    ]

    @Test("events in, actions out", arguments: rows)
    func table(_ row: Row) {
        var lifecycle = PromptLifecycle()
        #expect(lifecycle.start() == .waitTurn)
        for (i, (event, expected)) in row.steps.enumerated() {
            let action = lifecycle.handle(event)
            #expect(action == expected, "step \(i + 1): \(event) gave \(action), expected \(expected)")
            guard action == expected else { return }
        }
        if case .end(let ending)? = row.steps.last?.1 {
            #expect(lifecycle.state == .done(ending))
        }
    }

    @Test("each ending's error: 75 for an interruption, a cancel, the failure with the kept journal, 69 when lost")
    func endingErrors() throws {
        let journal = "/run/user/1000/duckprompt/journal-42.json"
        let server = "unix:/run/user/1000/pulse/native"
        #expect(PromptRun.error(for: .played(handedOver: false), journalPath: journal, server: server) == nil)
        #expect(PromptRun.error(for: .played(handedOver: true), journalPath: nil, server: server) == nil)
        let interrupted = try #require(PromptRun.error(for: .interrupted(reason: StopRequest(drop: .interrupted, by: "a message prompt")),
                                                       journalPath: journal, server: server) as? DuckPromptError)
        #expect(interrupted == DuckPromptError(.dropped, "prompt interrupted by a message prompt", dropReason: .interrupted))
        let replaced = try #require(PromptRun.error(for: .interrupted(reason: StopRequest(drop: .replaced, by: "a newer text prompt (pid 7)")),
                                                    journalPath: journal, server: server) as? DuckPromptError)
        #expect(replaced.dropReason == .replaced)
        #expect(interrupted.exitCode == 75)
        #expect(PromptRun.error(for: .cancelled, journalPath: journal, server: server) is CancellationError)
        // A failure whose duck was confirmed restored is itself; one whose journal is kept says where.
        #expect(PromptRun.error(for: .failed(Self.lost, journalKept: false), journalPath: journal, server: server)
                as? DuckPromptError == Self.lost)
        #expect(PromptRun.error(for: .failed(Self.lost, journalKept: true), journalPath: nil, server: server)
                as? DuckPromptError == Self.lost, "nothing journaled: nothing to name")
        let kept = try #require(PromptRun.error(for: .failed(Self.lost, journalKept: true), journalPath: journal,
                                                server: server) as? DuckPromptError)
        #expect(kept.code == .unavailable)
        #expect(kept.message == "the sound server went away; what it ducked is journaled in \(journal) and is "
                + "restored by the next duckprompt command, or `duckprompt restore`, once the server answers")
        let lostInRelease = try #require(PromptRun.error(for: .lostDuringRelease, journalPath: journal,
                                                         server: server) as? DuckPromptError)
        #expect(lostInRelease.exitCode == 69)
        #expect(lostInRelease.message.hasPrefix("the sound server at \(server) went away before every volume was restored; what it ducked is journaled in \(journal)"))
    }

    /// A driver that answers every action as a server would, except that a seeded generator
    /// stops or fails the prompt at a random step: whatever happens, the prompt ends, a duck
    /// that was started is ended (released or handed over), streams are used in order, and
    /// no action comes after the end.
    @Test("random stops and failures (400 seeded runs): every run ends, and every duck begun is ended")
    func randomRuns() {
        for seed in 0..<400 { Self.randomRun(seed: seed) }
    }

    static func randomRun(seed: Int) {
        var random = SeededGenerator(seed: UInt64(seed))
        let routing = Routing(parts: 1 + Int(random.next() % 3), preRollMs: random.next() % 2 == 0 ? 0 : 300,
                              ducks: random.next() % 4 != 0, busy: random.next() % 5 == 0,
                              relativeVolume: random.next() % 3 == 0)
        var lifecycle = PromptLifecycle()
        var action = lifecycle.start()
        var opened = Set<Int>(), readied = Set<Int>(), startedParts = Set<Int>()
        var rampedDown = false, duckEnded = false, faded = 0, routed = false, volumeRestored = false
        /// The first stop or failure injected, which the ending must report.
        var injected: PromptLifecycle.Failure? = nil
        var unconfirmed = false
        func inject(_ failure: PromptLifecycle.Failure, _ event: Event) -> Event {
            if injected == nil { injected = failure }
            return event
        }
        for _ in 0..<100 {
            if case .end(let ending) = action {
                #expect(!rampedDown || duckEnded, "seed \(seed): ended \(ending) with the duck still down")
                #expect(lifecycle.state == .done(ending))
                #expect(faded <= 1, "seed \(seed): faded out \(faded) times")
                #expect(!(routed && routing.relativeVolume) || volumeRestored,
                        "seed \(seed): ended \(ending) without setting the prompt's volume back")
                // The ending tells what happened first; an unconfirmed release is said as such.
                let expected: PromptLifecycle.Ending
                switch injected {
                case nil: expected = unconfirmed ? .lostDuringRelease : .played(handedOver: ending == .played(handedOver: true))
                case .cancelled: expected = unconfirmed ? .lostDuringRelease : .cancelled
                case .interrupted(let reason): expected = unconfirmed ? .lostDuringRelease : .interrupted(reason: reason)
                case .error(let error): expected = .failed(error, journalKept: unconfirmed)
                }
                #expect(ending == expected, "seed \(seed): ended \(ending), expected \(expected) (routing \(routing))")
                return
            }
            // One event in eight is a stop (in a ramp or a hold) or a failure.
            let roll = random.next() % 16
            let event: Event
            switch action {
            case .waitTurn: event = roll == 0 ? inject(.error(dropped), .failed(.error(dropped))) : .turnCame
            case .route:
                if roll == 0 { event = inject(.error(lost), .failed(.error(lost))) } else {
                    routed = true
                    event = .routed(routing)
                }
            case .openStream(let part, let corked):
                #expect(part < routing.parts && !opened.contains(part), "seed \(seed): opened part \(part) again")
                #expect(corked || part == 0, "seed \(seed): only the first stream may start uncorked")
                opened.insert(part)
                if !corked { startedParts.insert(part) }
                event = roll == 0 ? inject(.error(lost), .failed(.error(lost))) : .streamOpened(part: part)
            case .readyStream(let part):
                #expect(opened.contains(part), "seed \(seed): readied part \(part) before it was opened")
                readied.insert(part)
                event = roll == 0 ? inject(.error(lost), .failed(.error(lost))) : .streamReady(part: part)
            case .startStream(let part):
                #expect(readied.contains(part) && !startedParts.contains(part), "seed \(seed): started part \(part) unready or twice")
                startedParts.insert(part)
                event = .streamStarted(part: part)
            case .rampDown:
                rampedDown = true
                event = roll == 0 ? inject(.cancelled, .stopped(.cancelled))
                    : roll == 1 ? inject(.interrupted(reason: StopRequest(drop: .interrupted, by: "r")), .stopped(.interrupted(reason: StopRequest(drop: .interrupted, by: "r"))))
                    : roll == 2 ? inject(.error(lost), .failed(.error(lost))) : .attackDone
            case .hold(let part):
                #expect(rampedDown && startedParts.contains(part), "seed \(seed): held part \(part) before it played")
                event = roll == 0 ? inject(.cancelled, .stopped(.cancelled))
                    : roll == 1 ? inject(.interrupted(reason: StopRequest(drop: .interrupted, by: "r")), .stopped(.interrupted(reason: StopRequest(drop: .interrupted, by: "r"))))
                    : roll == 2 ? inject(.error(lost), .failed(.error(lost))) : .drained(part: part)
            case .fadeOut(let part):
                #expect(startedParts.contains(part), "seed \(seed): faded part \(part), which never started")
                faded += 1
                event = .fadedOut
            case .restorePromptVolume:
                #expect(routing.relativeVolume, "seed \(seed): no relative volume to restore")
                volumeRestored = true
                event = .promptVolumeRestored
            case .checkQueue: event = .queueChecked(anotherWaits: roll % 2 == 0)
            case .handOver:
                let taken = roll % 3 != 0
                if taken { duckEnded = true }
                event = .handedOver(taken)
            case .release: event = .released
            case .finishDuck:
                duckEnded = true
                unconfirmed = roll == 0
                event = .duckFinished(confirmed: !unconfirmed)
            case .end: preconditionFailure("handled above")
            }
            action = lifecycle.handle(event)
        }
        Issue.record("seed \(seed): no end after 100 steps (last action \(action))")
    }

    @Test("The prompt's audio is over at the first step after its last part: its own volume, the queue, the handover, the release, the end")
    func audioEnds() {
        let over: [Action] = [.restorePromptVolume, .checkQueue, .handOver, .release, .finishDuck, .end(.cancelled)]
        let playing: [Action] = [.waitTurn, .route, .openStream(part: 0, corked: true), .readyStream(part: 0),
                                 .startStream(part: 0), .rampDown, .hold(part: 0), .fadeOut(part: 0)]
        #expect(over.filter { !$0.endsAudio }.isEmpty)
        #expect(playing.filter { $0.endsAudio }.isEmpty)
        // Along a played prompt's steps, the first such action comes right after the drain.
        let steps = Self.plainStart + [(Event.drained(part: 0), Action.checkQueue)]
        let first = steps.firstIndex { $0.1.endsAudio }
        #expect(first == steps.count - 1)
    }
}
