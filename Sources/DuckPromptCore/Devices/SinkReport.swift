/// One sink of a `DeviceListing` as it is reported: by `duckprompt devices --json` (each key
/// as Docs/json.md names it, a nil field left out) and by the D-Bus service's `Devices()`
/// (an `a{sv}` with the same keys). Pure.
public struct SinkReport: Sendable, Equatable, Encodable {
    /// `pa_sink_info.index` (nil in a dump that gives none).
    public var index: UInt32?
    /// `pa_sink_info.name`, `description`.
    public var name: String
    public var description: String
    /// The classified kind (`DeviceKind` raw value).
    public var kind: String
    /// Whether the kind is an external device (routed to when in use).
    public var external: Bool
    /// `pa_sink_state`: `running`, `idle`, `suspended`.
    public var state: String
    /// The active port's name, its type (`pa_device_port_type`), its availability.
    public var activePort: String?
    public var portType: String?
    public var available: String?
    /// The one-line reason for the kind.
    public var evidence: String
    /// The kind and name of the device a virtual sink forwards to.
    public var forwardsTo: String?
    public var forwardsToSink: String?
    /// Whether it is the server's default sink, and whether a prompt would go to it.
    public var isDefault: Bool
    public var chosen: Bool
    /// Per-channel volume (`pa_cvolume`, 65536 = 100 %).
    public var volume: [UInt32]
    /// `pa_sink_info.proplist`.
    public var properties: [String: String]

    /// The keys, as Docs/json.md names them.
    package enum CodingKeys: String, CodingKey, CaseIterable {
        case index, name, description, kind, external, state, evidence, chosen, volume, properties
        case activePort = "active_port", portType = "port_type", available, isDefault = "default"
        case forwardsTo = "forwards_to", forwardsToSink = "forwards_to_sink"
    }
}

extension DeviceListing {
    /// Each sink, classified, in `snapshot.sinks` order.
    public var sinkReports: [SinkReport] {
        zip(snapshot.sinks, classifications).map { sink, c in
            SinkReport(index: sink.index, name: sink.name, description: sink.description,
                       kind: c.kind.rawValue, external: c.external, state: sink.state.rawValue,
                       activePort: sink.activePortName, portType: sink.activePort?.type.rawValue,
                       available: sink.activePort?.availability.rawValue, evidence: c.evidence,
                       forwardsTo: c.forwardsTo?.rawValue, forwardsToSink: c.forwardsToSink,
                       isDefault: snapshot.defaultSinkName == sink.name,
                       chosen: route?.sink.name == sink.name,
                       volume: sink.volume.values, properties: sink.properties)
        }
    }
}
