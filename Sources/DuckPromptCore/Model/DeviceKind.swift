/// What kind of output device a sink is, as far as routing a prompt is concerned.
///
/// The raw values are the names printed by `duckprompt devices` and used in JSON and config.
public enum DeviceKind: String, Sendable, CaseIterable, Codable {
    /// Car audio (`device.form_factor=car`, port type CAR).
    case car
    /// Bluetooth in a media profile: A2DP, LE Audio BAP, or ASHA hearing aids.
    case bluetoothA2DP = "bluetooth-a2dp"
    /// Bluetooth in a telephony profile: HSP/HFP head unit.
    case bluetoothHFP = "bluetooth-hfp"
    /// A USB audio device (`device.bus=usb`).
    case usb
    /// Analog line-out or S/PDIF (iec958) output.
    case lineOut = "line-out"
    /// HDMI or DisplayPort audio.
    case hdmi
    /// Wired headphones or headset on a built-in card.
    case headphones
    /// The built-in loudspeaker.
    case speaker
    /// Audio that leaves this machine: tunnel, RAOP/AirPlay, RTP sinks.
    case network
    /// A sink with no device behind it: null, combine, remap, loopback and filter sinks
    /// (EasyEffects, PipeWire filter chains), ALSA loopback cards. Where such a sink sends its
    /// audio is `Classification.forwardsTo`.
    case virtual
    /// A device the classifier could not place.
    case unknown

    /// Whether a device of this kind is an external output in the AVAudioSession sense
    /// (before its port availability is considered).
    public var isExternalKind: Bool {
        switch self {
        case .car, .bluetoothA2DP, .bluetoothHFP, .usb, .lineOut, .hdmi, .headphones: true
        case .speaker, .network, .virtual, .unknown: false
        }
    }
}
