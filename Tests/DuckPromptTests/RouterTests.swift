import Testing
@testable import DuckPrompt
@testable import DuckPromptCore

@Suite("Router")
struct RouterTests {
    // MARK: Sinks to build snapshots from

    static let speaker = Sink(
        index: 0, name: "alsa_output.pci-0000_00_1f.3.analog-stereo", description: "Built-in Audio Analog Stereo",
        driver: "module-alsa-card.c",
        ports: [Port(name: "analog-output-speaker", type: .speaker, priority: 10000, availability: .unknown),
                Port(name: "analog-output-headphones", type: .headphones, priority: 9900, availability: .no)],
        activePortName: "analog-output-speaker",
        properties: ["device.api": "alsa", "device.bus": "pci", "device.form_factor": "internal"])

    static var headphonesActive: Sink {
        var sink = speaker
        sink.ports = [Port(name: "analog-output-speaker", type: .speaker, priority: 10000, availability: .no),
                      Port(name: "analog-output-headphones", type: .headphones, priority: 9900, availability: .yes)]
        sink.activePortName = "analog-output-headphones"
        return sink
    }

    static let bluetooth = Sink(
        index: 5, name: "bluez_output.00_11_22_33_44_55.1", description: "WH-1000XM5", driver: "PipeWire",
        ports: [Port(name: "headset-output", type: .headset, availability: .yes)],
        activePortName: "headset-output",
        properties: ["device.api": "bluez5", "device.bus": "bluetooth", "device.form_factor": "headset",
                     "api.bluez5.profile": "a2dp-sink"])

    static let hdmi = Sink(
        index: 2, name: "alsa_output.pci-0000_01_00.1.hdmi-stereo", description: "GF114 HDMI",
        driver: "module-alsa-card.c",
        ports: [Port(name: "hdmi-output-0", type: .hdmi, priority: 5900, availability: .yes)],
        activePortName: "hdmi-output-0",
        properties: ["device.api": "alsa", "device.bus": "pci"])

    static var hdmiUnplugged: Sink {
        var sink = hdmi
        sink.index = 4
        sink.name = "alsa_output.pci-0000_01_00.1.hdmi-stereo-extra1"
        sink.ports = [Port(name: "hdmi-output-1", type: .hdmi, priority: 5800, availability: .no)]
        sink.activePortName = "hdmi-output-1"
        return sink
    }

    static let usbHeadset = Sink(
        index: 7, name: "alsa_output.usb-Logitech_G435-00.analog-stereo", description: "G435 Analog Stereo",
        driver: "module-alsa-card.c",
        ports: [Port(name: "analog-output", type: .analog, availability: .unknown)],
        activePortName: "analog-output",
        properties: ["device.api": "alsa", "device.bus": "usb"])

    static let lineOut = Sink(
        index: 3, name: "alsa_output.pci-0000_00_14.2.analog-stereo", description: "Line Out",
        driver: "module-alsa-card.c",
        ports: [Port(name: "analog-output-lineout", type: .line, availability: .yes)],
        activePortName: "analog-output-lineout",
        properties: ["device.api": "alsa", "device.bus": "pci"])

    static func virtual(_ index: UInt32, _ name: String) -> Sink {
        Sink(index: index, name: name, description: name, driver: "module-null-sink.c",
             properties: ["device.class": "abstract"])
    }

    static let tunnel = Sink(index: 9, name: "tunnel.pi.local.alsa_output", description: "Speakers on pi",
                             driver: "module-tunnel.c", properties: ["tunnel.remote.server": "pi.local"])

    static func playing(on sink: Sink, corked: Bool = false) -> SinkInput {
        SinkInput(index: 100 + (sink.index ?? 0), sinkIndex: sink.index ?? 0, name: "music", corked: corked)
    }

    /// EasyEffects as PipeWire shows it: its null sink, and its output stream playing on a device.
    static let easyEffects = Sink(
        index: 94, name: "easyeffects_sink", description: "Easy Effects Sink", driver: "PipeWire",
        properties: ["application.id": "com.github.wwmm.easyeffects", "node.virtual": "true",
                     "node.passive": "out", "factory.name": "support.null-audio-sink", "media.class": "Audio/Sink"])

    static func easyEffectsOutput(to sink: Sink) -> SinkInput {
        SinkInput(index: 115, sinkIndex: sink.index ?? 0, name: "easyeffects_soe",
                  properties: ["application.id": "com.github.wwmm.easyeffects", "media.name": "easyeffects_soe",
                               "target.object": sink.name])
    }

