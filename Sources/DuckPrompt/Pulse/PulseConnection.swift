import CPulseAudio
import FoundationEssentials
import Glibc

/// One libpulse connection: a `pa_threaded_mainloop` and a `pa_context` in the READY state.
///
/// The only type (with its extensions and the streams in this folder) that calls libpulse; the
/// measuring target `DuckPromptProbe` opens its tones and recordings on it through
/// `PlaybackStream` and `RecordStream` (`package` access). Every call into
/// libpulse holds the loop lock (`withLock`). C callbacks capture nothing: they get the
/// mainloop or a box through `userdata`, copy data out, and `pa_threaded_mainloop_signal`.
/// Blocking waits use the documented threaded-mainloop pattern (`pa_threaded_mainloop_wait`
/// inside the lock) and therefore run on a dedicated thread, never inside the loop's thread.
package final class PulseConnection: @unchecked Sendable {
    package let mainloop: OpaquePointer
    let context: OpaquePointer
    /// The server as the user would name it in an error message.
    let serverDescription: String
    /// Set by `interrupt()`: every blocking wait returns early once it is true.
    private(set) var interrupted = false
    /// How long the server may take to answer one request before it counts as gone.
    let answerTimeout: Duration
    /// The inboxes the subscribe callback writes to, kept alive here (guarded by the loop
    /// lock); the callback reaches it unretained.
    let subscribers: Subscribers
    /// Set once the server left a request unanswered for `answerTimeout` (`markStalledLocked`):
    /// from then on the connection counts as lost, nothing more is sent or waited for, and the
    /// prompt ends as if the server had died. Guarded by the loop lock.
    private(set) var stalled = false
    /// The sign-of-life requests of long waits (`checkAnsweringLocked`); lives as long as the
    /// context, which its callbacks reach unretained.
    let probe: LivenessProbe

    /// The PipeWire client that follows nodes' volumes (`pipeWireWatchLocked()`): tried once,
    /// kept for the connection's life. Lock held.
    private var nodeWatch: PipeWireWatch?
    private var triedNodeWatch = false

    /// Told when the context fails or ends (the state callback reaches it unretained): a held
    /// prompter's thread waits on it to connect again.
    let loss: ConnectionLoss

    /// When `waitUntilReady()` gives up.
    private let readyDeadline: ContinuousClock.Instant

    /// Connects and waits for the context to be READY.
    ///
    /// - Parameters:
    ///   - server: a libpulse server string (`unix:/path`, `tcp:host:port`), or nil for the
    ///     default (`PULSE_SERVER`, then `$XDG_RUNTIME_DIR/pulse/native`).
    ///   - clientName: `application.name` of the client.
    ///   - timeout: give up after this long.
    ///   - waitingUntilReady: false returns once the connection has started: the handshake
    ///     (a few round trips) goes on in libpulse's thread meanwhile, and `waitUntilReady()`
    ///     must be called before the connection is used.
    /// - Throws: `DuckPromptError(.unavailable)` naming the server when it refuses, fails or
    ///   does not answer in time. libpulse: `pa_context_connect` with `PA_CONTEXT_NOAUTOSPAWN`.
    package init(server: String?, clientName: String, timeout: Duration, waitingUntilReady: Bool = true) throws {
        serverDescription = PulseConnection.describe(server: server)
        answerTimeout = timeout
        guard let ml = libpulse.pa_threaded_mainloop_new() else {
            throw DuckPromptError(.internal, "pa_threaded_mainloop_new failed")
        }
        let api = libpulse.pa_threaded_mainloop_get_api(ml)
        let props = libpulse.pa_proplist_new()
        _ = libpulse.pa_proplist_sets(props, PA_PROP_APPLICATION_NAME, clientName)
        guard let ctx = libpulse.pa_context_new_with_proplist(api, clientName, props) else {
            libpulse.pa_proplist_free(props)
            libpulse.pa_threaded_mainloop_free(ml)
            throw DuckPromptError(.internal, "pa_context_new failed")
        }
        libpulse.pa_proplist_free(props)
        mainloop = ml
        context = ctx
        probe = LivenessProbe(mainloop: ml)
        subscribers = Subscribers(mainloop: ml)
        loss = ConnectionLoss(mainloop: ml)
        libpulse.pa_context_set_state_callback(ctx, { context, userdata in
            let loss = Unmanaged<ConnectionLoss>.fromOpaque(userdata!).takeUnretainedValue()
            let state = libpulse.pa_context_get_state(context)
            if state == PA_CONTEXT_FAILED || state == PA_CONTEXT_TERMINATED { loss.happened() }
            libpulse.pa_threaded_mainloop_signal(loss.mainloop, 0)
        }, Unmanaged.passUnretained(loss).toOpaque())

        libpulse.pa_threaded_mainloop_lock(ml)
        defer { libpulse.pa_threaded_mainloop_unlock(ml) }
        guard libpulse.pa_threaded_mainloop_start(ml) >= 0 else {
            throw DuckPromptError(.internal, "pa_threaded_mainloop_start failed")
        }
        readyDeadline = ContinuousClock.now + timeout
        if libpulse.pa_context_connect(ctx, server, PA_CONTEXT_NOAUTOSPAWN, nil) < 0 {
            throw connectError()
        }
        if waitingUntilReady { try waitUntilReadyLocked() }
    }

    /// Connects to `options.server` as `options.clientName`, giving up after `options.timeoutMs`
    /// (`init(server:clientName:timeout:waitingUntilReady:)` with a caller's options).
    /// - Throws: what that initializer throws.
    convenience init(_ options: ServerOptions, waitingUntilReady: Bool = true) throws {
        try self.init(server: options.server, clientName: options.clientName, timeout: .milliseconds(options.timeoutMs),
                      waitingUntilReady: waitingUntilReady)
    }

    /// Whether the connection is done for: the context failed or was terminated (refused, or
    /// the server went away: it will never be READY again, `pa_context_get_state`), or the
    /// server stalled (every wait on it fails from then on, even once the server answers
    /// again: a held prompter connects anew, as after a restart).
    var hasFailed: Bool {
        withLock {
            let state = libpulse.pa_context_get_state(context)
            return stalled || state == PA_CONTEXT_FAILED || state == PA_CONTEXT_TERMINATED
        }
    }

    /// Waits until the context is READY (at once when it is).
    /// - Throws: `DuckPromptError(.unavailable)` naming the server when it refused, failed or
    ///   did not answer within the timeout given to `init`.
    func waitUntilReady() throws {
        try withLock { try waitUntilReadyLocked() }
    }

    private func waitUntilReadyLocked() throws {
        try withWakeupLocked(at: readyDeadline) {
            while true {
                let state = libpulse.pa_context_get_state(context)
                if state == PA_CONTEXT_READY { return }
                if state == PA_CONTEXT_FAILED || state == PA_CONTEXT_TERMINATED { throw connectError() }
                if ContinuousClock.now >= readyDeadline {
                    throw DuckPromptError(.unavailable,
                        "no answer from the sound server at \(serverDescription) within \(answerTimeout.seconds) s")
                }
                libpulse.pa_threaded_mainloop_wait(mainloop)
            }
        }
    }

    /// Runs `body`, lock held, with a timer armed that wakes every wait at `deadline`, so that
    /// a wait loop can check its deadline even when the server says nothing.
    /// libpulse: `pa_context_rttime_new`, `pa_context_rttime_restart`, `pa_mainloop_api.time_free`.
    func withWakeupLocked<T>(at deadline: ContinuousClock.Instant, _ body: () throws -> T) rethrows -> T {
        let remaining = max(.zero, deadline - ContinuousClock.now)
        let usec = remaining.microseconds
        let timer = libpulse.pa_context_rttime_new(context, libpulse.pa_rtclock_now() + usec, { _, _, _, userdata in
            libpulse.pa_threaded_mainloop_signal(OpaquePointer(userdata), 0)
        }, UnsafeMutableRawPointer(mainloop))
        defer {
            if let timer {
                // pa_mainloop's time_free does not wake its poll, which would then sleep until
                // the freed timer's deadline and wake for nothing (an idle `serve` did, 5 s after
                // each server event it read): restarting the timer first wakes the loop, so
                // it recomputes its timeout now, while it is awake for the answer anyway.
                libpulse.pa_context_rttime_restart(context, timer, libpulse.pa_rtclock_now())
                libpulse.pa_threaded_mainloop_get_api(mainloop)?.pointee.time_free(timer)
            }
        }
        return try body()
    }

    /// Marks the connection stalled (the server left a request unanswered for
    /// `answerTimeout`), wakes every wait, and tells its holder it is lost (`loss`: a held
    /// prompter connects anew once the server answers, and restores what the stalled prompt
    /// left ducked). Lock held.
    func markStalledLocked() {
        stalled = true
        loss.happened()
        libpulse.pa_threaded_mainloop_signal(mainloop, 0)
    }

    /// Marks the connection stalled and returns the error for it. Lock held.
    func stallLocked(_ what: String) -> DuckPromptError {
        markStalledLocked()
        return silentServerError(what)
    }

    /// The error for a connection that is no longer alive: stalled, or lost. Lock held.
    func lostErrorLocked(_ what: String) -> DuckPromptError {
        stalled ? silentServerError(what)
            : DuckPromptError(.unavailable, "lost the connection to the sound server at \(serverDescription)")
    }

    /// The error for a server that connected but stopped answering.
    func silentServerError(_ what: String) -> DuckPromptError {
        DuckPromptError(.unavailable,
            "the sound server at \(serverDescription) did not answer within \(answerTimeout.seconds) s (\(what))")
    }

    private func connectError() -> DuckPromptError {
        let reason = String(libraryString: libpulse.pa_strerror(libpulse.pa_context_errno(context)))
        // The server libpulse tried last (`pa_context_get_server`) names the socket even when
        // the user named none.
        let tried = libpulse.pa_context_get_server(context).map { String(cString: $0) }
        let server = serverDescription == "the default server" ? (tried ?? serverDescription) : serverDescription
        return DuckPromptError(.unavailable, "cannot connect to the sound server at \(server): \(reason)")
    }

    static func describe(server: String?) -> String {
        if let server, !server.isEmpty { return server }
        if let s = Environment.value("PULSE_SERVER"), !s.isEmpty { return s }
        if let dir = Environment.value("XDG_RUNTIME_DIR"), !dir.isEmpty { return "unix:\(dir)/pulse/native" }
        return "the default server"
    }

    deinit {
        libpulse.pa_threaded_mainloop_lock(mainloop)
        nodeWatch = nil
        dropPrefetchLocked()
        libpulse.pa_context_set_state_callback(context, nil, nil)
        libpulse.pa_context_set_subscribe_callback(context, nil, nil)
        libpulse.pa_context_disconnect(context)
        libpulse.pa_context_unref(context)
        libpulse.pa_threaded_mainloop_unlock(mainloop)
        libpulse.pa_threaded_mainloop_stop(mainloop)
        libpulse.pa_threaded_mainloop_free(mainloop)
    }

    /// The connection's `PipeWireWatch`, connected on the first call; nil when PipeWire
    /// cannot be reached or failed since. Call only when the server is pipewire-pulse. Lock held.
    func pipeWireWatchLocked() -> PipeWireWatch? {
        if !triedNodeWatch {
            triedNodeWatch = true
            nodeWatch = PipeWireWatch(mainloop: mainloop)
        }
        return nodeWatch?.failed == false ? nodeWatch : nil
    }

    /// Starts reading the default sink as PipeWire's "default" metadata says at this moment,
    /// with a binding of its own (`PipeWireWatch.startDefaultSinkReadLocked`): on PipeWire 0.3.65
    /// neither pipewire-pulse's server info on a long-lived connection nor a long-lived binding
    /// is sure to have heard of the last change. Call only when the server is pipewire-pulse;
    /// the answer is waited for with `pipeWireDefaultSinkLocked(from:until:)`. Lock held.
    /// - Returns: the watch that reads, or nil when PipeWire cannot be reached.
    func startPipeWireDefaultSinkReadLocked() -> PipeWireWatch? {
        guard let watch = pipeWireWatchLocked(), watch.startDefaultSinkReadLocked() else { return nil }
        return watch
    }

    /// Waits for the read `startPipeWireDefaultSinkReadLocked` started. Lock held.
    /// - Returns: `.some(name)` (`.some(nil)`: none), or nil when PipeWire has no "default"
    ///   metadata (no WirePlumber), failed, or did not answer by `deadline` (the read goes on
    ///   and serves the next one): ask the server info then.
    /// - Throws: `.unavailable` when the pulse connection is lost meanwhile.
    func pipeWireDefaultSinkLocked(from watch: PipeWireWatch, until deadline: ContinuousClock.Instant) throws -> String?? {
        try withWakeupLocked(at: deadline) {
            while watch.defaultSinkRead == .pending, ContinuousClock.now < deadline {
                guard isAliveLocked else {
                    throw DuckPromptError(.unavailable, "lost the connection to the sound server at \(serverDescription)")
                }
                waitLocked()
            }
        }
        if case .named(let name) = watch.defaultSinkRead { return .some(name) }
        return nil
    }

    /// The default sink as PipeWire's "default" metadata says at this moment: both steps above.
    /// Lock held. Returns and throws as `pipeWireDefaultSinkLocked(from:until:)`; nil also when
    /// PipeWire cannot be reached.
    func pipeWireDefaultSinkLocked(until deadline: ContinuousClock.Instant) throws -> String?? {
        guard let watch = startPipeWireDefaultSinkReadLocked() else { return nil }
        return try pipeWireDefaultSinkLocked(from: watch, until: deadline)
    }

    /// Runs `body` holding the loop lock (`pa_threaded_mainloop_lock`).
    package func withLock<T>(_ body: () throws -> T) rethrows -> T {
        libpulse.pa_threaded_mainloop_lock(mainloop)
        defer { libpulse.pa_threaded_mainloop_unlock(mainloop) }
        return try body()
    }

    /// Waits for a signal from the loop. Call with the lock held. `pa_threaded_mainloop_wait`.
    func waitLocked() { libpulse.pa_threaded_mainloop_wait(mainloop) }

    /// Makes every current and later blocking wait return early (used for signals and Task
    /// cancellation). Thread-safe.
    func interrupt() {
        withLock {
            interrupted = true
            libpulse.pa_threaded_mainloop_signal(mainloop, 0)
        }
    }

    /// Wakes every wait on the connection, which looks again at what it waits for (a prompt
    /// sharing it was stopped). Thread-safe; `pa_threaded_mainloop_signal`.
    func wake() {
        withLock { libpulse.pa_threaded_mainloop_signal(mainloop, 0) }
    }

    /// Whether the context is still usable: READY, and the server has not stalled. Call with
    /// the lock held.
    var isAliveLocked: Bool { !stalled && libpulse.pa_context_get_state(context) == PA_CONTEXT_READY }

    /// The context's last error as text (`pa_strerror(pa_context_errno)`). Lock held.
    var lastErrorLocked: String { String(libraryString: libpulse.pa_strerror(libpulse.pa_context_errno(context))) }

    /// Waits, lock held, until `op` is no longer running, the context dies, or the server
    /// took longer than `answerTimeout`; unrefs it. Ignores `interrupted`: queries are short
    /// and their results are needed for a clean stop.
    /// - Throws: `.unavailable` when the connection is lost or the server does not answer.
    /// Lets go of an operation: cancelled first if still running, so that its callback never
    /// runs into userdata its caller frees next. Lock held.
    /// libpulse: `pa_operation_cancel`, `pa_operation_unref`.
    static func endOperation(_ op: OpaquePointer) {
        if libpulse.pa_operation_get_state(op) == PA_OPERATION_RUNNING { libpulse.pa_operation_cancel(op) }
        libpulse.pa_operation_unref(op)
    }

    func waitLocked(for op: OpaquePointer?, what: String) throws {
        guard let op else {
            throw DuckPromptError(.internal, "\(what) failed: \(lastErrorLocked)")
        }
        defer {
            // Given up (a stall, the connection lost): its callback must never run later, into
            // userdata its caller frees once this returns.
            Self.endOperation(op)
        }
        let deadline = ContinuousClock.now + answerTimeout
        try withWakeupLocked(at: deadline) {
            while libpulse.pa_operation_get_state(op) == PA_OPERATION_RUNNING {
                guard isAliveLocked else { throw lostErrorLocked(what) }
                guard ContinuousClock.now < deadline else { throw stallLocked(what) }
                waitLocked()
            }
        }
    }
}

