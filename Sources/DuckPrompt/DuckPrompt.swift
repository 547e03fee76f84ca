import FoundationEssentials
import Glibc

/// Where and how to reach the sound server.
public struct ServerOptions: Sendable, Equatable {
    /// libpulse server string (`-s/--server`); nil uses `PULSE_SERVER`, then the default socket.
    public var server: String?
    /// The client's `application.name` (`-n/--client-name`).
    public var clientName: String
    /// How long connecting may take before giving up (`--timeout`), default 5 s.
    public var timeout: Duration

    public init(server: String? = nil, clientName: String = "duckprompt", timeout: Duration = .seconds(5)) {
        self.server = server
        self.clientName = clientName
        self.timeout = timeout
    }
}

/// How a prompt is routed, ducked and played.
public struct PlayOptions: Sendable {
    /// The sink to use (`-d/--device`); nil lets the router decide, after `PULSE_SINK`.
    public var device: DeviceRequest?
    /// Gain applied to every other stream while the prompt plays, in dB (<= 0). 0 turns the
    /// duck off. Default -20 dB (`--duck`).
    public var duck: Decibels
    /// `duck` or `none` (`--duck-mode`).
    public var duckMode: DuckMode
    /// Ramp down before the first prompt sample, in ms (`--attack-ms`), default 200.
    public var attackMs: Int
    /// Ramp back up after the last sample was heard, in ms (`--release-ms`), default 500.
    public var releaseMs: Int
    /// `media.role` values never ducked; default `phone`.
    public var exemptRoles: Set<String>
    /// The prompt stream's gain in dB relative to the volume the server saved for its
    /// `media.role` (`navigation` unless `properties` says otherwise) — the user's setting for
    /// prompts in pavucontrol — (`--volume`); that saved volume is left as it was. Nil plays at
    /// the saved volume. Within `volumeRange` (-200 … +20 dB), else `play` throws `.usage`.
    public var volume: Decibels?
    /// Target buffer of the prompt stream in ms (`--latency-msec`, `pa_buffer_attr.tlength`
    /// with `PA_STREAM_ADJUST_LATENCY` and the server's `minreq`, as `paplay --latency-msec`).
    /// Nil (the default): `tlength` 220 ms refilled 100 ms at a time (`minreq`), which has the
    /// server run the sink at 10 ms for the prompt while the client wakes ten times a second.
    public var latencyMs: Int?
    /// Extra stream properties (`--property K=V`); `media.role` defaults to `navigation` and
    /// `media.name` to the file name.
    public var properties: [String: String]
    /// The user's routing settings (`DuckPromptConfig.load()`); default: none.
    public var config: DuckPromptConfig = DuckPromptConfig()
    /// Drop the prompt when it has not started this many ms after `play` was called
    /// (`--expire-ms`): a stale "turn left" is worse than none. Nil: wait as long as it takes.
    public var expireMs: Int?
    /// What to do when another prompt is playing or waiting (`--on-busy`).
    public var onBusy: BusyPolicy = .wait
    /// Its place in the queue of prompts, across processes and inside one (`--priority`,
    /// SSIP's meanings; see `PromptPriority`). Default `message`.
    public var priority: PromptPriority = .message
    /// Silence before the prompt when the chosen sink is asleep (suspended or idle), in ms
    /// (`--pre-roll-ms`); nil: the config file's `pre_roll_ms` for the sink's kind, else
    /// `PlayOptions.defaultPreRollMs`.
    public var preRollMs: Int?

    /// `volume`'s range in dB: at most 20 dB over the saved prompt volume (ten times its
    /// amplitude; libpulse would take up to `PA_VOLUME_MAX`, about +192 dB, and a typo such as
    /// +300dB would deafen), down to -200 dB (inaudible).
    public static let volumeRange: ClosedRange<Double> = -200...20
    /// `duck`'s range in dB: 0 (no duck) down to -200 dB (inaudible already; a ramp takes one
    /// 10 ms step per 1.5 dB, so an unbounded depth would mean an unbounded attack).
    public static let duckRange: ClosedRange<Double> = -200...0
    /// `attackMs` and `releaseMs`: 0 … 60000 ms.
    public static let rampRangeMs = 0...60_000
    /// `latencyMs`: 1 … 10000 ms.
    public static let latencyRangeMs = 1...10_000
    /// `expireMs`: 0 … 3600000 ms (an hour).
    public static let expireRangeMs = 0...3_600_000
    /// `preRollMs`: 0 … 5000 ms.
    public static let preRollRangeMs = 0...5000

    /// Checks every number against its range (the ranges above); `play` calls it before it
    /// opens a file or contacts a server, so out-of-range options never change a volume.
    /// - Throws: `DuckPromptError(.usage)` (64) naming the field, its value and its range.
    public func validate() throws {
        func check<T: Comparable>(_ value: T?, _ range: ClosedRange<T>, _ name: String, _ text: (T) -> String) throws {
            guard let value, !range.contains(value) else { return }
            throw DuckPromptError(.usage, "\(name) \(text(value)) is out of range (\(text(range.lowerBound)) to \(text(range.upperBound)))")
        }
        let dB = { (v: Double) in v > 0 ? "+\(Decibels(v))" : "\(Decibels(v))" }
        let ms = { (v: Int) in "\(v) ms" }
        // NaN is in no range, but `contains` says false for it too: rejected.
        try check(volume?.value, Self.volumeRange, "volume (relative to the saved prompt volume)", dB)
        if duckMode == .duck { try check(duck.value, Self.duckRange, "duck", dB) }
        try check(attackMs, Self.rampRangeMs, "attack", ms)
        try check(releaseMs, Self.rampRangeMs, "release", ms)
        try check(latencyMs, Self.latencyRangeMs, "latency", ms)
        try check(expireMs, Self.expireRangeMs, "expiry", ms)
        try check(preRollMs, Self.preRollRangeMs, "pre-roll", ms)
    }

