import CPulseAudio

extension PulseConnection {
    /// Keeps a copy of the server current from now on (`ServerMirror`), for
    /// `currentSnapshot()`: subscribes, then asks for the four lists (not waiting for them).
    /// Once per connection; later calls do nothing. Waits until the context is READY.
    /// - Throws: `.unavailable` when the server refuses or does not answer.
    func startMirror() throws {
        try waitUntilReady()
        try withLock {
            guard subscribers.mirror == nil else { return }
            try subscribeLocked()
            subscribers.mirror = ServerMirror(mainloop: mainloop, context: context)
        }
    }

    /// The server's sinks, sink-inputs and server info: from the mirror when one is kept
    /// (`startMirror()`, a held prompter), once its answers are in; else read now (`snapshot()`).
    /// - Throws: `.unavailable` when the connection is lost, `.internal` when the server
    ///   refused a list.
    func currentSnapshot() throws -> (Snapshot, ServerInfo) {
        let answer = try withLock { try subscribers.mirror.map { try $0.snapshotLocked(on: self) } }
        return try answer ?? snapshot()
    }

    /// `currentSnapshot()` with its sinks read now (one round trip) when the rest came from the
    /// mirror: what a prompt is routed and its pre-roll planned from. A sink's state and
    /// latency may change with no event for the mirror to follow: pipewire-pulse 0.3.65 tells
    /// of no IDLE → RUNNING of a sink whose monitor is recorded (a keep-awake then seemed not
    /// to have woken it, and the prompt got a pre-roll), and neither server of a latency that
    /// follows its streams. The sink-inputs stay the mirror's. The sinks are the ones asked
    /// for when the prompt was (`prefetchSinks()`, by `Prompter.play`) if that was within
    /// `prefetchFreshness`: a prompt that waited for its turn reads them again.
    /// - Throws: as `currentSnapshot()`.
    func routingSnapshot() throws -> (Snapshot, ServerInfo) {
        var (snapshot, info) = try currentSnapshot()
        if withLock({ subscribers.mirror != nil }) { snapshot.sinks = try sinkList(askedWithin: Self.prefetchFreshness) }
        return (snapshot, info)
    }

    /// How old a prefetched sink list may be when a prompt routes from it: 50 ms. From
    /// `PlayFd`'s arrival to the route took 1.1 ms in the service's trace (PulseAudio, idle).
    static let prefetchFreshness: Duration = .milliseconds(50)

    /// While a prompt ducks, the mirror marks its sink-inputs' changes rather than reading
    /// each (`ServerMirror.holdInputsLocked`); `held` false ends it. Nothing without a mirror.
    func holdMirrorInputs(_ held: Bool) {
        withLock {
            if held { subscribers.mirror?.holdInputsLocked() } else { subscribers.mirror?.releaseInputsLocked() }
        }
    }
}

/// A held connection's copy of the server's sinks, sink-inputs, source-outputs and server info, kept current
/// from the connection's subscription, so that a prompt of a held `Prompter` routes and plans
/// its duck without reading the server first (`PulseConnection.currentSnapshot()`).
///
/// Filled once with the four lists when it starts; then each event asks for the one object it
/// names (a sink, sink-input or source-output new or changed: its info; removed: dropped; the server: its
/// info; a card: every sink, whose ports it may have changed). At most one request per object
/// is in flight: an event that comes meanwhile asks again once the answer is in. While a prompt
/// ducks on the connection (`holdInputs`), sink-input changes (its own ramp writes, hundreds a
/// second) are only marked and read once the prompt ends or the next snapshot is taken.
/// Nothing runs while nothing happens: no timers.
///
/// Used on the loop thread (callbacks) and by prompts with the loop lock held; every member is
/// guarded by the loop lock. libpulse: `pa_context_get_sink_info_list`,
/// `pa_context_get_sink_info_by_index`, `pa_context_get_sink_input_info_list`,
/// `pa_context_get_sink_input_info`, `pa_context_get_source_output_info_list`,
/// `pa_context_get_source_output_info`, `pa_context_get_server_info`.
final class ServerMirror: @unchecked Sendable {
    /// One object a request reads.
    enum Key: Hashable { case sinks, inputs, outputs, server, sink(UInt32), input(UInt32), output(UInt32) }

    private let mainloop: OpaquePointer
    private let context: OpaquePointer
    private var sinks: [UInt32: Sink] = [:]
    private var inputs: [UInt32: SinkInput] = [:]
    private var outputs: [UInt32: SourceOutput] = [:]
    private var server = ServerInfo(defaultSinkName: nil, serverName: "", serverVersion: "")
    private var inFlight: Set<Key> = []
    /// Asked for again while a request was in flight: asked once more when it is answered.
    private var again: Set<Key> = []
    /// Sink-inputs changed while held, not read yet.
    private var marked: Set<UInt32> = []
    private var holds = 0
    /// A list the server refused: the snapshot reports it.
    private var refused = false

