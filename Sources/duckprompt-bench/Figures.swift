import DuckPrompt
import DuckPromptProbe
import Foundation

/// A command measured side by side with the others.
struct Tool {
    var name: String
    var command: [String]
}

/// Figures 1 to 5 on the server this process was started against (`duckprompt lab … --device
/// speaker --device bluetooth-a2dp`: the null sinks `speaker`, the default, and `bt_headset`).
final class ServerBench {
    static let anchor = "paplay --latency-msec=20"
    static let idle = "idle sink", music = "with music"
    static let attackMs = 200, releaseMs = 500
    /// Figure 4's load streams per sink (see `duckScale`).
    static let loadPerSink = 30

    let kind: String
    let runs: Int
    let duckprompt: String
    let directory: String
    let sink = "speaker"
    var results: ServerResults
    /// The 50 ms 1 kHz prompt of figures 1 to 4, 7 and 8 (a WAV in `directory`).
    let blip: String

    init(kind: String, runs: Int, duckprompt: String, serverVersion: String) throws {
        self.kind = kind
        self.runs = runs
        self.duckprompt = duckprompt
        directory = NSTemporaryDirectory() + "duckprompt-bench-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        blip = directory + "/blip-50ms-1kHz.wav"
        try TestSignal.writeSine(to: blip, hertz: 1000, seconds: 0.05, amplitude: 0.5)
        results = ServerResults(server: kind, serverVersion: serverVersion, runs: runs)
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    /// The tools of figures 1 to 3, for a prompt file; pw-play only where PipeWire runs.
    func tools(playing file: String) -> [Tool] {
        var list = [
            Tool(name: "duckprompt --duck 0dB", command: [duckprompt, "play", "-d", sink, "--duck", "0dB", file]),
            Tool(name: "duckprompt", command: [duckprompt, "play", "-d", sink, file]),
            Tool(name: "paplay", command: ["paplay", "-d", sink, file]),
            Tool(name: Self.anchor, command: ["paplay", "-d", sink, "--latency-msec=20", file]),
        ]
        if kind == "pipewire" { list.append(Tool(name: "pw-play", command: ["pw-play", "--target", sink, file])) }
        return list
    }

    /// Plays the blip once with the anchor and throws the run away: the first prompt after a
    /// scenario starts paid for the sink's previous state (on PulseAudio, with the music just
    /// started, it took 1.09 s where the others took 0.07 s), and whichever tool the rotation
    /// put first would carry it.
    func warmUp(_ tools: [Tool]) {
        guard let anchor = tools.first(where: { $0.name == Self.anchor }) else { return }
        pause(ms: 150)
        _ = try? Child.run(anchor.command)
    }

    /// Runs every tool to its end `runs` times, a round each, the order rotated every round so
    /// that no tool always follows the same one; 150 ms apart, the recording (if any) cleared
    /// before each run. `body` gets the tool and its run.
    func eachRun(of tools: [Tool], recorder: BenchProbe?, _ body: (Tool, ChildRun) throws -> Void) throws {
        for round in 0..<runs {
            for i in 0..<tools.count {
                let tool = tools[(i + round) % tools.count]
                recorder?.clearRecording()
                pause(ms: 150)
                try body(tool, try Child.run(tool.command))
            }
        }
    }

    func log(_ text: String) {
        FileHandle.standardError.write(Data("duckprompt-bench[\(kind)]: \(text)\n".utf8))
    }

    /// Per tool, one value per round (NaN where that run failed).
    typealias Rounds = [String: [Double]]

    func add(_ figure: Int, _ column: String, _ unit: String, _ rounds: Rounds, anchor: String? = anchor) {
        for (row, values) in rounds.sorted(by: { $0.key < $1.key }) {
            var ratios: [Double]? = nil
            if let anchor, let base = rounds[anchor] {
                ratios = zip(values, base).map { $0 / $1 }.filter(\.isFinite)
            }
            results.series.append(Series(figure: figure, row: row, column: column, unit: unit,
                                         values: values.filter(\.isFinite), ratios: ratios))
        }
    }

    /// A music stream on the sink: a 200 Hz sine at 0.1 (-20 dBFS), 30 ms buffer, role music.
    func startMusic() throws -> BenchProbe {
        let probe = try BenchProbe(clientName: "duckprompt-bench-music")
        _ = try probe.playTones(count: 1, sinks: [sink], hertz: 200, amplitude: 0.1, latencyMs: 30,
                                properties: ["application.name": "duckprompt-bench-music", "media.role": "music"])
        pause(ms: 500)
        return probe
    }

    /// A recorder of the sink's monitor, 5 ms fragments, once it delivers steadily (PulseAudio
    /// can lose the first second of a new recording).
    func startRecorder(fragmentMs: Int = 5) throws -> BenchProbe {
        let recorder = try BenchProbe(clientName: "duckprompt-bench-recorder")
        try recorder.startRecording(monitorOf: sink, fragmentMs: fragmentMs)
        let deadline = monotonicNanoseconds() + 10_000_000_000
        while recorder.recorded.frames < BenchProbe.rate * 3 / 2 && monotonicNanoseconds() < deadline { pause(ms: 20) }
        return recorder
    }

    func note(_ text: String) {
        log(text)
        if !results.notes.contains(text) { results.notes.append(text) }
    }

    // MARK: Figures 1 and 2: start and end latency, heard on the monitor

    func latency() throws {
        let recorder = try startRecorder()
        defer { recorder.stopRecording() }
        // How far the server's timing answers move a first prompt sample from the arrival
        // bound (ms), and how many had too few answers, or implausible ones, to use them.
        var corrections: [Double] = [], untimed = 0
        defer {
            if let c = Summary(corrections) {
                results.notes.append("Figures 1 and 2 place samples by the server's timing answers; they put a prompt's first sample "
                    + "\(format(c.median, "ms")) ms (median; \(format(c.min, "ms")) to \(format(c.max, "ms")) ms) later than the arrival bound"
                    + (untimed > 0 ? "; \(untimed) runs had too few answers, or answers over 40 ms from the bound, and use the bound." : "."))
            }
        }
        for scenario in [Self.idle, Self.music] {
            let music = scenario == Self.music ? try startMusic() : nil
            var start: Rounds = [:], end: Rounds = [:], wall: Rounds = [:]
            let tools = tools(playing: blip)
            warmUp(tools)
            try eachRun(of: tools, recorder: recorder) { tool, run in
                let heard = recorder.heardPrompt(started: run.started, ended: run.exited)
                var s = Double.nan, e = Double.nan
                if run.status != 0 {
                    note("\(tool.name) exited \(run.status) (\(scenario)): \(run.stderr)")
                } else if let heard {
                    s = (Double(heard.first) - Double(run.started)) / 1e6
                    e = (Double(run.exited) - Double(heard.last)) / 1e6
                } else {
                    note("\(tool.name): no blip found on \(sink).monitor in one run (\(scenario))")
                }
                start[tool.name, default: []].append(s)
                end[tool.name, default: []].append(e)
                wall[tool.name, default: []].append(run.status == 0 ? run.wallSeconds : .nan)
                if let heard {
                    if let c = heard.correctionMs { corrections.append(c) } else { untimed += 1 }
                }
                log("\(scenario) \(tool.name): start \(format(s, "ms")) ms, end \(format(e, "ms")) ms, wall \(format(run.wallSeconds, "s")) s")
            }
            add(1, scenario, "ms", start)
            add(2, scenario, "ms", end)
            add(3, scenario + ", recorded", "s", wall)
            music?.stopTones()
            pause(ms: 300)
        }
    }

    // MARK: Figure 3: wall time, nothing recording

    func wallTime() throws {
        for scenario in [Self.idle, Self.music] {
            let music = scenario == Self.music ? try startMusic() : nil
            var wall: Rounds = [:]
            let tools = tools(playing: blip)
            warmUp(tools)
            try eachRun(of: tools, recorder: nil) { tool, run in
                if run.status != 0 { note("\(tool.name) exited \(run.status) (\(scenario)): \(run.stderr)") }
                wall[tool.name, default: []].append(run.status == 0 ? run.wallSeconds : .nan)
                log("wall \(scenario) \(tool.name): \(format(run.wallSeconds, "s")) s")
            }
            add(3, scenario, "s", wall)
            music?.stopTones()
            pause(ms: 300)
        }
    }

    // MARK: Figure 4: duck scale

    /// One poll of the load streams' volumes.
    struct Poll {
        var sent: UInt64, received: UInt64
        var volumes: [UInt32: ChannelVolumes]
    }

    /// Polls sink-input volumes on its own connection until stopped.
    final class Poller: @unchecked Sendable {
        private let lock = NSLock()
        private var polls: [Poll] = []
        private var stopped = false
        private let done = DispatchSemaphore(value: 0)

        init(watching indices: Set<UInt32>) throws {
            let probe = try BenchProbe(clientName: "duckprompt-bench-poller")
            Thread { [self] in
                while !lock.withLock({ stopped }) {
                    let sent = monotonicNanoseconds()
                    guard let inputs = try? probe.sinkInputs() else { break }
                    let received = monotonicNanoseconds()
                    var volumes: [UInt32: ChannelVolumes] = [:]
                    for input in inputs where indices.contains(input.index) { volumes[input.index] = input.volume }
                    lock.withLock { polls.append(Poll(sent: sent, received: received, volumes: volumes)) }
                    pause(ms: 2)
                }
                withExtendedLifetime(probe) {}
                done.signal()
            }.start()
        }

        var snapshot: [Poll] { lock.withLock { polls } }

        func stop() -> [Poll] {
            lock.withLock { stopped = true }
            done.wait()
            return snapshot
        }
    }

    func duckScale(counts: [Int]) throws {
        // 20 ms fragments: a 5 ms one would make PipeWire run its graph, hundreds of streams,
        // every 5 ms; the prompt's end needs no finer clock than the ramps' 10 ms steps.
        let recorder = try startRecorder(fragmentMs: 20)
        defer { recorder.stopRecording() }
        var ducked: Rounds = [:], restored: Rounds = [:], resolution: [Double] = []
        let tool = Tool(name: "duckprompt", command: [duckprompt, "play", "-d", sink, blip])
        for n in counts {
          let row = "N = \(n)"
          do {
            let load = try BenchProbe(clientName: "duckprompt-bench-load", timeout: .seconds(60))
            // On other sinks than the prompt's, at most 30 a sink: a PulseAudio sink mixes at
            // most 32 streams (MAX_MIX_CHANNELS), and one more never plays (paplay hangs, a
            // prompt ends with 69); PipeWire 0.3.65 mixes at most 128 into one sink.
            var sinks = ["bt_headset"]
            var modules: [String] = []
            defer { for module in modules { _ = output(of: ["pactl", "unload-module", module]) } }
            while sinks.count * Self.loadPerSink < n {
                let name = "bench_load_\(sinks.count)"
                guard let module = output(of: ["pactl", "load-module", "module-null-sink", "sink_name=\(name)"]) else {
                    throw BenchError("cannot load a null sink for the load streams")
                }
                modules.append(module)
                sinks.append(name)
            }
            var indices: [UInt32] = []
            while indices.count < n {
                let began = monotonicNanoseconds()
                indices += try load.playTones(count: min(50, n - indices.count), sinks: sinks,
                                              hertz: 0, amplitude: 0, latencyMs: 200,
                                              properties: ["application.name": "duckprompt-bench-load", "media.role": "music"])
                log("\(indices.count) of \(n) load streams playing (\(format(Double(monotonicNanoseconds() - began) / 1e6, "ms")) ms)")
            }
            let watched = Set(indices)
            // Steady playing streams: not while the servers are still setting new ones up.
            let settle = waitUntilServersSettle()
            log("\(n) load streams: the servers \(settle.settled ? "settled" : "did not settle") in \(settle.waitedMs) ms")
            if !settle.settled { note("duck scale \(row): the servers still used over 75 % of a core \(settle.waitedMs) ms after the load streams started") }
            for _ in 0..<runs {
                recorder.clearRecording()
                let poller = try Poller(watching: watched)
                pause(ms: 150)
                let run = try Child.run(tool.command)
                // Until every stream is back (or 3 s after the exit).
                let deadline = run.exited + 3_000_000_000
                while monotonicNanoseconds() < deadline {
                    if let last = poller.snapshot.last, last.sent > run.exited, let first = poller.snapshot.first,
                       last.volumes == first.volumes { break }
                    pause(ms: 20)
                }
                let polls = poller.stop()
                recorder.waitForRecording(past: run.exited, marginMs: 300)
                let rec = recorder.snapshotRecording()
                var d = Double.nan, r = Double.nan
                let originals = polls.last { $0.received < run.started }?.volumes ?? [:]
                if run.status != 0 {
                    note("duck scale \(row): duckprompt exited \(run.status): \(run.stderr)")
                } else if originals.count != n {
                    note("duck scale \(row): saw \(originals.count) of \(n) load streams before the prompt")
                } else {
                    // At the duck level: -20 dB from its own volume (0.05 dB for rounding).
                    func ducked(_ poll: Poll) -> Int {
                        originals.filter { index, original in
                            guard let now = poll.volumes[index]?.values.first, let base = original.values.first else { return false }
                            return VolumeMath.decibels(of: now) <= VolumeMath.decibels(of: base) - 20 + 0.05
                        }.count
                    }
                    func isDucked(_ poll: Poll) -> Bool { ducked(poll) == n }
                    if let at = polls.firstIndex(where: { $0.sent > run.started && isDucked($0) }) {
                        d = (Double(polls[at].received) - Double(run.started)) / 1e6
                        let back = polls[at...].first(where: { $0.volumes == originals })
                        let found = rec.blip(in: rec.firstFrame(arrivingAfter: run.started)..<rec.samples.count)
                        if let back, let found, let last = rec.time(ofFrame: found.last) {
                            r = (Double(back.received) - Double(last)) / 1e6
                        } else if back == nil {
                            let left = originals.filter { polls.last?.volumes[$0.key] != $0.value }
                            let example = left.first.map { " (e.g. #\($0.key): \($0.value) → \(polls.last?.volumes[$0.key].map(\.description) ?? "gone"))" } ?? ""
                            note("duck scale \(row): \(left.count) streams not back at their volume 3 s after the exit in one run\(example)")
                        } else {
                            note("duck scale \(row): the prompt was not found on \(sink).monitor in one run")
                        }
                    } else {
                        let count = ducked
                        let best = polls.max { count($0) < count($1) }
                        let example = best.flatMap { poll in originals.first { poll.volumes[$0.key]?.values.first.map {
                            VolumeMath.decibels(of: $0) > -19.95 } ?? true }.map { " (e.g. #\($0.key): \($0.value) → \(poll.volumes[$0.key]?.description ?? "gone"))" } } ?? ""
                        note("duck scale \(row): the streams were never all at the duck level in one run: "
                             + "at most \(best.map(count) ?? 0) of \(n)\(example)")
                    }
                    let gaps = zip(polls.dropFirst(), polls).map { Double($0.received - $1.received) / 1e6 }
                    if let m = Summary(gaps)?.median { resolution.append(m) }
                }
                ducked[row, default: []].append(d)
                restored[row, default: []].append(r)
                log("duck scale \(row): all ducked \(format(d, "ms")) ms after exec, restored \(format(r, "ms")) ms after the prompt's end")
                // The servers work on the prompt's writes for seconds after it (WirePlumber: 2.5-5 s
                // for 300 streams); the next run starts when they are done.
                let after = waitUntilServersSettle()
                log("duck scale \(row): the servers \(after.settled ? "settled" : "did not settle") in \(after.waitedMs) ms after the run")
            }
            load.stopTones()
            pause(ms: 500)
          } catch {
            note("duck scale \(row) stopped: \(error)")
            pause(ms: 2000)
          }
        }
        add(4, "exec → all ducked", "ms", ducked, anchor: nil)
        add(4, "prompt end → all restored", "ms", restored, anchor: nil)
        if let r = Summary(resolution) {
            results.notes.append("Figure 4 polls every sink-input's volume back to back on its own connection: "
                + "one poll every \(format(r.median, "ms")) ms (median; \(format(r.min, "ms"))–\(format(r.max, "ms")) ms), "
                + "which bounds the resolution; a time is that of the first answer that shows the state.")
        }
    }

    // MARK: Figure 5: cost of a 60 s prompt

    func cost(rounds: Int, seconds: Double = 60) throws {
        let file = directory + "/prompt-60s.wav"
        try TestSignal.writeSine(to: file, hertz: 440, seconds: seconds, amplitude: 0.3, channels: 2)
        var cpu: Rounds = [:], rss: Rounds = [:]
        let tools = tools(playing: file).filter { $0.name != "duckprompt --duck 0dB" }
        for round in 0..<rounds {
            log("cost round \(round + 1) of \(rounds): \(Int(seconds)) s, all tools at once")
            let children = try tools.map { try Child($0.command) }
            for (tool, child) in zip(tools, children) {
                let run = child.wait()
                if run.status != 0 { note("\(tool.name) exited \(run.status) (60 s prompt): \(run.stderr)") }
                cpu[tool.name, default: []].append(run.status == 0 ? run.cpuSeconds : .nan)
                rss[tool.name, default: []].append(run.status == 0 ? run.peakRSSMiB : .nan)
                log("cost \(tool.name): \(format(run.cpuSeconds, "s")) CPU s, \(format(run.peakRSSMiB, "MiB")) MiB")
            }
            pause(ms: 500)
        }
        add(5, "CPU s", "s", cpu, anchor: "paplay")
        add(5, "peak RSS", "MiB", rss, anchor: "paplay")
    }
}
