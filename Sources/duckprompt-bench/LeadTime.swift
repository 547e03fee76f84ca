import DuckPrompt
import DuckPromptProbe
import Foundation

/// Figure 12: the service's lead time against the first sample heard, and figure 13: what
/// `KeepAwake` costs the service.
extension ServerBench {
    static let leadEstimate = "Estimate: Play's call + heard-us", leadTiming = "PromptTiming: first_sample_us"
    /// Figure 13's rows and window (s).
    static let serviceIdle = "duckprompt serve, idle", serviceKeepAwake = "duckprompt serve, KeepAwake"
    static let keepAwakeSeconds = 20

    /// Per scenario, a `duckprompt serve` child of its own (`startService`); its first `Play`
    /// (a new stream) is not counted; then `runs` times: `Estimate([blip], {device: speaker})`,
    /// at once `Play` of the same, its `PromptFinished`, and the first blip sample on the
    /// monitor (`heardPrompt`). Per run, in ms, the signed difference between the instant
    /// before `Play` + the estimate's `heard-us` and the first sample heard, and between its
    /// `PromptTiming`'s `first_sample_us` and it (positive: said later than heard).
    func leadTime() throws {
        let recorder = try startRecorder()
        defer { recorder.stopRecording() }
        let options: [String: BusValue] = ["device": .string(sink)]
        try inScenarios { scenario in
            let (child, client) = try startService()
            defer { stopService(child, figure: 12) }
            _ = playThroughService(client, options: options)
            var estimated: [Double] = [], timed: [Double] = []
            for _ in 0..<runs {
                recorder.clearRecording()
                pause(ms: 150)
                let estimate = try client.estimate(files: [blip], options: options)
                let started = monotonicNanoseconds()
                let id = try client.play(files: [blip], options: options)
                guard let finished = try client.waitForFinished(id, deadline: started + 10_000_000_000),
                      finished.outcome == "played" else {
                    note("Figure 12 (\(scenario)): prompt \(id) did not play in 10 s")
                    continue
                }
                guard let heard = recorder.heardPrompt(started: started, ended: finished.received),
                      let heardUs = estimate["heard-us"] else {
                    note("Figure 12 (\(scenario)): no blip found on \(sink).monitor in one run, or no heard-us")
                    continue
                }
                let first = Double(heard.first) / 1e6
                estimated.append(Double(started) / 1e6 + Double(heardUs) / 1000 - first)
                if let timing = client.takeTiming(id) { timed.append(Double(timing) / 1000 - first) }
                log("figure 12 \(scenario): Estimate \(format(estimated.last!, "ms")) ms (start-us \(estimate["start-us"] ?? 0), "
                    + "heard-us \(heardUs)), PromptTiming \(timed.last.map { format($0, "ms") } ?? "none") ms")
            }
            for (row, values) in [(Self.leadEstimate, estimated), (Self.leadTiming, timed)] {
                results.series.append(Series(figure: 12, row: row, column: scenario, unit: "ms", values: values))
            }
        }
    }

    /// A `duckprompt serve` child, after one `Play` on the sink: its CPU time (`ProcessCounters`,
    /// /proc/PID/stat) over `seconds` idle, then over `seconds` of `KeepAwake` (asked for
    /// `seconds` + 5, ended with `KeepAwake(0)` after the window), the window beginning 500 ms
    /// after the call.
    /// - Throws: `BenchError` when the service cannot be started, its prompt does not play, or
    ///   it ends during a window.
    func keepAwakeCost(seconds: Int) throws {
        let (child, client) = try startService()
        defer { stopService(child, figure: 13) }
        if let failure = playThroughService(client, options: ["device": .string(sink)]).failure {
            throw BenchError("figure 13's prompt: \(failure)")
        }
        pause(ms: 1000)
        func cpuSeconds() throws -> Double {
            guard let before = ProcessCounters(pid: child.pid) else { throw BenchError("duckprompt serve ended") }
            pause(ms: seconds * 1000)
            guard let after = ProcessCounters(pid: child.pid) else { throw BenchError("duckprompt serve ended") }
            return after.since(before).cpuSeconds
        }
        let idle = try cpuSeconds()
        try client.keepAwake(seconds: UInt32(seconds + 5))
        pause(ms: 500)
        let kept = try cpuSeconds()
        try client.keepAwake(seconds: 0)
        for (row, cpu) in [(Self.serviceIdle, idle), (Self.serviceKeepAwake, kept)] {
            results.series.append(Series(figure: 13, row: row, column: "CPU s", unit: "s", values: [cpu]))
            results.series.append(Series(figure: 13, row: row, column: "% of a core", unit: "%",
                                         values: [cpu / Double(seconds) * 100]))
            log("figure 13 \(row): \(format(cpu, "s")) CPU s in \(seconds) s")
        }
    }
}
