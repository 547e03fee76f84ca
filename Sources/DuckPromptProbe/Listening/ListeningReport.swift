import DuckPrompt

/// What a lab run heard: `duckprompt lab --report FILE` writes it as JSON (Docs/lab.md gives
/// every field). Built by `ListeningReport.init(sinks:streams:end:)`, a pure function of the
/// monitors' levels and the stream log, so it is tested by tables.
/// Times are seconds on the lab's clock: 0 is the instant COMMAND was started.
package struct ListeningReport: Sendable, Codable, Equatable {
    /// Set by the lab: which server, its name and version, the command and how it ended.
    package var server = ""
    package var serverName = ""
    package var serverVersion = ""
    package var command: [String] = []
    /// COMMAND's exit status (128 + N for signal N; nil when it did not end by itself).
    package var exitStatus: Int32?
    package var timedOut = false
    /// Whether the lab recorded the monitors and logged the streams (false for `--no-listen`:
    /// `sinks`, `streams` and the summary are then empty).
    package var listened = true
    /// The pid of each process the lab started (`dbus-daemon`, the servers, `command`): all
    /// stopped when the lab exits.
    package var processes: [String: Int32] = [:]
    /// When the recordings ended.
    package var end: Double
    /// Windows are 10 ms; a window above this level (dBFS RMS) was heard.
    package var windowMs = 10
    package var heardThresholdDbfs = LevelTimeline.heardThreshold
    package var sinks: [SinkLevels]
    package var streams: [Stream]
    package var summary: Summary

    /// One sink: what it was made to be and what its monitor heard.
    package struct SinkLevels: Sendable, Codable, Equatable {
        package var name: String
        /// The kind the lab emulated (`--device`), nil for a sink it did not make.
        package var emulatedKind: String?
        /// The kind duckprompt's classifier gives it.
        package var classifiedKind: String?
        package var isDefault: Bool
        /// When the first window began.
        package var timelineStart: Double
        /// RMS level of each 10 ms window, dBFS; null for digital silence.
        package var levelsDbfs: [Double?]
        /// The stretches in which sound was heard (`LevelTimeline.heardStretches`).
        package var heard: [Span]
    }

    /// A stretch of time, with the median level heard in it.
    package struct Span: Sendable, Codable, Equatable {
        package var start: Double
        package var end: Double
        package var levelDbfs: Double
    }

    /// One sink-input that played during the run.
    package struct Stream: Sendable, Codable, Equatable {
        package var index: UInt32
        /// `prompt`, `lab-music` or `other` (`ListeningReport.role(of:duckpromptRun:)`).
        package var role: String
        package var sink: String
        package var properties: [String: String]
        package var start: Double
        /// Nil when it still played when the recordings ended.
        package var end: Double?
        /// Each sink it moved to, from then on.
        package var moves: [Move]
        /// Its volume over time: the first is what it started with.
        package var volumes: [Volume]
    }

    package struct Move: Sendable, Codable, Equatable {
        package var time: Double
        package var sink: String
    }

    package struct Volume: Sendable, Codable, Equatable {
        package var time: Double
        /// Each channel in dB (`pa_sw_volume_to_dB`); null for a silent channel (-inf).
        package var db: [Double?]
        /// Each channel's `pa_volume_t` (65536 = 0 dB), exact.
        package var raw: [UInt32]
        package var mute: Bool
    }

    /// The two lines a test asserts on.
    package struct Summary: Sendable, Codable, Equatable {
        package var prompts: [PromptHeard]
        package var others: [OtherStream]
    }

    /// A prompt: where and when it was heard, and how loud.
    package struct PromptHeard: Sendable, Codable, Equatable {
        package var stream: UInt32
        package var sink: String
        package var heard: Bool
        /// The heard stretch on its sink within its life (nil when not heard).
        package var start: Double?
        package var end: Double?
        package var levelDbfs: Double?
        /// Other streams that played on its sink meanwhile: its level is their mix.
        package var sharedWith: [UInt32]
        /// Its stream was still open when the run ended (COMMAND stopped at `--timeout` or by
        /// a signal, or a client that keeps its stream): what was heard may be only a part.
        package var openAtEnd = false
    }

    /// Another stream that played while a prompt did: how far it went down, and whether it
    /// came back to exactly the volume it had.
    package struct OtherStream: Sendable, Codable, Equatable {
        package var stream: UInt32
        package var role: String
        package var mediaRole: String?
        package var sink: String
        /// The prompt it is measured against.
        package var prompt: UInt32
        /// Its loudest channel just before the prompt, in dB.
        package var volumeBeforeDb: Double?
        /// The lowest its loudest channel went while the prompt played, minus the volume
        /// before, in dB (0 when untouched, -20 for the default duck).
        package var volumeChangeDb: Double?
        /// Its sink's monitor over the prompt's second half minus over the second before the
        /// prompt, in dB (median levels); nil when the prompt played on the same sink.
        package var levelChangeDb: Double?
        /// Its last volume (at its end, or when the recordings ended) equals, channel by
        /// channel and mute too, the one it had before the prompt.
        package var restored: Bool
        /// Its stream was corked (`pa_sink_input_info.corked`) all through what was heard of
        /// the prompt: its player was paused, as duckprompt pauses spoken word.
        package var paused = false
    }

    /// Roles of the media a duck leaves alone as "others"; a stream of COMMAND with any other
    /// role, or none, is a prompt (when no stream of the run is a duckprompt prompt).
    package static let nonPromptRoles: Set<String> = ["music", "video", "game", "movie", "production"]

    /// The property duckprompt marks its prompt streams with (`duckprompt.prompt`, its pid),
    /// and the one of its saved-volume repair streams (`duckprompt.repair`).
    package static let duckpromptPromptProperty = "duckprompt.prompt"
    package static let duckpromptRepairProperty = "duckprompt.repair"

    /// How the report counts `stream`: `lab-music` (the lab's own music); `lab` (the lab's
    /// recorders) and `repair` (a duckprompt saved-volume repair: silent) are not shown. In a
    /// run that played a duckprompt prompt (`duckpromptRun`: a stream with
    /// `duckprompt.prompt`), those are the prompts and every other stream is `other` (a podcast
    /// it paused too); else, for a program that does not use duckprompt, a stream whose
    /// `media.role` is music, video, game, movie or production is `other`, and any other a
    /// `prompt`.
    package static func role(of stream: StreamRecord, duckpromptRun: Bool) -> String {
        if stream.isLabMusic { return "lab-music" }
        if stream.properties[StreamLog.labProperty] != nil { return "lab" }
        if stream.properties[duckpromptRepairProperty] != nil { return "repair" }
        if duckpromptRun { return stream.properties[duckpromptPromptProperty] != nil ? "prompt" : "other" }
        if let role = stream.properties["media.role"], nonPromptRoles.contains(role.lowercased()) { return "other" }
        return "prompt"
    }

    /// Builds the report of a run from what each monitor heard and the stream log.
    /// - Parameters:
    ///   - sinks: each sink's name, emulated and classified kind, whether it was the default,
    ///     and its monitor's levels.
    ///   - streams: every sink-input seen (`StreamLog.streams`).
    ///   - end: when the recordings ended, on the lab's clock.
    package init(sinks: [(name: String, emulatedKind: String?, classifiedKind: String?, isDefault: Bool, timeline: LevelTimeline)],
                 streams: [StreamRecord], end: Double) {
        self.end = Self.rounded(end, 3)
        let timelines = Dictionary(sinks.map { ($0.name, $0.timeline) }, uniquingKeysWith: { a, _ in a })
        self.sinks = sinks.map { sink in
            SinkLevels(name: sink.name, emulatedKind: sink.emulatedKind, classifiedKind: sink.classifiedKind,
                       isDefault: sink.isDefault, timelineStart: Self.rounded(sink.timeline.start, 3),
                       levelsDbfs: sink.timeline.levels.map { $0.map { Self.rounded($0, 2) } },
                       heard: sink.timeline.heardStretches.map(Self.span))
        }
        let duckpromptRun = streams.contains { $0.properties[Self.duckpromptPromptProperty] != nil }
        let role = { (stream: StreamRecord) in Self.role(of: stream, duckpromptRun: duckpromptRun) }
        let shown = streams.filter { !["lab", "repair"].contains(role($0)) }
        self.streams = shown.map { stream in
            Stream(index: stream.index, role: role(stream), sink: stream.sink, properties: stream.properties,
                   start: Self.rounded(stream.start, 3), end: stream.end.map { Self.rounded($0, 3) },
                   moves: stream.sinks.dropFirst().map { Move(time: Self.rounded($0.time, 3), sink: $0.value) },
                   volumes: stream.volumes.map {
                       Volume(time: Self.rounded($0.time, 3), db: $0.value.decibels.map { Self.finite($0).map { Self.rounded($0, 3) } },
                              raw: $0.value.volume.values, mute: $0.value.mute)
                   })
        }
        let prompts = shown.filter { role($0) == "prompt" }
        let others = shown.filter { role($0) != "prompt" }
        let heard = prompts.map { Self.heard($0, timelines: timelines, streams: shown, end: end) }
        summary = Summary(
            prompts: heard,
            others: zip(prompts, heard).flatMap { prompt, heard in
                others.filter { Self.overlap($0, prompt, end: end) }
                    .map { Self.measure($0, role: role($0), during: prompt, heard: heard, timelines: timelines,
                                        prompts: prompts, end: end) }
            })
    }

    /// Whether `a` and `b` played at the same time.
    private static func overlap(_ a: StreamRecord, _ b: StreamRecord, end: Double) -> Bool {
        a.start < (b.end ?? end) && (a.end ?? end) > b.start
    }

    /// Where and how loud `prompt` was heard: the heard stretches of its sink within its life
    /// (plus 100 ms, for the audio the sink still held when the stream went away).
    private static func heard(_ prompt: StreamRecord, timelines: [String: LevelTimeline], streams: [StreamRecord],
                              end: Double) -> PromptHeard {
        let stop = min(end, (prompt.end ?? end) + 0.1)
        let shared = streams.filter { $0.index != prompt.index && $0.sink == prompt.sink && overlap($0, prompt, end: end) }
            .map(\.index)
        guard let timeline = timelines[prompt.sink] else {
            return PromptHeard(stream: prompt.index, sink: prompt.sink, heard: false, sharedWith: shared, openAtEnd: prompt.end == nil)
        }
        let within = timeline.heardStretches.compactMap { stretch -> LevelTimeline.Stretch? in
            let start = max(stretch.start, prompt.start), stretchEnd = min(stretch.end, stop)
            return start < stretchEnd ? LevelTimeline.Stretch(start: start, end: stretchEnd, level: stretch.level) : nil
        }
        guard let first = within.first, let last = within.last else {
            return PromptHeard(stream: prompt.index, sink: prompt.sink, heard: false, sharedWith: shared, openAtEnd: prompt.end == nil)
        }
        let levels = (timeline.window(at: first.start)...max(timeline.window(at: first.start), timeline.window(at: last.end) - 1))
            .compactMap { $0 >= 0 && $0 < timeline.levels.count ? timeline.levels[$0] : nil }
            .filter { $0 > LevelTimeline.heardThreshold }
        return PromptHeard(stream: prompt.index, sink: prompt.sink, heard: true, start: rounded(first.start, 3),
                           end: rounded(last.end, 3), levelDbfs: LevelTimeline.median(levels).map { rounded($0, 2) },
                           sharedWith: shared, openAtEnd: prompt.end == nil)
    }

    /// How `other` fared while `prompt` played: from the prompt stream's start to the end of
    /// what was heard of it (a stream kept open after its audio, as a held prompter keeps its
    /// last one ready, does not stretch the duck's measure), or to its end when nothing was.
    private static func measure(_ other: StreamRecord, role: String, during prompt: StreamRecord, heard: PromptHeard,
                                timelines: [String: LevelTimeline], prompts: [StreamRecord], end: Double) -> OtherStream {
        let promptEnd = heard.end ?? prompt.end ?? end
        let promptStart = heard.start ?? prompt.start
        let before = other.volume(at: prompt.start)
        let during = other.volumes.filter { $0.time >= prompt.start && $0.time <= promptEnd }.map(\.value)
        let lowest = ([before].compactMap { $0 } + during).map(\.loudestDecibels).min()
        var levelChange: Double?
        let promptOnSink = prompts.contains { $0.sink == other.sink && overlap($0, prompt, end: end) }
        if !promptOnSink, let timeline = timelines[other.sink] {
            let half = promptStart + (promptEnd - promptStart) / 2
            if let was = timeline.medianLevel(from: prompt.start - 1, to: prompt.start),
               let then = timeline.medianLevel(from: half, to: promptEnd) {
                levelChange = rounded(then - was, 2)
            }
        }
        let beforeDb = before.map(\.loudestDecibels).flatMap(finite)
        return OtherStream(stream: other.index, role: role, mediaRole: other.properties["media.role"],
                           sink: other.sink, prompt: prompt.index, volumeBeforeDb: beforeDb.map { rounded($0, 2) },
                           volumeChangeDb: both(lowest.flatMap(finite), beforeDb).map { rounded($0 - $1, 2) },
                           levelChangeDb: levelChange,
                           restored: before != nil && other.volumes.last?.value == before,
                           paused: other.corked(from: promptStart, to: promptEnd))
    }

    private static func span(_ stretch: LevelTimeline.Stretch) -> Span {
        Span(start: rounded(stretch.start, 3), end: rounded(stretch.end, 3), levelDbfs: rounded(stretch.level, 2))
    }

    private static func finite(_ value: Double) -> Double? { value.isFinite ? value : nil }

    private static func rounded(_ value: Double, _ places: Int) -> Double {
        let scale = places == 3 ? 1000.0 : 100.0
        return (value * scale).rounded() / scale
    }
}

private func both(_ a: Double?, _ b: Double?) -> (Double, Double)? {
    guard let a, let b else { return nil }
    return (a, b)
}
