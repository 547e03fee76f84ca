import DuckPrompt
import DuckPromptProbe
import DuckPromptTestSupport
import Foundation
import Testing

/// `duckprompt play` and `say` handing their prompt to a running `duckprompt serve`
/// (ServiceHandoff, Docs/cli.md "Through the service"): the service's log and its signals on
/// a `gdbus monitor` show the handover, the speaker's monitor what was heard, pactl the music's
/// volume; errors, signals and a killed command as the command's own path has them.
@Suite(.serialized)
struct HandoffIntegrationTests {
    typealias Service = ServiceIntegrationTests.Service

    /// The service's log lines of prompts, so far.
    static func served(_ service: Service) -> [Substring] {
        String(decoding: service.process.bytes, as: UTF8.self).split(separator: "\n").filter { $0.contains(": prompt ") }
    }

    @Test("With duckprompt serve running, play hands its file over (the service's log and PromptStarted/PromptFinished), heard on the speaker, the music ducked and then exact; say and play - too; --no-service plays in the command")
    func handsOver() throws {
        let (rig, speaker, service, recorder, app, before) = try ServiceIntegrationTests.listening("handoff-music")
        _ = rig
        let prompt = try DuckIntegrationTests.prompt(seconds: 1.0)
        let playing = try Background([duckpromptBinary, "play", prompt], captureStderr: true)
        try DuckIntegrationTests.waitDucked(app, from: before)
        #expect(playing.wait(timeout: timeLimit(5)) == 0 && playing.bytes.isEmpty, "\(String(decoding: playing.bytes, as: UTF8.self))")
        // The command has its PromptFinished; gdbus monitor and the service's log may show theirs
        // a moment later (CI at 756a795, PulseAudio: the monitor had only PromptStarted yet).
        #expect(try service.finished(1) == "played", "\(service.signals)")
        #expect(eventually(timeout: timeLimit(2)) { Self.served(service).count == 1 }, "\(Self.served(service))")
        #expect(Self.served(service).first?.contains("(passed descriptor)") == true
                && Self.served(service).first?.hasSuffix("played: on \(speaker)") == true, "\(Self.served(service))")
        #expect(service.signals.contains("PromptStarted (uint64 1, '\(speaker)'"), "\(service.signals)")
        try recorder.waitForMoreAudio(seconds: 0.3)
        let heard = Levels.tone(recorder.stop(), hertz: 1000).filter { $0 > -40 }.count
        #expect(heard >= 80, "the prompt was heard in \(heard) 10 ms windows of 100")
        #expect(try eventually(timeout: timeLimit(2)) { try Pactl.volume(ofApp: app) == before })
        // say (Say), and play - (PlayFd of standard input, read by the command).
        let said = try run([duckpromptBinary, "say", "--duck", "0dB", "Turn left"], check: false)
        #expect(said.status == 0 && said.stderr.isEmpty, "\(said)")
        let short = try FileHandle(forReadingFrom: URL(fileURLWithPath: try DuckIntegrationTests.prompt(seconds: 0.3)))
        let piped = try run([duckpromptBinary, "play", "--duck", "0dB", "-"], input: .file(short), check: false)
        #expect(piped.status == 0 && piped.stderr.isEmpty, "\(piped)")
        #expect(eventually(timeout: timeLimit(2)) { Self.served(service).count == 3 }
                && Self.served(service).dropFirst().first?.contains("(text of 9 characters)") == true, "\(Self.served(service))")
        let local = try run([duckpromptBinary, "play", "--no-service", "--duck", "0dB", prompt], check: false)
        #expect(local.status == 0, "\(local)")
        #expect(Self.served(service).count == 3, "--no-service went through the service: \(Self.served(service))")
        #expect(try Pactl.volume(ofApp: app) == before)
        #expect(service.stop() == 0)
    }

    @Test("Through the service, a missing file, a file that is not audio, a cut WAV, a bad option and a prompt dropped (--on-busy drop) exit as the command's own path, with its message; nothing queued for the first four")
    func sameErrors() throws {
        let (rig, _, service) = try ServiceIntegrationTests.idleSpeaker()
        _ = rig
        let prompt = try DuckIntegrationTests.prompt(seconds: 0.3)
        // Regular files the command hands over unread: the service refuses their audio, and
        // the command says what its own path says.
        let notAudio = prompt + ".txt", cut = prompt + ".cut.wav"
        try Data("In 200 m, turn left\n".utf8).write(to: URL(fileURLWithPath: notAudio))
        try Data(try Data(contentsOf: URL(fileURLWithPath: prompt)).prefix(1000)).write(to: URL(fileURLWithPath: cut))
        defer { for file in [notAudio, cut] { try? FileManager.default.removeItem(atPath: file) } }
        for (args, status) in [(["/nonexistent/handoff-\(rig.tag).wav"], Int32(66)), ([notAudio], 65), ([cut], 65),
                               (["--duck", "5dB", prompt], 64),
                               (["--priority", "urgent", prompt], 64), (["-d", "no-such-sink-\(rig.tag)", prompt], 69)] {
            let through = try run([duckpromptBinary, "play"] + args, check: false)
            let own = try run([duckpromptBinary, "play", "--no-service"] + args, check: false)
            #expect(through.status == status && own.status == status, "\(args): \(through) \(own)")
            #expect(through.stderr == own.stderr, "\(args): \(through.stderr) against \(own.stderr)")
        }
        #expect(Self.served(service).isEmpty, "\(Self.served(service))")
        // A long prompt plays (through the service): the next one with --on-busy drop is dropped.
        let long = try DuckIntegrationTests.prompt(seconds: 3.0)
        let playing = try Background([duckpromptBinary, "play", "--duck", "0dB", long], captureStderr: true)
        #expect(eventually(timeout: timeLimit(5)) { service.signals.contains("PromptStarted (uint64 1,") }, "\(service.signals)")
        let through = try run([duckpromptBinary, "play", "--on-busy", "drop", prompt], check: false)
        let own = try run([duckpromptBinary, "play", "--no-service", "--on-busy", "drop", prompt], check: false)
        #expect(through.status == 75 && own.status == 75, "\(through) \(own)")
        #expect(through.stderr == own.stderr, "\(through.stderr) against \(own.stderr)")
        kill(playing.process.processIdentifier, SIGINT)
        #expect(playing.wait(timeout: timeLimit(5)) == 130)
        #expect(service.stop() == 0)
    }

    @Test("SIGINT to a play handed over: Cancel, the prompt no longer heard, exit 130, the music exact; kill -9 of the command: the service stops its prompt (stop-with-caller)")
    func signals() throws {
        let (rig, speaker, service, recorder, app, before) = try ServiceIntegrationTests.listening("handoff-signal")
        _ = (rig, speaker)
        let long = try DuckIntegrationTests.prompt(seconds: 4.0)
        let playing = try Background([duckpromptBinary, "play", long], captureStderr: true)
        #expect(eventually(timeout: timeLimit(5)) { service.signals.contains("PromptStarted (uint64 1,") }, "\(service.signals)")
        try DuckIntegrationTests.waitDucked(app, from: before)
        kill(playing.process.processIdentifier, SIGINT)
        #expect(playing.wait(timeout: timeLimit(5)) == 130, "\(String(decoding: playing.bytes, as: UTF8.self))")
        #expect(try service.finished(1, timeout: 3) == "cancelled")
        #expect(try eventually(timeout: timeLimit(2)) { try Pactl.volume(ofApp: app) == before })
        try recorder.waitForMoreAudio(seconds: 0.3)
        let heard = Levels.tone(recorder.samples(), hertz: 1000).filter { $0 > -40 }.count
        #expect(heard > 0 && heard < 300, "the 4 s prompt was heard in \(heard) 10 ms windows: not cut short")
        // kill -9: nobody asks for a Cancel; the service sees its caller leave the bus.
        let killed = try Background([duckpromptBinary, "play", long], captureStderr: true)
        #expect(eventually(timeout: timeLimit(5)) { service.signals.contains("PromptStarted (uint64 2,") }, "\(service.signals)")
        try DuckIntegrationTests.waitDucked(app, from: before)
        kill(killed.process.processIdentifier, SIGKILL)
        #expect(try service.finished(2, timeout: 3) == "cancelled")
        #expect(String(decoding: service.process.bytes, as: UTF8.self).contains("prompt 2: its caller"), "\(Self.served(service))")
        #expect(try eventually(timeout: timeLimit(2)) { try Pactl.volume(ofApp: app) == before })
        _ = recorder.stop()
        #expect(service.stop() == 0)
    }

    @Test("The service killed while a play handed over waits: the command exits 69 saying so")
    func serviceLeaves() throws {
        let (rig, _, service) = try ServiceIntegrationTests.idleSpeaker()
        _ = rig
        let long = try DuckIntegrationTests.prompt(seconds: 4.0)
        let playing = try Background([duckpromptBinary, "play", "--duck", "0dB", long], captureStderr: true)
        #expect(eventually(timeout: timeLimit(5)) { service.signals.contains("PromptStarted (uint64 1,") }, "\(service.signals)")
        kill(service.process.process.processIdentifier, SIGKILL)
        #expect(playing.wait(timeout: timeLimit(5)) == 69)
        #expect(String(decoding: playing.bytes, as: UTF8.self).contains("duckprompt serve left the bus before the prompt finished"),
                "\(String(decoding: playing.bytes, as: UTF8.self))")
        service.monitor.stop()
        // What the killed service ducked (nothing here) is left for the next command's recovery.
        _ = try run([duckpromptBinary, "restore"], check: false)
    }
}
