import class Foundation.FileManager
import struct Foundation.Data
import class Foundation.JSONDecoder
import class Foundation.JSONEncoder
import Testing
@testable import DuckPrompt
@testable import DuckPromptCore

/// One row of `Fixtures/sinks/EXPECTED.tsv`: file, server, expected kind, external, source.
struct ExpectedRow: Sendable, CustomTestStringConvertible {
    var file: String
    var server: String
    var kind: String
    var external: String

    var testDescription: String { file }

    /// Every row of the table; a row added to the file is a new test case.
    static func all() throws -> [ExpectedRow] {
        try SinkFixture.text("sinks/EXPECTED.tsv")
            .split(whereSeparator: \.isNewline)
            .filter { !$0.trimmingSpaces().isEmpty && !$0.hasPrefix("#") }
            .map { line in
                let columns = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
                guard columns.count >= 4 else { throw SinkFixture.Missing(path: "EXPECTED.tsv row '\(line)'") }
                return ExpectedRow(file: columns[0], server: columns[1], kind: columns[2], external: columns[3])
            }
    }
}

@Suite("Classifier")
struct ClassifierTests {
    // MARK: The fixture table

    @Test("EXPECTED.tsv has rows, and every fixture file has a row")
    func tableCoversFixtures() throws {
        let rows = try ExpectedRow.all()
        #expect(rows.count >= 14)
        let directory = try SinkFixture.url("sinks")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".txt") || $0.hasSuffix(".json") }
        #expect(Set(files) == Set(rows.map(\.file)))
    }

    @Test("every EXPECTED.tsv row: kind and external", arguments: try ExpectedRow.all())
    func expected(row: ExpectedRow) throws {
        let kind = try #require(DeviceKind(rawValue: row.kind), "unknown kind '\(row.kind)' in EXPECTED.tsv")
        let sinks = try SinkFixture.sinks("sinks/\(row.file)")
        try #require(sinks.count == 1)
        let classification = Classifier.classify(sinks[0])
        #expect(classification.kind == kind, "evidence: \(classification.evidence)")
        #expect(classification.external == (row.external == "yes"), "evidence: \(classification.evidence)")
        #expect(!classification.evidence.isEmpty)
    }

    // MARK: Emulated devices (null sinks with device properties)

    /// What `pactl load-module module-null-sink sink_properties=…` gives on PulseAudio: the
    /// null sink adds `device.class=abstract`; on pipewire-pulse it adds
    /// `factory.name=support.null-audio-sink` (and some setups `node.virtual`).
    static func nullSink(_ properties: [String: String], pipewire: Bool = false,
                         nodeVirtual: Bool = false) -> Sink {
        var all = properties
        if pipewire {
            all["factory.name"] = "support.null-audio-sink"
            all["media.class"] = "Audio/Sink"
            if nodeVirtual { all["node.virtual"] = "true" }
        } else {
            all["device.class"] = all["device.class"] ?? "abstract"
        }
        return Sink(index: 1, name: "emulated", driver: pipewire ? "PipeWire" : "module-null-sink.c",
                    properties: all)
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var label: String
        var sink: Sink
        var kind: DeviceKind
        var external: Bool
        var evidence: String? = nil
        var testDescription: String { label }
    }

    static let bluetoothA2DP = ["device.api": "bluez5", "device.bus": "bluetooth",
                                "api.bluez5.profile": "a2dp-sink"]
    /// What `duckprompt lab` and the test rigs give an emulated built-in speaker: an ALSA PCI
    /// card built in (`internal`, which alone says nothing) whose description names the output,
    /// as PipeWire's split-port profiles do.
    static let builtinSpeaker = ["device.api": "alsa", "device.bus": "pci", "device.description": "Built-in Audio Speaker",
                                 "device.form_factor": "internal", "device.class": "sound"]

    static let emulatedCases: [Case] = [
        Case(label: "PulseAudio null sink emulating Bluetooth A2DP",
             sink: nullSink(bluetoothA2DP), kind: .bluetoothA2DP, external: true,
             evidence: "api.bluez5.profile=a2dp-sink"),
        Case(label: "pipewire-pulse null sink emulating Bluetooth A2DP",
             sink: nullSink(bluetoothA2DP, pipewire: true), kind: .bluetoothA2DP, external: true),
        Case(label: "pipewire-pulse null sink emulating Bluetooth, node.virtual set",
             sink: nullSink(bluetoothA2DP, pipewire: true, nodeVirtual: true),
             kind: .bluetoothA2DP, external: true),
        Case(label: "PulseAudio null sink emulating a built-in speaker",
             sink: nullSink(builtinSpeaker), kind: .speaker, external: false,
             evidence: "device.description=Built-in Audio Speaker (its description; the dump lists no ports)"),
        Case(label: "a null sink that says only built in (device.form_factor=internal) is unknown",
             sink: nullSink(builtinSpeaker.filter { $0.key != "device.description" }), kind: .unknown, external: false,
             evidence: "device.api=alsa with no decisive property and no port"),
        Case(label: "pipewire-pulse null sink emulating a built-in speaker, node.virtual set",
             sink: nullSink(builtinSpeaker, pipewire: true, nodeVirtual: true),
             kind: .speaker, external: false),
        Case(label: "null sink emulating a USB headset",
             sink: nullSink(["device.api": "alsa", "device.bus": "usb", "device.form_factor": "headset"]),
             kind: .usb, external: true, evidence: "device.bus=usb"),
        Case(label: "null sink emulating HFP",
             sink: nullSink(["device.api": "bluez5", "api.bluez5.profile": "headset-head-unit"], pipewire: true),
             kind: .bluetoothHFP, external: true),
        Case(label: "null sink emulating car audio",
             sink: nullSink(["device.api": "alsa", "device.form_factor": "car"]),
             kind: .car, external: true, evidence: "device.form_factor=car"),
        Case(label: "bare PulseAudio null sink",
             sink: Sink(index: 0, name: "null", driver: "module-null-sink.c",
                        properties: ["device.description": "Null Output", "device.class": "abstract",
                                     "device.icon_name": "audio-card"]),
             kind: .virtual, external: false, evidence: "device.class=abstract"),
        Case(label: "bare pipewire-pulse null sink",
             sink: Sink(index: 42, name: "plain", driver: "PipeWire",
                        properties: ["node.name": "plain", "media.class": "Audio/Sink",
                                     "factory.name": "support.null-audio-sink"]),
             kind: .virtual, external: false, evidence: "factory.name=support.null-audio-sink"),
    ]

    @Test("emulated devices classify by their properties", arguments: emulatedCases)
    func emulated(_ test: Case) {
        check(test)
    }

    // MARK: Real-device variants

    static func alsa(_ properties: [String: String] = [:], ports: [Port], active: String? = nil) -> Sink {
        var all = ["device.api": "alsa", "device.bus": "pci", "alsa.card": "0"]
        all.merge(properties) { _, new in new }
        return Sink(index: 0, name: "alsa_output.pci-0000_00_1f.3.analog-stereo",
                    driver: "module-alsa-card.c", ports: ports,
                    activePortName: active ?? ports.first?.name, properties: all)
    }

    static let variantCases: [Case] = [
        Case(label: "LE Audio bap-sink is A2DP-class media",
             sink: Sink(name: "bluez_output.x.1", driver: "PipeWire",
                        properties: ["device.api": "bluez5", "api.bluez5.profile": "bap-sink"]),
             kind: .bluetoothA2DP, external: true),
        Case(label: "hearing aid asha-sink is A2DP-class media",
             sink: Sink(name: "x", driver: "PipeWire",
                        properties: ["device.api": "bluez5", "api.bluez5.profile": "asha-sink"]),
             kind: .bluetoothA2DP, external: true),
        Case(label: "PipeWire hfp-hf profile",
             sink: Sink(name: "x", driver: "PipeWire",
                        properties: ["device.api": "bluez5", "api.bluez5.profile": "hfp-hf"]),
             kind: .bluetoothHFP, external: true),
        Case(label: "PulseAudio handsfree_head_unit",
             sink: Sink(name: "x", driver: "module-bluez5-device.c",
                        properties: ["device.api": "bluez", "bluetooth.protocol": "handsfree_head_unit"]),
             kind: .bluetoothHFP, external: true, evidence: "bluetooth.protocol=handsfree_head_unit"),
        Case(label: "Bluetooth without profile, SCO factory → HFP",
             sink: Sink(name: "x", driver: "PipeWire",
                        properties: ["device.bus": "bluetooth", "factory.name": "api.bluez5.sco.sink"]),
             kind: .bluetoothHFP, external: true, evidence: "factory.name=api.bluez5.sco.sink"),
        Case(label: "Bluetooth without profile or factory → A2DP",
             sink: Sink(name: "x", properties: ["device.bus": "bluetooth"]),
             kind: .bluetoothA2DP, external: true),
        Case(label: "Bluetooth speaker: port type speaker, the bus decides",
             sink: Sink(name: "x", driver: "module-bluez5-device.c",
                        ports: [Port(name: "speaker-output", type: .speaker, availability: .yes)],
                        activePortName: "speaker-output",
                        properties: ["device.api": "bluez", "device.form_factor": "speaker",
                                     "bluetooth.protocol": "a2dp_sink"]),
             kind: .bluetoothA2DP, external: true),
        Case(label: "HDMI not available: hdmi, not external",
             sink: alsa(ports: [Port(name: "hdmi-output-0", type: .hdmi, availability: .no)]),
             kind: .hdmi, external: false, evidence: "active port hdmi-output-0 (type hdmi)"),
        Case(label: "HDMI available: external",
             sink: alsa(ports: [Port(name: "hdmi-output-1", availability: .yes)]),
             kind: .hdmi, external: true, evidence: "active port hdmi-output-1"),
        Case(label: "headset jack on a built-in card → headphones",
             sink: alsa(ports: [Port(name: "analog-output-headset", type: .headset, availability: .yes)]),
             kind: .headphones, external: true),
        Case(label: "UCM [Out] Headphones without a type → headphones",
             sink: alsa(ports: [Port(name: "[Out] Headphones", availability: .unknown)]),
             kind: .headphones, external: true),
        Case(label: "UCM [Out] Speaker without a type → speaker",
             sink: alsa(ports: [Port(name: "[Out] Speaker")]),
             kind: .speaker, external: false),
        Case(label: "line out typed Line → line-out",
             sink: alsa(ports: [Port(name: "analog-output-lineout", type: .line, availability: .yes)]),
             kind: .lineOut, external: true),
        Case(label: "S/PDIF typed SPDIF → line-out",
             sink: alsa(ports: [Port(name: "iec958-stereo-output", type: .spdif)]),
             kind: .lineOut, external: true),
        Case(label: "headphones plugged out but active → headphones, not external",
             sink: alsa(ports: [Port(name: "analog-output-headphones", type: .headphones, availability: .no)]),
             kind: .headphones, external: false),
        Case(label: "USB DAC with a speaker-typed port: the bus decides",
             sink: alsa(["device.bus": "usb"], ports: [Port(name: "analog-output-speaker", type: .speaker)]),
             kind: .usb, external: true, evidence: "device.bus=usb"),
        Case(label: "USB seen only in sysfs.path",
             sink: alsa(["device.bus": "", "sysfs.path": "/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0/sound/card2"],
                        ports: [Port(name: "analog-output")]),
             kind: .usb, external: true),
        Case(label: "USB seen only as snd_usb_audio",
             sink: Sink(name: "x", driver: "PipeWire", properties: ["alsa.driver_name": "snd_usb_audio"]),
             kind: .usb, external: true),
        Case(label: "a platform card's generic analog-output, form factor internal, no name → unknown, not speaker",
             sink: alsa(["device.bus": "", "device.bus_path": "platform-bcm2835_audio",
                         "device.form_factor": "internal"],
                        ports: [Port(name: "analog-output", description: "Analog Output", type: .analog)]),
             kind: .unknown, external: false, evidence: "active port analog-output (type analog) decides nothing"),
        Case(label: "generic analog-output, nothing else → unknown",
             sink: Sink(name: "x", driver: "module-alsa-card.c",
                        ports: [Port(name: "analog-output", type: .analog)], activePortName: "analog-output",
                        properties: ["device.api": "alsa"]),
             kind: .unknown, external: false),
        Case(label: "only device.api=alsa → unknown",
             sink: Sink(name: "x", driver: "module-alsa-sink.c", properties: ["device.api": "alsa"]),
             kind: .unknown, external: false),
        Case(label: "car port type",
             sink: alsa(ports: [Port(name: "car-output", type: .car, availability: .yes)]),
             kind: .car, external: true),
        Case(label: "RAOP sink → network",
             sink: Sink(name: "raop_output.livingroom", driver: "module-raop-sink.c",
                        properties: ["device.description": "Living room"]),
             kind: .network, external: false, evidence: "driver module-raop-sink.c"),
        Case(label: "PipeWire RAOP node → network",
             sink: Sink(name: "x", driver: "PipeWire",
                        properties: ["raop.ip": "192.168.1.20", "node.virtual": "true"]),
             kind: .network, external: false),
        Case(label: "PipeWire pulse tunnel → network",
             sink: Sink(name: "x", driver: "PipeWire",
                        properties: ["pulse.server.address": "tcp:pi.local", "node.network": "true"]),
             kind: .network, external: false),
        Case(label: "EasyEffects sink → virtual",
             sink: Sink(name: "easyeffects_sink", driver: "PipeWire",
                        properties: ["application.id": "com.github.wwmm.easyeffects",
                                     "node.virtual": "true", "node.passive": "out",
                                     "factory.name": "support.null-audio-sink", "media.class": "Audio/Sink"]),
             kind: .virtual, external: false, evidence: "node.virtual=true"),
        Case(label: "PipeWire remap sink (device.class=filter) → virtual",
             sink: Sink(name: "remapped", driver: "PipeWire",
                        properties: ["device.class": "filter", "node.virtual": "true"]),
             kind: .virtual, external: false, evidence: "device.class=filter"),
        Case(label: "PulseAudio combine sink → virtual",
             sink: Sink(name: "combined", driver: "module-combine-sink.c", properties: [:]),
             kind: .virtual, external: false, evidence: "driver module-combine-sink.c"),
        Case(label: "names are not parsed: a null sink named like a Bluetooth device is virtual",
             sink: Sink(name: "bluez_output.00_11_22_33_44_55.a2dp-sink", driver: "module-null-sink.c",
                        properties: ["device.class": "abstract"]),
             kind: .virtual, external: false),
        Case(label: "names are not parsed: a PCI speaker named alsa_output.usb-… is a speaker",
             sink: Sink(name: "alsa_output.usb-Fake-00.analog-stereo", driver: "module-alsa-card.c",
                        ports: [Port(name: "analog-output-speaker", type: .speaker)],
                        activePortName: "analog-output-speaker",
                        properties: ["device.api": "alsa", "device.bus": "pci", "alsa.card": "0"]),
             kind: .speaker, external: false),
        Case(label: "names are not parsed: a null sink named alsa_output.usb-… is virtual",
             sink: Sink(name: "alsa_output.usb-Fake-00.analog-stereo", driver: "module-null-sink.c",
                        properties: ["device.class": "abstract"]),
             kind: .virtual, external: false),
        Case(label: "echo-cancel filter with a stray device.string → virtual",
             sink: Sink(name: "echo", driver: "module-echo-cancel.c",
                        properties: ["device.class": "filter", "device.string": "alsa_output.x",
                                     "device.master_device": "alsa_output.x"]),
             kind: .virtual, external: false, evidence: "device.class=filter"),
        Case(label: "form factor monitor → hdmi",
             sink: Sink(name: "x", driver: "module-alsa-card.c",
                        properties: ["device.api": "alsa", "device.form_factor": "monitor"]),
             kind: .hdmi, external: true),
        Case(label: "form factor handset decides nothing → unknown",
             sink: Sink(name: "x", driver: "module-alsa-card.c",
                        properties: ["device.api": "alsa", "device.form_factor": "handset"]),
             kind: .unknown, external: false),
    ]

    @Test("real-device variants", arguments: variantCases)
    func variants(_ test: Case) {
        check(test)
    }

    // MARK: What real machines show (issue 3, item 3)

    static let coverageCases: [Case] = [
        Case(label: "Raspberry Pi on PulseAudio: platform card, generic analog-output, a card name that says nothing → unknown",
             sink: Sink(index: 0, name: "alsa_output.platform-soc_audio.analog-stereo", driver: "module-alsa-card.c",
                        flags: ["HARDWARE", "DECIBEL_VOLUME", "LATENCY"],
                        ports: [Port(name: "analog-output", description: "Analog Output", priority: 9900)],
                        activePortName: "analog-output",
                        properties: ["alsa.card_name": "bcm2835 ALSA", "alsa.driver_name": "snd_bcm2835",
                                     "device.api": "alsa", "device.class": "sound",
                                     "device.bus_path": "platform-soc:audio",
                                     "sysfs.path": "/devices/platform/soc/soc:audio/bcm2835_alsa/sound/card0",
                                     "device.string": "front:0"]),
             kind: .unknown, external: false,
             evidence: "active port analog-output (type unknown) decides nothing; its names say nothing (alsa.card_name=bcm2835 ALSA)"),
        Case(label: "Raspberry Pi on PipeWire (wpctl spelling): the card name bcm2835 Headphones, not device.form-factor=internal",
             sink: Sink(name: "alsa_output.platform-bcm2835_audio.stereo-fallback", driver: "PipeWire",
                        properties: ["alsa.card_name": "bcm2835 Headphones", "device.api": "alsa",
                                     "device.bus-path": "platform-bcm2835_audio", "device.form-factor": "internal",
                                     "api.alsa.path": "front:0", "media.class": "Audio/Sink"]),
             kind: .headphones, external: true,
             evidence: "alsa.card_name=bcm2835 Headphones (its card's name; the dump lists no ports)"),
        Case(label: "Raspberry Pi HDMI with no port left in the dump: the hdmi profile decides",
             sink: Sink(name: "x", driver: "PipeWire",
                        properties: ["alsa.card_name": "vc4-hdmi-0", "device.api": "alsa",
                                     "device.profile.name": "hdmi-stereo", "device.form_factor": "internal",
                                     "device.bus_path": "platform-fef00700.hdmi"]),
             kind: .hdmi, external: true, evidence: "device.profile.name=hdmi-stereo"),
        Case(label: "HDMI PCM device string without ports → hdmi",
             sink: Sink(name: "x", driver: "module-alsa-sink.c",
                        properties: ["device.api": "alsa", "device.string": "hdmi:CARD=PCH,DEV=0", "alsa.card": "0"]),
             kind: .hdmi, external: true, evidence: "device.string=hdmi:CARD=PCH,DEV=0"),
        Case(label: "S/PDIF profile without ports → line-out",
             sink: Sink(name: "x", driver: "PipeWire",
                        properties: ["device.api": "alsa", "api.alsa.path": "iec958:1", "device.bus": "pci"]),
             kind: .lineOut, external: true, evidence: "api.alsa.path=iec958:1"),
        Case(label: "USB seen only in PipeWire's device.bus-path",
             sink: Sink(name: "x", driver: "PipeWire",
                        properties: ["device.api": "alsa", "device.bus-path": "pci-0000:00:14.0-usb-0:2:1.0",
                                     "alsa.card_name": "D10s"]),
             kind: .usb, external: true, evidence: "device.bus-path=pci-0000:00:14.0-usb-0:2:1.0"),
        Case(label: "USB seen only in PulseAudio's device.bus_path, with a generic port",
             sink: alsa(["device.bus": "", "device.bus_path": "pci-0000:00:14.0-usb-0:1.4:1.0"],
                        ports: [Port(name: "analog-output", type: .analog)]),
             kind: .usb, external: true, evidence: "device.bus_path=pci-0000:00:14.0-usb-0:1.4:1.0"),
        Case(label: "USB seen only in the ALSA components snd-usb-audio reports",
             sink: Sink(name: "x", driver: "PipeWire",
                        properties: ["device.api": "alsa", "alsa.card_name": "USB Audio", "alsa.components": "USB262a:9302"]),
             kind: .usb, external: true, evidence: "alsa.components=USB262a:9302"),
        Case(label: "USB seen only in the udev id",
             sink: Sink(name: "x", driver: "module-alsa-card.c",
                        properties: ["device.api": "alsa", "udev.id": "usb-C-Media_Electronics_Inc._USB_Audio_Device-00"]),
             kind: .usb, external: true),
        Case(label: "USB seen only in the ALSA long card name",
             sink: Sink(name: "x", driver: "PipeWire",
                        properties: ["api.alsa.card.longname": "Topping D10s at usb-0000:00:14.0-2, high speed"]),
             kind: .usb, external: true),
        Case(label: "USB card with no ports (pro-audio profile)",
             sink: Sink(name: "x", driver: "PipeWire",
                        properties: ["device.api": "alsa", "device.bus": "usb", "device.profile.name": "pro-output-0",
                                     "media.class": "Audio/Sink"]),
             kind: .usb, external: true, evidence: "device.bus=usb"),
        Case(label: "snd-aloop loopback card with the HARDWARE flag and a generic port → virtual",
             sink: Sink(name: "alsa_output.platform-snd_aloop.0.analog-stereo", driver: "module-alsa-card.c",
                        flags: ["HARDWARE", "DECIBEL_VOLUME", "LATENCY"],
                        ports: [Port(name: "analog-output", description: "Analog Output", type: .analog)],
                        activePortName: "analog-output",
                        properties: ["alsa.card_name": "Loopback", "alsa.long_card_name": "Loopback 1",
                                     "alsa.driver_name": "snd_aloop", "device.api": "alsa",
                                     "device.bus_path": "platform-snd_aloop.0", "device.form_factor": "internal",
                                     "sysfs.path": "/devices/platform/snd_aloop.0/sound/card3"]),
             kind: .virtual, external: false,
             evidence: "alsa.driver_name=snd_aloop (an ALSA loopback card: nothing is heard)"),
        Case(label: "snd-aloop known only by its card name on PipeWire → virtual",
             sink: Sink(name: "x", driver: "PipeWire", flags: ["HARDWARE"],
                        properties: ["api.alsa.card.name": "Loopback", "device.api": "alsa"]),
             kind: .virtual, external: false),
        Case(label: "UCM HDMI port without a type, not available → hdmi, not external",
             sink: alsa(ports: [Port(name: "[Out] HDMI2", description: "HDMI / DisplayPort 2 Output", availability: .no)]),
             kind: .hdmi, external: false, evidence: "active port [Out] HDMI2"),
        Case(label: "DisplayPort by port name, not available",
             sink: alsa(ports: [Port(name: "displayport-output-1", availability: .no)]),
             kind: .hdmi, external: false),
        Case(label: "LE Audio on PipeWire: media factory, lc3 codec, bap-sink → A2DP-class",
             sink: Sink(name: "x", driver: "PipeWire",
                        properties: ["device.api": "bluez5", "factory.name": "api.bluez5.media.sink",
                                     "api.bluez5.profile": "bap-sink", "api.bluez5.codec": "lc3"]),
             kind: .bluetoothA2DP, external: true, evidence: "api.bluez5.profile=bap-sink"),
        Case(label: "ASHA hearing aid by factory only → A2DP-class",
             sink: Sink(name: "x", driver: "PipeWire",
                        properties: ["device.bus": "bluetooth", "factory.name": "api.bluez5.asha.sink"]),
             kind: .bluetoothA2DP, external: true, evidence: "factory.name=api.bluez5.asha.sink"),
        Case(label: "PipeWire ROC sink (node.network, node.virtual) → network",
             sink: Sink(name: "roc-sink", driver: "PipeWire",
                        properties: ["node.description": "ROC Sink", "node.virtual": "true",
                                     "node.network": "true", "media.class": "Audio/Sink"]),
             kind: .network, external: false, evidence: "node.network=true"),
        Case(label: "PipeWire RTP sink → network",
             sink: Sink(name: "rtp-sink", driver: "PipeWire",
                        properties: ["rtp.destination.ip": "224.0.0.56", "node.virtual": "true", "media.class": "Audio/Sink"]),
             kind: .network, external: false),
        Case(label: "PulseAudio zeroconf tunnel (module-tunnel-sink-new) → network",
             sink: Sink(name: "tunnel.host.local.alsa_output", driver: "module-tunnel-sink-new.c",
                        flags: ["NETWORK"], properties: ["device.class": "sound"]),
             kind: .network, external: false, evidence: "driver module-tunnel-sink-new.c"),
        Case(label: "PipeWire filter-chain input: node.link-group marks it virtual",
             sink: Sink(name: "effect_input.eq6", driver: "PipeWire",
                        properties: ["node.description": "Equalizer Sink", "media.class": "Audio/Sink",
                                     "node.link-group": "filter-chain-1234-27", "node.group": "filter-chain-1234-27"]),
             kind: .virtual, external: false, evidence: "node.link-group=filter-chain-1234-27"),
        Case(label: "PulseAudio LADSPA sink: device.master_device marks it virtual",
             sink: Sink(name: "ladspa_out", driver: "module-ladspa-sink.c",
                        properties: ["device.master_device": "alsa_output.pci-0000_00_1f.3.analog-stereo",
                                     "device.description": "LADSPA Plugin"]),
             kind: .virtual, external: false, evidence: "device.master_device=alsa_output.pci-0000_00_1f.3.analog-stereo"),
        Case(label: "a PCI card with a generic analog-output port and nothing else is still unknown",
             sink: alsa(["device.bus_path": "pci-0000:00:1b.0"], ports: [Port(name: "analog-output", type: .analog)]),
             kind: .unknown, external: false),
    ]

    @Test("device coverage: Raspberry Pi, USB without device.bus, loopback cards, HDMI, LE Audio, network, filters",
          arguments: coverageCases)
    func coverage(_ test: Case) {
        check(test)
    }

    @Test("a trimmed USB dump without bus properties: the ALSA bus id in the sink name decides")
    func trimmedUSBDump() throws {
        let sink = try SinkFixture.sink("sinks/016-pw-usb-dac-topping-d10s-trimmed.txt")
        let classification = Classifier.classify(sink)
        #expect(classification.kind == .usb)
        #expect(classification.evidence.contains("usb-Topping_D10s-00"))
        var withBus = sink
        withBus.properties["device.bus"] = "pci"
        #expect(Classifier.classify(withBus).kind == .unknown, "a bus property beats the name")
        var withUdevID = sink
        withUdevID.properties["udev.id"] = "pci-0000_00_1f.3"
        #expect(Classifier.classify(withUdevID).kind == .unknown, "so does a udev id")
        var notALSA = sink
        notALSA.properties = ["device.description": "D10s Analog Stereo"]
        notALSA.ports = []
        notALSA.activePortName = nil
        #expect(Classifier.classify(notALSA).kind != .usb, "the name is read only for an ALSA sink")
    }

    @Test("pipewire-pulse captures: emulated devices, plain, combine and remap sinks")
    func pipewireCapture() throws {
        let sinks = try SinkFixture.sinks("sinks-json/pw0365-null-sinks-emulated-devices.json")
        let kinds = sinks.map { Classifier.classify($0).kind }
        // The emulated built-in (`device.api=alsa device.bus=pci device.form_factor=internal`,
        // description `Builtin`) says built in, not which output: unknown.
        #expect(kinds == [.bluetoothA2DP, .unknown, .virtual, .virtual, .virtual])
    }

    @Test("PulseAudio capture in three languages: same kinds", arguments: ["C", "fr", "de"])
    func pulseAudioCapture(language: String) throws {
        let sinks = try SinkFixture.sinks("sinks-localised/pa16-emulated-devices-\(language).txt")
        let kinds = sinks.map { Classifier.classify($0).kind }
        // `builtin` says only built in (`device.form_factor=internal`, description `Builtin`): unknown.
        #expect(kinds == [.bluetoothA2DP, .virtual, .unknown, .network])
    }

    @Test("Classification is Codable with the kind's raw value")
    func codable() throws {
        let classification = Classification(kind: .bluetoothA2DP, external: true, evidence: "device.bus=bluetooth")
        let data = try JSONEncoder().encode(classification)
        let json = try #require(String(data: data, encoding: .utf8))
        #expect(json.contains("\"bluetooth-a2dp\""))
        #expect(try JSONDecoder().decode(Classification.self, from: data) == classification)
        #expect(!json.contains("forwardsTo"), "no forwarding keys when nothing is forwarded")
        let forwarding = Classification(kind: .virtual, external: false, evidence: "node.virtual=true",
                                        forwardsTo: .bluetoothA2DP, forwardsToSink: "bt")
        let forwardingJSON = try #require(String(data: try JSONEncoder().encode(forwarding), encoding: .utf8))
        #expect(forwardingJSON.contains("\"forwardsTo\":\"bluetooth-a2dp\""))
        #expect(try JSONDecoder().decode(Classification.self, from: Data(forwardingJSON.utf8)) == forwarding)
    }

    private func check(_ test: Case) {
        let classification = Classifier.classify(test.sink)
        #expect(classification.kind == test.kind, "evidence: \(classification.evidence)")
        #expect(classification.external == test.external, "evidence: \(classification.evidence)")
        if let evidence = test.evidence {
            #expect(classification.evidence == evidence)
        }
    }
}
