import Testing
@testable import DuckPrompt
@testable import DuckPromptCore

@Suite("Classifier: forwarding virtual sinks")
struct ForwardingTests {
    struct Expected: Sendable, CustomTestStringConvertible {
        var sink: String
        var forwardsTo: DeviceKind?
        var forwardsToSink: String?
        var via: String?
        var testDescription: String { sink }
    }

    static func forwarding(_ snapshot: Snapshot, ranking: [DeviceKind] = DuckPromptConfig.defaultRanking)
        -> [String: Classification] {
        Dictionary(zip(snapshot.sinks.map(\.name), Classifier.classify(snapshot, ranking: ranking)),
                   uniquingKeysWith: { a, _ in a })
    }

    // MARK: Captures

    @Test("PipeWire capture: remap, combine, EasyEffects and a filter-chain pair all forward to the Bluetooth sink",
          arguments: [
              Expected(sink: "speaker", forwardsTo: nil, forwardsToSink: nil),
              Expected(sink: "bt_headset", forwardsTo: nil, forwardsToSink: nil),
              Expected(sink: "remap_bt", forwardsTo: .bluetoothA2DP, forwardsToSink: "bt_headset",
                       via: "of its module 536870915"),
              Expected(sink: "combined", forwardsTo: .bluetoothA2DP, forwardsToSink: "bt_headset",
                       via: "of its module 536870916"),
              Expected(sink: "easyeffects_sink", forwardsTo: .bluetoothA2DP, forwardsToSink: "bt_headset",
                       via: "'easyeffects_soe' of its application.id=com.github.wwmm.easyeffects"),
              Expected(sink: "effects_sink", forwardsTo: .bluetoothA2DP, forwardsToSink: "bt_headset",
                       via: "in its node.link-group=loopback-"),
          ])
    func pipewireCapture(_ expected: Expected) throws {
        let snapshot = try SinkDumpReader.readSnapshot(SinkFixture.text("pw-dump/pw0365-emulated-filters.json"))
        let classification = try #require(Self.forwarding(snapshot)[expected.sink])
        #expect(classification.forwardsTo == expected.forwardsTo, "evidence: \(classification.evidence)")
        #expect(classification.forwardsToSink == expected.forwardsToSink)
        if let via = expected.via {
            #expect(classification.evidence.contains(via), "evidence: \(classification.evidence)")
            #expect(classification.evidence.contains("forwards to 'bt_headset' (bluetooth-a2dp)"))
            #expect(classification.kind == .virtual)
            #expect(!classification.external, "a virtual sink is not itself an external output")
        }
    }

    @Test("PulseAudio capture: remap and echo-cancel by device.master_device, combine by its module's streams",
          arguments: [
              Expected(sink: "remap_bt", forwardsTo: .bluetoothA2DP, forwardsToSink: "bt_headset",
                       via: "device.master_device=bt_headset"),
              Expected(sink: "ec_sink", forwardsTo: .bluetoothA2DP, forwardsToSink: "bt_headset",
                       via: "device.master_device=bt_headset"),
              Expected(sink: "combined", forwardsTo: .bluetoothA2DP, forwardsToSink: "bt_headset",
                       via: "(module-combine-sink.c)"),
              Expected(sink: "plain", forwardsTo: nil, forwardsToSink: nil),
              Expected(sink: "speaker", forwardsTo: nil, forwardsToSink: nil),
          ])
    func pulseAudioCapture(_ expected: Expected) throws {
        let snapshot = try SinkDumpReader.readSnapshot(SinkFixture.text("forwarding/pa16-remap-combine-echo-cancel-list.json"))
        let classification = try #require(Self.forwarding(snapshot)[expected.sink])
        #expect(classification.forwardsTo == expected.forwardsTo, "evidence: \(classification.evidence)")
        #expect(classification.forwardsToSink == expected.forwardsToSink)
        if let via = expected.via {
            #expect(classification.evidence.contains(via), "evidence: \(classification.evidence)")
        }
    }

    @Test("a pactl list sinks dump alone still shows a PulseAudio remap sink's master")
    func masterDeviceWithoutStreams() throws {
        let snapshot = try SinkDumpReader.readSnapshot(SinkFixture.text("forwarding/pa16-remap-combine-echo-cancel-list.json"))
        let sinksOnly = Snapshot(sinks: snapshot.sinks)
        let byName = Self.forwarding(sinksOnly)
        #expect(byName["remap_bt"]?.forwardsTo == .bluetoothA2DP)
        #expect(byName["combined"]?.forwardsTo == nil, "a combine sink's slaves are only seen through its streams")
    }

    // MARK: Built snapshots

    static let speaker = Sink(index: 0, name: "speaker", driver: "module-alsa-card.c",
                              ports: [Port(name: "analog-output-speaker", type: .speaker)],
                              activePortName: "analog-output-speaker",
                              properties: ["device.api": "alsa", "device.bus": "pci"])
    static let bluetooth = Sink(index: 1, name: "bt", driver: "module-bluez5-device.c",
                                properties: ["device.api": "bluez", "bluetooth.protocol": "a2dp_sink"])
    static let usb = Sink(index: 2, name: "usb", driver: "module-alsa-card.c",
                          properties: ["device.api": "alsa", "device.bus": "usb"])
    static let hfp = Sink(index: 3, name: "hfp", driver: "module-bluez5-device.c",
                          properties: ["device.api": "bluez", "bluetooth.protocol": "headset_head_unit"])
    static func filter(_ index: UInt32, _ name: String, master: String? = nil, module: UInt32? = nil,
                       properties: [String: String] = [:]) -> Sink {
        var all = properties
        all["device.class"] = "filter"
        if let master { all["device.master_device"] = master }
        return Sink(index: index, name: name, driver: "module-ladspa-sink.c", properties: all, ownerModule: module)
    }

