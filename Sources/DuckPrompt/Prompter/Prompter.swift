import FoundationEssentials
import Glibc

/// A prompter an app creates once and keeps for a drive: one libpulse connection for every
/// prompt, prompts queued in call order and played one at a time by speech-dispatcher's
/// priorities, an id per prompt, `cancel(_:)`, and a stream of events.
///
/// ```swift
/// let prompter = try Prompter()
/// let events = prompter.events()
/// var options = PlayOptions(config: try DuckPromptConfig.load())
/// options.priority = .message
/// let id = try prompter.play(files: ["turn-left.wav"], options: options)
/// for await event in events {
///     print(event)
///     if case .finished(let which, _) = event, which == id { break }
/// }
/// ```
/// (Examples/HeldPrompter is the whole program.)
///
/// Each prompt waits for its turn on the prompter's one waiting thread (`TurnWaiter`), then
/// runs on a thread of its own, as a `duckprompt play` process would: the queue in
/// `$XDG_RUNTIME_DIR/duckprompt/` (`PromptQueue`) orders the prompts of every prompter and
/// every `duckprompt` command of the user, interrupts and replaces them, and hands the duck
/// from one to the next, so the music stays down between queued prompts. `DuckPrompt.play`
/// and the command play their one prompt through a prompter too (`runHere`).
///
/// The connection is made when the prompter is created (the handshake runs in libpulse's
/// thread) and kept, with a copy of the server's sinks and streams kept current from its events
/// (a prompt routes from it without reading the server) and the last prompt's stream kept
/// ready, corked, for the next prompt of the same format on the same sink (pavucontrol lists
/// it). When the server goes away, or stops answering for longer than `ServerOptions.timeoutMs`,
/// a prompt in flight ends `.failed`; the prompter connects
/// again by itself as soon as the server answers (`HeldConnection`), and restores what that
/// prompt left ducked (its journal, kept until then); a prompt asked for meanwhile connects
/// and restores first.
///
/// Thread-safe: `play`, `say`, `cancel`, `close`, `events` and `result(of:)` may be called
/// from any thread (an app's UI thread, its own threads, Tasks).
public final class Prompter: Sendable {
    /// A prompt's id, unique within its prompter, in call order.
    public struct PromptID: Hashable, Sendable, Comparable, CustomStringConvertible {
        public let value: UInt64
        /// The id whose `value` is `value` (as a D-Bus caller of `duckprompt serve` passes it
        /// back to `Cancel`); an id this prompter never gave names no prompt.
        public init(_ value: UInt64) { self.value = value }
        public static func < (a: PromptID, b: PromptID) -> Bool { a.value < b.value }
        public var description: String { "#\(value)" }
    }

    /// Where a prompt started: the routed sink, its kind and the pre-roll of silence it got.
    public struct Start: Sendable, Equatable {
        /// The sink's name (`pa_sink_info.name`).
        public var sink: String
        /// Its kind, as `devices` classifies it.
        public var kind: DeviceKind
        /// Silence played first to wake a sleeping device, in ms (0: none).
        public var preRollMs: Int
    }

    /// How a prompt ended.
    public enum Outcome: Sendable {
        /// Played whole; its duck released, or handed to the next prompt.
        case played(PlayReport)
        /// Stopped by a newer prompt (`message` or `important` over a `text`); the duck was
        /// handed over. The error is `.dropped` (75) with its reason.
        case interrupted(DuckPromptError)
        /// A newer `text` or `progress` prompt took its place before it started.
        case replaced(DuckPromptError)
        /// Not played: another prompt played or waited (`notification`, `--on-busy drop`).
        case dropped(DuckPromptError)
        /// Not started by its deadline (`PlayOptions.expireMs`).
        case expired(DuckPromptError)
        /// `cancel(_:)` or `close()`: stopped, every ducked stream ramped back (or its duck
        /// handed to the next prompt: `cancel(_:keepingDuckFor:)`, or one waiting already).
        case cancelled
        /// No server, no usable sink, the stream refused, the server gone mid-prompt: the
        /// error says which, and names the journal when a duck is left to restore.
        case failed(DuckPromptError)

