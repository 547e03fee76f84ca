import DuckPrompt
import DuckPromptProbe

/// PulseAudio only: makes the lab's null sinks start a stream as a real device does. A
/// PulseAudio null sink with no stream asking for a latency renders 2 s ahead at once (its
/// largest latency), and when a stream then comes asking for 10 ms it can take back only
/// 10 ms of that (its rewind is bounded by the new latency), so the stream's first sample
/// is rendered, and heard on the monitor, up to 2 s late, and its drain ends as late. A real
/// ALSA sink rewinds its whole buffer. Measured in a lab: `duckprompt play` of a 1.5 s file
/// on an idle null sink took 3.5 s (the sink's latency 1.5 s with 10 ms configured);
/// anchored, 1.54 s (latency 3 ms), as on PipeWire.
///
/// The anchor: on every sink's monitor a recording that asks for 10 ms fragments and is
/// corked (`RecordStream`, `corked`). Corked, it records nothing and does not keep the sink
/// from suspending (module-suspend-on-idle does not count it); its 10 ms counts toward the
/// sink's latency, so the sink resumes with it and renders 10 ms blocks from then on. A sink
/// made before its anchor came has rendered its 2 s already: suspending and resuming it once
/// starts its clock again (the lab does so for its devices, the tests' rigs for theirs).
/// Marked `duckprompt.lab=latency-anchor` (`StreamLog.labProperty`) and `duckprompt.lab.sink=NAME`.
///
/// One thread of its own follows the sinks (new and removed, by index) on a connection of its
/// own, made again when the server was restarted. Thread-safe.
/// libpulse: `pa_context_subscribe`, `pa_context_get_sink_info_list`,
/// `pa_stream_connect_record` (`PA_STREAM_START_CORKED`, `PA_STREAM_ADJUST_LATENCY`).
final class LatencyAnchors: @unchecked Sendable {
    /// The anchors' property value (`StreamLog.labProperty`).
    static let property = "latency-anchor"
    /// The fragment the anchors ask for, in ms.
    static let fragmentMs = 10

    private let server: String?
    private let condition = Condition()
    /// Guarded by `condition`.
    private var anchored: Set<String> = []
    private var stopped = false
    private var finished = false

    /// Starts following the server's sinks at `server` (a `PulseConnection` server string).
    init(server: String?) {
        self.server = server
        startThread { [self] in follow() }
    }

    /// Waits until each of `sinks` has its anchor, at most `timeout`.
    /// - Returns: whether they all have.
    func waitAnchored(_ sinks: [String], timeout: Duration = .seconds(5)) -> Bool {
        let deadline = ContinuousClock.now + timeout
        return condition.withLock {
            while !Set(sinks).isSubset(of: anchored) {
                let left = deadline - ContinuousClock.now
                guard left > .zero else { return false }
                condition.waitLocked(milliseconds: max(1, Int(left.seconds * 1000)))
            }
            return true
        }
    }

    /// Ends the anchors and waits for the thread.
    func stop() {
        condition.withLock {
            stopped = true
            while !finished { condition.waitLocked() }
        }
    }

    private var isStopped: Bool { condition.withLock { stopped } }

    /// The thread: one connection's life at a time, until `stop()`.
    private func follow() {
        defer { condition.withLock { finished = true; condition.broadcast() } }
        while !isStopped {
            guard let connection = try? PulseConnection(server: server, clientName: "duckprompt lab latency anchors",
                                                        timeout: .seconds(5)) else {
                // The server is being restarted (a test killed it): connect again.
                sleepThread(for: .milliseconds(100))
                continue
            }
            var anchors: [UInt32: (sink: String, stream: RecordStream)] = [:]
            defer {
                connection.withLock { for anchor in anchors.values { anchor.stream.disconnectLocked() } }
                condition.withLock { anchored = [] }
            }
            do {
                let inbox = EventInbox(mainloop: connection.mainloop)
                try connection.subscribe(into: inbox)
                defer { connection.unsubscribe(inbox) }
                var look = true
                while !isStopped {
                    if look { try anchor(connection, &anchors) }
                    // Woken by each event, and every 100 ms to look at `stopped`.
                    let events = try connection.withLock {
                        try connection.nextEventsLocked(inbox, until: .now + .milliseconds(100))
                    }
                    look = events?.contains { $0.facility == .sink && $0.change != .changed } ?? false
                }
            } catch {
                // The connection was lost: a new one, with anchors of its own.
            }
        }
    }

    /// Anchors every sink that has none, and lets go of those whose sink went.
    private func anchor(_ connection: PulseConnection, _ anchors: inout [UInt32: (sink: String, stream: RecordStream)]) throws {
        let sinks = try connection.sinkList().compactMap { sink in sink.index.map { ($0, sink.name) } }
        let present = Set(sinks.map(\.0))
        connection.withLock {
            for (index, anchor) in anchors where !present.contains(index) {
                anchor.stream.disconnectLocked()
                anchors[index] = nil
            }
            for (index, name) in sinks where anchors[index] == nil {
                // A sink gone again before its anchor connected has none: nothing to anchor.
                guard let stream = try? RecordStream(connection: connection, source: "\(name).monitor",
                                                     name: "duckprompt lab latency anchor", rate: 48_000, channels: 1,
                                                     fragmentMs: Self.fragmentMs,
                                                     properties: [StreamLog.labProperty: Self.property,
                                                                  "duckprompt.lab.sink": name],
                                                     corked: true, onChunk: { _, _, _ in }) else { continue }
                do {
                    try PulseStream.waitReadyLocked([stream], refused: "cannot anchor \(name)", what: "anchoring \(name)")
                    anchors[index] = (name, stream)
                } catch {
                    stream.disconnectLocked()
                }
            }
        }
        condition.withLock {
            anchored = Set(anchors.values.map(\.sink))
            condition.broadcast()
        }
    }
}