extension PulseConnection {
    /// The libpulse version linked at run time (`pa_get_library_version`).
    static var libraryVersion: String { String(libraryString: libpulse.pa_get_library_version()) }

    /// Standard property keys, from libpulse's `PA_PROP_*` macros.
    static let mediaRoleKey = PA_PROP_MEDIA_ROLE
    static let mediaNameKey = PA_PROP_MEDIA_NAME
    static let applicationNameKey = PA_PROP_APPLICATION_NAME
}

/// Tells a thread that waits for it (`wait()`) that a connection failed or ended, without
/// waking it for anything else. `happened()` runs on the loop thread.
final class ConnectionLoss: @unchecked Sendable {
    let mainloop: OpaquePointer
    private let condition = Condition()
    private var lost = false
    private var released = false

    init(mainloop: OpaquePointer) { self.mainloop = mainloop }

    func happened() {
        condition.withLock { lost = true }
        condition.broadcast()
    }

    /// Ends every `wait()` (its waiter is going away).
    func release() {
        condition.withLock { released = true }
        condition.broadcast()
    }

    /// Blocks until the connection is lost (true) or `release()` is called (false).
    func wait() -> Bool {
        condition.withLock {
            while !lost && !released { condition.waitLocked() }
            return lost
        }
    }
}
