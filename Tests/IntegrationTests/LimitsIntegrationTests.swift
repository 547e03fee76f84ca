import DuckPromptTestSupport
import Foundation
import Testing

/// Hostile numbers and texts on a real server: refused with 64 before the server is contacted,
/// so no stream, no duck and no saved volume changes. And a long text, synthesized while it
/// plays, plays whole.
@Suite(.serialized)
struct LimitsIntegrationTests {

    /// A rig with an emulated speaker as the default sink.
    static func speakerRig() throws -> (Rig, String) {
        let (rig, speaker) = try Rig.defaultSpeaker()
        return (rig, speaker)
    }

    /// The prompts duckprompt has on the server now (sink-inputs carrying `duckprompt.prompt`).
    static func promptStreams() throws -> Int {
        try Pactl.sinkInputs().filter { ($0["properties"] as? [String: Any])?["duckprompt.prompt"] != nil }.count
    }

    @Test("--volume +300dB, hex, spaces, overflow and texts over 5000 characters: exit 64, one line, no volume changed")
    func refused() throws {
        let (rig, speaker) = try Self.speakerRig()
        // A quiet bed (3 kHz) that a duck would lower, and which keeps the monitor flowing, as
        // in VolumeIntegrationTests.
        let app = "dplimits-\(rig.tag)"
        try rig.player(sink: speaker, app: app, role: "music", volume: 8000, hertz: 3000)
        let musicBefore = try Pactl.volume(ofApp: app)
        let prompt = try TestAudio.sine("limits-prompt.wav", hertz: 1000, seconds: 0.8, channels: 1)
        // The saved prompt volume, heard: a prompt's level before and after the refused runs.
        let savedBefore = try VolumeIntegrationTests.recordPrompt(speaker, prompt, hertz: 1000)

        let long = String(repeating: "Turn left. ", count: 455)   // 5005 characters
        let refused: [[String]] = [
            ["play", "--volume", "+300dB", prompt], ["play", "--volume", "+20.5dB", prompt],
            ["play", "--volume", "300%", prompt], ["play", "--volume", "0x10", prompt],
            ["play", "--volume", " 10", prompt], ["play", "--volume", "999999999999999999999999", prompt],
            ["play", "--volume", "1e2dB", prompt], ["play", "--timeout", "0x10", prompt],
            ["play", "--timeout", " 10", prompt], ["play", "--timeout", "999999999999999999999999", prompt],
            ["play", "--duck", "-1e300dB", prompt], ["play", "--attack-ms", "0x10", prompt],
            ["play", "--release-ms", "1e3", prompt], ["play", "--latency-msec", "nan", prompt],
            ["say", "--volume", "+300dB", "Turn left"], ["say", "--rate", "0x10", "Turn left"],
            ["say", long], ["play", prompt, "--say", long],
        ]
        for arguments in refused {
            let result = try run([duckpromptBinary] + arguments, check: false)
            let shown = arguments.map { $0.count > 40 ? "<\($0.count) characters>" : $0 }
            #expect(result.status == 64, "\(shown): \(result.stderr)")
            #expect(result.stderr.hasPrefix("duckprompt: "), "\(shown): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n", omittingEmptySubsequences: false).count == 2,
                    "\(shown): one line: \(result.stderr)")
            #expect(result.seconds < timeLimit(1), "\(shown) took \(result.seconds) s")
            #expect(try Self.promptStreams() == 0, "\(shown) made a stream")
            #expect(try Pactl.volume(ofApp: app) == musicBefore, "\(shown) changed the music's volume")
        }
        let savedAfter = try VolumeIntegrationTests.recordPrompt(speaker, prompt, hertz: 1000)
        print("[\(TestServer.kind)] prompt at the saved volume: \(savedBefore) dB before the refused runs, \(savedAfter) dB after")
        #expect(abs(savedAfter - savedBefore) <= 0.2, "the saved prompt volume changed: \(savedBefore) → \(savedAfter) dB")
        #expect(try Pactl.volume(ofApp: app) == musicBefore)
    }

    @Test("--volume +20dB, the top of its range, is accepted and played 20 dB over the saved volume")
    func topOfRange() throws {
        let (rig, speaker) = try Self.speakerRig()
        try rig.player(sink: speaker, app: "lim-bed-\(rig.tag)", role: "event", volume: 8000, hertz: 3000)
        // A quiet prompt, so that +20 dB does not clip: -30 dBFS.
        let quiet = try TestAudio.sine("limits-quiet.wav", hertz: 1000, seconds: 0.8, gain: 0.0316, channels: 1)
        let saved = try VolumeIntegrationTests.recordPrompt(speaker, quiet, hertz: 1000)
        let louder = try VolumeIntegrationTests.recordPrompt(speaker, quiet, hertz: 1000, extra: ["--volume", "+20dB"])
        let after = try VolumeIntegrationTests.recordPrompt(speaker, quiet, hertz: 1000)
        print("[\(TestServer.kind)] quiet prompt \(saved) dB, with --volume +20dB \(louder) dB, then \(after) dB")
        #expect(abs((louder - saved) - 20) <= 0.5, "--volume +20dB played \(louder - saved) dB over the saved volume")
        #expect(abs(after - saved) <= 0.2, "the saved prompt volume changed: \(saved) → \(after) dB")
    }

    @Test("a text of several sentences, synthesized while it plays, plays whole: as many frames as espeak-ng makes of it")
    func longText() throws {
        let (rig, _) = try Self.speakerRig()
        defer { withExtendedLifetime(rig) {} }   // its speaker, the default sink, until the end
        // Over 160 characters: the first sentence is synthesized before the prompt starts, the
        // rest by the worker while it plays.
        let text = "In two hundred metres, turn left onto the motorway. Keep right at the fork and follow the signs "
            + "towards the city centre. At the roundabout take the second exit. Then continue straight on for three kilometres."
        #expect(text.count > 160)
        let result = try run([duckpromptBinary, "say", "--verbose", "--rate", "300", "--duck", "0dB", text], check: false)
        #expect(result.status == 0, "\(result.stderr)")
        let played = try #require(result.stderr.firstMatch(of: /played (\d+) frames/).flatMap { Int($0.1) }, "\(result.stderr)")
        // espeak-ng's own command, the whole text in one call, no final pause (-z), as duckprompt.
        let wav = TestAudio.directory.appendingPathComponent("limits-long.wav").path
        try run(["espeak-ng", "-z", "-s", "300", "-w", wav, text])
        let data = try Data(contentsOf: URL(fileURLWithPath: wav))
        let samples = data.dropFirst(44).withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        let first = try #require(samples.firstIndex { $0.magnitude > 33 })
        let whole = samples.count - max(0, first - 22)
        print("[\(TestServer.kind)] \(text.count) characters: played \(played) frames, espeak-ng in one call \(whole)")
        #expect(abs(Double(played - whole)) / Double(whole) < 0.02, "played \(played) frames, espeak-ng made \(whole)")
        #expect(result.seconds < Double(whole) / 22050 + timeLimit(3), "took \(result.seconds) s")
    }
}