        /// The outcome of a prompt that ended with `result`.
        init(_ result: Result<PlayReport, any Error>) {
            switch result {
            case .success(let report): self = .played(report)
            case .failure(is CancellationError): self = .cancelled
            case .failure(let error as DuckPromptError):
                self = switch error.dropReason {
                case .interrupted: .interrupted(error)
                case .replaced: .replaced(error)
                case .busy, .duringCall: .dropped(error)
                case .expired: .expired(error)
                case nil: .failed(error)
                }
            case .failure(let error): self = .failed(DuckPromptError(.internal, "\(error)"))
            }
        }
    }

    /// What a prompter tells of its prompts, in the order it happened.
    public enum Event: Sendable {
        /// `play` queued it; `name` is its `media.name` (the first file's or text's name).
        case queued(PromptID, name: String)
        /// The first sample of its own audio (after any pre-roll's silence) has been handed to
        /// the server for `start.sink`, the stream playing (`pa_stream_write`, uncorked).
        case started(PromptID, Start)
        /// When its first own sample reaches the device, and its end: after `started`, once
        /// the server said where the stream stands (not sent when it could not).
        case timing(PromptID, Timing)
        /// It ended.
        case finished(PromptID, Outcome)
    }

    /// When a prompt is heard, on the CLOCK_MONOTONIC clock in µs (`clock_gettime`), from the
    /// server's timing answer for its stream once its first own sample was handed over
    /// (`pa_stream_update_timing_info`): `firstSampleUs` is when that sample, after any
    /// pre-roll's silence, leaves the sink for the device (its read index, a byte's time for
    /// each byte before it, and what the sink holds: `sink_usec`); `endUs` is `firstSampleUs`
    /// plus the prompt's length (its files' headers; a text's synthesized length, an upper
    /// bound while its synthesis runs ahead, `SpeechSource.duration`), its parts end to end.
    public struct Timing: Sendable, Equatable {
        public var firstSampleUs: Int64
        public var endUs: Int64
        public init(firstSampleUs: Int64, endUs: Int64) {
            self.firstSampleUs = firstSampleUs
            self.endUs = endUs
        }
    }

    private let server: ServerOptions
    /// How long a prompt played whole keeps its duck for the next prompt (nil: not kept, the
    /// default): speech-dispatcher's module, which reports a message's end when its audio
    /// ended and gets the next message only then, keeps it 300 ms, so that the music does not
    /// come up between messages. Set once, before the first prompt.
    package let keepDuckAfterPlaying: Duration?
    /// Told when a prompt's audio is over (played whole, faded out, or not played at all),
    /// before its duck is handed over or released, on the prompt's thread: it must not wait.
    /// Its `finished` event comes once the duck was adopted or released.
    package let onAudioEnded: (@Sendable (PromptID) -> Void)?
    /// The connection kept up, and the stream kept ready between prompts; nil for a prompter
    /// held for one prompt.
    private let held: HeldConnection?
    private let state: LockedState
    private let lock = Lock()
    /// Where this prompter's queued prompts wait for their turn: one thread for them all.
    private let turns = TurnWaiter()
    /// The calls the buses know of, for the prompts' `--during-call` (followed when held).
    let calls: PromptCalls
    /// The silence that keeps the route's sink awake (`keepAwake(seconds:)`); made at the
    /// first call. Guarded by `lock`.
    nonisolated(unsafe) private var keeper: SinkKeeper?

    /// Creates a prompter and starts connecting to the server (the handshake runs in
    /// libpulse's thread; then its sinks, sink-inputs and server info are read once and
    /// followed: `pa_context_subscribe`).
    /// - Throws: `DuckPromptError(.unavailable)` when the server refuses at once (most
    ///   refusals come later: the first prompt then connects again, and ends `.failed` if
    ///   the server still does not answer). libpulse: `pa_context_connect`.
    public convenience init(server: ServerOptions = ServerOptions()) throws {
        try self.init(server: server, connection: PulseConnection(server, waitingUntilReady: false), held: true)
    }

    /// A held prompter whose prompts played whole keep their duck `keepDuckAfterPlaying` for
    /// the next one, and that tells `onAudioEnded` when each prompt's audio is over
    /// (speech-dispatcher's module).
    /// - Throws: what `init(server:)` throws.
    package convenience init(server: ServerOptions, keepDuckAfterPlaying: Duration?,
                             onAudioEnded: @escaping @Sendable (PromptID) -> Void) throws {
        try self.init(server: server, connection: PulseConnection(server, waitingUntilReady: false), held: true,
                      keepDuckAfterPlaying: keepDuckAfterPlaying, onAudioEnded: onAudioEnded)
    }

