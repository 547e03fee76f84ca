import CPulseAudio

/// Volume arithmetic, all of it through libpulse: UI percentages are cubic, and only
/// libpulse's own functions agree with what pactl and pavucontrol show. Pure (no server).
package enum VolumeMath {
    /// `pa_volume_t` for 0 dB (`PA_VOLUME_NORM`, 65536).
    package static let norm: UInt32 = dp_pa_volume_norm()

    /// `PA_VOLUME_UI_MAX`: `libpulse.pa_sw_volume_from_dB(+11.0)`, 99957 (153 % as pactl prints it),
    /// the most volume.h recommends a UI to offer (pavucontrol's slider ends there).
    package static let uiMax: UInt32 = libpulse.pa_sw_volume_from_dB(11.0)

    /// `PA_CHANNELS_MAX` (32): the most channels a `pa_cvolume` holds.
    package static let channelsMax = Int(dp_pa_channels_max())

    /// `PA_INVALID_INDEX` (4294967295): no object.
    package static let invalidIndex: UInt32 = dp_pa_invalid_index()

    /// The software factor for a gain: `pa_sw_volume_from_dB`. -inf dB gives `PA_VOLUME_MUTED`.
    package static func volume(fromDecibels dB: Double) -> UInt32 { libpulse.pa_sw_volume_from_dB(dB) }

    /// The gain of a `pa_volume_t`: `pa_sw_volume_to_dB` (-inf for muted).
    package static func decibels(of volume: UInt32) -> Double { libpulse.pa_sw_volume_to_dB(volume) }

    /// The gain of a pactl percentage (100 % = `PA_VOLUME_NORM`, cubic scale).
    package static func decibels(fromPercent percent: Double) -> Double {
        libpulse.pa_sw_volume_to_dB(UInt32(min(Double(dp_pa_volume_max()), (percent / 100 * Double(norm)).rounded())))
    }

    /// The `pa_volume_t` of a linear factor: `pa_sw_volume_from_linear` (cubic: round(cbrt(v) ×
    /// `PA_VOLUME_NORM`)); `PA_VOLUME_MUTED` for 0 or less.
    package static func volume(fromLinear linear: Double) -> UInt32 {
        linear.isNaN ? 0 : libpulse.pa_sw_volume_from_linear(linear)
    }

    /// Each channel multiplied by a gain: `pa_sw_volume_multiply(v, libpulse.pa_sw_volume_from_dB(dB))`.
    /// - Parameters:
    ///   - volumes: per-channel `pa_volume_t`, any channel order.
    ///   - dB: the gain; 0 returns `volumes` unchanged, -infinity mutes.
    package static func scale(_ volumes: ChannelVolumes, by dB: Double) -> ChannelVolumes {
        if dB == 0 { return volumes }
        let factor = libpulse.pa_sw_volume_from_dB(dB)
        return ChannelVolumes(volumes.values.map { libpulse.pa_sw_volume_multiply($0, factor) })
    }

    /// Each channel divided by a gain (`pa_sw_volume_divide`): the inverse of `scale`, used
    /// to take a hidden duck factor back out of a volume the user set while ducked.
    package static func unscale(_ volumes: ChannelVolumes, by dB: Double) -> ChannelVolumes {
        if dB == 0 { return volumes }
        let factor = libpulse.pa_sw_volume_from_dB(dB)
        return ChannelVolumes(volumes.values.map {
            min(dp_pa_volume_max(), libpulse.pa_sw_volume_divide($0, factor))
        })
    }

}

extension VolumeArithmetic {
    /// `VolumeMath`'s functions, libpulse's own, as DuckPromptCore's pure decisions take them
    /// (`DuckPlan`, the journal's restore policy).
    package static let libpulse = VolumeArithmetic(name: "libpulse", scale: VolumeMath.scale, unscale: VolumeMath.unscale,
                                                   decibels: VolumeMath.decibels(of:),
                                                   fromLinear: VolumeMath.volume(fromLinear:))
}
