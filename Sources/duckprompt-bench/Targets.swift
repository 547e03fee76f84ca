import Foundation

extension ServerBench {
    /// Where each of the issue's targets stands on this server, from the medians.
    func evaluateTargets() {
        var t: [TargetResult] = []
        func median(_ figure: Int, _ row: String, _ column: String) -> Double? {
            results.find(figure, row, column)?.summary?.median
        }
        let references = kind == "pipewire" ? ["paplay", "pw-play"] : ["paplay"]
        for scenario in [Self.idle, Self.music] {
            let best = references.compactMap { median(1, $0, scenario) }.min()
            if let best, let zero = median(1, "duckprompt --duck 0dB", scenario) {
                t.append(TargetResult(target: "Start latency, --duck 0dB ≤ best of \(references.joined(separator: ", ")) (\(scenario))",
                                      measured: "\(format(zero, "ms")) ms vs \(format(best, "ms")) ms", met: zero <= best))
            }
            if let best, let duck = median(1, "duckprompt", scenario) {
                let limit = best + Double(Self.attackMs) + 20
                t.append(TargetResult(target: "Start latency, default duck ≤ best + attack + 20 ms (\(scenario))",
                                      measured: "\(format(duck, "ms")) ms vs \(format(limit, "ms")) ms", met: duck <= limit))
            }
        }
        for scenario in [Self.idle, Self.music] {
            if let series = results.find(3, "duckprompt --duck 0dB", scenario), let ratio = series.ratio,
               let zero = series.summary?.median, let anchor = median(3, Self.anchor, scenario) {
                t.append(TargetResult(target: "Wall time, 50 ms blip, --duck 0dB ≤ 1.1 × \(Self.anchor) (\(scenario))",
                                      measured: "\(format(zero, "s")) s vs \(format(anchor, "s")) s: × \(String(format: "%.3f", ratio))",
                                      met: ratio <= 1.1))
            }
        }
        if let d = median(4, "N = 300", "exec → all ducked") {
            let limit = Double(Self.attackMs + 50)
            t.append(TargetResult(target: "300 streams ducked within attack + 50 ms (\(Int(limit)) ms after exec)",
                                  measured: "\(format(d, "ms")) ms", met: d <= limit))
        } else {
            t.append(TargetResult(target: "300 streams ducked within attack + 50 ms", measured: "not measured", met: nil))
        }
        if let r = median(4, "N = 300", "prompt end → all restored") {
            let limit = Double(Self.releaseMs + 50)
            t.append(TargetResult(target: "300 streams restored within release + 50 ms (\(Int(limit)) ms after the prompt's end)",
                                  measured: "\(format(r, "ms")) ms", met: r <= limit))
        }
        if let cpu = median(5, "duckprompt", "CPU s"), let paplay = median(5, "paplay", "CPU s") {
            t.append(TargetResult(target: "60 s prompt: CPU ≤ paplay's", measured: "\(format(cpu, "s")) s vs \(format(paplay, "s")) s",
                                  met: cpu <= paplay))
        }
        if let rss = median(5, "duckprompt", "peak RSS") {
            t.append(TargetResult(target: "60 s prompt: peak RSS < 20 MiB", measured: "\(format(rss, "MiB")) MiB", met: rss < 20))
        }
        // Figures 7 and 9: a prompt's start ≤ half of paplay's in the same rounds.
        let halfPaplay = [(7, "Held prompter play", Self.heldZero, Self.heldDuck),
                          (9, "Service Play", Self.serviceZero, Self.serviceDuck)]
        for (figure, what, zeroRow, duckRow) in halfPaplay {
            for scenario in [Self.idle, Self.music] {
                guard let paplay = median(figure, "paplay", scenario) else { continue }
                let half = paplay / 2
                if let zero = median(figure, zeroRow, scenario) {
                    t.append(TargetResult(target: "\(what) → first sample, --duck 0dB ≤ 0.5 × paplay (\(scenario))",
                                          measured: "\(format(zero, "ms")) ms vs \(format(half, "ms")) ms", met: zero <= half))
                }
                if let duck = median(figure, duckRow, scenario) {
                    let limit = half + Double(Self.attackMs) + 20
                    t.append(TargetResult(target: "\(what) → first sample, default duck ≤ 0.5 × paplay + attack + 20 ms (\(scenario))",
                                          measured: "\(format(duck, "ms")) ms vs \(format(limit, "ms")) ms", met: duck <= limit))
                }
                let end = Self.endColumn(scenario)
                if figure == 9, let zero = median(9, zeroRow, end), let exit = median(9, "paplay", end) {
                    let beyond = zero - 50, limit = (exit - 50) / 2
                    t.append(TargetResult(target: "Service Play → PromptFinished, 50 ms blip, --duck 0dB: time beyond 50 ms "
                                              + "≤ 0.5 × paplay's exec → exit beyond 50 ms (\(scenario))",
                                          measured: "\(format(beyond, "ms")) ms vs \(format(limit, "ms")) ms "
                                              + "(\(format(zero, "ms")) ms; paplay \(format(exit, "ms")) ms)",
                                          met: beyond <= limit))
                }
            }
        }
        // Figure 11: the command handed over ≤ 1.0 × paplay in the same rounds.
        for scenario in [Self.idle, Self.music] {
            guard let paplay = median(11, "paplay", scenario) else { continue }
            if let handed = median(11, Self.handedZero, scenario) {
                t.append(TargetResult(target: "duckprompt play handed to a running serve: exec → first sample, --duck 0dB "
                                          + "≤ 1.0 × paplay (\(scenario))",
                                      measured: "\(format(handed, "ms")) ms vs \(format(paplay, "ms")) ms", met: handed <= paplay))
            }
        }
        let told = median(8, Self.idleHeld, Self.serverEvents)
        let idle = [(Self.idleHeld, "Idle prompter: no wake-ups (\(Self.idleSeconds) s: no context switch but within a second of a server event)"),
                    (Self.idleService, "Idle service: no wake-ups (\(Self.idleSeconds) s: context switches without a server event = 0)")]
        for (row, target) in idle {
            if let own = median(8, row, Self.unprompted), let all = median(8, row, "context switches"), let told {
                t.append(TargetResult(target: target,
                                      measured: "\(Int(own)) of \(Int(all)) context switches without one (\(Int(told)) server events)",
                                      met: own == 0))
            }
        }
        if let rss = median(8, Self.idleService, Self.endRSS) {
            let peak = median(8, Self.idleService, Self.peakRSS).map { "; VmHWM \(format($0, "MiB")) MiB" } ?? ""
            t.append(TargetResult(target: "Idle service RSS < 20 MiB (VmRSS at the end of the \(Self.idleSeconds) s window)",
                                  measured: "\(format(rss, "MiB")) MiB\(peak)", met: rss < 20))
        }
        results.targets = t
    }
}
