import Foundation
import Testing
@testable import DuckPrompt
@testable import DuckPromptCore

/// The formats people paste besides a plain listing (issue 17): fixtures in `Fixtures/formats/`
/// (see its README for where each comes from).
@Suite("SinkDumpReader: pasted formats")
struct DumpFormatTests {
    static let hdmiName = "alsa_output.pci-0000_00_1f.3-platform-skl_hda_dsp_generic.HiFi__hw_sofhdadsp_4__sink"

    @Test("pw-cli ls Node, pw-cli info and wpctl 0.5 inspect -r of one node read to the same sink", arguments: [
        ("formats/pw-cli-ls-node-sof-hdmi-dp2.txt", SinkDumpFormat.pwCli, SinkState.unknown, 11),
        ("formats/pw-cli-info-node-sof-hdmi-dp2.txt", .pwCli, .suspended, 24),
        ("formats/wpctl05-inspect-r-node-sof-hdmi-dp2.txt", .wpctlInspect, .unknown, 25 + 8),
    ])
    func pipeWireNode(path: String, format: SinkDumpFormat, state: SinkState, propertyCount: Int) throws {
        let text = try SinkFixture.text(path)
        #expect(SinkDumpReader.detectFormat(text) == format)
        let sink = try SinkFixture.sink(path)
        #expect(sink.index == 503, "object.serial")
        #expect(sink.name == Self.hdmiName)
        #expect(sink.description == "Comet Lake PCH-LP cAVS HDMI / DisplayPort 2 Output")
        #expect(sink.driver == "PipeWire")
        #expect(sink.state == state)
        #expect(sink.properties["media.class"] == "Audio/Sink")
        #expect(sink.properties["device.id"] == "42")
        #expect(sink.properties.count == propertyCount)
        #expect(sink.ports.isEmpty)
    }

    @Test("wpctl inspect -r: the referenced device's properties are added where the node has none; the client's are not")
    func wpctlReferencedDevice() throws {
        let sink = try SinkFixture.sink("formats/wpctl05-inspect-r-node-sof-hdmi-dp2.txt")
        #expect(sink.properties["device.form-factor"] == "internal")
        #expect(sink.properties["device.bus"] == "pci")
        #expect(sink.properties["device.icon-name"] == "audio-card-analog-pci", "hyphenated keys kept as printed")
        #expect(sink.properties["media.class"] == "Audio/Sink", "the node's own class, not the device's")
        #expect(sink.properties["application.name"] == nil)
    }

    @Test("pw-cli ls: nodes without media.class or of another class are no sinks; a Device lends its properties")
    func pwCliOtherNodes() throws {
        let text = """
            \tid 28, type PipeWire:Interface:Node/3
             \t\tnode.name = "Dummy-Driver"
            \tid 43, type PipeWire:Interface:Node/3
             \t\tnode.name = "v4l2_input.pci-0000_00_14.0-usb-0_8_1.0"
             \t\tmedia.class = "Video/Source"
            \tid 42, type PipeWire:Interface:Device/3
             \t\tdevice.api = "bluez5"
             \t\tdevice.description = "WH-1000XM4"
            \tid 77, type PipeWire:Interface:Node/3
             \t\tobject.serial = "90"
             \t\tdevice.id = "42"
             \t\tnode.name = "bluez_output.00_11_22_33_44_55.1"
             \t\tmedia.class = "Audio/Sink"
            """
        let sinks = try SinkDumpReader.read(text)
        #expect(sinks.map(\.name) == ["bluez_output.00_11_22_33_44_55.1"])
        #expect(sinks.first?.description == "WH-1000XM4", "device.description of its device")
        #expect(sinks.first?.properties["device.api"] == "bluez5")
    }

    @Test("one pw-dump node object, cut off in its params (before Props: no volume) or whole with its trailing comma", arguments: [
        ("formats/pw-dump-one-node-cut-off.json", ChannelVolumes([])),
        ("formats/pw-dump-one-node-trailing-comma.json", ChannelVolumes([39321, 39321])),
    ])
    func pwDumpObject(path: String, volume: ChannelVolumes) throws {
        let text = try SinkFixture.text(path)
        #expect(SinkDumpReader.detectFormat(text) == .pwDump)
        let sink = try SinkFixture.sink(path)
        #expect(sink.index == 53)
        #expect(sink.name == "bt_headset")
        #expect(sink.description == "BT-Headset")
        #expect(sink.driver == "PipeWire")
        #expect(sink.properties["api.bluez5.profile"] == "a2dp-sink")
        #expect(sink.properties["device.form_factor"] == "headset", "renamed as pipewire-pulse does")
        #expect(sink.volume == volume, "from its Props param: 60% is 39321 by cbrt, as pipewire-pulse")
    }

