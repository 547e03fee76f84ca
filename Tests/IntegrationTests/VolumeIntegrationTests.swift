import Foundation
import DuckPromptProbe
import Testing

/// `--volume` is relative to the volume the server saved for `media.role=navigation` (the
/// user's setting for prompts), and leaves that saved volume as it was — also when the prompt
/// is killed.
@Suite(.serialized)
struct VolumeIntegrationTests {
    typealias Rig = PlayIntegrationTests.Rig

    /// The prompt tone's median level (dB) on the recording, over the windows it is heard in.
    static func level(_ samples: [Float], hertz: Double) throws -> Double {
        let levels = Levels.tone(samples, hertz: hertz)
        let span = try #require(Levels.span(levels, above: -60), "no \(hertz) Hz prompt on the monitor")
        return Levels.median(levels[span.first...span.last])
    }

    /// Plays `file` (with `extra` options) while recording the speaker; returns the tone's level.
    static func recordPrompt(_ speaker: String, _ file: String, hertz: Double, extra: [String] = []) throws -> Double {
        let recorder = try MonitorRecorder(sink: speaker)
        try recorder.waitForAudio(seconds: 1.0)
        let result = try run([duckpromptBinary, "play", "--duck", "0dB"] + extra + [file], check: false)
        #expect(result.status == 0, "\(result.stderr)")
        try recorder.waitForMoreAudio(seconds: 0.3)
        return try level(recorder.stop(), hertz: hertz)
    }

    /// Sets the server's saved prompt volume back to 100 %, the way the test set it to 50 %: by
    /// changing a playing prompt's volume. Without it the next test on this server (or a second
    /// run) would hear its prompts 18 dB down.
    static func resetSavedPromptVolume(_ file: String) {
        do {
            let prompt = try Background([duckpromptBinary, "play", "--duck", "0dB", file])
            var index: Int? = nil
            if try eventually({
                index = try Pactl.sinkInputs().first { ($0["properties"] as? [String: Any])?["duckprompt.prompt"] != nil }?["index"] as? Int
                return index != nil
            }), let index {
                try Pactl.call("set-sink-input-volume", "\(index)", "65536")
            }
            _ = prompt.wait(timeout: timeLimit(10))
        } catch {
            Issue.record("could not reset the saved prompt volume: \(error)")
        }
    }

    @Test("--volume -6dB plays 6 dB under the user's saved prompt volume, which stays as it was, also after kill -9")
    func relativeVolume() throws {
        try TestServer.requireServer()
        let rig = Rig()
        let speaker = try rig.speaker()
        try Pactl.call("set-default-sink", speaker)
        // A quiet bed keeps the monitor flowing (PulseAudio's monitor starts late otherwise).
        try DuckIntegrationTests.player(rig, sink: speaker, app: "vol-bed-\(rig.tag)", role: "event", volume: 8000, hertz: 3000)
        let long = try TestAudio.sine("vol-long.wav", hertz: 1000, seconds: 3, channels: 1)
        let short = try TestAudio.sine("vol-short.wav", hertz: 1000, seconds: 0.8, channels: 1)

        // The user turns prompts down to 50 % while one plays (pavucontrol does the same).
        defer { Self.resetSavedPromptVolume(long) }
        let first = try Background([duckpromptBinary, "play", "--duck", "0dB", long])
        var index: Int? = nil
        #expect(try eventually {
            index = try Pactl.sinkInputs().first { ($0["properties"] as? [String: Any])?["duckprompt.prompt"] != nil }?["index"] as? Int
            return index != nil
        })
        try Pactl.call("set-sink-input-volume", "\(try #require(index))", "32768")
        #expect(first.wait(timeout: timeLimit(10)) == 0)

        let saved = try Self.recordPrompt(speaker, short, hertz: 1000)
        let quieter = try Self.recordPrompt(speaker, short, hertz: 1000, extra: ["--volume", "-6dB"])
        let after = try Self.recordPrompt(speaker, short, hertz: 1000)
        print("[\(TestServer.kind)] prompt at the saved volume \(saved) dB, with --volume -6dB \(quieter) dB, then \(after) dB")
        #expect(abs((saved - quieter) - 6) <= 0.5, "--volume -6dB played \(saved - quieter) dB under the saved volume")
        // 50 % (pactl's cubic scale) is -18.06 dB: the saved volume applies, not 100 %.
        #expect(abs(after - saved) <= 0.2, "the saved prompt volume changed: \(saved) dB before, \(after) dB after")

        // Killed mid-prompt: the next duckprompt repairs the saved volume from the journal.
        let killed = try Background([duckpromptBinary, "play", "--duck", "0dB", "--volume", "-12dB", long])
        #expect(try eventually {
            try Pactl.sinkInputs().contains { input in
                guard (input["properties"] as? [String: Any])?["duckprompt.prompt"] != nil,
                      let volume = input["volume"] as? [String: Any],
                      let channel = volume.values.first as? [String: Any],
                      let value = channel["value"] as? Int else { return false }
                return value < 25000  // 32768 at -12 dB is 20650 (cubic scale)
            }
        }, "the prompt never played at its relative volume")
        kill(killed.process.processIdentifier, SIGKILL)
        _ = killed.wait(timeout: 5)
        let restore = try run([duckpromptBinary, "restore"], check: false)
        #expect(restore.status == 0, "\(restore.stderr)")
        let repaired = try Self.recordPrompt(speaker, short, hertz: 1000)
        print("[\(TestServer.kind)] after kill -9 and restore: \(repaired) dB")
        #expect(abs(repaired - saved) <= 0.2, "after kill -9 the saved prompt volume is \(repaired) dB, not \(saved) dB")
    }
}
