import DuckPrompt
import DuckPromptTestSupport
import Foundation
import DuckPromptProbe
import Testing

/// SSIP priorities across processes and inside one, judged from the speaker's monitor: a
/// `message` interrupts a `text` with a fade and no gap in the duck, a `notification` is
/// dropped, an `important` prompt is never interrupted, a newer `text` replaces a waiting one.
@Suite(.serialized)
struct PriorityIntegrationTests {

    static let musicHz = 300.0
    static let textHz = 1000.0, messageHz = 1500.0, notificationHz = 2000.0, importantHz = 700.0

    /// Whether `hertz` is audible (above -30 dB) in the last 100 ms received.
    static func hearing(_ recorder: MonitorRecorder, hertz: Double) -> Bool {
        guard let tail = recorder.latest(frames: BenchProbe.rate / 10) else { return false }
        return (Levels.tone(tail, hertz: hertz).max() ?? -200) > -30
    }

    static func waitHearing(_ recorder: MonitorRecorder, hertz: Double, what: String) throws {
        guard eventually(timeout: timeLimit(8), { hearing(recorder, hertz: hertz) }) else {
            throw TestFailure("\(what) never became audible on the monitor")
        }
    }

    /// The levels of windows `from...through`, without those within 3 windows of an edge.
    static func windows(_ levels: [Double], from: Int, through: Int, skipping edges: [Int]) -> [Double] {
        (from...through).filter { i in !edges.contains { abs(i - $0) <= 3 } }.map { levels[$0] }
    }

    @Test("Two processes: message interrupts text within 100 ms, no overlap, no gap in the duck; notification dropped; important never interrupted")
    func priorities() throws {
        let (rig, speaker) = try Rig.defaultSpeaker()
        try rig.player(sink: speaker, app: "prio-music-\(rig.tag)", role: "music\(rig.tag)",
                                        volume: 50000)
        let text = try TestAudio.sine("prio-text.wav", hertz: Int(Self.textHz), seconds: 3, channels: 1)
        let message = try TestAudio.sine("prio-message.wav", hertz: Int(Self.messageHz), seconds: 1, channels: 1)
        let notification = try TestAudio.sine("prio-notification.wav", hertz: Int(Self.notificationHz), seconds: 1, channels: 1)
        let important = try TestAudio.sine("prio-important.wav", hertz: Int(Self.importantHz), seconds: 1.5, channels: 1)
        let recorder = try MonitorRecorder(sink: speaker)
        try recorder.waitForAudio(seconds: 1.0)

        // 1. A text prompt plays; a message interrupts it; a notification sent meanwhile is dropped.
        let textRun = try Background([duckpromptBinary, "play", "--priority", "text", text], captureStderr: true)
        try Self.waitHearing(recorder, hertz: Self.textHz, what: "the text prompt")
        try recorder.waitForMoreAudio(seconds: 0.5)
        let launched = recorder.receivedSeconds
        let messageRun = try Background([duckpromptBinary, "play", "--priority", "message", message], captureStderr: true)
        let dropped = try run([duckpromptBinary, "play", "--priority", "notification", notification], check: false)
        #expect(dropped.status == 75, "notification: exit \(dropped.status), \(dropped.stderr)")
        #expect(dropped.stderr.contains("notification prompt is dropped"), "\(dropped.stderr)")
        let textStatus = textRun.wait(timeout: timeLimit(10))
        let textErr = String(decoding: textRun.bytes, as: UTF8.self)
        #expect(textStatus == 75, "text: exit \(String(describing: textStatus)), \(textErr)")
        #expect(textErr.contains("interrupted by a message prompt"), "\(textErr)")
        #expect(messageRun.wait(timeout: timeLimit(10)) == 0, "\(String(decoding: messageRun.bytes, as: UTF8.self))")
        try recorder.waitForMoreAudio(seconds: 1.0)

        // 2. An important prompt plays; a message sent meanwhile waits for its end.
        let importantRun = try Background([duckpromptBinary, "play", "--priority", "important", important],
                                          captureStderr: true)
        try Self.waitHearing(recorder, hertz: Self.importantHz, what: "the important prompt")
        try recorder.waitForMoreAudio(seconds: 0.3)
        let second = try run([duckpromptBinary, "play", "--priority", "message", message], check: false)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(importantRun.wait(timeout: timeLimit(10)) == 0, "\(String(decoding: importantRun.bytes, as: UTF8.self))")
        try recorder.waitForMoreAudio(seconds: 1.0)
        let samples = recorder.stop()

        let textLevels = Levels.tone(samples, hertz: Self.textHz)
        let messageLevels = Levels.tone(samples, hertz: Self.messageHz)
        let textSpan = try #require(Levels.runs(textLevels, above: -30).first, "no text prompt on the monitor")
        let firstMessage = try #require(Levels.runs(messageLevels, above: -30).first?.first, "no message on the monitor")
        let interruptMs = (Double(textSpan.last + 1) * 0.01 - launched) * 1000
        print("[\(TestServer.kind)] message launched at \(Int(launched * 1000)) ms of the recording; text heard until "
              + "\((textSpan.last + 1) * 10) ms (\(Int(interruptMs)) ms later); message from \(firstMessage * 10) ms")
        #expect(interruptMs <= timeLimit(0.1) * 1000, "the text prompt was heard \(Int(interruptMs)) ms after the message was started")
        #expect(textSpan.count < 290, "the text prompt played whole (\(textSpan.count) windows)")
        #expect(firstMessage > textSpan.last, "text and message overlap")
        // A prompt heard for 50 ms or more is five windows in a row; a window or two at an edge
        // of another prompt, or at a dropout, is its splash, not a prompt.
        let notificationLevels = Levels.tone(samples, hertz: Self.notificationHz)
        #expect(Levels.runs(notificationLevels, above: -30, gap: 0, minCount: 5).isEmpty,
                "the dropped notification was heard: \(Levels.runs(notificationLevels, above: -30, gap: 0, minCount: 5))")