    // MARK: Automatic routing table

    struct Case: Sendable, CustomTestStringConvertible {
        var label: String
        var snapshot: Snapshot
        var config = DuckPromptConfig()
        var expected: String
        var rule: String
        var reasonContains: String
        var testDescription: String { label }
    }

    static let cases: [Case] = [
        // Bluetooth + speaker
        Case(label: "Bluetooth + speaker → Bluetooth (not default)",
             snapshot: Snapshot(sinks: [speaker, bluetooth], defaultSinkName: speaker.name),
             expected: bluetooth.name, rule: "external-rank", reasonContains: "preferred connected external output"),
        // Why the default did not decide, said as it is.
        Case(label: "Bluetooth + speaker, the default the speaker → the default is no external output",
             snapshot: Snapshot(sinks: [speaker, bluetooth], defaultSinkName: speaker.name),
             expected: bluetooth.name, rule: "external-rank", reasonContains: "; the default sink is not one."),
        Case(label: "Bluetooth + speaker, no default named → no default sink is known",
             snapshot: Snapshot(sinks: [speaker, bluetooth], defaultSinkName: nil),
             expected: bluetooth.name, rule: "external-rank", reasonContains: "; no default sink is known."),
        Case(label: "Bluetooth + speaker, the default named is neither (a cut dump) → not among the sinks read",
             snapshot: Snapshot(sinks: [speaker, bluetooth], defaultSinkName: "alsa_output.gone"),
             expected: bluetooth.name, rule: "external-rank",
             reasonContains: "; the default sink 'alsa_output.gone' is not among the sinks read."),
        Case(label: "Bluetooth default + speaker → Bluetooth (default sink)",
             snapshot: Snapshot(sinks: [speaker, bluetooth], defaultSinkName: bluetooth.name),
             expected: bluetooth.name, rule: "default-external", reasonContains: "(default sink)"),
        // HDMI monitor + speaker
        Case(label: "HDMI monitor + speaker, HDMI idle and not default → speaker",
             snapshot: Snapshot(sinks: [speaker, hdmi], defaultSinkName: speaker.name),
             expected: speaker.name, rule: "default-device",
             reasonContains: "is the default sink and no external output is in use"),
        Case(label: "HDMI default + speaker → HDMI",
             snapshot: Snapshot(sinks: [speaker, hdmi], defaultSinkName: hdmi.name),
             expected: hdmi.name, rule: "default-external", reasonContains: "(default sink)"),
        Case(label: "HDMI playing + speaker default → HDMI",
             snapshot: Snapshot(sinks: [speaker, hdmi], sinkInputs: [playing(on: hdmi)],
                                defaultSinkName: speaker.name),
             expected: hdmi.name, rule: "playing-external", reasonContains: "playing a stream"),
        Case(label: "HDMI with a corked stream only + speaker default → speaker",
             snapshot: Snapshot(sinks: [speaker, hdmi], sinkInputs: [playing(on: hdmi, corked: true)],
                                defaultSinkName: speaker.name),
             expected: speaker.name, rule: "default-device", reasonContains: "default sink"),
        Case(label: "HDMI monitor + speaker, no default → speaker, not the idle HDMI",
             snapshot: Snapshot(sinks: [hdmi, speaker]),
             expected: speaker.name, rule: "speaker", reasonContains: "no default sink is known"),
        // Wired headphones on the built-in card
        Case(label: "headphones active on the built-in card → headphones",
             snapshot: Snapshot(sinks: [headphonesActive, hdmi], defaultSinkName: headphonesActive.name),
             expected: headphonesActive.name, rule: "default-external",
             reasonContains: "Headphones 'Built-in Audio Analog Stereo'"),
        Case(label: "headphones active on the built-in card, a null sink default → headphones, not a speaker",
             snapshot: Snapshot(sinks: [virtual(1, "null"), headphonesActive], defaultSinkName: "null"),
             expected: headphonesActive.name, rule: "external-rank", reasonContains: "Headphones"),
        // USB headset default + Bluetooth connected
        Case(label: "USB headset default + Bluetooth connected → USB (default)",
             snapshot: Snapshot(sinks: [speaker, bluetooth, usbHeadset], defaultSinkName: usbHeadset.name),
             expected: usbHeadset.name, rule: "default-external", reasonContains: "(default sink)"),
        Case(label: "Bluetooth playing, not default, vs. line-out default-less → Bluetooth",
             snapshot: Snapshot(sinks: [lineOut, bluetooth], sinkInputs: [playing(on: bluetooth)],
                                defaultSinkName: speaker.name),
             expected: bluetooth.name, rule: "playing-external", reasonContains: "playing a stream"),
        Case(label: "line-out playing beats Bluetooth by rank when neither is default",
             snapshot: Snapshot(sinks: [bluetooth, lineOut, speaker], sinkInputs: [playing(on: lineOut)],
                                defaultSinkName: speaker.name),
             expected: lineOut.name, rule: "playing-external", reasonContains: "playing a stream"),
        Case(label: "rank: headphones beat USB and line-out when none is default or playing",
             snapshot: Snapshot(sinks: [usbHeadset, lineOut, headphonesActive]),
             expected: headphonesActive.name, rule: "external-rank", reasonContains: "preferred connected external output"),
        // Only virtual sinks
        Case(label: "only one virtual sink → it",
             snapshot: Snapshot(sinks: [virtual(0, "auto_null")]),
             expected: "auto_null", rule: "only-sink", reasonContains: "is the only sink"),
        Case(label: "several virtual sinks → the default one",
             snapshot: Snapshot(sinks: [virtual(0, "a"), virtual(1, "b")], defaultSinkName: "b"),
             expected: "b", rule: "default-virtual", reasonContains: "default sink and the server has no output device"),
        Case(label: "speaker + bare null sink as default → speaker",
             snapshot: Snapshot(sinks: [virtual(0, "null"), speaker], defaultSinkName: "null"),
             expected: speaker.name, rule: "speaker", reasonContains: "the default sink is not a device"),
        Case(label: "speaker + network tunnel default → speaker",
             snapshot: Snapshot(sinks: [tunnel, speaker], defaultSinkName: tunnel.name),
             expected: speaker.name, rule: "speaker", reasonContains: "Built-in speaker"),
        Case(label: "only a tunnel and a null sink, no default → the tunnel",
             snapshot: Snapshot(sinks: [virtual(0, "null"), tunnel]),
             expected: tunnel.name, rule: "network", reasonContains: "Network sink"),
        Case(label: "HDMI idle, not default, no speaker: an unknown device wins over it",
             snapshot: Snapshot(sinks: [hdmi, Sink(index: 4, name: "generic", driver: "module-alsa-card.c",
                                                  properties: ["device.api": "alsa"])],
                                defaultSinkName: "null"),
             expected: "generic", rule: "unknown-device", reasonContains: "no external output or built-in speaker"),
        Case(label: "HDMI idle with a null default and nothing else: the HDMI device",
             snapshot: Snapshot(sinks: [virtual(0, "null"), hdmi], defaultSinkName: "null"),
             expected: hdmi.name, rule: "other-device", reasonContains: "only device left"),
        Case(label: "ties among equal external outputs go to the lowest index",
             snapshot: Snapshot(sinks: [{ var b = bluetooth; b.index = 8; b.name = "bt8"; return b }(),
                                        { var b = bluetooth; b.index = 6; b.name = "bt6"; return b }()]),
             expected: "bt6", rule: "external-rank", reasonContains: "Bluetooth A2DP headset"),
        // EasyEffects and other filters in front of a device
        Case(label: "EasyEffects default forwarding to Bluetooth → through EasyEffects",
             snapshot: Snapshot(sinks: [speaker, bluetooth, easyEffects],
                                sinkInputs: [easyEffectsOutput(to: bluetooth)], defaultSinkName: easyEffects.name),
             expected: easyEffects.name, rule: "default-forwarding",
             reasonContains: "Virtual sink 'Easy Effects Sink' is the default sink and forwards to Bluetooth A2DP headset "
                + "'WH-1000XM5': the prompt goes through it, keeping the user's effects."),
        Case(label: "EasyEffects default forwarding to the speaker → through EasyEffects",
             snapshot: Snapshot(sinks: [speaker, easyEffects],
                                sinkInputs: [easyEffectsOutput(to: speaker)], defaultSinkName: easyEffects.name),
             expected: easyEffects.name, rule: "default-forwarding", reasonContains: "forwards to Built-in speaker"),
        Case(label: "EasyEffects default forwarding to the speaker, Bluetooth connected → Bluetooth",
             snapshot: Snapshot(sinks: [speaker, bluetooth, easyEffects],
                                sinkInputs: [easyEffectsOutput(to: speaker)], defaultSinkName: easyEffects.name),
             expected: bluetooth.name, rule: "external-rank", reasonContains: "preferred connected external output"),
        Case(label: "EasyEffects forwarding to Bluetooth but not the default → Bluetooth itself",
             snapshot: Snapshot(sinks: [speaker, bluetooth, easyEffects],
                                sinkInputs: [easyEffectsOutput(to: bluetooth)], defaultSinkName: bluetooth.name),
             expected: bluetooth.name, rule: "default-external", reasonContains: "(default sink)"),
        Case(label: "a remap sink of the Bluetooth sink, not default, speaker default → Bluetooth, never the remap",
             snapshot: Snapshot(sinks: [speaker, bluetooth,
                                        Sink(index: 12, name: "remap", driver: "module-remap-sink.c",
                                             properties: ["device.class": "filter",
                                                          "device.master_device": bluetooth.name])],
                                defaultSinkName: speaker.name),
             expected: bluetooth.name, rule: "external-rank", reasonContains: "Bluetooth A2DP headset"),
        Case(label: "a filter default in front of an idle HDMI monitor → through the filter (HDMI counts as default)",
             snapshot: Snapshot(sinks: [speaker, hdmi,
                                        Sink(index: 12, name: "eq", driver: "module-ladspa-sink.c",
                                             properties: ["device.class": "filter", "device.master_device": hdmi.name])],
                                defaultSinkName: "eq"),
             expected: "eq", rule: "default-forwarding", reasonContains: "forwards to HDMI/DisplayPort output 'GF114 HDMI'"),
        // Config
        Case(label: "config prefer matches a description → that device over the default",
             snapshot: Snapshot(sinks: [speaker, bluetooth, usbHeadset], defaultSinkName: bluetooth.name),
             config: DuckPromptConfig(prefer: ["G435*"], path: "/home/u/.config/duckprompt/config.json"),
             expected: usbHeadset.name, rule: "config-prefer",
             reasonContains: "matches config prefer \"G435*\" (/home/u/.config/duckprompt/config.json)."),
        Case(label: "config prefer: the first pattern that matches a usable sink wins, by name",
             snapshot: Snapshot(sinks: [speaker, bluetooth, usbHeadset, headphonesActive]),
             config: DuckPromptConfig(prefer: ["WH-2000*", "alsa_output.pci-*", "alsa_output.usb-*"]),
             expected: speaker.name, rule: "config-prefer", reasonContains: "alsa_output.pci-*"),
        Case(label: "config prefer skips a sink whose port is unplugged",
             snapshot: Snapshot(sinks: [speaker, hdmiUnplugged, bluetooth], defaultSinkName: speaker.name),
             config: DuckPromptConfig(prefer: ["*HDMI*", "WH-*"]),
             expected: bluetooth.name, rule: "config-prefer", reasonContains: "\"WH-*\""),
        Case(label: "config prefer matching nothing → the rules decide",
             snapshot: Snapshot(sinks: [speaker, bluetooth], defaultSinkName: speaker.name),
             config: DuckPromptConfig(prefer: ["nothing-like-this*"]),
             expected: bluetooth.name, rule: "external-rank", reasonContains: "preferred connected external output"),
        Case(label: "DUCKPROMPT_DEVICE overrides config prefer",
             snapshot: Snapshot(sinks: [speaker, bluetooth, usbHeadset], defaultSinkName: bluetooth.name),
             config: try! DuckPromptConfig.load(environment: ["DUCKPROMPT_DEVICE": "alsa_output.usb-*",
                                                              "XDG_CONFIG_HOME": "/nonexistent-duckprompt-test"]),
             expected: usbHeadset.name, rule: "env-DUCKPROMPT_DEVICE",
             reasonContains: "matches DUCKPROMPT_DEVICE \"alsa_output.usb-*\"."),
        Case(label: "config never hdmi: HDMI default + speaker → speaker, saying the default is excluded",
             snapshot: Snapshot(sinks: [speaker, hdmi], defaultSinkName: hdmi.name),
             config: DuckPromptConfig(never: [.kind(.hdmi)]),
             expected: speaker.name, rule: "speaker",
             reasonContains: "the default sink is excluded by config never \"hdmi\""),
        Case(label: "config never hdmi: HDMI playing + speaker → speaker",
             snapshot: Snapshot(sinks: [speaker, hdmi], sinkInputs: [playing(on: hdmi)], defaultSinkName: speaker.name),
             config: DuckPromptConfig(never: [.kind(.hdmi)]),
             expected: speaker.name, rule: "default-device", reasonContains: "default sink"),
        Case(label: "config never by name pattern: Bluetooth excluded → USB",
             snapshot: Snapshot(sinks: [speaker, bluetooth, usbHeadset], defaultSinkName: bluetooth.name),
             config: DuckPromptConfig(never: [.pattern("bluez_output.*")]),
             expected: usbHeadset.name, rule: "external-rank", reasonContains: "USB audio device"),
        Case(label: "config never hdmi also excludes a filter in front of HDMI",
             snapshot: Snapshot(sinks: [speaker, hdmi,
                                        Sink(index: 12, name: "eq", driver: "module-ladspa-sink.c",
                                             properties: ["device.class": "filter", "device.master_device": hdmi.name])],
                                defaultSinkName: "eq"),
             config: DuckPromptConfig(never: [.kind(.hdmi)]),
             expected: speaker.name, rule: "speaker", reasonContains: "excluded by config never \"hdmi\""),
        Case(label: "config ranking: USB before Bluetooth when neither is default or playing",
             snapshot: Snapshot(sinks: [speaker, bluetooth, usbHeadset], defaultSinkName: speaker.name),
             config: DuckPromptConfig(ranking: [.usb, .bluetoothA2DP]),
             expected: usbHeadset.name, rule: "external-rank", reasonContains: "by the config ranking"),
        Case(label: "config ranking does not override the default sink",
             snapshot: Snapshot(sinks: [speaker, bluetooth, usbHeadset], defaultSinkName: bluetooth.name),
             config: DuckPromptConfig(ranking: [.usb, .bluetoothA2DP]),
             expected: bluetooth.name, rule: "default-external", reasonContains: "(default sink)"),
    ]