    /// A prompter on a connection begun already (the one-shot `DuckPrompt.play` starts it
    /// before opening its files, and keeps no stream ready: its process ends after the prompt).
    init(server: ServerOptions, connection: PulseConnection, held: Bool = false,
         keepDuckAfterPlaying: Duration? = nil, onAudioEnded: (@Sendable (PromptID) -> Void)? = nil) {
        self.server = server
        // Zero keeps nothing.
        self.keepDuckAfterPlaying = keepDuckAfterPlaying.flatMap { $0 > .zero ? min($0, Self.maxDuckKeep) : nil }
        self.onAudioEnded = onAudioEnded
        // Held: the copy of the server a prompt routes from is filled once the handshake is
        // done (a prompt that comes first reads the server itself), and the connection is
        // made again when the server comes back.
        self.held = held ? HeldConnection(connection, server: server) : nil
        calls = PromptCalls(held: held)
        state = LockedState(connection: connection)
    }

    /// A prompter let go without `close()` ends its connection's thread and kept stream.
    deinit { held?.close() }

    // MARK: - Playing

    /// Queues a prompt: returns once it is in the queue, before it plays. Its events follow on
    /// `events()`; `result(of:)` waits for its end.
    ///
    /// - Parameters:
    ///   - sources: the prompt's parts, played under one duck (opened: bad input was refused
    ///     when they were made).
    ///   - options: its priority, duck, ramps, device, deadline.
    /// - Returns: the prompt's id. A prompt the queue drops at once (a `notification` while
    ///   another plays) gets an id too, and finishes `.dropped` at once.
    /// - Throws: `DuckPromptError(.usage)` (64) for no source, an option out of range
    ///   (`PlayOptions.validate()`) or a closed prompter; `.internal` when the runtime
    ///   directory cannot be used.
    /// It then plays on a thread of its own, routed from the prompter's copy of the server:
    /// libpulse `pa_stream_connect_playback` (or the kept stream, `pa_stream_cork`),
    /// `pa_context_set_sink_input_volume` for the duck's ramps, `pa_stream_drain`.
    @discardableResult
    public func play(_ sources: [any PromptSource], options: PlayOptions = PlayOptions()) throws -> PromptID {
        try options.validate()
        return try play(sources, options: options, dropAtCall: false)
    }

    /// `play(_:options:)` for options already validated (`PlayOptions.validate()`, which the
    /// caller ran once, before it opened anything); with `dropAtCall`, a prompt the queue
    /// drops at once is not given an id: the call throws `DuckPromptError(.dropped)` (75, with
    /// its `dropReason`), and no event is sent (the D-Bus service's `Error.Dropped`).
    package func play(_ sources: [any PromptSource], options: PlayOptions, dropAtCall: Bool) throws -> PromptID {
        guard !sources.isEmpty else { throw DuckPromptError(.usage, "nothing to play: a prompt needs a file or a text") }
        // The sinks it will route from, asked for now: the answer comes while it takes its
        // place in the queue and its turn (`PulseConnection.routingSnapshot`).
        held?.current.prefetchSinks()
        let name = sources.first?.name ?? ""
        let control = InterruptControl(keepAfterPlaying: keepDuckAfterPlaying)
        // Under the lock: ids, and places in the queue, in call order.
        let (id, entered) = try lock.withLock { () throws -> (PromptID, Result<QueueEntry, DuckPromptError>) in
            guard !state.closed else { throw DuckPromptError(.usage, "the prompter is closed") }
            let entered: Result<QueueEntry, DuckPromptError>
            do {
                let store = try state.runtimeStore ?? JournalStore()
                state.runtimeStore = store
                entered = .success(try QueueEntry(options: options, name: name, store: store))
            } catch let error as DuckPromptError where error.dropReason != nil {
                if dropAtCall { throw error }
                entered = .failure(error)
            }
            return (state.register(control), entered)
        }
        emit(.queued(id, name: name))
        let entry: QueueEntry
        switch entered {
        case .success(let e):
            entry = e
            DebugTrace.write("prompter: \(id) queued (ticket \(e.ticket.seq))")
        case .failure(let dropped):
            finish(id, .failure(dropped))
            return id
        }
        // It waits for its turn on the prompter's one waiting thread, and gets a thread of its
        // own once the turn came (or it was dropped, expired, cancelled).
        let box = SourceList(sources)
        turns.wait(TurnWaiter.Waiting(ticket: entry.ticket, deadline: options.expireMs.map { .now + .milliseconds($0) },
                                      expireMs: options.expireMs, cancelled: { control.isCancelled }) { [self] turn in
            startThread { [self] in
                let result = Result {
                    try perform(box.sources, options: options, entry: entry, id: id, control: control, turn: turn)
                }
                finish(id, result)
            }
        })
        return id
    }

