import DuckPrompt
import DuckPromptProbe
import DuckPromptTestSupport
import Foundation
import Testing

/// Real speech-dispatcher 0.11 (`SpeechDispatcherServer`: `speech-dispatcher -s` as the user, a
/// config dir of its own whose only module is duckprompt's) and spd-say clients, on a rig: music on the built-in speaker, a Bluetooth
/// headset the prompts go to. What a listener would observe: the speech on the headset's monitor,
/// the music's level on the speaker's monitor and its volume as pactl shows it.
@Suite(.serialized)
struct SpeechDispatcherIntegrationTests {
    static let musicVolume = 50000

    /// A rig with music on the speaker and a Bluetooth headset (the route); recorders on both
    /// monitors.
    struct Stage {
        let rig: Rig
        let music: String
        let speakerMonitor: MonitorRecorder
        let headsetMonitor: MonitorRecorder

        init() throws {
            try TestServer.requireServer()
            rig = Rig()
            let speaker = try rig.speaker()
            let headset = try rig.bluetooth()
            try Pactl.call("set-default-sink", speaker)
            music = "sd-music-\(rig.tag)"
            try rig.player(sink: speaker, app: music, role: "music", volume: SpeechDispatcherIntegrationTests.musicVolume)
            speakerMonitor = try MonitorRecorder(sink: speaker)
            headsetMonitor = try MonitorRecorder(sink: headset)
            try speakerMonitor.waitForAudio(seconds: 0.5)
        }

        var musicVolume: [Int]? { try? Pactl.volume(ofApp: music) }

        /// Waits until the music is ducked (its volume below where it was).
        func waitDucked() throws {
            guard eventually(timeout: timeLimit(8), { (musicVolume?.max() ?? Int.max) < SpeechDispatcherIntegrationTests.musicVolume / 2 }) else {
                throw TestFailure("the music was never ducked: \(String(describing: musicVolume))")
            }
        }

        /// Waits until the music is back at exactly its volume.
        func waitRestored() -> Bool {
            eventually(timeout: timeLimit(8), { musicVolume == [SpeechDispatcherIntegrationTests.musicVolume, SpeechDispatcherIntegrationTests.musicVolume] })
        }
    }

    /// The music's level (300 Hz on the speaker's monitor) from `from` seconds of the
    /// recording: how many times it went down by 10 dB or more and came back within 3 dB of
    /// `full`, and its lowest level. Windows in a hole of the recording (zeros: the server
    /// dropped monitor data on a loaded machine, seen on both servers) are left out before the
    /// median of 11 windows is taken: a hole is no level of the music.
    static func dips(_ samples: [Float], from seconds: Double, full: Double) -> (count: Int, lowest: Double) {
        let windows = Array(Levels.tone(samples, hertz: Double(Rig.musicHz)).dropFirst(Int(seconds * 100)))
        let rms = Array(Levels.rms(samples).dropFirst(Int(seconds * 100)))
        let heard = zip(windows, rms).filter { $0.1 > -150 }.map(\.0)
        let levels = Levels.medianFiltered(heard, span: 11)
        var count = 0, down = false
        for level in levels {
            if !down, level < full - 10 { down = true; count += 1 }
            if down, level > full - 3 { down = false }
        }
        return (count, levels.min() ?? full)
    }

    /// Windows of the headset's monitor with speech (broadband RMS above -45 dB) from `from` s.
    static func speechWindows(_ samples: [Float], from seconds: Double) -> Int {
        Levels.rms(samples).dropFirst(Int(seconds * 100)).filter { $0 > -45 }.count
    }

    @Test("spd-say through speech-dispatcher and duckprompt's module: heard on the headset, one duck per message however many sentences, an important message takes over a text one's duck, two messages in a row share one duck, spd-say -C stops it; the music restored exactly each time")
    func speechDispatcher() throws {
        let stage = try Stage()
        let server = try SpeechDispatcherServer()
        // The music's level before any prompt: what "back up" means.
        let full = Levels.median(Levels.tone(stage.speakerMonitor.samples(), hertz: Double(Rig.musicHz)).suffix(40))

        // (a) and (c): a message of three sentences, heard on the headset, one duck, restored.
        let start = stage.speakerMonitor.receivedSeconds
        let headsetStart = stage.headsetMonitor.receivedSeconds
        let said = try server.say("-w", "-P", "message", "Turn left. Then keep right. Then you have arrived.")
        #expect(said.status == 0, "spd-say: \(said.stderr)")
        #expect(stage.waitRestored(), "the music is at \(String(describing: stage.musicVolume)), not restored")
        try stage.speakerMonitor.waitForMoreAudio(seconds: 0.3)
        let heard = Self.speechWindows(stage.headsetMonitor.samples(), from: headsetStart)
        let oneMessage = Self.dips(stage.speakerMonitor.samples(), from: start, full: full)
        print("[\(TestServer.kind)] three sentences: \(heard) windows of speech on the headset; music \(full) dB, "
              + "lowest \(oneMessage.lowest) dB, \(oneMessage.count) duck(s)")
        #expect(heard >= 100, "only \(heard) windows of speech on the headset")
        #expect(oneMessage.count == 1, "\(oneMessage.count) ducks for one message of three sentences")
        #expect(full - oneMessage.lowest >= 15, "ducked only \(full - oneMessage.lowest) dB")
        #expect(server.trace.contains("message 1: SPEAK \"Turn left. Then keep right. Then you have arrived.\""),
                "not one message of three sentences: \(server.trace.split(separator: "\n").filter { $0.contains("speechd-module") })")

