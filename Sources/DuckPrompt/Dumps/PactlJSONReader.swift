import Foundation

/// `pactl --format=json list sinks` (PulseAudio 16+, also against pipewire-pulse): an array of
/// objects as `get_sink_info_callback` in pactl.c encodes them:
///
/// ```json
/// {"index": 0, "state": "IDLE", "name": "bt", "description": "FakeBT",
///  "driver": "module-null-sink.c", "channel_map": "front-left,front-right",
///  "owner_module": 1, "mute": false,
///  "volume": {"front-left": {"value": 65536, "value_percent": "100%", "db": "0.00 dB"}, …},
///  "flags": ["DECIBEL_VOLUME", "LATENCY"], "properties": {"device.class": "abstract", …},
///  "ports": [{"name": "analog-output-speaker", "description": "Speakers", "type": "Speaker",
///             "priority": 10000, "availability_group": null, "availability": "available"}],
///  "active_port": null, "formats": ["pcm"]}
/// ```
///
/// A full `pactl --format=json list` (an object with a `sinks` member, and `sink_inputs`) and a
/// single sink object are read too. Volumes are put in channel-map order (JSON objects have no order).
enum PactlJSONReader {
    /// - Throws: `DuckPromptError` `.unsupportedData` when the text is not JSON or not a list
    ///   of sinks.
    static func read(_ text: String) throws -> [Sink] {
        try readList(text).sinks
    }

