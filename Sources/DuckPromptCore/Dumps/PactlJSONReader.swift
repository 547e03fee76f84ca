import FoundationEssentials

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
/// Printed under a decimal-comma locale (`"balance":0,00`, not JSON) it is repaired first
/// (`DecimalCommaJSON`).
package enum PactlJSONReader {
    /// - Throws: `DuckPromptError` `.unsupportedData` when the text is not JSON or not a list
    ///   of sinks.
    static func read(_ text: String) throws -> [Sink] {
        try readList(text).sinks
    }

    /// The sinks, and the sink-inputs of a full `pactl --format=json list` (its `sink_inputs`
    /// member; empty for the other shapes).
    /// - Throws: `DuckPromptError` `.unsupportedData` when the text is not JSON.
    static func readList(_ text: String) throws -> (sinks: [Sink], sinkInputs: [SinkInput]) {
        // A decimal-comma locale breaks pactl's doubles (`"balance":0,00`): repaired, then read.
        var repaired: String?? = nil
        func repairedText() -> String? {
            if let repaired { return repaired }
            let made = DecimalCommaJSON.repaired(text)
            repaired = .some(made)
            return made
        }
        guard let object = (try? JSONValue.parse(Data(text.utf8)))
            ?? repairedText().flatMap({ try? JSONValue.parse(Data($0.utf8)) })
        else {
            throw DuckPromptError(.unsupportedData, DumpRefusal.message(forJSON: repairedText() ?? text))
        }
        let elements: [JSONValue]
        var inputs: [JSONValue] = []
        switch object {
        case .array(let array):
            elements = array
        case .object(let dictionary):
            if let sinks = dictionary["sinks"]?.array {
                elements = sinks
                inputs = dictionary["sink_inputs"]?.array ?? []
            } else {
                elements = [object]
            }
        default:
            elements = []
        }
        return (elements.compactMap { $0.object.flatMap(sink) },
                inputs.compactMap { $0.object.flatMap(sinkInput) })
    }

    /// One sink-input object (`get_sink_input_info_callback` in pactl.c), or nil without an
    /// `index` and a `sink`.
    static func sinkInput(_ object: [String: JSONValue]) -> SinkInput? {
        guard let index = uint32(object["index"]), let sinkIndex = uint32(object["sink"]) else { return nil }
        let channelMap = object["channel_map"]?.string
            .map { $0.split(separator: ",").map { $0.trimmingSpaces() } } ?? []
        let properties = (object["properties"]?.object ?? [:]).compactMapValues(\.string)
        return SinkInput(index: index, sinkIndex: sinkIndex,
                         name: properties["media.name"] ?? "",
                         volume: volume(object["volume"], channelMap: channelMap),
                         mute: bool(object["mute"]) ?? false,
                         corked: bool(object["corked"]) ?? false,
                         hasVolume: bool(object["has_volume"]) ?? true,
                         volumeWritable: bool(object["volume_writable"]) ?? true,
                         properties: properties,
                         ownerModule: uint32(object["owner_module"]).flatMap { $0 == UInt32.max ? nil : $0 },
                         driver: object["driver"]?.string ?? "")
    }

    /// One sink object, or nil when it has no `name` (not a sink).
    static func sink(_ object: [String: JSONValue]) -> Sink? {
        guard let name = object["name"]?.string else { return nil }
        guard object["driver"] != nil || object["ports"] != nil || object["properties"] != nil
                || object["index"] != nil else { return nil }
        let channelMap = object["channel_map"]?.string
            .map { $0.split(separator: ",").map { $0.trimmingSpaces() } } ?? []
        let properties = (object["properties"]?.object ?? [:]).compactMapValues(\.string)
        let ports = (object["ports"]?.array ?? []).compactMap { element -> Port? in
            guard let port = element.object, let name = port["name"]?.string
            else { return nil }
            return Port(name: name,
                        description: port["description"]?.string ?? "",
                        type: port["type"]?.string.map(DumpVocabulary.portType) ?? .unknown,
                        priority: uint32(port["priority"]) ?? 0,
                        availability: port["availability"]?.string
                            .flatMap(DumpVocabulary.availability) ?? .unknown)
        }
        return Sink(index: uint32(object["index"]).flatMap { $0 == UInt32.max ? nil : $0 },
                    name: name,
                    description: object["description"]?.string
                        ?? properties["device.description"] ?? "",
                    driver: object["driver"]?.string ?? "",
                    state: object["state"]?.string.flatMap(DumpVocabulary.state) ?? .unknown,
                    volume: volume(object["volume"], channelMap: channelMap),
                    channelMap: channelMap,
                    mute: bool(object["mute"]) ?? false,
                    flags: Set((object["flags"]?.array ?? []).compactMap(\.string)),
                    ports: ports,
                    activePortName: object["active_port"]?.string,
                    properties: properties,
                    ownerModule: uint32(object["owner_module"]).flatMap { $0 == UInt32.max ? nil : $0 })
    }

    /// `{"front-left": {"value": 39218, "value_percent": "60%", …}, …}` in channel-map order;
    /// a channel without `value` is converted from `value_percent`.
    static func volume(_ value: JSONValue?, channelMap: [String]) -> ChannelVolumes {
        guard let channels = value?.object, channels["error"] == nil else {
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
                case (nil, nil): naturallyOrdered(lhs, rhs)
                }
            }
        }
        var values: [UInt32] = []
        for channel in order {
            let entry = channels[channel]?.object ?? [:]
            if let value = uint32(entry["value"]) {
                values.append(value)
            } else if let percent = entry["value_percent"]?.string,
                      let number = Double(percent.replacing("%", with: "").replacing(",", with: ".").trimmingSpaces()) {
                values.append(DumpVocabulary.volumeFromPercent(number))
            } else {
                return ChannelVolumes([])
            }
        }
        return ChannelVolumes(values)
    }

    /// Whether `lhs` sorts before `rhs` in the order Foundation's `localizedStandardCompare`
    /// gives names of ASCII letters, digits and `-` (channel names): case-insensitive, a run of
    /// digits by its number (`aux2` < `aux10`), `-` before digits before letters; names that
    /// differ only in case or leading zeros put lower case and fewer zeros first (`foo` <
    /// `Foo`, `x2` < `x02`). Other characters compare by code point.
    static func naturallyOrdered(_ lhs: String, _ rhs: String) -> Bool {
        func isDigit(_ scalar: Unicode.Scalar) -> Bool { scalar >= "0" && scalar <= "9" }
        let a = Array(lhs.unicodeScalars), b = Array(rhs.unicodeScalars)
        var i = 0, j = 0
        while i < a.count, j < b.count {
            if isDigit(a[i]), isDigit(b[j]) {
                // Two runs of digits compare as numbers: without leading zeros, the longer is
                // larger, else the first digit that differs decides.
                let aEnd = a[i...].firstIndex { !isDigit($0) } ?? a.count
                let bEnd = b[j...].firstIndex { !isDigit($0) } ?? b.count
                let aDigits = a[i..<aEnd].drop(while: { $0 == "0" })
                let bDigits = b[j..<bEnd].drop(while: { $0 == "0" })
                if aDigits.count != bDigits.count { return aDigits.count < bDigits.count }
                if let (x, y) = zip(aDigits, bDigits).first(where: { $0 != $1 }) { return x < y }
                (i, j) = (aEnd, bEnd)
            } else {
                let x = a[i].properties.lowercaseMapping, y = b[j].properties.lowercaseMapping
                if x != y { return x.unicodeScalars.lexicographicallyPrecedes(y.unicodeScalars) }
                (i, j) = (i + 1, j + 1)
            }
        }
        if i < a.count || j < b.count { return j < b.count }
        return lhs > rhs
    }

    /// A JSON number (or numeric string) as UInt32; nil when absent, negative or too large.
    /// `true` and `false` are 1 and 0 (as JSONSerialization's booleans cast).
    static func uint32(_ value: JSONValue?) -> UInt32? {
        switch value {
        case .int(let value): UInt32(exactly: value)
        case .double(let value): UInt32(exactly: value)
        case .bool(let value): value ? 1 : 0
        case .string(let value): UInt32(value)
        default: nil
        }
    }

    /// A boolean, a number (non-zero once truncated is true) or a boolean word.
    static func bool(_ value: JSONValue?) -> Bool? {
        switch value {
        case .bool(let value): value
        case .int(let value): value != 0
        case .double(let value): value <= -1 || value >= 1
        case .string(let value): DumpVocabulary.bool(value)
        default: nil
        }
    }
}
