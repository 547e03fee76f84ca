import FoundationEssentials
import Testing
@testable import DuckPrompt
@testable import DuckPromptCore
@testable import DuckPromptLab
@testable import DuckPromptProbe

@Suite("LevelTimeline")
struct LevelTimelineTests {
    /// `pattern`: one character a 10 ms window: `#` heard at -10 dBFS, `.` silence, `q` -80 dBFS.
    static func timeline(_ pattern: String, start: Double = 0) -> LevelTimeline {
        LevelTimeline(start: start, levels: pattern.map { $0 == "#" ? -10 : $0 == "q" ? -80 : nil })
    }

    @Test("heard stretches: windows over -70 dBFS, gaps of up to 5 windows bridged, at least 2 windows", arguments: [
        ("....", [(Double, Double)]()),
        ("..##..", [(0.02, 0.04)]),
        ("#.....#", [(0.0, 0.07)]),              // a 5-window gap is bridged
        ("#......#", [(Double, Double)]()),      // 6 quiet windows split it; each part is 1 window: dropped
        ("##......##", [(0.0, 0.02), (0.08, 0.1)]),
        ("qq##qq", [(0.02, 0.04)]),              // -80 dBFS is not heard
    ])
    func stretches(pattern: String, expected: [(Double, Double)]) {
        let heard = Self.timeline(pattern).heardStretches
        #expect(heard.count == expected.count)
        for (stretch, (start, end)) in zip(heard, expected) {
            #expect(abs(stretch.start - start) < 1e-9 && abs(stretch.end - end) < 1e-9, "\(stretch)")
            #expect(stretch.level == -10)
        }
    }

    @Test("times follow the start; the median counts silence as -200 dBFS")
    func medians() {
        let timeline = LevelTimeline(start: -1.0, levels: [-20, -20, -40, nil, -40])
        #expect(timeline.window(at: -1.0) == 0 && timeline.window(at: -0.975) == 2)
        #expect(timeline.medianLevel(from: -1.0, to: -0.98) == -20)
        #expect(timeline.medianLevel(from: -0.98, to: -0.95) == -40)
        #expect(timeline.medianLevel(from: -0.97, to: -0.96) == -200)
        #expect(timeline.medianLevel(from: 5, to: 6) == nil)
        #expect(LevelTimeline.decibels(sumOfSquares: 0, count: 480) == nil)
        #expect(abs(LevelTimeline.decibels(sumOfSquares: 480 * 0.01, count: 480)! - -20) < 1e-9)
    }
}

@Suite("ListeningReport")
struct ListeningReportTests {
    static let full = VolumeState(volume: ChannelVolumes([65536, 65536]), mute: false)
    static let ducked = VolumeState(volume: ChannelVolumes([VolumeMath.volume(fromDecibels: -20), VolumeMath.volume(fromDecibels: -20)]), mute: false)
    static let halfway = VolumeState(volume: ChannelVolumes([VolumeMath.volume(fromDecibels: -10), VolumeMath.volume(fromDecibels: -10)]), mute: false)

    /// Music on `speaker` from -2 s, at -23 dBFS and -43 while ducked from 0.2 to 1.2 s; a
    /// prompt on `prompt sink` from 0.0 to 1.4 s, heard from 0.25 to 1.25 s at -12 dBFS.
    static func run(promptSink: String = "bt_headset", musicAfter: VolumeState = full,
                    promptRole: String? = "navigation", promptEnd: Double? = 1.4) -> ListeningReport {
        let windows = 360   // -2.0 ... 1.6 s
        func at(_ i: Int) -> Double { -2.0 + Double(i) * 0.01 }
        let musicLevels: [Double?] = (0..<windows).map { i in at(i) >= 0.2 && at(i) < 1.2 ? -43 : -23 }
        let promptLevels: [Double?] = (0..<windows).map { i in at(i) >= 0.25 && at(i) < 1.25 ? -12 : nil }
        let speaker = LevelTimeline(start: -2.0, levels: promptSink == "speaker"
            ? zip(musicLevels, promptLevels).map { m, p in p.map { max($0, m ?? -200) } ?? m } : musicLevels)
        let headset = LevelTimeline(start: -2.0, levels: promptSink == "speaker" ? Array(repeating: nil, count: windows) : promptLevels)
        var promptProperties = ["application.name": "duckprompt"]
        if let promptRole { promptProperties["media.role"] = promptRole }
        let streams = [
            StreamRecord(index: 3, properties: LabMusic.properties, start: -1.9, sinks: [Timed(-1.9, "speaker")],
                         volumes: [Timed(-1.9, full), Timed(0.1, halfway), Timed(0.2, ducked), Timed(1.3, halfway), Timed(1.5, musicAfter)]),
            StreamRecord(index: 5, properties: promptProperties, start: 0.0, end: promptEnd, sinks: [Timed(0.0, promptSink)],
                         volumes: [Timed(0.0, full)]),
        ]
        return ListeningReport(sinks: [("speaker", "speaker", "speaker", true, speaker),
                                       ("bt_headset", "bluetooth-a2dp", "bluetooth-a2dp", false, headset)],
                               streams: streams, end: 1.6)
    }

