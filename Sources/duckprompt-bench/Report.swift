import Foundation

/// Writes Docs/performance.md from the JSON that `measure` and `inprocess` wrote.
enum Report {
    static let figureTitles = [
        1: "1. Start latency: exec → first prompt sample on the sink's monitor (ms)",
        2: "2. End latency: last prompt sample on the monitor → process exit (ms)",
        3: "3. Wall time for the 50 ms blip: exec → exit (s)",
        4: "4. Duck scale: N playing sink-inputs, default duck (-20 dB, attack 200 ms, release 500 ms) (ms)",
        5: "5. Cost of a 60 s prompt (all tools playing at once)",
        7: "7. Held prompter: play() → first prompt sample on the monitor, beside paplay's exec → first sample (ms)",
        8: "8. An idle prompter and an idle service over 60 s, beside `duckprompt devices --watch`",
        9: "9. The D-Bus service (`duckprompt serve`): Play → first prompt sample on the monitor, and Play → PromptFinished, "
            + "beside paplay's exec → first sample and exec → exit (ms)",
        10: "10. A navigation app's spoken instruction → its first sample on the monitor, through duckprompt and through "
            + "the app's own default audio output (ms)",
        11: "11. `duckprompt play` with `duckprompt serve` running (handed over) and with `--no-service`: exec → first prompt "
            + "sample on the monitor, beside paplay's and pw-play's (ms)",
        12: "12. Lead time: the service's Estimate and PromptTiming against the first prompt sample heard on the monitor (ms)",
        13: "13. What KeepAwake costs the service: its CPU time over \(ServerBench.keepAwakeSeconds) s idle and of KeepAwake",
    ]
    static let rowOrder = ["duckprompt --duck 0dB", "duckprompt", "paplay", ServerBench.anchor, "pw-play"]
    static let heldRowOrder = [ServerBench.heldZero, ServerBench.heldDuck, ServerBench.heldCold, "paplay", ServerBench.anchor]
    static let spokenRowOrder = [ServerBench.navitDuckprompt, ServerBench.navitEspeak, ServerBench.speechdDuckprompt,
                                 ServerBench.speechdEspeak, ServerBench.spokenAnchor]
    static let handoffRowOrder = [ServerBench.handedZero, ServerBench.ownZero, "paplay", "pw-play"]
    static let serviceRowOrder = [ServerBench.serviceZero, ServerBench.serviceDuck, ServerBench.serviceCold, "paplay", ServerBench.anchor]

