import DuckPromptTestSupport
import Foundation
import DuckPromptProbe
import Testing

/// `devices`/`route` on the live server, and signals during a prompt.
@Suite(.serialized)
struct LiveDevicesAndSignalTests {
    @Test("devices --json classifies the emulated speaker and Bluetooth headset and routes to Bluetooth")
    func devicesJSON() throws {
        try TestServer.requireServer()
        let rig = Rig()
        let speaker = try rig.speaker()
        let bt = try rig.bluetooth()
        try Pactl.call("set-default-sink", speaker)
        let out = try run([duckpromptBinary, "devices", "--json"]).stdout
        let json = try #require(try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any])
        let sinks = try #require(json["sinks"] as? [[String: Any]])
        let byName = Dictionary(uniqueKeysWithValues: sinks.map { ($0["name"] as? String ?? "", $0) })
        #expect(byName[speaker]?["kind"] as? String == "speaker")
        #expect(byName[speaker]?["external"] as? Bool == false)
        #expect(byName[speaker]?["default"] as? Bool == true)
        #expect(byName[bt]?["kind"] as? String == "bluetooth-a2dp")
        #expect(byName[bt]?["external"] as? Bool == true)
        #expect(byName[bt]?["chosen"] as? Bool == true)
        #expect((json["route"] as? [String: Any])?["sink"] as? String == bt)

        let table = try run([duckpromptBinary, "devices"]).stdout
        let btLine = try #require(table.split(separator: "\n").first { $0.contains(" \(bt) ") })
        #expect(btLine.hasPrefix("*"), "the routed sink is marked: \(table)")

        let explicit = try run([duckpromptBinary, "route", "-d", speaker]).stdout
        #expect(explicit.hasPrefix(speaker + "\t"))
        let fromEnvironment = try run([duckpromptBinary, "route"], environment: ["PULSE_SINK": speaker]).stdout
        #expect(fromEnvironment.hasPrefix(speaker + "\t"), "PULSE_SINK is honoured: \(fromEnvironment)")
        let runtime = try #require(ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"])
        let viaServer = try run([duckpromptBinary, "route", "-s", "unix:\(runtime)/pulse/native"],
                                environment: ["PULSE_SERVER": "unix:/nonexistent/duckprompt"]).stdout
        #expect(viaServer.hasPrefix(bt + "\t"), "-s overrides PULSE_SERVER: \(viaServer)")
        let unknown = try run([duckpromptBinary, "route", "-d", "no_such_sink_\(rig.tag)"], check: false)
        #expect(unknown.status == 69)
        #expect(unknown.stderr.contains("no_such_sink_\(rig.tag)"))
    }

    @Test("SIGINT, SIGTERM and SIGHUP mid-prompt: exit 130/143/129, every volume back", arguments: [
        (SIGINT, Int32(130)), (SIGTERM, Int32(143)), (SIGHUP, Int32(129)),
    ])
    func signalRestores(signal: Int32, status: Int32) throws {
        let scene = try Scene(promptSeconds: 4)
        let (rig, bt, app, before, prompt) = (scene.rig, scene.bt, scene.app, scene.before, scene.prompt)
        let (recorder, promptRecorder) = (scene.recorder, scene.promptRecorder)
        let player = try Background([duckpromptBinary, "play", "-v", prompt], captureStderr: true)
        let ducked = try eventually(timeout: 3) {
            guard let now = try Pactl.volume(ofApp: app) else { return false }
            // -20 dB is a factor of 0.464 on the cubic pa_volume_t scale.
            return zip(now, before).allSatisfy { Double($0) < Double($1) * 0.5 }
        }
        #expect(ducked, "the music was not ducked")
        // Mid-prompt: the prompt (1 kHz at -6 dBFS) is heard on the headset.
        #expect(promptRecorder.waitForTone(hertz: 1000, atLeast: -12, timeout: timeLimit(3)), "the prompt was not heard")
        kill(player.process.processIdentifier, signal)
        let exit = player.wait(timeout: 3)
        #expect(exit == status)
        #expect(try Pactl.volume(ofApp: app) == before, "pa_cvolume not restored after signal \(signal)")
        // -v says what the stopped prompt did: where it went and which streams it ducked and
        // restored (the music among them).
        let stderr = String(decoding: player.bytes, as: UTF8.self)
        let name = [SIGINT: "SIGINT", SIGTERM: "SIGTERM", SIGHUP: "SIGHUP"][signal] ?? "?"
        #expect(stderr.hasPrefix("duckprompt: stopped by \(name) after ") && stderr.contains(" frames on \(bt): "), "\(stderr)")
        let musicIndex = try #require(try Pactl.index(ofApp: app))
        #expect(stderr.split(separator: "\n").contains { $0.hasPrefix("duckprompt: ducked and restored: ") && $0.contains("#\(musicIndex)") },
                "\(stderr)")
        // Restored with a ramp, not a jump: the music (300 Hz) never changes by more than
        // `rampStepLimit` from one 10 ms window to the next, before, during or after the signal.
        try recorder.waitForMoreAudio(seconds: 1.0)
        let music = Array(Levels.tone(recorder.stop(), hertz: Double(PlayIntegrationTests.musicHz)).drop { $0 < -100 }
            .dropFirst(3).dropLast(2))   // partial windows at the recording's edges
        let step = Levels.largestStep(music)
        #expect(step.dB <= rampStepLimit, "largest 10 ms step after signal \(signal): \(step.detail)")