    /// Opens the files with libsndfile and queues them, then the texts to be spoken, as one
    /// prompt (`play(_:options:)`). Blocks while the files are opened and checked.
    /// - Parameters:
    ///   - voice: an espeak-ng voice for the texts (nil: `options.voice`, else
    ///     `SpeechSource.defaultVoice`).
    ///   - wordsPerMinute: the speech rate in words per minute, within
    ///     `PlayOptions.wordsPerMinuteRange` (nil: `options.wordsPerMinute`, else
    ///     `SpeechSource.defaultWordsPerMinute`).
    /// - Throws: `.noInput` (66), `.unsupportedData` (65), `.usage` (64) for an empty or too
    ///   long text, an unknown voice or rate; what `play(_:options:)` throws.
    /// libsndfile `sf_open`; for texts, libespeak-ng `espeak_ng_Synthesize` (opened with `dlopen` on first use).
    @discardableResult
    public func play(files paths: [String], say texts: [String] = [], voice: String? = nil,
                     wordsPerMinute: Int? = nil, options: PlayOptions = PlayOptions()) throws -> PromptID {
        try options.validate()
        return try play(try DuckPrompt.sources(files: paths, say: texts, voice: voice ?? options.voice,
                                               wordsPerMinute: wordsPerMinute ?? options.wordsPerMinute),
                        options: options, dropAtCall: false)
    }

    /// Speaks `text` with libespeak-ng (`play(files: [], say: [text], …)`): at most
    /// `SpeechSource.maxTextLength` Unicode code points, `wordsPerMinute` in words per minute.
    /// - Throws: what `play(files:say:voice:wordsPerMinute:options:)` throws; `.unavailable`
    ///   (69) when libespeak-ng cannot be loaded.
    @discardableResult
    public func say(_ text: String, voice: String? = nil, wordsPerMinute: Int? = nil,
                    options: PlayOptions = PlayOptions()) throws -> PromptID {
        try play(files: [], say: [text], voice: voice, wordsPerMinute: wordsPerMinute, options: options)
    }

    /// Stops a prompt: one that waits never plays; one that plays fades out over 50 ms (its
    /// own stream's volume: `pa_context_set_sink_input_volume`, then `pa_stream_cork` and
    /// `pa_stream_flush`) and its duck is ramped back (the release). It finishes
    /// `.cancelled`. Nothing for an id that has finished or that this prompter never gave.
    /// Does not wait.
    public func cancel(_ id: PromptID) {
        lock.withLock { state.controls[id] }?.cancel()
    }

    /// Stops a prompt as `cancel(_:)` does, but keeps its duck for the next prompt: one that
    /// plays fades out over 50 ms, and its duck is handed over (the music stays down) to the
    /// next prompt, of this prompter or any other, that enters the queue within `keep` of the
    /// fade's end, or that waits already; if none comes by then, the duck is ramped back as
    /// after `cancel(_:)`. For a caller that stops a prompt to say another at once
    /// (speech-dispatcher's module stops a message, then gets the one that interrupts it).
    /// It finishes `.cancelled` once the next prompt took the duck (at its turn, before it is
    /// routed) or the duck was released. `keep` is clamped to `0...maxDuckKeep`; 0 is
    /// `cancel(_:)`.
    public func cancel(_ id: PromptID, keepingDuckFor keep: Duration) {
        let bounded = min(max(keep, .zero), Self.maxDuckKeep)
        guard let control = lock.withLock({ state.controls[id] }) else { return }
        if bounded > .zero { control.cancel(keepingDuckFor: bounded) } else { control.cancel() }
    }

    /// The longest a prompt keeps its duck for the next one (`cancel(_:keepingDuckFor:)`, and a
    /// held prompter's keeping after a prompt played whole): 1 s.
    public static let maxDuckKeep: Duration = .seconds(1)