    static let method = [
        "- Each server is private and headless (`duckprompt lab --server SERVER --device speaker --device bluetooth-a2dp "
            + "--no-listen --no-service`, Docs/lab.md): null sinks `speaker` (the default) and `bt_headset`. Every tool plays on `speaker` (`-d speaker`, `pw-play --target speaker`), "
            + "so routing picks no pre-roll (`pw-play`, a PipeWire client, on PipeWire only). The prompt is a 50 ms "
            + "1 kHz sine at -6 dBFS, 48 kHz mono WAV.",
        "- Figures 1 and 2: a libpulse record stream on `speaker.monitor` (mono float32, 48 kHz, 5 ms fragments) "
            + "asks the server for its timing (`pa_stream_update_timing_info`) after every chunk. Each answer says "
            + "which frame was being heard on the sink at the server's timestamp: the last frame written into the "
            + "record buffer (`write_index`), plus what the monitor holds (`source_usec`), minus what the sink "
            + "rendered ahead (`sink_usec`), as `pa_stream_get_time` relates them; a frame's time is its position "
            + "plus the median clock offset of the answers within a second of its arrival. A bound from arrival "
            + "times alone (frame f of a chunk that arrived at t ending at frame F was heard no later than "
            + "t − (F − 1 − f)/48000 s) agreed within 0.3 ms on PipeWire when this was written, but came out about "
            + "5 ms early on PulseAudio, whose null sink renders a block ahead and hands it to the monitor at once; "
            + "each server's notes give the difference in this run. The bound is the fallback when fewer than "
            + "three answers came, or they put the frame over 40 ms from it (figure 4 places the prompt's end the same way). Start: first prompt sample − the instant before "
            + "`posix_spawnp`; end: `wait4` returning − last prompt sample. Prompt samples: sample-to-sample steps "
            + "above 0.02 (the 1 kHz prompt steps 0.065, the 200 Hz music 0.003).",
        "- \"With music\": one more client plays a 200 Hz sine at -20 dBFS on `speaker` (30 ms buffer, `media.role=music`).",
        "- Figure 3 runs the same commands with nothing recording (a recorder asking for 5 ms lowers the sink's "
            + "latency, which shortens paplay on PulseAudio); the recorded wall times are shown beside them.",
        "- Figures 1 to 3: the tools take turns, the first one rotating from round to round; each scenario begins "
            + "with one run of `paplay --latency-msec=20` that is not counted (the first prompt after the music "
            + "started took 1.09 s on PulseAudio).",
        "- Figure 4: one client opens N silent streams (`media.role=music`), 30 to a sink, on `bt_headset` and as many "
            + "more null sinks as needed, never on the prompt's sink: a PulseAudio sink mixes at most 32 streams "
            + "(`MAX_MIX_CHANNELS`) and a stream beyond that never plays (paplay hangs, duckprompt exits 69), and "
            + "PipeWire 0.3.65 mixes at most 128 streams into one sink. Another client lists every sink-input's "
            + "volume back to back; ducked = every stream at its own volume − 20 dB, restored = every stream at its "
            + "own volume exactly. The prompt's end is heard on `speaker.monitor` (20 ms fragments). Each N begins, and each run follows, once the private servers have settled "
            + "(two 250 ms windows under 75 % of a core; after a 300-stream prompt PipeWire's took 2–5 s). No other tool "
            + "ducks, so figure 4 has no anchor: its targets are times after exec and after the prompt's end.",
        "- Figure 5: a 60 s 440 Hz stereo WAV; all tools play it at once (duckprompt with its default duck, so it "
            + "ducks the others), CPU = `ru_utime + ru_stime` of each child from `wait4`, peak RSS = the last `VmHWM` of its "
            + "/proc/PID/status, read every 20 ms while it runs (not `ru_maxrss`: a child of `posix_spawn` shares the "
            + "bench's memory until it execs, and Linux carries that high-water mark into `ru_maxrss`).",
        "- Figure 7: a `Prompter` (the library's held prompter) in the bench's own process, one per scenario and held "
            + "for all its rounds, plays the prompt on `speaker` with the options `duckprompt play -d speaker` starts from "
            + "(`PlayOptions(config:)`), its duck 0 dB or the default. Start: the instant before `play(files:)` (which "
            + "opens the file); end: the first prompt sample on `speaker.monitor`, recorded and placed as in figures 1 "
            + "and 2. Each run waits for `result(of:)`, then for 300 ms more of recording; the next begins 150 ms later, "
            + "as in figure 1. `paplay` and `paplay --latency-msec=20` play in the same rounds (exec → first sample, as "
            + "figure 1 runs them), the four taking turns as in figures 1 to 3; × is the ratio to `paplay` in the same "
            + "round. The prompter is made before the scenario's uncounted `paplay --latency-msec=20` run, so its "
            + "handshake and its first read of the server are done; its first prompt (`--duck 0dB`), with no stream "
            + "kept ready yet, is the cold one, shown in its own row and not counted in the rounds. Targets: `--duck 0dB` "
            + "≤ 0.5 × paplay's median; the default duck ≤ 0.5 × paplay + attack (200 ms) + 20 ms, as figure 1's "
            + "default-duck target adds the attack and 20 ms to the no-duck one (on the idle sink there is nothing to "
            + "duck, so no attack).",
        "- Figure 8: two children at once, no other client playing: `duckprompt devices --watch` (started first; on "
            + "PipeWire it follows the default sink in PipeWire's \"default\" metadata, with no timer), and `duckprompt-bench hold`, "
            + "which makes a `Prompter`, plays the prompt with the default duck on `speaker` to its end, writes a line, "
            + "then blocks in `read(2)`. The hold child never uses Dispatch (it waits for the result on a task executor "
            + "with a thread of its own): once a process has used Dispatch's global queues, libdispatch's workqueue "
            + "monitor wakes it every second, which would be the harness's wake-up, not the prompter's. From that line, "
            + "for 60 s: CPU = `utime + stime` of /proc/PID/stat (10 ms ticks), context switches = the sum over "
            + "/proc/PID/task/*/status of `voluntary_ctxt_switches + nonvoluntary_ctxt_switches` (a thread that ends "
            + "in the window takes its last ones with it; the notes say when), read every second; wake-ups per s = "
            + "context switches / 60. A subscribed prompter is woken by the server's events (a sink suspended after "
            + "5 s idle: module-suspend-on-idle, WirePlumber's suspend-node): `pactl subscribe` logs the sink, "
            + "sink-input, card and server events, and the target counts the prompter's context switches in seconds "
            + "with no such event in them or a second next to them (the two processes' stamps of one event can fall "
            + "either side of a second's end): 0 = no wake-up of its own.",
        "- Figure 8, the service: a third child, `duckprompt serve`, started once the hold child wrote its line; once it "
            + "owns `io.github.duckprompt.DuckPrompt1` (the bench asks the bus's `NameHasOwner` every 20 ms), the bench, "
            + "a D-Bus client on sd-bus, subscribes to `PromptFinished`, calls `Play([the prompt], {\"device\": <\"speaker\">})` "
            + "(the default duck) and waits for that prompt's `PromptFinished` (outcome `played`); then the window begins. "
            + "Through the window the bench's bus connection stays open and sends nothing, so no message reaches the "
            + "service from it. Its CPU, context switches and wake-ups are counted as the hold child's, with the same "
            + "target: 0 context switches in seconds with no server event in them or next to them (the service's prompter "
            + "and its route watch are libpulse clients subscribed to the server's events). Memory: `VmRSS` (RSS at the "
            + "end) and `VmHWM` (peak RSS) of /proc/PID/status read at the window's end, for each child; the target is "
            + "the service's `VmRSS` < 20 MiB. The notes give, per process, the seconds in which it switched and its "
            + "switches by thread name (/proc/PID/task/TID/comm).",
        "- Figure 9: per scenario, a `duckprompt serve` child of its own (its first prompt the cold one), started before "
            + "the scenario's uncounted `paplay --latency-msec=20` run; the bench waits until it owns "
            + "`io.github.duckprompt.DuckPrompt1`. The bench is the D-Bus client (the library's `SessionBusClient` on sd-bus, one "
            + "connection, subscribed to `PromptFinished` before any call; between messages it waits in the bus's "
            + "descriptor) and calls `Play([the prompt], {\"device\": "
            + "<\"speaker\">, \"duck\": <0.0>})`, and `Play` with `{\"device\": <\"speaker\">}` alone (the config's or the "
            + "default duck) in the other row. Start: the instant before the bench builds and sends `Play` "
            + "(`SessionBusClient.call`); first sample: the first prompt sample on `speaker.monitor`, recorded and placed as in "
            + "figures 1 and 2; end: the instant `SessionBusClient.dispatch` hands over that prompt's `PromptFinished` (outcome "
            + "`played`; the run fails otherwise). `paplay` and `paplay --latency-msec=20` play in the same rounds, the "
            + "recorder running: exec → first sample, as figure 1, and exec → exit (`wait4` returning), as figure 3's "
            + "recorded columns; the four take turns as in figures 1 to 3, 150 ms apart, each run waiting for 300 ms of "
            + "recording past its end; × is the ratio to `paplay` in the same round. Targets: the first sample with duck "
            + "0.0 ≤ 0.5 × paplay's median, and with the default duck ≤ 0.5 × paplay + attack (200 ms) + 20 ms, as in "
            + "figure 7; and the time beyond the prompt's own 50 ms, Play → PromptFinished − 50 ms with duck 0.0, ≤ 0.5 × "
            + "(paplay's exec → exit − 50 ms), from the medians.",
        "- Figure 10: the instruction \"In 200 metres, turn left\", spoken by libespeak-ng on `speaker` along four "
            + "paths, taking turns as in figures 1 to 3 (150 ms apart, each run waiting for 300 ms of recording past its "
            + "end; each path's first run not counted). Navit's `cmdline` speech runs one command per instruction, as "
            + "Navit runs it (one argv, no shell; Navit's own fork and exec are not included): `duckprompt say "
            + "--priority message --exit-with-parent -d speaker TEXT` (Docs/examples/navit), or `espeak-ng TEXT`, "
            + "which plays through its own PulseAudio output; start = the instant before `posix_spawnp`. "
            + "speech-dispatcher: two daemons of the bench's own (`speech-dispatcher -s`, one output module each: "
            + "`sd_duckprompt` running `duckprompt speechd-module`, or its own `sd_espeak-ng` with `AudioOutputMethod "
            + "pulse`), and `spd-say -w TEXT` against each (as Navit's speech_dispatcher backend, Pure Maps or a "
            + "screen reader reach it); start = the instant before `spd-say` is spawned. `PULSE_SINK=speaker` for "
            + "espeak-ng and the daemons. First sample: the first sample-to-sample step above 0.02 on "
            + "`speaker.monitor`, placed as in figures 1 and 2. × is the ratio to `paplay -d speaker` of the same "
            + "speech as a WAV (written by `espeak-ng -w`) in the same round: the cost of synthesis and of each "
            + "path's handoffs. \"With music\" as in figure 1: duckprompt's paths duck it before the first sample "
            + "(the 200 ms attack), espeak-ng's speak over it.",
        "- Figure 11: per scenario, a `duckprompt serve` child of its own, started as in figure 9 and owning its bus "
            + "name before the scenario's uncounted `paplay --latency-msec=20` run and one uncounted handed-over run (the "
            + "service's first prompt, with no stream kept ready). `duckprompt play -d speaker --duck 0dB` then hands "
            + "its prompt to it (`PlayFd`; the service's log and PromptFinished are the command's, Docs/cli.md \"Through "
            + "the service\"), and `duckprompt play -d speaker --duck 0dB --no-service` plays it itself with the service "
            + "running; `paplay` (and `pw-play` on PipeWire) in the same rounds, taking turns as in figures 1 to 3: "
            + "exec → first sample, recorded and placed as in figures 1 and 2; × is the ratio to `paplay` in the same "
            + "round. Target: the handed-over command's median ≤ paplay's (1.0 ×). Figure 1's `duckprompt --duck 0dB` "
            + "is the command with no service on the bus (it looks for one: one `GetNameOwner`).",
        "- Figure 12: per scenario, a `duckprompt serve` child of its own; its first `Play` (which makes the stream "
            + "the others reuse) is not counted. Each run, 150 ms after the last: `Estimate([the prompt], {\"device\": "
            + "<\"speaker\">})`, then at once `Play` of the same, its `PromptTiming` and `PromptFinished` (the bench's "
            + "client subscribed to both), and the first prompt sample on `speaker.monitor`, placed as in figures 1 and "
            + "2 (on the sink's own clock: what the sink plays out, its latency counted). Difference: the instant before "
            + "`Play` + the estimate's `heard-us`, or `PromptTiming`'s `first_sample_us` (both CLOCK_MONOTONIC), − that "
            + "first sample; positive: said later than heard. The recorder keeps `speaker` running, so \"idle sink\" "
            + "has neither pre-roll nor attack; \"with music\" has the attack. A sleeping sink's pre-roll is checked by "
            + "Tests/IntegrationTests/LeadTimeIntegrationTests.swift (within 30 ms on both servers).",
        "- Figure 13: one `duckprompt serve` child, after one `Play` on `speaker`: its CPU time (`utime + stime` of "
            + "/proc/PID/stat) over \(ServerBench.keepAwakeSeconds) s idle, then over \(ServerBench.keepAwakeSeconds) s "
            + "of `KeepAwake` (silence played on the default sink, `speaker`; the window begins 500 ms after the call), "
            + "ended with `KeepAwake(0)`. The sound server's own cost of the silent stream is not counted.",
        "- Figure 6: the sinks of every fixture dump under `Tests/DuckPromptTests/Fixtures` (pactl text and JSON, "
            + "pacmd, pw-dump, localised), repeated and renamed to 10 000 sinks in one snapshot, classified and routed "
            + "by `DeviceListing(snapshot:)`; and the pactl text fixtures repeated (renumbered) to a 10 MiB dump read "
            + "by `SinkDumpReader.readSnapshot`.",
    ]

