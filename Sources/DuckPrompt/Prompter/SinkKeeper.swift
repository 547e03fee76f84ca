import FoundationEssentials
import Glibc

/// Keeps a sink from suspending for a while (`Prompter.keepAwake(seconds:)`, the service's
/// `KeepAwake`, `play --keep-awake`), so that a prompt on a Bluetooth or HDMI sink that would
/// otherwise have gone to sleep needs no pre-roll: PipeWire suspends a node idle for 5 s
/// (WirePlumber's `session.suspend-timeout-seconds`), PulseAudio's module-suspend-on-idle
/// likewise, and a sleeping Bluetooth transport loses a prompt's first second. Neither server
/// lets a client hold a sink awake but by using it, so this plays silence on it: one stream,
/// 48 kHz mono zeros with a 1 s buffer (`PlaybackStream`; the server wakes for it once a
/// buffer), property `duckprompt.keep-awake` — never ducked (`DuckPlan.isOwn`) and not taken
/// by the router for a stream that plays (`Router`). It moves with the route (`follow`), and
/// ends at its deadline, on `stop()`, or when its connection goes.
///
/// Thread-safe. One thread of its own waits for the deadline while a sink is kept.
/// libpulse: `pa_stream_connect_playback`, `pa_stream_disconnect`.
package final class SinkKeeper: @unchecked Sendable {
    private let connection: () throws -> PulseConnection
    private let condition = Condition()
    /// Guarded by `condition`.
    private var stream: PlaybackStream?
    private var sink: String?
    private var deadline: ContinuousClock.Instant?
    private var waiting = false

    /// The property that marks the keeper's stream.
    package static let property = "duckprompt.keep-awake"

    /// - Parameter connection: the connection to play on (a held prompter's, made again
    ///   when its server came back).
    package init(connection: @escaping () throws -> PulseConnection) {
        self.connection = connection
    }

    deinit { stop() }

    /// The sink kept awake now, nil when none.
    package var keptSink: String? { condition.withLock { stream == nil ? nil : sink } }

    /// Keeps `sink` awake until `duration` from now (a later call moves the deadline, either
    /// way, and the sink); a zero duration stops it.
    /// - Throws: `.unavailable` when the server refuses the stream or does not answer.
    package func keep(_ sink: String, for duration: Duration) throws {
        guard duration > .zero else {
            stop()
            return
        }
        try place(on: sink)
        condition.withLock {
            deadline = ContinuousClock.now + duration
            if !waiting {
                waiting = true
                startThread { [self] in waitForDeadline() }
            }
            condition.broadcast()
        }
    }

    /// The route moved to `sink`: the silence moves with it, if a sink is kept.
    package func follow(_ sink: String) {
        guard let kept = keptSink, kept != sink else { return }
        do { try place(on: sink) } catch { DebugTrace.write("keep-awake: cannot follow the route to \(sink): \(error)") }
    }

    /// Ends the silence now.
    package func stop() {
        let ended = condition.withLock { () -> PlaybackStream? in
            defer { stream = nil; deadline = nil; condition.broadcast() }
            return stream
        }
        if let ended { ended.connection.withLock { ended.disconnectLocked() } }
    }

    /// Plays the silence on `sink`, instead of where it played.
    private func place(on sink: String) throws {
        let connection = try connection()
        try connection.waitUntilReady()
        let current = condition.withLock { (stream, self.sink) }
        if let stream = current.0, current.1 == sink, stream.connection === connection { return }
        let made = try connection.withLock { () -> PlaybackStream in
            let made = try PlaybackStream(connection: connection, sink: sink, name: "duckprompt keep-awake", rate: 48_000,
                                          channels: 1, tlengthMs: 1000,
                                          properties: [Self.property: "1", "application.name": "duckprompt",
                                                       "media.role": "navigation"]) { samples in
                samples.update(repeating: 0)
            }
            try PulseStream.waitReadyLocked([made], refused: "the sink '\(sink)' refused the keep-awake stream",
                                            what: "keeping \(sink) awake")
            return made
        }
        DebugTrace.write("keep-awake: silence on \(sink)")
        let old = condition.withLock { () -> PlaybackStream? in
            defer { stream = made; self.sink = sink }
            return stream
        }
        if let old { old.connection.withLock { old.disconnectLocked() } }
    }

    /// The keeper's thread: stops the silence at the deadline.
    private func waitForDeadline() {
        condition.withLock {
            while let deadline, stream != nil {
                let left = deadline - ContinuousClock.now
                if left <= .zero { break }
                condition.waitLocked(milliseconds: max(1, Int((left.seconds * 1000).rounded(.up))))
            }
            waiting = false
        }
        if condition.withLock({ deadline.map { ContinuousClock.now >= $0 } ?? false }) {
            DebugTrace.write("keep-awake: its time is over")
            stop()
        }
    }
}

extension DuckPrompt {
    /// `play --keep-awake` in the command's own process, after its prompt: keeps `sink` awake
    /// (`SinkKeeper`, on a connection of its own) until `deadline`, or until `cancellation` is
    /// cancelled (SIGINT, SIGTERM), then ends the silence and returns. The silence also ends
    /// when this process dies (its connection goes). Nothing when the deadline passed.
    /// - Throws: `.unavailable` when the server cannot be reached or refuses the stream.
    ///   libpulse: `pa_stream_connect_playback`, `pa_stream_disconnect`; `poll(2)` on the
    ///   cancellation's descriptor.
    package static func keepAwakeBlocking(_ sink: String, until deadline: ContinuousClock.Instant, server: ServerOptions,
                                          cancellation: PlayCancellation) throws {
        guard deadline > .now, !cancellation.isCancelled else { return }
        let connection = try PulseConnection(server, waitingUntilReady: false)
        let keeper = SinkKeeper(connection: { connection })
        defer { keeper.stop() }
        try keeper.keep(sink, for: deadline - .now)
        var fds = [pollfd(fd: cancellation.wakeDescriptor() ?? -1, events: Int16(POLLIN), revents: 0)]
        _ = try? POSIX.poll(&fds, until: deadline)
    }
}