    @Test("automatic routing", arguments: cases)
    func automatic(_ test: Case) throws {
        let decision = try Router.route(test.snapshot, request: nil, config: test.config)
        #expect(decision.sink.name == test.expected, "reason: \(decision.reason)")
        #expect(decision.rule == test.rule, "reason: \(decision.reason)")
        #expect(decision.reason.contains(test.reasonContains), "reason: \(decision.reason)")
        let index = try #require(test.snapshot.sinks.firstIndex { $0.name == decision.sink.name })
        #expect(decision.classification == Classifier.classify(test.snapshot, ranking: test.config.ranking)[index])
        #expect(decision.reason.hasSuffix("."))
        #expect(decision.reason.filter { $0 == "\n" }.isEmpty)
        // A listing routes exactly as the router does.
        let listing = DeviceListing(snapshot: test.snapshot, config: test.config)
        #expect(listing.route == decision)
    }

    @Test("EasyEffects default forwarding to Bluetooth: the classification says where it forwards")
    func easyEffectsClassification() throws {
        let snapshot = Snapshot(sinks: [Self.speaker, Self.bluetooth, Self.easyEffects],
                                sinkInputs: [Self.easyEffectsOutput(to: Self.bluetooth)],
                                defaultSinkName: Self.easyEffects.name)
        let decision = try Router.route(snapshot, request: nil)
        #expect(decision.classification.kind == .virtual)
        #expect(decision.classification.forwardsTo == .bluetoothA2DP)
        #expect(decision.classification.forwardsToSink == Self.bluetooth.name)
    }

