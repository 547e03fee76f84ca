import Testing
@testable import DuckPromptCore

/// Which streams are a call, what state the sources make together, and what a prompt does
/// about it (`CallStreams`, `CallStatus`, `CallDecision`, `PromptPlan` under a call): pure tables.
struct CallPolicyTests {
    static let stereo = ChannelVolumes([65536, 65536])

    static func input(_ index: UInt32, role: String?, corked: Bool = false, client: UInt32? = nil,
                      prompt: Bool = false) -> SinkInput {
        var properties = ["application.name": "app\(index)"]
        properties["media.role"] = role
        if prompt { properties["duckprompt.prompt"] = "99" }
        return SinkInput(index: index, sinkIndex: 0, volume: stereo, corked: corked, properties: properties, client: client)
    }

    static func output(_ index: UInt32, role: String?, corked: Bool = false, client: UInt32? = nil) -> SourceOutput {
        var properties: [String: String] = [:]
        properties["media.role"] = role
        return SourceOutput(index: index, client: client, corked: corked, properties: properties)
    }

    struct Streams: Sendable, CustomTestStringConvertible {
        var name: String
        var inputs: [SinkInput]
        var outputs: [SourceOutput]
        var state: CallState
        var callInputs: Set<UInt32>
        var testDescription: String { name }
    }

    static let streams: [Streams] = [
        Streams(name: "music only", inputs: [input(1, role: "music")], outputs: [], state: .none, callInputs: []),
        Streams(name: "a phone stream playing", inputs: [input(1, role: "music"), input(2, role: "phone")], outputs: [],
                state: .active, callInputs: [2]),
        Streams(name: "PipeWire's name, any case", inputs: [input(2, role: "Communication")], outputs: [],
                state: .active, callInputs: [2]),
        Streams(name: "a corked phone stream is no call, but still a call's stream",
                inputs: [input(2, role: "phone", corked: true)], outputs: [], state: .none, callInputs: [2]),
        Streams(name: "a phone app recording only", inputs: [], outputs: [output(5, role: "phone")],
                state: .active, callInputs: []),
        Streams(name: "a VoIP app that tags only its microphone: its playback is the call's",
                inputs: [input(3, role: nil, client: 40), input(4, role: "music", client: 41)],
                outputs: [output(5, role: "communication", client: 40)], state: .active, callInputs: [3]),
        Streams(name: "a recorder without a role is no call", inputs: [input(3, role: nil, client: 40)],
                outputs: [output(5, role: nil, client: 40)], state: .none, callInputs: []),
        Streams(name: "a prompt given media.role=phone is not a call", inputs: [input(9, role: "phone", prompt: true)],
                outputs: [], state: .none, callInputs: []),
    ]

    @Test("CallStreams: which streams are a call, and its state", arguments: streams)
    func callStreams(_ row: Streams) {
        let found = CallStreams.find(sinkInputs: row.inputs, sourceOutputs: row.outputs)
        #expect(CallStatus(readings: found.readings).state == row.state)
        #expect(found.sinkInputs == row.callInputs)
    }

    @Test("a reading names its stream, application and role")
    func detail() {
        let found = CallStreams.find(sinkInputs: [Self.input(12, role: "phone")], sourceOutputs: [])
        #expect(found.readings == [CallReading(source: .stream, state: .active, detail: "sink-input 12 (app12, media.role=phone)")])
    }

    @Test("CallStatus: the highest state of every source wins; none without calls", arguments: [
        ([CallState](), CallState.none),
        ([.held], .held),
        ([.held, .ringing], .ringing),
        ([.ringing, .active, .held], .active),
        ([.none, .none], .none),
    ])
    func combined(states: [CallState], expected: CallState) {
        let status = CallStatus(readings: states.enumerated().map {
            CallReading(source: .modemManager, state: $0.element, detail: "/call/\($0.offset)")
        })
        #expect(status.state == expected)
        #expect(status.cause?.state == (states.isEmpty ? nil : expected))
    }

    @Test("CallDecision: the policy applies while a call rings or is on, not when none or held", arguments: [
        (DuringCallPolicy.mix, CallState.active, CallDecision.mix(Decibels(-10))),
        (.mix, .ringing, .mix(Decibels(-10))),
        (.mix, .held, .play),
        (.mix, .none, .play),
        (.defer, .active, .wait),
        (.defer, .held, .play),
        (.chime, .ringing, .chime),
        (.chime, .none, .play),
        (.drop, .active, .drop),
        (.drop, .held, .play),
    ])
    func decide(policy: DuringCallPolicy, state: CallState, expected: CallDecision) {
        #expect(CallDecision.decide(policy, state: state, callDuck: Decibels(-10)) == expected)
    }

    @Test("what the report and PromptFinished say", arguments: [
        (CallDecision.mix(Decibels(-10)), "played under a call at -10 dB"),
        (.mix(Decibels(-6.5)), "played under a call at -6.5 dB"),
        (.chime, "chime instead of speech during a call"),
    ])
    func note(decision: CallDecision, expected: String) {
        #expect(decision.note == expected)
    }

    @Test("a deferred prompt says how long it waited, to a tenth of a second")
    func deferred() {
        #expect(CallDecision.deferredNote(seconds: 12.34) == "deferred 12.3 s for a call")
        #expect(CallDecision.deferredNote(seconds: 2) == "deferred 2 s for a call")
        #expect(CallDecision.play.note == nil && CallDecision.wait.note == nil && CallDecision.drop.note == nil)
    }