        // (b): a text message interrupted by an important one: one duck, handed over.
        let second = stage.speakerMonitor.receivedSeconds
        let text = try server.sayInBackground("-P", "text", "This is a long text message that goes on and on, "
                                              + "so that something more important can interrupt it before it ends.")
        try stage.waitDucked()
        let important = try server.say("-w", "-P", "important", "Important. Brake now.")
        #expect(important.status == 0, "spd-say important: \(important.stderr)")
        #expect(text.wait(timeout: timeLimit(5)) == 0)
        #expect(stage.waitRestored(), "the music is at \(String(describing: stage.musicVolume)), not restored")
        try stage.speakerMonitor.waitForMoreAudio(seconds: 0.3)
        let handed = Self.dips(stage.speakerMonitor.samples(), from: second, full: full)
        print("[\(TestServer.kind)] text interrupted by important: music \(full) dB, lowest \(handed.lowest) dB, "
              + "\(handed.count) duck(s)")
        #expect(handed.count == 1, "the music came back up between the text and the important message (\(handed.count) ducks)")
        #expect(server.trace.contains("speechd-module: message 2 stopped"), "speech-dispatcher never stopped the text message")
        // From the module's STOP to the important message's SPEAK, as the module traced them.
        if let stop = server.traced("message 2 stopped"), let next = server.traced("message 3: SPEAK") {
            print("[\(TestServer.kind)] STOP of the text message to the important one's SPEAK: \((next - stop) / 1000) ms")
        }

        // Two messages one after the other: speech-dispatcher sends the second once the first
        // ended; the first keeps its duck for it (one duck).
        let fourth = stage.speakerMonitor.receivedSeconds
        let first = try server.sayInBackground("-P", "message", "First message.")
        let queued = try server.say("-w", "-P", "message", "Second message.")
        #expect(queued.status == 0, "spd-say: \(queued.stderr)")
        #expect(first.wait(timeout: timeLimit(5)) == 0)
        #expect(stage.waitRestored(), "the music is at \(String(describing: stage.musicVolume)), not restored")
        try stage.speakerMonitor.waitForMoreAudio(seconds: 0.3)
        let twoMessages = Self.dips(stage.speakerMonitor.samples(), from: fourth, full: full)
        print("[\(TestServer.kind)] two messages in a row: lowest \(twoMessages.lowest) dB, \(twoMessages.count) duck(s)")
        #expect(server.trace.contains("message 5: SPEAK"), "the second message never reached the module")
        #expect(twoMessages.count == 1, "the music came back up between two messages (\(twoMessages.count) ducks)")

        // (d): spd-say -C stops a message; the music comes back exactly.
        let long = try server.sayInBackground("-P", "message", "A message long enough to be cancelled while it "
                                              + "is spoken, with words and more words after them.")
        try stage.waitDucked()
        let cancelled = try server.say("-C")
        #expect(cancelled.status == 0, "spd-say -C: \(cancelled.stderr)")
        #expect(long.wait(timeout: timeLimit(5)) == 0)
        #expect(stage.waitRestored(), "the music is at \(String(describing: stage.musicVolume)) after spd-say -C")
        // An idle sink's monitor may deliver nothing more (PulseAudio): then nothing is heard.
        try? stage.headsetMonitor.waitForMoreAudio(seconds: 0.3, timeout: 2)
        let tail = Levels.rms(stage.headsetMonitor.latest(frames: BenchProbe.rate / 4) ?? [])
        #expect((tail.max() ?? -200) < -45, "speech still heard after spd-say -C: \(tail.max() ?? 0) dB")
    }
}
