import DuckPromptTestSupport
import Foundation
import DuckPromptProbe
import Testing

/// End-to-end prompts on the private server that `duckprompt lab` started (PipeWire or
/// PulseAudio), judged by recording sink monitors. Serialized: they share one server.
@Suite(.serialized)
struct PlayIntegrationTests {
    static let musicHz = Rig.musicHz
    static let promptHz = 1000
    static let promptSeconds = 1.5

    static func prompt() throws -> String {
        try TestAudio.sine("prompt-\(promptHz).wav", hertz: promptHz, seconds: promptSeconds, gain: 0.5, channels: 1)
    }

    /// Windows in which the prompt tone is present on a monitor recording.
    static func promptWindows(_ samples: [Float]) -> (first: Int, last: Int, count: Int)? {
        Levels.span(Levels.tone(samples, hertz: Double(promptHz)), above: -30)
    }

    /// The music's level before, while and after the duck, from one recording.
    static func duckDepth(_ samples: [Float]) throws -> (before: Double, ducked: Double, after: Double) {
        let levels = Levels.medianFiltered(Levels.tone(samples, hertz: Double(musicHz)))
        let playing = levels.indices.filter { levels[$0] > -100 }
        guard let firstPlaying = playing.first else { throw TestFailure("no music on the monitor") }
        let reference = Levels.median(levels[firstPlaying..<min(levels.count, firstPlaying + 30)])
        let isLow = { (i: Int) in levels[i] < reference - 10 && levels[i] > -150 }
        // The ducked stretch: the longest run of low windows, a run ending where the music stays
        // up for 20 windows. A dropout before the attack or after the restore (the two labs
        // share two cores; three windows 20 dB down in one ThreadSanitizer run) is not the duck.
        var longest: (first: Int, last: Int)?
        var current: (first: Int, last: Int)?
        for i in levels.indices where i > firstPlaying && isLow(i) {
            if let run = current, i - run.last <= 20 { current = (run.first, i) } else { current = (i, i) }
            if let run = current, run.last - run.first > longest.map({ $0.last - $0.first }) ?? -1 { longest = run }
        }
        guard let lowFirst = longest?.first, let lowLast = longest?.last, lowLast - lowFirst > 50 else {
            throw TestFailure("the music was not ducked: reference \(reference) dB, levels \(levels.map { Int($0) })")
        }
        // Before: the 20 windows before the attack began, where the music first fell 0.05 dB
        // under its reference (less 3 windows), not a fixed time before it was 10 dB down: a
        // slow attack (the ramp's steps late under ThreadSanitizer) began more than 300 ms
        // earlier, and its first steps made "before" 0.245 dB low.
        let attack = levels.indices.first { $0 > firstPlaying + 3 && $0 <= lowFirst && levels[$0] < reference - 0.05 } ?? lowFirst
        let before = Levels.median(levels[firstPlaying..<max(firstPlaying + 1, attack - 3)].suffix(20))
        let middle = (lowFirst + (lowLast - lowFirst) / 4)...(lowLast - (lowLast - lowFirst) / 4)
        let ducked = Levels.median(levels[middle])
        let afterStart = lowLast + 80
        guard afterStart + 20 < levels.count else { throw TestFailure("recording ended too soon after the duck") }
        let after = Levels.median(levels[afterStart...])
        return (before, ducked, after)
    }

