import DuckPrompt

/// The private server a lab runs.
package enum LabServerKind: String, Sendable, CaseIterable {
    /// pipewire + wireplumber + pipewire-pulse.
    case pipewire
    /// pulseaudio -n with the modules a desktop's restore policy needs.
    case pulseaudio
}

/// A device the lab emulates: a null sink carrying the properties a real device of that kind
/// carries on that server, taken from real sinks' dumps (Tests/DuckPromptTests/Fixtures), so
/// that duckprompt's classifier and any other client take it for one. Null sinks have no
/// ports: a kind that a real card tells only by its active port (a built-in headphone jack)
/// is told here by the property that the same device carries on its own (`device.form_factor`).
/// Pure: `moduleArgument(on:)` is what the lab hands `module-null-sink`.
package struct EmulatedDevice: Sendable, Equatable {
    package var kind: DeviceKind
    /// The sink's name (`sink_name`).
    package var name: String

    package init(kind: DeviceKind, name: String) {
        self.kind = kind
        self.name = name
    }

    /// The kinds the lab can emulate: every external kind and the speaker.
    package static let kinds: [DeviceKind] = [.speaker, .headphones, .bluetoothA2DP, .bluetoothHFP, .usb, .hdmi, .lineOut, .car]

    /// What the lab emulates when no `--device` is given: a built-in speaker (the default sink)
    /// and a Bluetooth A2DP headset, as Scripts/demo shows.
    package static let defaults = [EmulatedDevice(kind: .speaker, name: "speaker"),
                                   EmulatedDevice(kind: .bluetoothA2DP, name: "bt_headset")]

    /// The name a device of `kind` gets when `--device` names none.
    package static func defaultName(for kind: DeviceKind) -> String {
        switch kind {
        case .speaker: "speaker"
        case .headphones: "headphones"
        case .bluetoothA2DP: "bt_headset"
        case .bluetoothHFP: "bt_handsfree"
        case .usb: "usb_dac"
        case .hdmi: "hdmi"
        case .lineOut: "line_out"
        case .car: "car"
        case .network, .virtual, .unknown: kind.rawValue
        }
    }

    /// The sink's properties on `server`, in a fixed order. Values hold no quotes; a value
    /// with spaces is quoted in `moduleArgument(on:)`.
    package func properties(on server: LabServerKind) -> [(key: String, value: String)] {
        let pipewire = server == .pipewire
        // What every ALSA card's sink carries on each server (pipewire-pulse shows both).
        func alsa(card: String, path: String, profile: String, bus: String = "pci") -> [(String, String)] {
            var list: [(String, String)] = [("device.api", "alsa"), ("device.class", "sound"), ("device.bus", bus),
                                            ("alsa.card_name", card), ("device.profile.name", profile)]
            list.append(pipewire ? ("api.alsa.path", path) : ("device.string", path))
            if pipewire { list.append(("api.alsa.card.name", card)) }
            return list
        }
        // A Bluetooth device in a profile: PulseAudio's bluez modules or PipeWire's bluez5.
        func bluetooth(profile: (pulse: String, pipewire: String), codec: String, formFactor: String) -> [(String, String)] {
            var list: [(String, String)] = [("device.class", "sound"), ("device.bus", "bluetooth"),
                                            ("device.form_factor", formFactor), ("device.string", "00:11:22:33:44:55")]
            if pipewire {
                list += [("device.api", "bluez5"), ("api.bluez5.profile", profile.pipewire), ("api.bluez5.codec", codec),
                         ("api.bluez5.address", "00:11:22:33:44:55")]
            } else {
                list += [("device.api", "bluez"), ("bluetooth.protocol", profile.pulse), ("bluetooth.codec", codec)]
            }
            return list
        }
        var list: [(String, String)]
        switch kind {
        case .speaker:
            list = [("device.description", "Built-in Audio Speaker"), ("device.form_factor", "internal"),
                    ("device.icon_name", "audio-speakers")]
                + alsa(card: "HDA Intel PCH", path: "front:0", profile: "analog-stereo")
        case .headphones:
            list = [("device.description", "Headphones"), ("device.form_factor", "headphone"),
                    ("device.icon_name", "audio-headphones")]
                + alsa(card: "HDA Intel PCH", path: "front:0", profile: "analog-stereo")
        case .bluetoothA2DP:
            list = [("device.description", "BT Headset"), ("device.icon_name", "audio-headset-bluetooth")]
                + bluetooth(profile: (pulse: "a2dp_sink", pipewire: "a2dp-sink"), codec: "sbc", formFactor: "headset")
        case .bluetoothHFP:
            list = [("device.description", "BT Headset (hands-free)"), ("device.icon_name", "audio-headset-bluetooth")]
                + bluetooth(profile: (pulse: "headset_head_unit", pipewire: "headset-head-unit"), codec: pipewire ? "msbc" : "cvsd",
                            formFactor: "headset")
        case .usb:
            list = [("device.description", "USB Audio DAC"), ("device.icon_name", "audio-card-usb"),
                    ("device.vendor.id", "0x152a"), ("device.product.id", "0x8750")]
                + alsa(card: "USB Audio DAC", path: "front:1", profile: "analog-stereo", bus: "usb")
        case .hdmi:
            list = [("device.description", "HDMI Audio"), ("device.icon_name", "video-display")]
                + alsa(card: "HDA NVidia", path: "hdmi:1", profile: "hdmi-stereo")
        case .lineOut:
            list = [("device.description", "Digital Output (S/PDIF)"), ("device.icon_name", "audio-card-pci")]
                + alsa(card: "HDA Intel PCH", path: "iec958:0", profile: "iec958-stereo")
        case .car:
            // A car's own audio system (an in-car Linux head unit's card): a Bluetooth car kit
            // is a Bluetooth device to every classifier, and `bluetooth-a2dp` emulates it.
            list = [("device.description", "Car Audio"), ("device.form_factor", "car"), ("device.icon_name", "audio-card")]
                + alsa(card: "Car Audio", path: "front:0", profile: "analog-stereo")
        case .network, .virtual, .unknown:
            preconditionFailure("the lab does not emulate \(kind.rawValue)")
        }
        return list.map { (key: $0.0, value: $0.1) }
    }

    /// `module-null-sink`'s argument: `sink_name=NAME sink_properties='k=v k="a b" …'`. Measured
    /// on PulseAudio 16.1 and pipewire-pulse 0.3.65: one single-quoted list, a value with
    /// spaces in double quotes inside it, is read alike by both.
    package func moduleArgument(on server: LabServerKind) -> String {
        let list = properties(on: server).map { $0.value.contains(" ") ? "\($0.key)=\"\($0.value)\"" : "\($0.key)=\($0.value)" }
        return "sink_name=\(name) sink_properties='\(list.joined(separator: " "))'"
    }
}