    @Test("the prompt is heard on the headset; the music went 20 dB down, by volume and on its monitor, and came back exactly")
    func duckedAndRestored() throws {
        let report = Self.run()
        let prompt = try #require(report.summary.prompts.first)
        #expect(report.summary.prompts.count == 1)
        #expect(prompt.stream == 5 && prompt.sink == "bt_headset" && prompt.heard)
        #expect(prompt.start == 0.25 && prompt.end == 1.25 && prompt.levelDbfs == -12 && prompt.sharedWith.isEmpty)
        let music = try #require(report.summary.others.first)
        #expect(report.summary.others.count == 1)
        #expect(music.stream == 3 && music.role == "lab-music" && music.mediaRole == "music" && music.prompt == 5)
        #expect(music.volumeBeforeDb == 0 && music.volumeChangeDb == -20)
        #expect(music.levelChangeDb == -20)
        #expect(music.restored)
        #expect(report.sinks.map(\.name) == ["speaker", "bt_headset"])
        #expect(report.sinks[1].heard == [ListeningReport.Span(start: 0.25, end: 1.25, levelDbfs: -12)])
        #expect(report.streams.map(\.role) == ["lab-music", "prompt"])
        #expect(report.streams[0].volumes.map(\.raw) == [[65536, 65536], Self.halfway.volume.values, Self.ducked.volume.values,
                                                         Self.halfway.volume.values, [65536, 65536]])
    }

    @Test("a stream left 1 step off its volume is not restored")
    func notRestored() throws {
        let off = VolumeState(volume: ChannelVolumes([65535, 65536]), mute: false)
        #expect(try #require(Self.run(musicAfter: off).summary.others.first).restored == false)
        let muted = VolumeState(volume: ChannelVolumes([65536, 65536]), mute: true)
        #expect(try #require(Self.run(musicAfter: muted).summary.others.first).restored == false)
    }

    @Test("a prompt on the music's own sink: its level is the mix, and the monitor gives no duck depth")
    func sameSink() throws {
        let report = Self.run(promptSink: "speaker")
        let prompt = try #require(report.summary.prompts.first)
        #expect(prompt.sink == "speaker" && prompt.heard && prompt.sharedWith == [3])
        let music = try #require(report.summary.others.first)
        #expect(music.levelChangeDb == nil && music.volumeChangeDb == -20)
        #expect(report.sinks[1].heard.isEmpty)
    }

    @Test("which streams are prompts: any of the command's but music, video, game, movie and production")
    func roles() {
        for (role, expected) in [("music", "other"), ("Video", "other"), ("game", "other"), ("event", "prompt"),
                                 ("phone", "prompt"), (nil, "prompt")] as [(String?, String)] {
            let report = Self.run(promptRole: role)
            #expect(report.streams[1].role == expected, "\(role ?? "no role")")
            #expect(report.summary.prompts.count == (expected == "prompt" ? 1 : 0))
        }
    }

    @Test("a run that played a duckprompt prompt: its prompts are the streams marked duckprompt.prompt; a podcast without a role is another stream, paused while corked all through the prompt; a repair stream is not shown")
    func duckpromptRun() throws {
        let silent = LevelTimeline(start: -2.0, levels: Array(repeating: nil, count: 360))
        func podcast(_ index: UInt32, corked: [Timed<Bool>]) -> StreamRecord {
            StreamRecord(index: index, properties: ["application.name": "mpv"], start: -1.0, sinks: [Timed(-1.0, "speaker")],
                         volumes: [Timed(-1.0, Self.full)], corked: corked)
        }
        let prompt = StreamRecord(index: 5, properties: ["application.name": "duckprompt", "media.role": "navigation",
                                                         "duckprompt.prompt": "4242"],
                                  start: 0.0, end: 1.4, sinks: [Timed(0.0, "bt_headset")], volumes: [Timed(0.0, Self.full)])
        let repair = StreamRecord(index: 9, properties: ["media.role": "music", "duckprompt.repair": "1"], start: 1.45,
                                  end: 1.5, sinks: [Timed(1.45, "speaker")], volumes: [Timed(1.45, Self.full)])
        let streams = [
            podcast(7, corked: [Timed(-1.0, false), Timed(0.1, true), Timed(1.3, false)]),   // paused for the prompt
            podcast(8, corked: [Timed(-1.0, false), Timed(0.1, true), Timed(0.5, false)]),   // the user played it
            podcast(10, corked: [Timed(-1.0, false)]),                                       // played on
            prompt, repair,
        ]
        let sinks = [("speaker", "speaker" as String?, "speaker" as String?, true, silent),
                     ("bt_headset", "bluetooth-a2dp", "bluetooth-a2dp", false, Self.headsetTimeline)]
        let report = ListeningReport(sinks: sinks, streams: streams, end: 1.6)
        #expect(report.streams.map(\.index) == [7, 8, 10, 5], "the repair stream is not shown")
        #expect(report.streams.map(\.role) == ["other", "other", "other", "prompt"])
        #expect(report.summary.prompts.map(\.stream) == [5])
        #expect(report.summary.others.map(\.stream) == [7, 8, 10])
        #expect(report.summary.others.map(\.paused) == [true, false, false])
        let lines = LabSummary.lines(report)
        #expect(lines.contains("stream on speaker (stream #7, mpv) under prompt #5: paused (its stream corked) all through the prompt, "
                               + "volume untouched, 0.00 dB on the monitor; restored to exactly the volume it had"), "\(lines)")
        // Without a duckprompt prompt in the run, the same podcasts count as prompts (no role).
        let withoutMark = ListeningReport(sinks: sinks, streams: streams.map { stream in
            var stream = stream
            stream.properties["duckprompt.prompt"] = nil
            return stream
        }, end: 1.6)
        #expect(withoutMark.streams.map(\.role) == ["prompt", "prompt", "prompt", "prompt"])
    }

    /// The headset's monitor of `run()`: the prompt heard from 0.25 to 1.25 s at -12 dBFS.
    static let headsetTimeline = LevelTimeline(start: -2.0, levels: (0..<360).map { i in
        let time = -2.0 + Double(i) * 0.01
        return time >= 0.25 && time < 1.25 ? -12 : nil
    })

    @Test("the lab's recorder streams are not shown; a prompt with no sound on its sink is not heard")
    func notHeard() throws {
        let silent = LevelTimeline(start: 0, levels: Array(repeating: nil, count: 100))
        let streams = [StreamRecord(index: 9, properties: [:], start: 0.1, end: 0.5, sinks: [Timed(0.1, "a")], volumes: [Timed(0.1, Self.full)]),
                       StreamRecord(index: 10, properties: [StreamLog.labProperty: "recorder"], start: 0, sinks: [Timed(0, "a")], volumes: [])]
        let report = ListeningReport(sinks: [("a", nil, "virtual", true, silent)], streams: streams, end: 1)
        #expect(report.streams.map(\.index) == [9])
        let prompt = try #require(report.summary.prompts.first)
        #expect(!prompt.heard && prompt.start == nil && prompt.levelDbfs == nil)
        #expect(LabSummary.lines(report).contains { $0.contains("NOT heard") })
    }

    @Test("the summary says where the prompt was heard, the duck depth, and restored")
    func summaryLines() {
        let lines = LabSummary.lines(Self.run())
        #expect(lines.count == 2)
        #expect(lines[0].hasPrefix("prompt (stream #5, duckprompt): heard on bt_headset's monitor at -12.00 dBFS RMS, 0.25 s to 1.25 s"))
        #expect(lines[1] == "music on speaker (stream #3, duckprompt lab) under prompt #5: duck depth 20.00 dB (volume), "
                + "20.00 dB on the monitor; restored to exactly the volume it had")
        #expect(Self.run().summary.prompts.first?.openAtEnd == false)
    }

    @Test("--duck-mode mute: the music's line says muted and silent on the monitor, not a depth; a keep-awake silence is not shown")
    func mutedAndKeepAwake() throws {
        let silent = VolumeState(volume: ChannelVolumes([0, 0]), mute: false)
        let music = Self.music([Timed(-1.9, Self.full), Timed(0.2, silent), Timed(1.5, Self.full)])
        let keepAwake = StreamRecord(index: 7, properties: ["application.name": "duckprompt", "media.role": "navigation",
                                                            SinkKeeper.property: "1"],
                                     start: -0.5, sinks: [Timed(-0.5, "bt_headset")], volumes: [Timed(-0.5, Self.full)])
        let speaker = Self.timeline(until: 1.6) { $0 >= 0.2 && $0 < 1.2 ? nil : -23 }
        let headset = Self.timeline(until: 1.6) { $0 >= 0.25 && $0 < 1.25 ? -12 : nil }
        let report = ListeningReport(sinks: [("speaker", "speaker", "speaker", true, speaker),
                                             ("bt_headset", "bluetooth-a2dp", "bluetooth-a2dp", false, headset)],
                                     streams: [music, Self.prompt(5, 0.0, 1.4), keepAwake], end: 1.6)
        #expect(report.streams.map(\.index) == [3, 5])
        #expect(report.summary.others.map(\.stream) == [3])
        let lines = LabSummary.lines(report)
        #expect(lines.count == 2 && lines[1] == "music on speaker (stream #3, duckprompt lab) under prompt #5: muted (volume -inf dB), "
                + "silent on the monitor; restored to exactly the volume it had", "\(lines)")
    }

    @Test("a prompt whose stream was still open at the end (COMMAND stopped at --timeout) is marked so, in the report and the summary")
    func openAtEnd() throws {
        var report = Self.run(promptEnd: nil)
        report.timedOut = true
        let prompt = try #require(report.summary.prompts.first)
        #expect(prompt.openAtEnd && prompt.heard)
        #expect(LabSummary.lines(report).first?.hasSuffix("(cut off by --timeout: its stream was still open)") == true,
                "\(LabSummary.lines(report))")
        report.timedOut = false
        #expect(LabSummary.lines(report).first?.hasSuffix("(its stream was still open at the end)") == true)
    }

    /// The lab's music as `run()` has it (stream 3 on `speaker`), with `volumes`.
    static func music(_ volumes: [Timed<VolumeState>]) -> StreamRecord {
        StreamRecord(index: 3, properties: LabMusic.properties, start: -1.9, sinks: [Timed(-1.9, "speaker")], volumes: volumes)
    }

    /// A duckprompt prompt stream on `bt_headset`.
    static func prompt(_ index: UInt32, _ start: Double, _ end: Double?, corked: [Timed<Bool>] = [],
                       propertyChanges: [Timed<[String: String]>] = []) -> StreamRecord {
        StreamRecord(index: index, properties: ["application.name": "duckprompt", "media.role": "navigation",
                                                "duckprompt.prompt": "4242", "media.name": "prompt1.wav"],
                     start: start, end: end, sinks: [Timed(start, "bt_headset")], volumes: [Timed(start, full)],
                     corked: corked, propertyChanges: propertyChanges)
    }

    /// A timeline from -2 s, 10 ms windows to `until`: `level(time)` each.
    static func timeline(until: Double = 5, _ level: (Double) -> Double?) -> LevelTimeline {
        LevelTimeline(start: -2.0, levels: (0..<Int((until + 2) * 100)).map { level(-2.0 + Double($0) * 0.01) })
    }

    /// A ramp of `music`'s volume from `from` dB to `to` dB in 10 steps of 10 ms from `at`.
    static func ramp(at: Double, from: Double, to: Double) -> [Timed<VolumeState>] {
        (1...10).map { step in
            let db = from + (to - from) * Double(step) / 10
            let raw = VolumeMath.volume(fromDecibels: db)
            return Timed(at + Double(step - 1) * 0.01, VolumeState(volume: ChannelVolumes([raw, raw]), mute: false))
        }
    }

    @Test("prompts that follow closely: the second duck is measured against the music before the first, on the volume and on the monitor, whose second before the second prompt was still down")
    func closePrompts() throws {
        // Prompt 5 from 0.0 to 1.4 s, prompt 6 from 1.9 to 3.3 s; the music ducked 0.1-0.2 s,
        // back up 1.5-1.6 s, ducked again 2.0-2.1 s, back up 3.4-3.5 s.
        let music = Self.music([Timed(-1.9, Self.full)] + Self.ramp(at: 0.1, from: 0, to: -20) + Self.ramp(at: 1.5, from: -20, to: 0)
                               + Self.ramp(at: 2.0, from: 0, to: -20) + Self.ramp(at: 3.4, from: -20, to: 0))
        let ducked = { (t: Double) in (t >= 0.15 && t < 1.55) || (t >= 2.05 && t < 3.45) }
        let speaker = Self.timeline { ducked($0) ? -43 : -23 }
        let headset = Self.timeline { ($0 >= 0.3 && $0 < 1.3) || ($0 >= 2.2 && $0 < 3.2) ? -12 : nil }
        let report = ListeningReport(sinks: [("speaker", "speaker", "speaker", true, speaker),
                                             ("bt_headset", "bluetooth-a2dp", "bluetooth-a2dp", false, headset)],
                                     streams: [music, Self.prompt(5, 0.0, 1.4), Self.prompt(6, 1.9, 3.3)], end: 5)
        #expect(report.summary.others.map(\.prompt) == [5, 6])
        let second = try #require(report.summary.others.last)
        #expect(second.volumeChangeDb == -20 && second.levelChangeDb == -20, "\(second)")
        #expect(second.baselineTime == 0 && second.baselineEntry == 0 && second.promptEntry == 1)
        #expect(second.carriedOver && !second.handedOver && second.restored)
        let lines = LabSummary.lines(report)
        #expect(lines.contains("music on speaker (stream #3, duckprompt lab) under prompt #6: duck depth 20.00 dB (volume), "
                               + "20.00 dB on the monitor, against before prompt #5 at 0.00 s (the duck began under it; "
                               + "back up for less than a second before this one); restored to exactly the volume it had"), "\(lines)")
        // A second prompt 1.4 s after the music was back up (a steady second before it) begins a
        // run of its own.
        let later = Self.music([Timed(-1.9, Self.full)] + Self.ramp(at: 0.1, from: 0, to: -20) + Self.ramp(at: 1.5, from: -20, to: 0)
                               + Self.ramp(at: 3.1, from: 0, to: -20) + Self.ramp(at: 4.0, from: -20, to: 0))
        let apart = ListeningReport(sinks: [("speaker", "speaker", "speaker", true, speaker)],
                                    streams: [later, Self.prompt(5, 0.0, 1.4), Self.prompt(6, 3.0, 3.9)], end: 5)
        let own = try #require(apart.summary.others.last)
        #expect(!own.carriedOver && own.baselineTime == 3.0 && own.baselineEntry == 1 && own.volumeChangeDb == -20, "\(own)")
    }

    @Test("a held prompter's stream, uncorked for each prompt: one entry per prompt with its own heard window and media.name, and the duck measured under each")
    func heldStream() throws {
        // Stream 7 corked at 0.0, played 0.02-1.2 s and 1.5-2.7 s (renamed at 1.49), kept corked to 4.0 s.
        let held = Self.prompt(7, 0.0, 4.0, corked: [Timed(0.0, true), Timed(0.02, false), Timed(1.2, true), Timed(1.5, false),
                                                     Timed(2.7, true)],
                               propertyChanges: [Timed(1.49, ["application.name": "duckprompt", "media.role": "navigation",
                                                              "duckprompt.prompt": "4242", "media.name": "prompt2.wav"])])
        let music = Self.music([Timed(-1.9, Self.full)] + Self.ramp(at: 0.01, from: 0, to: -20) + Self.ramp(at: 2.8, from: -20, to: 0))
        let speaker = Self.timeline { $0 >= 0.05 && $0 < 2.85 ? -43 : -23 }
        let headset = Self.timeline { ($0 >= 0.3 && $0 < 1.19) || ($0 >= 1.6 && $0 < 2.6) ? -12 : nil }
        let report = ListeningReport(sinks: [("speaker", "speaker", "speaker", true, speaker),
                                             ("bt_headset", "bluetooth-a2dp", "bluetooth-a2dp", false, headset)],
                                     streams: [music, held], end: 4.2)
        let prompts = report.summary.prompts
        #expect(prompts.count == 2, "\(prompts)")
        #expect(prompts.map(\.start) == [0.3, 1.6] && prompts.map(\.end) == [1.19, 2.6] && prompts.allSatisfy(\.heard))
        #expect(prompts.map(\.part) == [1, 2] && prompts.map(\.parts) == [2, 2])
        #expect(prompts.map(\.spanStart) == [0.0, 1.2] && prompts.map(\.spanEnd) == [1.2, 4.0])
        #expect(prompts.map(\.mediaName) == ["prompt1.wav", "prompt2.wav"])
        #expect(report.summary.others.map(\.promptEntry) == [0, 1])
        #expect(report.summary.others.map(\.volumeChangeDb) == [-20, -20] && report.summary.others.allSatisfy(\.restored))
        #expect(report.summary.others.map(\.handedOver) == [false, true])
        let lines = LabSummary.lines(report)
        #expect(lines[0] == "prompt 1 of 2 (stream #7, duckprompt, prompt1.wav): heard on bt_headset's monitor at -12.00 dBFS RMS, 0.30 s to 1.19 s")
        #expect(lines[1] == "prompt 2 of 2 (stream #7, duckprompt, prompt2.wav): heard on bt_headset's monitor at -12.00 dBFS RMS, 1.60 s to 2.60 s")
        #expect(lines[2].hasPrefix("music on speaker (stream #3, duckprompt lab) under prompt #7 (1 of 2): duck depth 20.00 dB (volume), 20.00 dB on the monitor; restored"))
        #expect(report.streams[1].corked.map(\.corked) == [true, false, true, false, true])
        // The cork between the two not seen (the lab's read came after the uncork): the rename
        // while it played begins the second prompt.
        var missed = held
        missed.corked = [Timed(0.0, true), Timed(0.02, false), Timed(2.7, true)]
        let renamed = ListeningReport(sinks: [("bt_headset", "bluetooth-a2dp", "bluetooth-a2dp", false, headset)],
                                      streams: [missed], end: 4.2).summary.prompts
        #expect(renamed.map(\.spanStart) == [0.0, 1.49] && renamed.map(\.start) == [0.3, 1.6], "\(renamed)")
        #expect(renamed.map(\.mediaName) == ["prompt1.wav", "prompt2.wav"])
        // The rename read while it still played, 9 ms before the cork (measured on PulseAudio
        // 16.1), or just after the uncork: one change of prompt, not two.
        for (rename, cork, uncork) in [(1.191, 1.2, 1.209), (1.501, 1.2, 1.5)] {
            var early = held
            early.corked = [Timed(0.0, true), Timed(0.02, false), Timed(cork, true), Timed(uncork, false), Timed(2.7, true)]
            early.propertyChanges[1].time = rename
            let two = ListeningReport(sinks: [("bt_headset", "bluetooth-a2dp", "bluetooth-a2dp", false, headset)],
                                      streams: [early], end: 4.2).summary.prompts
            #expect(two.count == 2 && two.map(\.mediaName) == ["prompt1.wav", "prompt2.wav"], "\(two)")
            #expect(two.last?.spanStart == min(rename, cork) && two.last?.start == 1.6, "\(two)")
        }
    }

    @Test("a prompt that took over a handed-over duck: measured against the music before the duck began, restored, and the handover named")
    func handover() throws {
        // Prompt 5 from 0.0 to 1.35 s, prompt 6 from 1.3 to 2.8 s: the music ducked 0.1-0.2 s,
        // held down through both, back up 2.9-3.0 s.
        let music = Self.music([Timed(-1.9, Self.full)] + Self.ramp(at: 0.1, from: 0, to: -20) + Self.ramp(at: 2.9, from: -20, to: 0))
        let speaker = Self.timeline { $0 >= 0.15 && $0 < 2.95 ? -43 : -23 }
        let headset = Self.timeline { ($0 >= 0.3 && $0 < 1.3) || ($0 >= 1.4 && $0 < 2.7) ? -12 : nil }
        let report = ListeningReport(sinks: [("speaker", "speaker", "speaker", true, speaker),
                                             ("bt_headset", "bluetooth-a2dp", "bluetooth-a2dp", false, headset)],
                                     streams: [music, Self.prompt(5, 0.0, 1.35), Self.prompt(6, 1.3, 2.8)], end: 5)
        let (first, second) = (report.summary.others[0], report.summary.others[1])
        #expect(second.prompt == 6 && second.volumeChangeDb == -20 && second.levelChangeDb == -20 && second.restored, "\(second)")
        #expect(second.carriedOver && second.handedOver && second.baselineEntry == 0 && second.volumeBeforeDb == 0)
        #expect(first.restored && first.restoredAfterEntry == 1 && second.restoredAfterEntry == 1)
        #expect(first.restoredAt == 2.99 && second.restoredAt == 2.99)
        let lines = LabSummary.lines(report)
        #expect(lines.contains("music on speaker (stream #3, duckprompt lab) under prompt #5: duck depth 20.00 dB (volume), "
                               + "20.00 dB on the monitor; restored to exactly the volume it had (after prompt #6)"), "\(lines)")
        #expect(lines.contains("music on speaker (stream #3, duckprompt lab) under prompt #6: duck depth 20.00 dB (volume), "
                               + "20.00 dB on the monitor, against before prompt #5 at 0.00 s (the duck began under it and was "
                               + "handed over); restored to exactly the volume it had"), "\(lines)")
        #expect(!lines.contains { $0.contains("untouched") || $0.contains("NOT restored") })
    }

    @Test("a kept stream corked after its one prompt and left open: heard until the cork, not through the next prompt of another stream")
    func keptCorkedAfterOne() throws {
        // The service's stream #80 plays 0.0-3.498 s, is corked then and kept open to 9.2 s; the
        // command's own stream #87 plays 3.5-5.7 s on the same sink.
        let kept = Self.prompt(80, 0.0, 9.2, corked: [Timed(0.0, false), Timed(3.498, true)])
        let headset = Self.timeline(until: 10) { $0 >= 1.33 && $0 < 5.68 ? -24 : nil }
        let report = ListeningReport(sinks: [("bt_headset", "bluetooth-a2dp", "bluetooth-a2dp", false, headset)],
                                     streams: [kept, Self.prompt(87, 3.5, 5.7)], end: 10)
        let first = try #require(report.summary.prompts.first { $0.stream == 80 })
        let second = try #require(report.summary.prompts.first { $0.stream == 87 })
        #expect(first.heard && first.start == 1.33 && (first.end ?? 9) <= 3.6 && first.sharedWith.isEmpty, "\(first)")
        #expect(second.heard && second.start == 3.5 && abs((second.end ?? 0) - 5.68) <= 0.011, "\(second)")
        #expect(second.sharedWith.isEmpty, "\(second)")
    }

    @Test("a prompt corked all through (cancelled while it waited) is not heard, though another prompt played on its sink meanwhile")
    func corkedAllThrough() throws {
        // Prompt 83 plays 0.0-1.0 s on the headset; prompt 84's stream, corked from its start at
        // 0.1 s, is cancelled at 0.6 s.
        let waiting = Self.prompt(84, 0.1, 0.6, corked: [Timed(0.1, true)])
        let headset = Self.timeline { $0 >= 0.1 && $0 < 0.9 ? -12 : nil }
        let report = ListeningReport(sinks: [("bt_headset", "bluetooth-a2dp", "bluetooth-a2dp", false, headset)],
                                     streams: [Self.prompt(83, 0.0, 1.0), waiting], end: 2)
        let entry = try #require(report.summary.prompts.first { $0.stream == 84 })
        #expect(!entry.heard && entry.corkedAllThrough && entry.start == nil, "\(entry)")
        // Nor does it count as mixed with the prompt that played.
        let played = try #require(report.summary.prompts.first { $0.stream == 83 })
        #expect(played.heard && played.sharedWith.isEmpty, "\(played)")
        let lines = LabSummary.lines(report)
        #expect(lines.contains("prompt (stream #84, duckprompt): NOT heard: its stream on bt_headset stayed corked all through"
                               + ": it never played (a prompt cancelled or dropped while it waited, or a stream kept ready and not used)"), "\(lines)")
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        #expect(String(decoding: try encoder.encode(entry), as: UTF8.self).contains("\"corked_all_through\":true"))
    }

    @Test("a prompt whose stream ended before the lab learned its sink: said so, not 'played on ' an empty name")
    func sinkNeverRead() throws {
        var prompt = Self.prompt(5, 0.0, 0.1)
        prompt.sinks = []
        let headset = Self.timeline { _ in nil }
        let report = ListeningReport(sinks: [("bt_headset", "bluetooth-a2dp", "bluetooth-a2dp", false, headset)],
                                     streams: [prompt], end: 1)
        let lines = LabSummary.lines(report)
        #expect(lines.first == "prompt (stream #5, duckprompt): NOT heard as far as the lab knows: it never learned which "
                + "sink the stream played on (it ended before the lab read it), so whether it was heard is unknown", "\(lines)")
        #expect(!lines.contains { $0.contains("played on ;") })
    }

    @Test("a stream a prompt left alone is not said to be restored after a later prompt that ducked it")
    func untouchedThenDucked() throws {
        // Prompt 5 from 0.0 to 1.0 s leaves the music alone (--duck 0dB); prompt 6 from 2.5 to
        // 3.5 s ducks it at 2.6 s and restores it at 3.6 s.
        let music = Self.music([Timed(-1.9, Self.full)] + Self.ramp(at: 2.6, from: 0, to: -20) + Self.ramp(at: 3.6, from: -20, to: 0))
        let speaker = Self.timeline { $0 >= 2.65 && $0 < 3.65 ? -43 : -23 }
        let headset = Self.timeline { ($0 >= 0.2 && $0 < 0.9) || ($0 >= 2.8 && $0 < 3.4) ? -12 : nil }
        let report = ListeningReport(sinks: [("speaker", "speaker", "speaker", true, speaker),
                                             ("bt_headset", "bluetooth-a2dp", "bluetooth-a2dp", false, headset)],
                                     streams: [music, Self.prompt(5, 0.0, 1.0), Self.prompt(6, 2.5, 3.5)], end: 5)
        let (first, second) = (report.summary.others[0], report.summary.others[1])
        #expect(first.volumeChangeDb == 0 && first.restored && first.restoredAt == nil && first.restoredAfterEntry == nil, "\(first)")
        #expect(second.volumeChangeDb == -20 && second.restored && second.restoredAfterEntry == 1, "\(second)")
        let lines = LabSummary.lines(report)
        #expect(lines.contains { $0.hasPrefix("music on speaker (stream #3, duckprompt lab) under prompt #5: volume untouched")
            && $0.hasSuffix("restored to exactly the volume it had") }, "\(lines)")
        #expect(!lines.contains { $0.contains("after prompt #6") }, "\(lines)")
    }

    @Test("a stream's properties are the latest it had; each later change is listed")
    func propertiesKeptCurrent() throws {
        let renamed = Self.prompt(7, 0.0, 1.4, propertyChanges: [
            Timed(0.5, ["application.name": "duckprompt", "media.role": "navigation", "duckprompt.prompt": "4242",
                        "media.name": "prompt2.wav", "pulse.attr.tlength": "9262"]),
            Timed(0.9, ["application.name": "duckprompt", "media.role": "navigation", "duckprompt.prompt": "4242",
                        "media.name": "prompt3.wav"]),
        ])
        let report = ListeningReport(sinks: [("bt_headset", "bluetooth-a2dp", "bluetooth-a2dp", false, Self.headsetTimeline)],
                                     streams: [renamed], end: 1.6)
        let stream = try #require(report.streams.first)
        #expect(stream.properties["media.name"] == "prompt3.wav" && stream.properties["pulse.attr.tlength"] == nil)
        #expect(stream.propertyChanges == [
            ListeningReport.PropertyChange(time: 0.5, changed: ["media.name": "prompt2.wav", "pulse.attr.tlength": "9262"], removed: []),
            ListeningReport.PropertyChange(time: 0.9, changed: ["media.name": "prompt3.wav"], removed: ["pulse.attr.tlength"]),
        ])
        #expect(renamed.properties(at: 0.2)["media.name"] == "prompt1.wav" && renamed.properties(at: 0.6)["media.name"] == "prompt2.wav")
        #expect(report.summary.prompts.first?.mediaName == "prompt1.wav")
    }

    @Test("a prompt not heard: silence recorded all through, or no samples from the monitor (a gap, holes, the recording ended), each said so", arguments: [
        ("silence", [LevelTimeline.Gap](), 5.0, "played on bt_headset but NOT heard on its monitor (recorded all through: silence)", [String](), 0.0),
        ("no samples", [LevelTimeline.Gap(start: 0.0, end: 1.6, reason: .noSamples)], 5.0,
         "played on bt_headset; NOT heard, but its monitor's recording has no samples for 1.40 s of it (no samples arrived): whether it was heard is unknown",
         ["no-samples"], 1.4),
        ("holes", [LevelTimeline.Gap(start: 0.3, end: 0.8, reason: .hole)], 5.0,
         "played on bt_headset; NOT heard, but its monitor's recording has no samples for 0.50 s of it (the server reported holes): whether it was heard is unknown",
         ["hole"], 0.5),
        ("the recording ended", [], 0.5,
         "played on bt_headset; NOT heard, but its monitor's recording has no samples for 1.00 s of it (the recording had not started or had ended): whether it was heard is unknown",
         ["not-recording"], 1.0),
    ])
    func unrecorded(_ what: String, gaps: [LevelTimeline.Gap], until: Double, line: String, reasons: [String], seconds: Double) throws {
        var headset = Self.timeline(until: until) { _ in nil }
        headset.gaps = gaps
        let report = ListeningReport(sinks: [("bt_headset", "bluetooth-a2dp", "bluetooth-a2dp", false, headset)],
                                     streams: [Self.prompt(5, 0.1, 1.4)], end: 2.0)
        let prompt = try #require(report.summary.prompts.first)
        #expect(!prompt.heard && prompt.unrecordedSeconds == seconds && prompt.unrecordedReasons == reasons, "\(what): \(prompt)")
        #expect(LabSummary.lines(report).first == "prompt (stream #5, duckprompt): \(line)", "\(what)")
    }

    @Test("a prompt whose stream was muted all through, recorded in silence: its volume is named")
    func silentVolume() throws {
        var muted = Self.prompt(5, 0.1, 1.4)
        muted.volumes = [Timed(0.1, VolumeState(volume: ChannelVolumes([65536, 65536]), mute: true))]
        let report = ListeningReport(sinks: [("bt_headset", "bluetooth-a2dp", "bluetooth-a2dp", false, Self.timeline { _ in nil })],
                                     streams: [muted], end: 2.0)
        #expect(report.summary.prompts.first?.silentVolume == true)
        #expect(LabSummary.lines(report).first?.hasSuffix("(recorded all through: silence; its stream's volume was muted or -inf dB)") == true)
    }

    @Test("no prompt stream: the summary says so")
    func noPrompt() {
        let report = ListeningReport(sinks: [], streams: [], end: 1)
        #expect(LabSummary.lines(report) == ["no prompt played (the command opened no stream, or only ones of media.role music, video, game, movie or production)"])
    }
}