    @Test("config never excluding every sink throws .unavailable naming the entries; -d still works")
    func neverEverything() throws {
        let snapshot = Snapshot(sinks: [Self.hdmi, Self.bluetooth], defaultSinkName: Self.hdmi.name)
        let config = DuckPromptConfig(never: [.kind(.hdmi), .pattern("bluez_output.*")])
        let error = #expect(throws: DuckPromptError.self) { try Router.route(snapshot, request: nil, config: config) }
        #expect(error?.code == .unavailable)
        #expect(error?.message == "every sink is excluded by config never (\"hdmi\", \"bluez_output.*\"); name one with -d/--device")
        let named = try Router.route(snapshot, request: .name(Self.hdmi.name), config: config)
        #expect(named.sink.name == Self.hdmi.name)
        #expect(named.rule == "device-option")
    }

    @Test("an explicit request wins over config prefer")
    func explicitBeatsPrefer() throws {
        let snapshot = Snapshot(sinks: [Self.speaker, Self.bluetooth])
        let decision = try Router.route(snapshot, request: .name(Self.speaker.name),
                                        config: DuckPromptConfig(prefer: ["WH-*"]))
        #expect(decision.sink.name == Self.speaker.name)
        #expect(decision.rule == "device-option")
    }

    @Test("the reason names the description, kind and why")
    func reasonSentence() throws {
        let decision = try Router.route(Snapshot(sinks: [Self.speaker, Self.bluetooth], defaultSinkName: Self.bluetooth.name),
                                        request: nil)
        #expect(decision.reason == "Bluetooth A2DP headset 'WH-1000XM5' is the external output in use (default sink).")
        #expect(decision.classification.kind == .bluetoothA2DP)
        #expect(decision.classification.external)
    }

