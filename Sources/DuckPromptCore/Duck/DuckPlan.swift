/// How other streams are lowered while a prompt plays (`--duck-mode`).
public enum DuckMode: String, Sendable, Equatable, CaseIterable {
    /// Lower by the duck depth (`--duck`, default -20 dB).
    case duck
    /// Silence them (volume `PA_VOLUME_MUTED`), ramped.
    case mute
    /// Pause every MPRIS player that can pause (`PauseMode.every`), and lower the other
    /// streams by the duck depth.
    case pause
    /// Leave every stream as it is.
    case none
}

/// What the server's restore policy files a stream's volume under: PulseAudio's
/// module-stream-restore and WirePlumber's restore-stream key on the media role, else the
/// application. A stream that ends while ducked leaves its ducked volume saved under these.
package struct RestoreKey: Sendable, Hashable, Codable {
    /// `media.role`.
    package var mediaRole: String?
    /// `application.name`.
    package var applicationName: String?
    /// `application.id`.
    package var applicationID: String?
    /// `module-stream-restore.id` (PulseAudio: the exact key it saved under).
    package var streamRestoreID: String?

    package init(mediaRole: String? = nil, applicationName: String? = nil,
                applicationID: String? = nil, streamRestoreID: String? = nil) {
        self.mediaRole = mediaRole
        self.applicationName = applicationName
        self.applicationID = applicationID
        self.streamRestoreID = streamRestoreID
    }

    /// The key of a sink-input, from its properties.
    package init(_ input: SinkInput) {
        self.init(mediaRole: input.properties["media.role"],
                  applicationName: input.properties["application.name"],
                  applicationID: input.properties["application.id"],
                  streamRestoreID: input.properties["module-stream-restore.id"])
    }

    /// Whether a new stream would be started at the volume saved for `self`: same role, or
    /// (without a role) same application.
    package func sharesSavedVolume(with other: RestoreKey) -> Bool {
        if let a = streamRestoreID, let b = other.streamRestoreID { return a == b }
        if let role = mediaRole { return role == other.mediaRole }
        if other.mediaRole != nil { return false }
        if let id = applicationID, id == other.applicationID { return true }
        if let name = applicationName, name == other.applicationName { return true }
        return false
    }
}

/// Something the libpulse side must do for the duck.
package enum DuckAction: Sendable, Equatable {
    /// `pa_context_set_sink_input_volume(index, volume)`.
    case setVolume(index: UInt32, volume: ChannelVolumes)
    /// Make the server's saved volume for `key` be `volume` again (the stream is gone).
    case repairSaved(key: RestoreKey, volume: ChannelVolumes)
}

extension [DuckAction] {
    /// The `setVolume` actions, in order: (sink-input index, volume).
    package var volumeWrites: [(index: UInt32, volume: ChannelVolumes)] {
        compactMap { action in
            guard case .setVolume(let index, let volume) = action else { return nil }
            return (index, volume)
        }
    }

    /// The `repairSaved` actions, in order: (restore key, volume).
    package var savedRepairs: [(key: RestoreKey, volume: ChannelVolumes)] {
        compactMap { action in
            guard case .repairSaved(let key, let volume) = action else { return nil }
            return (key, volume)
        }
    }
}