        // The duck holds from the text prompt's start to the end of the message.
        // Median over eleven windows: a release lasts (20 steps, about 500 ms); a click of a
        // prompt 30 dB above the ducked music, where a loaded machine made it drop a window
        // (3-4 dB in the music's band for up to 30 ms, seen in CI), or its edge, does not.
        let music = Levels.medianFiltered(Levels.tone(samples, hertz: Self.musicHz), span: 11)
        let before = Levels.median(music[max(0, textSpan.first - 60)..<max(1, textSpan.first - 30)])
        let messageEnd = firstMessage + 96  // short of the message's own end
        // The prompts' own edges (the text's fade, the message's onset) splash into the music's
        // frequency for a window or two: those windows say nothing about the duck.
        let held = Self.windows(music, from: textSpan.first + 5, through: messageEnd, skipping: [textSpan.last, firstMessage])
        let ducked = Levels.median(held)
        print("[\(TestServer.kind)] music \(before) dB before, \(ducked) dB ducked, loudest window while held "
              + "\(held.max()!) dB (text \(textSpan.first * 10)-\(textSpan.last * 10) ms, message from \(firstMessage * 10) ms)")
        #expect(abs((before - ducked) - 20) <= 1.5, "ducked by \(before - ducked) dB")
        let loud = (textSpan.first + 5...messageEnd).filter { music[$0] >= ducked + 3 }
        let where_ = loud.map { "\($0 * 10) ms \(Int(music[$0])) dB" }.joined(separator: ", ")
        #expect(held.max()! < ducked + 3, "the duck was released between the text and the message: \(where_)")

