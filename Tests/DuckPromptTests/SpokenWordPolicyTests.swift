import Foundation
import Testing
@testable import DuckPrompt
@testable import DuckPromptCore

/// A player as `MPRISPlayer.read` makes it from two `GetAll` replies.
private func player(identity: String = "mpv", desktop: String = "mpv", status: String = "Playing",
                    genre: BusValue? = nil, canPause: Bool = true, canControl: Bool? = nil,
                    position: Int64 = 30_000_000, track: String = "/0", url: String = "file:///a.ogg",
                    unique: String = ":1.7") -> MPRISPlayer {
    var p = MPRISPlayer(busName: "org.mpris.MediaPlayer2.mpv", uniqueName: unique, pid: 4242)
    var metadata: [String: BusValue] = ["mpris:trackid": .string(track), "xesam:url": .string(url)]
    if let genre { metadata["xesam:genre"] = genre }
    var props: [String: BusValue] = [
        "PlaybackStatus": .string(status), "CanPause": .bool(canPause), "CanPlay": .bool(true),
        "CanSeek": .bool(true), "Position": .int64(position), "Metadata": .dictionary(metadata),
    ]
    if let canControl { props["CanControl"] = .bool(canControl) }
    p.read(root: ["Identity": .string(identity), "DesktopEntry": .string(desktop)], player: props)
    return p
}