    /// Starts the mirror: asks for the four lists. Lock held, context READY.
    init(mainloop: OpaquePointer, context: OpaquePointer) {
        self.mainloop = mainloop
        self.context = context
        for key in [Key.sinks, .inputs, .outputs, .server] { requestLocked(key) }
    }

    /// Follows one subscription event (the subscribe callback, on the loop thread).
    func handleLocked(_ event: ServerEvent) {
        switch (event.facility, event.change) {
        case (.sink, .removed): sinks[event.index] = nil
        case (.sink, _): requestLocked(.sink(event.index))
        case (.sinkInput, .removed):
            inputs[event.index] = nil
            marked.remove(event.index)
        case (.sinkInput, .changed) where holds > 0: marked.insert(event.index)
        case (.sinkInput, _): requestLocked(.input(event.index))
        case (.sourceOutput, .removed): outputs[event.index] = nil
        case (.sourceOutput, _): requestLocked(.output(event.index))
        case (.server, _): requestLocked(.server)
        case (.card, _): requestLocked(.sinks)
        case (.other, _): break
        }
    }

    /// Sink-input changes are marked, not read, until `releaseInputs()` (a prompt ducks).
    func holdInputsLocked() { holds += 1 }

    /// Ends a `holdInputsLocked()`; the last one reads what was marked.
    func releaseInputsLocked() {
        holds -= 1
        if holds == 0 { readMarkedLocked() }
    }

    /// Asks for every marked sink-input (before a snapshot is taken, or when the hold ends).
    func readMarkedLocked() {
        for index in marked { requestLocked(.input(index)) }
        marked.removeAll()
    }

    /// The mirror as a snapshot, once every answer is in. On pipewire-pulse the default sink is
    /// read anew from PipeWire's "default" metadata for each snapshot
    /// (`PulseConnection.startPipeWireDefaultSinkReadLocked`, one round trip to the daemon made
    /// while the other answers come): on PipeWire 0.3.65 a long-lived connection's server info
    /// and events, and a long-lived metadata binding, can stop hearing of a new default for
    /// good (CI routed to the old default after `pactl get-default-sink` named the new one).
    /// When PipeWire cannot be reached or has no "default" metadata, the server info is asked
    /// for (one small request). Lock held.
    /// - Throws: `.unavailable` when the connection is lost or the server does not answer
    ///   within `answerTimeout`; `.internal` when the server refused a list.
    func snapshotLocked(on connection: PulseConnection) throws -> (Snapshot, ServerInfo) {
        readMarkedLocked()
        var reading: PipeWireWatch? = nil
        if server.serverName.contains("PipeWire") {
            reading = connection.startPipeWireDefaultSinkReadLocked()
            if reading == nil { requestLocked(.server) }
        }
        let deadline = ContinuousClock.now + connection.answerTimeout
        try waitAnswersLocked(on: connection, until: deadline)
        var followed: String?? = nil
        if let reading {
            // WirePlumber answers the daemon's ping within a millisecond when it runs; one that
            // hangs costs a prompt half a second, then the server info is asked for.
            followed = try connection.pipeWireDefaultSinkLocked(from: reading, until: min(deadline, ContinuousClock.now + .milliseconds(500)))
            if followed == nil {
                requestLocked(.server)
                try waitAnswersLocked(on: connection, until: ContinuousClock.now + connection.answerTimeout)
            }
        }
        if refused { throw DuckPromptError(.internal, "the server refused to list sinks, sink-inputs or source-outputs") }
        var info = server
        if let followed { info.defaultSinkName = followed }
        let snapshot = Snapshot(sinks: sinks.sorted { $0.key < $1.key }.map(\.value),
                                sinkInputs: inputs.sorted { $0.key < $1.key }.map(\.value),
                                defaultSinkName: info.defaultSinkName,
                                sourceOutputs: outputs.sorted { $0.key < $1.key }.map(\.value))
        return (snapshot, info)
    }

    /// Waits until every request in flight is answered. Lock held.
    /// - Throws: `.unavailable` when the connection is lost or `deadline` passes.
    private func waitAnswersLocked(on connection: PulseConnection, until deadline: ContinuousClock.Instant) throws {
        try connection.withWakeupLocked(at: deadline) {
            while !inFlight.isEmpty {
                guard connection.isAliveLocked else {
                    throw DuckPromptError(.unavailable, "lost the connection to the sound server at \(connection.serverDescription)")
                }
                guard ContinuousClock.now < deadline else { throw connection.stallLocked("reading the server") }
                connection.waitLocked()
            }
        }
    }