    /// Cancels every prompt (`cancel(_:)`), refuses new ones and closes the kept stream
    /// (`pa_stream_disconnect`); each event stream ends once the last prompt has finished.
    /// The connection ends (`pa_context_disconnect`) when the prompter and its last prompt
    /// are gone. Does not wait.
    public func close() {
        let controls = lock.withLock { () -> [InterruptControl] in
            state.closed = true
            return Array(state.controls.values)
        }
        for control in controls { control.cancel() }
        lock.withLock { keeper }?.stop()
        calls.close()
        held?.close()
        endStreamsIfIdle()
    }

    // MARK: - Keeping the sink awake

    /// Keeps the sink a prompt would go to now from suspending for `seconds` (0 ends it now),
    /// so that a prompt on a Bluetooth or HDMI sink, which would sleep after 5 s idle, needs no
    /// pre-roll: silence plays on it (`SinkKeeper`), never ducked, moved when the route moves
    /// (`followRoute`). A later call replaces the time. The service's `KeepAwake(u seconds)`.
    /// - Parameters:
    ///   - seconds: how long, 0 … `keepAwakeRange` (an hour).
    ///   - config: the user's routing settings (`DuckPromptConfig.load()`).
    /// - Returns: the sink kept awake, nil when `seconds` was 0.
    /// - Throws: `.usage` for seconds out of range or a closed prompter; `.unavailable` when no
    ///   sink can be routed to or the server refuses the stream.
    @discardableResult
    public func keepAwake(seconds: Double, config: DuckPromptConfig = DuckPromptConfig()) throws -> String? {
        guard Self.keepAwakeRange.contains(seconds) else {
            throw DuckPromptError(.usage, "keep-awake \(formatted("%g", seconds)) s is out of range (0 to \(Int(Self.keepAwakeRange.upperBound)) s)")
        }
        let silence = try lock.withLock { () throws -> SinkKeeper in
            guard !state.closed else { throw DuckPromptError(.usage, "the prompter is closed") }
            if let made = keeper { return made }
            let made = SinkKeeper(connection: { [weak self] in
                guard let self else { throw DuckPromptError(.usage, "the prompter is closed") }
                return try reconnect()
            })
            keeper = made
            return made
        }
        guard seconds > 0 else {
            silence.stop()
            return nil
        }
        let listing = try devices(config: config)
        guard let route = listing.route else {
            throw listing.routeError ?? DuckPromptError(.unavailable, "no sink to keep awake")
        }
        try silence.keep(route.sink.name, for: .milliseconds(Int64(seconds * 1000)))
        return route.sink.name
    }

    /// The route moved to `sink` (the service's route watch): a sink kept awake moves with it.
    package func followRoute(_ sink: String) {
        lock.withLock { keeper }?.follow(sink)
    }

    /// Whether a sink is kept awake now (`keepAwake(seconds:)`): the service does not leave
    /// on `--exit-idle` meanwhile.
    package var isKeepingAwake: Bool { lock.withLock { keeper }?.keptSink != nil }

    /// `keepAwake(seconds:)`'s range: 0 … 3600 s.
    public static let keepAwakeRange: ClosedRange<Double> = 0...3600

    // MARK: - Devices

    /// The server's sinks classified, and the route a prompt of this prompter would take now
    /// (the service's `Route()` and `Devices()`), from the same copy of the server its prompts
    /// route from: a held prompter reads only the sinks from the server for it, the rest from
    /// its copy (`ServerMirror`, `routingSnapshot`).
    /// - Parameters:
    ///   - request: route as if this sink had been asked for (nil: `PULSE_SINK`, else the rules).
    ///   - config: the user's routing settings (`DuckPromptConfig.load()`).
    /// - Returns: the listing; a sink the rules cannot route to is `routeError`, not a throw.
    /// - Throws: `.unavailable` when the server refuses or does not answer in time; `.usage`
    ///   once closed. libpulse: the mirror's `pa_context_get_sink_info_list`,
    ///   `pa_context_get_sink_input_info_list`, `pa_context_get_server_info`, kept current by
    ///   `pa_context_subscribe`.
    public func devices(request: DeviceRequest? = nil, config: DuckPromptConfig = DuckPromptConfig()) throws -> DeviceListing {
        let connection = try reconnect()
        try connection.waitUntilReady()
        let (snapshot, info) = try connection.routingSnapshot()
        return DeviceListing(snapshot: snapshot, request: request ?? config.device ?? DuckPrompt.defaultRequest(), config: config,
                             serverName: info.serverName, serverVersion: info.serverVersion,
                             busCalls: calls.readings())
    }

