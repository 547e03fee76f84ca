import Testing
@testable import DuckPrompt
@testable import DuckPromptCore
@testable import DuckPromptLab

@Suite("EmulatedDevice")
struct EmulatedDeviceTests {
    static let cases: [(DeviceKind, LabServerKind)] = EmulatedDevice.kinds.flatMap { kind in
        LabServerKind.allCases.map { (kind, $0) }
    }

    @Test("each kind's properties classify as that kind on each server", arguments: cases)
    func classifiesAsItsKind(kind: DeviceKind, server: LabServerKind) {
        let device = EmulatedDevice(kind: kind, name: EmulatedDevice.defaultName(for: kind))
        let properties = Dictionary(device.properties(on: server).map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a })
        // As the server lists a null sink: its driver and owner module come with it.
        let sink = Sink(index: 1, name: device.name, driver: server == .pulseaudio ? "module-null-sink.c" : "PipeWire",
                        properties: properties, ownerModule: 7)
        let classification = Classifier.classify(sink)
        #expect(classification.kind == kind, "\(kind.rawValue) on \(server.rawValue): \(classification.evidence)")
    }

    @Test("the server's own spelling: bluez5 and api.bluez5.profile on PipeWire, bluez and bluetooth.protocol on PulseAudio")
    func serverSpelling() {
        let headset = EmulatedDevice(kind: .bluetoothHFP, name: "h")
        let pw = Dictionary(headset.properties(on: .pipewire).map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a })
        let pa = Dictionary(headset.properties(on: .pulseaudio).map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a })
        #expect(pw["device.api"] == "bluez5" && pw["api.bluez5.profile"] == "headset-head-unit" && pw["bluetooth.protocol"] == nil)
        #expect(pa["device.api"] == "bluez" && pa["bluetooth.protocol"] == "headset_head_unit" && pa["api.bluez5.profile"] == nil)
    }

    @Test("module argument: one single-quoted list, values with spaces double-quoted inside it")
    func moduleArgument() {
        let argument = EmulatedDevice(kind: .speaker, name: "speaker").moduleArgument(on: .pulseaudio)
        #expect(argument.hasPrefix("sink_name=speaker sink_properties='device.description=\"Built-in Audio Speaker\" "))
        #expect(argument.hasSuffix("'"))
        #expect(argument.contains(" device.form_factor=internal "))
        #expect(argument.filter { $0 == "'" }.count == 2)
    }

    @Test("every kind has a default name of its own, and the defaults are a speaker and an A2DP headset")
    func names() {
        let names = EmulatedDevice.kinds.map(EmulatedDevice.defaultName(for:))
        #expect(Set(names).count == names.count)
        #expect(EmulatedDevice.defaults.map(\.kind) == [.speaker, .bluetoothA2DP])
        #expect(EmulatedDevice.defaults.map(\.name) == ["speaker", "bt_headset"])
    }
}

@Suite("LabOptions")
struct LabOptionsTests {
    @Test("--device KIND[=NAME]", arguments: [
        ("speaker", DeviceKind.speaker, "speaker"),
        ("bluetooth-a2dp=bt", .bluetoothA2DP, "bt"),
        ("bluetooth", .bluetoothA2DP, "bt_headset"),
        ("HDMI=tv", .hdmi, "tv"),
        ("line-out", .lineOut, "line_out"),
        ("car=", .car, ""),
    ])
    func device(text: String, kind: DeviceKind, name: String) throws {
        let device = try #require(try LabOptions.device(text))
        #expect(device.kind == kind && device.name == name)
    }

    @Test("--device none: no device, no default sink; it goes alone, and music needs a device and listening")
    func none() throws {
        #expect(try LabOptions.device("none") == nil)
        let options = try LabOptionsTests.options { $0.noDevices = true; $0.listens = false }.validated()
        #expect(options.emulated.isEmpty && options.defaultSinkName == nil && options.musicSink == nil)
    }

    @Test("a kind the lab does not emulate is a usage error naming the kinds", arguments: ["virtual", "network", "radio", ""])
    func badKind(text: String) {
        #expect(throws: DuckPromptError.self) { try LabOptions.device(text) }
        do { _ = try LabOptions.device(text) } catch let error as DuckPromptError {
            #expect(error.code == .usage && error.message.contains("speaker, headphones, bluetooth-a2dp") && error.message.hasSuffix(", or none"))
        } catch { Issue.record("\(error)") }
    }

    static func options(_ build: (inout LabOptions) -> Void) -> LabOptions {
        var options = LabOptions()
        options.command = ["true"]
        build(&options)
        return options
    }

    @Test("validated() refuses what cannot run, naming it", arguments: [
        (LabOptionsTests.options { $0.command = [] }, "needs a command"),
        (LabOptionsTests.options { $0.devices = [EmulatedDevice(kind: .speaker, name: "a"), EmulatedDevice(kind: .hdmi, name: "a")] }, "two devices are named 'a'"),
        (LabOptionsTests.options { $0.devices = [EmulatedDevice(kind: .speaker, name: "a b")] }, "a sink name is"),
        (LabOptionsTests.options { $0.devices = [EmulatedDevice(kind: .car, name: "")] }, "a sink name is"),
        (LabOptionsTests.options { $0.defaultSink = "tv" }, "--default 'tv' is not one of the lab's devices (speaker, bt_headset)"),
        (LabOptionsTests.options { $0.music = .sink("tv") }, "--music 'tv' is not one of"),
        (LabOptionsTests.options { $0.noDevices = true; $0.devices = [EmulatedDevice(kind: .hdmi, name: "tv")] }, "--device none goes alone: tv"),
        (LabOptionsTests.options { $0.noDevices = true; $0.music = .defaultSink }, "--music needs a device"),
        (LabOptionsTests.options { $0.listens = false; $0.music = .defaultSink }, "without --no-listen"),
    ])
    func refused(options: LabOptions, message: String) {
        do {
            _ = try options.validated()
            Issue.record("accepted")
        } catch let error as DuckPromptError {
            #expect(error.code == .usage && error.message.contains(message), "\(error.message)")
        } catch { Issue.record("\(error)") }
    }

    @Test("defaults: the first device is the default sink; music on the default sink unless named")
    func defaults() throws {
        let plain = try Self.options { _ in }.validated()
        #expect(plain.emulated == EmulatedDevice.defaults && plain.defaultSinkName == "speaker" && plain.musicSink == nil)
        let music = try Self.options { $0.music = .defaultSink; $0.defaultSink = "bt_headset" }.validated()
        #expect(music.musicSink == "bt_headset")
        let named = try Self.options { $0.music = .sink("bt_headset") }.validated()
        #expect(named.musicSink == "bt_headset" && named.defaultSinkName == "speaker")
    }
}