    @Test("echo $(pacmd list-sinks): the glob-expanded '*' marks the default; fields, properties, port")
    func pacmdOneLine() throws {
        let text = try SinkFixture.text("formats/pacmd-echo-one-line-glob.txt")
        #expect(SinkDumpReader.detectFormat(text) == .oneLine)
        let result = try SinkDumpReader.readWithDefault(text)
        let original = try SinkDumpReader.readWithDefault(
            SinkFixture.text("sinks/012-pa-bluez-hsp-headset-head-unit-mdr10rbt-pacmd.txt"))
        #expect(result.defaultSinkName == "bluez_sink.00_11_22_33_44_55.headset_head_unit")
        // Every field (index 18, the mono volume and map, 13 properties, the port and the
        // active port) as read from the listing itself.
        #expect(result.sinks == original.sinks)
        #expect(result.sinks.first?.activePortName == "headset-output")
    }

    @Test("echo $(pactl list sinks) reads to the same sinks as the listing")
    func pactlOneLine() throws {
        let sinks = try SinkFixture.sinks("formats/pactl-echo-one-line.txt")
        let original = try SinkFixture.sinks("sinks-localised/pa16-emulated-devices-C.txt")
        #expect(sinks.map(\.name) == ["bt", "null", "builtin", "tun"])
        #expect(sinks == original)
    }

