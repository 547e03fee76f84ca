import DuckPromptTestSupport
import Foundation
import DuckPromptProbe
import Testing

/// The duck as a hidden gain, on the live server: exact restores across sinks and channel
/// counts, streams that start, end or are replaced mid-prompt, and a user's change kept.
@Suite(.serialized)
struct DuckIntegrationTests {
    static func prompt(seconds: Double) throws -> String {
        try TestAudio.sine("prompt-\(seconds)s.wav", hertz: 1000, seconds: seconds, gain: 0.5, channels: 1)
    }

    /// Waits until the app's stream is ducked (below half its raw volume: -20 dB is x0.464).
    static func waitDucked(_ app: String, from original: [Int]) throws {
        let ducked = try eventually(timeout: 3) {
            guard let now = try Pactl.volume(ofApp: app), now.count == original.count else { return false }
            return zip(now, original).allSatisfy { Double($0) < Double($1) * 0.5 }
        }
        if !ducked { throw TestFailure("\(app) was not ducked") }
    }

    /// Waits (at most 3 s) until every channel of `app`'s stream is `depth` dB under
    /// `original` (0.05 dB of rounding allowed): the attack is over.
    static func waitFullyDucked(_ app: String, from original: [Int], depth: Double = -20) throws {
        let ducked = try eventually(timeout: timeLimit(3)) {
            guard let now = try Pactl.volume(ofApp: app), now.count == original.count else { return false }
            return SpokenWordIntegrationTests.decibels(now, from: original).allSatisfy { $0 <= depth + 0.05 }
        }
        if !ducked { throw TestFailure("\(app) was not ducked by \(-depth) dB: \(String(describing: try Pactl.volume(ofApp: app)))") }
    }

