import DuckPromptTestSupport
import Foundation
import DuckPromptProbe
import Testing

/// kill -9 mid-prompt (the journal), and many prompts at once (the lock).
@Suite(.serialized)
struct CrashAndConcurrencyTests {

    @Test("kill -9 mid-prompt, then duckprompt devices: every volume is back, and a new stream of the app starts at the original")
    func killNine() throws {
        let (rig, speaker) = try Rig.defaultSpeaker()
        let app = "crash-\(rig.tag)"
        let role = "music\(rig.tag)"
        let player = try rig.player(sink: speaker, app: app, role: role, volume: 50000)
        let original = try #require(try Pactl.volume(ofApp: app))

        let prompt = try Background([duckpromptBinary, "play", try DuckIntegrationTests.prompt(seconds: 3)],
                                    environment: ["DUCKPROMPT_DEBUG": "1"], captureStderr: true)
        try DuckIntegrationTests.waitDucked(app, from: original)
        // Past the attack: the prompt holds the duck while it plays (its trace says so).
        #expect(prompt.waitForOutput(containing: "prompt: hold(", timeout: timeLimit(3)), "the prompt never played")
        kill(prompt.process.processIdentifier, SIGKILL)
        // nil: still running after 5 s (then killed by `wait`): the first kill did not take.
        let status = prompt.wait(timeout: 5)
        #expect(status == SIGKILL && prompt.process.terminationReason == .uncaughtSignal,
                "the prompt did not die of SIGKILL within 5 s: status \(String(describing: status)), reason \(prompt.process.terminationReason.rawValue)")
        let left = try #require(try Pactl.volume(ofApp: app))
        #expect(left != original, "the kill left the music ducked (as it must, to test recovery)")

        let devices = try run([duckpromptBinary, "devices"], check: false)
        #expect(devices.status == 0, "\(devices.stderr)")
        #expect(devices.stderr.contains("restored 1 stream volume"), "stderr: \(devices.stderr)")
        #expect(try Pactl.volume(ofApp: app) == original, "not restored after the crash")

        // The saved volume too: the next stream of the app starts at the original.
        player.stop()
        #expect(try eventually { try Pactl.volume(ofApp: app) == nil })
        try rig.player(sink: speaker, app: app, role: role, volume: nil)
        #expect(try Pactl.volume(ofApp: app) == original, "the next stream starts ducked")

