import Foundation
import Testing
@testable import DuckPrompt
@testable import DuckPromptCore

/// Access to `Tests/DuckPromptTests/Fixtures` (a `.copy("Fixtures")` resource).
enum SinkFixture {
    struct Missing: Error, CustomStringConvertible {
        var path: String
        var description: String { "fixture \(path) is not in the test bundle" }
    }

    /// `Fixtures/<path>` in the test bundle.
    static func url(_ path: String) throws -> URL {
        guard let root = Bundle.module.url(forResource: "Fixtures", withExtension: nil) else {
            throw Missing(path: "Fixtures")
        }
        let url = root.appendingPathComponent(path)
        guard FileManager.default.fileExists(atPath: url.path) else { throw Missing(path: path) }
        return url
    }

    static func text(_ path: String) throws -> String {
        try String(contentsOf: url(path), encoding: .utf8)
    }

    /// The sinks of a dump fixture, read by `SinkDumpReader`.
    static func sinks(_ path: String) throws -> [Sink] {
        try SinkDumpReader.read(text(path))
    }

    /// The one sink of a dump fixture.
    static func sink(_ path: String) throws -> Sink {
        let sinks = try sinks(path)
        try #require(sinks.count == 1, "\(path) should hold one sink, has \(sinks.count)")
        return sinks[0]
    }
}

@Suite("SinkDumpReader")
struct DumpReaderTests {
    // MARK: pactl list sinks

