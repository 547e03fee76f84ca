/// When a prompt played now would be heard, and for how long, said without playing it (the
/// service's `Estimate` and `EstimateSay`, `play --dry-run --json`): what a navigation engine
/// needs to speak "in 200 m" at 200 m rather than guess a lead time. Every time is in µs.
/// Pure: made from the prompt's plan (`PromptPlan`), its route and its audio's length.
public struct PromptEstimate: Sendable, Equatable {
    /// The sink it would go to (`pa_sink_info.name`) and its kind.
    public var sink: String
    public var kind: DeviceKind
    /// Silence first because the sink is asleep (suspended or idle), µs; 0 when it runs
    /// (`PlayOptions.preRoll(for:)`).
    public var preRollUs: Int
    /// The duck's ramp down before the first sample, µs (`--attack-ms`); 0 when nothing is to
    /// be ducked or paused.
    public var attackUs: Int
    /// The sink's own latency, µs: `pa_sink_info.latency` while it runs, else its
    /// `configured_latency` (on PipeWire a Bluetooth sink's includes the codec's delay); the
    /// time from the sink to the listener's ear that a monitor does not show.
    public var deviceLatencyUs: Int
    /// The prompt's own length, µs (files: their headers; text: synthesized and counted).
    public var durationUs: Int
    /// The path's own time to its first sample, µs: for a held prompter (the service)
    /// `heldStartUs(keptStream:asleep:onPipeWire:)`; for the command the time this process
    /// took to get here from its exec.
    public var startUs: Int
    /// From now to the first sample of the prompt's own audio taken by the sink: `startUs` +
    /// the pre-roll or the attack, whichever is longer (the pre-roll's silence plays during the
    /// attack). Nil while a call defers it (`waitsForCall`) or when it would be dropped
    /// (`duringCall` `drop`): it would not play now.
    public var firstSampleUs: Int?
    /// From now to the first sample heard, where it leaves the sink for the device:
    /// `firstSampleUs` + `deviceLatencyUs` (what `Prompter.Timing.firstSampleUs` says once it
    /// plays).
    public var heardUs: Int? { firstSampleUs.map { $0 + deviceLatencyUs } }
    /// From now to the prompt's end at the sink: `firstSampleUs` + `durationUs`.
    public var endUs: Int? { firstSampleUs.map { $0 + durationUs } }
    /// The call state now, and what the prompt's `--during-call` makes of it: `play` (no
    /// call), `mix`, `defer`, `chime` (the earcon's length is `durationUs`), `drop`.
    public var callState: CallState
    public var duringCall: String
    /// Whether the prompt would wait for a call to end (`defer`): no first sample is known.
    public var waitsForCall: Bool { duringCall == "defer" }

    /// Before a held prompter measured its own start: what figure 9 of Docs/performance.md
    /// measured for the service's Play → first sample with nothing to duck (4 to 9 ms).
    package static let heldStartUs = 6000

    /// A held prompter's start, µs: `heldStartUs` when it keeps a stream ready for the
    /// prompt's sink and format (the last prompt's); else it makes one: 12 ms, and 30 ms on
    /// PipeWire to a sleeping (suspended or idle) sink, whose node the new stream wakes.
    /// Measured by LeadTimeIntegrationTests, Play → first sample less the pre-roll or the
    /// attack, a new stream: PipeWire to a sleeping sink 17 to 71 ms (on a shared, loaded
    /// machine), to a running one 10 to 19; PulseAudio to a running one 10 to 13; the kept
    /// stream to a sleeping sink 3 to 10 (PipeWire), 2 (PulseAudio).
    package static func heldStartUs(keptStream: Bool, asleep: Bool, onPipeWire: Bool) -> Int {
        if keptStream { return heldStartUs }
        return asleep && onPipeWire ? 30_000 : 12_000
    }

    /// - Parameters:
    ///   - plan: the prompt's plan on the route (its pre-roll, attack and whether it ducks).
    ///   - route: where it would go.
    ///   - options: its options (the attack).
    ///   - durationSeconds: its audio's length (the earcon's under `chime`).
    ///   - startUs: the path's own time to a first sample.
    ///   - call: the call state, and what the policy decided.
    package init(plan: PromptPlan, route: RouteDecision, options: PlayOptions, durationSeconds: Double, startUs: Int,
                 callState: CallState, decision: CallDecision) {
        sink = route.sink.name
        kind = route.classification.forwardsTo ?? route.classification.kind
        preRollUs = plan.preRollMs * 1000
        attackUs = plan.routing.ducks ? options.attackMs * 1000 : 0
        deviceLatencyUs = Int(clamping: route.sink.latencyUs)
        durationUs = Int((durationSeconds * 1_000_000).rounded())
        self.startUs = startUs
        firstSampleUs = decision == .wait || decision == .drop ? nil : startUs + max(preRollUs > 0 ? plan.silenceMs * 1000 : 0, attackUs)
        self.callState = callState
        duringCall = switch decision {
        case .play: "play"
        case .mix: "mix"
        case .wait: "defer"
        case .chime: "chime"
        case .drop: "drop"
        }
    }

    /// The estimate as the service's `a{sv}` and `--dry-run --json`'s keys, values in µs
    /// (`first-sample-us`, `heard-us` and `end-us` absent while a call defers the prompt).
    package var fields: [(key: String, value: EstimateValue)] {
        var all: [(String, EstimateValue)] = [
            ("sink", .text(sink)), ("kind", .text(kind.rawValue)), ("pre-roll-us", .micros(preRollUs)),
            ("attack-us", .micros(attackUs)), ("device-latency-us", .micros(deviceLatencyUs)),
            ("duration-us", .micros(durationUs)), ("start-us", .micros(startUs)),
            ("call-state", .text(callState.rawValue)), ("during-call", .text(duringCall)),
        ]
        if let firstSampleUs, let heardUs, let endUs {
            all += [("first-sample-us", .micros(firstSampleUs)), ("heard-us", .micros(heardUs)), ("end-us", .micros(endUs))]
        }
        return all.map { (key: $0.0, value: $0.1) }
    }

    /// Every key `fields` gives, in its order (the last three absent while a call defers the
    /// prompt).
    package static let keys = [
        "sink", "kind", "pre-roll-us", "attack-us", "device-latency-us", "duration-us", "start-us", "call-state",
        "during-call", "first-sample-us", "heard-us", "end-us",
    ]

    /// An estimate's fields as another answered them (the service's `a{sv}`), in `keys`' order;
    /// keys not among `keys` (a newer service's) are left out.
    package static func fields(from values: [String: EstimateValue]) -> [(key: String, value: EstimateValue)] {
        keys.compactMap { key in values[key].map { (key: key, value: $0) } }
    }

    /// A field's value: a word, or a time in µs.
    package enum EstimateValue: Sendable, Equatable {
        case text(String)
        case micros(Int)
    }
}