    @Test("Music, podcast and game on two sinks, 1, 2 and 6 channels: every pa_cvolume exact after the prompt")
    func exactAcrossSinksAndChannels() throws {
        try TestServer.requireServer()
        let rig = Rig()
        let speaker = try rig.speaker()
        let bt = try rig.bluetooth()
        try Pactl.call("set-default-sink", speaker)
        let t = rig.tag
        try rig.player(sink: speaker, app: "music-\(t)", role: "music", volume: 39321, channels: 2)
        try rig.player(sink: speaker, app: "podcast-\(t)", role: nil, volume: 29491, channels: 1)
        try rig.player(sink: bt, app: "game-\(t)", role: "game", volume: 52429, channels: 6)
        // A per-channel difference, as a balance control makes.
        let game = try #require(try Pactl.index(ofApp: "game-\(t)"))
        try Pactl.call("set-sink-input-volume", "\(game)", "52429", "50000", "48000", "46000", "44000", "42000")
        let apps = ["music-\(t)", "podcast-\(t)", "game-\(t)"]
        let before = try apps.map { try #require(try Pactl.volume(ofApp: $0)) }
        #expect(before.map(\.count) == [2, 1, 6])

        let result = try run([duckpromptBinary, "play", try Self.prompt(seconds: 1.5)], check: false)
        #expect(result.status == 0, "\(result.stderr)")
        let after = try apps.map { try Pactl.volume(ofApp: $0) }
        for (app, (b, a)) in zip(apps, zip(before, after)) {
            #expect(a == b, "\(app): \(b) before, \(a ?? []) after")
        }
    }

    @Test("Music that starts 300 ms into a 2 s prompt is ducked within 50 ms and ends at its own volume")
    func streamStartingMidPrompt() throws {
        try TestServer.requireServer()
        let rig = Rig()
        let speaker = try rig.speaker()
        let bt = try rig.bluetooth()
        try Pactl.call("set-default-sink", speaker)
        _ = bt
        // The late player's own volume, 45000, is what the server saved for its application
        // and role: a first run of it sets it, as a user would (before the recording starts).
        let app = "late-\(rig.tag)"
        let role = "music\(rig.tag)"
        try rig.player(sink: speaker, app: app, role: role, volume: 45000).stop()
        #expect(try eventually { try Pactl.volume(ofApp: app) == nil })

        let recorder = try MonitorRecorder(sink: speaker)
        // Something must play for PulseAudio's monitor to deliver from the start: a quiet tone.
        let bed = "bed-\(rig.tag)"
        try rig.player(sink: speaker, app: bed, role: "event", volume: 20000, hertz: 2000)
        try recorder.waitForAudio(seconds: 1.0)
        let bedVolume = try #require(try Pactl.volume(ofApp: bed))

        let prompt = try Background([duckpromptBinary, "play", try Self.prompt(seconds: 2)])
        // Into the prompt, after its attack: the bed is ducked.
        try Self.waitFullyDucked(bed, from: bedVolume)
        try rig.player(sink: speaker, app: app, role: role, volume: nil)
        #expect(prompt.wait(timeout: 10) == 0)
        try recorder.waitForMoreAudio(seconds: 1.0)
        let samples = recorder.stop()

        #expect(try Pactl.volume(ofApp: app) == [45000, 45000], "not at its own volume after the prompt")
        // The late music (300 Hz) on the speaker's monitor: how long was it heard at full level
        // before the duck reached it? Full level is its level at the end, after the release.
        let levels = Levels.tone(samples, hertz: 300)
        let first = try #require(levels.firstIndex { $0 > -60 }, "the late music is not on the monitor")
        let full = Levels.median(levels.suffix(30))
        let loudStart = levels[first...].prefix { $0 > full - 10 }.count
        print("[\(TestServer.kind)] late stream: \(loudStart) windows of 10 ms near full level before ducked; full \(full) dB")
        #expect(loudStart <= 5, "heard at full level for \(loudStart * 10) ms")
        let ducked = Levels.median(levels[(first + 20)..<(first + 60)])
        #expect(full - ducked > 18, "ducked only \(full - ducked) dB")
    }

    @Test("Streams that end mid-prompt leave no ducked saved volume: next stream of the app, and of the role, start at the original")
    func endedStreamsRepairSavedVolumes() throws {
        let (rig, speaker) = try Rig.defaultSpeaker()
        let t = rig.tag
        let byApp = "appkey-\(t)"           // no media.role: saved under its application
        let byRole = "rolekey-\(t)"         // media.role=music-<tag>: saved under the role
        let role = "music\(t)"
        let appPlayer = try rig.player(sink: speaker, app: byApp, role: nil, volume: 50000)
        let rolePlayer = try rig.player(sink: speaker, app: byRole, role: role, volume: 42000)
        let appOriginal = try #require(try Pactl.volume(ofApp: byApp))
        let roleOriginal = try #require(try Pactl.volume(ofApp: byRole))

        let prompt = try Background([duckpromptBinary, "play", try Self.prompt(seconds: 2.5)])
        try Self.waitFullyDucked(byApp, from: appOriginal)
        try Self.waitFullyDucked(byRole, from: roleOriginal)
        appPlayer.stop()
        rolePlayer.stop()
        #expect(prompt.wait(timeout: 10) == 0)

        // paplay --volume would override the saved volume: the next streams start without it.
        let sameApp = try Background(["paplay", "--latency-msec=100", "-d", speaker, "--client-name=\(byApp)",
                                      "--property=application.name=\(byApp)",
                                      try TestAudio.sine("tone-300-2ch.wav", hertz: 300, seconds: 60, gain: 0.3)])
        rig.players.append(sameApp)
        #expect(try eventually { try Pactl.volume(ofApp: byApp) != nil })
        #expect(try Pactl.volume(ofApp: byApp) == appOriginal, "next stream of the app starts ducked")
        let otherApp = "other-\(t)"
        let sameRole = try Background(["paplay", "--latency-msec=100", "-d", speaker, "--client-name=\(otherApp)",
                                       "--property=application.name=\(otherApp)", "--property=media.role=\(role)",
                                       try TestAudio.sine("tone-300-2ch.wav", hertz: 300, seconds: 60, gain: 0.3)])
        rig.players.append(sameRole)
        #expect(try eventually { try Pactl.volume(ofApp: otherApp) != nil })
        #expect(try Pactl.volume(ofApp: otherApp) == roleOriginal, "next stream of the role starts ducked")
    }

    @Test("A player that replaces its stream mid-prompt ends at the original volume, not ducked twice")
    func replacedStream() throws {
        let (rig, speaker) = try Rig.defaultSpeaker()
        let app = "player-\(rig.tag)"
        let role = "music\(rig.tag)"
        let first = try rig.player(sink: speaker, app: app, role: role, volume: 47000)
        let original = try #require(try Pactl.volume(ofApp: app))

        let prompt = try Background([duckpromptBinary, "play", try Self.prompt(seconds: 2.5)])
        try Self.waitFullyDucked(app, from: original)
        first.stop()
        // The next track: same application and role, no explicit volume (the server restores it).
        let next = try Background(["paplay", "--latency-msec=100", "-d", speaker, "--client-name=\(app)",
                                   "--property=application.name=\(app)", "--property=media.role=\(role)",
                                   try TestAudio.sine("tone-300-2ch.wav", hertz: 300, seconds: 60, gain: 0.3)])
        rig.players.append(next)
        #expect(prompt.wait(timeout: 10) == 0)
        #expect(try Pactl.volume(ofApp: app) == original, "the new stream does not end at the original volume")
    }

    @Test("A user who halves a ducked stream mid-prompt keeps it: afterwards it is at half its original")
    func userChangeKept() throws {
        let (rig, speaker) = try Rig.defaultSpeaker()
        let app = "user-\(rig.tag)"
        try rig.player(sink: speaker, app: app, role: "music", volume: 60000)
        let original = try #require(try Pactl.volume(ofApp: app))

        let prompt = try Background([duckpromptBinary, "play", try Self.prompt(seconds: 2.5)])
        try Self.waitFullyDucked(app, from: original)
        let ducked = try #require(try Pactl.volume(ofApp: app))
        let index = try #require(try Pactl.index(ofApp: app))
        try Pactl.call("set-sink-input-volume", "\(index)", "\(ducked[0] / 2)", "\(ducked[1] / 2)")
        #expect(prompt.wait(timeout: 10) == 0)
        let after = try #require(try Pactl.volume(ofApp: app))
        let expected = original.map { $0 / 2 }
        #expect(zip(after, expected).allSatisfy { abs($0 - $1) <= 2 }, "after \(after), expected about \(expected)")
    }

    /// On PipeWire a ducked stream is followed through its node (`PipeWireWatch`); when the
    /// PipeWire socket cannot be reached, through libpulse as on PulseAudio. Either way a
    /// user's change is kept and an untouched stream comes back exact.
    @Test("With and without PipeWire's own socket: the ducked streams followed through their nodes, or through libpulse; a user's change kept, the rest exact",
          arguments: [true, false])
    func followedThroughNodesOrLibpulse(_ reachable: Bool) throws {
        let (rig, speaker) = try Rig.defaultSpeaker()
        let changed = "followed-\(reachable)-\(rig.tag)", untouched = "untouched-\(reachable)-\(rig.tag)"
        try rig.player(sink: speaker, app: changed, role: "music", volume: 60000)
        try rig.player(sink: speaker, app: untouched, role: "game", volume: 41000)
        let original = try #require(try Pactl.volume(ofApp: changed))
        let other = try #require(try Pactl.volume(ofApp: untouched))
        let index = try #require(try Pactl.index(ofApp: changed))

        var environment = ["DUCKPROMPT_DEBUG": "1"]
        if !reachable { environment["PIPEWIRE_REMOTE"] = "duckprompt-no-such-socket" }
        let prompt = try Background([duckpromptBinary, "play", try Self.prompt(seconds: 2.0)],
                                    environment: environment, captureStderr: true)
        try Self.waitFullyDucked(changed, from: original)
        let ducked = try #require(try Pactl.volume(ofApp: changed))
        try Pactl.call("set-sink-input-volume", "\(index)", "\(ducked[0] / 2)", "\(ducked[1] / 2)")
        let status = prompt.wait(timeout: 10)
        let trace = String(decoding: prompt.bytes, as: UTF8.self)
        #expect(status == 0, "\(trace.suffix(2000))")
        let nodeLines = trace.split(separator: "\n").filter { $0.contains(": node ") && $0.contains(" of \(index) ") }
        if TestServer.kind == "pipewire" && reachable {
            // The node's first value, every ramp write, and the user's change.
            #expect(nodeLines.count >= 10, "only \(nodeLines.count) values from the node of \(index)")
            #expect(FaultIntegrationTests.saw(ducked.map { $0 / 2 }, of: index, in: trace), "the change did not come from the node")
        } else {
            #expect(nodeLines.isEmpty, "\(nodeLines.prefix(3))")
            #expect(FaultIntegrationTests.saw(ducked.map { $0 / 2 }, of: index, in: trace), "the change was not seen")
        }
        if TestServer.kind == "pipewire" && !reachable {
            #expect(trace.contains("pipewire: cannot connect"), "\(trace.prefix(1000))")
        }
        let after = try #require(try Pactl.volume(ofApp: changed))
        let expected = original.map { $0 / 2 }
        #expect(zip(after, expected).allSatisfy { abs($0 - $1) <= 2 }, "after \(after), expected about \(expected)")
        #expect(try Pactl.volume(ofApp: untouched) == other)
    }
}