    @Test("pactl 15 Bluetooth block: every field")
    func pactlBluetoothFields() throws {
        let sink = try SinkFixture.sink("sinks/007-pa-bluez-a2dp-headset-6s.txt")
        #expect(sink.index == 3)
        #expect(sink.name == "bluez_sink.00_11_22_33_44_55.a2dp_sink")
        #expect(sink.description == "6S")
        #expect(sink.driver == "module-bluez5-device.c")
        #expect(sink.state == .running)
        #expect(sink.channelMap == ["front-left", "front-right"])
        #expect(sink.ownerModule == 25)
        #expect(sink.mute == false)
        #expect(sink.volume == ChannelVolumes([27866, 27866]))
        #expect(sink.flags == ["HARDWARE", "HW_VOLUME_CTRL", "DECIBEL_VOLUME", "LATENCY"])
        #expect(sink.properties.count == 13)
        #expect(sink.properties["bluetooth.protocol"] == "a2dp_sink")
        #expect(sink.properties["device.intended_roles"] == "phone")
        #expect(sink.ports == [Port(name: "headset-output", description: "Headset", type: .headset,
                                    priority: 0, availability: .yes)])
        #expect(sink.activePortName == "headset-output")
    }

    @Test("pactl, tab-indented block with two ports, one not available")
    func pactlTwoPorts() throws {
        let sink = try SinkFixture.sink("sinks/008-pa-amd-alc257-speaker-active-hp-unplugged.txt")
        #expect(sink.index == 0)
        #expect(sink.name == "alsa_output.pci-0000_06_00.6.analog-stereo")
        #expect(sink.volume == ChannelVolumes([65536, 65536]))
        #expect(sink.properties.count == 30)
        #expect(sink.properties["sysfs.path"] == "/devices/pci0000:00/0000:00:08.1/0000:06:00.6/sound/card1")
        #expect(sink.ports == [
            Port(name: "analog-output-speaker", description: "Speakers", type: .speaker,
                 priority: 10000, availability: .unknown),
            Port(name: "analog-output-headphones", description: "Headphones", type: .headphones,
                 priority: 9900, availability: .no),
        ])
        #expect(sink.activePort?.type == .speaker)
    }

    @Test("pipewire-pulse block pasted without its Sink #N header")
    func headerless() throws {
        let sink = try SinkFixture.sink("sinks/011-pw-bluez-a2dp-wh1000xm5-aac-no-header.txt")
        #expect(sink.index == nil)
        #expect(sink.name == "bluez_output.00_11_22_33_44_55.1")
        #expect(sink.description == "WH-1000XM5")
        #expect(sink.driver == "PipeWire")
        #expect(sink.ownerModule == nil, "4294967295 is PA_INVALID_INDEX")
        #expect(sink.volume == ChannelVolumes([39218, 39218]))
        #expect(sink.properties.count == 41)
        #expect(sink.properties["api.bluez5.profile"] == "a2dp-sink")
        #expect(sink.properties["api.bluez5.transport"] == "")
        #expect(sink.activePortName == "headset-output")
    }

    @Test("two headerless blocks pasted one after the other are two sinks")
    func twoHeaderlessBlocks() throws {
        let text = """
            State: RUNNING
            Name: first
            Driver: PipeWire
            Properties:
                device.api = "alsa"
            State: IDLE
            Name: second
            Driver: PipeWire
            Properties:
                node.virtual = "true"
            """
        let sinks = try SinkDumpReader.read(text)
        #expect(sinks.map(\.name) == ["first", "second"])
        #expect(sinks.map(\.state) == [.running, .idle])
        #expect(sinks[0].properties == ["device.api": "alsa"])
        #expect(sinks[1].properties == ["node.virtual": "true"])
    }

    @Test("PulseAudio 1.1: percent-only volume converted to pa_volume_t, port without type")
    func pulseAudio11() throws {
        let sink = try SinkFixture.sink("sinks/030-pa11-nvidia-gf114-hdmi-not-available.txt")
        #expect(sink.volume == ChannelVolumes([65536, 65536]))
        #expect(sink.ports == [Port(name: "hdmi-output-0", description: "HDMI / DisplayPort",
                                    type: .unknown, priority: 5900, availability: .no)])
        #expect(sink.activePortName == "hdmi-output-0")
        #expect(sink.properties["device.string"] == "hdmi:1")
    }

    @Test("percent volume: v = round(pct / 100 × 65536)")
    func percentVolume() throws {
        let text = """
            Sink #1
                Name: old
                Driver: module-alsa-card.c
                Volume: 0:  60% 1:  60%
                        0: -13.31 dB 1: -13.31 dB
            """
        let sink = try #require(try SinkDumpReader.read(text).first)
        #expect(sink.volume == ChannelVolumes([39322, 39322]))
    }

    @Test("stripped block: spaces, '...' line, ports with availability groups")
    func strippedBlock() throws {
        let sink = try SinkFixture.sink("sinks/017-pw-alc295-headphones-active-stripped.txt")
        #expect(sink.index == 47)
        #expect(sink.state == .running)
        #expect(sink.properties.isEmpty)
        #expect(sink.ports.map(\.availability) == [.no, .yes])
        #expect(sink.ports.map(\.type) == [.speaker, .headphones])
        #expect(sink.ports.map(\.priority) == [10000, 9900])
        #expect(sink.activePortName == "analog-output-headphones")
    }

    @Test("port description with parentheses, priority only")
    func portDescriptionWithParentheses() throws {
        let sink = try SinkFixture.sink("sinks/042-pa12-spdif-iec958-active-vt1828s.txt")
        #expect(sink.ports == [Port(name: "iec958-stereo-output", description: "Digital Output (S/PDIF)",
                                    type: .unknown, priority: 0, availability: .unknown)])
    }

    @Test("truncated tunnel block keeps name, description and driver")
    func truncatedBlock() throws {
        let sink = try SinkFixture.sink("sinks/037-pa-tunnel-sink-module-tunnel-trimmed.txt")
        #expect(sink.index == 49)
        #expect(sink.name == "tunnel.odio.local.alsa_output.platform-soc_sound.stereo-fallback")
        #expect(sink.description == "Built-in Audio Stereo on pi@odio")
        #expect(sink.driver == "module-tunnel.c")
        #expect(sink.ports.isEmpty)
    }

    @Test("pactl 16 in C, French and German reads the same sinks",
          arguments: ["C", "fr", "de"])
    func localised(language: String) throws {
        let sinks = try SinkFixture.sinks("sinks-localised/pa16-emulated-devices-\(language).txt")
        #expect(sinks.map(\.name) == ["bt", "null", "builtin", "tun"])
        #expect(sinks.map(\.index) == [0, 1, 2, 3])
        #expect(sinks.map(\.description) == ["FakeBT", "Null Output", "Builtin", "Null Output on root@vm"])
        #expect(sinks.map(\.driver) == ["module-null-sink.c", "module-null-sink.c",
                                        "module-null-sink.c", "module-tunnel.c"])
        #expect(sinks.map(\.state) == [.idle, .running, .idle, .idle])
        #expect(sinks.map(\.ownerModule) == [1, 2, 3, 4])
        #expect(sinks.allSatisfy { $0.volume == ChannelVolumes([65536, 65536]) })
        #expect(sinks.allSatisfy { $0.channelMap == ["front-left", "front-right"] })
        #expect(sinks[0].properties["api.bluez5.profile"] == "a2dp-sink")
        #expect(sinks[2].properties["device.form_factor"] == "internal")
        #expect(sinks[3].flags.contains("NETWORK"))
        #expect(sinks[3].properties["tunnel.remote.sink"] == "null")
    }

    @Test("French and German headers and port lines without the sink header")
    func localisedPorts() throws {
        let french = """
            \tÉtat\u{00A0}: RUNNING
            \tNom\u{00A0}: alsa_output.pci-0000_00_1f.3.analog-stereo
            \tDescription\u{00A0}: Audio interne Stéréo analogique
            \tPilote\u{00A0}: module-alsa-card.c
            \tSourdine\u{00A0}: oui
            \tPropriétés\u{00A0}:
            \t\tdevice.bus = "pci"
            \tPorts\u{00A0}:
            \t\tanalog-output-speaker: Haut-parleurs (type: Haut-parleur, priority: 10000, availability unknown)
            \t\tanalog-output-headphones: Casque audio (type: Casque audio, priority: 9900, available)
            \tPort actif\u{00A0}: analog-output-headphones
            """
        let fr = try #require(try SinkDumpReader.read(french).first)
        #expect(fr.name == "alsa_output.pci-0000_00_1f.3.analog-stereo")
        #expect(fr.description == "Audio interne Stéréo analogique")
        #expect(fr.driver == "module-alsa-card.c")
        #expect(fr.state == .running)
        #expect(fr.mute)
        #expect(fr.properties == ["device.bus": "pci"])
        #expect(fr.ports.map(\.type) == [.speaker, .headphones])
        #expect(fr.ports.map(\.availability) == [.unknown, .yes])
        #expect(fr.activePortName == "analog-output-headphones")

        let german = """
            Ziel #4
            \tZustand: SUSPENDED
            \tName: alsa_output.usb-Generic_USB_Audio-00.analog-stereo
            \tBeschreibung: USB Audio Analog Stereo
            \tTreiber: module-alsa-card.c
            \tLautstärke: front-left: 32768 /  50% / -18,06 dB,   front-right: 32768 /  50% / -18,06 dB
            \tEigenschaften:
            \t\tdevice.bus = "usb"
            \tPorts:
            \t\tanalog-output-headphones: Kopfhörer (Typ: Kopfhörer, Priorität: 9900, Verfügbarkeitsgruppe: Legacy 2, nicht verfügbar)
            \tAktiver Port: analog-output-headphones
            """
        let de = try #require(try SinkDumpReader.read(german).first)
        #expect(de.index == 4)
        #expect(de.state == .suspended)
        #expect(de.description == "USB Audio Analog Stereo")
        #expect(de.volume == ChannelVolumes([32768, 32768]))
        #expect(de.ports == [Port(name: "analog-output-headphones", description: "Kopfhörer",
                                  type: .headphones, priority: 9900, availability: .no)])
        #expect(de.activePortName == "analog-output-headphones")
    }

    @Test("a language the reader has no words for: structure still gives ports, properties, active port")
    func unknownLanguage() throws {
        let spanish = """
            Destino #2
            \tEstado: RUNNING
            \tNombre: alsa_output.pci-0000_00_1b.0.analog-stereo
            \tControlador: module-alsa-card.c
            \tVolumen: front-left: 45875 /  70% / -9,29 dB,   front-right: 45875 /  70% / -9,29 dB
            \tMonitor de fuente: alsa_output.pci-0000_00_1b.0.analog-stereo.monitor
            \tPropiedades:
            \t\tdevice.bus = "pci"
            \tPuertos:
            \t\tanalog-output-speaker: Altavoces (type: Speaker, priority: 10000, not available)
            \t\tanalog-output-headphones: Auriculares (type: Headphones, priority: 9900, available)
            \tPuerto Activo: analog-output-headphones
            """
        let sink = try #require(try SinkDumpReader.read(spanish).first)
        #expect(sink.index == 2)
        #expect(sink.name == "alsa_output.pci-0000_00_1b.0.analog-stereo", "from the monitor source")
        #expect(sink.state == .running)
        #expect(sink.driver == "module-alsa-card.c")
        #expect(sink.volume == ChannelVolumes([45875, 45875]))
        #expect(sink.properties == ["device.bus": "pci"])
        #expect(sink.ports.count == 2)
        #expect(sink.activePortName == "analog-output-headphones")
    }

    @Test("a full `pactl list`: only Sink blocks are read")
    func fullListSkipsOtherBlocks() throws {
        let text = """
            Module #0
            \tName: module-device-restore
            \tArgument:
            \tProperties:
            \t\tmodule.author = "Lennart Poettering"

            Sink #1
            \tState: IDLE
            \tName: speakers
            \tDriver: module-alsa-card.c
            \tProperties:
            \t\tdevice.bus = "pci"

            Source #1
            \tState: IDLE
            \tName: speakers.monitor
            \tDriver: module-alsa-card.c
            \tProperties:
            \t\tdevice.class = "monitor"

            Sink Input #7
            \tDriver: protocol-native.c
            \tSink: 1
            \tProperties:
            \t\tmedia.role = "music"
            """
        let sinks = try SinkDumpReader.read(text)
        #expect(sinks.count == 1)
        #expect(sinks.first?.name == "speakers")
        #expect(sinks.first?.properties == ["device.bus": "pci"])
    }

    @Test("escaped quotes in property values")
    func escapedPropertyValue() throws {
        let text = #"""
            Sink #0
            	Name: s
            	Driver: module-alsa-card.c
            	Properties:
            		device.description = "The \"Big\" One"
            """#
        let sink = try #require(try SinkDumpReader.read(text).first)
        #expect(sink.properties["device.description"] == #"The "Big" One"#)
    }

    // MARK: pacmd list-sinks

    @Test("pacmd: default marker, angle brackets, decimal comma, port properties dropped")
    func pacmdDefault() throws {
        let result = try SinkDumpReader.readWithDefault(
            SinkFixture.text("sinks/003-pa-bluez-a2dp-speaker-tangent-pacmd-fr.txt"))
        #expect(result.defaultSinkName == "bluez_sink.00_11_22_33_44_55.a2dp_sink")
        let sink = try #require(result.sinks.first)
        #expect(result.sinks.count == 1)
        #expect(sink.index == 2)
        #expect(sink.name == "bluez_sink.00_11_22_33_44_55.a2dp_sink")
        #expect(sink.description == "Tangent Ampster BT", "pacmd has no description: device.description")
        #expect(sink.driver == "module-bluez5-device.c")
        #expect(sink.state == .running)
        #expect(sink.ownerModule == 28)
        #expect(sink.volume == ChannelVolumes([65536, 65536]))
        #expect(sink.channelMap == ["front-left", "front-right"])
        #expect(sink.flags.contains("FLAT_VOLUME"))
        #expect(sink.properties.count == 11)
        #expect(sink.ports == [Port(name: "speaker-output", description: "Haut-parleur", type: .unknown,
                                    priority: 0, availability: .yes)])
        #expect(sink.activePortName == "speaker-output")
    }

    @Test("pacmd: mono volume without dB, availability unknown")
    func pacmdMono() throws {
        let result = try SinkDumpReader.readWithDefault(
            SinkFixture.text("sinks/012-pa-bluez-hsp-headset-head-unit-mdr10rbt-pacmd.txt"))
        let sink = try #require(result.sinks.first)
        #expect(result.defaultSinkName == sink.name)
        #expect(sink.index == 18)
        #expect(sink.volume == ChannelVolumes([37789]))
        #expect(sink.channelMap == ["mono"])
        #expect(sink.ports.first?.availability == .unknown)
    }

    @Test("pacmd: no default marker; a port's own properties stay out of the sink's")
    func pacmdPortProperties() throws {
        let result = try SinkDumpReader.readWithDefault(
            SinkFixture.text("sinks/013-pa-desktop-alc887-lineout-active-pacmd.txt"))
        #expect(result.defaultSinkName == nil)
        let sink = try #require(result.sinks.first)
        #expect(sink.index == 0)
        #expect(sink.state == .suspended)
        #expect(sink.properties.count == 33)
        #expect(sink.properties["device.icon_name"] == "audio-card-pci")
        #expect(sink.ports.map(\.name) == ["analog-output-lineout", "analog-output-headphones"])
        #expect(sink.ports.map(\.availability) == [.yes, .no])
        #expect(sink.ports.map(\.priority) == [9900, 9000])
        #expect(sink.activePortName == "analog-output-lineout")
    }

    @Test("pacmd: several sinks, the starred one is the default")
    func pacmdSeveral() throws {
        let text = """
            2 sink(s) available.
                index: 0
            \tname: <speakers>
            \tdriver: <module-alsa-card.c>
            \tstate: IDLE
              * index: 1
            \tname: <headset>
            \tdriver: <module-bluez5-device.c>
            \tstate: RUNNING
            """
        let result = try SinkDumpReader.readWithDefault(text)
        #expect(result.sinks.map(\.name) == ["speakers", "headset"])
        #expect(result.sinks.map(\.index) == [0, 1])
        #expect(result.defaultSinkName == "headset")
        #expect(SinkDumpReader.detectFormat(text) == .pacmdText)
    }

    // MARK: pactl --format=json

    @Test("pactl 16 JSON captured from a private PulseAudio: emulated devices")
    func jsonPulseAudio() throws {
        let text = try SinkFixture.text("sinks-json/pa16-null-sinks-emulated-devices.json")
        #expect(SinkDumpReader.detectFormat(text) == .pactlJSON)
        let sinks = try SinkDumpReader.read(text)
        #expect(sinks.map(\.name) == ["bt", "null", "builtin", "tun"])
        #expect(sinks.map(\.index) == [0, 1, 2, 3])
        #expect(sinks.map(\.ownerModule) == [1, 2, 3, 4])
        #expect(sinks.map(\.state) == [.idle, .running, .idle, .idle])
        #expect(sinks[0].description == "FakeBT")
        #expect(sinks[0].driver == "module-null-sink.c")
        #expect(sinks[0].volume == ChannelVolumes([65536, 65536]))
        #expect(sinks[0].channelMap == ["front-left", "front-right"])
        #expect(sinks[0].flags == ["DECIBEL_VOLUME", "LATENCY", "SET_FORMATS"])
        #expect(sinks[0].properties["api.bluez5.profile"] == "a2dp-sink")
        #expect(sinks[0].properties["device.class"] == "abstract")
        #expect(sinks[0].ports.isEmpty)
        #expect(sinks[0].activePortName == nil)
        #expect(sinks[3].flags.contains("NETWORK"))
    }

    @Test("pactl JSON from pipewire-pulse 0.3.65")
    func jsonPipeWire() throws {
        let sinks = try SinkFixture.sinks("sinks-json/pw0365-null-sinks-emulated-devices.json")
        #expect(sinks.map(\.name) == ["bt", "builtin", "plain", "combined", "remapped"])
        #expect(sinks.map(\.index) == [36, 39, 42, 49, 55])
        #expect(sinks.allSatisfy { $0.driver == "PipeWire" })
        #expect(sinks[1].properties["factory.name"] == "support.null-audio-sink")
        #expect(sinks[4].volume == ChannelVolumes([65536]))
        #expect(sinks[4].channelMap == ["mono"])
    }

    @Test("a full `pactl --format=json list`: its sinks member is read")
    func jsonFullList() throws {
        let sinks = try SinkFixture.sinks("sinks-json/pa16-list-all.json")
        #expect(sinks.map(\.name) == ["bt", "null", "builtin", "tun"])
    }

    @Test("text and JSON of the same server read to the same sinks", arguments: [
        ("sinks-localised/pa16-emulated-devices-C.txt", "sinks-json/pa16-null-sinks-emulated-devices.json"),
        ("sinks-localised/pa16-emulated-devices-de.txt", "sinks-json/pa16-null-sinks-emulated-devices.json"),
        ("sinks-localised/pw0365-emulated-devices-C.txt", "sinks-json/pw0365-null-sinks-emulated-devices.json"),
    ])
    func textMatchesJSON(text: String, json: String) throws {
        let fromText = try SinkFixture.sinks(text)
        let fromJSON = try SinkFixture.sinks(json)
        #expect(fromText.count == fromJSON.count)
        for (a, b) in zip(fromText, fromJSON) {
            #expect(a == b)
        }
    }

    /// pactl 16 prints ports as `pa_sink_ports_to_json_array` encodes them; the captured
    /// servers had only port-less null sinks, so this sample follows that encoder.
    @Test("JSON ports, availability words, volumes in channel-map order, percent-only value")
    func jsonPorts() throws {
        let text = """
            [{"index":5,"state":"RUNNING","name":"alsa_output.pci-0000_00_1f.3.analog-surround-21",
              "description":"Built-in Audio","driver":"module-alsa-card.c",
              "channel_map":"front-right,front-left,lfe","owner_module":4294967295,"mute":true,
              "volume":{"front-left":{"value":39218,"value_percent":"60%","db":"-13.38 dB"},
                        "lfe":{"value_percent":"50%","db":null},
                        "front-right":{"value":65536,"value_percent":"100%","db":"0.00 dB"}},
              "flags":["HARDWARE"],"properties":{"device.bus":"pci"},
              "ports":[{"name":"analog-output-speaker","description":"Speakers","type":"Speaker",
                        "priority":10000,"availability_group":"Legacy 3","availability":"not available"},
                       {"name":"analog-output-headphones","description":"Headphones","type":"Headphones",
                        "priority":9900,"availability_group":null,"availability":"available"},
                       {"name":"analog-output-lineout","description":"Line Out","type":"Unknown-42",
                        "priority":9000,"availability_group":null,"availability":"availability unknown"}],
              "active_port":"analog-output-headphones","formats":["pcm"]}]
            """
        let sink = try #require(try SinkDumpReader.read(text).first)
        #expect(sink.index == 5)
        #expect(sink.ownerModule == nil)
        #expect(sink.mute)
        #expect(sink.state == .running)
        #expect(sink.volume == ChannelVolumes([65536, 39218, 32768]))
        #expect(sink.ports == [
            Port(name: "analog-output-speaker", description: "Speakers", type: .speaker,
                 priority: 10000, availability: .no),
            Port(name: "analog-output-headphones", description: "Headphones", type: .headphones,
                 priority: 9900, availability: .yes),
            Port(name: "analog-output-lineout", description: "Line Out", type: .unknown,
                 priority: 9000, availability: .unknown),
        ])
        #expect(sink.activePortName == "analog-output-headphones")
    }

    // MARK: wpctl inspect

    @Test("wpctl inspect of a sink node")
    func wpctlInspect() throws {
        let text = """
            id 56, type PipeWire:Interface:Node
                alsa.card = "0"
                api.alsa.path = "front:0"
              * device.api = "alsa"
                device.bus = "usb"
              * media.class = "Audio/Sink"
              * node.description = "USB Audio Analog Stereo"
              * node.name = "alsa_output.usb-Generic_USB_Audio-00.analog-stereo"
                object.serial = "58"
            """
        #expect(SinkDumpReader.detectFormat(text) == .wpctlInspect)
        let sink = try #require(try SinkDumpReader.read(text).first)
        #expect(sink.index == 58)
        #expect(sink.name == "alsa_output.usb-Generic_USB_Audio-00.analog-stereo")
        #expect(sink.description == "USB Audio Analog Stereo")
        #expect(sink.properties["device.bus"] == "usb")
        #expect(sink.properties.count == 8)
    }

    // MARK: Not a dump

    @Test("input that is no sink dump throws .unsupportedData", arguments: [
        "",
        "hello world\nthis is not a dump\n",
        "key: value\nother: thing\n",
        "device.api = \"alsa\"\n",
        "{\"not\": \"a sink\"}",
        "[1, 2, 3]",
        "[{\"broken\": ",
        "Source #0\n\tName: mic\n\tDriver: module-alsa-card.c\n",
    ])
    func garbage(text: String) throws {
        let error = #expect(throws: DuckPromptError.self) { try SinkDumpReader.read(text) }
        #expect(error?.code == .unsupportedData)
        #expect(error?.message.hasPrefix("is not a sink dump: duckprompt reads `pactl list sinks`") == true)
    }
}

@Suite("Dumps with no named sink")
struct NamelessDumpTests {
    @Test("blocks that name no sink (random text with a key: value line) are refused: no sinks found", arguments: [
        "Sink #1\n\tState: RUNNING\n",
        "\tDriver: module-null-sink.c\n\tMute: no\n",
        "\u{7}x: 3\nDriver: y\n",
    ])
    func nameless(text: String) throws {
        let error = #expect(throws: DuckPromptError.self) { try SinkDumpReader.readSnapshot(text) }
        #expect(error?.code == .unsupportedData)
        #expect(error?.message.hasPrefix("no sinks found (no sink block in it has a name or a port): duckprompt reads `pactl list sinks`") == true,
                "\(String(describing: error))")
        #expect(error?.message.hasSuffix(DumpRefusal.nearest(.pactlText)) == true, "what it lacks: \(String(describing: error))")
    }
}

@Suite("DumpLine normalization")
struct DumpLineNormalizationTests {
    @Test("CR LF and CR end lines; no-break, narrow and figure spaces are spaces; the full-width colon is a colon")
    func normalized() {
        #expect(DumpLine.normalized("a\r\nb\rc\u{00A0}d\u{202F}e\u{2007}f\u{FF1A}g\r\n\r\n") == "a\nb\nc d e f:g\n\n")
        let plain = "Sink #1\n\tName: x\n"
        #expect(DumpLine.normalized(plain) == plain)
        #expect(DumpLine.lines(of: "Sink #1\r\n\tName\u{FF1A} x").map(\.text) == ["Sink #1", "Name: x"])
    }
}
