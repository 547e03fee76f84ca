/// What a prompt does to an MPRIS player whose stream plays (`--duck-mode`, `--no-pause`,
/// the config file's `players` rules): pause it (spoken word: two voices at once are heard as
/// neither), duck its stream as any other, or leave it alone.
package enum PlayerAction: String, Sendable, Equatable, CaseIterable {
    /// `Pause` at the start of the attack, `Play` after the prompt, rewound; its stream is not
    /// also ducked.
    case pause
    /// Its stream is ducked as any other stream.
    case duck
    /// Left alone: neither paused nor ducked.
    case ignore
}

/// One rule of the config file's `players`: a pattern (as `prefer`'s: `*`, `?`, `\`, matched
/// case-insensitively) against a player's MPRIS `Identity`, its `DesktopEntry`, or the
/// `application.name` of its stream, and what to do with a player it matches.
package struct PlayerRule: Sendable, Equatable {
    package var pattern: String
    package var action: PlayerAction

    package init(pattern: String, action: PlayerAction) {
        self.pattern = pattern
        self.action = action
    }
}

/// Which players a prompt may pause.
public enum PauseMode: Sendable, Equatable {
    /// Spoken word only (the default): by the config's rules, the default list, the genre.
    case spokenWord
    /// Every player that can pause (`--duck-mode pause`), save those a rule says to ignore.
    case every
    /// None (`--no-pause`): spoken word is ducked as any stream, but a player a config rule
    /// says to ignore is still left alone (a screen reader); without such a rule the session
    /// bus is not contacted.
    case noPause
    /// Off (`--duck-mode none`, which leaves every stream alone): the session bus is not
    /// contacted.
    case off
}

/// The decision for one player, and the reason given in `-v` and the report.
package struct PlayerDecision: Sendable, Equatable {
    package var action: PlayerAction
    /// e.g. "genre 'Podcast'", "config rule 'gPodder'", "a podcast player (default list)".
    package var reason: String
}

