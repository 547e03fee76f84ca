import Foundation
import Testing

/// One prompt of several files (gapless, under one duck) and a prompt from standard input.
@Suite(.serialized)
struct MultiPartTests {
    typealias Rig = PlayIntegrationTests.Rig

    @Test("play a.wav b.wav: both back to back (gap under 20 ms) under one continuous duck")
    func gapless() throws {
        try TestServer.requireServer()
        let rig = Rig()
        let speaker = try rig.speaker()
        let bt = try rig.bluetooth()
        try Pactl.call("set-default-sink", speaker)
        let app = "multi-\(rig.tag)"
        try DuckIntegrationTests.player(rig, sink: speaker, app: app, role: "music\(rig.tag)", volume: 50000)
        let a = try TestAudio.sine("part-a.wav", hertz: 1000, seconds: 0.6, gain: 0.5, channels: 1)
        let b = try TestAudio.sine("part-b.wav", hertz: 1500, seconds: 0.6, gain: 0.5, channels: 1)
        let speakerRec = try MonitorRecorder(sink: speaker)
        let btRec = try MonitorRecorder(sink: bt)
        try DuckIntegrationTests.player(rig, sink: bt, app: "bed-\(rig.tag)", role: "event", volume: 8000, hertz: 3000)
        try speakerRec.waitForAudio(seconds: 1.0)
        try btRec.waitForAudio(seconds: 1.0)
        let result = try run([duckpromptBinary, "play", a, b], check: false)
        #expect(result.status == 0, "\(result.stderr)")
        try speakerRec.waitForMoreAudio(seconds: 1.5)
        try btRec.waitForMoreAudio(seconds: 0.5)
        let speakerSamples = speakerRec.stop()
        let btSamples = btRec.stop()

        let first = Levels.tone(btSamples, hertz: 1000)
        let second = Levels.tone(btSamples, hertz: 1500)
        let aSpan = try #require(Levels.span(first, above: -20), "a.wav is not on the monitor")
        let bSpan = try #require(Levels.span(second, above: -20), "b.wav is not on the monitor")
        #expect(aSpan.count >= 58 && bSpan.count >= 58, "a \(aSpan.count), b \(bSpan.count) windows of 60")
        let gapWindows = bSpan.first - aSpan.last - 1
        print("[\(TestServer.kind)] a.wav ends at window \(aSpan.last), b.wav starts at \(bSpan.first)")
        #expect(gapWindows <= 1, "gap of \(gapWindows * 10) ms between the parts")
        #expect(bSpan.first > aSpan.last - 2, "the parts overlap")

        let depth = try PlayIntegrationTests.duckDepth(speakerSamples)
        #expect(abs((depth.before - depth.ducked) - 20) <= 1)
        // One duck: no window inside the ducked stretch comes back up between the parts.
        let music = Levels.tone(speakerSamples, hertz: 300)
        let low = music.indices.filter { music[$0] < depth.before - 10 && music[$0] > -150 }
        let inner = music[(low.first! + 25)...(low.last! - 25)]
        #expect((inner.max() ?? 0) < depth.ducked + 3, "the duck was released between the parts")
    }

    @Test("play - reads the prompt from standard input")
    func standardInput() throws {
        try TestServer.requireServer()
        let rig = Rig()
        let speaker = try rig.speaker()
        try Pactl.call("set-default-sink", speaker)
        let prompt = try PlayIntegrationTests.prompt()
        let result = try run(["sh", "-c", "\(duckpromptBinary) play --verbose - < \(prompt)"], check: false)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("played 72000 frames on \(speaker)"), "\(result.stderr)")
    }
}