    // MARK: Explicit requests

    @Test("DeviceRequest parsing", arguments: [
        ("#3", DeviceRequest.index(3)),
        ("@DEFAULT_SINK@", .defaultSink),
        (" @DEFAULT_SINK@ ", .defaultSink),
        ("alsa_output.pci-0000_00_1f.3.analog-stereo", .name("alsa_output.pci-0000_00_1f.3.analog-stereo")),
        ("#x", .name("#x")),
        ("3", .name("3")),
    ])
    func parsing(text: String, expected: DeviceRequest) {
        #expect(DeviceRequest(parsing: text) == expected)
    }

    @Test("an explicit request wins over the policy")
    func explicitWins() throws {
        let snapshot = Snapshot(sinks: [Self.speaker, Self.bluetooth, Self.virtual(4, "null")], defaultSinkName: "null")
        let byName = try Router.route(snapshot, request: .name(Self.speaker.name))
        #expect(byName.sink.name == Self.speaker.name)
        #expect(byName.reason.contains("requested by name"))
        let byIndex = try Router.route(snapshot, request: DeviceRequest(parsing: "#4"))
        #expect(byIndex.sink.name == "null")
        #expect(byIndex.classification.kind == .virtual)
        #expect(byIndex.reason.contains("#4"))
        let byDefault = try Router.route(snapshot, request: .defaultSink)
        #expect(byDefault.sink.name == "null")
        #expect(byDefault.reason.contains("@DEFAULT_SINK@"))
        let byNumber = try Router.route(snapshot, request: DeviceRequest(parsing: "5"))
        #expect(byNumber.sink.name == Self.bluetooth.name, "a bare number falls back to the index, as pa_namereg_get")
    }

