import CPulseAudio

/// A server event, as `pa_context_subscribe` reports it: which facility, which index, and
/// whether the object appeared, changed or went away.
package struct ServerEvent: Sendable, Equatable {
    package enum Facility: Sendable, Equatable { case sink, sinkInput, sourceOutput, server, card, other }
    package enum Change: Sendable, Equatable { case new, changed, removed }
    package var facility: Facility
    package var change: Change
    package var index: UInt32

    /// The default sink changed, as PipeWire's "default" metadata says (no libpulse event).
    static let defaultSinkChanged = ServerEvent(type: PA_SUBSCRIPTION_EVENT_SERVER.rawValue
        | PA_SUBSCRIPTION_EVENT_CHANGE.rawValue, index: UInt32.max)

    /// The calls the session and system buses know of changed (`BusCallWatch`; no libpulse
    /// event).
    static let busCallsChanged = ServerEvent(type: PA_SUBSCRIPTION_EVENT_SERVER.rawValue
        | PA_SUBSCRIPTION_EVENT_CHANGE.rawValue, index: UInt32.max - 1)

    /// Decodes a `pa_subscription_event_type_t`.
    init(type: UInt32, index: UInt32) {
        facility = switch type & PA_SUBSCRIPTION_EVENT_FACILITY_MASK.rawValue {
        case PA_SUBSCRIPTION_EVENT_SINK.rawValue: .sink
        case PA_SUBSCRIPTION_EVENT_SINK_INPUT.rawValue: .sinkInput
        case PA_SUBSCRIPTION_EVENT_SOURCE_OUTPUT.rawValue: .sourceOutput
        case PA_SUBSCRIPTION_EVENT_SERVER.rawValue: .server
        case PA_SUBSCRIPTION_EVENT_CARD.rawValue: .card
        default: .other
        }
        change = switch type & PA_SUBSCRIPTION_EVENT_TYPE_MASK.rawValue {
        case PA_SUBSCRIPTION_EVENT_NEW.rawValue: .new
        case PA_SUBSCRIPTION_EVENT_REMOVE.rawValue: .removed
        default: .changed
        }
        self.index = index
    }
}

/// Collects server events, and sink-input infos asked for after them, between two looks, on
/// the loop thread.
package final class EventInbox: @unchecked Sendable {
    let mainloop: OpaquePointer
    /// Guarded by the loop lock.
    package var events: [ServerEvent] = []
    /// Answers to `requestSinkInputLocked`, in arrival order. Guarded by the loop lock.
    package var sinkInputs: [SinkInput] = []
    /// Channel volumes PipeWire nodes applied, in order (`PipeWireWatch`). Lock held.
    var nodeVolumes: [(node: UInt32, volume: ChannelVolumes)] = []
    /// Nodes `PipeWireWatch` can no longer follow (`UInt32.max`: none at all). Lock held.
    var lostNodes: [UInt32] = []
    package init(mainloop: OpaquePointer) { self.mainloop = mainloop }

    var isEmpty: Bool { events.isEmpty && sinkInputs.isEmpty && nodeVolumes.isEmpty && lostNodes.isEmpty }
}

/// The inboxes a connection's subscription delivers to: every event goes to each (the prompts
/// that share a held connection each follow their own duck). Guarded by the loop lock.
final class Subscribers: @unchecked Sendable {
    let mainloop: OpaquePointer
    var inboxes: [EventInbox] = []
    /// Whether the server was asked for events (`pa_context_subscribe`) on this context.
    var subscribed = false
    /// A held connection's copy of the server, kept current from the same events.
    var mirror: ServerMirror?
    /// The sinks asked for ahead of a prompt's routing, beside the copy
    /// (`PulseConnection.prefetchSinks()`).
    var sinkPrefetch: SinkPrefetch?
    init(mainloop: OpaquePointer) { self.mainloop = mainloop }
}

extension PulseConnection {
    /// Subscribes to sink, sink-input, card and server events; each event is appended to
    /// `inbox` (and to every other inbox subscribed on this connection) and wakes every wait.
    /// The connection keeps the inbox alive until it closes or `unsubscribe(_:)` is called.
    /// The server is asked once per connection; later inboxes only join.
    ///
    /// - Throws: `.unavailable` when the server refuses or does not answer.
    /// libpulse: `pa_context_set_subscribe_callback`, `pa_context_subscribe` with
    /// `PA_SUBSCRIPTION_MASK_SINK | SINK_INPUT | SOURCE_OUTPUT | CARD | SERVER`.
    package func subscribe(into inbox: EventInbox) throws {
        try withLock {
            subscribers.inboxes.append(inbox)
            do {
                try subscribeLocked()
            } catch {
                subscribers.inboxes.removeAll { $0 === inbox }
                throw error
            }
        }
    }