    @Test("echo $(pactl list sinks) in de_CH ('Profile:', 'Aktive Profile:') reads as the listing")
    func germanOneLine() throws {
        let text = try SinkFixture.text("formats/pa-alc257-pactl-de_CH.txt")
        let oneLine = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0.isNewline }).joined(separator: " ")
        let sinks = try SinkDumpReader.read(oneLine)
        #expect(sinks.first?.activePortName == "analog-output-speaker")
        #expect(sinks == [try SinkFixture.sink("formats/pa-alc257-pactl-de_CH.txt")])
    }

    @Test("echo $(pactl …) and echo $(pacmd …) of a UCM sink keep port names with a blank ('[Out] Headphones')",
          arguments: ["formats/pa-ucm-sof-essx8336-pactl.txt", "formats/pa-ucm-sof-essx8336-pacmd.txt"])
    func ucmOneLine(fixture: String) throws {
        let text = try SinkFixture.text(fixture)
        let oneLine = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0.isNewline }).joined(separator: " ")
        let listing = try SinkDumpReader.read(text)
        let pasted = try SinkDumpReader.read(oneLine)
        #expect(listing.first?.ports.map(\.name) == ["[Out] Speaker", "[Out] Headphones"])
        #expect(pasted.first?.ports.map(\.name) == ["[Out] Speaker", "[Out] Headphones"])
        #expect(pasted.first?.activePortName == listing.first?.activePortName)
        #expect(listing.first?.activePortName?.hasPrefix("[Out] ") == true)
        #expect(pasted == listing)
    }

    @Test("a one-line paste in another language is refused as a one-line listing, not read wrong")
    func japaneseOneLine() throws {
        let text = try SinkFixture.text("formats/pa-alc257-pactl-ja.txt")
        let oneLine = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0.isNewline }).joined(separator: " ")
        let error = #expect(throws: DuckPromptError.self) { try SinkDumpReader.read(oneLine) }
        #expect(error?.code == .unsupportedData)
        #expect(error?.message.hasSuffix(DumpRefusal.oneLineReason) == true, "\(String(describing: error?.message))")
        #expect(error?.message.contains("line 1: '") == true)
    }

    @Test("pactl JSON under a decimal-comma locale reads as the valid JSON does")
    func decimalCommaJSON() throws {
        let sinks = try SinkFixture.sinks("formats/pa16-json-decimal-comma-de.json")
        let original = try SinkFixture.sinks("sinks-json/pa16-null-sinks-emulated-devices.json")
        #expect(sinks == original)
        #expect(sinks.first?.volume == ChannelVolumes([65536, 65536]))
    }

    @Test("decimal commas: member numbers repaired; arrays, strings and valid JSON untouched", arguments: [
        (#"{"balance":0,00,"a":1}"#, #"{"balance":0.00,"a":1}"#),
        (#"{"latency":{"actual":212244,00,"configured":-2,50}}"#, #"{"latency":{"actual":212244.00,"configured":-2.50}}"#),
        (#"{"db":"-4,00 dB","v":[1,2]}"#, nil),
        (#"{"a": 1, "b": 2}"#, nil),
        (#"[1,23,{"x":"y:1,2"}]"#, nil),
    ])
    func decimalCommaRepair(text: String, expected: String?) {
        #expect(DecimalCommaJSON.repaired(text) == expected)
    }

    @Test("cut-off JSON is cut at its last whole value and closed; whole JSON is left alone", arguments: [
        (#"[{"a":{"b":"c","d":[1,2"#, #"[{"a":{"b":"c","d":[1]}}]"#),
        (#"[{"a":1},]"#, #"[{"a":1}]"#),
        (#"{"a":"unterminated"#, #"{}"#),
        (#"{"a":tru"#, #"{}"#),
        (#"{"a":[]}"#, nil),
    ])
    func truncatedJSON(text: String, expected: String?) {
        #expect(TruncatedJSON.closed(text) == expected)
    }

    @Test("cut-off JSON nested 20000 brackets deep is closed at its depth (the closers are found in one pass)")
    func deeplyNestedJSON() {
        let open = String(repeating: "[{\"a\":", count: 10000)
        let closed = TruncatedJSON.closed(open + "1")
        // Cut after the last `{` (the `1` may have been cut short), every bracket closed.
        #expect(closed == open.dropLast(4) + String(repeating: "}]", count: 10000))
        let scan = TruncatedJSON.scan(String(repeating: "[", count: 20000))
        #expect(scan.closers == String(repeating: "]", count: 20000))
        #expect(scan.cut == 20000)
    }

    @Test("pactl in zh_CN, zh_TW, ja, ko and de_CH ('Profile:') reads as the English original", arguments: [
        "zh_CN", "zh_TW", "ja", "ko", "de_CH",
    ])
    func translated(language: String) throws {
        let sink = try SinkFixture.sink("formats/pa-alc257-pactl-\(language).txt")
        let original = try SinkFixture.sink("sinks/008-pa-amd-alc257-speaker-active-hp-unplugged.txt")
        #expect(sink.index == 0)
        #expect(sink.name == "alsa_output.pci-0000_06_00.6.analog-stereo")
        #expect(sink.description == original.description)
        #expect(sink.driver == "module-alsa-card.c")
        #expect(sink.state == .running)
        #expect(sink.mute == false)
        #expect(sink.volume == ChannelVolumes([65536, 65536]))
        #expect(sink.channelMap == ["front-left", "front-right"])
        #expect(sink.ownerModule == 8)
        #expect(sink.properties == original.properties)
        #expect(sink.ports == original.ports)
        #expect(sink.activePortName == "analog-output-speaker")
        #expect(sink == original)
    }

    @Test("a refused dump names the formats read, the first line no reader takes, and the format it is nearest", arguments: [
        ("hello world\nthis is not a dump\n", "line 1: 'hello world' is in none of them; it is nearest `pactl list sinks`"),
        ("Sink #1\n\tName: x\n", nil),
        ("\n\nkey: value\nother: thing\n", "line 3: 'key: value' starts no sink; it is nearest `pactl list sinks`"),
        ("{\"a\": [1, 2,\n \"b\" : x}", "line 2: '\"b\" : x}' is where it stops being JSON; it is nearest `pactl --format=json"),
        ("[1, 2, 3]", "line 1: '[1, 2, 3]' is JSON, but holds no sink object; it is nearest `pactl --format=json"),
        ("{\"a\": [1,\n\n  2,\n\n", "line 3: '2,' is where the JSON ends before it is whole; it is nearest `pactl --format=json"),
        ("\tid 28, type PipeWire:Interface:Node/3\n \t\tnode.name = \"Dummy-Driver\"\n",
         "line 1: 'id 28, type PipeWire:Interface:Node/3' starts no sink; it is nearest `pw-cli ls Node` / `pw-cli info`, "
            + "and lacks a Node: its header (`id: N`, or `ls`'s `id N, type …`) with `media.class = \"Audio/Sink\"`"),
        // `pw-cli info` pasted without its `id:` line, or without every header line: still
        // nearest pw-cli (by `permissions:`, `type: PipeWire:Interface:`, `*` and a tab).
        ("\tpermissions: rwxm-\n\ttype: PipeWire:Interface:Node/3\n*\tstate: \"suspended\"\n*\tproperties:\n*\t\talsa.card = \"1\"\n",
         "line 1: 'permissions: rwxm-' starts no sink; it is nearest `pw-cli ls Node` / `pw-cli info`, and lacks a Node: its header"),
        ("*\tinput ports: 2/65\n*\tstate: \"suspended\"\n*\tproperties:\n*\t\tapi.alsa.pcm.stream = \"playback\"\n",
         "line 1: '*\tinput ports: 2/65' starts no sink; it is nearest `pw-cli ls Node` / `pw-cli info`"),
        ("\tid: 58\n\tpermissions: rwxm-\n\ttype: PipeWire:Interface:Node/3\n*\tstate: \"suspended\"\n",
         "line 1: 'id: 58' starts no sink; it is nearest `pw-cli ls Node` / `pw-cli info`"),
        ("Sink #0\n", "line 1: 'Sink #0' starts no sink; it is nearest `pactl list sinks`, and lacks a sink block"),
        ("  * index: 3\n", "line 1: '* index: 3' starts no sink; it is nearest `pacmd list-sinks`"),
        ("[{\"id\": 30, \"type\": \"PipeWire:Interface:Node\", \"info\": {\"props\": {\"node.name\": \"Dummy-Driver\"}}}]",
         "line 1: '[{\"id\": 30, \"type\": \"PipeWire:Interface:Node\", \"info\": {\"pro…' is JSON, but holds no sink object; "
            + "it is nearest `pw-dump`, and lacks a whole `PipeWire:Interface:Node` of class `Audio/Sink`"),
    ])
    func refusal(text: String, line: String?) throws {
        guard let line else {
            #expect(throws: Never.self) { try SinkDumpReader.read(text) }
            return
        }
        let error = #expect(throws: DuckPromptError.self) { try SinkDumpReader.read(text) }
        #expect(error?.code == .unsupportedData)
        #expect(error?.message.hasPrefix(SinkDumpReader.notADumpMessage + "; " + line) == true, "\(String(describing: error?.message))")
    }
}

/// Every English pactl and pacmd listing among the fixtures, pasted as `echo $(…)` pastes it
/// (its words joined by single spaces), reads to the sinks of the listing itself: the port
/// descriptions with their own parentheses (`Line Out (Rear)`, `Digital Output (S/PDIF)`)
/// included.
@Suite struct OneLineDumpTableTests {
    static let listings: [String] = {
        let directory = (try? SinkFixture.url("sinks")).map(\.path) ?? ""
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.sorted().filter { name in
            guard name.hasSuffix(".txt"), let text = try? SinkFixture.text("sinks/" + name) else { return false }
            return [.pactlText, .pacmdText].contains(SinkDumpReader.detectFormat(text))
        }
    }()

    @Test("the fixture directory has pactl and pacmd listings to read")
    func listingsFound() {
        #expect(Self.listings.count >= 15, "\(Self.listings.count)")
    }

    @Test("echo $(listing) reads to the listing's sinks", arguments: listings)
    func oneLine(name: String) throws {
        let text = try SinkFixture.text("sinks/" + name)
        let oneLine = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0.isNewline }).joined(separator: " ")
        let original = try SinkDumpReader.read(text)
        let pasted = try SinkDumpReader.read(oneLine)
        #expect(pasted.map(\.name) == original.map(\.name))
        for (a, b) in zip(pasted, original) {
            #expect(a.ports == b.ports, "\(a.name)")
            #expect(a.activePortName == b.activePortName, "\(a.name)")
            #expect(a.properties == b.properties, "\(a.name)")
            #expect(a == b, "\(a.name)")
        }
    }
}
