import Foundation
import Testing
@testable import DuckPrompt
@testable import DuckPromptCore

@Suite("pw-dump reader")
struct PwDumpReaderTests {
    static let captured = "pw-dump/pw0365-emulated-filters.json"

    static func capturedSnapshot() throws -> Snapshot {
        try SinkDumpReader.readSnapshot(SinkFixture.text(captured))
    }

    /// The same server's `pactl --format=json list`, read by the pactl JSON reader.
    static func pactlSnapshot() throws -> Snapshot {
        try SinkDumpReader.readSnapshot(SinkFixture.text("pw-dump/pw0365-emulated-filters-pactl-list.json"))
    }

    // MARK: The captured dump

    @Test("the captured pw-dump is detected as pw-dump, pactl JSON of the same server is not")
    func detection() throws {
        #expect(SinkDumpReader.detectFormat(try SinkFixture.text(Self.captured)) == .pwDump)
        #expect(SinkDumpReader.detectFormat(try SinkFixture.text("pw-dump/pw0365-emulated-filters-pactl-list.json"))
                == .pactlJSON)
        #expect(SinkDumpFormat.pwDump.rawValue == "pw-dump")
        #expect(SinkDumpReader.detectFormat(#"[{"id":0,"type":"PipeWire:Interface:Core","info":{}}]"#) == .pwDump,
                "compact (jq -c) pw-dump")
        #expect(SinkDumpReader.detectFormat(#"[{"name": "x", "properties": {"note": "PipeWire:Interface:Node"}}]"#)
                == .pactlJSON, "the words in a property value do not make a pw-dump")
    }

    @Test("captured pw-dump: the Audio/Sink nodes, indexed by object.serial, with the default sink")
    func capturedSinks() throws {
        let snapshot = try Self.capturedSnapshot()
        #expect(snapshot.sinks.map(\.name) == ["speaker", "bt_headset", "remap_bt", "combined",
                                               "easyeffects_sink", "effects_sink"])
        // pactl list sinks of the same server said Sink #46, #53, … (object.serial; node ids 43, 44, …).
        #expect(snapshot.sinks.map(\.index) == [46, 53, 65, 77, 94, 103])
        #expect(snapshot.sinks.map(\.description) == ["Built-in-Speaker", "BT-Headset", "Remap-BT", "combined",
                                                      "Easy-Effects-Sink", "Filter-Chain-Effects"])
        #expect(snapshot.defaultSinkName == "easyeffects_sink")
        #expect(snapshot.sinks.allSatisfy { $0.driver == "PipeWire" })
        #expect(snapshot.sinks.map(\.state) == [.running, .running, .idle, .idle, .running, .idle],
                "as pactl: a running sink nothing plays to is IDLE")
    }

    @Test("captured pw-dump: every field of the emulated speaker")
    func capturedSpeakerFields() throws {
        let speaker = try #require(try Self.capturedSnapshot().sinks.first)
        // pactl: "front-left: 22937 / 35% / -27.36 dB, front-right: 52428 / 80% / -5.81 dB";
        // pw-dump: channelVolumes [0.042872, 0.511977] (linear = cubic of pa/65536).
        #expect(speaker.volume == ChannelVolumes([22937, 52428]))
        #expect(speaker.channelMap == ["front-left", "front-right"])
        #expect(speaker.mute == false)
        #expect(speaker.flags == ["HARDWARE", "DECIBEL_VOLUME", "LATENCY"])
        #expect(speaker.ownerModule == 536870913)
        #expect(speaker.ports.isEmpty)
        #expect(speaker.activePortName == nil)
        // PipeWire spellings renamed as pipewire-pulse renames them; values as strings.
        #expect(speaker.properties["device.form_factor"] == "internal")
        #expect(speaker.properties["device.form-factor"] == nil)
        #expect(speaker.properties["device.description"] == "Built-in-Speaker")
        #expect(speaker.properties["node.description"] == nil)
        #expect(speaker.properties["object.serial"] == "46")
        #expect(speaker.properties["node.driver"] == "true")
        #expect(speaker.properties["monitor.channel-volumes"] == "true")
    }

    @Test("captured pw-dump: the virtual sinks have no HARDWARE flag, the remap sink's module is its own")
    func capturedVirtualFields() throws {
        let sinks = try Self.capturedSnapshot().sinks
        let remap = try #require(sinks.first { $0.name == "remap_bt" })
        #expect(!remap.flags.contains("HARDWARE"))
        #expect(remap.ownerModule == 536870915)
        #expect(remap.properties["node.link-group"] == "loopback-16728-12")
        let effects = try #require(sinks.first { $0.name == "effects_sink" })
        #expect(effects.ownerModule == nil, "pw-loopback is a client, not a module")
        #expect(effects.volume == ChannelVolumes([65536, 65536]))
    }

    @Test("captured pw-dump: sink-inputs play on the sinks their links lead to")
    func capturedSinkInputs() throws {
        let inputs = try Self.capturedSnapshot().sinkInputs
        let byName = Dictionary(inputs.map { ($0.properties["node.name"] ?? "", $0) }, uniquingKeysWith: { a, _ in a })
        #expect(inputs.count == 6)
        #expect(byName["output.remap_bt"]?.sinkIndex == 53)
        #expect(byName["output.remap_bt"]?.ownerModule == 536870915)
        #expect(byName["output.combined_speaker"]?.sinkIndex == 46)
        #expect(byName["output.combined_bt_headset"]?.sinkIndex == 53)
        #expect(byName["effects_out"]?.sinkIndex == 53)
        #expect(byName["music-player"]?.sinkIndex == 94)
        #expect(byName["easyeffects"]?.sinkIndex == 53)
        #expect(byName["easyeffects"]?.name == "easyeffects_soe")
        #expect(byName["easyeffects"]?.index == 115)
        #expect(inputs.allSatisfy { !$0.corked })
    }

    @Test("pw-dump and pactl JSON of the same server agree on every field both carry")
    func agreesWithPactl() throws {
        let fromDump = try Self.capturedSnapshot()
        let fromPactl = try Self.pactlSnapshot()
        #expect(fromDump.sinks.map(\.name) == fromPactl.sinks.map(\.name))
        for (dump, pactl) in zip(fromDump.sinks, fromPactl.sinks) {
            #expect(dump.index == pactl.index, "\(dump.name)")
            #expect(dump.description == pactl.description, "\(dump.name)")
            #expect(dump.state == pactl.state, "\(dump.name)")
            #expect(dump.driver == pactl.driver, "\(dump.name)")
            #expect(dump.volume == pactl.volume, "\(dump.name)")
            #expect(dump.mute == pactl.mute, "\(dump.name)")
            #expect(dump.channelMap == pactl.channelMap, "\(dump.name)")
            #expect(dump.flags == pactl.flags, "\(dump.name)")
            #expect(dump.ownerModule == pactl.ownerModule, "\(dump.name)")
            #expect(dump.ports == pactl.ports, "\(dump.name)")
            #expect(dump.activePortName == pactl.activePortName, "\(dump.name)")
            #expect(dump.properties == pactl.properties, "\(dump.name)")
        }
        #expect(fromDump.sinkInputs.map(\.index) == fromPactl.sinkInputs.map(\.index))
        for (dump, pactl) in zip(fromDump.sinkInputs, fromPactl.sinkInputs) {
            #expect(dump.sinkIndex == pactl.sinkIndex, "#\(dump.index)")
            #expect(dump.ownerModule == pactl.ownerModule, "#\(dump.index)")
            #expect(dump.corked == pactl.corked, "#\(dump.index)")
            #expect(dump.properties["node.link-group"] == pactl.properties["node.link-group"], "#\(dump.index)")
            #expect(dump.properties["application.id"] == pactl.properties["application.id"], "#\(dump.index)")
        }
    }

    @Test("pw-dump and pactl JSON of the same server classify alike")
    func classifiesLikePactl() throws {
        let fromDump = Classifier.classify(try Self.capturedSnapshot())
        let fromPactl = Classifier.classify(try Self.pactlSnapshot())
        #expect(fromDump == fromPactl)
        #expect(fromDump.map(\.kind) == [.speaker, .bluetoothA2DP, .virtual, .virtual, .virtual, .virtual])
    }

    // MARK: A card with routes (constructed)

    /// A pw-dump cut down to what a PipeWire ALSA card gives a sink: the Device (card) with its
    /// profiles and routes, and the sink node on its profile device 1. Constructed for this
    /// test (no machine here has a sound card), shaped as pw-dump prints these params
    /// (`spa/debug` JSON of `SPA_PARAM_Route`: `info` as `[n, key, value, …]`).
    static let constructedCard = """
    [
      {"id": 40, "type": "PipeWire:Interface:Device",
       "info": {"props": {"device.api": "alsa", "device.bus": "usb", "device.bus-path": "pci-0000:00:14.0-usb-0:3:1.0",
                          "device.form-factor": "headset", "device.nick": "G435", "api.alsa.card": 2,
                          "device.description": "G435 Wireless Gaming Headset"},
                "params": {
                  "EnumProfile": [{"index": 0, "name": "off"}, {"index": 1, "name": "output:analog-stereo"},
                                  {"index": 2, "name": "output:iec958-stereo"}],
                  "Profile": [{"index": 1, "name": "output:analog-stereo"}],
                  "EnumRoute": [
                    {"index": 0, "direction": "Input", "name": "analog-input-mic", "description": "Microphone",
                     "priority": 8700, "available": "yes", "info": [1, "port.type", "mic"], "profiles": [1], "devices": [0]},
                    {"index": 1, "direction": "Output", "name": "analog-output-speaker", "description": "Speakers",
                     "priority": 10000, "available": "no",
                     "info": [2, "port.type", "speaker", "port.availability-group", "Legacy 3"], "profiles": [1], "devices": [1]},
                    {"index": 2, "direction": "Output", "name": "analog-output-headphones", "description": "Headphones",
                     "priority": 9900, "available": "yes", "info": [1, "port.type", "headphones"], "profiles": [1], "devices": [1]},
                    {"index": 3, "direction": "Output", "name": "iec958-stereo-output", "description": "Digital Output (S/PDIF)",
                     "priority": 0, "available": "unknown", "info": [1, "port.type", "spdif"], "profiles": [2], "devices": [1]}
                  ],
                  "Route": [
                    {"index": 0, "direction": "Input", "device": 0, "name": "analog-input-mic", "profile": 1,
                     "props": {"mute": false, "channelVolumes": [1.0]}},
                    {"index": 2, "direction": "Output", "device": 1, "name": "analog-output-headphones", "profile": 1,
                     "info": [3, "port.type", "headphones", "route.hw-volume", "true", "route.hw-mute", "true"],
                     "props": {"mute": true, "channelVolumes": [0.125, 0.125], "channelMap": ["FL", "FR"]}}
                  ]}}},
      {"id": 51, "type": "PipeWire:Interface:Node",
       "info": {"state": "suspended",
                "props": {"media.class": "Audio/Sink", "node.name": "alsa_output.usb-Logitech_G435-00.analog-stereo",
                          "node.description": "G435 Analog Stereo", "device.id": 40, "card.profile.device": 1,
                          "device.api": "alsa", "object.serial": 61, "audio.position": "FL,FR"},
                "params": {"Props": [{"volume": 1.0, "mute": false, "channelVolumes": [1.0, 1.0],
                                      "channelMap": ["FL", "FR"], "softVolumes": [0.125, 0.125]}]}}},
      {"id": 70, "type": "PipeWire:Interface:Metadata", "props": {"metadata.name": "default"},
       "metadata": [{"subject": 0, "key": "default.audio.sink", "type": "Spa:String:JSON",
                     "value": "{\\"name\\":\\"alsa_output.usb-Logitech_G435-00.analog-stereo\\"}"}]}
    ]
    """

    @Test("card routes: ports of the active profile and this device, active port, route volume and flags")
    func cardRoutes() throws {
        let snapshot = try SinkDumpReader.readSnapshot(Self.constructedCard)
        let sink = try #require(snapshot.sinks.first)
        #expect(snapshot.sinks.count == 1)
        #expect(sink.index == 61)
        #expect(sink.state == .suspended)
        #expect(sink.ports == [
            Port(name: "analog-output-speaker", description: "Speakers", type: .speaker, priority: 10000, availability: .no),
            Port(name: "analog-output-headphones", description: "Headphones", type: .headphones, priority: 9900,
                 availability: .yes),
        ], "the input route and the S/PDIF route of another profile are not this sink's ports")
        #expect(sink.activePortName == "analog-output-headphones")
        // The route's volume and mute, not the node's (soft) Props: cbrt(0.125) = 0.5 → 32768.
        #expect(sink.volume == ChannelVolumes([32768, 32768]))
        #expect(sink.mute)
        #expect(sink.flags == ["HARDWARE", "DECIBEL_VOLUME", "LATENCY", "HW_VOLUME_CTRL", "HW_MUTE_CTRL"])
        // Card properties the node lacks are added, renamed. The card's device.description is
        // what pactl shows too (fixture sinks/019: Description "Built-in Audio Digital Stereo
        // (HDMI)", device.description "Built-in Audio"); the sink's description stays the node's.
        #expect(sink.description == "G435 Analog Stereo")
        #expect(sink.properties["device.bus"] == "usb")
        #expect(sink.properties["device.bus_path"] == "pci-0000:00:14.0-usb-0:3:1.0")
        #expect(sink.properties["device.form_factor"] == "headset")
        #expect(sink.properties["device.description"] == "G435 Wireless Gaming Headset")
        #expect(sink.properties["device.id"] == "40")
        #expect(sink.properties["api.alsa.card"] == "2")
        // The default sink, from a metadata value written as a JSON string (older pw-dump).
        #expect(snapshot.defaultSinkName == sink.name)
        let classification = Classifier.classify(sink)
        #expect(classification.kind == .usb)
        #expect(classification.evidence == "device.bus=usb")
    }

    @Test("card routes: no Route for the device → the first port is active, the node's Props give the volume")
    func cardWithoutActiveRoute() throws {
        let text = Self.constructedCard.replacingOccurrences(of: "\"device\": 1, \"name\": \"analog-output-headphones\"",
                                                            with: "\"device\": 7, \"name\": \"analog-output-headphones\"")
        let sink = try #require(try SinkDumpReader.readSnapshot(text).sinks.first)
        #expect(sink.activePortName == "analog-output-speaker")
        #expect(sink.volume == ChannelVolumes([65536, 65536]))
        #expect(!sink.mute)
        #expect(!sink.flags.contains("HW_VOLUME_CTRL"))
    }

    // MARK: Conversions and shapes

    @Test("linear channel volume → pa_volume_t: pa_sw_volume_from_linear, round(cbrt(v) × 65536) as pipewire-pulse", arguments: [
        (1.0, UInt32(65536)), (0.125, 32768), (0.21599, 39321), (0.042872, 22937), (0.0, 0), (-1.0, 0),
        (8.0, 131072),
    ])
    func volumeConversion(linear: Double, expected: UInt32) {
        #expect(VolumeArithmetic.libpulse.fromLinear(linear) == expected)
    }

    @Test("property values as pactl prints them")
    func propertyStrings() {
        #expect(PwDumpReader.string(46) == "46")
        #expect(PwDumpReader.string(true) == "true")
        #expect(PwDumpReader.string(false) == "false")
        #expect(PwDumpReader.string(0.5) == "0.5")
        #expect(PwDumpReader.string("x") == "x")
        #expect(PwDumpReader.string(["a", "b"]) == "[\"a\",\"b\"]")
    }

    @Test("a pw-dump without sinks is no sink dump, and the message lists pw-dump")
    func noSinks() {
        let text = #"[{"id": 0, "type": "PipeWire:Interface:Core", "info": {}}]"#
        #expect(SinkDumpReader.detectFormat(text) == .pwDump)
        let error = #expect(throws: DuckPromptError.self) { try SinkDumpReader.read(text) }
        #expect(error?.code == .unsupportedData)
        #expect(error?.message.contains("`pw-dump`") == true)
        #expect(error?.message.contains("`wpctl inspect`") == true)
    }

    @Test("a stream node without a link plays nowhere (PA_INVALID_INDEX), and is corked unless running")
    func unlinkedStream() throws {
        let text = """
        [{"id": 5, "type": "PipeWire:Interface:Node", "info": {"state": "idle", "props": {
            "media.class": "Audio/Sink", "node.name": "s", "object.serial": 9}}},
         {"id": 6, "type": "PipeWire:Interface:Node", "info": {"state": "idle", "props": {
            "media.class": "Stream/Output/Audio", "node.name": "p", "media.name": "Music", "media.role": "Music",
            "object.serial": 10}}}]
        """
        let snapshot = try SinkDumpReader.readSnapshot(text)
        let input = try #require(snapshot.sinkInputs.first)
        #expect(input.sinkIndex == UInt32.max)
        #expect(input.corked)
        #expect(input.name == "Music")
        #expect(input.mediaRole == "music", "PipeWire's Music role reads as PulseAudio's music")
        #expect(snapshot.defaultSinkName == nil)
    }

    @Test("pactl --format=json list: sink-inputs are read with the sinks")
    func pactlListSinkInputs() throws {
        let snapshot = try SinkDumpReader.readSnapshot(SinkFixture.text("forwarding/pa16-remap-combine-echo-cancel-list.json"))
        #expect(snapshot.sinks.map(\.name) == ["speaker", "bt_headset", "remap_bt", "combined", "ec_sink", "plain"])
        #expect(snapshot.sinkInputs.map(\.index) == [0, 1, 2, 3])
        #expect(snapshot.sinkInputs.map(\.sinkIndex) == [2, 1, 2, 2])
        #expect(snapshot.sinkInputs.map(\.ownerModule) == [7, 8, 8, 9])
        #expect(snapshot.sinkInputs.map(\.driver) == ["module-remap-sink.c", "module-combine-sink.c",
                                                      "module-combine-sink.c", "module-echo-cancel.c"])
        #expect(snapshot.sinkInputs[0].name == "Remapped Stream")
    }
}