    /// Pre-roll by kind when nothing else says: Bluetooth A2DP 300 ms, Bluetooth HFP 1000 ms,
    /// HDMI 1000 ms (devices that take that long to wake), others 0.
    public static let defaultPreRollMs: [DeviceKind: Int] = [.bluetoothA2DP: 300, .bluetoothHFP: 1000, .hdmi: 1000]

    /// The pre-roll for a route: 0 when the sink is running (awake), else the option, the
    /// config's value for the kind, or the default. A virtual sink forwarding to a device uses
    /// that device's kind.
    public func preRoll(for route: RouteDecision) -> Int {
        guard route.sink.state == .suspended || route.sink.state == .idle else { return 0 }
        if let preRollMs { return preRollMs }
        let kind = route.classification.forwardsTo ?? route.classification.kind
        return config.preRollMs(for: kind) ?? Self.defaultPreRollMs[kind] ?? 0
    }

    public init(device: DeviceRequest? = nil, duck: Decibels = Decibels(-20), duckMode: DuckMode = .duck,
                attackMs: Int = 200, releaseMs: Int = 500, exemptRoles: Set<String> = ["phone"],
                volume: Decibels? = nil, latencyMs: Int? = nil, properties: [String: String] = [:]) {
        self.device = device
        self.duck = duck
        self.duckMode = duckMode
        self.attackMs = attackMs
        self.releaseMs = releaseMs
        self.exemptRoles = exemptRoles
        self.volume = volume
        self.latencyMs = latencyMs
        self.properties = properties
    }
}

/// What a prompt does when another one is playing.
public enum BusyPolicy: String, Sendable, CaseIterable {
    /// Wait its turn (up to `--expire-ms`).
    case wait
    /// Give up at once: exit 75.
    case drop
}

/// What a finished prompt did.
public struct PlayReport: Sendable {
    /// Where the prompt went, and why.
    public var route: RouteDecision
    /// Sink-input indices that were ducked, each restored to its original `pa_cvolume`.
    public var duckedStreams: [UInt32]
    /// Frames handed to the server.
    public var framesPlayed: Int64
    /// What was undone first for prompts that died mid-duck (one line each; usually empty).
    public var recoveryNotes: [String] = []
    /// Silence played first because the sink was not running (idle or suspended), in ms (0: none).
    public var preRollMs: Int = 0
}

/// What `DuckPrompt.restore` did.
public struct RestoreReport: Sendable {
    /// One line per journal handled: what was restored, or why it was kept. Empty when no
    /// prompt died while ducking.
    public var notes: [String]
    /// Paths of the journals kept because their server could not be reached or did not
    /// confirm every write (`duckprompt restore` then exits 69).
    public var kept: [String]
    /// Files of the journal directory that are not journals it can use (`duckprompt restore`
    /// then exits 65, unless a journal was kept).
    public var problems: [JournalProblem]
}

/// A server's sinks, each classified, and where a prompt would go now.
public struct DeviceListing: Sendable {
    /// Sinks, sink-inputs and default sink as read from the server.
    public var snapshot: Snapshot
    /// One classification per sink, in `snapshot.sinks` order.
    public var classifications: [Classification]
    /// The routing decision, or nil when no sink is usable (`routeError` says why).
    public var route: RouteDecision?
    public var routeError: DuckPromptError?
    /// `pa_server_info.server_name` and `server_version`, e.g. `PulseAudio (on PipeWire 0.3.65)`.
    public var serverName: String
    public var serverVersion: String
    /// What was undone first for prompts that died mid-duck (one line each; usually empty).
    public var recoveryNotes: [String] = []

    /// Classifies and routes a snapshot (from a server or a dump), exactly as `play` would.
    /// `config` supplies the user's `prefer`, `ranking` and `never` (default: none).
    public init(snapshot: Snapshot, request: DeviceRequest? = nil, config: DuckPromptConfig = DuckPromptConfig(),
                serverName: String = "", serverVersion: String = "") {
        self.snapshot = snapshot
        classifications = Classifier.classify(snapshot, ranking: config.ranking)
        do {
            route = try Router.route(snapshot, classifications: classifications, request: request, config: config)
            routeError = nil
        } catch let error as DuckPromptError {
            route = nil
            routeError = error
        } catch {
            route = nil
            routeError = DuckPromptError(.internal, "\(error)")
        }
        self.serverName = serverName
        self.serverVersion = serverVersion
    }
}

/// One step of `DuckPrompt.watchDevices`: the server's sinks now, and what changed since the
/// previous step (empty for the first).
public struct DeviceUpdate: Sendable {
    public var listing: DeviceListing
    public var changes: [DeviceChange]
}

/// The library's front door: everything the `duckprompt` command does is one call here.
public enum DuckPrompt {
    /// Versions of the C libraries in use: libpulse (`pa_get_library_version`) and
    /// libsndfile (`sf_version_string`).
    public static var libraryVersions: (libpulse: String, libsndfile: String) {
        (PulseConnection.libraryVersion, AudioSource.libraryVersion)
    }

