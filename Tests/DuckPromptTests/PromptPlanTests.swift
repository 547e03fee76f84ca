import Foundation
import Testing
@testable import DuckPrompt
@testable import DuckPromptCore

/// What a prompt decides before it writes anything (`PromptPlan`, pure): the duck's depth, the
/// journal, the stream's properties, the pre-roll and what the lifecycle is told.
struct PromptPlanTests {
    static let stereo = ChannelVolumes([65536, 65536])

    static func music(_ index: UInt32, role: String = "music") -> SinkInput {
        SinkInput(index: index, sinkIndex: 0, name: "stream \(index)", volume: stereo, properties: ["media.role": role])
    }

    static func route(_ kind: DeviceKind, _ state: SinkState) -> RouteDecision {
        RouteDecision(sink: Sink(index: 0, name: "out", state: state),
                      classification: Classification(kind: kind, external: kind != .speaker, evidence: "test"),
                      reason: "test")
    }

    static func plan(_ options: PlayOptions = PlayOptions(), inputs: [SinkInput] = [music(7)],
                     route: RouteDecision = route(.speaker, .running), parts: Int = 1,
                     excluding: Set<UInt32> = [], pausing: Set<UInt32> = [], playersPaused: Int = 0,
                     pausesPlayer: Bool = false, handed: DuckJournal? = nil) -> PromptPlan {
        PromptPlan(options: options, inputs: inputs, route: route, parts: parts, excluding: excluding,
                   pausing: pausing, playersPaused: playersPaused, pausesPlayer: pausesPlayer,
                   handed: handed, pid: 4242, math: .libpulse)
    }

    @Test("depth: the duck mode and --duck, at most 0 dB, no deeper than a journal holds", arguments: [
        (DuckMode.duck, -20.0, -20.0),
        (.pause, -12, -12),
        (.none, -20, 0),
        (.mute, -20, -.infinity),
        (.duck, -500, -200),
        (.duck, 6, 0),
    ])
    func depth(mode: DuckMode, duck: Double, expected: Double) {
        let options = PlayOptions(duck: Decibels(duck), duckMode: mode)
        #expect(PromptPlan.depth(for: options) == expected)
        #expect(Self.plan(options).duck.depth == expected)
    }

    @Test("journaled: only when something is ducked, paused, restored or set relative", arguments: [
        // (duck mode, streams to duck, --volume, players paused, journaled)
        (DuckMode.duck, true, false, 0, true),
        (.duck, false, false, 0, true),       // a depth is a duck even with nothing to lower yet
        (.none, true, false, 0, false),
        (.none, false, true, 0, true),
        (.none, false, false, 1, true),
        (.none, false, false, 0, false),
    ])
    func journals(mode: DuckMode, streams: Bool, relative: Bool, players: Int, expected: Bool) {
        let options = PlayOptions(duckMode: mode, volume: relative ? Decibels(-6) : nil)
        let plan = Self.plan(options, inputs: streams ? [Self.music(7)] : [], playersPaused: players)
        #expect(plan.journals == expected)
    }

    @Test("a handed-over duck with streams is journaled and adopted even when this prompt does not duck")
    func handedOver() {
        var journal = DuckJournal(pid: 1, processStart: 1, depth: -20)
        journal.streams = [.init(index: 7, original: Self.stereo, key: RestoreKey(Self.music(7)))]
        journal.gain = -20
        let ducked = SinkInput(index: 7, sinkIndex: 0, name: "stream 7", volume: ChannelVolumes([30419, 30419]),
                               properties: ["media.role": "music"])
        let plan = Self.plan(PlayOptions(duckMode: .none), inputs: [ducked], route: Self.route(.bluetoothA2DP, .idle),
                             handed: journal)
        #expect(plan.journals)
        #expect(plan.duck.entries.map(\.index) == [7] && plan.duck.gain == -20)
        // The sink played the interrupted prompt a moment ago: no pre-roll.
        #expect(plan.preRollMs == 0 && plan.silenceMs == 0)
    }

    @Test("media.role: navigation unless the caller gave one; duckprompt.prompt is the pid", arguments: [
        ([:], "navigation"),
        (["media.role": "event"], "event"),
    ])
    func properties(given: [String: String], role: String) {
        let plan = Self.plan(PlayOptions(properties: given.merging(["media.name": "turn"]) { a, _ in a }))
        #expect(plan.properties == ["media.role": role, "media.name": "turn", "duckprompt.prompt": "4242"])
    }