    @Test("Bluetooth A2DP + default speaker with music: prompt on Bluetooth, music ducked 20 dB and restored")
    func bluetoothTakesThePrompt() throws {
        try TestServer.requireServer()
        let rig = Rig()
        let speaker = try rig.speaker()
        let bt = try rig.bluetooth()
        try Pactl.call("set-default-sink", speaker)
        let app = "dpmusic-\(rig.tag)"
        try rig.music(on: speaker, app: app)
        let volumeBefore = try Pactl.volume(ofApp: app)

        let speakerRec = try MonitorRecorder(sink: speaker)
        let btRec = try MonitorRecorder(sink: bt)
        // 1.5 s of the music recorded before the prompt (its level before the duck).
        try speakerRec.waitForAudio(seconds: 1.5)
        let result = try run([duckpromptBinary, "play", try Self.prompt()], check: false)
        #expect(result.status == 0, "duckprompt play: \(result.stderr)")
        try speakerRec.waitForMoreAudio(seconds: 2.0)
        let speakerSamples = speakerRec.stop()
        let btSamples = btRec.stop()

        let promptOnBT = try #require(Self.promptWindows(btSamples), "the prompt is not on the Bluetooth monitor")
        let expectedWindows = Int(Self.promptSeconds * 100)
        #expect(promptOnBT.count >= expectedWindows - 3, "prompt on Bluetooth: \(promptOnBT.count) of \(expectedWindows) windows")
        #expect(promptOnBT.last - promptOnBT.first <= expectedWindows + 5, "prompt stretched or split: \(promptOnBT)")
        #expect(Self.promptWindows(speakerSamples) == nil, "the prompt leaked onto the speaker")

        let depth = try Self.duckDepth(speakerSamples)
        print("[\(TestServer.kind)] music before \(depth.before) dB, ducked \(depth.ducked) dB, after \(depth.after) dB")
        #expect(abs((depth.before - depth.ducked) - 20) <= 1, "duck depth \(depth.before - depth.ducked) dB")
        #expect(abs(depth.after - depth.before) <= 0.1, "music after \(depth.after) dB vs before \(depth.before) dB; levels \(Levels.tone(speakerSamples, hertz: Double(Self.musicHz)).map { ($0 * 10).rounded() / 10 })")
        #expect(try Pactl.volume(ofApp: app) == volumeBefore, "pa_cvolume not restored exactly")

        // The ramp is smooth: the music (300 Hz: three whole periods per 10 ms window) never
        // jumps by more than `rampStepLimit` (Support.swift) from one 10 ms window to the next.
        // The first windows of a recording can be partial: skip three, and the last two.
        let rms = Array(Levels.rms(speakerSamples).drop { $0 < -100 }.dropFirst(3).dropLast(2))
        let step = Levels.largestStep(rms)
        #expect(step.dB <= rampStepLimit, "largest 10 ms step: \(step.detail)")
    }

    @Test("Speaker + bare null sink as default: prompt on the speaker, music under it ducked")
    func nullSinkIsNeverChosen() throws {
        try TestServer.requireServer()
        let rig = Rig()
        let speaker = try rig.speaker()
        let null = try rig.bareNullSink()
        try Pactl.call("set-default-sink", null)
        let app = "dpmusic-\(rig.tag)"
        try rig.music(on: speaker, app: app, volume: "80%")
        let volumeBefore = try Pactl.volume(ofApp: app)

        let route = try run([duckpromptBinary, "route"])
        #expect(route.stdout.hasPrefix(speaker + "\t"), "route: \(route.stdout)")

        let speakerRec = try MonitorRecorder(sink: speaker)
        let nullRec = try MonitorRecorder(sink: null)
        // 1.5 s of the music recorded before the prompt (its level before the duck).
        try speakerRec.waitForAudio(seconds: 1.5)
        let result = try run([duckpromptBinary, "play", try Self.prompt()], check: false)
        #expect(result.status == 0, "duckprompt play: \(result.stderr)")
        try speakerRec.waitForMoreAudio(seconds: 2.0)
        let speakerSamples = speakerRec.stop()
        let nullSamples = nullRec.stop()

        let prompt = try #require(Self.promptWindows(speakerSamples), "the prompt is not on the speaker")
        #expect(prompt.count >= Int(Self.promptSeconds * 100) - 3)
        #expect(Self.promptWindows(nullSamples) == nil, "the prompt went into the null sink")
        let depth = try Self.duckDepth(speakerSamples)
        print("[\(TestServer.kind)] music before \(depth.before) dB, ducked \(depth.ducked) dB, after \(depth.after) dB")
        #expect(abs((depth.before - depth.ducked) - 20) <= 1, "duck depth \(depth.before - depth.ducked) dB")
        #expect(abs(depth.after - depth.before) <= 0.1)
        #expect(try Pactl.volume(ofApp: app) == volumeBefore)
    }
}