    /// `devices(request:config:)` from the prompter's copy of the server as it stands, with no
    /// sink list read anew (`currentSnapshot()`, where `devices` reads the sinks again as a
    /// prompt's route does): whether a call's `device` names a sink now, for the D-Bus
    /// service's check at the call, which is on the way from `PlayFd` to the first sample. A
    /// sink's presence is followed by events (its state and latency need not be, and are not
    /// asked for here).
    /// - Throws: as `devices(request:config:)`.
    package func listingFromCopy(request: DeviceRequest, config: DuckPromptConfig) throws -> DeviceListing {
        let connection = try reconnect()
        try connection.waitUntilReady()
        let (snapshot, info) = try connection.currentSnapshot()
        return DeviceListing(snapshot: snapshot, request: request, config: config, serverName: info.serverName,
                             serverVersion: info.serverVersion, busCalls: calls.readings())
    }

    // MARK: - Events and results

    /// The prompter's events from now on, in order: every prompt's `queued`, `started` (if it
    /// started) and `finished`. Each call makes a stream of its own; it ends after `close()`.
    public func events() -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream.makeStream(of: Event.self)
        let token = lock.withLock { () -> UInt64? in
            guard !(state.closed && state.controls.isEmpty) else { return nil }
            state.nextToken += 1
            state.streams[state.nextToken] = continuation
            return state.nextToken
        }
        guard let token else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [self] _ in lock.withLock { _ = state.streams.removeValue(forKey: token) } }
        return stream
    }

    /// Waits for a prompt's end.
    /// - Returns: its report when it played.
    /// - Throws: what it ended with: `DuckPromptError` (`.dropped` with a `dropReason`, or a
    ///   failure), `CancellationError`; `.usage` for an id this prompter never gave or whose
    ///   result is no longer kept (the last `keptResults`).
    public func result(of id: PromptID) async throws -> PlayReport {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<PlayReport, any Error>) in
            let known = lock.withLock { () -> Result<PlayReport, any Error>?? in
                if let result = state.results[id] { return .some(result) }
                guard state.controls[id] != nil else { return .none }
                state.waiters[id, default: []].append(continuation)
                return .some(nil)
            }
            switch known {
            case .none:
                continuation.resume(throwing: DuckPromptError(.usage, "no prompt \(id) is known to this prompter"))
            case .some(.some(let result)): continuation.resume(with: result)
            case .some(.none): break
            }
        }
    }

    /// How many finished prompts' results `result(of:)` can still return.
    public static let keptResults = 256

    /// For tests: the next `count` prompts that play on the stream this prompter kept find it
    /// not playing after its uncork (`ReadyStreamKeeper.withholdUncorks`). No effect on a
    /// prompter that is not held.
    package func withholdKeptUncorks(_ count: Int) {
        held?.keeper.withholdUncorks(count)
    }

    // MARK: - One prompt

    /// Plays one prompt on the calling thread, entering the queue first: the one-shot
    /// `DuckPrompt.play` and the command (no events, no other prompt of this prompter).
    /// - Throws: what `play(_:options:)` documents for its outcome.
    func runHere(_ sources: [any PromptSource], options: PlayOptions, control: InterruptControl) throws -> PlayReport {
        let entry = try QueueEntry(options: options, name: sources.first?.name ?? "")
        return try perform(sources, options: options, entry: entry, id: nil, control: control)
    }

    /// The one implementation of a prompt: `DuckPrompt.runPrompt` on the held connection,
    /// connecting again when it failed.
    /// - Parameter turn: the turn's lock when the `TurnWaiter` waited for it (or why the prompt
    ///   will not play); nil: the prompt waits for it itself.
    private func perform(_ sources: [any PromptSource], options: PlayOptions, entry: QueueEntry, id: PromptID?,
                         control: InterruptControl, turn: Result<RuntimeLock, any Error>? = nil) throws -> PlayReport {
        let connection = held?.current ?? lock.withLock { state.connection }
        // The start's time, stamped on the loop thread, read here once the prompt is over.
        let started = StartStamp()
        var report = try DuckPrompt.runPrompt(sources, connection: connection, options: options, server: server,
                                              control: control, entered: entry, turn: turn,
                                              reconnect: { [self] in try reconnect() },
                                              keeper: held?.keeper, calls: calls, buses: held?.buses,
                                              onStarted: { [self] route, preRoll in
            started.stamp()
            guard let id else { return }
            emit(.started(id, Start(sink: route.sink.name, kind: route.classification.kind, preRollMs: preRoll)))
        }, onTiming: { [self] timing in
            if let id { emit(.timing(id, timing)) }
        }, onAudioEnded: { [onAudioEnded] in
            if let id { onAudioEnded?(id) }
        })
        report.startedAt = started.instant
        return report
    }

    /// When a prompt started (`PlayReport.startedAt`): stamped on one thread, read on another.
    private final class StartStamp: @unchecked Sendable {
        private let lock = Lock()
        private var stamped: ContinuousClock.Instant?
        func stamp() { lock.withLock { stamped = .now } }
        var instant: ContinuousClock.Instant? { lock.withLock { stamped } }
    }

    /// Whether this prompter keeps a stream of `shape` ready (`ReadyStreamKeeper.keeps`).
    func keepsStream(_ shape: PromptStream.Shape) -> Bool {
        held?.keeper.keeps(shape) ?? false
    }

    /// The held connection when it is up, else a new one (kept, when held).
    /// - Throws: `.unavailable` when the server refuses or does not answer.
    func reconnect() throws -> PulseConnection {
        if let held { return try held.usable() }
        let connection = lock.withLock { state.connection }
        return connection.hasFailed ? try PulseConnection(server) : connection
    }

    private func emit(_ event: Event) {
        for continuation in lock.withLock({ Array(state.streams.values) }) { continuation.yield(event) }
    }

    private func finish(_ id: PromptID, _ result: Result<PlayReport, any Error>) {
        // The event first: an app that awaits the result and then reads the events sees it.
        emit(.finished(id, Outcome(result)))
        let waiters = lock.withLock { () -> [CheckedContinuation<PlayReport, any Error>] in
            state.controls[id] = nil
            state.results[id] = result
            state.finished.append(id)
            if state.finished.count > Self.keptResults { state.results[state.finished.removeFirst()] = nil }
            return state.waiters.removeValue(forKey: id) ?? []
        }
        for waiter in waiters { waiter.resume(with: result) }
        endStreamsIfIdle()
    }

    /// After `close()`, once no prompt is left, ends every event stream.
    private func endStreamsIfIdle() {
        let ending = lock.withLock { () -> [AsyncStream<Event>.Continuation] in
            guard state.closed, state.controls.isEmpty else { return [] }
            defer { state.streams.removeAll() }
            return Array(state.streams.values)
        }
        for continuation in ending { continuation.finish() }
    }
}