        // The important prompt is heard whole, then the message.
        let importantLevels = Array(Levels.tone(samples, hertz: Self.importantHz)[(messageEnd + 14)...])
        let found = try #require(Levels.runs(importantLevels, above: -30).first, "no important prompt on the monitor")
        let importantSpan = (first: found.first + messageEnd + 14, last: found.last + messageEnd + 14, count: found.count)
        #expect(importantSpan.count >= 148, "important: \(importantSpan.count) windows of 150")
        let later = try #require(Levels.runs(Array(messageLevels[importantSpan.first...]), above: -30).first,
                                 "no second message on the monitor")
        #expect(later.count >= 98, "second message: \(later.count) windows of 100")
        #expect(later.first + importantSpan.first > importantSpan.last, "the message interrupted the important prompt")
    }

    @Test("A newer text replaces a waiting one; of a run of progress prompts the last is spoken")
    func replacement() throws {
        let (rig, speaker) = try Rig.defaultSpeaker()
        defer { withExtendedLifetime(rig) {} }
        let first = try TestAudio.sine("prio-first.wav", hertz: 1000, seconds: 1.5, channels: 1)
        let stale = try TestAudio.sine("prio-stale.wav", hertz: 1500, seconds: 0.5, channels: 1)
        let fresh = try TestAudio.sine("prio-fresh.wav", hertz: 2000, seconds: 0.5, channels: 1)
        let recorder = try MonitorRecorder(sink: speaker)
        try recorder.waitForAudio(seconds: 1.0)
        for priority in ["text", "progress"] {
            let playing = try Background([duckpromptBinary, "play", "--priority", priority, first], captureStderr: true)
            try Self.waitHearing(recorder, hertz: 1000, what: "the first \(priority) prompt")
            let waiting = try Background([duckpromptBinary, "play", "--priority", priority, stale],
                                         environment: ["DUCKPROMPT_DEBUG": "1"], captureStderr: true)
            // In the queue before the newer one comes: its trace says it waits for its turn.
            #expect(waiting.waitForOutput(containing: "prompt: waitTurn", timeout: timeLimit(3)), "\(priority): never queued")
            let newer = try Background([duckpromptBinary, "play", "--priority", priority, fresh], captureStderr: true)
            let staleStatus = waiting.wait(timeout: timeLimit(10))
            let staleErr = String(decoding: waiting.bytes, as: UTF8.self)
            #expect(staleStatus == 75, "\(priority): waiting prompt exit \(String(describing: staleStatus)), \(staleErr)")
            #expect(staleErr.contains("replaced by a newer \(priority) prompt"), "\(staleErr)")
            #expect(playing.wait(timeout: timeLimit(10)) == 0, "\(priority): the playing prompt was interrupted")
            #expect(newer.wait(timeout: timeLimit(10)) == 0, "\(priority): \(String(decoding: newer.bytes, as: UTF8.self))")
        }
        try recorder.waitForMoreAudio(seconds: 0.5)
        let samples = recorder.stop()
        // A prompt heard for 50 ms or more is five windows in a row; a window or two at an edge
        // of another prompt, or at a dropout, is its splash, not a prompt.
        let replaced = Levels.runs(Levels.tone(samples, hertz: 1500), above: -30, gap: 0, minCount: 5)
        #expect(replaced.isEmpty, "a replaced prompt was heard: windows \(replaced)")
        let freshWindows = Levels.span(Levels.tone(samples, hertz: 2000), above: -30)?.count ?? 0
        #expect(freshWindows >= 96, "the newest prompts: \(freshWindows) windows of 100")
        let firstWindows = Levels.span(Levels.tone(samples, hertz: 1000), above: -30)?.count ?? 0
        #expect(firstWindows >= 296, "the playing prompts: \(firstWindows) windows of 300")
    }

    @Test("Inside one process: a message Task interrupts a text Task and takes its duck over")
    func inProcess() async throws {
        let (rig, speaker) = try Rig.defaultSpeaker()
        let app = "prio-inproc-\(rig.tag)"
        try rig.player(sink: speaker, app: app, role: "music\(rig.tag)", volume: 50000)
        let text = try TestAudio.sine("prio-text.wav", hertz: Int(Self.textHz), seconds: 3, channels: 1)
        let message = try TestAudio.sine("prio-message.wav", hertz: Int(Self.messageHz), seconds: 1, channels: 1)
        let recorder = try MonitorRecorder(sink: speaker)
        try recorder.waitForAudio(seconds: 1.0)

        var textOptions = PlayOptions()
        textOptions.priority = .text
        let textTask = Task { try await DuckPrompt.play(files: [text], options: textOptions) }
        try Self.waitHearing(recorder, hertz: Self.textHz, what: "the text prompt")
        try recorder.waitForMoreAudio(seconds: 0.3)
        let launched = recorder.receivedSeconds
        let report = try await DuckPrompt.play(files: [message])
        await #expect(throws: DuckPromptError.self) { _ = try await textTask.value }
        if case .failure(let error as DuckPromptError) = await textTask.result {
            #expect(error.code == .dropped && error.message.contains("interrupted by a message prompt"), "\(error)")
        }
        #expect(report.framesPlayed == 48_000)
        try recorder.waitForMoreAudio(seconds: 1.0)
        let samples = recorder.stop()
        let textSpan = try #require(Levels.runs(Levels.tone(samples, hertz: Self.textHz), above: -30).first)
        let messageLevels = Levels.tone(samples, hertz: Self.messageHz)
        let messageSpan = try #require(Levels.runs(messageLevels, above: -30).first)
        print("[\(TestServer.kind)] in-process: text heard until \(Int((Double(textSpan.last + 1) * 0.01 - launched) * 1000)) ms after the message began")
        #expect(messageSpan.first > textSpan.last, "text and message overlap")
        #expect(messageSpan.count >= 98)
        let music = Levels.medianFiltered(Levels.tone(samples, hertz: Self.musicHz), span: 11)  // as above
        // Up to 200 ms before the message's end: the handover is judged here, not the final
        // release. (CI saw the music 6 dB up 50-100 ms before the message's end three times:
        // the release beginning while the last samples were still on their way, it seems;
        // not measured yet.)
        let held = Self.windows(music, from: textSpan.first + 5, through: messageSpan.last - 20,
                                skipping: [textSpan.last, messageSpan.first])
        let loud = (textSpan.first + 5...messageSpan.last - 20).filter { music[$0] >= Levels.median(held) + 3 }
        #expect(held.max()! < Levels.median(held) + 3, """
            the duck was released between the prompts (ducked \(Levels.median(held)) dB): \
            \(loud.map { "\($0 * 10) ms \(Int(music[$0])) dB" }.joined(separator: ", ")); text \
            \(textSpan.first * 10)-\(textSpan.last * 10) ms, message \(messageSpan.first * 10)-\(messageSpan.last * 10) ms
            """)
        // Everything restored at the end.
        #expect(try Pactl.volume(ofApp: app) == [50000, 50000])
    }
}
