import Testing
@testable import DuckPrompt
@testable import DuckPromptCore

/// The families of hardware issue 17 names, each a table built from properties (never from
/// a file or a sink name): ALSA devices that say what they are only in their own names,
/// PipeWire's split-port and pro-audio profiles, network sinks on PipeWire, JACK sinks, and a
/// card seen without any port.
@Suite("Classifier families")
struct ClassifierFamilyTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var label: String
        var sink: Sink
        var kind: DeviceKind
        /// A part the evidence must contain.
        var evidence: String
        var testDescription: String { label }
    }

    /// An ALSA sink on PipeWire as pactl shows it: `properties` over what every ALSA node has;
    /// `port` its one generic port (nil: the dump lists none).
    static func alsa(_ properties: [String: String], port: Port? = Port(name: "analog-output", description: "Analog Output",
                                                                          type: .analog),
                     description: String = "Built-in Audio") -> Sink {
        var all = ["device.api": "alsa", "device.class": "sound", "media.class": "Audio/Sink",
                   "device.form_factor": "internal"]
        all.merge(properties) { _, new in new }
        return Sink(index: 7, name: "sink", description: description, driver: "PipeWire",
                    ports: port.map { [$0] } ?? [], activePortName: port?.name, properties: all)
    }

    // MARK: 1. ALSA names

    static let alsaNames: [Case] = [
        Case(label: "Raspberry Pi 4 headphone jack: card bcm2835 Headphones, a generic port",
             sink: alsa(["alsa.card_name": "bcm2835 Headphones", "alsa.name": "bcm2835 Headphones", "alsa.id": "Headphones",
                         "alsa.mixer_name": "Broadcom Mixer", "device.bus_path": "platform-fe00b840.mailbox"]),
             kind: .headphones, evidence: "alsa.name=bcm2835 Headphones (its ALSA PCM or profile name)"),
        Case(label: "Raspberry Pi on PulseAudio: bcm2835 HDMI 1",
             sink: Sink(name: "sink", driver: "module-alsa-card.c",
                        ports: [Port(name: "analog-output", type: .analog)], activePortName: "analog-output",
                        properties: ["alsa.card_name": "bcm2835 HDMI 1", "alsa.id": "b1", "device.api": "alsa",
                                     "device.bus_path": "platform-bcm2835_audio", "device.form_factor": "internal"]),
             kind: .hdmi, evidence: "alsa.card_name=bcm2835 HDMI 1"),
        Case(label: "Raspberry Pi 4 vc4-hdmi card (KMS driver)",
             sink: alsa(["alsa.card_name": "vc4-hdmi-0", "alsa.id": "vc4hdmi0", "alsa.name": "MAI PCM i2s-hifi-0"]),
             kind: .hdmi, evidence: "alsa.id=vc4hdmi0"),
        Case(label: "a SoC codec's UCM HDMI device with no port: HiFi: HDMI1",
             sink: alsa(["api.alsa.pcm.card": "0", "device.profile.name": "HiFi: HDMI1: sink", "alsa.card_name": "sof-hda-dsp"],
                        port: nil),
             kind: .hdmi, evidence: "device.profile.name=HiFi: HDMI1: sink (its ALSA PCM or profile name; the dump lists no ports)"),
        Case(label: "a SoC codec's UCM speaker with no port: node.nick Speaker",
             sink: alsa(["api.alsa.pcm.card": "0", "node.nick": "Speaker", "alsa.card_name": "mt8183_mt6358_ts3a227_max98357a"],
                        port: nil),
             kind: .speaker, evidence: "node.nick=Speaker"),
        Case(label: "the ALSA dummy card (snd-dummy) is virtual: nothing is heard",
             sink: alsa(["alsa.card_name": "Dummy", "alsa.driver_name": "snd_dummy", "alsa.long_card_name": "Dummy 1"]),
             kind: .virtual, evidence: "alsa.driver_name=snd_dummy (the ALSA dummy card"),
        Case(label: "a card whose names say nothing is unknown, not speaker (form factor internal, generic port)",
             sink: alsa(["alsa.card_name": "HDA Intel PCH", "alsa.name": "ALC892 Analog", "alsa.mixer_name": "Realtek ALC892",
                         "alsa.long_card_name": "HDA Intel PCH at 0xf7f10000 irq 31"],
                        description: "Built-in Audio Analog Stereo"),
             kind: .unknown, evidence: "its names say nothing (alsa.name=ALC892 Analog"),
        Case(label: "a name naming two outputs (Speaker + Headphones) decides nothing",
             sink: alsa(["alsa.card_name": "sof-hda-dsp", "node.nick": "Speaker + Headphones"], description: "Speaker + Headphones"),
             kind: .unknown, evidence: "decides nothing"),
        Case(label: "an HDMI-only card named by its card and mixer (HDA NVidia, Nvidia GPU HDMI/DP)",
             sink: alsa(["alsa.card_name": "HDA NVidia", "alsa.mixer_name": "Nvidia GPU 8b HDMI/DP", "alsa.name": "HDMI 0"]),
             kind: .hdmi, evidence: "alsa.name=HDMI 0"),
    ]

    @Test("ALSA devices that say what they are only in their names", arguments: alsaNames)
    func names(_ test: Case) { check(test) }

    // MARK: 2. Split-port and pro-audio profiles

    static let profiles: [Case] = [
        Case(label: "split-port headphones: device.profile.name analog-stereo-headphones",
             sink: alsa(["alsa.card_name": "HDA Intel PCH", "device.profile.name": "analog-stereo-headphones"], port: nil,
                        description: "Built-in Audio Headphones"),
             kind: .headphones, evidence: "device.profile.name=analog-stereo-headphones"),
        Case(label: "split-port speaker known only by its description (a dump cut before its profile)",
             sink: alsa(["alsa.card_name": "HDA Intel PCH", "alsa.name": "ALC221 Alt Analog"], port: nil,
                        description: "Built-in Audio Speaker"),
             kind: .speaker, evidence: "description=Built-in Audio Speaker (its description; the dump lists no ports)"),
        Case(label: "pro-audio profile whose PCM is HDMI",
             sink: alsa(["device.profile.name": "pro-output-3", "alsa.name": "HDMI 0", "alsa.card_name": "HDA Intel PCH"], port: nil,
                        description: "Built-in Audio Pro 3"),
             kind: .hdmi, evidence: "alsa.name=HDMI 0"),
        Case(label: "pro-audio profile whose PCM is analog: unknown (analog says no output)",
             sink: alsa(["device.profile.name": "pro-output-0", "alsa.name": "ALC1220 Analog", "alsa.card_name": "HDA Intel PCH"],
                        port: nil, description: "Built-in Audio Pro"),
             kind: .unknown, evidence: "no decisive property and no port"),
        Case(label: "pro-audio profile whose PCM is the codec's S/PDIF (ALC892 Digital)",
             sink: alsa(["device.profile.name": "pro-output-1", "alsa.name": "ALC892 Digital"], port: nil, description: "Built-in Audio Pro 1"),
             kind: .lineOut, evidence: "alsa.name=ALC892 Digital"),
    ]

    @Test("PipeWire's split-port and pro-audio profiles", arguments: profiles)
    func splitAndPro(_ test: Case) { check(test) }

    // MARK: 3. Network sinks on PipeWire

    static let network: [Case] = [
        Case(label: "RAOP (AirPlay) sink from module-raop-discover",
             sink: Sink(name: "raop_sink.Sonos-5C.local.192.168.1.20.7000", description: "Living Room", driver: "PipeWire",
                        properties: ["raop.ip": "192.168.1.20", "raop.port": "7000", "raop.name": "Living Room",
                                     "raop.hostname": "Sonos-5C.local", "media.class": "Audio/Sink",
                                     "device.icon_name": "audio-speakers"]),
             kind: .network, evidence: "raop.hostname=Sonos-5C.local"),
        Case(label: "RAOP sink cut down to its node name",
             sink: Sink(name: "raop_sink.ht-a7000.local.192.168.0.35.7000", driver: "PipeWire",
                        properties: ["node.name": "raop_sink.ht-a7000.local.192.168.0.35.7000", "media.class": "Audio/Sink"]),
             kind: .network, evidence: "the name raop_sink."),
        Case(label: "RTP session sink (sess.* properties)",
             sink: Sink(name: "rtp_session.host", driver: "PipeWire",
                        properties: ["sess.name": "PipeWire RTP stream", "sess.media": "audio", "media.class": "Audio/Sink",
                                     "node.virtual": "true"]),
             kind: .network, evidence: "sess.media=audio"),
        Case(label: "pulse tunnel on PipeWire (module-pulse-tunnel)",
             sink: Sink(name: "tunnel.server.local", driver: "PipeWire",
                        properties: ["tunnel.mode": "sink", "pulse.server.address": "tcp:server.local:4713",
                                     "media.class": "Audio/Sink"]),
             kind: .network, evidence: "pulse.server.address=tcp:server.local:4713"),
        Case(label: "snapcast sink",
             sink: Sink(name: "snapcast-sink", driver: "PipeWire",
                        properties: ["snapcast.name": "kitchen", "media.class": "Audio/Sink", "node.virtual": "true"]),
             kind: .network, evidence: "snapcast.name=kitchen"),
        Case(label: "a null sink a user named tunnel.x but that carries device properties is not network",
             sink: Sink(name: "tunnel.x", driver: "module-null-sink.c",
                        properties: ["device.api": "bluez5", "device.bus": "bluetooth", "api.bluez5.profile": "a2dp-sink"]),
             kind: .bluetoothA2DP, evidence: "api.bluez5.profile=a2dp-sink"),
    ]

    @Test("network sinks on PipeWire: RAOP, RTP, tunnels, snapcast", arguments: network)
    func networkSinks(_ test: Case) { check(test) }

    // MARK: 4. JACK

    static let jack: [Case] = [
        Case(label: "PulseAudio module-jack-sink",
             sink: Sink(name: "jack_out", description: "Jack sink (PulseAudio JACK Sink)", driver: "module-jack-sink.c",
                        properties: ["device.api": "jack", "jack.client_name": "PulseAudio JACK Sink", "device.class": "sound"]),
             kind: .virtual, evidence: "driver module-jack-sink.c (the device is behind JACK)"),
        Case(label: "a JACK sink known by its properties alone",
             sink: Sink(name: "jack_out", driver: "PipeWire",
                        properties: ["jack.client_name": "PipeWire", "jack.server": "default", "media.class": "Audio/Sink"]),
             kind: .virtual, evidence: "jack.client_name=PipeWire (the device is behind JACK)"),
    ]

    @Test("a JACK sink is virtual: the device is behind JACK", arguments: jack)
    func jackSinks(_ test: Case) { check(test) }

    // MARK: 5. No port information at all

    static let noPorts: [Case] = [
        Case(label: "a PCI card through wpctl inspect: no ports, its PCM name says S/PDIF",
             sink: Sink(name: "sink", driver: "",
                        properties: ["device.api": "alsa", "device.bus": "pci", "device.form-factor": "internal",
                                     "alsa.card_name": "HDA Intel PCH", "alsa.name": "ALC887-VD Digital",
                                     "device.profile.name": "pro-output-1", "media.class": "Audio/Sink"]),
             kind: .lineOut, evidence: "alsa.name=ALC887-VD Digital (its ALSA PCM or profile name; the dump lists no ports)"),
        Case(label: "a PCI card through wpctl inspect: no ports, a Line Out PCM",
             sink: Sink(name: "sink", driver: "",
                        properties: ["device.api": "alsa", "device.bus": "pci", "device.form-factor": "internal",
                                     "node.nick": "Xonar DG Line Out", "media.class": "Audio/Sink"]),
             kind: .lineOut, evidence: "node.nick=Xonar DG Line Out (its ALSA PCM or profile name; the dump lists no ports)"),
        Case(label: "a PCI card through wpctl inspect whose names say nothing: unknown, the evidence says no port",
             sink: Sink(name: "sink", driver: "",
                        properties: ["device.api": "alsa", "device.bus": "pci", "device.form-factor": "internal",
                                     "alsa.card_name": "HDA Intel PCH", "alsa.name": "ALC887-VD Analog",
                                     "media.class": "Audio/Sink"]),
             kind: .unknown, evidence: "no decisive property and no port; its names say nothing"),
        Case(label: "pw-cli ls Node: only object.path says ALSA, node.nick says HDMI",
             sink: Sink(name: "alsa_output.x", driver: "",
                        properties: ["object.path": "alsa:pcm:0:hw:sofhdadsp,4:playback", "media.class": "Audio/Sink",
                                     "node.nick": "HDMI / DisplayPort 2 Output"]),
             kind: .hdmi, evidence: "node.nick=HDMI / DisplayPort 2 Output"),
        Case(label: "pw-cli ls Node: only object.path says ALSA, its names say nothing: unknown, not virtual",
             sink: Sink(name: "alsa_output.pci-0000_00_1f.3.analog-stereo", driver: "",
                        properties: ["object.path": "alsa:pcm:0:front:0:playback", "media.class": "Audio/Sink",
                                     "node.nick": "ALC892 Analog", "node.description": "Built-in Audio Analog Stereo"]),
             kind: .unknown, evidence: "no port"),
        Case(label: "pw-cli ls Node: factory.name api.alsa.pcm.sink alone is ALSA too: unknown, not virtual",
             sink: Sink(name: "alsa_output.x", driver: "",
                        properties: ["factory.name": "api.alsa.pcm.sink", "media.class": "Audio/Sink"]),
             kind: .unknown, evidence: "no port"),
        Case(label: "an analog PCM on an HDA card whose mixer is named for its HDMI codec is not HDMI",
             sink: Sink(name: "alsa_output.pci-0000_00_1b.0.analog-stereo", driver: "",
                        properties: ["device.api": "alsa", "device.bus": "pci", "alsa.name": "ALC269VC Analog",
                                     "alsa.card_name": "HDA Intel PCH", "alsa.mixer_name": "Intel PantherPoint HDMI",
                                     "media.class": "Audio/Sink"]),
             kind: .unknown, evidence: "its names say nothing"),
        Case(label: "a card's mixer name decides when its PCM names say neither analog nor a kind",
             sink: Sink(name: "alsa_output.platform-hdmi-audio-codec.3.auto.hdmi-stereo", driver: "",
                        properties: ["device.api": "alsa", "alsa.name": "MAI PCM i2s-hifi-0", "alsa.card_name": "rockchip-audio",
                                     "alsa.mixer_name": "HDMI", "media.class": "Audio/Sink"]),
             kind: .hdmi, evidence: "alsa.mixer_name=HDMI (its card's name"),
        Case(label: "an analog PCM stops the card's names: a card named for HDMI does not decide it (the analog guess does, said as one)",
             sink: Sink(name: "alsa_output.x.analog-stereo", driver: "",
                        properties: ["device.api": "alsa", "alsa.name": "Analog", "device.profile.name": "analog-stereo",
                                     "alsa.card_name": "HDA Intel HDMI", "media.class": "Audio/Sink"]),
             kind: .lineOut, evidence: "device.profile.name=analog-stereo (a guess"),
        Case(label: "the analog guess is not made where a form factor is given (internal says nothing of which jack)",
             sink: Sink(name: "alsa_output.x.analog-stereo", driver: "",
                        properties: ["device.api": "alsa", "alsa.name": "Analog", "device.profile.name": "analog-stereo",
                                     "device.form_factor": "internal", "media.class": "Audio/Sink"]),
             kind: .unknown, evidence: "its names say nothing"),
        Case(label: "a card's name decides when its PCM says nothing of analog (vc4-hdmi)",
             sink: Sink(name: "alsa_output.platform-fef00700.hdmi.hdmi-stereo", driver: "",
                        properties: ["device.api": "alsa", "alsa.name": "MAI PCM i2s-hifi-0",
                                     "alsa.card_name": "vc4-hdmi-0", "media.class": "Audio/Sink"]),
             kind: .hdmi, evidence: "alsa.card_name=vc4-hdmi-0 (its card's name; the dump lists no ports)"),
        Case(label: "a split-port sink's description decides, named as its description",
             sink: Sink(name: "alsa_output.x.HiFi__Headphones__sink", driver: "",
                        properties: ["device.api": "alsa", "alsa.name": "ALC257 Analog",
                                     "device.description": "Built-in Audio Headphones", "media.class": "Audio/Sink"]),
             kind: .headphones, evidence: "device.description=Built-in Audio Headphones (its description"),
        Case(label: "names are read only for an ALSA sink: a filter described as Headphones EQ stays virtual",
             sink: Sink(name: "effect_input.eq", description: "Headphones EQ", driver: "PipeWire",
                        properties: ["node.description": "Headphones EQ", "media.class": "Audio/Sink",
                                     "node.link-group": "filter-chain-1-2"]),
             kind: .virtual, evidence: "node.link-group=filter-chain-1-2"),
    ]

    @Test("cards seen without any port: decided from what is there, the evidence says what was missing", arguments: noPorts)
    func withoutPorts(_ test: Case) { check(test) }

    // MARK: Words

    @Test("which words of a name say a kind", arguments: [
        ("bcm2835 Headphones", DeviceKind.headphones), ("vc4-hdmi-1", .hdmi), ("HiFi: HDMI1", .hdmi),
        ("HDMI / DisplayPort 2 Output", .hdmi), ("DP2", .hdmi), ("[Out] Speaker", .speaker), ("Line Out", .lineOut),
        ("ALC892 Digital", .lineOut), ("Digital Stereo (HDMI)", .hdmi), ("S/PDIF", .lineOut), ("IEC958", .lineOut),
        ("Speaker + Headphones", .unknown), ("HDA Intel PCH", .unknown), ("ALC221 Alt Analog", .unknown),
        ("Lineout", .lineOut), ("Line In", .unknown), ("Dpkg", .unknown),
    ])
    func words(name: String, kind: DeviceKind) {
        #expect((ALSANames.kind(ofName: name) ?? .unknown) == kind, "\(name)")
    }

    private func check(_ test: Case) {
        let classification = Classifier.classify(test.sink)
        #expect(classification.kind == test.kind, "evidence: \(classification.evidence)")
        #expect(classification.evidence.contains(test.evidence), "evidence: \(classification.evidence)")
    }
}
