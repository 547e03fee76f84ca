import DuckPromptProbe
import DuckPromptTestSupport
import Foundation
import Testing

/// `play --dry-run [--json]`, `say --dry-run` and `--keep-awake SECONDS` of the command
/// (issue 35, "Lead time"), in the command's own process and handed to a running `duckprompt
/// serve`: the estimate's figures, nothing played or ducked (pactl's volumes, `pactl subscribe`,
/// the speaker's monitor), the sink kept RUNNING while the command lives and its silence gone
/// when it ends.
@Suite(.serialized)
struct DryRunIntegrationTests {
    typealias Service = ServiceIntegrationTests.Service

    /// `--dry-run --json`'s object, and the command's run.
    static func dryRun(_ arguments: [String]) throws -> (json: [String: Any], result: ProcessResult) {
        let result = try run([duckpromptBinary] + arguments, check: false)
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        return (try #require(object, "\(result)"), result)
    }

    /// `pactl subscribe`, once it shows a change of ours (a sink of the rig's, its volume set
    /// back and forth).
    static func subscribed(_ rig: Rig) throws -> Background {
        let events = try Background(["stdbuf", "-oL", "pactl", "subscribe"])
        let probe = try rig.bareNullSink()
        var louder = false
        let ready = try eventually {
            louder.toggle()
            try Pactl.call("set-sink-volume", probe, louder ? "60%" : "50%")
            return String(decoding: events.bytes, as: UTF8.self).contains("'change' on sink #")
        }
        if !ready { throw TestFailure("pactl subscribe reported nothing") }
        return events
    }

    static func log(_ events: Background) -> String { String(decoding: events.bytes, as: UTF8.self) }

    @Test("--dry-run here: the asleep headset's pre-roll, the speaker's attack under music, say's length as say plays it to a frame; nothing played, ducked or written; a call's drop is an answer")
    func dryRunHere() throws {
        let rig = Rig()
        let speaker = try rig.speaker()
        let headset = try rig.bluetooth()
        try Pactl.call("set-default-sink", headset)
        let prompt = try DuckIntegrationTests.prompt(seconds: 1.0)
        let (asleep, _) = try Self.dryRun(["play", "--dry-run", "--json", "--no-service", prompt])
        #expect(Set(asleep.keys) == ["sink", "kind", "pre-roll-us", "attack-us", "device-latency-us", "duration-us",
                                     "start-us", "call-state", "during-call", "first-sample-us", "heard-us", "end-us"])
        #expect(asleep["sink"] as? String == headset && asleep["kind"] as? String == "bluetooth-a2dp", "\(asleep)")
        #expect(asleep["pre-roll-us"] as? Int == 300_000 && asleep["attack-us"] as? Int == 0, "\(asleep)")
        #expect(asleep["duration-us"] as? Int == 1_000_000 && asleep["during-call"] as? String == "play", "\(asleep)")
        // Its own age at the route: more than nothing, less than a slow start.
        let start = try #require(asleep["start-us"] as? Int)
        #expect(start > 0 && start < 3_000_000, "start-us \(start)")
        #expect(asleep["first-sample-us"] as? Int == start + 300_000, "\(asleep)")