    @Test("unknown requests throw .unavailable", arguments: [
        (DeviceRequest.name("nope"), "no sink named 'nope'"),
        (.index(99), "no sink with index #99"),
        (.defaultSink, "@DEFAULT_SINK@ was requested but the server names no default sink"),
    ])
    func unknownRequest(request: DeviceRequest, message: String) {
        let snapshot = Snapshot(sinks: [Self.speaker, Self.bluetooth])
        let error = #expect(throws: DuckPromptError.self) { try Router.route(snapshot, request: request) }
        #expect(error?.code == .unavailable)
        #expect(error?.message == message)
    }

    @Test("pipewire-pulse's literal @DEFAULT_SINK@ default means no default")
    func literalDefaultName() throws {
        let snapshot = Snapshot(sinks: [Self.virtual(0, "a"), Self.speaker], defaultSinkName: "@DEFAULT_SINK@")
        let decision = try Router.route(snapshot, request: nil)
        #expect(decision.sink.name == Self.speaker.name)
        #expect(decision.reason.contains("no default sink is known"))
        let error = #expect(throws: DuckPromptError.self) { try Router.route(snapshot, request: .defaultSink) }
        #expect(error?.code == .unavailable)
    }

    @Test("no sinks throws .unavailable, with or without a request", arguments: [nil, DeviceRequest.name("x")])
    func noSinks(request: DeviceRequest?) {
        let error = #expect(throws: DuckPromptError.self) {
            try Router.route(Snapshot(sinks: []), request: request)
        }
        #expect(error?.code == .unavailable)
        #expect(error?.message == "the server has no sinks")
    }

    @Test("several virtual sinks and no default throws .unavailable")
    func severalVirtualNoDefault() {
        let error = #expect(throws: DuckPromptError.self) {
            try Router.route(Snapshot(sinks: [Self.virtual(0, "a"), Self.virtual(1, "b")]), request: nil)
        }
        #expect(error?.code == .unavailable)
    }

    @Test("routing the fixture dumps: one sink each is routed to itself", arguments: try ExpectedRow.all())
    func fixtureRoutes(row: ExpectedRow) throws {
        let sinks = try SinkFixture.sinks("sinks/\(row.file)")
        let decision = try Router.route(Snapshot(sinks: sinks), request: nil)
        #expect(decision.sink == sinks[0])
        #expect(decision.classification.kind.rawValue == row.kind)
    }
}
