import DuckPrompt

extension SinkReport {
    /// The sink as one `a{sv}` of `Devices()`: the keys of `devices --json`
    /// (`SinkReport.CodingKeys`), a nil field left out as the JSON leaves it out.
    var busDictionary: [String: BusValue] {
        typealias Key = SinkReport.CodingKeys
        var d: [String: BusValue] = [
            Key.name.rawValue: .string(name), Key.description.rawValue: .string(description),
            Key.kind.rawValue: .string(kind), Key.external.rawValue: .bool(external),
            Key.state.rawValue: .string(state), Key.evidence.rawValue: .string(evidence),
            Key.isDefault.rawValue: .bool(isDefault), Key.chosen.rawValue: .bool(chosen),
            Key.volume.rawValue: .uint32s(volume), Key.properties.rawValue: .stringMap(properties),
        ]
        if let index { d[Key.index.rawValue] = .uint32(index) }
        if let activePort { d[Key.activePort.rawValue] = .string(activePort) }
        if let portType { d[Key.portType.rawValue] = .string(portType) }
        if let available { d[Key.available.rawValue] = .string(available) }
        if let forwardsTo { d[Key.forwardsTo.rawValue] = .string(forwardsTo) }
        if let forwardsToSink { d[Key.forwardsToSink.rawValue] = .string(forwardsToSink) }
        return d
    }
}