@Suite("Spoken word: which players a prompt pauses, and which it resumes")
struct SpokenWordPolicyTests {
    @Test("MPRISPlayer.read: genre as a string list (the spec) or one string (mpv-mpris); CanControl false can do nothing")
    func readProperties() {
        #expect(player(genre: .strings(["Rock", "Podcast"])).genres == ["Rock", "Podcast"])
        #expect(player(genre: .string("Podcast")).genres == ["Podcast"])
        #expect(player(genre: nil).genres == [])
        #expect(player(genre: .int64(3)).genres == [], "a genre of another type is no genre")
        let p = player()
        #expect(p.status == .playing && p.canPause && p.canPlay && p.canSeek)
        #expect(p.trackID == "/0" && p.url == "file:///a.ogg" && p.positionUs == 30_000_000)
        #expect(p.identity == "mpv" && p.label == "org.mpris.MediaPlayer2.mpv (mpv, pid 4242)")
        let locked = player(canControl: false)
        #expect(!locked.canPause && !locked.canPlay && !locked.canSeek)
        #expect(player(status: "Buffering").status == nil)
    }

    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var player: MPRISPlayer
        var apps: [String] = ["mpv"]
        var rules: [PlayerRule] = []
        var mode: PauseMode = .spokenWord
        var action: PlayerAction
        var reason: String
        var testDescription: String { name }
    }

    static let rows: [Row] = [
        Row(name: "genre Podcast (one string)", player: player(genre: .string("Podcast")), action: .pause, reason: "genre 'Podcast'"),
        Row(name: "genre list with Audiobooks", player: player(genre: .strings(["Fiction", "Audiobooks"])),
            action: .pause, reason: "genre 'Audiobooks'"),
        Row(name: "Spoken Word", player: player(genre: .strings(["Spoken Word"])), action: .pause, reason: "genre 'Spoken Word'"),
        Row(name: "audio book, two words, any case", player: player(genre: .string("AUDIO BOOK")), action: .pause,
            reason: "genre 'AUDIO BOOK'"),
        Row(name: "speech", player: player(genre: .string("Speech")), action: .pause, reason: "genre 'Speech'"),
        Row(name: "music is ducked", player: player(genre: .string("Rock")), action: .duck, reason: "not spoken word"),
        Row(name: "no genre is ducked", player: player(), action: .duck, reason: "not spoken word"),
        Row(name: "default list by DesktopEntry", player: player(identity: "Podcasts", desktop: "org.gnome.Podcasts"),
            action: .pause, reason: "GNOME Podcasts (default list)"),
        Row(name: "default list by Identity, any case", player: player(identity: "GPODDER", desktop: ""),
            action: .pause, reason: "gPodder, a podcast player (default list)"),
        Row(name: "a config rule wins over the genre", player: player(genre: .string("Podcast")),
            rules: [PlayerRule(pattern: "MPV", action: .duck)], action: .duck, reason: "config rule 'MPV'"),
        Row(name: "a rule by application.name", player: player(identity: "Player", desktop: "x"),
            apps: ["Lollypop"], rules: [PlayerRule(pattern: "lolly*", action: .pause)], action: .pause,
            reason: "config rule 'lolly*'"),
        Row(name: "the first matching rule", player: player(),
            rules: [PlayerRule(pattern: "vlc", action: .ignore), PlayerRule(pattern: "m?v", action: .ignore),
                    PlayerRule(pattern: "*", action: .pause)], action: .ignore, reason: "config rule 'm?v'"),
        Row(name: "--duck-mode pause pauses music", player: player(genre: .string("Rock")), mode: .every,
            action: .pause, reason: "--duck-mode pause"),
        Row(name: "--duck-mode pause keeps an ignore rule", player: player(), rules: [PlayerRule(pattern: "mpv", action: .ignore)],
            mode: .every, action: .ignore, reason: "config rule 'mpv'"),
        Row(name: "--no-pause ducks a podcast", player: player(genre: .string("Podcast")), mode: .noPause,
            action: .duck, reason: "--no-pause"),
        Row(name: "--no-pause ducks a player a rule says to pause", player: player(),
            rules: [PlayerRule(pattern: "mpv", action: .pause)], mode: .noPause, action: .duck, reason: "--no-pause"),
        Row(name: "--no-pause keeps an ignore rule (a screen reader)", player: player(genre: .string("Podcast")),
            rules: [PlayerRule(pattern: "mpv", action: .ignore)], mode: .noPause, action: .ignore, reason: "config rule 'mpv'"),
        Row(name: "--no-pause: the first matching rule decides, a duck rule before an ignore one", player: player(),
            rules: [PlayerRule(pattern: "m*", action: .duck), PlayerRule(pattern: "mpv", action: .ignore)], mode: .noPause,
            action: .duck, reason: "--no-pause"),
        Row(name: "--duck-mode none: rules are not read", player: player(), rules: [PlayerRule(pattern: "mpv", action: .ignore)],
            mode: .off, action: .duck, reason: "pausing is off"),
        Row(name: "a podcast that is not playing is ducked", player: player(status: "Paused", genre: .string("Podcast")),
            action: .duck, reason: "genre 'Podcast', but it is not playing"),
        Row(name: "a podcast that cannot pause is ducked", player: player(genre: .string("Podcast"), canPause: false),
            action: .duck, reason: "genre 'Podcast', but it cannot pause"),
        Row(name: "--duck-mode pause ducks what cannot pause", player: player(canPause: false), mode: .every,
            action: .duck, reason: "--duck-mode pause, but it cannot pause"),
    ]

    @Test("decide: rules, then --duck-mode pause, the default list, the genre; else duck", arguments: rows)
    func decide(row: Row) {
        let decision = SpokenWordPolicy.decide(row.player, applicationNames: row.apps, rules: row.rules, mode: row.mode)
        #expect(decision == PlayerDecision(action: row.action, reason: row.reason))
    }

    /// The record of `player()` paused at 30 s, 10 s ago.
    static func paused(rewindMs: Int = 2000, at position: Int64 = 30_000_000) -> PausedPlayer {
        var p = player(position: position)
        p.status = .paused
        return PausedPlayer(p, pausedAt: 1000, rewindMs: rewindMs, streams: [5], reason: "genre 'Podcast'")
    }

    struct ResumeRow: Sendable, CustomTestStringConvertible {
        var name: String
        var paused: PausedPlayer
        var now: MPRISPlayer?
        var age: Double? = nil
        var expected: SpokenWordPolicy.Resume
        var testDescription: String { name }
    }

    static let resumeRows: [ResumeRow] = [
        ResumeRow(name: "as it was left: rewound 2 s", paused: paused(), now: player(status: "Paused", position: 30_010_000),
                  expected: .resume(seekUs: -2_000_000)),
        ResumeRow(name: "near the start: back to 0, not before", paused: paused(at: 1_200_000),
                  now: player(status: "Paused", position: 1_200_000), expected: .resume(seekUs: -1_200_000)),
        ResumeRow(name: "--rewind-ms 0: no seek", paused: paused(rewindMs: 0), now: player(status: "Paused"),
                  expected: .resume(seekUs: 0)),
        ResumeRow(name: "the user played it", paused: paused(), now: player(status: "Playing"),
                  expected: .leave("it is Playing, not as it was left")),
        ResumeRow(name: "the user stopped it", paused: paused(), now: player(status: "Stopped"),
                  expected: .leave("it is Stopped, not as it was left")),
        ResumeRow(name: "closed", paused: paused(), now: nil, expected: .leave("it is gone")),
        ResumeRow(name: "started again", paused: paused(), now: player(status: "Paused", unique: ":1.9"),
                  expected: .leave("it was started again")),
        ResumeRow(name: "another track", paused: paused(), now: player(status: "Paused", track: "/1"),
                  expected: .leave("it is on another track")),
        ResumeRow(name: "another file, same track id", paused: paused(), now: player(status: "Paused", url: "file:///b.ogg"),
                  expected: .leave("it is on another track")),
        ResumeRow(name: "played and paused again by the user (moved)", paused: paused(),
                  now: player(status: "Paused", position: 31_000_000),
                  expected: .leave("it was moved from 30.000 s to 31.000 s")),
        ResumeRow(name: "a recovery within the window", paused: paused(), now: player(status: "Paused"), age: 119,
                  expected: .resume(seekUs: -2_000_000)),
        ResumeRow(name: "a recovery after the window", paused: paused(), now: player(status: "Paused"), age: 121,
                  expected: .leave("it was paused 121 s ago, over the 120 s a recovery resumes")),
    ]

    @Test("resume only what is still paused as it was left", arguments: resumeRows)
    func resume(row: ResumeRow) {
        #expect(SpokenWordPolicy.resume(row.paused, now: row.now, ageSeconds: row.age) == row.expected)
    }

    @Test("a journal carries its paused players, and refuses one that is not an MPRIS player")
    func journalPlayers() throws {
        var journal = DuckJournal(pid: 42, processStart: 7, depth: -20)
        journal.players = [Self.paused()]
        let back = try DuckJournal.decoded(from: try journal.encoded())
        #expect(back.players == journal.players)
        var plain = journal
        plain.players = []
        #expect(!String(decoding: try plain.encoded(), as: UTF8.self).contains("players"),
                "no key without players: the file stays what older versions wrote")
        var forged = journal
        forged.players[0].busName = "org.freedesktop.systemd1"
        #expect(throws: DuckPromptError.self) { try DuckJournal.decoded(from: try forged.encoded()) }
        #expect(forged.bounded().players.isEmpty, "bounded() drops it")
        var farBack = journal
        farBack.players[0].rewindMs = 3_600_000
        #expect(throws: DuckPromptError.self) { try farBack.validate() }
    }

    @Test("config: players rules and rewind_ms; a bad rule names its entry")
    func config() throws {
        let config = try DuckPromptConfig.parse(Data("""
            {"players": [{"match": "gPodder", "action": "duck"}, {"match": " Orca ", "action": "ignore"}], "rewind_ms": 3500}
            """.utf8), path: "/c.json")
        #expect(config.players == [PlayerRule(pattern: "gPodder", action: .duck), PlayerRule(pattern: "Orca", action: .ignore)])
        #expect(config.rewindMs == 3500)
        #expect(PlayOptions(config: config).rewindMs == 3500)
        let bad: [(String, String)] = [
            (#"{"players": {"match": "x"}}"#, "'players' must be an array of rules"),
            (#"{"players": [{"match": "x", "action": "stop"}]}"#, "'players' entry 1: action 'stop' is not one of pause, duck, ignore"),
            (#"{"players": [{"action": "pause"}]}"#, "'players' entry 1 needs 'match'"),
            (#"{"players": [{"match": " ", "action": "pause"}]}"#, "'players' entry 1: 'match' is empty"),
            (#"{"players": [{"match": "x", "action": "pause", "when": 1}]}"#, "'players' entry 1: unknown key 'when'"),
            (#"{"rewind_ms": 70000}"#, "/c.json: rewind-ms 70000 ms is out of range (0 to 60000 ms)"),
        ]
        for (json, message) in bad {
            let error = #expect(throws: DuckPromptError.self) { try DuckPromptConfig.parse(Data(json.utf8), path: "/c.json") }
            #expect(error?.message.contains(message) == true, "\(json): \(error?.message ?? "")")
            #expect(error?.code == .config)
        }
    }

    @Test("options: --duck-mode pause pauses every player, none and --no-pause none")
    func pauseModes() {
        var options = PlayOptions()
        #expect(options.pauseMode == .spokenWord)
        options.duckMode = .mute
        #expect(options.pauseMode == .spokenWord)
        options.duckMode = .pause
        #expect(options.pauseMode == .every)
        options.pausePlayers = false
        #expect(options.pauseMode == .noPause)
        options = PlayOptions(duckMode: .none)
        #expect(options.pauseMode == .off)
    }
}
