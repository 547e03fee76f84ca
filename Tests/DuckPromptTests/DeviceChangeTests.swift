import Testing
@testable import DuckPrompt
@testable import DuckPromptCore

@Suite("DeviceChange.between")
struct DeviceChangeTests {
    static let speaker = RouterTests.speaker
    static let bluetooth = RouterTests.bluetooth
    static let hdmi = RouterTests.hdmi
    static let usb = RouterTests.usbHeadset

    static func listing(_ sinks: [Sink], default name: String? = nil, inputs: [SinkInput] = []) -> DeviceListing {
        DeviceListing(snapshot: Snapshot(sinks: sinks, sinkInputs: inputs, defaultSinkName: name))
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var label: String
        var old: DeviceListing
        var new: DeviceListing
        /// `event` and `summary` of each change, in order.
        var expected: [String]
        var testDescription: String { label }
    }

    static var headphonesUnplugged: Sink {
        var sink = RouterTests.headphonesActive
        sink.ports[1].availability = .no
        return sink
    }

    static var bluetoothRenumbered: Sink {
        var sink = bluetooth
        sink.index = 42
        return sink
    }

    static let cases: [Case] = [
        Case(label: "nothing changed → no change",
             old: listing([speaker, bluetooth], default: speaker.name),
             new: listing([speaker, bluetooth], default: speaker.name),
             expected: []),
        Case(label: "a Bluetooth sink appears and takes the route",
             old: listing([speaker], default: speaker.name),
             new: listing([speaker, bluetooth], default: speaker.name),
             expected: ["sink-added: sink bluez_output.00_11_22_33_44_55.1 (bluetooth-a2dp) appeared",
                        "route-changed: prompt route alsa_output.pci-0000_00_1f.3.analog-stereo -> bluez_output.00_11_22_33_44_55.1"]),
        Case(label: "the Bluetooth default goes away: removed, default and route change",
             old: listing([speaker, bluetooth], default: bluetooth.name),
             new: listing([speaker], default: speaker.name),
             expected: ["sink-removed: sink bluez_output.00_11_22_33_44_55.1 went away",
                        "default-changed: default sink bluez_output.00_11_22_33_44_55.1 -> alsa_output.pci-0000_00_1f.3.analog-stereo",
                        "route-changed: prompt route bluez_output.00_11_22_33_44_55.1 -> alsa_output.pci-0000_00_1f.3.analog-stereo"]),
        Case(label: "headphones plugged into the built-in card: the active port changes, the route stays on the card",
             old: listing([speaker, hdmi], default: speaker.name),
             new: listing([RouterTests.headphonesActive, hdmi], default: speaker.name),
             expected: ["port-changed: sink alsa_output.pci-0000_00_1f.3.analog-stereo port analog-output-speaker -> analog-output-headphones"]),
        Case(label: "the active headphones port is unplugged: availability changes",
             old: listing([RouterTests.headphonesActive], default: speaker.name),
             new: listing([headphonesUnplugged], default: speaker.name),
             expected: ["availability-changed: sink alsa_output.pci-0000_00_1f.3.analog-stereo port analog-output-headphones availability yes -> no"]),
        Case(label: "the default changes from the speaker to HDMI: default and route",
             old: listing([speaker, hdmi], default: speaker.name),
             new: listing([speaker, hdmi], default: hdmi.name),
             expected: ["default-changed: default sink alsa_output.pci-0000_00_1f.3.analog-stereo -> alsa_output.pci-0000_01_00.1.hdmi-stereo",
                        "route-changed: prompt route alsa_output.pci-0000_00_1f.3.analog-stereo -> alsa_output.pci-0000_01_00.1.hdmi-stereo"]),
        Case(label: "a stream starts on the idle HDMI monitor: only the route changes",
             old: listing([speaker, hdmi], default: speaker.name),
             new: listing([speaker, hdmi], default: speaker.name, inputs: [RouterTests.playing(on: hdmi)]),
             expected: ["route-changed: prompt route alsa_output.pci-0000_00_1f.3.analog-stereo -> alsa_output.pci-0000_01_00.1.hdmi-stereo"]),
        Case(label: "a sink comes back with a new index: matched by name, no change",
             old: listing([speaker, bluetooth], default: speaker.name),
             new: listing([speaker, bluetoothRenumbered], default: speaker.name),
             expected: []),
        Case(label: "the default moves from the USB headset to a null sink: the route stays on the USB headset",
             old: listing([speaker, usb, RouterTests.virtual(9, "null")], default: usb.name),
             new: listing([speaker, usb, RouterTests.virtual(9, "null")], default: "null"),
             expected: ["default-changed: default sink alsa_output.usb-Logitech_G435-00.analog-stereo -> null"]),
        Case(label: "the last sink goes away: removed, default gone, route to none",
             old: listing([speaker], default: speaker.name),
             new: listing([], default: nil),
             expected: ["sink-removed: sink alsa_output.pci-0000_00_1f.3.analog-stereo went away",
                        "default-changed: default sink alsa_output.pci-0000_00_1f.3.analog-stereo -> none",
                        "route-changed: prompt route alsa_output.pci-0000_00_1f.3.analog-stereo -> none"]),
        Case(label: "removed before added, then the default, then the route",
             old: listing([speaker, usb], default: usb.name),
             new: listing([speaker, bluetooth], default: bluetooth.name),
             expected: ["sink-removed: sink alsa_output.usb-Logitech_G435-00.analog-stereo went away",
                        "sink-added: sink bluez_output.00_11_22_33_44_55.1 (bluetooth-a2dp) appeared",
                        "default-changed: default sink alsa_output.usb-Logitech_G435-00.analog-stereo -> bluez_output.00_11_22_33_44_55.1",
                        "route-changed: prompt route alsa_output.usb-Logitech_G435-00.analog-stereo -> bluez_output.00_11_22_33_44_55.1"]),
    ]

    @Test("changes between two listings", arguments: cases)
    func between(_ test: Case) {
        let changes = DeviceChange.between(test.old, test.new)
        #expect(changes.map { "\($0.event): \($0.summary)" } == test.expected)
    }

    @Test("an added sink carries its classification; sink names are reported per change")
    func addedCarriesClassification() throws {
        let changes = DeviceChange.between(Self.listing([Self.speaker]), Self.listing([Self.speaker, Self.bluetooth]))
        guard case .added(let sink, let classification) = try #require(changes.first) else {
            Issue.record("expected sink-added, got \(changes)")
            return
        }
        #expect(sink.name == Self.bluetooth.name)
        #expect(classification.kind == .bluetoothA2DP)
        #expect(changes.first?.sinkName == Self.bluetooth.name)
        #expect(changes.last?.sinkName == nil, "route-changed concerns no single sink")
    }

    @Test("a listing routes with the config: never hdmi keeps the route on the speaker when HDMI becomes default")
    func listingWithConfig() {
        let config = DuckPromptConfig(never: [.kind(.hdmi)])
        let old = DeviceListing(snapshot: Snapshot(sinks: [Self.speaker, Self.hdmi], defaultSinkName: Self.speaker.name),
                                config: config)
        let new = DeviceListing(snapshot: Snapshot(sinks: [Self.speaker, Self.hdmi], defaultSinkName: Self.hdmi.name),
                                config: config)
        #expect(DeviceChange.between(old, new).map(\.event) == ["default-changed"])
        #expect(new.route?.rule == "speaker")
    }
}
