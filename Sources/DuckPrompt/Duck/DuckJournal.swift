import FoundationEssentials
import Glibc

/// What a running prompt must restore if it dies: written (by `JournalStore`) before the first
/// volume write and after every change of the duck's bookkeeping, removed after the release.
/// A later duckprompt that finds the journal of a dead owner restores the streams still at a
/// level the duck could have written (`isDuckedByUs`) and repairs the saved volumes
/// (`restoreActions(live:)`).
///
/// Stored as JSON (`encoded()` / `decoded(from:)`). `depth` may be -infinity (mute), which JSON
/// cannot carry as a number: non-finite depths are written as the strings `"-inf"`, `"inf"`,
/// `"nan"`; finite ones as numbers. `updated` is seconds since 1970 (a number), whatever the
/// encoder's date strategy.
public struct DuckJournal: Sendable, Equatable, Codable {
    /// The format written by this version of duckprompt.
    public static let currentVersion = 1

    /// A stream lowered by the owner: restore `original` if it is still at a ducked level.
    public struct Stream: Sendable, Equatable, Codable {
        /// Sink-input index (`pa_sink_input_info.index`) on the owner's server.
        public var index: UInt32
        /// The stream's own volume, without the duck (`pa_cvolume`, its channel order).
        public var original: ChannelVolumes
        /// Where the server files its saved volume; also guards against a reused index.
        public var key: RestoreKey

        public init(index: UInt32, original: ChannelVolumes, key: RestoreKey = RestoreKey()) {
            self.index = index
            self.original = original
            self.key = key
        }
    }

    /// A stream that ended while ducked: the server saved its ducked volume under `key`, which
    /// must become `original` again.
    public struct Ended: Sendable, Equatable, Codable {
        public var key: RestoreKey
        public var original: ChannelVolumes

        public init(key: RestoreKey, original: ChannelVolumes) {
            self.key = key
            self.original = original
        }
    }

    /// Format version (`currentVersion` when written by this build).
    public var version: Int
    /// The owner's process id.
    public var pid: Int32
    /// The owner's start time, clock ticks after boot (`/proc/PID/stat` field 22): tells the
    /// owner from a later process that reused its pid.
    public var processStart: UInt64
    /// The server string the owner passed to `pa_context_connect`, nil for libpulse's default.
    public var server: String?
    /// The `XDG_RUNTIME_DIR` the owner ran with (libpulse's default server depends on it).
    public var runtimeDir: String?
    /// `pa_server_info.server_name` (e.g. `pulseaudio`, `PulseAudio (on PipeWire 0.3.65)`), for
    /// messages.
    public var serverName: String
    /// Full duck depth in dB: negative, -infinity for mute.
    public var depth: Double
    /// Streams lowered now.
    public var streams: [Stream]
    /// Streams that ended while ducked, whose saved volume needs repair.
    public var ended: [Ended]
    /// When the journal was last written.
    public var updated: Date
    /// The gain the streams are at, dB relative to their originals: written when the duck is
    /// handed over to the next prompt (`JournalStore.handOver`), which starts from it; nil
    /// otherwise. Non-finite values are written as strings, like `depth`.
    public var gain: Double?

    public init(version: Int = DuckJournal.currentVersion, pid: Int32, processStart: UInt64,
                server: String? = nil, runtimeDir: String? = nil, serverName: String = "",
                depth: Double, streams: [Stream] = [], ended: [Ended] = [], updated: Date = Date()) {
        self.version = version
        self.pid = pid
        self.processStart = processStart
        self.server = server
        self.runtimeDir = runtimeDir
        self.serverName = serverName
        self.depth = depth
        self.streams = streams
        self.ended = ended
        self.updated = updated
    }

    /// A journal owned by the calling process, holding what `plan` would restore.
    ///
    /// - Parameters:
    ///   - plan: the duck's bookkeeping; its entries, ended streams and depth are copied.
    ///   - server: the server string given to `pa_context_connect` (nil = default).
    ///   - runtimeDir: the `XDG_RUNTIME_DIR` in effect (default: from the environment).
    ///   - serverName: `pa_server_info.server_name`.
    /// - Throws: `DuckPromptError(.internal)` when `/proc/self/stat` cannot be read.
    public static func forCurrentProcess(plan: DuckPlan, server: String?,
                                         runtimeDir: String? = Environment.value("XDG_RUNTIME_DIR"),
                                         serverName: String) throws -> DuckJournal {
        let pid = getpid()
        guard let start = processStart(of: pid) else {
            throw DuckPromptError(.internal, "cannot read the start time of this process from /proc/\(pid)/stat: is /proc mounted?")
        }
        var journal = DuckJournal(pid: pid, processStart: start, server: server, runtimeDir: runtimeDir,
                                  serverName: serverName, depth: plan.depth)
        journal.record(plan)
        return journal
    }