        let app = "dry-music-\(rig.tag)"
        try rig.player(sink: speaker, app: app, role: "music", volume: 50000)
        let before = try #require(try Pactl.volume(ofApp: app))
        let recorder = try MonitorRecorder(sink: speaker)
        try recorder.waitForAudio(seconds: 0.3)
        let events = try Self.subscribed(rig)
        defer { events.stop() }
        let (running, _) = try Self.dryRun(["play", "--dry-run", "--json", "--no-service", "-d", speaker, prompt])
        #expect(running["pre-roll-us"] as? Int == 0 && running["attack-us"] as? Int == 200_000, "\(running)")
        let text = "Turn left"
        let (said, _) = try Self.dryRun(["say", "--dry-run", "--json", "--no-service", "-d", speaker, text])
        let line = try run([duckpromptBinary, "say", "--dry-run", "--no-service", "-d", speaker, text], check: false)
        #expect(line.status == 0 && line.stdout.hasPrefix("would play on \(speaker) (speaker): pre-roll 0 ms, attack 200 ms"),
                "\(line)")
        // Nothing played (no stream, the 1 kHz tone not on the monitor), nothing ducked.
        try recorder.waitForMoreAudio(seconds: 0.2)
        // (The prompt's tone is at -6 dBFS; the music's 300 Hz leaks into the 1 kHz measure at
        // about -53.)
        let loudest = Levels.tone(recorder.stop(), hertz: 1000).max() ?? -200
        #expect(loudest < -40, "the monitor had the prompt's tone at \(loudest) dBFS")
        #expect(!Self.log(events).contains("'new' on sink-input"), "\(Self.log(events))")
        #expect(try Pactl.volume(ofApp: app) == before)

        // The real say plays as many frames as the dry run counted, at espeak's 22050 Hz.
        let played = try run([duckpromptBinary, "say", "-v", "--no-service", "--duck", "0dB", "-d", speaker, text], check: false)
        let frames = try #require(played.stderr.firstMatch(of: /played (\d+) frames/).flatMap { Int($0.output.1) }, "\(played)")
        let spoken = try #require(said["duration-us"] as? Int)
        #expect(abs(Double(spoken) - Double(frames) * 1_000_000 / 22050) <= 1_000_000 / 22050, "\(spoken) µs, \(frames) frames")

        // A call on (a media.role=phone stream): --during-call drop is an answer, exit 0.
        try rig.player(sink: speaker, app: "dry-call-\(rig.tag)", role: "phone", volume: nil, hertz: 500)
        let (dropped, result) = try Self.dryRun(["play", "--dry-run", "--json", "--no-service", "--during-call", "drop", prompt])
        #expect(result.status == 0 && dropped["during-call"] as? String == "drop" && dropped["call-state"] as? String == "active",
                "\(result)")
    }

    @Test("--dry-run handed over: the service's Estimate and EstimateSay answer (start-us its own: a new stream to the sleeping headset), the same errors; nothing played")
    func dryRunThroughService() throws {
        let rig = Rig()
        _ = try rig.speaker()
        let headset = try rig.bluetooth()
        try Pactl.call("set-default-sink", headset)
        let service = try Service()
        defer { _ = service.stop() }
        let prompt = try DuckIntegrationTests.prompt(seconds: 1.0)
        let (asleep, _) = try Self.dryRun(["play", "--dry-run", "--json", prompt])
        #expect(asleep["sink"] as? String == headset && asleep["pre-roll-us"] as? Int == 300_000, "\(asleep)")
        // The service keeps no stream yet: a new one, 30 ms on PipeWire to a sleeping sink, else 12.
        let cold = TestServer.kind == "pipewire" ? 30_000 : 12_000
        #expect(asleep["start-us"] as? Int == cold && asleep["first-sample-us"] as? Int == 300_000 + cold, "\(asleep)")
        let (said, _) = try Self.dryRun(["say", "--dry-run", "--json", "Turn left"])
        #expect(said["start-us"] as? Int == cold && (said["duration-us"] as? Int ?? 0) > 300_000, "\(said)")
        for (arguments, status) in [(["/nonexistent/dry-\(rig.tag).wav"], Int32(66)), (["-d", "no-such-\(rig.tag)", prompt], 69),
                                    (["--duck", "5dB", prompt], 64)] {
            let through = try run([duckpromptBinary, "play", "--dry-run"] + arguments, check: false)
            let own = try run([duckpromptBinary, "play", "--dry-run", "--no-service"] + arguments, check: false)
            #expect(through.status == status && own.status == status && through.stderr == own.stderr, "\(through) \(own)")
        }
        #expect(!service.signals.contains("PromptStarted"), "a dry run played: \(service.signals)")
        #expect(try KeepAwakeIntegrationTests.state(of: headset) != "RUNNING")
        #expect(service.stop() == 0)
    }

    @Test("--keep-awake here: the headset RUNNING while the command lives, a second prompt without pre-roll, SIGTERM ends it with the prompt's status and the silence goes")
    func keepAwakeHere() throws {
        let rig = Rig()
        _ = try rig.speaker()
        let headset = try rig.bluetooth()
        try Pactl.call("set-default-sink", headset)
        let prompt = try DuckIntegrationTests.prompt(seconds: 0.3)
        let keeping = try Background([duckpromptBinary, "play", "-v", "--no-service", "--keep-awake", "30", prompt],
                                     captureStderr: true)
        defer { keeping.stop() }
        #expect(keeping.waitForOutput(containing: "pre-roll 300 ms", timeout: timeLimit(5)),
                "\(String(decoding: keeping.bytes, as: UTF8.self))")
        #expect(try eventually(timeout: timeLimit(3)) { try KeepAwakeIntegrationTests.silences().count == 1 })
        #expect(try KeepAwakeIntegrationTests.state(of: headset) == "RUNNING")
        let second = try run([duckpromptBinary, "play", "-v", "--no-service", "--duck", "0dB", prompt], check: false)
        #expect(second.status == 0 && second.stderr.contains("pre-roll 0 ms"), "\(second.stderr)")
        kill(keeping.process.processIdentifier, SIGTERM)
        #expect(keeping.wait(timeout: timeLimit(3)) == 0, "\(String(decoding: keeping.bytes, as: UTF8.self))")
        #expect(try eventually(timeout: timeLimit(3)) { try KeepAwakeIntegrationTests.silences().isEmpty })
    }

    @Test("--keep-awake handed over: KeepAwake after the prompt's start (its pre-roll 300), a second prompt's PromptStarted pre-roll 0, kill -9 of the command removes the silence")
    func keepAwakeThroughService() throws {
        let rig = Rig()
        _ = try rig.speaker()
        let headset = try rig.bluetooth()
        try Pactl.call("set-default-sink", headset)
        let service = try Service()
        defer { _ = service.stop() }
        let prompt = try DuckIntegrationTests.prompt(seconds: 0.3)
        let keeping = try Background([duckpromptBinary, "play", "--keep-awake", "30", prompt], captureStderr: true)
        defer { keeping.stop() }
        #expect(try service.finished(1, timeout: timeLimit(5)) == "played", "\(service.signals)")
        #expect(service.signals.contains("PromptStarted (uint64 1, '\(headset)', 'bluetooth-a2dp', uint32 300)"),
                "\(service.signals)")
        #expect(try eventually(timeout: timeLimit(3)) { try KeepAwakeIntegrationTests.silences().count == 1 })
        #expect(try KeepAwakeIntegrationTests.state(of: headset) == "RUNNING")
        let second = try run([duckpromptBinary, "play", "--duck", "0dB", prompt], check: false)
        #expect(second.status == 0, "\(second)")
        #expect(service.signals.contains("PromptStarted (uint64 2, '\(headset)', 'bluetooth-a2dp', uint32 0)"),
                "\(service.signals)")
        let silence = try #require(try KeepAwakeIntegrationTests.silences().first?["index"] as? Int)
        let events = try Self.subscribed(rig)
        defer { events.stop() }
        kill(keeping.process.processIdentifier, SIGKILL)
        #expect(eventually(timeout: timeLimit(3)) { Self.log(events).contains("'remove' on sink-input #\(silence)") },
                "the silence outlived the command: \(Self.log(events))")
        #expect(service.stop() == 0)
    }
}