    @Test("pre-roll: a sleeping sink's kind decides; the silence covers the attack too", arguments: [
        // (kind, state, --pre-roll-ms, attack ms, pre-roll, silence)
        (DeviceKind.bluetoothA2DP, SinkState.suspended, nil as Int?, 200, 300, 300),
        (.bluetoothA2DP, .idle, nil, 500, 300, 500),
        (.bluetoothA2DP, .running, nil, 200, 0, 0),
        (.hdmi, .suspended, nil, 200, 1000, 1000),
        (.speaker, .suspended, nil, 200, 0, 0),
        (.speaker, .suspended, 150, 200, 150, 200),
    ])
    func preRoll(kind: DeviceKind, state: SinkState, given: Int?, attackMs: Int, preRoll: Int, silence: Int) {
        var options = PlayOptions(attackMs: attackMs)
        options.preRollMs = given
        let plan = Self.plan(options, route: Self.route(kind, state))
        #expect(plan.preRollMs == preRoll && plan.silenceMs == silence)
        #expect(plan.routing.preRollMs == preRoll)
    }

    @Test("routing: parts, ducks (streams or a player to pause), busy from 32 streams, relative volume")
    func routing() {
        let many = (1...32).map { Self.music(UInt32($0)) }
        #expect(Self.plan(inputs: many, parts: 3).routing
            == PromptLifecycle.Routing(parts: 3, preRollMs: 0, ducks: true, busy: true))
        #expect(Self.plan(inputs: Array(many.prefix(31))).routing.busy == false)
        #expect(Self.plan(inputs: []).routing.ducks == false)
        #expect(Self.plan(inputs: [], pausesPlayer: true).routing.ducks)
        #expect(Self.plan(inputs: [Self.music(7, role: "phone")]).routing.ducks == false)
        #expect(Self.plan(PlayOptions(volume: Decibels(3))).routing.relativeVolume)
        // A paused player's stream is off the duck.
        #expect(Self.plan(inputs: [Self.music(7)], excluding: [7]).duck.entries.isEmpty)
    }
}

/// DuckPromptCore's copies of libpulse's constants (`VolumeLimits`) are libpulse's.
struct VolumeLimitsTests {
    @Test("PA_VOLUME_NORM, PA_VOLUME_UI_MAX, PA_CHANNELS_MAX and PA_INVALID_INDEX as libpulse has them")
    func constants() {
        #expect(VolumeLimits.norm == VolumeMath.norm)
        #expect(VolumeLimits.uiMax == VolumeMath.uiMax)
        #expect(VolumeLimits.channelsMax == VolumeMath.channelsMax)
        #expect(VolumeLimits.invalidIndex == VolumeMath.invalidIndex)
    }

    @Test("DuckPromptCore imports no C module: FoundationEssentials only")
    func coreIsPure() throws {
        let core = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Sources/DuckPromptCore").standardized
        let files = try #require(FileManager.default.enumerator(atPath: core.path)).compactMap { $0 as? String }
            .filter { $0.hasSuffix(".swift") }
        #expect(files.count > 30)
        for file in files {
            let text = try String(contentsOf: core.appendingPathComponent(file), encoding: .utf8)
            let imports = text.split(separator: "\n").filter { $0.hasPrefix("import ") || $0.contains(" import ") && $0.hasPrefix("@") }
            #expect(imports.allSatisfy { $0 == "import FoundationEssentials" }, "\(file): \(imports)")
        }
    }
}

/// When a prompt would be heard (`PromptEstimate`, pure): the pre-roll or the attack, whichever
/// is longer, after the path's own start; nothing while a call defers it.
struct PromptEstimateTests {
    @Test("first sample: start + pre-roll or attack, the longer; heard adds the device's latency", arguments: [
        // sink state, inputs to duck, decision, expected first sample µs
        (SinkState.running, false, CallDecision.play, Optional(6000)),
        (.running, true, .play, 206_000),
        (.suspended, false, .play, 306_000),   // the pre-roll's silence (300 ms; attack 200 < it)
        (.idle, true, .play, 306_000),
        (.running, true, .mix(Decibels(-10)), 206_000),
        (.running, true, .wait, nil),
    ])
    func firstSample(state: SinkState, ducks: Bool, decision: CallDecision, expected: Int?) {
        var sink = Sink(index: 0, name: "bt", state: state)
        sink.latencyUs = 40_000
        let route = RouteDecision(sink: sink, classification: Classification(kind: .bluetoothA2DP, external: true, evidence: "test"),
                                  reason: "test")
        let options = PlayOptions()
        let inputs = ducks ? [PromptPlanTests.music(7)] : []
        let plan = PromptPlan(options: options, inputs: inputs, route: route, parts: 1, excluding: [], pausing: [],
                              playersPaused: 0, pausesPlayer: false, handed: nil, call: decision, pid: 1, math: .libpulse)
        let estimate = PromptEstimate(plan: plan, route: route, options: options, durationSeconds: 1.5, startUs: 6000,
                                      callState: decision == .play ? .none : .active, decision: decision)
        #expect(estimate.firstSampleUs == expected)
        #expect(estimate.heardUs == expected.map { $0 + 40_000 })
        #expect(estimate.endUs == expected.map { $0 + 1_500_000 })
        #expect(estimate.waitsForCall == (expected == nil))
        #expect(estimate.fields.contains { $0.key == "first-sample-us" } == (expected != nil))
    }
}
