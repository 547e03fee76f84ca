import DuckPrompt
import DuckPromptTestSupport
import Foundation
import DuckPromptProbe
import Testing

/// One queue for the service and the command (Docs/dbus.md): the cross-process priorities
/// (speech-dispatcher's) hold between a prompt through `duckprompt serve` and a
/// `duckprompt play` typed in a shell, both ways.
extension ServiceIntegrationTests {
    static let textHz = 440.0, messageHz = 1000.0

    @Test("One queue: a duckprompt play --priority message interrupts a service prompt of priority text (PromptFinished interrupted), and a service message interrupts a command's text (exit 75)")
    func oneQueueWithTheCommand() throws {
        let (rig, speaker, service) = try Self.idleSpeaker()
        _ = rig
        let text = try TestAudio.sine("served-queue-text.wav", hertz: Int(Self.textHz), seconds: 4, channels: 1)
        let message = try TestAudio.sine("served-queue-message.wav", hertz: Int(Self.messageHz), seconds: 1, channels: 1)
        let recorder = try MonitorRecorder(sink: speaker)
        try recorder.waitForAudio(seconds: 0.3)

        // The service's text, interrupted by the command's message.
        let served = try Service.id(try service.call("Play", "['\(text)']", "{'priority': <'text'>}"))
        try PriorityIntegrationTests.waitHearing(recorder, hertz: Self.textHz, what: "the service's text prompt")
        // --no-service: the command's own prompt, in another process (not handed to the service).
        let command = try run([duckpromptBinary, "play", "--no-service", "--priority", "message", message], check: false)
        #expect(command.status == 0, "the command's message: exit \(command.status), \(command.stderr)")
        #expect(try service.finished(served) == "interrupted", "\(service.signals)")
        #expect(service.signals.contains("interrupted by a message prompt"), "\(service.signals)")
        try recorder.waitForMoreAudio(seconds: 0.5)

        // The command's text, interrupted by the service's message.
        let typed = try Background([duckpromptBinary, "play", "--no-service", "--priority", "text", text], captureStderr: true)
        let messageFrom = recorder.receivedSeconds
        try PriorityIntegrationTests.waitHearing(recorder, hertz: Self.textHz, what: "the command's text prompt")
        let id = try Service.id(try service.call("Play", "['\(message)']", "{'priority': <'message'>}"))
        let status = typed.wait(timeout: timeLimit(10))
        let stderr = String(decoding: typed.bytes, as: UTF8.self)
        #expect(status == 75, "the command's text: exit \(String(describing: status)), \(stderr)")
        #expect(stderr.contains("interrupted by a message prompt"), "\(stderr)")
        #expect(try service.finished(id) == "played", "\(service.signals)")
        try recorder.waitForMoreAudio(seconds: 0.3)
        let samples = recorder.stop()
        let later = Array(samples.dropFirst(Int(messageFrom * Double(BenchProbe.rate))))
        let messageHeard = Levels.tone(later, hertz: Self.messageHz).filter { $0 > -40 }.count
        #expect(messageHeard >= 80, "the service's message was heard in \(messageHeard) 10 ms windows of 100")
        #expect(service.stop() == 0)
    }
}
