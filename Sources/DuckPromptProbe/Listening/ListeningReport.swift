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
        /// The stretches of the run the recording has no samples for (`LevelTimeline.Gap`):
        /// holes, windows that never arrived, and before its first or after its last window.
        package var unrecorded: [Gap] = []
    }

    /// A stretch the monitor's recording has no samples for, and why (`LevelTimeline.Gap.Reason`:
    /// `hole`, `no-samples`, `not-recording`).
    package struct Gap: Sendable, Codable, Equatable {
        package var start: Double
        package var end: Double
        package var reason: String
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
        /// Its properties as last seen (at its end, or when the recordings ended).
        package var properties: [String: String]
        /// Each later change of its properties: what a client set (`pa_stream_proplist_update`)
        /// after creating it. Empty when they never changed.
        package var propertyChanges: [PropertyChange] = []
        /// Its cork state over time (`pa_sink_input_info.corked`): the first is what it started
        /// with.
        package var corked: [Cork] = []
        package var start: Double
        /// Nil when it still played when the recordings ended.
        package var end: Double?
        /// Each sink it moved to, from then on.
        package var moves: [Move]
        /// Its volume over time: the first is what it started with.
        package var volumes: [Volume]
    }

    /// Properties that changed at `time`: the new values (`changed`) and the names removed.
    package struct PropertyChange: Sendable, Codable, Equatable {
        package var time: Double
        package var changed: [String: String]
        package var removed: [String]
    }

    package struct Cork: Sendable, Codable, Equatable {
        package var time: Double
        package var corked: Bool
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

    /// A prompt: where and when it was heard, and how loud. One a prompt stream, or one per
    /// uncorked span of a stream that played several prompts (a held prompter's kept stream).
    package struct PromptHeard: Sendable, Codable, Equatable {
        package var stream: UInt32
        package var sink: String
        /// The stretch of its stream's life this entry covers: all of it, or, for a stream that
        /// was uncorked several times, from the cork that ended the prompt before (the start,
        /// for the first) to the cork that ended this one (its end, for the last).
        package var spanStart: Double = 0
        package var spanEnd: Double?
        /// Which of its stream's prompts it is (1-based) and how many it played: 1 of 1 for a
        /// stream of one prompt.
        package var part = 1
        package var parts = 1
        /// Its stream's `media.name` when it began to play, read up to `samePromptSeconds` after
        /// (a held stream is renamed for each prompt, the rename read just before or after).
        package var mediaName: String?
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
        /// How much of the stretch it was listened for (`span_start`, or its uncork, to 100 ms
        /// after `span_end`) its sink's monitor has no samples for, in seconds, and why
        /// (`Gap.reason`s). Not heard with this above 0 is not known to be silent.
        package var unrecordedSeconds = 0.0
        package var unrecordedReasons: [String] = []
        /// Its stream's volume was muted or -inf dB all through: silent by its volume.
        package var silentVolume = false
        /// Its stream was corked all through, so it never played (a prompt cancelled or dropped
        /// while it waited, or a stream kept ready and not used): not heard, whatever else its
        /// sink played meanwhile.
        package var corkedAllThrough = false
    }

    /// Another stream that played while a prompt did: how far it went down, and whether it
    /// came back to exactly the volume it had.
    package struct OtherStream: Sendable, Codable, Equatable {
        package var stream: UInt32
        package var role: String
        package var mediaRole: String?
        package var sink: String
        /// The prompt it is measured against: its stream, and its place in `summary.prompts`.
        package var prompt: UInt32
        package var promptEntry = 0
        /// The baseline `volume_before_db` and the monitor's "before" are taken at: the start of
        /// the first prompt of a run of ducks this one belongs to (`baselineEntry`, its place in
        /// `summary.prompts`; this prompt's own when the run began with it). A prompt joins the
        /// run of the one before when this stream's volume, at its start, was not back at the
        /// run's baseline, or changed in the second before (a duck handed over, or released
        /// just before): the duck began under an earlier prompt (`carriedOver`).
        package var baselineTime = 0.0
        package var baselineEntry = 0
        package var carriedOver = false
        /// Carried over without its volume being back up (as loud as at the baseline) at any
        /// time since the prompt before began to play: the duck was handed over.
        package var handedOver = false
        /// When its volume was first back at the baseline from this prompt's start on (nil:
        /// never), and after which prompt (`summary.prompts` place: the last to begin before).
        package var restoredAt: Double?
        package var restoredAfterEntry: Int?
        /// Its loudest channel just before the prompt, in dB.
        package var volumeBeforeDb: Double?
        /// The lowest its loudest channel went while the prompt played, minus the volume
        /// before (at `baselineTime`), in dB (0 when untouched, -20 for the default duck).
        package var volumeChangeDb: Double?
        /// Its sink's monitor over the prompt's second half minus over the second before
        /// `baselineTime`, in dB (median levels); nil when a prompt played on the same sink.
        package var levelChangeDb: Double?
        /// Its last volume (at its end, or when the recordings ended) equals, channel by
        /// channel and mute too, the one it had at `baselineTime`.
        package var restored: Bool
        /// Its stream was corked (`pa_sink_input_info.corked`) all through what was heard of
        /// the prompt: its player was paused, as duckprompt pauses spoken word.
        package var paused = false
    }

    /// Roles of the media a duck leaves alone as "others"; a stream of COMMAND with any other
    /// role, or none, is a prompt (when no stream of the run is a duckprompt prompt).
    package static let nonPromptRoles: Set<String> = ["music", "video", "game", "movie", "production"]

    /// The property duckprompt marks its prompt streams with (`duckprompt.prompt`, its pid),
    /// the one of its saved-volume repair streams (`duckprompt.repair`), and the one of its
    /// keep-awake silence (`SinkKeeper.property`).
    package static let duckpromptPromptProperty = "duckprompt.prompt"
    package static let duckpromptRepairProperty = "duckprompt.repair"

    /// How the report counts `stream`: `lab-music` (the lab's own music); `lab` (the lab's
    /// recorders), `repair` (a duckprompt saved-volume repair: silent) and `keep-awake` (its
    /// keep-awake silence, `play --keep-awake`) are not shown. In a
    /// run that played a duckprompt prompt (`duckpromptRun`: a stream with
    /// `duckprompt.prompt`), those are the prompts and every other stream is `other` (a podcast
    /// it paused too); else, for a program that does not use duckprompt, a stream whose
    /// `media.role` is music, video, game, movie or production is `other`, and any other a
    /// `prompt`.
    package static func role(of stream: StreamRecord, duckpromptRun: Bool) -> String {
        if stream.isLabMusic { return "lab-music" }
        if stream.properties[StreamLog.labProperty] != nil { return "lab" }
        if stream.properties[duckpromptRepairProperty] != nil { return "repair" }
        if stream.properties[SinkKeeper.property] != nil { return "keep-awake" }
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
                       heard: sink.timeline.heardStretches.map(Self.span),
                       unrecorded: Self.gaps(sink.timeline.unrecorded(from: sink.timeline.start, to: end)))
        }
        let duckpromptRun = streams.contains { $0.properties[Self.duckpromptPromptProperty] != nil }
        let role = { (stream: StreamRecord) in Self.role(of: stream, duckpromptRun: duckpromptRun) }
        let shown = streams.filter { !["lab", "repair", "keep-awake"].contains(role($0)) }
        self.streams = shown.map { stream in
            Stream(index: stream.index, role: role(stream), sink: stream.sink, properties: stream.properties,
                   propertyChanges: zip(stream.propertyChanges, stream.propertyChanges.dropFirst()).map { was, now in
                       PropertyChange(time: Self.rounded(now.time, 3), changed: now.value.filter { was.value[$0.key] != $0.value },
                                      removed: was.value.keys.filter { now.value[$0] == nil }.sorted())
                   },
                   corked: stream.corked.map { Cork(time: Self.rounded($0.time, 3), corked: $0.value) },
                   start: Self.rounded(stream.start, 3), end: stream.end.map { Self.rounded($0, 3) },
                   moves: stream.sinks.dropFirst().map { Move(time: Self.rounded($0.time, 3), sink: $0.value) },
                   volumes: stream.volumes.map {
                       Volume(time: Self.rounded($0.time, 3), db: $0.value.decibels.map { Self.finite($0).map { Self.rounded($0, 3) } },
                              raw: $0.value.volume.values, mute: $0.value.mute)
                   })
        }
        let plays = shown.filter { role($0) == "prompt" }.flatMap { Self.plays(of: $0, end: end) }
        let others = shown.filter { role($0) != "prompt" }
        let heard = plays.indices.map { i in
            Self.heard(plays[i], until: plays[(i + 1)...].first { $0.stream.index == plays[i].stream.index }?.playing,
                       timelines: timelines, streams: shown, end: end)
        }
        let runs = Dictionary(others.map { other in (other.index, Self.runs(of: other, plays: plays, end: end)) },
                              uniquingKeysWith: { a, _ in a })
        summary = Summary(
            prompts: heard,
            others: plays.indices.flatMap { i in
                others.filter { Self.overlap($0, plays[i], end: end) }
                    .map { Self.measure($0, role: role($0), during: i, plays: plays, heard: heard, runs: runs[$0.index] ?? [:],
                                        timelines: timelines, end: end) }
            })
    }

    /// Beginnings of a held stream's prompts closer than this (seconds) are one (`plays`).
    static let samePromptSeconds = 0.1

    /// One prompt as the report counts them: a prompt stream, or one uncorked span of one that
    /// played several (`plays(of:end:)`).
    struct Play {
        var stream: StreamRecord
        /// The stretch of the stream's life it covers (nil `to`: open at the end).
        var from: Double
        var to: Double?
        /// When it began to play: `from` for the first of a stream, its uncork for a later one.
        var playing: Double
        var part: Int
        var parts: Int
    }

    /// A stream's prompts: one per uncorked span when it was uncorked more than once (a held
    /// prompter's kept stream, corked between its prompts), each from the cork that ended the
    /// one before, else its whole life. A `media.name` change while it played, no cork seen
    /// since its uncork, begins a prompt too (at the change): a held stream renamed for its next
    /// prompt and uncorked again before the lab read its cork. Beginnings less than
    /// `samePromptSeconds` apart are one (a rename read just before the cork or just after the
    /// uncork of the same change of prompt): the first's `from`, the last uncork's time.
    static func plays(of stream: StreamRecord, end: Double) -> [Play] {
        var found: [(playing: Double, from: Double, uncork: Bool)] = []
        var lastCork = stream.start
        var corked: Bool?
        var changes = stream.propertyChanges.dropFirst()[...]
        var name = stream.propertyChanges.first?.value["media.name"]
        for change in stream.corked {
            // Renamed while playing, up to this cork change.
            while let next = changes.first, next.time < change.time {
                changes = changes.dropFirst()
                if next.value["media.name"] != name, corked == false { found.append((next.time, next.time, false)) }
                name = next.value["media.name"]
            }
            if change.value { lastCork = change.time }
            if !change.value, corked != false { found.append((change.time, lastCork, true)) }
            corked = change.value
        }
        for next in changes {
            if next.value["media.name"] != name, corked == false { found.append((next.time, next.time, false)) }
            name = next.value["media.name"]
        }
        var starts: [(playing: Double, from: Double, uncork: Bool)] = []
        for start in found {
            if let last = starts.last, start.playing - last.playing < samePromptSeconds {
                starts[starts.count - 1] = (start.uncork || !last.uncork ? start.playing : last.playing,
                                            min(last.from, start.from), last.uncork || start.uncork)
            } else {
                starts.append(start)
            }
        }
        guard starts.count > 1 else {
            return [Play(stream: stream, from: stream.start, to: stream.end, playing: stream.start, part: 1, parts: 1)]
        }
        return starts.indices.map { i in
            Play(stream: stream, from: i == 0 ? stream.start : starts[i].from,
                 to: i + 1 < starts.count ? starts[i + 1].from : stream.end,
                 playing: i == 0 ? stream.start : starts[i].playing, part: i + 1, parts: starts.count)
        }
    }

    /// Whether `a` and `b` played at the same time.
    private static func overlap(_ a: StreamRecord, _ b: StreamRecord, end: Double) -> Bool {
        a.start < (b.end ?? end) && (a.end ?? end) > b.start
    }

    private static func overlap(_ stream: StreamRecord, _ play: Play, end: Double) -> Bool {
        stream.start < (play.to ?? end) && (stream.end ?? end) > play.from
    }

    /// Where and how loud `play` was heard: the heard stretches of its sink from when it began
    /// to play to its end plus 100 ms (the audio the sink still held when the stream went away
    /// or was corked), but not past `until` (the next prompt of its stream began to play).
    private static func heard(_ play: Play, until: Double?, timelines: [String: LevelTimeline], streams: [StreamRecord],
                              end: Double) -> PromptHeard {
        let prompt = play.stream
        // A stream corked after it played and kept open so (the service's kept stream, corked
        // between prompts) plays nothing after that cork: what its sink played later is others'.
        let corkedAfter = prompt.corked.last.flatMap { last in last.value && last.time >= play.playing ? last.time : nil }
        let stop = min(end, (play.to ?? end) + 0.1, until ?? .infinity, (corkedAfter ?? .infinity) + 0.1)
        // Streams that played on its sink while it could be heard: one corked all the while
        // added nothing.
        let audibleEnd = min(play.to ?? end, corkedAfter ?? .infinity)
        let shared = streams.filter { other in
            other.index != prompt.index && other.sink == prompt.sink
                && other.start < audibleEnd && (other.end ?? end) > play.playing
                && !other.corked(from: max(other.start, play.playing), to: min(other.end ?? end, audibleEnd))
        }.map(\.index)
        let silent = !prompt.volumes.isEmpty && prompt.volumes.allSatisfy { $0.value.loudestDecibels == -.infinity }
        var entry = PromptHeard(stream: prompt.index, sink: prompt.sink, spanStart: rounded(play.from, 3),
                                spanEnd: play.to.map { rounded($0, 3) }, part: play.part, parts: play.parts,
                                mediaName: prompt.properties(at: min(play.playing + samePromptSeconds, play.to ?? .infinity))["media.name"], heard: false,
                                sharedWith: shared, openAtEnd: play.to == nil, silentVolume: silent)
        // A stream corked from before it could play to its end gave its sink nothing: the
        // sound there was others'.
        if prompt.corked(from: play.playing, to: play.to ?? end) {
            entry.corkedAllThrough = true
            return entry
        }
        guard let timeline = timelines[prompt.sink] else {
            entry.unrecordedSeconds = rounded(max(0, stop - play.playing), 3)
            entry.unrecordedReasons = [LevelTimeline.Gap.Reason.notRecording.rawValue]
            return entry
        }
        let missing = timeline.unrecorded(from: play.playing, to: stop)
        entry.unrecordedSeconds = rounded(missing.reduce(0) { $0 + $1.end - $1.start }, 3)
        entry.unrecordedReasons = missing.reduce(into: [String]()) { reasons, gap in
            if !reasons.contains(gap.reason.rawValue) { reasons.append(gap.reason.rawValue) }
        }
        let within = timeline.heardStretches.compactMap { stretch -> LevelTimeline.Stretch? in
            let start = max(stretch.start, play.playing), stretchEnd = min(stretch.end, stop)
            return start < stretchEnd ? LevelTimeline.Stretch(start: start, end: stretchEnd, level: stretch.level) : nil
        }
        guard let first = within.first, let last = within.last else { return entry }
        let levels = (timeline.window(at: first.start)...max(timeline.window(at: first.start), timeline.window(at: last.end) - 1))
            .compactMap { $0 >= 0 && $0 < timeline.levels.count ? timeline.levels[$0] : nil }
            .filter { $0 > LevelTimeline.heardThreshold }
        entry.heard = true
        entry.start = rounded(first.start, 3)
        entry.end = rounded(last.end, 3)
        entry.levelDbfs = LevelTimeline.median(levels).map { rounded($0, 2) }
        return entry
    }

    /// `other`'s runs of ducks: for each prompt it played through (by place in `plays`), the
    /// place of the first prompt of its run and the run's baseline time. The first prompt (by
    /// when it began to play) begins a run at its `from`. A later one begins a run of its own
    /// when `other`'s volume did not change since the run's baseline time, or was back up (at
    /// least as loud as at the run's baseline) and held for at least a second, after the prompt
    /// before began and by when this one began to play (its baseline is then the end of that
    /// second, or its `from` if later); else the duck it played under began under an earlier
    /// prompt, and it joins that run.
    static func runs(of other: StreamRecord, plays: [Play], end: Double) -> [Int: (first: Int, baseline: Double)] {
        let order = plays.indices.filter { overlap(other, plays[$0], end: end) }.sorted { plays[$0].playing < plays[$1].playing }
        let steps = other.volumes.filter { $0.time > other.start }.map(\.time)
        var runs: [Int: (first: Int, baseline: Double)] = [:]
        var current: (first: Int, baseline: Double)?
        var previous: Play?
        for i in order {
            let play = plays[i]
            defer { previous = play }
            guard let run = current, let previous else {
                current = (i, play.from)
                runs[i] = current
                continue
            }
            if !steps.contains(where: { $0 > run.baseline && $0 <= play.playing }) {
                current = (i, play.from)
            } else if let baseline = steadySecond(in: other.volumes, atLeast: other.volume(at: run.baseline),
                                                  after: previous.playing, before: play) {
                current = (i, baseline)
            }
            runs[i] = current
        }
        return runs
    }

    /// The latest time a stream's volume (`volumes`) had held for a second at least as loud as
    /// `level`, no earlier than `play.from` unless its next change came first, within a stretch
    /// that began after `after` and by `play.playing`; nil when there is none.
    private static func steadySecond(in volumes: [Timed<VolumeState>], atLeast level: VolumeState?, after: Double,
                                     before play: Play) -> Double? {
        let times = volumes.map(\.time)
        for j in times.indices.reversed() where times[j] > after && times[j] <= play.playing
            && volumes[j].value.loudestDecibels >= (level?.loudestDecibels ?? -.infinity) - 0.01 {
            let next = j + 1 < times.count ? times[j + 1] : .infinity
            let baseline = min(next, max(play.from, times[j] + 1))
            if baseline - times[j] >= 1 - 1e-9 && baseline <= play.playing + 1e-9 { return baseline }
        }
        return nil
    }

    /// How `other` fared while the prompt at `index` of `plays` played: from the prompt's
    /// `from` to the end of what was heard of it (a stream kept open after its audio, as a
    /// held prompter keeps its last one ready, does not stretch the duck's measure), or to its
    /// end when nothing was; against `other`'s volume and monitor level at its run of ducks'
    /// baseline time (`runs(of:plays:end:)`).
    private static func measure(_ other: StreamRecord, role: String, during index: Int, plays: [Play], heard: [PromptHeard],
                                runs: [Int: (first: Int, baseline: Double)], timelines: [String: LevelTimeline],
                                end: Double) -> OtherStream {
        let play = plays[index], prompt = play.stream
        let promptEnd = heard[index].end ?? play.to ?? end
        let promptStart = heard[index].start ?? play.playing
        let first = runs[index]?.first ?? index
        let baselineTime = runs[index]?.baseline ?? play.from
        let before = other.volume(at: baselineTime)
        let during = ([other.volume(at: play.from)].compactMap { $0 }
                      + other.volumes.filter { $0.time >= play.from && $0.time <= promptEnd }.map(\.value))
        let lowest = ([before].compactMap { $0 } + during).map(\.loudestDecibels).min()
        var levelChange: Double?
        let promptOnSink = plays.contains { $0.stream.sink == other.sink && overlap($0.stream, play, end: end) }
        if !promptOnSink, let timeline = timelines[other.sink] {
            let half = promptStart + (promptEnd - promptStart) / 2
            if let was = timeline.medianLevel(from: baselineTime - 1, to: baselineTime),
               let then = timeline.medianLevel(from: half, to: promptEnd) {
                levelChange = rounded(then - was, 2)
            }
        }
        // Back at its baseline after it left it by the prompt's end (its own duck, or one carried
        // over): a stream this prompt left alone was restored by nothing, whatever a later
        // prompt did to it.
        let restoredAt = before.flatMap { baseline in
            other.volumes.first { $0.time > baselineTime && $0.time <= promptEnd && $0.value != baseline }.flatMap { left in
                other.volumes.first { $0.time > max(left.time, play.playing) && $0.value == baseline }?.time
            }
        }
        let restoredAfter = restoredAt.flatMap { time in
            plays.indices.filter { runs[$0] != nil && plays[$0].playing < time }.max { plays[$0].playing < plays[$1].playing }
        }
        let previous = plays.indices.filter { runs[$0] != nil && plays[$0].playing < play.playing }
            .max { plays[$0].playing < plays[$1].playing }
        let backUp = previous.map { previous in
            other.volumes.contains { volume in
                volume.time > plays[previous].playing && volume.time <= play.playing
                    && volume.value.loudestDecibels >= (before?.loudestDecibels ?? -.infinity) - 0.01
            }
        } ?? true
        let beforeDb = before.map(\.loudestDecibels).flatMap(finite)
        return OtherStream(stream: other.index, role: role, mediaRole: other.properties["media.role"],
                           sink: other.sink, prompt: prompt.index, promptEntry: index,
                           baselineTime: rounded(baselineTime, 3), baselineEntry: first, carriedOver: first != index,
                           handedOver: first != index && !backUp,
                           restoredAt: restoredAt.map { rounded($0, 3) }, restoredAfterEntry: restoredAfter,
                           volumeBeforeDb: beforeDb.map { rounded($0, 2) },
                           volumeChangeDb: both(lowest.flatMap(finite), beforeDb).map { rounded($0 - $1, 2) },
                           levelChangeDb: levelChange,
                           restored: before != nil && other.volumes.last?.value == before,
                           paused: other.corked(from: promptStart, to: promptEnd))
    }

    private static func gaps(_ gaps: [LevelTimeline.Gap]) -> [Gap] {
        gaps.map { Gap(start: rounded($0.start, 3), end: rounded($0.end, 3), reason: $0.reason.rawValue) }
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