    /// The sinks, and the sink-inputs of a full `pactl --format=json list` (its `sink_inputs`
    /// member; empty for the other shapes).
    /// - Throws: `DuckPromptError` `.unsupportedData` when the text is not JSON.
    static func readList(_ text: String) throws -> (sinks: [Sink], sinkInputs: [SinkInput]) {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(text.utf8))
        } catch {
            throw DuckPromptError(.unsupportedData, SinkDumpReader.notADumpMessage)
        }
        let elements: [Any]
        var inputs: [Any] = []
        if let array = object as? [Any] {
            elements = array
        } else if let dictionary = object as? [String: Any] {
            if let sinks = dictionary["sinks"] as? [Any] {
                elements = sinks
                inputs = dictionary["sink_inputs"] as? [Any] ?? []
            } else {
                elements = [dictionary]
            }
        } else {
            elements = []
        }
        return (elements.compactMap { ($0 as? [String: Any]).flatMap(sink) },
                inputs.compactMap { ($0 as? [String: Any]).flatMap(sinkInput) })
    }

    /// One sink-input object (`get_sink_input_info_callback` in pactl.c), or nil without an
    /// `index` and a `sink`.
    static func sinkInput(_ object: [String: Any]) -> SinkInput? {
        guard let index = uint32(object["index"]), let sinkIndex = uint32(object["sink"]) else { return nil }
        let channelMap = (object["channel_map"] as? String)
            .map { $0.split(separator: ",").map { $0.trimmingSpaces() } } ?? []
        let properties = (object["properties"] as? [String: Any] ?? [:]).compactMapValues { $0 as? String }
        return SinkInput(index: index, sinkIndex: sinkIndex,
                         name: properties["media.name"] ?? "",
                         volume: volume(object["volume"], channelMap: channelMap),
                         mute: bool(object["mute"]) ?? false,
                         corked: bool(object["corked"]) ?? false,
                         hasVolume: bool(object["has_volume"]) ?? true,
                         volumeWritable: bool(object["volume_writable"]) ?? true,
                         properties: properties,
                         ownerModule: uint32(object["owner_module"]).flatMap { $0 == UInt32.max ? nil : $0 },
                         driver: object["driver"] as? String ?? "")
    }

    /// One sink object, or nil when it has no `name` (not a sink).
    static func sink(_ object: [String: Any]) -> Sink? {
        guard let name = object["name"] as? String else { return nil }
        guard object["driver"] != nil || object["ports"] != nil || object["properties"] != nil
                || object["index"] != nil else { return nil }
        let channelMap = (object["channel_map"] as? String)
            .map { $0.split(separator: ",").map { $0.trimmingSpaces() } } ?? []
        let properties = (object["properties"] as? [String: Any] ?? [:])
            .compactMapValues { $0 as? String }
        let ports = (object["ports"] as? [Any] ?? []).compactMap { element -> Port? in
            guard let port = element as? [String: Any], let name = port["name"] as? String
            else { return nil }
            return Port(name: name,
                        description: port["description"] as? String ?? "",
                        type: (port["type"] as? String).map(DumpVocabulary.portType) ?? .unknown,
                        priority: uint32(port["priority"]) ?? 0,
                        availability: (port["availability"] as? String)
                            .flatMap(DumpVocabulary.availability) ?? .unknown)
        }
        return Sink(index: uint32(object["index"]).flatMap { $0 == UInt32.max ? nil : $0 },
                    name: name,
                    description: object["description"] as? String
                        ?? properties["device.description"] ?? "",
                    driver: object["driver"] as? String ?? "",
                    state: (object["state"] as? String).flatMap(DumpVocabulary.state) ?? .unknown,
                    volume: volume(object["volume"], channelMap: channelMap),
                    channelMap: channelMap,
                    mute: bool(object["mute"]) ?? false,
                    flags: Set((object["flags"] as? [Any] ?? []).compactMap { $0 as? String }),
                    ports: ports,
                    activePortName: object["active_port"] as? String,
                    properties: properties,
                    ownerModule: uint32(object["owner_module"]).flatMap { $0 == UInt32.max ? nil : $0 })
    }

    /// `{"front-left": {"value": 39218, "value_percent": "60%", …}, …}` in channel-map order;
    /// a channel without `value` is converted from `value_percent`.
    static func volume(_ any: Any?, channelMap: [String]) -> ChannelVolumes {
        guard let channels = any as? [String: Any], channels["error"] == nil else {
            return ChannelVolumes([])
        }
        var order = channelMap.filter { channels[$0] != nil }
        if order.count != channels.count {
            let known = DumpVocabulary.channelPositions
            order = channels.keys.sorted { lhs, rhs in
                switch (known.firstIndex(of: lhs), known.firstIndex(of: rhs)) {
                case let (l?, r?): l < r
                case (_?, nil): true
                case (nil, _?): false
                case (nil, nil): lhs.localizedStandardCompare(rhs) == .orderedAscending
                }
            }
        }
        var values: [UInt32] = []
        for channel in order {
            let entry = channels[channel] as? [String: Any] ?? [:]
            if let value = uint32(entry["value"]) {
                values.append(value)
            } else if let percent = entry["value_percent"] as? String,
                      let number = Double(percent.replacingOccurrences(of: "%", with: "")
                          .replacingOccurrences(of: ",", with: ".").trimmingSpaces()) {
                values.append(DumpVocabulary.volumeFromPercent(number))
            } else {
                return ChannelVolumes([])
            }
        }
        return ChannelVolumes(values)
    }

    /// A JSON number (or numeric string) as UInt32; nil when absent, negative or too large.
    static func uint32(_ any: Any?) -> UInt32? {
        switch any {
        case let value as UInt32: return value
        case let value as Int: return UInt32(exactly: value)
        case let value as Int64: return UInt32(exactly: value)
        case let value as UInt64: return UInt32(exactly: value)
        case let value as Double: return UInt32(exactly: value)
        case let value as NSNumber: return UInt32(exactly: value.int64Value)
        case let value as String: return UInt32(value)
        default: return nil
        }
    }

    static func bool(_ any: Any?) -> Bool? {
        switch any {
        case let value as Bool: return value
        case let value as NSNumber: return value.boolValue
        case let value as String: return DumpVocabulary.bool(value)
        default: return nil
        }
    }
}