/// Pure: which players a prompt pauses, and whether one it paused is resumed. Table-tested
/// (`SpokenWordPolicyTests`); `PlayerPauser` carries the decisions out on the bus.
package enum SpokenWordPolicy {
    /// Podcast and audiobook players paused by default (Docs/config.md lists them): matched,
    /// ignoring case, against a player's `DesktopEntry` or `Identity`.
    package static let defaultPlayers: [(name: String, what: String)] = [
        ("gpodder", "gPodder, a podcast player"),
        ("org.gnome.Podcasts", "GNOME Podcasts"),
        ("org.kde.kasts", "Kasts, a podcast player"),
        ("com.github.geigi.cozy", "Cozy, an audiobook player"),
        ("com.github.needleandthread.vocal", "Vocal, a podcast player"),
        ("Podcasts", "GNOME Podcasts"),
        ("Cozy", "Cozy, an audiobook player"),
        ("Kasts", "Kasts, a podcast player"),
        ("gPodder", "gPodder, a podcast player"),
    ]

    /// Words in `xesam:genre` that make a track spoken word (matched within the genre,
    /// ignoring case: "Podcasts", "Audiobooks", "Spoken Word & Talk" count).
    package static let spokenGenres = ["podcast", "audiobook", "audio book", "spoken word", "speech"]

    /// What to do with `player`, whose streams are named `applicationNames`
    /// (`application.name`). In order: the first config rule that matches; with `.every`,
    /// pause; a player on the default list; a spoken-word genre; else duck. A player that
    /// cannot pause, or is not playing, is ducked whatever the rule (a rule's `ignore` still
    /// holds). With `.noPause` only a rule's `ignore` holds: everything else is ducked.
    package static func decide(_ player: MPRISPlayer, applicationNames: [String], rules: [PlayerRule],
                              mode: PauseMode) -> PlayerDecision {
        guard mode != .off else { return PlayerDecision(action: .duck, reason: "pausing is off") }
        var wanted: PlayerDecision? = nil
        let names = [player.identity, player.desktopEntry] + applicationNames
        let rule = rules.first { rule in names.contains { !$0.isEmpty && matches(rule.pattern, $0) } }
        if mode == .noPause {
            guard let rule, rule.action == .ignore else { return PlayerDecision(action: .duck, reason: "--no-pause") }
            return PlayerDecision(action: .ignore, reason: "config rule '\(rule.pattern)'")
        }
        if let rule {
            wanted = PlayerDecision(action: rule.action, reason: "config rule '\(rule.pattern)'")
        } else if mode == .every {
            wanted = PlayerDecision(action: .pause, reason: "--duck-mode pause")
        } else if let known = defaultPlayers.first(where: { entry in
            [player.desktopEntry, player.identity].contains { $0.lowercased() == entry.name.lowercased() }
        }) {
            wanted = PlayerDecision(action: .pause, reason: "\(known.what) (default list)")
        } else if let genre = player.genres.first(where: isSpokenGenre) {
            wanted = PlayerDecision(action: .pause, reason: "genre '\(genre)'")
        }
        guard let wanted else { return PlayerDecision(action: .duck, reason: "not spoken word") }
        guard wanted.action == .pause else { return wanted }
        guard player.status == .playing else {
            return PlayerDecision(action: .duck, reason: "\(wanted.reason), but it is not playing")
        }
        guard player.canPause, player.canPlay else {
            return PlayerDecision(action: .duck, reason: "\(wanted.reason), but it cannot pause")
        }
        return wanted
    }

    /// Whether a genre names spoken word (`spokenGenres`).
    package static func isSpokenGenre(_ genre: String) -> Bool {
        let lower = genre.lowercased()
        return spokenGenres.contains { lower.contains($0) }
    }

    /// A rule's pattern against a name, ignoring case.
    static func matches(_ pattern: String, _ name: String) -> Bool {
        Glob.matches(pattern.lowercased(), name.lowercased())
    }

    /// What to do with a player this prompt (or a dead one) paused, now.
    package enum Resume: Sendable, Equatable {
        /// `Seek(offsetUs)` (negative: back; 0: no seek), then `Play`.
        case resume(seekUs: Int64)
        /// Leave it as it is, for this reason ("the user played it").
        case leave(String)
    }

    /// How far a paused player's `Position` may move before it counts as moved by the user
    /// (a player reports a few ms more after `Pause` returns).
    package static let positionToleranceUs: Int64 = 500_000

    /// Whether to resume `paused`, given what its bus name shows now (nil: no such name).
    /// Only a player still paused as it was left is resumed: the same connection, `Paused`,
    /// the same track, within `positionToleranceUs` of where it was paused. A recovery (a dead
    /// prompt's journal) passes `ageSeconds`, and a pause older than `staleAfterSeconds` is
    /// left alone, so a player is not restarted long after the prompt.
    /// The rewind is `paused.rewindMs`, no further back than the track's start.
    package static func resume(_ paused: PausedPlayer, now: MPRISPlayer?, ageSeconds: Double? = nil,
                              staleAfterSeconds: Double = PausedPlayer.staleAfterSeconds) -> Resume {
        guard let now else { return .leave("it is gone") }
        guard now.uniqueName == paused.uniqueName else { return .leave("it was started again") }
        if let ageSeconds, ageSeconds > staleAfterSeconds {
            return .leave("it was paused \(Int(ageSeconds)) s ago, over the \(Int(staleAfterSeconds)) s a recovery resumes")
        }
        guard now.status == .paused else {
            return .leave("it is \(now.status?.rawValue ?? "in an unknown state"), not as it was left")
        }
        if now.trackID != paused.trackID || now.url != paused.url { return .leave("it is on another track") }
        let position = now.positionUs ?? paused.positionUs
        if let at = paused.positionUs, let position, abs(position - at) > positionToleranceUs {
            return .leave("it was moved from \(seconds(at)) to \(seconds(position))")
        }
        guard now.canPlay else { return .leave("it cannot play") }
        guard now.canSeek, let position, paused.rewindMs > 0 else { return .resume(seekUs: 0) }
        return .resume(seekUs: -min(Int64(paused.rewindMs) * 1000, max(0, position)))
    }

    /// "12.345 s".
    package static func seconds(_ us: Int64) -> String {
        let ms = us / 1000
        let fraction = String(abs(ms % 1000))
        return "\(ms / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction) s"
    }
}

/// A player a prompt paused: journaled before its `Pause` (the journal's `players`), so that
/// the prompt, the next one (a handover), or a recovery after `kill -9` resumes it.
package struct PausedPlayer: Sendable, Equatable, Codable {
    package var busName: String
    package var uniqueName: String
    package var pid: Int32
    /// `MPRISPlayer.label`, for messages.
    package var label: String
    /// What was playing (`mpris:trackid`, `xesam:url`): a resume needs the same.
    package var trackID: String?
    package var url: String?
    /// `Position` when it was paused, µs; nil when it gives none.
    package var positionUs: Int64?
    /// When it was paused: seconds since 1970 (`CLOCK_REALTIME`), for the staleness window.
    package var pausedAt: Double
    /// How far back it is resumed, ms (`--rewind-ms`).
    package var rewindMs: Int
    /// Its sink-inputs when it was paused, kept off the duck.
    package var streams: [UInt32]
    /// Why it was paused.
    package var reason: String

    package init(_ player: MPRISPlayer, pausedAt: Double, rewindMs: Int, streams: [UInt32], reason: String) {
        busName = player.busName
        uniqueName = player.uniqueName
        pid = player.pid
        label = player.label
        trackID = player.trackID
        url = player.url
        positionUs = player.positionUs
        self.pausedAt = pausedAt
        self.rewindMs = rewindMs
        self.streams = streams
        self.reason = reason
    }

    /// A recovery (`duckprompt restore`, the next prompt) resumes a dead prompt's players
    /// paused at most this long ago (120 s); older ones are left paused.
    package static let staleAfterSeconds: Double = 120
}
