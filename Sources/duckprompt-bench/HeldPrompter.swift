import DuckPrompt
import DuckPromptProbe
import Foundation

/// Figure 7: a prompt through a held `Prompter`, `play(files:)` → first prompt sample on the
/// sink's monitor, beside paplay's exec → first sample in the same rounds.
extension ServerBench {
    static let heldZero = "held prompter --duck 0dB", heldDuck = "held prompter"
    static let heldCold = "held prompter, first prompt (cold), --duck 0dB"

    /// When a prompt's run began and ended, in monotonic ns, or why it failed.
    struct PlayedRun {
        /// Just before `posix_spawnp`, `play(files:)` or the D-Bus `Play` call.
        var started: UInt64
        /// `wait4` returning, `result(of:)` returning, or the `PromptFinished` signal dispatched.
        var ended: UInt64
        var failure: String?
    }

    /// One player of figures 7 and 9's rounds: plays the blip once.
    typealias Player = (name: String, run: () throws -> PlayedRun)

    /// The blip played once by `command`, run to its end as figure 1 runs it.
    func playCommand(_ command: [String]) throws -> PlayedRun {
        let run = try Child.run(command)
        return PlayedRun(started: run.started, ended: run.exited,
                         failure: run.status == 0 ? nil : "exited \(run.status): \(run.stderr)")
    }

    /// The blip played once by `prompter.play(files:options:)`, waited for to its end.
    func playHeld(_ options: PlayOptions, on prompter: Prompter) -> PlayedRun {
        let started = monotonicNanoseconds()
        let result = Result { try prompter.play(files: [blip], options: options) }.flatMap { id in
            waitForTask { try await prompter.result(of: id) }
        }
        let ended = monotonicNanoseconds()
        if case .failure(let error) = result { return PlayedRun(started: started, ended: ended, failure: "\(error)") }
        return PlayedRun(started: started, ended: ended, failure: nil)
    }

    /// One run of `player`, heard on the monitor, in ms: its first prompt sample − its start,
    /// and its end − its start (NaN, and a note, when it failed; the start NaN when the blip
    /// was not heard).
    func heardRun(_ player: Player, recorder: BenchProbe, figure: Int, scenario: String) throws -> (start: Double, end: Double) {
        recorder.clearRecording()
        pause(ms: 150)
        let run = try player.run()
        let heard = recorder.heardPrompt(started: run.started, ended: run.ended)
        var s = Double.nan, e = Double.nan
        if let failure = run.failure {
            note("\(player.name) (\(scenario)): \(failure)")
        } else {
            e = (Double(run.ended) - Double(run.started)) / 1e6
            if let heard {
                s = (Double(heard.first) - Double(run.started)) / 1e6
            } else {
                note("\(player.name): no blip found on \(sink).monitor in one run (\(scenario))")
            }
        }
        log("figure \(figure) \(scenario) \(player.name): start \(format(s, "ms")) ms, end \(format(e, "ms")) ms")
        return (s, e)
    }

    /// `runs` rounds in which `players` take turns, the first rotating from round to round, as
    /// in figures 1 to 3: per player, one start and one end (ms, `heardRun`) per round.
    func rotate(_ players: [Player], recorder: BenchProbe, figure: Int, scenario: String,
                rounds: Int? = nil) throws -> (start: Rounds, end: Rounds) {
        var start: Rounds = [:], end: Rounds = [:]
        for round in 0..<(rounds ?? runs) {
            for i in 0..<players.count {
                let player = players[(i + round) % players.count]
                let run = try heardRun(player, recorder: recorder, figure: figure, scenario: scenario)
                start[player.name, default: []].append(run.start)
                end[player.name, default: []].append(run.end)
            }
        }
        return (start, end)
    }

    /// Runs `body` in each scenario, idle sink then with music (`startMusic`), the music
    /// stopped after it.
    func inScenarios(_ body: (String) throws -> Void) throws {
        for scenario in [Self.idle, Self.music] {
            let music = scenario == Self.music ? try startMusic() : nil
            try body(scenario)
            music?.stopTones()
            pause(ms: 300)
        }
    }

    /// The commands figures 7 and 9 play beside the prompter or the service: paplay and the anchor.
    func paplayPlayers() -> (tools: [Tool], players: [Player]) {
        let commands = tools(playing: blip).filter { $0.name == "paplay" || $0.name == Self.anchor }
        return (commands, commands.map { tool in (tool.name, { try self.playCommand(tool.command) }) })
    }

    func heldPrompter() throws {
        let recorder = try startRecorder()
        defer { recorder.stopRecording() }
        let (commands, paplays) = paplayPlayers()
        let zero = try promptOptions(sink: sink, duck: Decibels(0)), duck = try promptOptions(sink: sink)
        try inScenarios { scenario in
            // A prompter of its own per scenario, so each has a cold first prompt; made before
            // the uncounted paplay run, so that its handshake and first read of the server are done.
            let prompter = try Prompter(server: ServerOptions())
            defer { prompter.close() }
            let players: [Player] = [(Self.heldZero, { self.playHeld(zero, on: prompter) }),
                                     (Self.heldDuck, { self.playHeld(duck, on: prompter) })] + paplays
            warmUp(commands)
            let cold = try heardRun((Self.heldCold, players[0].run), recorder: recorder, figure: 7, scenario: scenario).start
            results.series.append(Series(figure: 7, row: Self.heldCold, column: scenario, unit: "ms",
                                         values: [cold].filter(\.isFinite), ratios: nil))
            add(7, scenario, "ms", try rotate(players, recorder: recorder, figure: 7, scenario: scenario).start, anchor: "paplay")
        }
    }
}

/// The options `duckprompt play -d SINK` starts from (the user's config file, then the
/// defaults: -20 dB, attack 200 ms, release 500 ms), on `sink`, with `duck` when given.
/// - Throws: what `DuckPromptConfig.load()` throws for a bad config file.
func promptOptions(sink: String, duck: Decibels? = nil) throws -> PlayOptions {
    var options = PlayOptions(config: try DuckPromptConfig.load())
    options.device = .name(sink)
    if let duck { options.duck = duck }
    return options
}
