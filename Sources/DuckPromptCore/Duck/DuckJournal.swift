import FoundationEssentials

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
package struct DuckJournal: Sendable, Equatable {
    /// The format written by this version of duckprompt.
    package static let currentVersion = 1

    /// A stream lowered by the owner: restore `original` if it is still at a ducked level.
    package struct Stream: Sendable, Equatable, Codable {
        /// Sink-input index (`pa_sink_input_info.index`) on the owner's server.
        package var index: UInt32
        /// The stream's own volume, without the duck (`pa_cvolume`, its channel order).
        package var original: ChannelVolumes
        /// Where the server files its saved volume; also guards against a reused index.
        package var key: RestoreKey

        package init(index: UInt32, original: ChannelVolumes, key: RestoreKey = RestoreKey()) {
            self.index = index
            self.original = original
            self.key = key
        }
    }

    /// A stream that ended while ducked: the server saved its ducked volume under `key`, which
    /// must become `original` again.
    package struct Ended: Sendable, Equatable, Codable {
        package var key: RestoreKey
        package var original: ChannelVolumes

        package init(key: RestoreKey, original: ChannelVolumes) {
            self.key = key
            self.original = original
        }
    }

    /// Format version (`currentVersion` when written by this build).
    package var version: Int
    /// The owner's process id.
    package var pid: Int32
    /// The owner's start time, clock ticks after boot (`/proc/PID/stat` field 22): tells the
    /// owner from a later process that reused its pid.
    package var processStart: UInt64
    /// The server string the owner passed to `pa_context_connect`, nil for libpulse's default.
    package var server: String?
    /// The `XDG_RUNTIME_DIR` the owner ran with (libpulse's default server depends on it).
    package var runtimeDir: String?
    /// `pa_server_info.server_name` (e.g. `pulseaudio`, `PulseAudio (on PipeWire 0.3.65)`), for
    /// messages.
    package var serverName: String
    /// Full duck depth in dB: negative, -infinity for mute.
    package var depth: Double
    /// Streams lowered now.
    package var streams: [Stream]
    /// Streams that ended while ducked, whose saved volume needs repair.
    package var ended: [Ended]
    /// When the journal was last written.
    package var updated: Date
    /// The gain the streams are at, dB relative to their originals: written when the duck is
    /// handed over to the next prompt (`JournalStore.handOver`), which starts from it; nil
    /// otherwise. Non-finite values are written as strings, like `depth`.
    package var gain: Double?
    /// MPRIS players the owner paused (`PlayerPauser`), to resume: journaled before the first
    /// `Pause`. Absent from the file when empty (the format stays version 1: an older reader
    /// ignores the key).
    package var players: [PausedPlayer] = []

    package init(version: Int = DuckJournal.currentVersion, pid: Int32, processStart: UInt64,
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

    /// Copies what `plan` would restore (depth, entries, ended streams) and stamps `updated`.
    package mutating func record(_ plan: DuckPlan, at date: Date = Date()) {
        depth = plan.depth
        streams = plan.entries.map { Stream(index: $0.index, original: $0.original, key: $0.key) }
        ended = plan.ended.map { Ended(key: $0.key, original: $0.original) }
        updated = date
    }
}