    static func plan(_ options: PlayOptions, call: CallDecision, inputs: [SinkInput], callStreams: Set<UInt32>) -> PromptPlan {
        let route = RouteDecision(sink: Sink(index: 0, name: "out", state: .running),
                                  classification: Classification(kind: .speaker, external: false, evidence: "test"),
                                  reason: "test")
        return PromptPlan(options: options, inputs: inputs, route: route, parts: 1, excluding: [], pausing: [],
                          playersPaused: 0, pausesPlayer: false, handed: nil, call: call, callStreams: callStreams,
                          pid: 4242, math: .libpulse)
    }

    @Test("under mix the prompt's own volume is --volume plus --call-duck, set and journaled")
    func mixGain() {
        let inputs = [Self.input(1, role: "music"), Self.input(2, role: "phone")]
        let plain = Self.plan(PlayOptions(), call: .play, inputs: inputs, callStreams: [2])
        #expect(plain.promptGain == nil && !plain.routing.relativeVolume)
        let under = Self.plan(PlayOptions(), call: .mix(Decibels(-10)), inputs: inputs, callStreams: [2])
        #expect(under.promptGain == Decibels(-10) && under.routing.relativeVolume && under.journals)
        let both = Self.plan(PlayOptions(volume: Decibels(-3)), call: .mix(Decibels(-10)), inputs: inputs, callStreams: [2])
        #expect(both.promptGain == Decibels(-13))
    }

    @Test("a call's streams are never ducked, whatever --duck-exempt-role says")
    func callNeverDucked() {
        let inputs = [Self.input(1, role: "music"), Self.input(2, role: "phone"), Self.input(3, role: nil, client: 40)]
        let options = PlayOptions(exemptRoles: ["event"])
        let plan = Self.plan(options, call: .mix(Decibels(-10)), inputs: inputs, callStreams: [2, 3])
        #expect(plan.duck.entries.map(\.index) == [1])
    }

    @Test("devices --watch: a call state change is reported with what causes it")
    func change() {
        let snapshot = Snapshot(sinks: [Sink(index: 0, name: "out", state: .running)], sinkInputs: [Self.input(1, role: "music")])
        let before = DeviceListing(snapshot: snapshot)
        var calling = snapshot
        calling.sinkInputs.append(Self.input(2, role: "phone"))
        let during = DeviceListing(snapshot: calling)
        let ringing = DeviceListing(snapshot: snapshot, busCalls: [CallReading(source: .gnomeCalls, state: .ringing,
                                                                               detail: "/org/gnome/Calls/Call/1")])
        #expect(DeviceChange.between(before, during) == [.callStateChanged(from: .none, to: .active,
                                                                            cause: "sink-input 2 (app2, media.role=phone)")])
        #expect(DeviceChange.between(during, before) == [.callStateChanged(from: .active, to: .none, cause: nil)])
        #expect(DeviceChange.between(before, ringing).map(\.summary) == ["call none -> ringing (/org/gnome/Calls/Call/1)"])
        #expect(DeviceChange.between(before, before).isEmpty)
    }
}

/// The sink that takes over when a prompt's sink goes mid-prompt (`SinkSuccessor`).
struct SinkSuccessorTests {
    static func sink(_ name: String, _ properties: [String: String] = [:]) -> Sink {
        Sink(index: 0, name: name, state: .running, properties: properties)
    }

    @Test("the same Bluetooth address, however it is written, is the successor; another device is not", arguments: [
        // PipeWire: api.bluez5.address.
        ("bluez_output.AA_BB_CC_DD_EE_FF.1", ["api.bluez5.address": "AA:BB:CC:DD:EE:FF"],
         [("bluez_output.AA_BB_CC_DD_EE_FF.headset-head-unit", ["api.bluez5.address": "AA:BB:CC:DD:EE:FF"])], Optional("bluez_output.AA_BB_CC_DD_EE_FF.headset-head-unit")),
        // PulseAudio: device.string of a bluez sink, and the name.
        ("bluez_sink.aa:bb:cc:dd:ee:ff.a2dp_sink", ["device.api": "bluez", "device.string": "aa:bb:cc:dd:ee:ff"],
         [("alsa_output.pci.analog-stereo", [:]), ("bluez_sink.AA:BB:CC:DD:EE:FF.handsfree_head_unit", [:])],
         "bluez_sink.AA:BB:CC:DD:EE:FF.handsfree_head_unit"),
        // Another headset.
        ("bluez_output.AA_BB_CC_DD_EE_FF.1", [:], [("bluez_output.11_22_33_44_55_66.1", [:])], nil),
        // Not a Bluetooth sink: no successor, even a sink of the same card.
        ("alsa_output.usb-dac.analog-stereo", ["device.string": "front:2"], [("alsa_output.usb-dac.iec958-stereo", ["device.string": "front:2"])], nil),
    ] as [(String, [String: String], [(String, [String: String])], String?)])
    func successor(gone: String, properties: [String: String], sinks: [(String, [String: String])], expected: String?) {
        let found = SinkSuccessor.successor(of: Self.sink(gone, properties), among: sinks.map { Self.sink($0.0, $0.1) })
        #expect(found?.name == expected)
    }
}