        let again = try run([duckpromptBinary, "restore"])
        #expect(again.stdout.hasPrefix("nothing to restore"), "the journal is gone: \(again.stdout)")
    }

    @Test("Ten duckprompt play at once: one after another, never overlapping, every volume exact")
    func tenAtOnce() throws {
        try TestServer.requireServer()
        let rig = Rig()
        let speaker = try rig.speaker()
        let bt = try rig.bluetooth()
        try Pactl.call("set-default-sink", speaker)
        let app = "many-\(rig.tag)"
        try rig.player(sink: speaker, app: app, role: "music\(rig.tag)", volume: 48000)
        let original = try #require(try Pactl.volume(ofApp: app))
        let recorder = try MonitorRecorder(sink: bt)
        // A quiet bed on the Bluetooth sink keeps its monitor delivering on PulseAudio.
        try rig.player(sink: bt, app: "bed-\(rig.tag)", role: "event", volume: 12000, hertz: 2000)
        try recorder.waitForAudio(seconds: 1.0)

        let prompt = try DuckIntegrationTests.prompt(seconds: 0.4)
        let prompts = try (0..<10).map { _ in try Background([duckpromptBinary, "play", prompt]) }
        let statuses = prompts.map { $0.wait(timeout: 60) }
        #expect(statuses.allSatisfy { $0 == 0 }, "exit statuses \(statuses)")
        try recorder.waitForMoreAudio(seconds: 1.0)
        let holes = recorder.holes
        let samples = recorder.stop()
        #expect(try Pactl.volume(ofApp: app) == original, "music volume not exact after ten prompts")

        // Each prompt is a 1 kHz burst of 40 windows at the same level; an overlap would be up
        // to 6 dB louder, and bursts would merge (fewer than ten).
        let levels = Levels.tone(samples, hertz: 1000)
        let single = try #require(levels.max())
        // A gap of up to 10 windows (100 ms: an underrun of the prompt's 220 ms buffer, seen
        // under ThreadSanitizer) between two runs of tone that together are shorter than two
        // prompts (2 × 38 windows) is a dropout inside one prompt, not a new one: two whole
        // prompts are never merged this way, and the dropout may fall anywhere in a prompt,
        // also after its 38th window.
        var runs: [(gapBefore: Int, length: Int)] = []   // runs of loud windows, in order
        var quiet = Int.max                                 // quiet windows since the last loud one
        for level in levels {
            if level > single - 10 {
                if quiet == 0 { runs[runs.count - 1].length += 1 } else { runs.append((quiet, 1)) }
                quiet = 0
            } else if quiet != .max {
                quiet += 1
            }
        }
        let loud = runs.reduce(0) { $0 + $1.length }
        var lengths: [Int] = [], dropouts = 0
        var dropoutsAt: [String] = []   // "burst:window into it (gap in windows)"
        for run in runs {
            if let last = lengths.last, run.gapBefore <= 10, last + run.length < 2 * 38 {
                dropoutsAt.append("\(lengths.count):\(last) (\(run.gapBefore))")
                lengths[lengths.count - 1] += run.length
                dropouts += 1
            } else {
                lengths.append(run.length)
            }
        }
        let bursts = lengths.count
        print("[\(TestServer.kind)] ten prompts: \(bursts) bursts, \(dropouts) dropouts \(dropoutsAt), \(holes) holes in the recording, \(loud) loud windows, peak \(single) dB")
        #expect(bursts == 10, "expected ten separate prompts, heard \(bursts)")
        // A dropout is heard, but on a 2-core VM the 10 ms monitor recording itself drops a
        // window now and then (measured on PipeWire, music on the sink and nothing else: 0-2
        // dropped windows in 3 s; beside a 10 ms paplay: 2-4 in 2.5 s): at most 5 of them,
        // any number under a sanitizer. A prompt stream that underran on each refill (every
        // 100 ms) would drop 40. The CI run of ec39088 heard one in each of the ten (not seen
        // in 6 runs here, 4 of them with both cores busy): at most one a prompt passes, and
        // where each was is printed.
        #expect(dropouts <= 10 || ProcessInfo.processInfo.environment["DUCKPROMPT_TEST_SANITIZER"] != nil,
                "\(dropouts) dropouts inside prompts: \(dropoutsAt)")
        // A dropout splits a window in two, each partly tone: up to 2 more loud windows.
        #expect(loud >= 10 * 38 && loud <= 10 * 42 + 2 * dropouts, "prompt windows \(loud), expected about 400")
        // Two prompts at once would sum: the loudest window well above the typical prompt level.
        let typical = Levels.median(levels.filter { $0 > single - 10 })
        #expect(single - typical < 1, "some prompts overlapped: peak \(single) dB, typical \(typical) dB")
    }
}

extension CrashAndConcurrencyTests {
    @Test("A Bluetooth headset that connects while a prompt waits its turn is used for that prompt")
    func queuedPromptFollowsNewDevice() throws {
        let (rig, _) = try Rig.defaultSpeaker()
        let first = try Background([duckpromptBinary, "play", try DuckIntegrationTests.prompt(seconds: 2)],
                                   environment: ["DUCKPROMPT_DEBUG": "1"], captureStderr: true)
        #expect(first.waitForOutput(containing: "prompt: hold(", timeout: timeLimit(3)), "the first prompt never played")
        let queued = try Background([duckpromptBinary, "play", "--verbose", try DuckIntegrationTests.prompt(seconds: 0.4)],
                                    environment: ["DUCKPROMPT_DEBUG": "1"], captureStderr: true)
        // In the queue behind the 2 s prompt: it waits for its turn and has not routed.
        #expect(queued.waitForOutput(containing: "prompt: waitTurn", timeout: timeLimit(3)), "the second prompt never queued")
        let early = String(decoding: queued.bytes, as: UTF8.self)
        #expect(queued.process.isRunning && !early.contains("prompt: route"), "the second prompt did not wait for the first: \(early)")
        let bt = try rig.bluetooth()   // the headset connects while the second prompt waits
        #expect(first.wait(timeout: 10) == 0)
        #expect(queued.wait(timeout: 10) == 0)
        let report = String(decoding: queued.bytes, as: UTF8.self)
        #expect(report.contains("frames on \(bt):"), "the queued prompt did not use the new headset: \(report)")
    }
}