@Suite("MonitorLevels placement")
struct MonitorPlacementTests {
    static let second: UInt64 = 1_000_000_000

    @Test("without timing answers every window follows the arrival bound")
    func arrivalBound() {
        let timeline = MonitorLevels.placed(levels: [-10, nil, -20], timings: [], origin: Int64(3 * Self.second), zero: 2 * Self.second)
        #expect(timeline.start == 1.0 && timeline.levels == [-10, nil, -20])
    }

    @Test("a sink suspended for 2 s: the windows after the pause go where the server's answers put them, the pause is silence")
    func pause() {
        // 10 windows heard from 0 s, then (the sink suspended, nothing sent) 10 more from 2.1 s.
        let levels: [Double?] = Array(repeating: -10, count: 10) + Array(repeating: -30, count: 10)
        let timings: [(nanoseconds: UInt64, frames: Double)] = [
            (Self.second / 20, 2400), (Self.second * 21 / 10 + Self.second / 20, 7200),
        ]
        let timeline = MonitorLevels.placed(levels: levels, timings: timings, origin: 0, zero: 0)
        #expect(abs(timeline.start) < 1e-9)
        #expect(timeline.levels.count == 220)
        #expect(timeline.levels[0..<10].allSatisfy { $0 == -10 })
        #expect(timeline.levels[10..<210].allSatisfy { $0 == nil })
        #expect(timeline.levels[210..<220].allSatisfy { $0 == -30 })
        #expect(timeline.heardStretches.map(\.start) == [0, 2.1])
    }