    /// The sink a prompt asks for when none is named: `PULSE_SINK`, as libpulse clients honour it.
    public static func defaultRequest(environment: [String: String] = Environment.values("PULSE_SINK")) -> DeviceRequest? {
        guard let name = environment["PULSE_SINK"], !name.isEmpty else { return nil }
        return DeviceRequest(parsing: name)
    }

    /// Routes with the request, else `PULSE_SINK`, else the rules; an error about a sink named
    /// by `PULSE_SINK` says so.
    static func route(_ snapshot: Snapshot, request: DeviceRequest?, config: DuckPromptConfig) throws -> RouteDecision {
        if request == nil, let fromEnvironment = defaultRequest() {
            do {
                return try Router.route(snapshot, request: fromEnvironment, config: config)
            } catch let error as DuckPromptError {
                throw DuckPromptError(error.code, error.message + " (from $PULSE_SINK)")
            }
        }
        return try Router.route(snapshot, request: request, config: config)
    }

    /// Undoes what prompts that died mid-duck left behind (their journals under
    /// `$XDG_RUNTIME_DIR/duckprompt/`): streams still at a level their duck wrote go back to
    /// their own volume, saved volumes they left ducked are repaired, and the journals are
    /// removed. Waits while a prompt is playing (it holds the duck lock).
    ///
    /// A journal is removed only once every volume it names was confirmed restored; when its
    /// server does not answer (killed, restarting, stalled), it is kept for the next try.
    ///
    /// - Returns: one line per journal handled (empty when there was nothing to do), the
    ///   journals kept, and the files of the directory that are not journals it can use:
    ///   refused by `DuckJournal.validate()` (out of bounds: forged or damaged), garbled, of
    ///   another version, symbolic links, not regular files or too large; none of them changed
    ///   a volume.
    /// - Throws: `.internal` when the journal directory is unsafe (a symlink, another owner).
    public static func restore(server: ServerOptions = ServerOptions()) async throws -> RestoreReport {
        try await runBlocking(InterruptControl()) { control in
            let store = try JournalStore()
            let lock = try RuntimeLock.acquire(in: store.runtimeDirectory, timeout: nil, cancelled: { control.isCancelled })
            defer { lock.release() }
            let outcome = Recovery.recoverOrphans(store: store, server: server)
            return RestoreReport(notes: outcome.notes, kept: outcome.kept, problems: outcome.problems)
        }
    }

    /// Recovery as every command does it in passing: only when no prompt holds the lock.
    static func recoverInPassing(server: ServerOptions) -> [String] {
        guard let store = try? JournalStore(), let lock = try? RuntimeLock.tryAcquire(in: store.runtimeDirectory) else { return [] }
        defer { lock.release() }
        return Recovery.recoverOrphans(store: store, server: server).lines
    }

    /// Lists and classifies the server's sinks and routes a prompt, without playing anything.
    ///
    /// - Throws: `DuckPromptError(.unavailable)` (69) when no server answers in time.
    /// libpulse: `pa_context_get_sink_info_list`, `pa_context_get_sink_input_info_list`,
    /// `pa_context_get_server_info`.
    public static func devices(request: DeviceRequest? = nil, config: DuckPromptConfig = DuckPromptConfig(),
                               server: ServerOptions = ServerOptions()) async throws -> DeviceListing {
        try await runBlocking(InterruptControl()) { control in
            let connection = try PulseConnection(server: server.server, clientName: server.clientName,
                                                 timeout: server.timeout)
            control.attach(connection)
            let notes = recoverInPassing(server: server)
            let (snapshot, info) = try connection.snapshot()
            var listing = DeviceListing(snapshot: snapshot, request: request ?? defaultRequest(), config: config,
                                        serverName: info.serverName, serverVersion: info.serverVersion)
            listing.recoveryNotes = notes
            return listing
        }
    }

    /// Reads a sink dump and classifies and routes it exactly as `devices` does live.
    ///
    /// - Parameters:
    ///   - path: a file holding `pactl list sinks`, `pacmd list-sinks`, `pactl --format=json
    ///     list sinks`, `pw-dump` or `wpctl inspect` output; `-` reads standard input.
    ///   - request: route as if this sink had been asked for.
    ///   - config: the user's routing settings (`DuckPromptConfig.load()`); default: none.
    /// - Throws: `.noInput` (66) when the file is missing or cannot be read, or is not a
    ///   regular file or a pipe (a directory, `/dev/zero`); `.unsupportedData` (65) when it is
    ///   larger than 16 MiB (`BoundedFile.dumpLimit`), in none of those formats (the message
    ///   lists them), or holds no sink with a name.
    /// A `pw-dump` or a full `pactl --format=json list` also carries the streams, so a filter
    /// such as EasyEffects is seen forwarding to its device, as live.
    public static func devices(fromDump path: String, request: DeviceRequest? = nil,
                               config: DuckPromptConfig = DuckPromptConfig()) throws -> DeviceListing {
        let data: Data
        do {
            data = path == "-"
                ? try BoundedFile.read(descriptor: STDIN_FILENO, limit: BoundedFile.dumpLimit, accept: .anything)
                : try BoundedFile.read(path: path, limit: BoundedFile.dumpLimit, accept: .regularFilesAndPipes)
        } catch {
            // Too large: no real dump is (65); missing, unreadable, not a file: 66.
            throw DuckPromptError(error.kind == .tooLarge ? .unsupportedData : .noInput,
                                  "\(path == "-" ? "standard input" : path): \(error.reason)"
                                  + (error.kind == .tooLarge ? ": no sink dump is that large" : ""))
        }
        // Text tools print no NUL byte: random bytes, a core file or UTF-16 are refused at
        // once rather than parsed line by line (16 MiB of random bytes took 17 s).
        guard !data.contains(0) else {
            throw DuckPromptError(.unsupportedData, "\(path == "-" ? "standard input" : path): is not a sink dump "
                                  + "(it holds NUL bytes, so it is not text): " + SinkDumpReader.formatsRead)
        }
        let text = String(decoding: data, as: UTF8.self)
        do {
            return DeviceListing(snapshot: try SinkDumpReader.readSnapshot(text), request: request, config: config)
        } catch let error as DuckPromptError {
            throw DuckPromptError(error.code, "\(path == "-" ? "standard input" : path): \(error.message)")
        }
    }

