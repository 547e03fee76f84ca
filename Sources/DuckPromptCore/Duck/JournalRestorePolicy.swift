import FoundationEssentials

// The restore policy: which live streams a dead owner's journal still holds ducked, and what
// undoes its duck. Pure: no server, no files.
extension DuckJournal {
    /// Whether a live stream's volume is one the duck ramp could have written over `original`:
    /// every channel is `original` scaled by one gain g (`math.scale`, libpulse's math)
    /// with `depth - 0.5 <= g < -0.05` dB, each channel within ±1 `pa_volume_t` step or ±0.1 dB
    /// of that. False when the volume equals the original, is louder, or its channels disagree
    /// (the user changed it; then it is left as the user set it).
    ///
    /// Channels whose original is 0 (muted) say nothing about the gain: they must still be 0.
    /// With `depth` -infinity (mute) every gain below -0.05 dB counts, -infinity included (all
    /// channels 0). With a finite depth, all-zero is not a ducked level (unless every original is
    /// so small that the ramp rounds it to 0).
    ///
    /// - Parameters:
    ///   - current: the stream's volume now (`pa_sink_input_info.volume`).
    ///   - original: its own volume from the journal; same channel count, else false.
    ///   - depth: the journal's duck depth in dB (< 0; 0, positive or NaN gives false).
    ///   - math: libpulse's volume arithmetic (`VolumeArithmetic.libpulse`).
    package static func isDuckedByUs(current: ChannelVolumes, original: ChannelVolumes, depth: Double,
                                     math: VolumeArithmetic) -> Bool {
        let cur = current.values, orig = original.values
        guard depth < 0, !cur.isEmpty, cur.count == orig.count else { return false }
        // Muted channels of the original carry no gain; if any became audible, it was raised.
        guard zip(cur, orig).allSatisfy({ $0.1 != 0 || $0.0 == 0 }) else { return false }
        // The gain, from the channel with the largest original (least rounding).
        guard let k = orig.indices.max(by: { orig[$0] < orig[$1] }), orig[k] > 0 else { return false }
        let gain = cur[k] == 0
            ? -Double.infinity
            : math.decibels(cur[k]) - math.decibels(orig[k])
        let inRange = gain < -0.05 && (depth == -.infinity || gain >= depth - 0.5)
        if inRange, matches(current: cur, expected: DuckPlan.volume(original, atGain: gain, math: math).values, math: math) {
            return true
        }
        // A stream whose loudest channel rounded to 0 at a finite gain: any finite depth could
        // have written all zeros only if scaling the original by the depth gives all zeros.
        if gain == -.infinity, depth.isFinite, cur.allSatisfy({ $0 == 0 }) {
            return math.scale(original, depth).values.allSatisfy { $0 == 0 }
        }
        return false
    }

    /// Every channel equal to what the ramp would write, within ±1 `pa_volume_t` (servers round
    /// through float) or ±0.1 dB.
    private static func matches(current: [UInt32], expected: [UInt32], math: VolumeArithmetic) -> Bool {
        zip(current, expected).allSatisfy { c, e in
            if max(c, e) - min(c, e) <= 1 { return true }
            guard c > 0, e > 0 else { return false }
            return abs(math.decibels(c) - math.decibels(e)) <= 0.1
        }
    }

    /// What to do on the server to undo this journal's duck, given every sink-input there now.
    /// Pure; the caller checks first that it is connected to the journal's server (`server`,
    /// `runtimeDir`) and that the owner is dead.
    ///
    /// - A journal stream still there (same index, same `RestoreKey`, same channel count) and
    ///   still at a level we set (`isDuckedByUs`): `.setVolume` back to its original. One the
    ///   user changed since is left alone. A different stream that reused the index (another
    ///   key) is left alone.
    /// - A journal stream that is gone (it ended after the owner died, so the server saved its
    ///   ducked volume), and every `ended` stream: `.repairSaved` with the original — unless a
    ///   stream restored above shares the saved volume (the server saves that one), or the same
    ///   key was already repaired.
    /// - A live stream not in the journal that shares the saved volume of a journaled or
    ///   ended one and is at a level the duck could have written over that one's original (it
    ///   started at the ducked volume the server saved: after the owner died, or after a server
    ///   restart): `.setVolume` to that original, and no repair for the key.
    /// - Parameter math: libpulse's volume arithmetic (`VolumeArithmetic.libpulse`).
    package func restoreActions(live: [SinkInput], math: VolumeArithmetic) -> [DuckAction] {
        let byIndex = Dictionary(live.map { ($0.index, $0) }, uniquingKeysWith: { a, _ in a })
        var actions: [DuckAction] = []
        var restoredKeys: [RestoreKey] = []
        var repairs: [Ended] = []
        var handled = Set(streams.map(\.index))
        for stream in streams {
            if let input = byIndex[stream.index], RestoreKey(input) == stream.key {
                if input.volume.values.count == stream.original.values.count,
                   Self.isDuckedByUs(current: input.volume, original: stream.original, depth: depth, math: math) {
                    actions.append(.setVolume(index: stream.index, volume: stream.original))
                    restoredKeys.append(stream.key)
                }
            } else {
                repairs.append(Ended(key: stream.key, original: stream.original))
            }
        }
        // A stream that started since, at the ducked volume the server saved for the key of a
        // journaled one (the owner died, or the server was restarted and the player
        // reconnected): its own volume back, which the server saves, so no repair is needed for
        // that key.
        for gone in streams.map({ Ended(key: $0.key, original: $0.original) }) + ended {
            for input in live where !handled.contains(input.index) && input.hasVolume
                && RestoreKey(input).sharesSavedVolume(with: gone.key)
                && input.volume.values.count == gone.original.values.count
                && Self.isDuckedByUs(current: input.volume, original: gone.original, depth: depth, math: math) {
                actions.append(.setVolume(index: input.index, volume: gone.original))
                restoredKeys.append(gone.key)
                handled.insert(input.index)
            }
        }
        var repaired: [RestoreKey] = []
        for entry in ended + repairs
        where entry.key != RestoreKey() // no saved volume to repair
            && !restoredKeys.contains(where: { $0.sharesSavedVolume(with: entry.key) }) && !repaired.contains(entry.key) {
            actions.append(.repairSaved(key: entry.key, volume: entry.original))
            repaired.append(entry.key)
        }
        return actions
    }
}