    /// Copies what `plan` would restore (depth, entries, ended streams) and stamps `updated`.
    public mutating func record(_ plan: DuckPlan, at date: Date = Date()) {
        depth = plan.depth
        streams = plan.entries.map { Stream(index: $0.index, original: $0.original, key: $0.key) }
        ended = plan.ended.map { Ended(key: $0.key, original: $0.original) }
        updated = date
    }

    // MARK: - Owner

    /// A process's start time, clock ticks after boot: field 22 (`starttime`) of
    /// `/proc/PID/stat`. Nil when the process does not exist (or /proc is not readable).
    public static func processStart(of pid: Int32) -> UInt64? {
        guard pid > 0, let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else {
            return nil
        }
        return parseProcessStart(stat: text)
    }

    /// Field 22 of a `/proc/PID/stat` line. The command name (field 2) is in parentheses and may
    /// hold spaces and parentheses itself, so fields are counted after the last `)`.
    static func parseProcessStart(stat: String) -> UInt64? {
        guard let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
        // fields[0] is field 3 (state), so field 22 is fields[19].
        guard fields.count > 19 else { return nil }
        return UInt64(fields[19].trimmingWhitespace())
    }

    /// The state letter of a `/proc/PID/stat` line (field 3: `R`, `S`, `Z` …).
    static func parseProcessState(stat: String) -> Character? {
        guard let close = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(after: close)...].first { $0 != " " }
    }

    /// Whether the process that wrote this journal still runs: `pid` exists with the same start
    /// time and is not a zombie (a zombie has closed its files, so its lock is free). A pid
    /// that exists with another start time was reused: the owner is dead.
    public var ownerIsAlive: Bool {
        guard pid > 0, let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let start = Self.parseProcessStart(stat: text) else { return false }
        let state = Self.parseProcessState(stat: text)
        return start == processStart && state != "Z" && state != "X"
    }

    // MARK: - Restoring

    /// Whether a live stream's volume is one the duck ramp could have written over `original`:
    /// every channel is `original` scaled by one gain g (`VolumeMath.scale`, libpulse's math)
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
    public static func isDuckedByUs(current: ChannelVolumes, original: ChannelVolumes, depth: Double) -> Bool {
        let cur = current.values, orig = original.values
        guard depth < 0, !cur.isEmpty, cur.count == orig.count else { return false }
        // Muted channels of the original carry no gain; if any became audible, it was raised.
        guard zip(cur, orig).allSatisfy({ $0.1 != 0 || $0.0 == 0 }) else { return false }
        // The gain, from the channel with the largest original (least rounding).
        guard let k = orig.indices.max(by: { orig[$0] < orig[$1] }), orig[k] > 0 else { return false }
        let gain = cur[k] == 0
            ? -Double.infinity
            : VolumeMath.decibels(of: cur[k]) - VolumeMath.decibels(of: orig[k])
        let inRange = gain < -0.05 && (depth == -.infinity || gain >= depth - 0.5)
        if inRange, matches(current: cur, expected: DuckPlan.volume(original, atGain: gain).values) {
            return true
        }
        // A stream whose loudest channel rounded to 0 at a finite gain: any finite depth could
        // have written all zeros only if scaling the original by the depth gives all zeros.
        if gain == -.infinity, depth.isFinite, cur.allSatisfy({ $0 == 0 }) {
            return VolumeMath.scale(original, by: depth).values.allSatisfy { $0 == 0 }
        }
        return false
    }

    /// Every channel equal to what the ramp would write, within ±1 `pa_volume_t` (servers round
    /// through float) or ±0.1 dB.
    private static func matches(current: [UInt32], expected: [UInt32]) -> Bool {
        zip(current, expected).allSatisfy { c, e in
            if max(c, e) - min(c, e) <= 1 { return true }
            guard c > 0, e > 0 else { return false }
            return abs(VolumeMath.decibels(of: c) - VolumeMath.decibels(of: e)) <= 0.1
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
    public func restoreActions(live: [SinkInput]) -> [DuckAction] {
        let byIndex = Dictionary(live.map { ($0.index, $0) }, uniquingKeysWith: { a, _ in a })
        var actions: [DuckAction] = []
        var restoredKeys: [RestoreKey] = []
        var repairs: [Ended] = []
        var handled = Set(streams.map(\.index))
        for stream in streams {
            if let input = byIndex[stream.index], RestoreKey(input) == stream.key {
                if input.volume.values.count == stream.original.values.count,
                   Self.isDuckedByUs(current: input.volume, original: stream.original, depth: depth) {
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
                && Self.isDuckedByUs(current: input.volume, original: gone.original, depth: depth) {
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

    // MARK: - Bounds

    /// The loudest per-channel volume a journal may restore: `PA_VOLUME_UI_MAX`
    /// (`pa_sw_volume_from_dB(+11)`, 99957, 153 %), the top of pavucontrol's slider. A journal
    /// can be written by anyone who can write the user's runtime directory, and what it names
    /// is set on another program's stream and then saved by the server for that stream's whole
    /// role: this bounds what a forged one can do to what a user does with a slider. An
    /// original above it is real only when set with pactl or an API (or dragged up during a
    /// deep duck, which divides by the gain), so `JournalStore.write` journals such a channel
    /// as this bound: the prompt itself restores the exact volume; only a recovery (after
    /// `kill -9`) or a handed-over duck brings it back at 153 %.
    public static let maxVolume: UInt32 = VolumeMath.uiMax
    /// The most channels of a journaled volume: `PA_CHANNELS_MAX` (32).
    public static let maxChannels = VolumeMath.channelsMax
    /// The deepest finite duck in dB: the CLI's lowest `--duck` and the config's `duck_db`
    /// (-200 dB); `DuckPrompt.play` clamps a deeper one to it. Mute is -infinity.
    public static let deepestDepth = PlayOptions.duckRange.lowerBound
    /// The longest field of a restore key and the longest server string, in UTF-8 bytes.
    public static let maxStringBytes = 1024

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
            return "volume \(loud) (\(VolumeMath.percent(loud)) %) is above \(maxVolume) "
                + "(\(VolumeMath.percent(maxVolume)) %, +11 dB), the most a journal restores"
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
    public func validate() throws {
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
            guard stream.index != VolumeMath.invalidIndex else {
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
    }

    /// This journal as `JournalStore.write` stores it, within `validate()`'s bounds: channels
    /// above `maxVolume` lowered to it; depth and gain clamped to -200…0 dB (mute stays
    /// -infinity); left out, as nothing can be restored from them: streams and ended streams
    /// with no channel or more than 32, every channel 0, a key field over `maxStringBytes` or
    /// holding NUL, and ended streams without a key; strings over `maxStringBytes` dropped.
    /// None of these comes from a real server but the clamped volume (a stream set above
    /// 153 % with pactl).
    public func bounded() -> DuckJournal {
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
            return s.index != VolumeMath.invalidIndex && Self.problem(original: s.original, key: s.key) == nil ? s : nil
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
        return journal
    }

    // MARK: - JSON

    private enum CodingKeys: String, CodingKey {
        case version, pid, processStart, server, runtimeDir, serverName, depth, streams, ended, updated, gain
    }

    /// A dB value that may be -infinity: a number, or `"-inf"`, `"inf"`, `"nan"`.
    private static func decodeDecibels(_ c: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) throws -> Double {
        if let text = try? c.decode(String.self, forKey: key) {
            switch text {
            case "-inf": return -.infinity
            case "inf": return .infinity
            case "nan": return .nan
            default:
                throw DecodingError.dataCorruptedError(forKey: key, in: c,
                    debugDescription: "\(key.stringValue) '\(text)' is neither a number nor -inf, inf or nan")
            }
        }
        return try c.decode(Double.self, forKey: key)
    }

    private static func encodeDecibels(_ value: Double, _ c: inout KeyedEncodingContainer<CodingKeys>, _ key: CodingKeys) throws {
        if value.isFinite {
            try c.encode(value, forKey: key)
        } else {
            try c.encode(value.isNaN ? "nan" : value < 0 ? "-inf" : "inf", forKey: key)
        }
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        version = try c.decode(Int.self, forKey: .version)
        pid = try c.decode(Int32.self, forKey: .pid)
        processStart = try c.decode(UInt64.self, forKey: .processStart)
        server = try c.decodeIfPresent(String.self, forKey: .server)
        runtimeDir = try c.decodeIfPresent(String.self, forKey: .runtimeDir)
        serverName = try c.decodeIfPresent(String.self, forKey: .serverName) ?? ""
        depth = try Self.decodeDecibels(c, .depth)
        streams = try c.decode([Stream].self, forKey: .streams)
        ended = try c.decodeIfPresent([Ended].self, forKey: .ended) ?? []
        updated = Date(timeIntervalSince1970: try c.decode(Double.self, forKey: .updated))
        gain = c.contains(.gain) ? try Self.decodeDecibels(c, .gain) : nil
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(version, forKey: .version)
        try c.encode(pid, forKey: .pid)
        try c.encode(processStart, forKey: .processStart)
        try c.encodeIfPresent(server, forKey: .server)
        try c.encodeIfPresent(runtimeDir, forKey: .runtimeDir)
        try c.encode(serverName, forKey: .serverName)
        try Self.encodeDecibels(depth, &c, .depth)
        try c.encode(streams, forKey: .streams)
        try c.encode(ended, forKey: .ended)
        try c.encode(updated.timeIntervalSince1970, forKey: .updated)
        if let gain { try Self.encodeDecibels(gain, &c, .gain) }
    }

    /// The journal as JSON (sorted keys, pretty-printed: it is small and people read it).
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }

    /// A journal read back from JSON, checked by `validate()`: every journal read (orphans,
    /// handover, a store's own) comes through here.
    /// - Throws: `DuckPromptError(.unsupportedData)` when `data` is not a journal of a version
    ///   this build reads, or is out of `validate()`'s bounds (the message gives the reason;
    ///   the caller names the file).
    public static func decoded(from data: Data) throws -> DuckJournal {
        let version: Int
        do { version = try JSONDecoder().decode(Header.self, from: data).version } catch {
            throw DuckPromptError(.unsupportedData, "not a duckprompt journal (\(Self.describe(error)))")
        }
        guard version == currentVersion else {
            throw DuckPromptError(.unsupportedData, "journal version \(version), this duckprompt reads version \(currentVersion)")
        }
        let journal: DuckJournal
        do {
            journal = try JSONDecoder().decode(DuckJournal.self, from: data)
        } catch {
            throw DuckPromptError(.unsupportedData, "garbled journal (\(Self.describe(error)))")
        }
        try journal.validate()
        return journal
    }

    private struct Header: Decodable { var version: Int }

    /// The `version` of a journal's JSON, nil when it has none.
    static func version(of data: Data) -> Int? {
        try? JSONDecoder().decode(Header.self, from: data).version
    }

    private static func describe(_ error: Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let ctx): return ctx.debugDescription
        case DecodingError.keyNotFound(let key, _): return "no '\(key.stringValue)'"
        case DecodingError.typeMismatch(_, let ctx), DecodingError.valueNotFound(_, let ctx):
            return "bad '\(ctx.codingPath.map(\.stringValue).joined(separator: "."))'"
        default: return "\(error)"
        }
    }
}

/// Something wrong with a file in the journal directory, found by `JournalStore.orphans`.
public struct JournalProblem: Sendable, Equatable, CustomStringConvertible {
    /// The file concerned.
    public var path: String
    /// What is wrong, for a user.
    public var reason: String
    /// Whether the file was removed.
    public var removed: Bool
    /// How many files had this problem: more than 1 for a summary, whose `path` is the
    /// directory and whose `reason` names the first and last file.
    public var count: Int

    public init(path: String, reason: String, removed: Bool, count: Int = 1) {
        self.path = path
        self.reason = reason
        self.removed = removed
        self.count = count
    }

    public var description: String {
        "\(path): \(reason)\(removed ? "; removed" : count > 1 ? "; all left in place" : "; left in place")"
    }
}

/// The per-user directory that holds duck journals and the runtime lock:
/// `$XDG_RUNTIME_DIR/duckprompt/`, or `/tmp/duckprompt-<uid>/` without an (absolute)
/// `XDG_RUNTIME_DIR`. Created mode 0700 when missing; refused when it is a symbolic link, not a
/// directory, not owned by the effective uid, or writable by group or others.
///
/// The directory is opened once (`O_DIRECTORY|O_NOFOLLOW`) and every file is reached relative
/// to that descriptor (`openat`, `renameat`, `unlinkat`), so swapping the path for a link later
/// changes nothing. Files are opened with `O_NOFOLLOW`: a symbolic link is never followed.
///
/// Threading: immutable; methods may be called from any thread. Two processes write different
/// files (`journal-<pid>.json`); look for orphans while holding the `RuntimeLock`, so that two
/// duckprompt processes never restore the same journal.
public final class JournalStore: Sendable {
    /// The directory, e.g. `/run/user/1000/duckprompt`.
    public let directory: String
    /// The process whose journal `write` and `remove` handle (default: this one).
    public let pid: Int32
    /// The open directory.
    let directoryFD: Int32

    /// Opens the store of the environment's `XDG_RUNTIME_DIR` (see `init(runtimeDir:pid:)`).
    public convenience init(environment: [String: String] = Environment.values("XDG_RUNTIME_DIR"),
                            pid: Int32 = getpid()) throws {
        try self.init(runtimeDir: environment["XDG_RUNTIME_DIR"], pid: pid)
    }

    /// Opens, creating it if missing, the journal directory under `runtimeDir`.
    ///
    /// - Parameters:
    ///   - runtimeDir: an `XDG_RUNTIME_DIR`; nil, empty or relative uses `/tmp/duckprompt-<uid>`.
    ///     Its own existence is not created: only the `duckprompt` directory inside it.
    ///   - pid: the journal owner handled by `write`/`remove`, and skipped by `orphans`.
    /// - Throws: `DuckPromptError(.internal)` naming the path when it cannot be created or
    ///   opened, or is a symbolic link, not a directory, owned by another uid, or group- or
    ///   other-writable.
    /// `mkdir(2)`, `open(2)` with `O_DIRECTORY|O_NOFOLLOW`, `fstat(2)`.
    public init(runtimeDir: String?, pid: Int32 = getpid()) throws {
        let path = Self.directoryPath(runtimeDir: runtimeDir)
        directory = path
        self.pid = pid
        let created = mkdir(path, 0o700) == 0
        if !created, errno != EEXIST {
            throw Self.failure("cannot create the journal directory \(path)", errno)
        }
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            let err = errno
            var st = stat()
            if lstat(path, &st) == 0 {
                if st.st_mode & S_IFMT == S_IFLNK {
                    throw DuckPromptError(.internal, "refusing the journal directory \(path): it is a symbolic link")
                }
                if st.st_mode & S_IFMT != S_IFDIR {
                    throw DuckPromptError(.internal, "refusing the journal directory \(path): it is not a directory")
                }
            }
            throw Self.failure("cannot open the journal directory \(path)", err)
        }
        do {
            var st = stat()
            guard fstat(fd, &st) == 0 else { throw Self.failure("cannot stat \(path)", errno) }
            guard st.st_mode & S_IFMT == S_IFDIR else {
                throw DuckPromptError(.internal, "refusing the journal directory \(path): it is not a directory")
            }
            guard st.st_uid == geteuid() else {
                throw DuckPromptError(.internal, "refusing the journal directory \(path): it belongs to uid \(st.st_uid), not \(geteuid())")
            }
            if created, fchmod(fd, 0o700) != 0 { throw Self.failure("cannot set mode 0700 on \(path)", errno) }
            if !created, st.st_mode & 0o022 != 0 {
                throw DuckPromptError(.internal, "refusing the journal directory \(path): group or others may write to it (mode \(String(st.st_mode & 0o7777, radix: 8)); chmod 700 it)")
            }
        } catch {
            close(fd)
            throw error
        }
        directoryFD = fd
    }

    deinit { close(directoryFD) }

    /// `$XDG_RUNTIME_DIR/duckprompt` for an absolute `runtimeDir`, else `/tmp/duckprompt-<uid>`.
    public static func directoryPath(runtimeDir: String?) -> String {
        if let dir = runtimeDir, dir.hasPrefix("/") {
            var d = dir
            while d.count > 1, d.hasSuffix("/") { d.removeLast() }
            return d == "/" ? "/duckprompt" : d + "/duckprompt"
        }
        return "/tmp/duckprompt-\(geteuid())"
    }

    /// The file name of `pid`'s journal: `journal-<pid>.json`.
    public static func fileName(pid: Int32) -> String { "journal-\(pid).json" }

    /// The path of this store's own journal.
    public var path: String { directory + "/" + Self.fileName(pid: pid) }

    /// Writes `journal` as `journal-<pid>.json`, atomically: a new temporary file in the same
    /// directory (`O_CREAT|O_EXCL|O_NOFOLLOW`, mode 0600), written in full, `fsync`ed, then
    /// renamed over the journal (a rename replaces a symbolic link at that name, it does not
    /// follow it), and the directory `fsync`ed. Readers see the old journal or the new one,
    /// never a part. What is written is `journal.bounded()`, so that every journal written
    /// reads back (`DuckJournal.validate()`).
    ///
    /// - Parameter journal: its `pid` must be this store's (a programmer error otherwise).
    /// - Throws: `DuckPromptError(.internal)` naming the file when a step fails; the temporary
    ///   file is removed then.
    /// `openat(2)`, `write(2)`, `fsync(2)`, `renameat(2)`.
    public func write(_ journal: DuckJournal) throws {
        precondition(journal.pid == pid, "journal of pid \(journal.pid) written by the store of pid \(pid)")
        let data: Data
        do { data = try journal.bounded().encoded() } catch {
            throw DuckPromptError(.internal, "cannot encode the journal \(path): \(error)")
        }
        let final = Self.fileName(pid: pid)
        var temp = ""
        var fd: Int32 = -1
        for _ in 0..<64 {
            temp = ".\(final).\(String(UInt32.random(in: 0...UInt32.max), radix: 16)).tmp"
            fd = openat(directoryFD, temp, O_CREAT | O_EXCL | O_NOFOLLOW | O_WRONLY | O_CLOEXEC, 0o600)
            if fd >= 0 || errno != EEXIST { break }
        }
        guard fd >= 0 else { throw Self.failure("cannot create a temporary file in \(directory)", errno) }
        var renamed = false
        defer {
            if fd >= 0 { close(fd) }
            if !renamed { unlinkat(directoryFD, temp, 0) }
        }
        // The mode given to openat is masked by the umask; make it exactly 0600.
        guard fchmod(fd, 0o600) == 0 else { throw Self.failure("cannot set mode 0600 on \(directory)/\(temp)", errno) }
        try data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
            var offset = 0
            while offset < buffer.count {
                let n = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw Self.failure("cannot write \(directory)/\(temp)", errno)
                }
                offset += n
            }
        }
        guard fsync(fd) == 0 else { throw Self.failure("cannot fsync \(directory)/\(temp)", errno) }
        let closed = close(fd)
        fd = -1
        guard closed == 0 else { throw Self.failure("cannot close \(directory)/\(temp)", errno) }
        guard renameat(directoryFD, temp, directoryFD, final) == 0 else {
            throw Self.failure("cannot rename \(directory)/\(temp) to \(path)", errno)
        }
        renamed = true
        _ = fsync(directoryFD)
    }

    /// Removes this store's journal (after the release, or once its streams are restored).
    /// A journal that is not there is not an error.
    /// - Throws: `DuckPromptError(.internal)` naming the file. `unlinkat(2)`.
    public func remove() throws {
        try removeFile(named: Self.fileName(pid: pid))
    }

    /// Removes a journal returned by `orphans` (after restoring it).
    /// - Parameter path: a path `orphans` returned: a file directly in `directory`.
    /// - Throws: `DuckPromptError(.internal)` naming the file. `unlinkat(2)`.
    public func remove(path: String) throws {
        let url = URL(fileURLWithPath: path)
        guard url.deletingLastPathComponent().path == URL(fileURLWithPath: directory).path else {
            throw DuckPromptError(.internal, "\(path) is not in the journal directory \(directory)")
        }
        try removeFile(named: url.lastPathComponent)
    }

    private func removeFile(named name: String) throws {
        guard unlinkat(directoryFD, name, 0) == 0 || errno == ENOENT else {
            throw Self.failure("cannot remove \(directory)/\(name)", errno)
        }
    }

    /// The name of a duck handed over by an interrupted prompt to the next one.
    public static let handoverName = "handover.json"

    /// Hands the duck over: writes `journal` (with its `gain`) as this store's journal, then
    /// renames it to `handover.json`, atomically, for the next prompt to adopt
    /// (`takeHandover`). Call holding the `RuntimeLock`, before releasing it.
    /// - Throws: `DuckPromptError(.internal)` naming the file. `renameat(2)`.
    public func handOver(_ journal: DuckJournal) throws {
        try write(journal)
        guard renameat(directoryFD, Self.fileName(pid: pid), directoryFD, Self.handoverName) == 0 else {
            throw Self.failure("cannot rename \(path) to \(directory)/\(Self.handoverName)", errno)
        }
        _ = fsync(directoryFD)
    }

    /// Whether a handed-over duck waits for adoption.
    public var hasHandover: Bool {
        if case .missing = readFile(named: Self.handoverName) { return false }
        return true
    }

    /// The duck a prompt handed over, nil when there is none (or it cannot be read: then
    /// `orphans` restores it once its owner is gone). Call holding the `RuntimeLock`; after
    /// writing the journal that takes its streams over, `removeHandover()`.
    public func takeHandover() -> DuckJournal? {
        guard case .data(let data) = readFile(named: Self.handoverName) else { return nil }
        return try? DuckJournal.decoded(from: data)
    }

    /// Removes `handover.json` (adopted, or taken back by its owner).
    public func removeHandover() {
        unlinkat(directoryFD, Self.handoverName, 0)
    }

    /// Takes a handed-over duck back as this store's journal (no one adopted it): renames
    /// `handover.json` to `journal-<pid>.json`. False when it is gone (adopted meanwhile).
    public func reclaimHandover() -> Bool {
        renameat(directoryFD, Self.handoverName, directoryFD, Self.fileName(pid: pid)) == 0
    }

    /// Reads this store's own journal back, nil when there is none.
    /// - Throws: `DuckPromptError(.internal)` when it cannot be read, `.unsupportedData` when
    ///   it is not a journal; both name the file.
    public func read() throws -> DuckJournal? {
        let name = Self.fileName(pid: pid)
        switch readFile(named: name) {
        case .missing: return nil
        case .failed(let reason): throw DuckPromptError(.internal, "\(directory)/\(name): \(reason)")
        case .data(let data):
            do { return try DuckJournal.decoded(from: data) } catch let error as DuckPromptError {
                throw DuckPromptError(.unsupportedData, "\(directory)/\(name): \(error.message)")
            }
        }
    }

    /// The journals in the directory whose owner is dead: no process with its pid, or one with
    /// another start time (the pid was reused). This process's own journal is skipped, and so
    /// is the journal of every live owner. Sorted by path.
    ///
    /// Files that cannot be used are passed to `report`, never returned:
    /// - not a regular file (a symbolic link is not followed), or unreadable: left in place;
    /// - garbled (not JSON, fields missing, pid not the one in its name) and no process has the
    ///   pid in its name: removed (no one can restore it, and it would be reported forever);
    ///   with a live process of that pid: left in place;
    /// - another format version: left in place (the duckprompt that wrote it may restore it).
    /// Temporary files of dead writers (`.journal-<pid>.json.*.tmp`) are removed silently.
    ///
    /// - Parameter report: called once per problem, on the calling thread, e.g. to print
    ///   `duckprompt: warning: …` on stderr. Files with the same problem (600 symbolic links)
    ///   are reported once, together (`count`, `path` the directory), after the search.
    /// - Returns: each dead owner's journal with its path (for `remove(path:)`).
    /// - Throws: `DuckPromptError(.internal)` when the directory cannot be listed, or when
    ///   `/proc/self/stat` is unreadable (without /proc every owner would look dead).
    /// `readdir(3)`, `openat(2)` with `O_NOFOLLOW`, `/proc/PID/stat`.
    public func orphans(reporting report: (JournalProblem) -> Void = { _ in }) throws
        -> [(path: String, journal: DuckJournal)] {
        guard DuckJournal.processStart(of: getpid()) != nil else {
            throw DuckPromptError(.internal, "cannot tell live duckprompt processes from dead ones: /proc/self/stat is unreadable (is /proc mounted?)")
        }
        var problems: [JournalProblem] = []
        let found = try findOrphans { problems.append($0) }
        for problem in Self.summarized(problems, directory: directory) { report(problem) }
        return found
    }

    /// Problems with the same reason and outcome as one summary each: 600 symbolic links make
    /// one line per run, not 600. A reason met once is kept as it is. In order of first
    /// appearance.
    static func summarized(_ problems: [JournalProblem], directory: String) -> [JournalProblem] {
        var groups: [(first: JournalProblem, names: [String])] = []
        for problem in problems {
            let name = String(problem.path.split(separator: "/").last ?? "")
            if let i = groups.firstIndex(where: { $0.first.reason == problem.reason && $0.first.removed == problem.removed }) {
                groups[i].names.append(name)
            } else {
                groups.append((problem, [name]))
            }
        }
        return groups.map { group in
            guard group.names.count > 1 else { return group.first }
            let names = group.names.sorted()
            return JournalProblem(path: directory,
                                  reason: "\(names.count) files (\(names.first!) … \(names.last!)): \(group.first.reason)",
                                  removed: group.first.removed, count: names.count)
        }
    }

    private func findOrphans(reporting report: (JournalProblem) -> Void) throws -> [(path: String, journal: DuckJournal)] {
        var found: [(path: String, journal: DuckJournal)] = []
        for name in try listNames().sorted() {
            let path = directory + "/" + name
            if let tempPid = Self.pid(inTemporaryName: name) {
                if tempPid != pid, !Self.processExists(tempPid) { unlinkat(directoryFD, name, 0) }
                continue
            }
            let isHandover = name == Self.handoverName
            guard let namePid = isHandover ? Int32?.some(0) : Self.pid(inJournalName: name),
                  isHandover || namePid != pid else { continue }
            let data: Data
            switch readFile(named: name) {
            case .missing: continue
            case .failed(let reason):
                report(JournalProblem(path: path, reason: reason, removed: false))
                continue
            case .data(let d): data = d
            }
            let journal: DuckJournal
            do {
                journal = try DuckJournal.decoded(from: data)
                guard isHandover || journal.pid == namePid else {
                    throw DuckPromptError(.unsupportedData, "garbled journal (it names pid \(journal.pid))")
                }
            } catch {
                let message = (error as? DuckPromptError)?.message ?? "\(error)"
                let otherVersion = DuckJournal.version(of: data).map { $0 != DuckJournal.currentVersion } ?? false
                if otherVersion || (!isHandover && Self.processExists(namePid)) {
                    report(JournalProblem(path: path, reason: message, removed: false))
                } else {
                    let removed = unlinkat(directoryFD, name, 0) == 0
                    report(JournalProblem(path: path, reason: message, removed: removed))
                }
                continue
            }
            if journal.pid == pid || journal.ownerIsAlive { continue }
            found.append((path, journal))
        }
        return found
    }

    // MARK: - Files

    enum ReadResult { case data(Data), missing, failed(String) }

    /// Reads a file of the directory without following a link (`O_NOFOLLOW`), nor blocking on
    /// a FIFO; only a regular file of at most `BoundedFile.journalLimit` (`BoundedFile`).
    func readFile(named name: String) -> ReadResult {
        let fd = openat(directoryFD, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else {
            switch errno {
            case ENOENT: return .missing
            case ELOOP: return .failed("is a symbolic link; not followed")
            case let err: return .failed(BoundedFile.openFailure(err).reason)
            }
        }
        defer { close(fd) }
        do {
            return .data(try BoundedFile.read(descriptor: fd, limit: BoundedFile.journalLimit, accept: .regularFiles))
        } catch {
            return .failed(error.reason + (error.kind == .tooLarge ? ": no journal is that large" : ""))
        }
    }

    /// The names in the directory, read through a new descriptor of the same directory.
    func listNames() throws -> [String] {
        let fd = openat(directoryFD, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0, let dir = fdopendir(fd) else {
            let err = errno
            if fd >= 0 { close(fd) }
            throw Self.failure("cannot list \(directory)", err)
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) {
                String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    /// `journal-<pid>.json` → pid.
    static func pid(inJournalName name: String) -> Int32? {
        guard name.hasPrefix("journal-"), name.hasSuffix(".json") else { return nil }
        let digits = name.dropFirst("journal-".count).dropLast(".json".count)
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber) else { return nil }
        return Int32(digits).flatMap { $0 > 0 ? $0 : nil }
    }

    /// `.journal-<pid>.json.<random>.tmp` → pid.
    static func pid(inTemporaryName name: String) -> Int32? {
        guard name.hasPrefix("."), name.hasSuffix(".tmp") else { return nil }
        let parts = name.dropFirst().split(separator: ".")
        guard parts.count == 4, parts[1] == "json" else { return nil }
        return pid(inJournalName: "\(parts[0]).json")
    }

    /// Whether any process has `pid` (`/proc/PID` exists).
    static func processExists(_ pid: Int32) -> Bool {
        var st = stat()
        return stat("/proc/\(pid)", &st) == 0
    }

    static func failure(_ what: String, _ err: Int32) -> DuckPromptError {
        DuckPromptError(.internal, "\(what): \(String(cString: strerror(err)))")
    }
}
