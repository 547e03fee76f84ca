import DuckPrompt

/// One playback stream (sink-input) as the lab saw it over the run. Times are seconds on the
/// lab's clock (0 = COMMAND started; `StreamLog.streams(zero:)`), stamped when the server's
/// answer arrived.
package struct StreamRecord: Sendable, Equatable {
    /// The sink-input's index (`pa_sink_input_info.index`).
    package var index: UInt32
    /// Its properties as last read (`media.role`, `application.name` …): a client may change
    /// them (`pa_stream_proplist_update`; a held prompter names its kept stream after each
    /// prompt).
    package var properties: [String: String]
    /// Its properties over time, each set whole from the time it was read (the first is what
    /// it was created with; the last is `properties`).
    package var propertyChanges: [Timed<[String: String]>]
    /// When it was first seen, and when it went away (nil: still there at the end).
    package var start: Double
    package var end: Double?
    /// The sinks it played on, each from the time it moved there.
    package var sinks: [Timed<String>]
    /// Its volume per channel and mute, each from the time it was set (the first is what it
    /// started with).
    package var volumes: [Timed<VolumeState>]
    /// Whether it was corked (`pa_sink_input_info.corked`: its client paused it), each from the
    /// time it changed (the first is what it started with).
    package var corked: [Timed<Bool>]

    /// Whether the lab itself plays it (its music): `duckprompt.lab=music`.
    package var isLabMusic: Bool { properties[StreamLog.labProperty] == "music" }

    /// Its properties at `time`: the last set read at or before it (the first, before its
    /// start).
    package func properties(at time: Double) -> [String: String] {
        propertyChanges.last { $0.time <= time }?.value ?? propertyChanges.first?.value ?? properties
    }

    /// The sink it started on.
    package var sink: String { sinks.first?.value ?? "" }

    /// Its volume at `time`: the last one set at or before it (the first, before its start).
    package func volume(at time: Double) -> VolumeState? {
        volumes.last { $0.time <= time }?.value ?? volumes.first?.value
    }

    /// Whether it was corked all through `from` to `to` (seconds): at `from`, and not uncorked
    /// in between.
    package func corked(from: Double, to: Double) -> Bool {
        guard corked.last(where: { $0.time <= from })?.value ?? false else { return false }
        return !corked.contains { $0.time > from && $0.time <= to && !$0.value }
    }

    /// - Parameters:
    ///   - properties: the ones it was created with; `propertyChanges` (empty: none) the later
    ///     sets, each whole, after `start`.
    package init(index: UInt32, properties: [String: String], start: Double, end: Double? = nil,
                 sinks: [Timed<String>], volumes: [Timed<VolumeState>], corked: [Timed<Bool>] = [],
                 propertyChanges: [Timed<[String: String]>] = []) {
        self.index = index
        self.properties = propertyChanges.last?.value ?? properties
        self.propertyChanges = [Timed(start, properties)] + propertyChanges
        self.start = start
        self.end = end
        self.sinks = sinks
        self.volumes = volumes
        self.corked = corked
    }
}

/// A value from a time on (seconds on the lab's clock).
package struct Timed<Value: Sendable & Equatable>: Sendable, Equatable {
    package var time: Double
    package var value: Value
    package init(_ time: Double, _ value: Value) {
        self.time = time
        self.value = value
    }
}

/// A stream's volume as the server reported it: `pa_cvolume` per channel, and mute.
package struct VolumeState: Sendable, Equatable {
    package var volume: ChannelVolumes
    package var mute: Bool
    package init(volume: ChannelVolumes, mute: Bool) {
        self.volume = volume
        self.mute = mute
    }

    /// Each channel in dB (`pa_sw_volume_to_dB`; -inf for a silent channel).
    package var decibels: [Double] { volume.values.map(VolumeMath.decibels(of:)) }

    /// The loudest channel in dB, the level a listener hears at most: -inf when muted.
    package var loudestDecibels: Double {
        mute ? -.infinity : decibels.max() ?? -.infinity
    }
}