    /// Follows the server's sinks: yields the current listing first (with no changes), then a
    /// new listing each time a sink appears, goes away, changes its active port or that port's
    /// availability, the default sink changes, or the route changes.
    ///
    /// Stop by ending the iteration (or cancelling the consuming Task): the subscription and
    /// the connection close. The stream ends with an error when the connection fails or is lost.
    /// libpulse: `pa_context_subscribe` (sink, sink-input, card, server events), then a fresh
    /// snapshot per batch of events; on PipeWire also `pa_context_get_server_info` after each
    /// `defaultCheckInterval` (100 ms) without events, since pipewire-pulse 0.3.65 does not
    /// always announce a new default sink.
    public static func watchDevices(request: DeviceRequest? = nil, config: DuckPromptConfig = DuckPromptConfig(),
                                    server: ServerOptions = ServerOptions()) -> AsyncThrowingStream<DeviceUpdate, Error> {
        let control = InterruptControl()
        return AsyncThrowingStream { continuation in
            continuation.onTermination = { _ in control.cancel() }
            startThread {
                do {
                    let connection = try PulseConnection(server: server.server, clientName: server.clientName,
                                                         timeout: server.timeout)
                    control.attach(connection)
                    let inbox = EventInbox(mainloop: connection.mainloop)
                    try connection.subscribe(into: inbox)
                    func look() throws -> DeviceListing {
                        let (snapshot, info) = try connection.snapshot()
                        return DeviceListing(snapshot: snapshot, request: request ?? defaultRequest(), config: config,
                                             serverName: info.serverName, serverVersion: info.serverVersion)
                    }
                    var listing = try look()
                    continuation.yield(DeviceUpdate(listing: listing, changes: []))
                    // pipewire-pulse 0.3.65 does not always tell of a default sink change: twice
                    // in CI, `pactl get-default-sink` named the new sink while no event came for
                    // 3 s. On PipeWire the default is also asked for after each quiet interval.
                    let checkDefault = listing.serverName.contains("PipeWire")
                    while true {
                        let waited = try connection.withLock {
                            try checkDefault
                                ? connection.nextEventsLocked(inbox, until: ContinuousClock.now + Self.defaultCheckInterval)
                                : connection.nextEventsLocked(inbox)
                        }
                        guard let events = waited else {
                            let serverDefault = try connection.serverInfo().defaultSinkName
                            DebugTrace.write("watch: \(Int(Self.defaultCheckInterval.seconds * 1000)) ms without events, the server's default sink is \(serverDefault ?? "none")")
                            if serverDefault != listing.snapshot.defaultSinkName {
                                let next = try look()
                                let changes = DeviceChange.between(listing, next)
                                listing = next
                                if !changes.isEmpty { continuation.yield(DeviceUpdate(listing: next, changes: changes)) }
                            }
                            continue
                        }
                        if events.isEmpty { break }
                        if events.allSatisfy(Self.isVolumeChurn) {
                            // A duck ramp changes sink-inputs up to 100 times a second: such
                            // changes alone are gathered for 100 ms into one look at the server.
                            let until = ContinuousClock.now + .milliseconds(100)
                            connection.withLock {
                                connection.withWakeupLocked(at: until) {
                                    while ContinuousClock.now < until, !connection.interrupted,
                                          inbox.events.allSatisfy(Self.isVolumeChurn) {
                                        connection.waitLocked()
                                    }
                                }
                                inbox.events.removeAll()
                            }
                        }
                        let next = try look()
                        DebugTrace.write("watch: \(events.count) events, the server's default sink is \(next.snapshot.defaultSinkName ?? "none")")
                        let changes = DeviceChange.between(listing, next)
                        listing = next
                        if !changes.isEmpty { continuation.yield(DeviceUpdate(listing: next, changes: changes)) }
                    }
                    withExtendedLifetime(inbox) {}
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
        }
    }

    /// How long `watchDevices` waits for an event on PipeWire before it asks for the default
    /// sink itself (one `pa_context_get_server_info`): a change the server did not announce is
    /// reported this late at most.
    static let defaultCheckInterval: Duration = .milliseconds(100)

    /// The end of an error message when a prompt's duck could not be confirmed restored.
    static func keptJournalNote(_ path: String) -> String {
        "; what it ducked is journaled in \(path) and is restored by the next duckprompt "
            + "command, or `duckprompt restore`, once the server answers"
    }

    /// From this many streams to duck, the prompt's stream is connected before the attack
    /// rather than during it.
    static let busyDesktopStreams = 32

    /// A sink-input that changed (volume, cork, properties): it may change the route, but
    /// needs no look at once.
    private static func isVolumeChurn(_ event: ServerEvent) -> Bool {
        event.facility == .sinkInput && event.change == .changed
    }

    /// Plays one prompt: routes it, ducks every other stream, plays it whole, restores.
    ///
    /// Order: the file was already validated by `AudioSource`; start connecting; enter the
    /// `PromptQueue` and wait for this prompt's turn (the handshake goes on meanwhile); read
    /// sinks and sink-inputs; route; connect the prompt stream corked while the duck ramps down over
    /// `attackMs`; uncork; wait until the last sample was played (`pa_stream_drain`); ramp
    /// back over `releaseMs`, the last step setting every original `pa_cvolume` exactly.
    ///
    /// Cancelling the calling Task (the CLI does so on SIGINT, SIGTERM, SIGHUP) stops the
    /// prompt, ramps every ducked stream back, and then throws `CancellationError`.
    /// - Throws: `DuckPromptError` `.usage` (64: an option out of range, see
    ///   `PlayOptions.validate()`, thrown before the server is contacted), `.unavailable` (69:
    ///   no server, no sink of the requested name, no usable sink, stream refused),
    ///   `CancellationError`.
    public static func play(_ sources: [any PromptSource], options: PlayOptions = PlayOptions(),
                            server: ServerOptions = ServerOptions()) async throws -> PlayReport {
        precondition(!sources.isEmpty, "play needs at least one source")
        try options.validate()
        let box = SourceList(sources)
        // The handshake (a few round trips) runs on libpulse's thread while this prompt enters
        // the queue; nothing is asked of the server before its turn.
        let connection = try PulseConnection(server: server.server, clientName: server.clientName,
                                             timeout: server.timeout, waitingUntilReady: false)
        return try await runBlocking(InterruptControl()) { control in
            try playBlocking(box.sources, connection: connection, options: options, server: server, control: control)
        }
    }

    /// `play(_:options:server:)` on the calling thread, for a caller that may block it (a
    /// command-line tool): no Swift concurrency is involved. An async `main` that awaits a
    /// `Task` costs about 2.4 ms more of a process's life than a synchronous one (measured with
    /// `perf stat` on static Swift 6.3 binaries: 4.5 against 2.1 ms), which is most of what a
    /// 50 ms prompt's start latency has over paplay's.
    ///
    /// - Parameter cancellation: `cancel()` it from another thread (a signal-handling thread,
    ///   a UI thread) to stop the prompt as cancelling `play`'s Task would: every ducked
    ///   stream is ramped back, then this throws `CancellationError`.
    /// - Throws: what `play(_:options:server:)` throws.
    public static func playBlocking(_ sources: [any PromptSource], options: PlayOptions = PlayOptions(),
                                    server: ServerOptions = ServerOptions(),
                                    cancellation: PlayCancellation = PlayCancellation()) throws -> PlayReport {
        precondition(!sources.isEmpty, "play needs at least one source")
        try options.validate()
        let connection = try PulseConnection(server: server.server, clientName: server.clientName,
                                             timeout: server.timeout, waitingUntilReady: false)
        return try playBlocking(sources, connection: connection, options: options, server: server,
                                control: cancellation.control)
    }

    /// `play(files:say:voice:wordsPerMinute:options:server:)` on the calling thread: see
    /// `playBlocking(_:options:server:cancellation:)`. `cancellation` also stops the wait for
    /// standard input or a FIFO to end (`AudioSource.init(path:cancellation:)`), before
    /// anything is ducked.
    /// - Throws: what `play(files:say:…)` throws; `CancellationError` when cancelled.
    public static func playBlocking(files paths: [String], say texts: [String] = [], voice: String? = nil,
                                    wordsPerMinute: Int? = nil, options: PlayOptions = PlayOptions(),
                                    server: ServerOptions = ServerOptions(),
                                    cancellation: PlayCancellation = PlayCancellation()) throws -> PlayReport {
        try options.validate()
        return try playBlocking(sources(files: paths, say: texts, voice: voice, wordsPerMinute: wordsPerMinute,
                                        cancellation: cancellation),
                                options: options, server: server, cancellation: cancellation)
    }

    /// Opens every path with libsndfile (see `AudioSource.init(path:)`; `-` is standard input),
    /// then plays them as one prompt under one duck: consecutive files of the same rate and
    /// channel count back to back without a gap, others one after another. A file that cannot
    /// be played throws before any server is contacted, so it never changes a volume. Files
    /// are opened on a thread of its own: cancelling the Task stops a wait for standard input
    /// or a FIFO.
    /// - Throws: `.noInput` (66), `.unsupportedData` (65), and what `play` throws
    ///   (`CancellationError`).
    public static func play(files paths: [String], options: PlayOptions = PlayOptions(),
                            server: ServerOptions = ServerOptions()) async throws -> PlayReport {
        try options.validate()
        return try await play(try await openedSources(files: paths, say: []), options: options, server: server)
    }

    /// Speaks texts with libespeak-ng (see `SpeechSource`) after the files, as one prompt:
    /// `duckprompt say "Turn left"`, `duckprompt play chime.wav --say "Turn left"`.
    /// - Parameters:
    ///   - files: audio files first (may be empty); `texts`: then these, spoken.
    ///   - voice: an espeak-ng voice (`en`, `en-us`, `de` …); nil for espeak's default.
    ///   - wordsPerMinute: 80…450; nil for 175.
    /// - Throws: `.usage` for empty text, text over `SpeechSource.maxTextLength` code points
    ///   (all texts together), an unknown voice or rate; what `play(files:)` throws.
    public static func play(files paths: [String], say texts: [String], voice: String? = nil,
                            wordsPerMinute: Int? = nil, options: PlayOptions = PlayOptions(),
                            server: ServerOptions = ServerOptions()) async throws -> PlayReport {
        try options.validate()
        return try await play(try await openedSources(files: paths, say: texts, voice: voice, wordsPerMinute: wordsPerMinute),
                              options: options, server: server)
    }

    /// `sources(files:say:…)` on a thread of its own (`runBlocking`), not Swift's cooperative
    /// pool: reading standard input or a FIFO may wait for ever, and cancelling the calling
    /// Task stops that wait (`CancellationError`).
    private static func openedSources(files paths: [String], say texts: [String], voice: String? = nil,
                                      wordsPerMinute: Int? = nil) async throws -> [any PromptSource] {
        let cancellation = PlayCancellation()
        return try await runBlocking(cancellation.control) { _ in
            try sources(files: paths, say: texts, voice: voice, wordsPerMinute: wordsPerMinute, cancellation: cancellation)
        }
    }

    /// The files, opened, then the texts, to be spoken.
    private static func sources(files paths: [String], say texts: [String], voice: String?,
                                wordsPerMinute: Int?, cancellation: PlayCancellation? = nil) throws -> [any PromptSource] {
        // All the texts of one prompt together: first, before a file is opened or espeak loaded.
        try SpeechSource.checkLength(texts)
        let files: [any PromptSource] = try paths.map { try AudioSource(path: $0, cancellation: cancellation) }
        return try files + texts.map { try SpeechSource(text: $0, voice: voice, wordsPerMinute: wordsPerMinute) as any PromptSource }
    }

    /// One file: `play(files: [path])`.
    public static func play(file path: String, options: PlayOptions = PlayOptions(),
                            server: ServerOptions = ServerOptions()) async throws -> PlayReport {
        try await play(files: [path], options: options, server: server)
    }

    private static func playBlocking(_ sources: [any PromptSource], connection started: PulseConnection, options: PlayOptions,
                                     server: ServerOptions, control: InterruptControl) throws -> PlayReport {
        // One duck at a time per user, in the order of the queue: wait for this prompt's turn
        // (or be dropped); then undo what a prompt that died left ducked.
        let called = ContinuousClock.now
        let store = try JournalStore()
        let ticket = try PromptQueue(directory: store.runtimeDirectory).enter(priority: options.priority,
                                                                             onBusyDrop: options.onBusy == .drop,
                                                                             name: sources.first?.name ?? "")
        defer { ticket.leave() }
        let lock = try ticket.waitTurn(deadline: options.expireMs.map { called + .milliseconds($0) },
                                       expireMs: options.expireMs, cancelled: { control.isCancelled })
        defer { lock.release() }
        // A newer prompt that interrupts this one says so in the queue.
        let watcher = StopWatcher(ticket: ticket, control: control)
        defer { watcher.cancel() }
        let notes = Recovery.recoverOrphans(store: store, server: server).lines
        // Only a duck on this same server can be taken over (another is left for its owner,
        // or restored once its owner is gone).
        let runtimeDir = Environment.value("XDG_RUNTIME_DIR")
        let handed = store.takeHandover().flatMap { $0.server == server.server && $0.runtimeDir == runtimeDir ? $0 : nil }

        // Started before the queue; a server that went away while this prompt waited its turn
        // (a restart) is connected to again.
        let connection = started.hasFailed
            ? try PulseConnection(server: server.server, clientName: server.clientName, timeout: server.timeout)
            : started
        try connection.waitUntilReady()
        control.attach(connection)
        let (snapshot, info) = try connection.snapshot()
        let route = try route(snapshot, request: options.device, config: options.config)
        let depth: Double = switch options.duckMode {
        case .none: 0
        case .mute: -.infinity
        // Below -200 dB a duck is inaudible already; a journal holds no deeper one.
        case .duck: max(DuckJournal.deepestDepth, min(0, options.duck.value))
        }
        var plan = DuckPlan(inputs: snapshot.sinkInputs, depth: depth, exemptRoles: options.exemptRoles)
        // The duck of a prompt this one interrupted continues: no release in between.
        if let handed { plan.adopt(handed, live: snapshot.sinkInputs) }
        let session = try DuckSession(connection: connection, plan: plan)
        if depth < 0 || !plan.entries.isEmpty || !plan.ended.isEmpty || options.volume != nil {
            // Journaled before the first volume write.
            session.journal = try JournalKeeper(store: store, plan: session.plan, server: server.server,
                                                serverName: info.serverName)
        }
        if handed != nil { store.removeHandover() }
        var properties = options.properties
        properties[PulseConnection.mediaRoleKey] = properties[PulseConnection.mediaRoleKey] ?? "navigation"
        properties["duckprompt.prompt"] = "\(getpid())"
        // Consecutive sources of one format play as one gapless stream; the next stream
        // connects and prefills, corked, while the one before it plays.
        let groups = PromptSequence.groups(sources)
        func makeStream(_ source: any PromptSource, corked: Bool = true) throws -> PromptStream {
            var props = properties
            props[PulseConnection.mediaNameKey] = options.properties[PulseConnection.mediaNameKey] ?? source.name
            return try PromptStream(connection: connection, rate: source.rate, channels: source.channels,
                                    sinkName: route.sink.name, properties: props, volume: nil,
                                    latencyMs: options.latencyMs, corked: corked,
                                    format: source.streamFormat, pull: source.read)
        }
        // A sleeping device gets the stream at once, silence first: it wakes during the
        // pre-roll, which overlaps the attack (the first sample comes after both).
        // A sink that played the interrupted prompt a moment ago is awake (PulseAudio shows it
        // idle in between): no pre-roll, which would leave a gap between the two prompts.
        let preRoll = handed == nil ? options.preRoll(for: route) : 0
        let first: any PromptSource = preRoll > 0
            ? SilencePrefixed(groups[0], milliseconds: max(preRoll, options.attackMs)) : groups[0]
        // Nothing to duck, no pre-roll and no relative volume to set first: no attack to wait
        // for, so the first stream starts as soon as it is filled, without a cork round trip
        // (measured: Docs/performance.md).
        let atOnce = preRoll == 0 && session.plan.entries.isEmpty && options.volume == nil
        var streams: [PromptStream] = [try makeStream(first, corked: !atOnce)]
        // The lock taken back after a handover no one adopted; released on return.
        var reclaimed: RuntimeLock? = nil
        defer { reclaimed?.release() }
        defer { for stream in streams { stream.close() } }

        // --volume is relative to the server's saved volume for the prompt's media.role (the
        // user's pavucontrol setting for prompts): read from the first stream, which starts at
        // it, and set back before the last one ends, so the saved volume stays the user's.
        var slot: ChannelVolumes? = nil
        func ready(_ stream: PromptStream) throws {
            session.exclude(try stream.waitReady())
            guard let gain = options.volume else { return }
            if slot == nil, let own = try stream.ownVolume() {
                slot = own
                let role = properties[PulseConnection.mediaRoleKey]
                session.journal?.setPromptSlot(DuckJournal.Ended(key: RestoreKey(mediaRole: role), original: own),
                                               plan: connection.withLock { session.plan })
            }
            if let slot { stream.setOwnVolume(VolumeMath.scale(slot, by: gain.value)) }
        }
        func restoreSlot() {
            if let slot, let last = streams.last { last.setOwnVolume(slot) }
        }

        let interrupted = { connection.interrupted }
        var finished = false
        do {
            // A busy desktop (many streams to duck): the server links the prompt's stream
            // before the attack floods it with volume writes (WirePlumber, handling 300 streams'
            // writes, did not link it within 5 s).
            let readyFirst = preRoll > 0 || session.plan.entries.count >= Self.busyDesktopStreams
            if readyFirst { try ready(streams[0]) }
            if preRoll > 0 { streams[0].start() }
            // Attack: ramp down while the first stream connects and prefills, corked (or
            // plays its pre-roll).
            if try session.run(toGain: depth, durationMs: options.attackMs, stop: interrupted) {
                finished = true
                for (i, group) in groups.enumerated() where finished {
                    let stream = streams[i]
                    if !(i == 0 && readyFirst) { try ready(stream) }
                    if !(i == 0 && (preRoll > 0 || atOnce)) { stream.start() }
                    if i + 1 < groups.count { streams.append(try makeStream(groups[i + 1])) }
                    // Hold the duck, following streams that come, change or go, until the last
                    // sample has been played.
                    let length = i == 0 ? first.duration : group.duration
                    let deadline = ContinuousClock.now + .milliseconds(Int(length * 1000)) + connection.answerTimeout
                    finished = try session.run(toGain: nil, until: { stream.drainedLocked }, stop: interrupted,
                                               deadline: deadline, what: "playing the prompt")
                    if !finished { stream.fadeOutAndStop(restoring: slot) }
                }
            }
            restoreSlot()
        } catch {
            restoreSlot()
            _ = try? session.run(toGain: 0, durationMs: options.releaseMs)
            // The server died or stalled (or refused the stream): what is not confirmed
            // restored stays journaled for the next duckprompt or `duckprompt restore`.
            if !session.finish(), let journal = session.journal, let failure = error as? DuckPromptError {
                throw DuckPromptError(failure.code, failure.message + Self.keptJournalNote(journal.path))
            }
            throw error
        }
        let report = PlayReport(route: route, duckedStreams: session.touched.sorted(),
                                framesPlayed: streams.reduce(0) { $0 + $1.framesWritten }, recoveryNotes: notes,
                                preRollMs: preRoll)
        // Interrupted by a newer prompt, or played whole while another waits its turn: the next
        // prompt takes the duck over where it is, so that the music does not come back up
        // between the two (the duck is released after the last prompt of a run).
        let interruption = finished ? nil : control.stopReason
        if interruption != nil || (finished && anotherPromptWaits(store: store, ticket: ticket)) {
            switch handOver(session, store: store, ticket: ticket, lock: lock) {
            case .handedOver:
                if let interruption { throw DuckPromptError(.dropped, "prompt \(interruption)") }
                return report
            case .reclaimed(let again): reclaimed = again
            case .kept: break
            }
        }
        _ = try? session.run(toGain: 0, durationMs: options.releaseMs)
        if !session.finish(), let journal = session.journal {
            // The server went away during the release.
            throw DuckPromptError(.unavailable, "the sound server at \(connection.serverDescription) went away "
                + "before every volume was restored" + Self.keptJournalNote(journal.path))
        }
        guard finished else {
            if let reason = control.stopReason { throw DuckPromptError(.dropped, "prompt \(reason)") }
            throw CancellationError()
        }
        return report
    }
}

/// Whether a prompt other than `ticket`'s is in the queue (waiting its turn): then the duck is
/// handed over to it rather than released.
private func anotherPromptWaits(store: JournalStore, ticket: Ticket) -> Bool {
    let queue = PromptQueue(directory: store.runtimeDirectory)
    let live = (try? queue.withQueueLock { _ in try queue.liveTickets() }) ?? []
    return live.contains { $0.seq != ticket.seq }
}

/// What became of a duck handed over (`handOver`).
private enum Handover {
    /// The next prompt adopted it (or will find it).
    case handedOver
    /// No prompt was left to adopt it: it is this prompt's again, with this lock; release it.
    case reclaimed(RuntimeLock)
    /// Nothing was ducked, or the handover file could not be written: release as usual.
    case kept
}

/// Hands a prompt's duck to the next prompt (the one that interrupted it, or the next one
/// waiting its turn): writes `handover.json`, leaves the queue, releases the `RuntimeLock`, and
/// waits until the next prompt adopts it (that one removes the file). When no prompt is left in
/// the queue to adopt it, takes it back with the lock.
private func handOver(_ session: DuckSession, store: JournalStore, ticket: Ticket,
                      lock: RuntimeLock) -> Handover {
    guard (try? session.handOver()) == true else { return .kept }
    ticket.leave()
    lock.release()
    let queue = PromptQueue(directory: store.runtimeDirectory)
    let giveUp = ContinuousClock.now + .seconds(10)
    while store.hasHandover && ContinuousClock.now < giveUp {
        sleepThread(for: PromptQueue.pollInterval)
        // No one left to adopt it (the interrupting prompt died or was dropped)?
        let nobody = (try? queue.withQueueLock { _ in try queue.liveTickets().isEmpty }) ?? false
        if nobody, let again = try? RuntimeLock.tryAcquire(in: store.runtimeDirectory) {
            if session.reclaim() { return .reclaimed(again) }
            again.release()
        }
    }
    // Adopted; or, after 10 s, left for the next duckprompt to restore once this one exits.
    return .handedOver
}

/// Watches a playing prompt's ticket for a stop request from a newer prompt, and stops the
/// prompt (`InterruptControl.stop`) when one comes. It sleeps until the ticket's `Doorbell`
/// rings; without one it polls every `PromptQueue.pollInterval`.
private final class StopWatcher: @unchecked Sendable {
    private let lock = Lock()
    private var cancelled = false
    private let bell: Doorbell?

    init(ticket: Ticket, control: InterruptControl) {
        bell = ticket.doorbell
        startThread { [self] in
            while true {
                if let reason = ticket.stopReason {
                    control.stop(reason: reason)
                    return
                }
                if lock.withLock({ cancelled }) { return }
                if let bell {
                    // A safety net of 1 s: a request is seen at once, through the bell.
                    bell.wait(timeoutMs: 1000)
                } else {
                    sleepThread(for: PromptQueue.pollInterval)
                }
            }
        }
    }

    func cancel() {
        lock.withLock { cancelled = true }
        bell?.wake()
    }
}

/// Carries prompt sources (reference types read on one thread at a time) to the driver thread.
private final class SourceList: @unchecked Sendable {
    let sources: [any PromptSource]
    init(_ sources: [any PromptSource]) { self.sources = sources }
}

/// Lets Task cancellation reach a connection that a blocking thread owns.
final class InterruptControl: @unchecked Sendable {
    private let lock = Lock()
    private var connection: PulseConnection?
    private var cancelled = false

    func attach(_ connection: PulseConnection) {
        let cancelNow = lock.withLock { () -> Bool in
            self.connection = connection
            return cancelled
        }
        if cancelNow { connection.interrupt() }
    }

    private var reason: String?

    /// Whether the caller cancelled (checked while waiting for the duck lock).
    var isCancelled: Bool { lock.withLock { cancelled } }

    /// Why a newer prompt stopped this one (`stop(reason:)`), nil otherwise.
    var stopReason: String? { lock.withLock { reason } }

    /// Stops the prompt because a newer one interrupts it: like `cancel()`, but the duck is
    /// handed over rather than released.
    func stop(reason: String) {
        let connection = lock.withLock { () -> PulseConnection? in
            self.reason = reason
            return self.connection
        }
        connection?.interrupt()
    }

    func cancel() {
        let (connection, wake) = lock.withLock { () -> (PulseConnection?, WakePipe?) in
            cancelled = true
            return (self.connection, self.wake)
        }
        wake?.signal()
        connection?.interrupt()
    }

    private var wake: WakePipe?

    /// A descriptor that is readable once `cancel()` was called, for a `poll` on input that
    /// may never come (`WaitingInput.readAll`); the pipe is made on the first call. Nil when
    /// no pipe can be made.
    func cancelDescriptor() -> Int32? {
        let (pipe, cancelledAlready) = lock.withLock { () -> (WakePipe?, Bool) in
            if wake == nil { wake = WakePipe() }
            return (wake, cancelled)
        }
        if cancelledAlready { pipe?.signal() }
        return pipe?.descriptor
    }
}

/// Stops a prompt that `DuckPrompt.playBlocking` runs, from another thread.
public final class PlayCancellation: Sendable {
    let control = InterruptControl()

    public init() {}

    /// Stops the prompt: every ducked stream is ramped back, and `playBlocking` throws
    /// `CancellationError`. Thread-safe; before the prompt has started, it never starts.
    public func cancel() { control.cancel() }

    /// Whether `cancel()` was called.
    public var isCancelled: Bool { control.isCancelled }
}

/// Runs blocking libpulse work on its own thread (it waits on the threaded mainloop's
/// condition), resuming the caller when done; Task cancellation interrupts it.
func runBlocking<T: Sendable>(_ control: InterruptControl,
                              _ body: @escaping @Sendable (InterruptControl) throws -> T) async throws -> T {
    try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            startThread {
                continuation.resume(with: Result { try body(control) })
            }
        }
    } onCancel: {
        control.cancel()
    }
}
