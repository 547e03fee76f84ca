/// Decides what kind of device a sink is, from its properties, driver, flags and ports.
///
/// Sink and node names are never parsed: a user or a test can give any sink any name, and
/// emulated devices (`pactl load-module module-null-sink sink_name=bt
/// sink_properties="device.api=bluez5 device.bus=bluetooth api.bluez5.profile=a2dp-sink"`) must
/// classify by what their properties say. The one exception is a dump whose properties were cut
/// so short that no bus is left (rule 5 below).
///
/// Properties are read under the names pactl prints and under PipeWire's own (`pw-dump`,
/// `wpctl inspect`): `device.form_factor` or `device.form-factor`, `device.bus_path` or
/// `device.bus-path`, `sysfs.path` or `device.sysfs.path`.
///
/// Rules, first match wins:
/// 1. **Bluetooth** (`device.api=bluez|bluez5`, `device.bus=bluetooth`, `api.bluez5.*`,
///    `bluetooth.protocol`, a bluez driver or `factory.name`): the profile decides between A2DP
///    (`a2dp_sink`, `a2dp-sink`, LE Audio `bap-sink`, hearing aids `asha-sink`) and HFP/HSP
///    (`headset_head_unit`, `handsfree_head_unit`, `headset-head-unit`, `hfp-*`, `hsp-*`), read
///    from `bluetooth.protocol`, `api.bluez5.profile`, `device.profile.name`, then
///    `factory.name` (`api.bluez5.a2dp.sink` / `api.bluez5.sco.sink`), then the codec (`cvsd`,
///    `msbc` are HFP); none of them: A2DP. The bus decides before the port, so a Bluetooth
///    speaker (port type speaker) is Bluetooth.
/// 2. **car**: `device.form_factor=car`, or active port type car.
/// 3. **network**: drivers `module-tunnel*`, `module-raop-sink`, `module-rtp-send`,
///    `module-roc-sink`; properties `tunnel.*`, `raop.*`, `rtp.*`, `sess.*` (PipeWire's RTP
///    session), `roc.*`, `snapcast.*`, `vban.*`, `zeroconf.*`, `pulse.server.address`;
///    `device.api=raop|tunnel|rtp|roc`; `node.network=true`; a PipeWire `factory.name` with a
///    `tunnel`, `raop`, `rtp`, `roc`, `vban` or `snapcast` component (never
///    `support.null-audio-sink`); the `NETWORK` sink flag; with no device property at all, the
///    node name PipeWire's network modules give (`raop_sink.…`, `tunnel.…`, `rtp_session.…`,
///    `roc-sink`, `snapcast…`).
/// 3b. **JACK** → **virtual**: `module-jack-sink`, `device.api=jack`, `jack.*` properties, a
///    JACK `factory.name`: the device is behind JACK.
/// 4. **ALSA cards nobody hears** → **virtual**: the loopback card (snd-aloop:
///    `alsa.driver_name=snd_aloop`, or the card name the driver always gives,
///    `alsa.card_name`/`api.alsa.card.name` = `Loopback`) and the dummy card (`snd_dummy`,
///    `Dummy`): they carry the HARDWARE flag and a generic port like a sound card.
/// 5. **usb**: `device.bus=usb`; `device.bus_path`, `sysfs.path` or `api.alsa.path` with a
///    `usb` component; `alsa.driver_name=snd_usb_audio`; an ALSA long card name `… at usb-…`;
///    `alsa.components=USBvvvv:pppp` (what snd-usb-audio reports); a udev id `udev.id=usb-…`.
///    When a dump kept ALSA properties but no bus property at all (`device.bus`,
///    `device.bus_path`, `sysfs.path`, `udev.id` all cut), the bus id PulseAudio and PipeWire
///    put in an ALSA sink's name (`alsa_output.usb-…`, from udev `ID_PATH`/`ID_ID`) is read
///    instead: the one place a name is read, because such a trimmed dump keeps nothing else
///    that tells a USB DAC from a built-in codec.
/// 6. **active port**, by type: speaker; headphones or headset → headphones; line, spdif →
///    line-out; hdmi → hdmi; car; usb; network. By name when the type is unknown or generic:
///    `analog-output-speaker*`, `[Out] Speaker` → speaker; `analog-output-headphones*`,
///    `[Out] Headphones`, `[Out] Headset` → headphones; `analog-output-lineout*`,
///    `[Out] Line*` → line-out; `iec958-*`, `[Out] SPDIF` → line-out; `hdmi-output-*`,
///    `[Out] HDMI*`, `*displayport*` → hdmi.
/// 7. **ALSA PCM**, when no port decided: the profile (`device.profile.name=hdmi-*` → hdmi,
///    `iec958-*` → line-out) or the PCM device string (`api.alsa.path`/`device.string` =
///    `hdmi:…` → hdmi, `iec958:…` → line-out).
/// 8. **`device.form_factor`**: `speaker` → speaker; `headphone`, `headset` → headphones; `tv`,
///    `monitor` → hdmi (a display's audio that is neither USB nor Bluetooth arrives over HDMI
///    or DisplayPort); `internal` (udev's mark of every PCI and platform card), `handset`,
///    `hands-free`, `portable`, `microphone`, `webcam`, `computer`, `hifi` → no decision
///    (nothing tells which output it is).
/// 9. **ALSA names** (an ALSA sink: `alsa.*`, `api.alsa.*`, `device.api=alsa`, an ALSA driver,
///    `object.path=alsa:…`): what its PCM, profile, card and description names say
///    (`ALSANames`): `bcm2835 Headphones` → headphones, `vc4-hdmi`, `HDMI / DisplayPort 2
///    Output` → hdmi, a split-port `Built-in Audio Headphones` → headphones. A card whose
///    names say nothing stays unknown (rule 11), not speaker: a guess must not look like
///    knowledge.
/// 9b. **an analog output with no port** (a guess, said so in the evidence): an ALSA sink whose
///    card lists no port and that has no form factor, whose profile (`analog-stereo`,
///    `analog-surround-*`) or PCM (`front:0`, `surround51:0`) says it is the card's analog
///    output (an ASUS Xonar DX on PipeWire) → line-out.
/// 10. **virtual**: no device property (`device.api`, `device.bus`, `device.bus_path`,
///    `device.form_factor`, `device.string`, `device.vendor.*`, `device.product.*`,
///    `sysfs.path`, `alsa.*`, `api.alsa.*`, `api.bluez5.*`, `bluez.*`, `bluetooth.*`) and no
///    port: null sinks (`device.class=abstract`), `node.virtual=true`,
///    `factory.name=support.null-audio-sink`, filters (`device.class=filter`,
///    `device.master_device`, a PipeWire `node.link-group`), combine, remap, loopback, LADSPA,
///    echo-cancel sinks; also such a marked sink (no ports) that carries a stray device
///    property but no API, bus or form factor. A sink whose properties describe a device is
///    classified by them even when a null sink carries them (that is how tests emulate
///    devices), so rules 1–9 run first.
/// 11. Anything else is **unknown** (a real device with nothing decisive: a generic
///    `analog-output` port on a PCI card whose names say nothing, a sink with only
///    `device.api=alsa`); the evidence names what was read and what was missing.
///
/// `classify(_ snapshot:ranking:)` adds what one sink cannot show: where a virtual sink's audio
/// goes (`Classification.forwardsTo`).
package enum Classifier {
    /// Classifies one sink. Pure and deterministic; safe from any thread.
    /// - Parameter sink: a sink from the server (`pa_sink_info`) or a dump.
    /// - Returns: the kind, whether it is external now, and the evidence; `forwardsTo` is nil
    ///   (use `classify(_ snapshot:ranking:)` to follow virtual sinks).
    ///
    /// Reads `pa_sink_info.proplist`, `driver`, `flags`, `ports` and `active_port`; never `name`
    /// except in the rule 5 fallback.
    package static func classify(_ sink: Sink) -> Classification {
        let (kind, evidence) = kindAndEvidence(sink)
        let port = effectiveActivePort(sink)
        return Classification(kind: kind,
                              external: kind.isExternalKind && port?.availability != .no,
                              evidence: evidence)
    }

    /// The active port; when a dump lost the `Active Port` line but lists exactly one port,
    /// that port.
    static func effectiveActivePort(_ sink: Sink) -> Port? {
        if let port = sink.activePort { return port }
        return sink.ports.count == 1 ? sink.ports[0] : nil
    }

    private static func kindAndEvidence(_ sink: Sink) -> (DeviceKind, String) {
        let properties = sink.properties
        let port = effectiveActivePort(sink)
        let keys = KeyFamilies(properties)

        if let decision = bluetooth(sink, keys: keys) { return decision }
        if let decision = car(properties, port: port, keys: keys) { return decision }
        if let decision = network(sink, keys: keys) { return decision }
        if let decision = jack(sink, keys: keys) { return decision }
        // Rule 4 reads `alsa.*` and `api.alsa.*` keys alone.
        if keys.hasALSAKey, let decision = silentALSACard(properties) { return decision }
        if let decision = usb(sink, keys: keys) { return decision }
        if let port, let decision = byPort(port) { return decision }
        if let decision = byALSAPCM(properties, keys: keys) { return decision }
        if keys.hasFormFactorKey, let decision = byFormFactor(properties) { return decision }
        if let decision = byALSANames(sink, keys: keys) { return decision }
        if let decision = byAnalogOutputWithoutPort(sink, keys: keys) { return decision }
        if sink.ports.isEmpty {
            let marker = virtualMarker(sink)
            // An ALSA node that `pw-cli ls Node` cut down to `object.path=alsa:…` and its names
            // is a device whose names said nothing: unknown, not virtual.
            if !keys.hasDeviceKey, !isALSA(sink, keys: keys) {
                return (.virtual, marker ?? "no device properties and no ports")
            }
            // A filter or null sink that copied a stray device property (`device.string`,
            // `alsa.*`) but names no API, bus or form factor is still virtual.
            if let marker, !describesDevice(properties, keys: keys) {
                return (.virtual, marker)
            }
        }
        return (.unknown, unknownEvidence(sink, port: port))
    }

    // MARK: 1. Bluetooth

    private static func bluetooth(_ sink: Sink, keys: KeyFamilies) -> (DeviceKind, String)? {
        let p = sink.properties
        let api = keys.deviceAPI
        let factory = keys.factoryName
        let driver = sink.driver.lowercased()
        let busEvidence: String?
        if let api, api == "bluez" || api == "bluez5" {
            busEvidence = "device.api=\(api)"
        } else if value(p, "device.bus") == "bluetooth" {
            busEvidence = "device.bus=bluetooth"
        } else if let protocolValue = p["bluetooth.protocol"] {
            busEvidence = "bluetooth.protocol=\(protocolValue)"
        } else if let key = keys.firstBlueZ5Key {
            busEvidence = "\(key)=\(p[key] ?? "")"
        } else if let factory, factory.hasPrefix("api.bluez5.") {
            busEvidence = "factory.name=\(factory)"
        } else if driver.hasPrefix("module-bluez") || driver.hasPrefix("module-bluetooth") {
            busEvidence = "driver \(sink.driver)"
        } else if effectiveActivePort(sink)?.type == .bluetooth {
            busEvidence = "active port \(effectiveActivePort(sink)!.name) (type bluetooth)"
        } else {
            busEvidence = nil
        }
        guard let busEvidence else { return nil }

        for key in ["bluetooth.protocol", "api.bluez5.profile", "device.profile.name"] {
            if let profile = value(p, key), let kind = bluetoothProfileKind(profile) {
                return (kind, "\(key)=\(p[key] ?? profile)")
            }
        }
        if let factory {
            if factory.containsText(".sco.") || factory.containsText("hfp") || factory.containsText("hsp") {
                return (.bluetoothHFP, "factory.name=\(factory)")
            }
            if factory.containsText(".a2dp.") || factory.containsText(".media.") || factory.containsText(".bap.")
                || factory.containsText("asha") {
                return (.bluetoothA2DP, "factory.name=\(factory)")
            }
        }
        for key in ["api.bluez5.codec", "bluetooth.codec"] {
            if let codec = value(p, key) {
                if ["cvsd", "msbc", "lc3-swb", "lc3_swb", "lc3-a127"].contains(codec) {
                    return (.bluetoothHFP, "\(key)=\(p[key] ?? codec)")
                }
                if !codec.isEmpty { return (.bluetoothA2DP, "\(key)=\(p[key] ?? codec)") }
            }
        }
        return (.bluetoothA2DP, "\(busEvidence) (no profile; A2DP assumed)")
    }

    /// A2DP or HFP from a profile or protocol name (PulseAudio `bluetooth.protocol`, PipeWire
    /// `api.bluez5.profile`, a card profile name); nil when the name says neither (`off`).
    static func bluetoothProfileKind(_ profile: String) -> DeviceKind? {
        // `headset-head-unit` is `headset_head_unit`: every `-` read as `_`.
        let name = String(decoding: profile.lowercased().utf8.map { $0 == UInt8(ascii: "-") ? UInt8(ascii: "_") : $0 },
                          as: UTF8.self)
        if name.containsText("a2dp") || name.containsText("bap") || name.containsText("asha")
            || name.containsText("le_audio") || name.containsText("leaudio") {
            return .bluetoothA2DP
        }
        if name.containsText("head_unit") || name.containsText("audio_gateway") || name.hasPrefix("hsp")
            || name.hasPrefix("hfp") || name.containsText("headset") || name.containsText("handsfree")
            || name.containsText("sco") {
            return .bluetoothHFP
        }
        return nil
    }

    // MARK: 2. Car

    private static func car(_ p: [String: String], port: Port?, keys: KeyFamilies) -> (DeviceKind, String)? {
        if keys.hasFormFactorKey, let (key, formFactor) = lookup(p, "device.form_factor"), formFactor == "car" {
            return (.car, "\(key)=car")
        }
        if let port, port.type == .car { return (.car, "active port \(port.name) (type car)") }
        return nil
    }

    // MARK: 3. Network

    private static let networkDriverPrefixes = [
        "module-tunnel", "module-raop", "module-rtp-send", "module-roc-sink", "module-esound-sink",
    ]
    private static let networkFactoryWords: Set<Substring> = ["tunnel", "raop", "rtp", "roc", "vban", "snapcast"]

    private static func network(_ sink: Sink, keys: KeyFamilies) -> (DeviceKind, String)? {
        let p = sink.properties
        let driver = sink.driver.lowercased()
        if networkDriverPrefixes.contains(where: { driver.hasPrefix($0) }) {
            return (.network, "driver \(sink.driver)")
        }
        if let api = keys.deviceAPI, ["raop", "tunnel", "rtp", "roc", "pulse"].contains(api) {
            return (.network, "device.api=\(api)")
        }
        if value(p, "node.network") == "true" { return (.network, "node.network=true") }
        if let factory = keys.factoryName,
           factory.utf8.split(whereSeparator: { ".-_".utf8.contains($0) })
               .contains(where: { networkFactoryWords.contains(Substring($0)) }) {
            return (.network, "factory.name=\(factory)")
        }
        if let key = keys.firstNetworkKey {
            return (.network, "\(key)=\(p[key] ?? "")")
        }
        if sink.flags.contains("NETWORK") { return (.network, "flag NETWORK") }
        // A dump cut down to its node name: PipeWire's network modules name their sinks
        // (`raop_sink.HOST.IP.PORT`, `tunnel.HOST…`, `rtp_session.…`, `roc-sink`,
        // `snapcast…`); read only when nothing describes a device.
        if !keys.hasDeviceKey {
            let name = p["node.name"] ?? sink.name
            if let prefix = networkNodeNamePrefixes.first(where: { name.hasPrefix($0) }) {
                return (.network, "node.name=\(name) (the name \(prefix)… a PipeWire network module gives its sink)")
            }
        }
        return nil
    }

    private static let networkNodeNamePrefixes = [
        "raop_sink.", "tunnel.", "rtp_session.", "rtp-sink", "roc-sink", "snapcast", "netjack2_", "vban",
    ]

    // MARK: 3b. JACK

    /// A sink that hands its audio to JACK (PulseAudio's `module-jack-sink`, PipeWire's JACK
    /// tunnel) is virtual: the device is behind JACK, which this server does not see.
    private static func jack(_ sink: Sink, keys: KeyFamilies) -> (DeviceKind, String)? {
        let behind = "(the device is behind JACK)"
        if sink.driver.lowercased().hasPrefix("module-jack") { return (.virtual, "driver \(sink.driver) \(behind)") }
        if keys.deviceAPI == "jack" { return (.virtual, "device.api=jack \(behind)") }
        if let key = keys.firstJACKKey { return (.virtual, "\(key)=\(sink.properties[key] ?? "") \(behind)") }
        if let factory = keys.factoryName, factory.containsText("jack") {
            return (.virtual, "factory.name=\(factory) \(behind)")
        }
        return nil
    }

    // MARK: 4. ALSA cards nobody hears

    /// The ALSA loopback card (snd-aloop) and the dummy card (snd-dummy): each looks like a
    /// sound card (HARDWARE flag, a generic port) but nothing is heard from it.
    private static func silentALSACard(_ p: [String: String]) -> (DeviceKind, String)? {
        let alsaDriver = value(p, "alsa.driver_name")
        let cardNames = (value(p, "alsa.card_name"), value(p, "api.alsa.card.name"))
        for (driver, card, what) in [("snd_aloop", "loopback", "an ALSA loopback card"), ("snd_dummy", "dummy", "the ALSA dummy card")] {
            if alsaDriver == driver {
                return (.virtual, "alsa.driver_name=\(driver) (\(what): nothing is heard)")
            }
            for key in ["alsa.card_name", "api.alsa.card.name"]
            where (key == "alsa.card_name" ? cardNames.0 : cardNames.1) == card {
                return (.virtual, "\(key)=\(p[key] ?? card) (\(what): nothing is heard)")
            }
        }
        return nil
    }

    // MARK: 5. USB

    private static let busKeys = ["device.bus_path", "sysfs.path", "api.alsa.path"]

    private static func usb(_ sink: Sink, keys: KeyFamilies) -> (DeviceKind, String)? {
        // Every key read below is a device key (`KeyFamilies.hasDeviceKey`); without one, only
        // an ALSA driver's sink name is left.
        guard keys.hasDeviceKey || sink.driver.hasPrefix("module-alsa") else { return nil }
        let p = sink.properties
        if value(p, "device.bus") == "usb" { return (.usb, "device.bus=usb") }
        for key in busKeys {
            if let (actualKey, path) = lookup(p, key), hasUSBComponent(path) {
                return (.usb, "\(actualKey)=\(p[actualKey] ?? path)")
            }
        }
        if value(p, "alsa.driver_name") == "snd_usb_audio" {
            return (.usb, "alsa.driver_name=snd_usb_audio")
        }
        for key in ["alsa.long_card_name", "api.alsa.card.longname"] where keys.hasALSAKey {
            if let longName = value(p, key), longName.containsText(" at usb-") {
                return (.usb, "\(key) names a USB port")
            }
        }
        // snd-usb-audio sets the card's components to `USB<vendor>:<product>`.
        if let components = value(p, "alsa.components"),
           components.split(separator: " ").contains(where: { $0.hasPrefix("usb") && $0.wholeMatch(of: DumpPatterns.usbID) != nil }) {
            return (.usb, "alsa.components=\(p["alsa.components"] ?? components)")
        }
        if let udevID = value(p, "udev.id"), udevID.hasPrefix("usb-") {
            return (.usb, "udev.id=\(p["udev.id"] ?? udevID)")
        }
        // A dump cut down to a few ALSA properties: no bus property is left, so read the bus id
        // PulseAudio/PipeWire built the ALSA sink name from (udev ID_PATH / ID_ID).
        guard sink.name.hasPrefix("alsa_output.usb-") else { return nil }
        let isALSA = keys.hasALSAKey || sink.driver.hasPrefix("module-alsa")
        let hasBus = ["device.bus", "device.bus_path", "sysfs.path", "udev.id"].contains { lookup(p, $0) != nil }
        if isALSA, !hasBus {
            let busID = sink.name.dropFirst("alsa_output.".count).prefix { $0 != "." }
            return (.usb, "ALSA bus id \(busID) in the sink name (the dump has no bus property)")
        }
        return nil
    }

    /// `usb` as a component of a bus or sysfs path: `pci-0000:00:14.0-usb-0:2:1.0`,
    /// `/devices/pci0000:00/0000:00:14.0/usb1/1-2/…`.
    private static func hasUSBComponent(_ path: String) -> Bool {
        guard path.containsText("usb") else { return false }
        return path.utf8.split(whereSeparator: { "/-:._".utf8.contains($0) }).contains { component in
            component.starts(with: "usb".utf8) && Substring(component.dropFirst(3)).allSatisfy(\.isNumber)
        }
    }

    // MARK: 10. Virtual

    private static let virtualDrivers = [
        "module-null-sink", "module-combine", "module-remap", "module-loopback", "module-ladspa",
        "module-echo-cancel", "module-virtual", "module-equalizer", "module-virtual-surround",
        "module-filter",
    ]

    /// What marks a sink as virtual: `device.class=abstract|filter`, `node.virtual=true`,
    /// `factory.name=support.null-audio-sink`, `device.master_device`, `node.link-group`, a
    /// null/combine/remap/loopback/filter driver.
    static func virtualMarker(_ sink: Sink) -> String? {
        let p = sink.properties
        if let deviceClass = value(p, "device.class"), deviceClass == "abstract" || deviceClass == "filter" {
            return "device.class=\(deviceClass)"
        }
        if value(p, "node.virtual") == "true" { return "node.virtual=true" }
        if let factory = value(p, "factory.name"), factory == "support.null-audio-sink" {
            return "factory.name=support.null-audio-sink"
        }
        if let master = p["device.master_device"], !master.isEmpty { return "device.master_device=\(master)" }
        if let group = p["node.link-group"], !group.isEmpty { return "node.link-group=\(group)" }
        let driver = sink.driver.lowercased()
        if virtualDrivers.contains(where: { driver.hasPrefix($0) }) { return "driver \(sink.driver)" }
        return nil
    }

    /// Whether the properties name an API, a bus or a form factor: what an emulated device
    /// sets, and what no filter or null sink sets on its own.
    private static func describesDevice(_ p: [String: String], keys: KeyFamilies) -> Bool {
        ["device.api", "device.bus", "device.form_factor", "bluetooth.protocol"].contains { lookup(p, $0) != nil }
            || keys.firstBlueZ5Key != nil || keys.hasAPIALSAKey
    }

    // MARK: 11. Unknown

    private static func unknownEvidence(_ sink: Sink, port: Port?) -> String {
        let names = ALSANames.silentNames(sink).map { "; its names say nothing (\($0))" } ?? ""
        if let port { return "active port \(port.name) (type \(port.type.rawValue)) decides nothing\(names)" }
        let ports = sink.ports.isEmpty ? "no port" : "no active port"
        if let api = sink.properties["device.api"] { return "device.api=\(api) with no decisive property and \(ports)\(names)" }
        return "no decisive property and \(ports)\(names)"
    }
}