    @Test("windows that never arrived (a 0.5 s gap between the server's answers) and windows with holes are the timeline's gaps; a single empty slot is not")
    func gaps() {
        // 10 windows from 0 s; 10 more placed from 0.6 s (0.5 s of nothing between); window 15
        // got a hole; a single slot is skipped at 0.7 s.
        let levels: [Double?] = Array(repeating: -10, count: 20) + [-10]
        let holes = (0..<21).map { $0 == 15 }
        let timings: [(nanoseconds: UInt64, frames: Double)] = [
            (Self.second / 20, 2400), (Self.second * 6 / 10 + Self.second / 20, 7200), (Self.second * 71 / 100, 9600),
        ]
        let timeline = MonitorLevels.placed(levels: levels, holes: holes, timings: timings, origin: 0, zero: 0)
        #expect(timeline.gaps.map(\.reason) == [.noSamples, .hole], "\(timeline.gaps)")
        #expect(abs(timeline.gaps[0].start - 0.1) < 1e-9 && abs(timeline.gaps[0].end - 0.6) < 1e-9)
        #expect(abs(timeline.gaps[1].start - 0.65) < 1e-9 && abs(timeline.gaps[1].end - 0.66) < 1e-9)
        let missing = timeline.unrecorded(from: -0.1, to: 1.0)
        #expect(missing.map(\.reason) == [.notRecording, .noSamples, .hole, .notRecording], "\(missing)")
        #expect(abs(missing[3].start - timeline.end) < 1e-9 && abs(timeline.end - 0.72) < 1e-9)
    }

    @Test("an answer that places the recording 40 ms later than its arrival bound moves every window 40 ms")
    func shifted() {
        let timings: [(nanoseconds: UInt64, frames: Double)] = [(Self.second + 40_000_000, 48_000)]
        let timeline = MonitorLevels.placed(levels: [-10, -10], timings: timings, origin: 0, zero: 0)
        #expect(abs(timeline.start - 0.04) < 1e-9 && timeline.levels == [-10, -10])
    }
}