/// A prompter's mutable state, guarded by its `lock`.
private final class LockedState: @unchecked Sendable {
    var connection: PulseConnection
    var closed = false
    var nextID: UInt64 = 0
    /// The prompts not finished yet.
    var controls: [Prompter.PromptID: InterruptControl] = [:]
    var results: [Prompter.PromptID: Result<PlayReport, any Error>] = [:]
    var finished: [Prompter.PromptID] = []
    var waiters: [Prompter.PromptID: [CheckedContinuation<PlayReport, any Error>]] = [:]
    var streams: [UInt64: AsyncStream<Prompter.Event>.Continuation] = [:]
    var nextToken: UInt64 = 0
    /// The runtime directory the prompts' tickets and journals go in, opened at the first
    /// prompt and kept: one descriptor for every prompt, not one for each that waits.
    var runtimeStore: JournalStore?

    init(connection: PulseConnection) { self.connection = connection }

    func register(_ control: InterruptControl) -> Prompter.PromptID {
        nextID += 1
        let id = Prompter.PromptID(nextID)
        controls[id] = control
        return id
    }
}

/// Carries prompt sources (reference types read on one thread at a time) to the thread that
/// plays them.
final class SourceList: @unchecked Sendable {
    let sources: [any PromptSource]
    init(_ sources: [any PromptSource]) { self.sources = sources }
}
