/// The sink that takes over from a prompt's sink that went away mid-prompt: the same Bluetooth
/// device in another profile. WirePlumber switches a headset from A2DP to HFP when any app
/// starts recording (`bluetooth.autoswitch-to-headset-profile`), and back: the old sink goes,
/// a new one of the same device comes (FACTS.md, "Calls"). A sink of another device is never
/// a successor: a prompt for the headset does not move to the speaker. Pure.
package enum SinkSuccessor {
    /// The Bluetooth address a sink belongs to, upper-cased with `:`: PipeWire's
    /// `api.bluez5.address`, PulseAudio's `device.string` of a bluez sink, else the address in
    /// its name (`bluez_output.AA_BB_CC_DD_EE_FF.1`, `bluez_sink.AA:BB:…​.a2dp_sink`); nil for a
    /// sink of no Bluetooth device.
    package static func bluetoothAddress(of sink: Sink) -> String? {
        let p = sink.properties
        if let address = p["api.bluez5.address"], let found = address.normalisedAddress { return found }
        if p["device.api"]?.hasPrefix("bluez") == true, let found = p["device.string"]?.normalisedAddress { return found }
        for part in sink.name.split(separator: ".") where part.count == 17 {
            if let found = String(part).normalisedAddress { return found }
        }
        return nil
    }

    /// The sink among `sinks` that is `gone`'s device under another name: the same Bluetooth
    /// address, and not `gone` itself. Nil when `gone` is no Bluetooth device's, or none is there.
    package static func successor(of gone: Sink, among sinks: [Sink]) -> Sink? {
        guard let address = bluetoothAddress(of: gone) else { return nil }
        return sinks.first { $0.name != gone.name && bluetoothAddress(of: $0) == address }
    }
}

extension String {
    /// "aa_bb_cc_dd_ee_ff" or "AA:BB:CC:DD:EE:FF" as "AA:BB:CC:DD:EE:FF"; nil for anything else.
    fileprivate var normalisedAddress: String? {
        let parts = split(omittingEmptySubsequences: false) { $0 == ":" || $0 == "_" }
        guard parts.count == 6, parts.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isHexDigit) }) else { return nil }
        return parts.map { $0.uppercased() }.joined(separator: ":")
    }
}