    /// Asks the server for events once per connection; they go to `subscribers`. Lock held.
    /// - Throws: `.unavailable` when the server refuses or does not answer.
    func subscribeLocked() throws {
        guard !subscribers.subscribed else { return }
        libpulse.pa_context_set_subscribe_callback(context, { _, type, index, userdata in
            let subscribers = Unmanaged<Subscribers>.fromOpaque(userdata!).takeUnretainedValue()
            let event = ServerEvent(type: type.rawValue, index: index)
            subscribers.mirror?.handleLocked(event)
            for inbox in subscribers.inboxes { inbox.events.append(event) }
            libpulse.pa_threaded_mainloop_signal(subscribers.mainloop, 0)
        }, Unmanaged.passUnretained(subscribers).toOpaque())
        let mask = pa_subscription_mask_t(PA_SUBSCRIPTION_MASK_SINK.rawValue
            | PA_SUBSCRIPTION_MASK_SINK_INPUT.rawValue | PA_SUBSCRIPTION_MASK_SOURCE_OUTPUT.rawValue
            | PA_SUBSCRIPTION_MASK_CARD.rawValue | PA_SUBSCRIPTION_MASK_SERVER.rawValue)
        let op = libpulse.pa_context_subscribe(context, mask, { _, _, userdata in
            libpulse.pa_threaded_mainloop_signal(OpaquePointer(userdata), 0)
        }, UnsafeMutableRawPointer(mainloop))
        try waitLocked(for: op, what: "subscribing to server events")
        subscribers.subscribed = true
    }

    /// Puts an event of duckprompt's own in `inbox` (`ServerEvent.busCallsChanged`) and wakes
    /// its wait, as a server event would. Any thread, without the lock.
    package func post(_ event: ServerEvent, to inbox: EventInbox) {
        withLock {
            inbox.events.append(event)
            libpulse.pa_threaded_mainloop_signal(mainloop, 0)
        }
    }

    /// Stops delivering events to `inbox` and lets it go. The server-side subscription stays
    /// (for the connection's other and later inboxes).
    package func unsubscribe(_ inbox: EventInbox) {
        withLock { subscribers.inboxes.removeAll { $0 === inbox } }
    }

    /// Asks for one sink-input's info (or, with `index` nil, every sink-input's) without
    /// waiting; the answers land in `inbox.sinkInputs` (nothing arrives for a stream that is
    /// gone by then). Lock held. `pa_context_get_sink_input_info`,
    /// `pa_context_get_sink_input_info_list`.
    package func requestSinkInputLocked(_ index: UInt32?, into inbox: EventInbox) {
        // Retained for the request: the answer may come after the session let the inbox go.
        // The callback runs once per item and once more at the end (eol != 0), which releases.
        let box = Unmanaged.passRetained(inbox).toOpaque()
        let callback: pa_sink_input_info_cb_t = { _, info, eol, userdata in
            let unmanaged = Unmanaged<EventInbox>.fromOpaque(userdata!)
            let inbox = unmanaged.takeUnretainedValue()
            if eol == 0, let info { inbox.sinkInputs.append(SinkInput(info.pointee)) }
            libpulse.pa_threaded_mainloop_signal(inbox.mainloop, 0)
            if eol != 0 { unmanaged.release() }
        }
        let op = index.map { libpulse.pa_context_get_sink_input_info(context, $0, callback, box) }
            ?? libpulse.pa_context_get_sink_input_info_list(context, callback, box)
        if let op { libpulse.pa_operation_unref(op) } else { Unmanaged<EventInbox>.fromOpaque(box).release() }
    }

    /// Waits, lock held, until `inbox` holds events or the connection is interrupted or lost;
    /// returns the events and empties the inbox (empty when interrupted).
    /// - Throws: `.unavailable` when the connection is lost.
    func nextEventsLocked(_ inbox: EventInbox) throws -> [ServerEvent] {
        while inbox.events.isEmpty {
            if interrupted { return [] }
            guard isAliveLocked else {
                throw DuckPromptError(.unavailable, "lost the connection to the sound server at \(serverDescription)")
            }
            waitLocked()
        }
        defer { inbox.events.removeAll() }
        return inbox.events
    }

    /// `nextEventsLocked`, but nil when `deadline` passes before an event comes.
    /// - Parameters:
    ///   - answers: return as well once a sink-input info asked for has arrived in
    ///     `inbox.sinkInputs` (the events then may be none), so its arrival is seen at once.
    ///   - stopped: return `[]` as well once this is true, looked at on each wake (`wake()`:
    ///     a prompt sharing the connection was stopped); called with the lock held.
    /// - Throws: `.unavailable` when the connection is lost.
    package func nextEventsLocked(_ inbox: EventInbox, until deadline: ContinuousClock.Instant,
                                  orAnswers answers: Bool = false,
                                  orWhen stopped: () -> Bool = { false }) throws -> [ServerEvent]? {
        try withWakeupLocked(at: deadline) {
            while inbox.events.isEmpty && !(answers && !inbox.sinkInputs.isEmpty) {
                if interrupted || stopped() { return [] }
                guard isAliveLocked else {
                    throw DuckPromptError(.unavailable, "lost the connection to the sound server at \(serverDescription)")
                }
                if ContinuousClock.now >= deadline { return nil }
                waitLocked()
            }
            defer { inbox.events.removeAll() }
            return inbox.events
        }
    }
}