    static func machine() -> [String] {
        let cpu = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("model name") }
            .map { $0.split(separator: ":", maxSplits: 1).last!.trimmingCharacters(in: .whitespaces) } ?? "unknown"
        let memory = (try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("MemTotal:") }
            .flatMap { Double($0.split(separator: " ")[1]) }.map { String(format: "%.0f GiB", $0 / 1024 / 1024) } ?? "?"
        let os = (try? String(contentsOfFile: "/etc/os-release", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("PRETTY_NAME=") }
            .map { $0.dropFirst(12).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) } ?? "?"
        func version(_ package: String) -> String {
            output(of: ["dpkg-query", "-W", "-f", "${Version}", package]) ?? "not installed"
        }
        let swift = output(of: ["swift", "--version"])?.split(separator: "\n").first.map(String.init) ?? "?"
        return [
            "- CPU: \(cpu), \(ProcessInfo.processInfo.activeProcessorCount) cores (nproc); memory \(memory)",
            "- System: \(os), kernel \(output(of: ["uname", "-r"]) ?? "?")",
            "- Debian packages: pipewire \(version("pipewire")), pipewire-pulse \(version("pipewire-pulse")), "
                + "wireplumber \(version("wireplumber")), pulseaudio \(version("pulseaudio")), "
                + "libpulse0 \(version("libpulse0")), pulseaudio-utils (paplay) \(version("pulseaudio-utils")), "
                + "pipewire-bin (pw-play) \(version("pipewire-bin")), libsndfile1 \(version("libsndfile1"))",
            "- \(swift)",
            "- duckprompt: commit \(output(of: ["git", "rev-parse", "--short", "HEAD"]) ?? "?")"
                + ((output(of: ["git", "status", "--porcelain", "--untracked-files=no", "Sources", "Package.swift"]) ?? "").isEmpty
                    ? "" : " with uncommitted changes"),
        ]
    }

    static func cell(_ series: Series?) -> (String, String) {
        guard let series, let s = series.summary else { return ("n/a", "") }
        let ratio = series.ratio.map { String(format: "%.2f", $0) } ?? ""
        return (s.text(series.unit), ratio)
    }

    /// A table with one row per tool (those of `order` that were measured) and, per column,
    /// the value and its ratio to the anchor.
    static func table(_ results: ServerResults, figure: Int, columns: [String], ratioLabel: String,
                      order: [String] = rowOrder) -> [String] {
        let rows = order.filter { row in columns.contains { results.find(figure, row, $0) != nil } }
        var lines = ["| tool | " + columns.map { "\($0) | \(ratioLabel)" }.joined(separator: " | ") + " |",
                     "|---|" + String(repeating: "---:|---:|", count: columns.count)]
        for row in rows {
            let cells = columns.map { column -> String in
                let (value, ratio) = cell(results.find(figure, row, column))
                return "\(value) | \(ratio)"
            }
            lines.append("| `\(row)` | " + cells.joined(separator: " | ") + " |")
        }
        return lines
    }

    static func serverSection(_ r: ServerResults) -> [String] {
        let title = r.server == "pipewire" ? "PipeWire" : "PulseAudio"
        let rounds = max(1, (r.runs + 1) / 2)
        let how: String = "\(r.runs) runs per figure (figure 5: \(rounds) rounds; figure 11: "
            + "\(ServerBench.handoffRounds(r.runs)) rounds; figure 8: one "
            + "\(ServerBench.idleSeconds) s window); median (min–max); "
            + "× = median over runs of the ratio to `\(ServerBench.anchor)` in the same round "
            + "(figures 5, 7 and 9: to `paplay`). Measured in \(Int(r.seconds)) s."
        var lines: [String] = ["## \(title) (\(r.serverVersion))", "", how, ""]
        for figure in 1...3 {
            lines += ["### " + figureTitles[figure]!, ""]
            var columns = [ServerBench.idle, ServerBench.music]
            if figure == 3 { columns += [ServerBench.idle + ", recorded", ServerBench.music + ", recorded"] }
            lines += table(r, figure: figure, columns: columns, ratioLabel: "×") + [""]
        }
        lines += ["### " + figureTitles[4]!, "",
                  "| N | exec → all ducked | prompt end → all restored |", "|---|---:|---:|"]
        let counts: [String] = r.series.filter { $0.figure == 4 }.map(\.row).uniqued()
        for row in counts {
            let ducked: String = cell(r.find(4, row, "exec → all ducked")).0
            let restored: String = cell(r.find(4, row, "prompt end → all restored")).0
            lines.append("| \(row) | \(ducked) | \(restored) |")
        }
        lines += ["", "### " + figureTitles[5]!, ""]
        lines += table(r, figure: 5, columns: ["CPU s", "peak RSS"], ratioLabel: "× paplay") + [""]
        if r.series.contains(where: { $0.figure == 7 }) {
            lines += ["### " + figureTitles[7]!, ""]
            lines += table(r, figure: 7, columns: [ServerBench.idle, ServerBench.music], ratioLabel: "× paplay",
                           order: heldRowOrder) + [""]
        }
        if r.series.contains(where: { $0.figure == 8 }) {
            let columns = ["CPU s", "context switches", "wake-ups per s", ServerBench.unprompted, ServerBench.endRSS, ServerBench.peakRSS]
            lines += ["### " + figureTitles[8]!, "",
                      "| process | " + columns.joined(separator: " | ") + " |",
                      "|---|" + String(repeating: "---:|", count: columns.count)]
            for row in [ServerBench.idleHeld, ServerBench.idleService, ServerBench.idleWatch] where r.find(8, row, columns[0]) != nil {
                // One window: the value itself, no range.
                let cells = columns.map { c in r.find(8, row, c).flatMap { s in s.summary.map { format($0.median, s.unit) } } ?? "n/a" }
                lines.append("| `\(row)` | " + cells.joined(separator: " | ") + " |")
            }
            lines += [""]
        }
        if r.series.contains(where: { $0.figure == 9 }) {
            let scenarios = [ServerBench.idle, ServerBench.music]
            lines += ["### " + figureTitles[9]!, ""]
            lines += table(r, figure: 9, columns: scenarios + scenarios.map(ServerBench.endColumn), ratioLabel: "× paplay",
                           order: serviceRowOrder) + [""]
        }
        if r.series.contains(where: { $0.figure == 10 }) {
            lines += ["### " + figureTitles[10]!, ""]
            lines += table(r, figure: 10, columns: [ServerBench.idle, ServerBench.music], ratioLabel: "× paplay of the speech",
                           order: spokenRowOrder) + [""]
        }
        if r.series.contains(where: { $0.figure == 11 }) {
            lines += ["### " + figureTitles[11]!, ""]
            lines += table(r, figure: 11, columns: [ServerBench.idle, ServerBench.music], ratioLabel: "× paplay",
                           order: handoffRowOrder) + [""]
        }
        if r.series.contains(where: { $0.figure == 12 }) {
            lines += ["### " + figureTitles[12]!, "",
                      "| scenario | said by | median \\|difference\\| | largest \\|difference\\| | difference, median (min–max) | runs |",
                      "|---|---|---:|---:|---:|---:|"]
            for scenario in [ServerBench.idle, ServerBench.music] {
                for row in [ServerBench.leadEstimate, ServerBench.leadTiming] {
                    guard let s = r.find(12, row, scenario), let signed = s.summary,
                          let size = Summary(s.values.map { abs($0) }) else { continue }
                    lines.append("| \(scenario) | \(row) | \(format(size.median, "ms")) | \(format(size.max, "ms")) | "
                                 + "\(signed.text("ms")) | \(signed.count) |")
                }
            }
            lines += [""]
        }
        if r.series.contains(where: { $0.figure == 13 }) {
            lines += ["### " + figureTitles[13]!, "", "| process | CPU s | % of a core |", "|---|---:|---:|"]
            for row in [ServerBench.serviceIdle, ServerBench.serviceKeepAwake] {
                let cells = ["CPU s", "% of a core"].map { c in r.find(13, row, c).flatMap { s in s.summary.map { format($0.median, s.unit) } } ?? "n/a" }
                lines.append("| `\(row)` | " + cells.joined(separator: " | ") + " |")
            }
            lines += [""]
        }
        if !r.notes.isEmpty { lines += ["Notes:"] + r.notes.map { "- \($0)" } + [""] }
        return lines
    }

    static func targetsTable(_ servers: [ServerResults], _ inprocess: InProcessResults?) -> [String] {
        var lines = ["| target | where | measured (medians) | |", "|---|---|---|---|"]
        func mark(_ met: Bool?) -> String { met.map { $0 ? "met" : "**missed**" } ?? "not measured" }
        for r in servers {
            for t in r.targets {
                lines.append("| \(t.target) | \(r.server) | \(t.measured) | \(mark(t.met)) |")
            }
        }
        for t in inprocess?.targets ?? [] {
            lines.append("| \(t.target) | in-process | \(t.measured) | \(mark(t.met)) |")
        }
        return lines
    }

    static func write(to path: String, command: String, servers: [ServerResults], inprocess: InProcessResults?,
                      preamble: String?) throws {
        var lines = ["# Performance", "",
                     "Generated by `Scripts/bench` (do not edit by hand; rerun it). A benchmark reports; it never fails a build.", "",
                     "Reproduce (as root on Debian 12, after `Scripts/setup --no-build`):", "",
                     "```sh", command, "```", ""]
        if let preamble { lines += [preamble, ""] }
        lines += ["## How it measures", ""] + method + [""]
        lines += ["## Machine", ""] + machine() + [""]
        lines += ["## Targets", ""] + targetsTable(servers, inprocess) + [""]
        for r in servers { lines += serverSection(r) }
        if let inprocess {
            lines += ["## 6. In-process: classification, routing and dump parsing", "",
                      "| what | per | median (min–max) |", "|---|---|---:|"]
            for s in inprocess.series {
                lines.append("| \(s.row) | \(s.column) | \(s.summary?.text(s.unit) ?? "n/a") \(s.unit) |")
            }
            lines += [""] + inprocess.notes.map { "- \($0)" }
        }
        while lines.last == "" { lines.removeLast() }
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
    }
}

extension Array where Element: Hashable {
    func uniqued() -> [Element] {
        var seen = Set<Element>()
        return filter { seen.insert($0).inserted }
    }
}
