// What a journal may name, so that a forged or damaged one can do no more than a user with a
// volume slider: the bounds, `validate()` (every read), `bounded()` (every write), and
// `JournalProblem` (a file of the journal directory that cannot be used).
extension DuckJournal {
    /// The loudest per-channel volume a journal may restore: `PA_VOLUME_UI_MAX`
    /// (`pa_sw_volume_from_dB(+11)`, 99957, 153 %), the top of pavucontrol's slider. A journal
    /// can be written by anyone who can write the user's runtime directory, and what it names
    /// is set on another program's stream and then saved by the server for that stream's whole
    /// role: this bounds what a forged one can do to what a user does with a slider. An
    /// original above it is real only when set with pactl or an API (or dragged up during a
    /// deep duck, which divides by the gain), so `JournalStore.write` journals such a channel
    /// as this bound: the prompt itself restores the exact volume; only a recovery (after
    /// `kill -9`) or a handed-over duck brings it back at 153 %.
    package static let maxVolume: UInt32 = VolumeLimits.uiMax
    /// The most channels of a journaled volume: `PA_CHANNELS_MAX` (32).
    package static let maxChannels = VolumeLimits.channelsMax
    /// The deepest finite duck in dB: the CLI's lowest `--duck` and the config's `duck_db`
    /// (-200 dB); `DuckPrompt.play` clamps a deeper one to it. Mute is -infinity.
    package static let deepestDepth = PlayOptions.duckRange.lowerBound
    /// The longest field of a restore key and the longest server string, in UTF-8 bytes.
    package static let maxStringBytes = 1024

    /// Why a journaled volume and key cannot be restored, nil when they can: 1 to 32
    /// channels, each at most `maxVolume`, not every channel 0 (restoring it would mute the
    /// stream, and a muted stream's ducked volume is 0 already), key fields at most
    /// `maxStringBytes` without NUL.
    static func problem(original: ChannelVolumes, key: RestoreKey) -> String? {
        let values = original.values
        guard (1...maxChannels).contains(values.count) else {
            return "\(values.count) channels (a stream has 1 to \(maxChannels))"
        }
        if let loud = values.first(where: { $0 > maxVolume }) {
            return "volume \(loud) (\(VolumeLimits.percent(loud)) %) is above \(maxVolume) "
                + "(\(VolumeLimits.percent(maxVolume)) %, +11 dB), the most a journal restores"
        }
        guard values.contains(where: { $0 != 0 }) else {
            return "every channel's volume is 0: restoring it would mute the stream"
        }
        for field in [key.mediaRole, key.applicationName, key.applicationID, key.streamRestoreID] {
            if let problem = field.flatMap(stringProblem) { return "restore key: \(problem)" }
        }
        return nil
    }

    /// Why a string cannot be used (too long, or holds NUL, which C would cut it at).
    static func stringProblem(_ text: String) -> String? {
        if text.utf8.count > maxStringBytes { return "\(text.utf8.count) bytes (at most \(maxStringBytes))" }
        if text.utf8.contains(0) { return "holds a NUL character" }
        return nil
    }

    /// Checks everything a recovery would act on, so that a journal, forged or damaged, can
    /// neither set a volume no user sets nor mute or change a stream it does not name: version,
    /// pid > 0, depth -infinity (mute) or -200…0 dB, gain (a handover's) between the depth
    /// and 0 dB, each stream's index not `PA_INVALID_INDEX` and listed once, each volume
    /// (`problem(original:key:)`), a restore key for every ended stream, strings of sane
    /// length. Every journal read goes through it (`decoded(from:)`); `JournalStore.write`
    /// keeps every journal it writes within it (`bounded()`).
    /// - Throws: `DuckPromptError(.unsupportedData)` whose message says what is out of bounds
    ///   (the caller names the file).
    package func validate() throws {
        func refuse(_ why: String) -> DuckPromptError {
            DuckPromptError(.unsupportedData, "refused: \(why)")
        }
        guard version == Self.currentVersion else {
            throw refuse("journal version \(version), this duckprompt reads version \(Self.currentVersion)")
        }
        guard pid > 0 else { throw refuse("pid \(pid)") }
        guard depth == -.infinity || (depth >= Self.deepestDepth && depth <= 0) else {
            throw refuse("depth \(depth) dB (a duck is -inf for mute, else \(Int(Self.deepestDepth)) to 0 dB)")
        }
        if let gain, !(gain <= 0 && gain >= depth) {
            throw refuse("gain \(gain) dB is not between the depth (\(depth) dB) and 0 dB")
        }
        for (name, value) in [("server", server), ("runtimeDir", runtimeDir), ("serverName", serverName)] {
            if let problem = value.flatMap(Self.stringProblem) { throw refuse("\(name): \(problem)") }
        }
        var seen = Set<UInt32>()
        for stream in streams {
            guard stream.index != VolumeLimits.invalidIndex else {
                throw refuse("a stream's index is PA_INVALID_INDEX (\(stream.index))")
            }
            guard seen.insert(stream.index).inserted else { throw refuse("stream #\(stream.index) is listed twice") }
            if let problem = Self.problem(original: stream.original, key: stream.key) {
                throw refuse("stream #\(stream.index): \(problem)")
            }
        }
        for (n, gone) in ended.enumerated() {
            guard gone.key != RestoreKey() else { throw refuse("ended stream \(n + 1) has no restore key") }
            if let problem = Self.problem(original: gone.original, key: gone.key) {
                throw refuse("ended stream \(n + 1): \(problem)")
            }
        }
        guard players.count <= Self.maxPlayers else {
            throw refuse("\(players.count) paused players (at most \(Self.maxPlayers))")
        }
        for (n, player) in players.enumerated() {
            if let problem = Self.problem(player) { throw refuse("paused player \(n + 1): \(problem)") }
        }
    }