extension CrashAndConcurrencyTests {
    @Test("A default filter sink in front of the speaker: the prompt goes through it, and its own stream is not ducked")
    func throughVirtualSinkNotDuckedByItsOwnDuck() throws {
        try TestServer.requireServer()
        let rig = Rig()
        let speaker = try rig.speaker()
        let fx = "dp_fx_\(rig.tag)"
        rig.modules.append(try run(["pactl", "load-module", "module-remap-sink", "sink_name=\(fx)", "master=\(speaker)",
                                    "sink_properties=device.description=FX"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(try eventually { try run(["pactl", "list", "short", "sinks"]).stdout.contains(fx) })
        try Pactl.call("set-default-sink", fx)
        let app = "fxmusic-\(rig.tag)"
        try rig.player(sink: speaker, app: app, role: "music\(rig.tag)", volume: 50000)
        let original = try #require(try Pactl.volume(ofApp: app))

        let route = try run([duckpromptBinary, "route"]).stdout
        #expect(route.hasPrefix(fx + "\t"), "the prompt goes through the default filter: \(route)")
        #expect(route.contains("default-forwarding"), "\(route)")
        let json = try run([duckpromptBinary, "devices", "--json"]).stdout
        #expect(json.contains("\"forwards_to_sink\" : \"\(speaker)\""), "fx forwards to the speaker")

        let recorder = try MonitorRecorder(sink: speaker)
        try recorder.waitForAudio(seconds: 1.0)
        let result = try run([duckpromptBinary, "play", try PlayIntegrationTests.prompt()], check: false)
        #expect(result.status == 0, "\(result.stderr)")
        try recorder.waitForMoreAudio(seconds: 1.0)
        let samples = recorder.stop()
        #expect(try Pactl.volume(ofApp: app) == original)

        // The prompt (0.5 full scale, -6 dBFS) reaches the speaker through the filter's stream at
        // its own level; had that stream been ducked, it would be near -26 dBFS.
        let prompt = Levels.tone(samples, hertz: Double(PlayIntegrationTests.promptHz))
        let peak = try #require(prompt.max())
        print("[\(TestServer.kind)] prompt through the filter: \(peak) dBFS")
        #expect(peak > -12, "the filter's own stream was ducked: prompt at \(peak) dBFS")
        let depth = try PlayIntegrationTests.duckDepth(samples)
        #expect(abs((depth.before - depth.ducked) - 20) <= 1, "music ducked \(depth.before - depth.ducked) dB")
    }
}

extension CrashAndConcurrencyTests {
    @Test("Behind a 3 s prompt: --expire-ms 1000 is dropped with 75 after about 1 s, --on-busy drop at once")
    func expiryAndBusyDrop() throws {
        let (rig, _) = try Rig.defaultSpeaker()
        defer { withExtendedLifetime(rig) {} }
        let long = try Background([duckpromptBinary, "play", try DuckIntegrationTests.prompt(seconds: 3)],
                                  environment: ["DUCKPROMPT_DEBUG": "1"], captureStderr: true)
        #expect(long.waitForOutput(containing: "prompt: hold(", timeout: timeLimit(3)), "the 3 s prompt never played")
        let short = try DuckIntegrationTests.prompt(seconds: 0.4)
        let expired = try run([duckpromptBinary, "play", "--expire-ms", "1000", short], check: false)
        #expect(expired.status == 75, "\(expired.stderr)")
        #expect(expired.seconds >= 0.9 && expired.seconds < timeLimit(2), "dropped after \(expired.seconds) s")
        #expect(expired.stderr.hasPrefix("duckprompt: prompt dropped: not started within 1000 ms"), "\(expired.stderr)")
        let busy = try run([duckpromptBinary, "play", "--on-busy", "drop", short], check: false)
        #expect(busy.status == 75, "\(busy.stderr)")
        #expect(busy.seconds < timeLimit(0.5), "busy drop took \(busy.seconds) s")
        #expect(long.wait(timeout: 10) == 0)
    }
}