    @Test("chains are followed: EQ → remap → Bluetooth reports Bluetooth and the path")
    func chain() {
        let snapshot = Snapshot(sinks: [Self.speaker, Self.bluetooth,
                                        Self.filter(10, "remap", master: "bt"),
                                        Self.filter(11, "eq", master: "remap")])
        let eq = Self.forwarding(snapshot)["eq"]
        #expect(eq?.forwardsTo == .bluetoothA2DP)
        #expect(eq?.forwardsToSink == "bt")
        #expect(eq?.evidence.contains("device.master_device=remap to 'remap', then device.master_device=bt") == true,
                "evidence: \(eq?.evidence ?? "")")
    }

    @Test("a loop of virtual sinks forwards nowhere, and a chain longer than the limit is not followed")
    func loopsAndDepth() {
        let loop = Snapshot(sinks: [Self.filter(10, "a", master: "b"), Self.filter(11, "b", master: "a"), Self.speaker])
        #expect(Self.forwarding(loop)["a"]?.forwardsTo == nil)
        #expect(Self.forwarding(loop)["b"]?.forwardsTo == nil)

        let depth = Classifier.maxForwardingDepth
        var sinks = [Self.bluetooth]
        for step in 0...depth {
            sinks.append(Self.filter(UInt32(10 + step), "f\(step)", master: step == 0 ? "bt" : "f\(step - 1)"))
        }
        let byName = Self.forwarding(Snapshot(sinks: sinks))
        #expect(byName["f\(depth - 1)"]?.forwardsTo == .bluetoothA2DP, "\(depth) virtual sinks deep: followed")
        #expect(byName["f\(depth)"]?.forwardsTo == nil, "\(depth + 1) virtual sinks deep: not followed")
    }

    @Test("a combine sink reports its best slave by the external rank, and the ranking can change it")
    func combineBestSlave() {
        let combine = Sink(index: 20, name: "combined", driver: "module-combine-sink.c",
                           properties: ["device.class": "filter"], ownerModule: 30)
        let slaves = [Self.speaker, Self.usb, Self.hfp].map { slave in
            SinkInput(index: 100 + slave.index!, sinkIndex: slave.index!, ownerModule: 30, driver: "module-combine-sink.c")
        }
        let snapshot = Snapshot(sinks: [Self.speaker, Self.usb, Self.hfp, combine], sinkInputs: slaves)
        #expect(Self.forwarding(snapshot)["combined"]?.forwardsTo == .usb)
        #expect(Self.forwarding(snapshot, ranking: [.bluetoothHFP])["combined"]?.forwardsTo == .bluetoothHFP)
        let speakerOnly = Snapshot(sinks: [Self.speaker, combine], sinkInputs: [slaves[0]])
        #expect(Self.forwarding(speakerOnly)["combined"]?.forwardsTo == .speaker)
    }

    @Test("a PipeWire filter whose output stream has no link: its target.object names the device")
    func targetObjectFallback() {
        let sink = Sink(index: 40, name: "effect_input.eq", driver: "PipeWire",
                        properties: ["node.virtual": "true", "node.link-group": "filter-chain-1-2",
                                     "media.class": "Audio/Sink"])
        let output = SinkInput(index: 41, sinkIndex: UInt32.max,
                               properties: ["node.link-group": "filter-chain-1-2", "target.object": "bt"])
        let bySerial = SinkInput(index: 41, sinkIndex: UInt32.max,
                                 properties: ["node.link-group": "filter-chain-1-2", "node.target": "1"])
        #expect(Self.forwarding(Snapshot(sinks: [Self.bluetooth, sink], sinkInputs: [output]))["effect_input.eq"]?
            .forwardsToSink == "bt")
        #expect(Self.forwarding(Snapshot(sinks: [Self.bluetooth, sink], sinkInputs: [bySerial]))["effect_input.eq"]?
            .forwardsToSink == "bt")
    }

    @Test("streams of other clients and other modules do not make a sink forward")
    func unrelatedStreams() {
        let sink = Sink(index: 40, name: "null", driver: "module-null-sink.c",
                        properties: ["device.class": "abstract", "application.id": "org.example.app"], ownerModule: 5)
        let inputs = [
            SinkInput(index: 1, sinkIndex: 1, properties: ["application.id": "org.other.app"]),
            SinkInput(index: 2, sinkIndex: 1, ownerModule: 6),
            SinkInput(index: 3, sinkIndex: 1, properties: ["node.link-group": "x"]),
            SinkInput(index: 4, sinkIndex: 40, properties: ["application.id": "org.example.app"]),
        ]
        let classification = Self.forwarding(Snapshot(sinks: [Self.bluetooth, sink], sinkInputs: inputs))["null"]
        #expect(classification?.forwardsTo == nil)
        #expect(classification?.evidence == "device.class=abstract")
    }

    @Test("devices never forward, and the snapshot classification equals the single-sink one for them")
    func devicesUnchanged() throws {
        let snapshot = try SinkDumpReader.readSnapshot(SinkFixture.text("pw-dump/pw0365-emulated-filters.json"))
        for (sink, classification) in zip(snapshot.sinks, Classifier.classify(snapshot)) where classification.kind != .virtual {
            #expect(classification == Classifier.classify(sink))
        }
    }
}
