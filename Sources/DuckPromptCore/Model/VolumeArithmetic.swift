/// libpulse's volume arithmetic as the pure decisions need it. DuckPromptCore links no C
/// library, so the I/O shell hands it in: `VolumeArithmetic.libpulse` (DuckPrompt/Pulse/VolumeMath.swift),
/// whose functions are libpulse's own, the only ones that agree with pactl and pavucontrol.
/// Two are equal when they have the same `name`.
package struct VolumeArithmetic: Sendable, Equatable {
    /// Whose arithmetic this is ("libpulse").
    package let name: String
    /// Each channel multiplied by a gain in dB: `pa_sw_volume_multiply(v, pa_sw_volume_from_dB(dB))`.
    package var scale: @Sendable (_ volumes: ChannelVolumes, _ dB: Double) -> ChannelVolumes
    /// Each channel divided by a gain in dB (`pa_sw_volume_divide`): `scale`'s inverse.
    package var unscale: @Sendable (_ volumes: ChannelVolumes, _ dB: Double) -> ChannelVolumes
    /// The gain of a `pa_volume_t`, in dB: `pa_sw_volume_to_dB` (-infinity for muted).
    package var decibels: @Sendable (_ volume: UInt32) -> Double
    /// The `pa_volume_t` of a linear factor (PipeWire's `channelVolumes`): `pa_sw_volume_from_linear`,
    /// `round(cbrt(v) × PA_VOLUME_NORM)` as pipewire-pulse's `volume_from_linear`; 0 for 0 or less.
    package var fromLinear: @Sendable (_ linear: Double) -> UInt32

    package init(name: String,
                 scale: @escaping @Sendable (ChannelVolumes, Double) -> ChannelVolumes,
                 unscale: @escaping @Sendable (ChannelVolumes, Double) -> ChannelVolumes,
                 decibels: @escaping @Sendable (UInt32) -> Double,
                 fromLinear: @escaping @Sendable (Double) -> UInt32) {
        self.name = name
        self.scale = scale
        self.unscale = unscale
        self.decibels = decibels
        self.fromLinear = fromLinear
    }

    package static func == (a: VolumeArithmetic, b: VolumeArithmetic) -> Bool { a.name == b.name }
}

/// libpulse's volume constants (volume.h, sample.h, def.h): fixed by its ABI, so written here;
/// a unit test checks each against libpulse's own (`VolumeLimitsTests`, PromptPlanTests.swift).
package enum VolumeLimits {
    /// `PA_VOLUME_NORM`: the `pa_volume_t` of 0 dB, 65536.
    package static let norm: UInt32 = 0x10000
    /// `PA_VOLUME_UI_MAX`: `pa_sw_volume_from_dB(+11.0)`, 99957 (153 % as pactl prints it), the
    /// most volume.h recommends a UI offers.
    package static let uiMax: UInt32 = 99957
    /// `PA_CHANNELS_MAX`: the most channels a `pa_cvolume` holds, 32.
    package static let channelsMax = 32
    /// `PA_INVALID_INDEX`: no object, 4294967295.
    package static let invalidIndex = UInt32.max

    /// A volume as pactl prints it: `(v × 100 + PA_VOLUME_NORM / 2) / PA_VOLUME_NORM` percent
    /// (linear in `pa_volume_t`, so cubic in amplitude).
    package static func percent(_ volume: UInt32) -> UInt64 {
        (UInt64(volume) * 100 + UInt64(norm) / 2) / UInt64(norm)
    }
}
