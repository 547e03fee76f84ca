import DuckPromptTestSupport
import Foundation
import DuckPromptProbe
import Testing

/// What must not lose a user's volume: the server killed or stalled mid-prompt (the journal
/// outlives the connection and is restored once the server is back), a user's change at any
/// point of a ramp, and the duck held across prompts that wait their turn.
///
/// The server that speaks the pulse protocol (pipewire-pulse, or pulseaudio) is started again
/// by `duckprompt lab` 0.2 s after it dies; its pid is in `$DUCKPROMPT_LAB_DIR/pulse-server.pid`.
@Suite(.serialized)
struct FaultIntegrationTests {

    /// The pid of the process serving the pulse protocol now.
    /// - Throws: a plain error (not a recorded issue), so that a poll may try again.
    static func pulseServerPid() throws -> pid_t {
        let environment = ProcessInfo.processInfo.environment
        guard let file = environment["DUCKPROMPT_LAB_DIR"].map({ $0 + "/pulse-server.pid" }) else {
            throw TestFailure("duckprompt lab sets DUCKPROMPT_LAB_DIR; it is not set")
        }
        let text = try String(contentsOfFile: file, encoding: .utf8)
        guard let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw TestFailure("\(file) holds '\(text)', not a pid")
        }
        return pid
    }

    /// Waits until a new server process answers (a sink to play on included).
    static func waitServerBack(after old: pid_t) throws {
        let back = eventually(timeout: timeLimit(15)) {
            guard let now = try? pulseServerPid(), now != old else { return false }
            return (try? run(["pactl", "info"], check: false).status) == 0
                && ((try? run(["pactl", "list", "short", "sinks"]).stdout.isEmpty) == false)
        }
        if !back { throw TestFailure("the sound server did not come back after pid \(old) ended") }
    }

    static var journalDirectory: String {
        (ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"] ?? "/tmp") + "/duckprompt"
    }

    /// The queue's tickets now (`ticket-SEQ.json`, one per waiting or playing prompt).
    static func tickets() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: journalDirectory)) ?? [])
            .filter { $0.hasPrefix("ticket-") && $0.hasSuffix(".json") }
    }

    static func journals() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: journalDirectory)) ?? [])
            .filter { $0.hasPrefix("journal-") && $0.hasSuffix(".json") }
    }

    /// A music player on the default sink whose stream gets the volume the server saved for
    /// its role and application (no volume of its own), as a player started after a restart;
    /// returned once its volume (pactl) is what `settled` expects, or after 5 s with the volume
    /// it has then: PulseAudio's module-stream-restore sets it as the stream is made,
    /// WirePlumber's restore a little after the stream appears.
    static func freshPlayer(_ rig: Rig, app: String, role: String,
                            settled: ([Int]) -> Bool) throws -> (player: Background, volume: [Int]?) {
        let file = try TestAudio.sine("tone-300-2ch.wav", hertz: 300, seconds: 60, gain: 0.3, channels: 2)
        let player = try Background(["paplay", "--latency-msec=100", "--client-name=\(app)",
                                     "--property=application.name=\(app)", "--property=media.role=\(role)", file])
        rig.players.append(player)
        guard try eventually({ try Pactl.volume(ofApp: app) != nil }) else { throw TestFailure("\(app) did not start") }
        _ = try eventually { try Pactl.volume(ofApp: app).map(settled) == true }
        return (player, try Pactl.volume(ofApp: app))
    }

    @Test("The server killed mid-prompt: exit 69 at once, the journal kept; after the restart, restore brings the role's volume back")
    func serverKilledMidPrompt() throws {
        let (rig, speaker) = try Rig.defaultSpeaker()
        let app = "killed-\(rig.tag)", role = "music\(rig.tag)"
        let original = 45000
        let music = try rig.player(sink: speaker, app: app, role: role, volume: original)
        let prompt = try Background([duckpromptBinary, "play", try DuckIntegrationTests.prompt(seconds: 3)],
                                    captureStderr: true)
        try DuckIntegrationTests.waitDucked(app, from: [original, original])
        let server = try Self.pulseServerPid()
        let killed = Date()
        kill(server, SIGKILL)
        let status = prompt.wait(timeout: timeLimit(6))
        let seconds = Date().timeIntervalSince(killed)
        let stderr = String(decoding: prompt.bytes, as: UTF8.self)
        #expect(status == 69, "exit \(String(describing: status)): \(stderr)")
        // Under ThreadSanitizer every exit takes 1 s more (its atexit_sleep_ms): timeLimit.
        #expect(seconds < timeLimit(1.0), "took \(seconds) s to notice the server died")
        #expect(stderr.contains("journaled in"), "\(stderr)")
        #expect(!Self.journals().isEmpty, "the journal was removed although nothing was restored")
        music.stop()

        try Self.waitServerBack(after: server)
        // Before anything repairs it, a new stream of the role starts ducked: the server saved
        // the ducked volume (this is what the journal is for).
        let (early, started) = try Self.freshPlayer(rig, app: app, role: role) { $0.allSatisfy { $0 < original / 2 } }
        let ducked = try #require(started)
        #expect(ducked.allSatisfy { $0 < original / 2 }, "a new stream started at \(ducked): the server did not save the duck?")

        let restore = try run([duckpromptBinary, "restore"], check: false)
        #expect(restore.status == 0, "restore: \(restore.status) \(restore.stdout) \(restore.stderr)")
        #expect(restore.stdout.contains("restored 1 stream volume"), "\(restore.stdout)")
        let back = try Pactl.volume(ofApp: app)
        #expect(back == [original, original], "the stream that started ducked is at \(back ?? []), not back")
        #expect(Self.journals().isEmpty, "the journal was kept after a full restore: \(Self.journals())")
        early.stop()
        _ = try eventually { try Pactl.volume(ofApp: app) == nil }

        // The next stream of that role starts at the original volume.
        let next = try Self.freshPlayer(rig, app: app, role: role) { $0 == [original, original] }.volume
        #expect(next == [original, original], "the next stream of the role starts at \(next ?? [])")
    }

    @Test("The server stalled mid-prompt: exit 69 at the stated timeout, the journal kept, restore exact once it answers")
    func serverStalledMidPrompt() throws {
        let (rig, speaker) = try Rig.defaultSpeaker()
        let app = "stalled-\(rig.tag)", role = "music\(rig.tag)"
        try rig.player(sink: speaker, app: app, role: role, volume: 45000)
        let index = try #require(try Pactl.index(ofApp: app))
        try Pactl.call("set-sink-input-volume", "\(index)", "45000", "52000")
        let original = try #require(try Pactl.volume(ofApp: app))
        #expect(original == [45000, 52000])
        // Restore now finds nothing, and says so (exit 0).
        let nothing = try run([duckpromptBinary, "restore"], check: false)
        #expect(nothing.status == 0 && nothing.stdout.hasPrefix("nothing to restore"), "\(nothing.stdout)")

        let prompt = try Background([duckpromptBinary, "play", "--timeout", "3s",
                                     try DuckIntegrationTests.prompt(seconds: 3)], captureStderr: true)
        try DuckIntegrationTests.waitDucked(app, from: original)
        let server = try Self.pulseServerPid()
        kill(server, SIGSTOP)
        let stopped = Date()
        defer { kill(server, SIGCONT) }
        let status = prompt.wait(timeout: 15)
        let seconds = Date().timeIntervalSince(stopped)
        let stderr = String(decoding: prompt.bytes, as: UTF8.self)
        #expect(status == 69, "exit \(String(describing: status)): \(stderr)")
        #expect(stderr.contains("did not answer within 3.0 s"), "\(stderr)")
        #expect(seconds >= 3.0 && seconds < 3.0 + timeLimit(1.0), "exit \(seconds) s after the server stopped; it says 3.0 s")
        #expect(!Self.journals().isEmpty, "no journal kept")

        // While the server is stopped, restore cannot reach it: exit 69, the journal kept.
        let unreachable = try run([duckpromptBinary, "restore", "--timeout", "1s"], check: false)
        #expect(unreachable.status == 69, "restore with the server stopped: \(unreachable.status) \(unreachable.stdout)")
        #expect(unreachable.stderr.contains("could not restore 1 journal"), "\(unreachable.stderr)")
        #expect(!Self.journals().isEmpty)

        // 20 s of stall in all, then the server goes on. (The scenario's length, not a wait for an event.)
        Thread.sleep(forTimeInterval: max(0, 20 - Date().timeIntervalSince(stopped)))
        kill(server, SIGCONT)
        #expect(eventually(timeout: 5) { (try? run(["pactl", "info"], check: false).status) == 0 })
        let restore = try run([duckpromptBinary, "restore"], check: false)
        #expect(restore.status == 0, "restore: \(restore.status) \(restore.stdout) \(restore.stderr)")
        let after = try Pactl.volume(ofApp: app)
        #expect(after == original, "\(after ?? []) after restore, not \(original)")
        #expect(Self.journals().isEmpty, "the journal was kept after a full restore")
    }

    enum Phase: String, CaseIterable, CustomStringConvertible {
        case attack, release
        var description: String { rawValue }
    }

    @Test("A user's change at random points of the attack and of the release: every change duckprompt sees is kept, never off by one",
          arguments: Phase.allCases)
    func userChangeDuringRamp(_ phase: Phase) throws {
        let (rig, speaker) = try Rig.defaultSpeaker()
        let app = "ramp-\(phase)-\(rig.tag)"
        try rig.player(sink: speaker, app: app, role: "music\(rig.tag)", volume: 45000)
        let index = try #require(try Pactl.index(ofApp: app))
        let original = [45000, 52000], user = [30000, 20000]
        let prompt = try DuckIntegrationTests.prompt(seconds: 0.3)
        // One run watched with pactl (a read at each change it reports) finds when the attack
        // and the release begin after launch; the rounds then only sleep: a pactl client every
        // few ms keeps pipewire-pulse and WirePlumber busy and stretches the time a volume write
        // takes to land.
        try Pactl.call("set-sink-input-volume", "\(index)", "\(original[0])", "\(original[1])")
        var timing = try Self.rampTimes(prompt: prompt, rig: rig, index: index, app: app, original: original[0])
        let watched = timing
        var generator = SystemRandomNumberGenerator()
        var failures: [String] = []
        var unseen: [String] = []
        var inRamp = 0
        for round in 1...20 {
            try Pactl.call("set-sink-input-volume", "\(index)", "\(original[0])", "\(original[1])")
            guard try eventually({ try Pactl.volume(ofApp: app) == original }) else {
                throw TestFailure("round \(round): the original volume did not take")
            }
            let launched = Date()
            let launchedEpoch = launched.timeIntervalSince1970
            // DUCKPROMPT_DEBUG: its trace shows every sink-input info it received.
            let run = try Background([duckpromptBinary, "play", prompt], environment: ["DUCKPROMPT_DEBUG": "1"],
                                     captureStderr: true)
            // A random point of the ramp (the attack takes 200 ms, the release 500 ms): the
            // moment the scenario makes the user's change at, not a wait for an event.
            let at = phase == .attack ? timing.attack + Double.random(in: 0...0.18, using: &generator)
                                      : timing.release + Double.random(in: 0...0.45, using: &generator)
            Thread.sleep(forTimeInterval: max(0, at - Date().timeIntervalSince(launched)))
            try Pactl.call("set-sink-input-volume", "\(index)", "\(user[0])", "\(user[1])")
            let status = run.wait(timeout: timeLimit(10))
            let trace = String(decoding: run.bytes, as: UTF8.self)
            #expect(status == 0, "round \(round): exit \(String(describing: status)) \(trace.suffix(2000))")
            // The next round aims by this run's own ramps (a start takes longer as the
            // server's state grows).
            if let seen = Self.rampTimes(in: trace, of: index, launched: launchedEpoch) { timing = seen }
            let final = try #require(try Pactl.volume(ofApp: app))
            // The change is the stream's own volume from then on, divided by the gain the duck
            // had at that moment (0 to -20 dB): never the original, each channel at least the
            // user's, at most 20.5 dB over it (x 2.2 in pa_volume_t, which is cubic), and the
            // two channels in the user's proportion.
            let ratio = Double(final[0]) / Double(final[1])
            let kept = final != original
                && zip(final, user).allSatisfy { $0 >= $1 && Double($0) <= Double($1) * 2.2 }
                && abs(ratio - Double(user[0]) / Double(user[1])) < 0.01
            if !kept {
                // Seen by duckprompt (an info with the user's value) and still lost: a bug.
                // Never seen: the server applied it and one of our writes right after, and
                // reported only ours (pipewire-pulse applies volumes asynchronously and merges
                // the change events): nothing a client can see.
                if Self.saw(user, of: index, in: trace) {
                    failures.append("round \(round): \(final)")
                } else {
                    unseen.append("round \(round)")
                }
            }
            // Not the user's value itself: the change was made while the duck had a gain.
            if final != user { inRamp += 1 }
        }
        print("[\(TestServer.kind)] \(phase): \(inRamp) of 20 changes inside the ramp, \(unseen.count) unseen, \(failures.count) lost "
              + "(the watched run: attack at \(watched.attack) s, release at \(watched.release) s; the last run's trace: \(timing))")
        #expect(inRamp >= 10, "\(phase): only \(inRamp) of 20 changes fell inside the ramp (timing \(timing))")
        #expect(failures.isEmpty, "\(phase): the user's change \(user) was seen and not kept (original \(original)): \(failures)")
        // PulseAudio applies a volume as it reads the request, and duckprompt reads each stream
        // just before writing it: a change the server takes between our read and our write is
        // overwritten unseen (PulseAudio has no compare-and-set for a volume, and merges the
        // two change events into one info that shows only ours). Under ThreadSanitizer, which
        // slows our two sends apart, 1 in 20 (stop 21's CI); in a plain build 1 in 20 once
        // (the release, CI at 478f8e4 with both cores busy). The seen-and-lost check above is
        // the one our own bugs fail. On PipeWire duckprompt follows each ducked stream's node,
        // which reports every volume it applies, in order (PipeWireWatch): none may go unseen
        // (through libpulse alone, 1-2 in 20 did).
        let allowed = TestServer.kind == "pulseaudio" ? 2 : 0
        #expect(unseen.count <= allowed, "\(phase): \(unseen.count) changes never reached duckprompt: \(unseen)")
    }

    /// Whether a `DUCKPROMPT_DEBUG` trace shows an info of sink-input `index` at `volume`
    /// (within one step per channel), or its PipeWire node reporting it (`node N of index …`).
    static func saw(_ volume: [Int], of index: Int, in trace: String) -> Bool {
        trace.split(separator: "\n").contains { line in
            guard let range = line.range(of: ": info \(index) ")
                    ?? line.range(of: #" of \#(index) "#).flatMap({ line.contains(": node ") ? $0 : nil }) else { return false }
            let values = line[range.upperBound...].split(separator: ",").compactMap { Int($0) }
            return values.count == volume.count && zip(values, volume).allSatisfy { abs($0 - $1) <= 1 }
        }
    }

    /// When the attack and the release began, in seconds after `launched` (seconds since the
    /// Unix epoch), read off a `DUCKPROMPT_DEBUG` trace: the first `setVolume` of sink-input
    /// `index`, and the first one after a pause of over 150 ms (the prompt playing).
    static func rampTimes(in trace: String, of index: Int, launched: Double) -> (attack: Double, release: Double)? {
        let writes = trace.split(separator: "\n").compactMap { line -> Double? in
            guard line.hasPrefix("duckprompt[debug] "), line.contains(": setVolume \(index) ") else { return nil }
            let stamp = line.dropFirst("duckprompt[debug] ".count).prefix { $0 != ":" }
            return Double(stamp).map { $0 / 1_000_000 - launched }
        }
        guard let attack = writes.first,
              let pause = zip(writes, writes.dropFirst()).first(where: { $1 - $0 > 0.15 }) else { return nil }
        return (attack, pause.1)
    }

    /// When the attack and the release of a prompt begin, in seconds after its launch, read
    /// off one run of it: the volume of sink-input `index` (`app`'s) read at each change
    /// `pactl subscribe` showed of it (`VolumeEvents`), the time its event came.
    static func rampTimes(prompt: String, rig: Rig, index: Int, app: String,
                          original: Int) throws -> (attack: Double, release: Double) {
        let watch = try VolumeEvents(rig: rig, sinkInput: index) { try Pactl.volume(ofApp: app) }
        let launched = Date()
        let run = try Background([duckpromptBinary, "play", prompt], captureStderr: true)
        _ = run.wait(timeout: timeLimit(10))
        let readings = try watch.readings()
        var attack: Double? = nil, release: Double? = nil
        var lowest = original
        for reading in readings where release == nil {
            guard let now = reading.volume?.first else { continue }
            let t = reading.at.timeIntervalSince(launched)
            if attack == nil, now < original { attack = t }
            if now < lowest { lowest = now } else if now > lowest + 200 && lowest < original / 2 { release = t }
        }
        guard let attack, let release else {
            throw TestFailure("no attack or release seen in a watched run: \(readings)")
        }
        return (attack, release)
    }

    @Test("Three prompts queued at once play one after another, and the music stays ducked between them; exact after the last")
    func queuedPromptsKeepTheDuck() throws {
        try TestServer.requireServer()
        let rig = Rig()
        let speaker = try rig.speaker()
        let bt = try rig.bluetooth()
        try Pactl.call("set-default-sink", speaker)
        _ = bt
        let app = "queued-music-\(rig.tag)"
        try rig.player(sink: speaker, app: app, role: "music\(rig.tag)", volume: 50000)
        let before = try #require(try Pactl.volume(ofApp: app))
        let recorder = try MonitorRecorder(sink: speaker)
        try recorder.waitForAudio(seconds: 1.0)
        let prompt = try DuckIntegrationTests.prompt(seconds: 0.6)
        var runs: [Background] = []
        var tickets: Set<String> = []
        for n in 1...3 {
            runs.append(try Background([duckpromptBinary, "play", prompt], captureStderr: true))
            // In the queue before the next starts, so they play in this order: its ticket was
            // there (an earlier one may have left since).
            #expect(eventually(timeout: timeLimit(5)) {
                tickets.formUnion(Self.tickets())
                return tickets.count >= n
            }, "prompt \(n) never entered the queue")
        }
        for (i, r) in runs.enumerated() {
            let status = r.wait(timeout: timeLimit(15))
            #expect(status == 0, "prompt \(i + 1): exit \(String(describing: status)) \(String(decoding: r.bytes, as: UTF8.self))")
        }
        try recorder.waitForMoreAudio(seconds: 1.0)
        let samples = recorder.stop()
        let after = try Pactl.volume(ofApp: app)
        #expect(after == before, "\(after ?? []) after the last prompt, not \(before)")

        let levels = Levels.tone(samples, hertz: Double(PlayIntegrationTests.musicHz))
        let playing = levels.indices.filter { levels[$0] > -100 }
        let first = try #require(playing.first, "no music on the monitor")
        let full = Levels.median(levels[first..<min(levels.count, first + 50)])
        // The duck: from the first window 10 dB down to the last one, found on the levels
        // median-filtered over 210 ms so that an underrun of up to 100 ms (the monitor of a
        // loaded machine drops out just after the music starts) is not taken for it.
        let smooth = Levels.medianFiltered(levels, span: 21)
        let down = levels.indices.filter { $0 > first && smooth[$0] < full - 10 && smooth[$0] > -150 }
        let start = try #require(down.first, "the music was not ducked")
        let end = try #require(down.last)
        // Three 0.6 s prompts, one after another: the duck lasts at least 1.8 s.
        #expect(Double(end - start) / 100 >= 1.8, "ducked for \(Double(end - start) / 100) s only")
        let peak = levels[start...end].max() ?? full
        // When it fails, what each prompt said (with DUCKPROMPT_DEBUG set, its trace).
        let said = runs.enumerated().map { "prompt \($0 + 1): \(String(decoding: $1.bytes, as: UTF8.self))" }
        #expect(peak < full - 3, """
            the music came back to \(peak - full) dB of full between the prompts, \
            at window \(levels[start...end].firstIndex(of: peak) ?? -1) (ducked \(start)-\(end))
            \(said.joined(separator: "\n"))
            """)
    }
}