    // MARK: - Requests and answers

    private func requestLocked(_ key: Key) {
        guard !inFlight.contains(key) else {
            again.insert(key)
            return
        }
        let request = Unmanaged.passRetained(Request(self, key)).toOpaque()
        let op: OpaquePointer? = switch key {
        case .sinks: libpulse.pa_context_get_sink_info_list(context, Self.sinkAnswer, request)
        case .sink(let index): libpulse.pa_context_get_sink_info_by_index(context, index, Self.sinkAnswer, request)
        case .inputs: libpulse.pa_context_get_sink_input_info_list(context, Self.inputAnswer, request)
        case .input(let index): libpulse.pa_context_get_sink_input_info(context, index, Self.inputAnswer, request)
        case .outputs: libpulse.pa_context_get_source_output_info_list(context, Self.outputAnswer, request)
        case .output(let index): libpulse.pa_context_get_source_output_info(context, index, Self.outputAnswer, request)
        case .server: libpulse.pa_context_get_server_info(context, Self.serverAnswer, request)
        }
        guard let op else {
            // The context is failing: nothing will be answered; the snapshot says the connection is lost.
            Unmanaged<Request>.fromOpaque(request).release()
            return
        }
        inFlight.insert(key)
        libpulse.pa_operation_unref(op)
    }

    /// One request's answer is complete: ask again if an event came meanwhile.
    private func answeredLocked(_ key: Key) {
        inFlight.remove(key)
        if again.remove(key) != nil { requestLocked(key) }
        libpulse.pa_threaded_mainloop_signal(mainloop, 0)
    }

    /// What a request's callbacks carry: the mirror, the key, a list's items until its end.
    private final class Request {
        let mirror: ServerMirror
        let key: Key
        var sinks: [UInt32: Sink] = [:]
        var inputs: [UInt32: SinkInput] = [:]
        var outputs: [UInt32: SourceOutput] = [:]
        init(_ mirror: ServerMirror, _ key: Key) { (self.mirror, self.key) = (mirror, key) }
    }

    private static let sinkAnswer: pa_sink_info_cb_t = { _, info, eol, userdata in
        let unmanaged = Unmanaged<Request>.fromOpaque(userdata!)
        let request = unmanaged.takeUnretainedValue()
        if eol == 0, let info {
            request.sinks[info.pointee.index] = Sink(info.pointee)
            return
        }
        let mirror = request.mirror
        switch request.key {
        case .sinks:
            if eol < 0 { mirror.refused = true } else { mirror.sinks = request.sinks }
        case .sink(let index):
            // No info: the sink is gone.
            mirror.sinks[index] = request.sinks[index]
        default: break
        }
        mirror.answeredLocked(request.key)
        unmanaged.release()
    }

    private static let inputAnswer: pa_sink_input_info_cb_t = { _, info, eol, userdata in
        let unmanaged = Unmanaged<Request>.fromOpaque(userdata!)
        let request = unmanaged.takeUnretainedValue()
        if eol == 0, let info {
            request.inputs[info.pointee.index] = SinkInput(info.pointee)
            return
        }
        let mirror = request.mirror
        switch request.key {
        case .inputs:
            if eol < 0 { mirror.refused = true } else { mirror.inputs = request.inputs }
        case .input(let index):
            mirror.inputs[index] = request.inputs[index]
        default: break
        }
        mirror.answeredLocked(request.key)
        unmanaged.release()
    }

    private static let outputAnswer: pa_source_output_info_cb_t = { _, info, eol, userdata in
        let unmanaged = Unmanaged<Request>.fromOpaque(userdata!)
        let request = unmanaged.takeUnretainedValue()
        if eol == 0, let info {
            request.outputs[info.pointee.index] = SourceOutput(info.pointee)
            return
        }
        let mirror = request.mirror
        switch request.key {
        case .outputs:
            if eol < 0 { mirror.refused = true } else { mirror.outputs = request.outputs }
        case .output(let index):
            mirror.outputs[index] = request.outputs[index]
        default: break
        }
        mirror.answeredLocked(request.key)
        unmanaged.release()
    }

    private static let serverAnswer: pa_server_info_cb_t = { _, info, userdata in
        let unmanaged = Unmanaged<Request>.fromOpaque(userdata!)
        let request = unmanaged.takeUnretainedValue()
        if let info { request.mirror.server = ServerInfo(info.pointee) }
        request.mirror.answeredLocked(request.key)
        unmanaged.release()
    }
}