    /// The most paused players a journal names.
    package static let maxPlayers = 64

    /// Why a journaled player cannot be resumed, nil when it can: its bus name an MPRIS
    /// player's (a forged journal can do no more than `Play` a player, as any client of the
    /// session bus can), strings of sane length, a rewind within `PlayOptions.rewindRangeMs`.
    static func problem(_ player: PausedPlayer) -> String? {
        guard player.busName.hasPrefix(MPRISPlayer.busNamePrefix) else {
            return "bus name '\(player.busName.prefix(80))' is not an MPRIS player's"
        }
        for text in [player.busName, player.uniqueName, player.label, player.reason] + [player.trackID, player.url].compactMap({ $0 }) {
            if let problem = stringProblem(text) { return problem }
        }
        guard PlayOptions.rewindRangeMs.contains(player.rewindMs) else {
            return "rewind \(player.rewindMs) ms is out of range"
        }
        guard player.pausedAt.isFinite else { return "pausedAt is not a number" }
        return nil
    }

    /// This journal as `JournalStore.write` stores it, within `validate()`'s bounds: channels
    /// above `maxVolume` lowered to it; depth and gain clamped to -200…0 dB (mute stays
    /// -infinity); left out, as nothing can be restored from them: streams and ended streams
    /// with no channel or more than 32, every channel 0, a key field over `maxStringBytes` or
    /// holding NUL, and ended streams without a key; strings over `maxStringBytes` dropped.
    /// None of these comes from a real server but the clamped volume (a stream set above
    /// 153 % with pactl).
    package func bounded() -> DuckJournal {
        var journal = self
        func clamp(_ dB: Double) -> Double {
            dB == -.infinity ? dB : dB.isNaN ? 0 : min(0, max(Self.deepestDepth, dB))
        }
        func lowered(_ volume: ChannelVolumes) -> ChannelVolumes {
            ChannelVolumes(volume.values.map { min($0, Self.maxVolume) })
        }
        journal.depth = clamp(depth)
        journal.gain = gain.map { max(journal.depth, clamp($0)) }
        journal.streams = streams.compactMap { stream in
            var s = stream
            s.original = lowered(s.original)
            return s.index != VolumeLimits.invalidIndex && Self.problem(original: s.original, key: s.key) == nil ? s : nil
        }
        var indices = Set<UInt32>()
        journal.streams.removeAll { !indices.insert($0.index).inserted }
        journal.ended = ended.compactMap { gone in
            var g = gone
            g.original = lowered(g.original)
            return g.key != RestoreKey() && Self.problem(original: g.original, key: g.key) == nil ? g : nil
        }
        if let s = server, Self.stringProblem(s) != nil { journal.server = nil }
        if let r = runtimeDir, Self.stringProblem(r) != nil { journal.runtimeDir = nil }
        if Self.stringProblem(serverName) != nil { journal.serverName = "" }
        journal.players = Array(players.filter { Self.problem($0) == nil }.prefix(Self.maxPlayers))
        return journal
    }
}

/// Something wrong with a file in the journal directory, found by `JournalStore.orphans`.
package struct JournalProblem: Sendable, Equatable, CustomStringConvertible {
    /// The file concerned.
    package var path: String
    /// What is wrong, for a user.
    package var reason: String
    /// Whether the file was removed.
    package var removed: Bool
    /// How many files had this problem: more than 1 for a summary, whose `path` is the
    /// directory and whose `reason` names the first and last file.
    package var count: Int

    package init(path: String, reason: String, removed: Bool, count: Int = 1) {
        self.path = path
        self.reason = reason
        self.removed = removed
        self.count = count
    }

    package var description: String {
        "\(path): \(reason)\(removed ? "; removed" : count > 1 ? "; all left in place" : "; left in place")"
    }
}
