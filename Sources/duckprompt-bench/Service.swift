import DuckPrompt
import DuckPromptProbe
import DuckPromptService
import Foundation

/// Figure 9: a prompt through the D-Bus service (`duckprompt serve`, a child), `Play` → first
/// prompt sample on the sink's monitor and `Play` → `PromptFinished`, beside paplay's exec →
/// first sample and exec → exit in the same rounds.
extension ServerBench {
    static let serviceZero = "duckprompt serve, Play with duck 0.0", serviceDuck = "duckprompt serve, Play"
    static let serviceCold = "duckprompt serve, first Play (cold), duck 0.0"

    /// Figure 9's column of a run's end (`PromptFinished`; paplay's exit) in `scenario`.
    static func endColumn(_ scenario: String) -> String { scenario + ", → end" }

    /// `duckprompt serve` started as a child, and the bench's client of it, once the child
    /// owns `io.github.duckprompt.DuckPrompt1`.
    /// - Throws: `BenchError` when it cannot be started or owns no name after 10 s (it is
    ///   then ended).
    func startService() throws -> (child: Child, client: BusClient) {
        let child = try Child([duckprompt, "serve"])
        do {
            let client = try BusClient()
            try client.waitForOwner(timeoutMs: 10_000)
            return (child, client)
        } catch {
            kill(child.pid, SIGTERM)
            let run = child.wait()
            throw BenchError("duckprompt serve: \(error) (it exited \(run.status): \(run.stderr))")
        }
    }

    /// Ends the service (SIGTERM) and waits for it; a note when it did not exit 0.
    func stopService(_ child: Child, figure: Int) {
        kill(child.pid, SIGTERM)
        let run = child.wait()
        if run.status != 0 { note("Figure \(figure): duckprompt serve exited \(run.status): \(run.stderr)") }
    }

    /// The blip played once through the service: `Play` with `options`, then the
    /// `PromptFinished` of its id (10 s at most); a failure unless the outcome is `played`.
    func playThroughService(_ client: BusClient, options: [String: BusValue]) -> PlayedRun {
        let started = monotonicNanoseconds()
        do {
            let id = try client.play(files: [blip], options: options)
            guard let finished = try client.waitForFinished(id, deadline: started + 10_000_000_000) else {
                return PlayedRun(started: started, ended: monotonicNanoseconds(), failure: "no PromptFinished for prompt \(id) in 10 s")
            }
            let failure = finished.outcome == "played" ? nil : "PromptFinished \(finished.outcome): \(finished.message)"
            return PlayedRun(started: started, ended: finished.received, failure: failure)
        } catch {
            return PlayedRun(started: started, ended: monotonicNanoseconds(), failure: "\(error)")
        }
    }

    func service() throws {
        let recorder = try startRecorder()
        defer { recorder.stopRecording() }
        let (commands, paplays) = paplayPlayers()
        let zero: [String: BusValue] = ["device": .string(sink), "duck": .double(0)]
        let duck: [String: BusValue] = ["device": .string(sink)]
        try inScenarios { scenario in
            // A service of its own per scenario, so each has a cold first prompt; started
            // before the uncounted paplay run, as figure 7's prompter is made.
            let (child, client) = try startService()
            defer { stopService(child, figure: 9) }
            let players: [Player] = [(Self.serviceZero, { self.playThroughService(client, options: zero) }),
                                     (Self.serviceDuck, { self.playThroughService(client, options: duck) })] + paplays
            warmUp(commands)
            let cold = try heardRun((Self.serviceCold, players[0].run), recorder: recorder, figure: 9, scenario: scenario)
            for (column, value) in [(scenario, cold.start), (Self.endColumn(scenario), cold.end)] {
                results.series.append(Series(figure: 9, row: Self.serviceCold, column: column, unit: "ms",
                                             values: [value].filter(\.isFinite), ratios: nil))
            }
            let rounds = try rotate(players, recorder: recorder, figure: 9, scenario: scenario)
            add(9, scenario, "ms", rounds.start, anchor: "paplay")
            add(9, Self.endColumn(scenario), "ms", rounds.end, anchor: "paplay")
        }
    }
}

/// Figure 11: `duckprompt play` with a `duckprompt serve` running, which it hands its prompt to
/// (ServiceHandoff), exec → first prompt sample on the monitor, beside `duckprompt play
/// --no-service` (the command's own path), paplay and pw-play in the same rounds.
extension ServerBench {
    static let handedZero = "duckprompt play --duck 0dB (serve running: handed over)"
    static let ownZero = "duckprompt play --duck 0dB --no-service (serve running)"
    /// Figure 11's rounds: at least 15, since its target compares medians about 1 ms apart
    /// on a machine whose single runs spread over 5 ms (paplay 8.0–12.6 ms in 5 runs).
    static func handoffRounds(_ runs: Int) -> Int { max(runs, 15) }

    func handoff() throws {
        let recorder = try startRecorder()
        defer { recorder.stopRecording() }
        let commands = tools(playing: blip).filter { ["paplay", "pw-play", Self.anchor].contains($0.name) }
        let zero = [duckprompt, "play", "-d", sink, "--duck", "0dB"]
        let players: [Player] = [(Self.handedZero, { try self.playCommand(zero + [self.blip]) }),
                                 (Self.ownZero, { try self.playCommand(zero + ["--no-service", self.blip]) })]
            + commands.filter { $0.name != Self.anchor }.map { tool in (tool.name, { try self.playCommand(tool.command) }) }
        try inScenarios { scenario in
            let (child, client) = try startService()
            _ = client
            defer { stopService(child, figure: 11) }
            warmUp(commands)
            // The service's first prompt (its stream not yet kept ready) is not counted.
            _ = try heardRun((Self.handedZero, players[0].run), recorder: recorder, figure: 11, scenario: scenario)
            add(11, scenario, "ms", try rotate(players, recorder: recorder, figure: 11, scenario: scenario,
                                               rounds: Self.handoffRounds(runs)).start, anchor: "paplay")
        }
    }
}
