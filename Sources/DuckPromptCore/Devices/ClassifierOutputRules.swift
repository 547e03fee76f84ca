// The classifier's rules 6 to 9b (Classifier.swift has the order): what the sink's output says
// when its bus and transport said nothing — the active port, the ALSA PCM, the form factor,
// the ALSA names, and the guess for an analog output with no port.
extension Classifier {
    // MARK: 6. Active port

    static func byPort(_ port: Port) -> (DeviceKind, String)? {
        let byType: DeviceKind? = switch port.type {
        case .speaker: .speaker
        case .headphones, .headset: .headphones
        case .line, .spdif: .lineOut
        case .hdmi: .hdmi
        case .car: .car
        case .usb: .usb
        case .network: .network
        default: nil
        }
        if let byType {
            return (byType, "active port \(port.name) (type \(port.type.rawValue))")
        }
        let name = port.name.lowercased()
        let byName: DeviceKind?
        if name.hasPrefix("analog-output-speaker") || name.hasPrefix("[out] speaker")
            || name == "speaker-output" {
            byName = .speaker
        } else if name.hasPrefix("analog-output-headphones") || name.hasPrefix("analog-output-headset")
                    || name.hasPrefix("[out] headphone") || name.hasPrefix("[out] headset")
                    || name == "headphone-output" || name == "headset-output" {
            byName = .headphones
        } else if name.hasPrefix("analog-output-lineout") || name.hasPrefix("[out] line") {
            byName = .lineOut
        } else if name.hasPrefix("iec958") || name.hasPrefix("[out] spdif") || name.containsText("spdif") {
            byName = .lineOut
        } else if name.hasPrefix("hdmi-output") || name.hasPrefix("[out] hdmi")
                    || name.containsText("displayport") || name.hasPrefix("[out] dp") {
            byName = .hdmi
        } else {
            byName = nil
        }
        guard let byName else { return nil }
        return (byName, "active port \(port.name)")
    }

    // MARK: 7. ALSA PCM

    static func byALSAPCM(_ p: [String: String], keys: KeyFamilies) -> (DeviceKind, String)? {
        guard keys.hasALSAKey || keys.deviceAPI == "alsa" else { return nil }
        if let profile = value(p, "device.profile.name") {
            if profile.hasPrefix("hdmi-") { return (.hdmi, "device.profile.name=\(p["device.profile.name"] ?? profile)") }
            if profile.hasPrefix("iec958-") { return (.lineOut, "device.profile.name=\(p["device.profile.name"] ?? profile)") }
        }
        for key in ["api.alsa.path", "device.string"] {
            guard let pcm = value(p, key) else { continue }
            if pcm.hasPrefix("hdmi:") { return (.hdmi, "\(key)=\(p[key] ?? pcm)") }
            if pcm.hasPrefix("iec958:") { return (.lineOut, "\(key)=\(p[key] ?? pcm)") }
        }
        return nil
    }

    // MARK: 8. Form factor

    static func byFormFactor(_ p: [String: String]) -> (DeviceKind, String)? {
        guard let (key, formFactor) = lookup(p, "device.form_factor") else { return nil }
        // `internal` says built in, not which output (udev marks every PCI and platform card so):
        // it decides nothing.
        let kind: DeviceKind? = switch formFactor {
        case "speaker": .speaker
        case "headphone", "headset": .headphones
        case "tv", "monitor": .hdmi
        default: nil
        }
        return kind.map { ($0, "\(key)=\(formFactor)") }
    }

    // MARK: 9. ALSA names

    /// An ALSA sink that no port, profile or form factor decided: what its own names say
    /// (`ALSANames`). When the dump lists no ports, the evidence says so.
    static func byALSANames(_ sink: Sink, keys: KeyFamilies) -> (DeviceKind, String)? {
        guard isALSA(sink, keys: keys), let found = ALSANames.kind(sink) else { return nil }
        let missing = sink.ports.isEmpty ? "; the dump lists no ports" : ""
        return (found.kind, "\(found.key)=\(found.value) (\(found.source.rawValue)\(missing))")
    }

    // MARK: 9b. An analog output with no port

    /// An ALSA sink whose card lists no port, with no form factor, whose profile or PCM says
    /// it is the card's analog output (`device.profile.name=analog-stereo`, `analog-surround-51`;
    /// PCM `front:0`, `surround51:0`): a discrete card's analog jack, read as its line out.
    /// A guess, and the evidence says so: no port tells line out from headphones or speakers.
    /// Never for a sink rule 10 marks virtual (a filter or null sink that copied the names).
    static func byAnalogOutputWithoutPort(_ sink: Sink, keys: KeyFamilies) -> (DeviceKind, String)? {
        let p = sink.properties
        // Not a filter or null sink that copied its device's names (rule 10 marks it).
        guard sink.ports.isEmpty, isALSA(sink, keys: keys), !keys.hasFormFactorKey || lookup(p, "device.form_factor") == nil,
              virtualMarker(sink) == nil
        else { return nil }
        var said: String?
        if let profile = value(p, "device.profile.name"), profile.hasPrefix("analog-") {
            said = "device.profile.name=\(p["device.profile.name"] ?? profile)"
        } else {
            for key in ["api.alsa.path", "device.string"] {
                guard let pcm = value(p, key) else { continue }
                if pcm.hasPrefix("front:") || pcm.hasPrefix("surround") { said = "\(key)=\(p[key] ?? pcm)"; break }
            }
        }
        guard let said else { return nil }
        return (.lineOut, "\(said) (a guess: an analog output whose card lists no port to say which jack, "
                + "and no device.form_factor; read as the card's line out)")
    }

    /// Whether the sink is an ALSA device: `alsa.*`/`api.alsa.*` properties, `device.api=alsa`,
    /// an ALSA driver, PipeWire's `object.path=alsa:…` or `factory.name=api.alsa.…` (what a
    /// `pw-cli ls Node` dump keeps).
    static func isALSA(_ sink: Sink, keys: KeyFamilies) -> Bool {
        let p = sink.properties
        return keys.hasALSAKey || keys.deviceAPI == "alsa" || sink.driver.hasPrefix("module-alsa")
            || value(p, "object.path")?.hasPrefix("alsa:") == true || keys.factoryName?.hasPrefix("api.alsa.") == true
    }
}