/// The bookkeeping of one duck, as a hidden gain on top of each stream's own volume:
/// which sink-inputs are lowered, what their own volume is, what was written, and what to do
/// when streams appear, change or end during the prompt. Pure: it returns `DuckAction`s;
/// `DuckSession` applies them with libpulse.
///
/// Each stream's own volume ("original") starts as the exact `pa_cvolume` found. The audible
/// volume is original × gain (`math.scale`, libpulse's dB math). A volume change that is not
/// one of our writes is the user's: their value divided by the gain becomes the stream's own
/// volume, so it is kept after the prompt; except for a stream that appeared during the prompt
/// (for `settlingTime`), and one found at 0, whose first audible volume is its own (never a
/// volume computed from a 0 that was no real read). At gain 0 dB the originals are written bit
/// for bit.
package struct DuckPlan: Sendable, Equatable {
    /// A ducked stream.
    package struct Entry: Sendable, Equatable {
        /// Sink-input index (`pa_sink_input_info.index`).
        package var index: UInt32
        /// The stream's own volume, without the duck (`pa_cvolume`, its channel order).
        package var original: ChannelVolumes
        /// Where the server files its saved volume.
        package var key: RestoreKey
        /// What the server has, as far as we know: found, written by us, or set by the user.
        package var current: ChannelVolumes
        /// Our writes whose change event has not come back yet, oldest first.
        package var inFlight: [ChannelVolumes]
        /// The last state the server reported that is accounted for: the volume found, then
        /// each of our writes as it comes back, or a foreign change once seen. A read of the
        /// stream may show it again while our next write is on its way (a read sent just before
        /// a write; a busy server answers two info requests with the same state, as PulseAudio
        /// merges pending change events): that is not a change.
        package var confirmed: ChannelVolumes?
        /// For a stream that appeared during the duck: until when a change that is not ours
        /// counts as the server settling its initial volume (WirePlumber restores a new
        /// stream's saved volume a few ms after it appears), not as the user's.
        package var settlingUntil: ContinuousClock.Instant?
        /// How many of the writes in `inFlight` were sent before a change that was not ours
        /// was seen: when one of them comes back, it landed after that change and overwrote it
        /// on the server, so the level the change asked for is written again.
        package var overtaken = 0
        /// The last change that was not ours, as seen (`volume`), and the gain the duck was at
        /// then: while the duck is at that gain, the stream's level is exactly `volume` (the
        /// own volume derived from it, rescaled, could differ by a rounding step).
        package var foreign: (volume: ChannelVolumes, gain: Double)?

        package init(index: UInt32, original: ChannelVolumes, key: RestoreKey = RestoreKey(),
                    current: ChannelVolumes? = nil, inFlight: [ChannelVolumes] = []) {
            self.index = index
            self.original = original
            self.key = key
            self.current = current ?? original
            self.inFlight = inFlight
            confirmed = self.current
        }

        package static func == (a: Entry, b: Entry) -> Bool {
            a.index == b.index && a.original == b.original && a.key == b.key
        }
    }

    /// Streams lowered now, in index order.
    package private(set) var entries: [Entry]
    /// Streams that ended while ducked: their saved volume must be repaired.
    package private(set) var ended: [Entry] = []
    /// Full duck depth in dB (negative, -infinity for mute; 0 means no duck).
    package let depth: Double
    /// The gain last applied, dB relative to the originals (0 = not ducked).
    package private(set) var gain: Double = 0
    /// `media.role` values left alone.
    package let exemptRoles: Set<String>
    /// libpulse's volume arithmetic (`VolumeArithmetic.libpulse`).
    package let math: VolumeArithmetic
    /// Sink-inputs never touched (the prompt's own stream, and the streams of players paused
    /// or left alone for it).
    package private(set) var excluded: Set<UInt32>
    /// The streams of players paused for the prompt (`PlayerPauser`), off the duck while their
    /// player stays paused: `.pausing` until one is seen corked (`pa_sink_input_info.corked`; a
    /// `Pause` takes a few ms to reach the stream), then `.paused`. One seen playing after that
    /// (the user pressed Play) leaves this list and joins the duck at the current gain.
    package private(set) var pausedStreams: [UInt32: PausedStream] = [:]

    /// Where a paused player's stream is (`pausedStreams`).
    package enum PausedStream: Sendable, Equatable {
        /// Its player was asked to pause; the stream has not been seen corked yet.
        case pausing
        /// Seen corked: the next info that shows it playing is the user's Play.
        case paused
    }

    /// Selects the streams to duck in a snapshot (see `shouldDuck`).
    ///
    /// - Parameters:
    ///   - inputs: every sink-input on the server (`pa_context_get_sink_input_info_list`).
    ///   - depth: duck depth in dB, <= 0 (-infinity mutes); 0 or more, or NaN, ducks nothing.
    ///   - exemptRoles: `media.role` values left alone (default `phone`).
    ///   - excluding: sink-input indices never touched (the prompt's own stream, the streams
    ///     of players left alone).
    ///   - pausing: the streams of players paused for the prompt (`pausedStreams`), off the
    ///     duck until the user plays one again.
    ///   - math: libpulse's volume arithmetic (`VolumeArithmetic.libpulse`).
    package init(inputs: [SinkInput], depth: Double, exemptRoles: Set<String> = ["phone"],
                excluding: Set<UInt32> = [], pausing: Set<UInt32> = [], math: VolumeArithmetic) {
        self.math = math
        self.depth = depth < 0 ? depth : 0
        self.exemptRoles = exemptRoles
        self.excluded = excluding.union(pausing)
        let corked = Set(inputs.filter(\.corked).map(\.index))
        for index in pausing { pausedStreams[index] = corked.contains(index) ? .paused : .pausing }
        entries = []
        guard self.depth < 0 else { return }
        entries = inputs
            .filter { shouldDuck($0) }
            .sorted { $0.index < $1.index }
            .map { Entry(index: $0.index, original: $0.volume, key: RestoreKey($0)) }
    }

    /// Takes over the duck an interrupted prompt handed over (`JournalStore.takeHandover`), so
    /// that the streams stay down between the two prompts: each of its streams still there
    /// (same index and `RestoreKey`, same channel count, not excluded) gets the journal's own
    /// volume as its original and its live volume as current; its ended streams are kept for
    /// repair; the gain becomes the journal's `gain` (else its depth). The next ramp starts
    /// from there (to this plan's depth, or to 0 dB when this prompt does not duck). A stream
    /// of a paused player that the handed-over duck holds (the user played it during that
    /// prompt) is taken over too, and leaves `pausedStreams`.
    /// - Parameters:
    ///   - journal: the handed-over duck.
    ///   - live: every sink-input now (`pa_context_get_sink_input_info_list`).
    package mutating func adopt(_ journal: DuckJournal, live: [SinkInput]) {
        let byIndex = Dictionary(live.map { ($0.index, $0) }, uniquingKeysWith: { a, _ in a })
        for stream in journal.streams {
            guard let input = byIndex[stream.index], RestoreKey(input) == stream.key,
                  !excluded.contains(stream.index) || pausedStreams[stream.index] != nil, input.hasVolume,
                  input.volume.values.count == stream.original.values.count else { continue }
            pausedStreams[stream.index] = nil
            excluded.remove(stream.index)
            entries.removeAll { $0.index == stream.index }
            entries.append(Entry(index: stream.index, original: stream.original, key: stream.key,
                                 current: input.volume))
        }
        entries.sort { $0.index < $1.index }
        let handed = journal.gain ?? journal.depth
        gain = handed.isNaN ? 0 : min(0, handed)
        for gone in journal.ended where !ended.contains(where: { $0.key == gone.key }) {
            // Saved by the server at (about) the handed-over gain.
            var entry = Entry(index: UInt32.max, original: gone.original, key: gone.key)
            entry.current = Self.volume(gone.original, atGain: gain, math: math)
            ended.append(entry)
        }
    }

    /// Whether a stream is ducked: it has a writable volume, its role is not exempt nor a
    /// call's (`CallStreams.isCallRole`: a call that starts mid-prompt is never ducked), it is not
    /// excluded, and it is not plumbing — a stream that carries another sink's audio (owned by
    /// a module: loopback, combine, remap, filters; or a PipeWire filter/loopback output, which
    /// shares a `node.link-group`; or EasyEffects' output). Those are left alone: what feeds
    /// them is ducked instead, and a prompt routed through a virtual sink is not ducked by its
    /// own duck.
    package func shouldDuck(_ input: SinkInput) -> Bool {
        guard depth < 0, !excluded.contains(input.index), input.hasVolume, input.volumeWritable,
              !input.volume.values.isEmpty else { return false }
        if let role = input.mediaRole, exemptRoles.contains(role) || CallStreams.isCallRole(role) { return false }
        if DuckPlan.isOwn(input) { return false }
        return !DuckPlan.isPlumbing(input)
    }

    /// duckprompt's own streams: a prompt (`duckprompt.prompt`, also the one of a prompt that
    /// was just interrupted and hands its duck over), a saved-volume repair
    /// (`duckprompt.repair`) or the keep-awake silence (`duckprompt.keep-awake`). Never ducked.
    package static func isOwn(_ input: SinkInput) -> Bool {
        input.properties["duckprompt.prompt"] != nil || input.properties["duckprompt.repair"] != nil
            || input.properties["duckprompt.keep-awake"] != nil
    }

    /// Streams that carry other streams: a module's own stream (PulseAudio loopback, combine,
    /// remap, ladspa, echo-cancel: driver `module-*.c`; a client's stream has driver
    /// `protocol-native.c`, and is owned by the native-protocol module, so the owner alone does
    /// not tell), PipeWire filter-chain/loopback outputs (`node.link-group`), EasyEffects' output
    /// (`application.id=com.github.wwmm.easyeffects`).
    package static func isPlumbing(_ input: SinkInput) -> Bool {
        if input.driver.hasPrefix("module-") { return true }
        let p = input.properties
        if p["node.link-group"] != nil { return true }
        if p["application.id"] == "com.github.wwmm.easyeffects" { return true }
        if p["media.class"] == "Stream/Output/Audio/Internal" { return true }
        return false
    }

    /// The volume of every ducked stream at `gain` dB relative to its own; at 0 dB, the
    /// originals exactly.
    package func volumes(atGain gain: Double) -> [(index: UInt32, volume: ChannelVolumes)] {
        entries.map { ($0.index, Self.volume($0.original, atGain: gain, math: math)) }
    }

    static func volume(_ original: ChannelVolumes, atGain gain: Double, math: VolumeArithmetic) -> ChannelVolumes {
        if gain == -.infinity { return ChannelVolumes(original.values.map { _ in 0 }) }
        return math.scale(original, gain)
    }

    /// Forgets a stream without repairing anything (it was excluded after the fact).
    package mutating func remove(index: UInt32) {
        entries.removeAll { $0.index == index }
    }

    /// The streams of a player that refused its `Pause` (or did not answer): they play on, so
    /// they join the duck at their next info (`appeared`), as a stream the user played again.
    package mutating func pauseRefused(streams: [UInt32]) {
        for index in streams where pausedStreams[index] != nil { pausedStreams[index] = .paused }
    }

    /// Excludes a sink-input from now on (the prompt's own stream, once its index is known).
    package mutating func exclude(_ index: UInt32) {
        excluded.insert(index)
        remove(index: index)
    }

    /// The level of entry `i` at `gain`: its own volume scaled by the gain (at 0 dB its own
    /// volume bit for bit), except that at the gain where a foreign change was seen, that
    /// change's exact value.
    private func level(_ i: Int, atGain gain: Double) -> ChannelVolumes {
        if let foreign = entries[i].foreign, foreign.gain == gain { return foreign.volume }
        return Self.volume(entries[i].original, atGain: gain, math: math)
    }

    private mutating func write(_ i: Int, _ volume: ChannelVolumes) -> DuckAction? {
        guard volume != entries[i].current else { return nil }
        entries[i].current = volume
        entries[i].inFlight.append(volume)
        if entries[i].inFlight.count > 64 { entries[i].inFlight.removeFirst() }
        return .setVolume(index: entries[i].index, volume: volume)
    }

    /// Moves every ducked stream to `gain` dB (one ramp step).
    package mutating func apply(gain: Double) -> [DuckAction] {
        self.gain = gain
        return entries.indices.compactMap { write($0, level($0, atGain: gain)) }
    }

    /// How long after a stream appears a foreign volume change counts as the server settling
    /// its initial volume rather than the user's doing.
    package static let settlingTime: Duration = .milliseconds(300)

    /// The own volume of a stream that starts at `volume`: if that is the ducked volume the
    /// server saved for an earlier stream of the same role or application (one that ended, or
    /// still plays, while ducked), the earlier stream's own volume — so it is not ducked twice.
    private func ownVolume(ofNew volume: ChannelVolumes, key: RestoreKey, index: UInt32) -> ChannelVolumes {
        guard gain < 0, let earlier = (ended.reversed() + entries).first(where: {
            $0.index != index && $0.key.sharesSavedVolume(with: key) && Self.close($0.current, volume)
        }) else { return volume }
        return earlier.original
    }

    /// A sink-input appeared during the prompt: ducked at once to the current gain if it
    /// qualifies, with the own volume `ownVolume(ofNew:)` gives.
    /// - Parameter now: the time it was seen (starts its settling window).
    /// A paused player's stream (`pausedStreams`) is seen corked, then joins the duck the
    /// first time it is seen playing after that.
    package mutating func appeared(_ input: SinkInput, now: ContinuousClock.Instant = .now) -> [DuckAction] {
        guard !entries.contains(where: { $0.index == input.index }) else { return changed(input, now: now) }
        if let state = pausedStreams[input.index] {
            guard !input.corked else {
                pausedStreams[input.index] = .paused
                return []
            }
            guard state == .paused else { return [] }
            pausedStreams[input.index] = nil
            excluded.remove(input.index)
        }
        guard shouldDuck(input) else { return [] }
        let key = RestoreKey(input)
        let original = ownVolume(ofNew: input.volume, key: key, index: input.index)
        var entry = Entry(index: input.index, original: original, key: key, current: input.volume)
        entry.settlingUntil = now + Self.settlingTime
        entries.append(entry)
        entries.sort { $0.index < $1.index }
        let i = entries.firstIndex { $0.index == input.index }!
        return write(i, Self.volume(original, atGain: gain, math: math)).map { [$0] } ?? []
    }

    /// Volumes equal within rounding (±1 per channel: servers round through float).
    static func close(_ a: ChannelVolumes, _ b: ChannelVolumes) -> Bool {
        a.values.count == b.values.count
            && zip(a.values, b.values).allSatisfy { max($0, $1) - min($0, $1) <= 1 }
    }

    /// A sink-input's info arrived after a change event. If its volume is one of our writes in
    /// flight, it is ours. Otherwise the user (or another program) set it: that value divided by
    /// the current gain becomes the stream's own volume, and the audible value is left as they
    /// set it. Nothing is written back.
    package mutating func changed(_ input: SinkInput, now: ContinuousClock.Instant = .now) -> [DuckAction] {
        guard entries.contains(where: { $0.index == input.index }) else { return appeared(input, now: now) }
        return changed(index: input.index, volume: input.volume, now: now)
    }

    /// `changed(_:now:)` for a volume seen without the rest of the stream's info (the one its
    /// PipeWire node applied: `PipeWireWatch`); nothing for a stream not ducked.
    package mutating func changed(index: UInt32, volume seen: ChannelVolumes,
                                 now: ContinuousClock.Instant = .now) -> [DuckAction] {
        guard let i = entries.firstIndex(where: { $0.index == index }) else { return [] }
        if let k = entries[i].inFlight.firstIndex(where: { Self.close($0, seen) }) {
            entries[i].inFlight.removeFirst(k + 1)
            entries[i].confirmed = seen
            guard entries[i].overtaken > 0 else { return [] }
            // A write of ours sent before a foreign change was seen landed after it and
            // overwrote it: the server is at our old value; the level the change asked for
            // (the own volume derived from it, at the current gain) is written again.
            entries[i].overtaken = max(0, entries[i].overtaken - (k + 1))
            entries[i].current = seen
            return write(i, level(i, atGain: gain)).map { [$0] } ?? []
        }
        if Self.close(seen, entries[i].current) { return [] }
        if let confirmed = entries[i].confirmed, Self.close(seen, confirmed) { return [] }
        // Not ours. Our writes still in flight were sent before it and may land after it.
        entries[i].current = seen
        entries[i].overtaken = entries[i].inFlight.count
        entries[i].confirmed = seen
        let settling = entries[i].settlingUntil.map { now < $0 } ?? false
        if settling || entries[i].original.isSilent {
            // The server set the new stream's initial (restored) volume: that is its own
            // volume, ducked now like the rest. A stream found silent has no own volume yet
            // (pipewire-pulse answers 0 until the node's Props are read, later than the
            // settling time under load; or a stream at 0, raised now): its first audible
            // volume is its own, whenever it comes, and the server may still settle it.
            if !settling { entries[i].settlingUntil = now + Self.settlingTime }
            entries[i].original = ownVolume(ofNew: seen, key: entries[i].key, index: entries[i].index)
            entries[i].foreign = nil
            return write(i, level(i, atGain: gain)).map { [$0] } ?? []
        }
        // Theirs: the stream is to sound as they set it now, and their value divided by the
        // duck's gain is its own volume from now on.
        entries[i].foreign = (seen, gain)
        if gain == -.infinity || gain == 0 {
            entries[i].original = seen
        } else {
            entries[i].original = math.unscale(seen, gain)
        }
        return []
    }

    /// A sink-input ended. If it ended while ducked, the server saved a ducked volume for its
    /// key: it is remembered for repair at release (unless a newer stream of the key takes over).
    package mutating func ended(index: UInt32) -> [DuckAction] {
        guard let i = entries.firstIndex(where: { $0.index == index }) else { return [] }
        let entry = entries.remove(at: i)
        if entry.current != entry.original {
            ended.removeAll { $0.key == entry.key }
            ended.append(entry)
        }
        return []
    }

    /// Whether every write sent has come back in a sink-input info (or was overtaken and
    /// written again): the server's levels are the ones the plan knows.
    package var isSettled: Bool { entries.allSatisfy { $0.inFlight.isEmpty } }

    /// How many streams have a write in flight, not seen back yet.
    package var unsettledCount: Int { entries.filter { !$0.inFlight.isEmpty }.count }

    /// The final step: every stream at its own volume exactly, and every saved volume left
    /// ducked by an ended stream repaired — unless a live stream of the same key is being
    /// restored anyway (the server saves that one).
    package mutating func release() -> [DuckAction] {
        var actions = apply(gain: 0)
        for entry in ended where !entries.contains(where: { $0.key.sharesSavedVolume(with: entry.key) }) {
            actions.append(.repairSaved(key: entry.key, volume: entry.original))
        }
        ended.removeAll()
        return actions
    }
}
