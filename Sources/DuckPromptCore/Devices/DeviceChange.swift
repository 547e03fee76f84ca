/// One change between two looks at a server's sinks, as `duckprompt devices --watch` reports it.
package enum DeviceChange: Sendable, Equatable {
    /// A sink appeared.
    case added(Sink, Classification)
    /// A sink went away.
    case removed(Sink)
    /// A sink's active port changed (`pa_sink_info.active_port`).
    case portChanged(Sink, from: String?, to: String?)
    /// The active port's availability changed (`pa_sink_port_info.available`): plugged or unplugged.
    case availabilityChanged(Sink, port: String, from: PortAvailability, to: PortAvailability)
    /// The default sink changed (`pa_server_info.default_sink_name`).
    case defaultChanged(from: String?, to: String?)
    /// Where a prompt would go changed (possibly to nowhere).
    case routeChanged(from: String?, to: String?)
    /// The call state changed (`DeviceListing.callState`); `cause` names a call that makes the
    /// new state ("sink-input 12 (Linphone, media.role=phone)"), nil for `none`.
    case callStateChanged(from: CallState, to: CallState, cause: String?)

    /// A short name for the event: `sink-added`, `sink-removed`, `port-changed`,
    /// `availability-changed`, `default-changed`, `route-changed`.
    package var event: String {
        switch self {
        case .added: "sink-added"
        case .removed: "sink-removed"
        case .portChanged: "port-changed"
        case .availabilityChanged: "availability-changed"
        case .defaultChanged: "default-changed"
        case .routeChanged: "route-changed"
        case .callStateChanged: "call-state-changed"
        }
    }

    /// The sink concerned, when the change is about one sink.
    package var sinkName: String? {
        switch self {
        case .added(let s, _), .removed(let s), .portChanged(let s, _, _), .availabilityChanged(let s, _, _, _): s.name
        case .defaultChanged, .routeChanged, .callStateChanged: nil
        }
    }

    /// One line for people, e.g. `sink bt_headset (bluetooth-a2dp) appeared`.
    package var summary: String {
        func name(_ n: String?) -> String { n ?? "none" }
        switch self {
        case .added(let s, let c): return "sink \(s.name) (\(c.kind.rawValue)) appeared"
        case .removed(let s): return "sink \(s.name) went away"
        case .portChanged(let s, let from, let to): return "sink \(s.name) port \(name(from)) -> \(name(to))"
        case .availabilityChanged(let s, let port, let from, let to):
            return "sink \(s.name) port \(port) availability \(from.rawValue) -> \(to.rawValue)"
        case .defaultChanged(let from, let to): return "default sink \(name(from)) -> \(name(to))"
        case .routeChanged(let from, let to): return "prompt route \(name(from)) -> \(name(to))"
        case .callStateChanged(let from, let to, let cause):
            return "call \(from.rawValue) -> \(to.rawValue)" + (cause.map { " (\($0))" } ?? "")
        }
    }

    /// The changes between two listings of the same server, in a stable order: sinks removed,
    /// added, port and availability changes (by sink name), then the default, then the route,
    /// then the call state.
    /// Sinks are matched by name (an index is reused by the server after removal).
    package static func between(_ old: DeviceListing, _ new: DeviceListing) -> [DeviceChange] {
        var changes: [DeviceChange] = []
        let oldSinks = Dictionary(old.snapshot.sinks.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        let newSinks = Dictionary(new.snapshot.sinks.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        for sink in old.snapshot.sinks where newSinks[sink.name] == nil {
            changes.append(.removed(sink))
        }
        for (sink, c) in zip(new.snapshot.sinks, new.classifications) {
            guard let before = oldSinks[sink.name] else {
                changes.append(.added(sink, c))
                continue
            }
            if before.activePortName != sink.activePortName {
                changes.append(.portChanged(sink, from: before.activePortName, to: sink.activePortName))
            } else if let port = sink.activePort, let was = before.activePort,
                      was.availability != port.availability {
                changes.append(.availabilityChanged(sink, port: port.name, from: was.availability,
                                                    to: port.availability))
            }
        }
        if old.snapshot.defaultSinkName != new.snapshot.defaultSinkName {
            changes.append(.defaultChanged(from: old.snapshot.defaultSinkName, to: new.snapshot.defaultSinkName))
        }
        if old.route?.sink.name != new.route?.sink.name {
            changes.append(.routeChanged(from: old.route?.sink.name, to: new.route?.sink.name))
        }
        if old.callState != new.callState {
            changes.append(.callStateChanged(from: old.callState, to: new.callState, cause: new.calls.cause?.detail))
        }
        return changes
    }
}
