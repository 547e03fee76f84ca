import DuckPrompt
import DuckPromptProbe
import Foundation

/// Figure 7: a prompt through a held `Prompter`, `play(files:)` → first prompt sample on the
/// sink's monitor, beside paplay's exec → first sample in the same rounds.
extension ServerBench {
    static let heldZero = "held prompter --duck 0dB", heldDuck = "held prompter"
    static let heldCold = "held prompter, first prompt (cold), --duck 0dB"

    /// What plays one prompt in a round of figure 7.
    enum Player {
        /// A command run to its end, as figure 1 runs it.
        case command([String])
        /// `Prompter.play(files:options:)` on the scenario's prompter, waited for to its end.
        case held(PlayOptions)
    }

    /// When a prompt's run began and ended, in monotonic ns, or why it failed.
    struct PlayedRun {
        /// Just before `posix_spawnp`, or just before `play(files:)`.
        var started: UInt64
        /// `wait4` returning, or `result(of:)` returning.
        var ended: UInt64
        var failure: String?
    }

    /// Plays the blip once with `player`.
    func play(_ player: Player, on prompter: Prompter) throws -> PlayedRun {
        switch player {
        case .command(let command):
            let run = try Child.run(command)
            return PlayedRun(started: run.started, ended: run.exited,
                             failure: run.status == 0 ? nil : "exited \(run.status): \(run.stderr)")
        case .held(let options):
            let started = monotonicNanoseconds()
            let result = Result { try prompter.play(files: [blip], options: options) }.flatMap { id in
                blocking { try await prompter.result(of: id) }
            }
            let ended = monotonicNanoseconds()
            if case .failure(let error) = result { return PlayedRun(started: started, ended: ended, failure: "\(error)") }
            return PlayedRun(started: started, ended: ended, failure: nil)
        }
    }

    /// Start latency of one run, in ms: its first prompt sample on the monitor − its start
    /// (NaN, and a note, when it failed or was not heard).
    func startLatency(_ name: String, _ player: Player, on prompter: Prompter, recorder: BenchProbe,
                      scenario: String) throws -> Double {
        recorder.clearRecording()
        pause(ms: 150)
        let run = try play(player, on: prompter)
        let heard = recorder.heardPrompt(started: run.started, ended: run.ended)
        var s = Double.nan
        if let failure = run.failure {
            note("\(name) (\(scenario)): \(failure)")
        } else if let heard {
            s = (Double(heard.first) - Double(run.started)) / 1e6
        } else {
            note("\(name): no blip found on \(sink).monitor in one run (\(scenario))")
        }
        log("held \(scenario) \(name): start \(format(s, "ms")) ms")
        return s
    }

    func heldPrompter() throws {
        let recorder = try startRecorder()
        defer { recorder.stopRecording() }
        let commands = tools(playing: blip).filter { $0.name == "paplay" || $0.name == Self.anchor }
        let players: [(name: String, player: Player)] =
            [(Self.heldZero, .held(try promptOptions(sink: sink, duck: Decibels(0)))), (Self.heldDuck, .held(try promptOptions(sink: sink)))]
            + commands.map { ($0.name, .command($0.command)) }
        for scenario in [Self.idle, Self.music] {
            let music = scenario == Self.music ? try startMusic() : nil
            // A prompter of its own per scenario, so each has a cold first prompt; made before
            // the uncounted paplay run, so that its handshake and first read of the server are done.
            let prompter = try Prompter(server: ServerOptions())
            defer { prompter.close() }
            warmUp(commands)
            let cold = try startLatency(Self.heldCold, players[0].player, on: prompter, recorder: recorder, scenario: scenario)
            results.series.append(Series(figure: 7, row: Self.heldCold, column: scenario, unit: "ms",
                                         values: [cold].filter(\.isFinite), ratios: nil))
            var start: Rounds = [:]
            for round in 0..<runs {
                for i in 0..<players.count {
                    let (name, player) = players[(i + round) % players.count]
                    start[name, default: []].append(try startLatency(name, player, on: prompter, recorder: recorder,
                                                                     scenario: scenario))
                }
            }
            add(7, scenario, "ms", start, anchor: "paplay")
            music?.stopTones()
            pause(ms: 300)
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