        // The interrupted prompt fades out (about 30 ms) instead of stopping with a click:
        // between its full level and silence lie at least two 10 ms windows.
        try promptRecorder.waitForMoreAudio(seconds: 0.5)
        let tone = Levels.rms(promptRecorder.stop())
        let full = try #require(tone.max())
        let lastFull = try #require(tone.lastIndex { $0 > full - 3 })
        let fade = tone[(lastFull + 1)...].prefix { $0 > full - 50 }.count
        print("[\(TestServer.kind)] signal \(signal): prompt fades over \(fade) windows of 10 ms")
        #expect(fade >= 2, "the prompt stopped with a click (\(fade) windows of fade)")
        // The fade leaves the server's saved prompt volume as it was: a new navigation stream
        // starts at 100 %.
        let probe = "navprobe-\(rig.tag)"
        let nav = try Background(["paplay", "--latency-msec=100", "-d", bt, "--client-name=\(probe)",
                                  "--property=application.name=\(probe)", "--property=media.role=navigation",
                                  try TestAudio.sine("probe.wav", hertz: 500, seconds: 5, gain: 0.1)])
        rig.players.append(nav)
        #expect(try eventually { try Pactl.volume(ofApp: probe) != nil })
        let probeVolume = try Pactl.volume(ofApp: probe) ?? []
        #expect(!probeVolume.isEmpty && probeVolume.allSatisfy { $0 == 65536 },
                "saved navigation volume changed: \(probeVolume)")
    }

    @Test("--exit-with-parent: the parent killed with SIGKILL mid-prompt, the prompt stops, fades and every volume is back")
    func exitWithParent() throws {
        let scene = try Scene(promptSeconds: 6)
        let (app, before, prompt, promptRecorder) = (scene.app, scene.before, scene.prompt, scene.promptRecorder)
        // The parent, as Navit or a module starts it: a shell that waits for the prompt. The
        // prompt's standard error is the pipe the test reads, which outlives the shell.
        let parent = try Background(["sh", "-c", "'\(duckpromptBinary)' play -v --exit-with-parent '\(prompt)' & wait"],
                                    captureStderr: true)
        #expect(try eventually(timeout: 3) {
            guard let now = try Pactl.volume(ofApp: app) else { return false }
            return zip(now, before).allSatisfy { Double($0) < Double($1) * 0.5 }
        }, "the music was not ducked")
        #expect(promptRecorder.waitForTone(hertz: 1000, atLeast: -12, timeout: timeLimit(3)), "the prompt was not heard")
        let shell = parent.process.processIdentifier
        kill(shell, SIGKILL)
        let stopped = "stopped by the exit of its parent (pid \(shell), --exit-with-parent)"
        // Well before the 6 s prompt would have ended by itself.
        #expect(parent.waitForOutput(containing: stopped, timeout: timeLimit(3)), "\(String(decoding: parent.bytes, as: UTF8.self))")
        #expect(try Pactl.volume(ofApp: app) == before, "pa_cvolume not restored after the parent's death")
        // The prompt is silent on the headset once it stopped: only the quiet bed is left.
        try promptRecorder.waitForMoreAudio(seconds: 0.3)
        let tone = Levels.tone(promptRecorder.stop(), hertz: 1000)
        #expect(try #require(tone.last) < -40, "the prompt still plays after its parent died: \(tone.suffix(5))")
    }

    /// Music at 75 % on the speaker (the default sink), a quiet 6 kHz bed on the Bluetooth
    /// headset a prompt is routed to, both monitors recorded and flowing, and a 1 kHz prompt
    /// of `promptSeconds` at -6 dBFS.
    struct Scene {
        let rig = Rig()
        let bt: String, app: String, prompt: String
        let before: [Int]
        let recorder: MonitorRecorder, promptRecorder: MonitorRecorder

        init(promptSeconds: Double) throws {
            try TestServer.requireServer()
            let speaker = try rig.speaker()
            // The prompt goes to the headset, so the speaker's monitor holds only the music.
            bt = try rig.bluetooth()
            try Pactl.call("set-default-sink", speaker)
            app = "dpmusic-\(rig.tag)"
            try rig.music(on: speaker, app: app, volume: "75%")
            before = try #require(try Pactl.volume(ofApp: app))
            prompt = try TestAudio.sine("long-prompt-\(Int(promptSeconds)).wav", hertz: 1000, seconds: promptSeconds, gain: 0.5, channels: 1)
            recorder = try MonitorRecorder(sink: speaker)
            promptRecorder = try MonitorRecorder(sink: bt)
            try rig.player(sink: bt, app: "bed-\(rig.tag)", role: "event", volume: 4000, hertz: 6000)
            try recorder.waitForAudio(seconds: 1.0)
            try promptRecorder.waitForAudio(seconds: 1.0)
        }
    }
}