/// Follows every sink-input of a server for `duckprompt lab`: when each appears, moves,
/// changes volume, mute, cork state or properties, and ends. Its own thread sleeps on the server's events
/// (`pa_context_subscribe`) and reads the stream each event names.
/// libpulse: `pa_context_subscribe`, `pa_context_get_sink_input_info`,
/// `pa_context_get_sink_info_list` (the sink names, read again when a sink appears or goes).
package final class StreamLog: @unchecked Sendable {
    /// The property that marks the lab's own streams: `music`, `recorder`.
    package static let labProperty = "duckprompt.lab"

    private let connection: PulseConnection
    private let inbox: EventInbox
    private let lock = Lock()
    /// Guarded by `lock`.
    private var records: [UInt32: StreamRecord] = [:]
    private var order: [UInt32] = []
    private var sinkNames: [UInt32: String] = [:]
    private var stopped = false
    private let done = Condition()
    private var finished = false
    private let onNewSink: @Sendable (String) -> Void

    /// Connects, reads what plays now and starts following.
    /// - Parameters:
    ///   - onNewSink: called on the log's thread with the name of each sink that appears.
    /// - Throws: `.unavailable` when no server answers within `timeout`.
    package init(server: String?, timeout: Duration = .seconds(5),
                 onNewSink: @escaping @Sendable (String) -> Void) throws {
        connection = try PulseConnection(server: server, clientName: "duckprompt lab stream log", timeout: timeout)
        inbox = EventInbox(mainloop: connection.mainloop)
        self.onNewSink = onNewSink
        try connection.subscribe(into: inbox)
        try readSinks()
        connection.withLock { connection.requestSinkInputLocked(nil, into: inbox) }
        startThread { [self] in follow() }
    }

    /// Seconds on the monotonic clock now: records are kept on it until `streams(zero:)`.
    private var now: Double { Double(monotonicNanoseconds()) / 1e9 }

    /// Every stream seen so far, in the order they appeared, its times on a clock whose 0 is
    /// `zero` (monotonic ns, `monotonicNanoseconds()`).
    package func streams(zero: UInt64) -> [StreamRecord] {
        let shift = Double(zero) / 1e9
        return lock.withLock { order.compactMap { records[$0] } }.map { record in
            var record = record
            record.start -= shift
            record.end = record.end.map { $0 - shift }
            record.sinks = record.sinks.map { Timed($0.time - shift, $0.value) }
            record.volumes = record.volumes.map { Timed($0.time - shift, $0.value) }
            record.corked = record.corked.map { Timed($0.time - shift, $0.value) }
            record.propertyChanges = record.propertyChanges.map { Timed($0.time - shift, $0.value) }
            return record
        }
    }

    /// Stops following (the records stay) and waits for the thread to end.
    package func stop() {
        lock.withLock { stopped = true }
        done.withLock { while !finished { done.waitLocked() } }
        connection.unsubscribe(inbox)
    }

    private func readSinks() throws {
        let sinks = try connection.sinkList()
        lock.withLock {
            for sink in sinks { if let index = sink.index { sinkNames[index] = sink.name } }
        }
    }

    /// The log's thread: events in, infos asked for and filed, until `stop()`.
    private func follow() {
        defer { done.withLock { finished = true; done.broadcast() } }
        while !lock.withLock({ stopped }) {
            // Woken by each event and each answer (a stream's start is stamped when its info
            // arrives), and every 100 ms to look at `stopped`.
            let next = connection.withLock { () -> ([ServerEvent], [SinkInput])? in
                guard let events = try? connection.nextEventsLocked(inbox, until: .now + .milliseconds(100),
                                                                    orAnswers: true) ?? [] else {
                    return nil
                }
                let infos = inbox.sinkInputs
                inbox.sinkInputs.removeAll()
                for event in events where event.facility == .sinkInput && event.change != .removed {
                    connection.requestSinkInputLocked(event.index, into: inbox)
                }
                return (events, infos)
            }
            // The server went away: what was logged stays; streams still open have no end.
            guard let (events, infos) = next else { return }
            let time = now
            file(infos, at: time)
            var newSinks = false
            for event in events {
                switch (event.facility, event.change) {
                case (.sinkInput, .removed):
                    lock.withLock {
                        if records[event.index]?.end == nil { records[event.index]?.end = time }
                    }
                case (.sink, .new), (.sink, .removed):
                    newSinks = true
                default: break
                }
            }
            if newSinks {
                let known = lock.withLock { Set(sinkNames.values) }
                try? readSinks()
                let added = lock.withLock { Set(sinkNames.values).subtracting(known) }
                for sink in added.sorted() { onNewSink(sink) }
            }
        }
    }

    /// Files sink-input infos that arrived at `time`.
    private func file(_ infos: [SinkInput], at time: Double) {
        guard !infos.isEmpty else { return }
        let unknownSink = infos.contains { info in lock.withLock { sinkNames[info.sinkIndex] == nil } }
        if unknownSink { try? readSinks() }
        lock.withLock {
            for info in infos {
                // A stream not linked yet (PipeWire's first answer) has no sink: none is filed.
                let sink = info.sinkIndex == VolumeMath.invalidIndex ? nil : sinkNames[info.sinkIndex] ?? "#\(info.sinkIndex)"
                let volume = VolumeState(volume: info.volume, mute: info.mute)
                // Nor is its volume: pipewire-pulse answers 0 (silent) until the node is linked,
                // a few ms later. The first volume of a linked answer is what it started with.
                guard var record = records[info.index] else {
                    records[info.index] = StreamRecord(index: info.index, properties: info.properties, start: time,
                                                       sinks: sink.map { [Timed(time, $0)] } ?? [],
                                                       volumes: sink == nil ? [] : [Timed(time, volume)],
                                                       corked: [Timed(time, info.corked)])
                    order.append(info.index)
                    continue
                }
                guard record.end == nil else { continue }
                if let sink, record.sinks.last?.value != sink { record.sinks.append(Timed(time, sink)) }
                if record.corked.last?.value != info.corked { record.corked.append(Timed(time, info.corked)) }
                // Each answer carries the whole property list: a change (`pa_stream_proplist_update`,
                // sent as a sink-input change event) is filed when its values differ.
                if info.properties != record.properties {
                    record.properties = info.properties
                    record.propertyChanges.append(Timed(time, info.properties))
                }
                if sink == nil {
                    records[info.index] = record
                    continue
                }
                if record.volumes.isEmpty {
                    record.volumes = [Timed(record.start, volume)]
                } else if record.volumes.last?.value != volume {
                    record.volumes.append(Timed(time, volume))
                }
                records[info.index] = record
            }
        }
    }
}
