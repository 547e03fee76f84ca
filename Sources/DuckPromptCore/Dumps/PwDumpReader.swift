import FoundationEssentials

/// `pw-dump` output: the JSON array of every PipeWire object. Sinks, sink-inputs and the
/// default sink are read the way pipewire-pulse reports them to `pactl` (`fill_sink_info`,
/// `fill_sink_input_info` and `collect_device_info`/`collect_port_info` in
/// `src/modules/module-protocol-pulse/`), so that a `pw-dump` and a `pactl list sinks` of the
/// same server classify alike:
///
/// - sinks are the `PipeWire:Interface:Node` objects whose `media.class` is `Audio/Sink` (or
///   `Audio/Duplex`); sink-inputs are those of class `Stream/Output/Audio`;
/// - **index** = the node's `object.serial`, which is what pipewire-pulse reports as the sink
///   index (checked on PipeWire 0.3.65: `Sink #46` is `object.serial` 46, node id 43); the
///   node id when a dump has no serial (PipeWire before 0.3.57 used the id);
/// - **name** = `node.name` (`(unnamed node ID)` for a node cut before it, `UnnamedSink`);
///   **description** = `node.description`, else the name; a node cut before its `media.class`
///   is a sink when it shows a playback device (`PipeWireNodeSink.isPlaybackNode`);
/// - **properties** = the node's `info.props` plus the properties of its device (the card,
///   `device.id`) that the node does not set, with values as strings (`46`, `true`) and
///   PipeWire's key spellings renamed as pipewire-pulse renames them (`device.form-factor` →
///   `device.form_factor`, `device.bus-path` → `device.bus_path`, `node.description` →
///   `device.description`, …; `media.role` values `Music` → `music`, `Communication` → `phone`);
///   where the card has a `device.description`, it is the one kept, as in pactl's output;
/// - **state** = `info.state` (`running`, `idle`, `suspended`; others unknown), except that a
///   running sink no link feeds is idle, as pactl reports it (a filter sink nobody plays to);
/// - **volume** and **mute**: when the node belongs to a card (`device.id` and
///   `card.profile.device`), the card's active `Route` for that device (its `props`),
///   else the node's `Props` param; `channelVolumes` are linear and are converted as
///   pipewire-pulse does, `round(cbrt(v) × 65536)` (checked against pactl on PipeWire 0.3.65:
///   0.21599 → 39321 = 60%; pw-dump prints six decimals, so a value may differ from pactl's by
///   one step);
/// - **channel map** from `Props.channelMap` (`FL` → `front-left`), else `audio.position`;
/// - **ports** = the card's `EnumRoute` entries of direction `Output` that list the node's
///   `card.profile.device` in `devices` and the active `Profile` in `profiles`; type from the
///   route's `info` (`port.type`), availability from `available`; **active port** = the card's
///   `Route` for that device, else the first port (as pipewire-pulse);
/// - **flags**: `LATENCY`, `DECIBEL_VOLUME`; `HARDWARE` unless
///   `node.virtual=true`; `NETWORK` for `node.network=true`; `HW_VOLUME_CTRL`/`HW_MUTE_CTRL`
///   from the route's `route.hw-volume`/`route.hw-mute`; `SET_FORMATS` when `Props` has
///   `iec958Codecs`;
/// - **owner module** = the index of the module in `module.id`, else `pulse.module.id`;
/// - **driver** = `PipeWire`.
///
/// Sink-inputs: index `object.serial`; sink = the sink a `PipeWire:Interface:Link` connects the
/// node to (`PA_INVALID_INDEX` when unlinked); name `media.name`; volume and mute from `Props`;
/// **corked** when the node's state is not `running` (what pipewire-pulse reports).
///
/// The default sink is the `default` metadata's `default.audio.sink` (`{"name": …}`), else its
/// `default.configured.audio.sink`.
///
/// Not in a pw-dump, so never filled: base volume, latency, the monitor source and the
/// formats (none of them is in `Sink`); a port's availability group. A dump trimmed to the
/// nodes (no `Device` objects) has no ports and no card properties.
package enum PwDumpReader {
    /// Whether JSON text looks like `pw-dump` output: an array holding objects typed
    /// `"type": "PipeWire:Interface:…"` (pretty-printed or compact), or one such object (or
    /// several) copied out of the array.
    static func looksLikePwDump(_ text: String) -> Bool {
        let trimmed = text.trimmingSpaces()
        return (trimmed.hasPrefix("[") || trimmed.hasPrefix("{")) && trimmed.firstMatch(of: DumpPatterns.pwDumpType) != nil
    }

    /// Reads the array, or objects copied out of it (`{…}` or `{…},` or `{…},{…}`, read as the
    /// array they came from), also when the copy stops part-way: what is there is read up to
    /// its last whole value (`TruncatedJSON`), so a node cut off in its `params` still has its
    /// `info.props`.
    /// - Throws: `DuckPromptError` `.unsupportedData` when no JSON array can be made of it.
    static func read(_ text: String, math: VolumeArithmetic) throws -> Snapshot {
        let trimmed = text.trimmingSpaces()
        let array = trimmed.hasPrefix("{") ? "[" + trimmed + "]" : trimmed
        let objects = (try? JSONValue.parse(Data(array.utf8)))?.array
            ?? TruncatedJSON.closed(array).flatMap { try? JSONValue.parse(Data($0.utf8)) }?.array
        guard let objects else {
            throw DuckPromptError(.unsupportedData, DumpRefusal.message(forJSON: text))
        }
        return read(objects: objects.compactMap(\.object), math: math)
    }

    // MARK: Objects

    private struct Object {
        var id: UInt32
        var type: String
        var info: [String: JSONValue]
        var props: [String: JSONValue]
        var params: [String: [[String: JSONValue]]]
        /// Top-level `props` (metadata objects keep theirs outside `info`).
        var outerProps: [String: JSONValue]
        var metadata: [[String: JSONValue]]

        init?(_ json: [String: JSONValue]) {
            guard let id = PactlJSONReader.uint32(json["id"]), let type = json["type"]?.string else { return nil }
            self.id = id
            self.type = type
            info = json["info"]?.object ?? [:]
            props = info["props"]?.object ?? [:]
            let rawParams = info["params"]?.object ?? [:]
            params = rawParams.compactMapValues { $0.array?.compactMap(\.object) }
            outerProps = json["props"]?.object ?? [:]
            metadata = (json["metadata"]?.array ?? []).compactMap(\.object)
        }

        var isNode: Bool { type.hasSuffix(":Node") }
        var mediaClass: String? { props["media.class"]?.string }
        /// `object.serial`, else the id: the index pipewire-pulse reports.
        var index: UInt32 { PactlJSONReader.uint32(props["object.serial"] ?? outerProps["object.serial"]) ?? id }
    }

    private static func read(objects json: [[String: JSONValue]], math: VolumeArithmetic) -> Snapshot {
        let objects = json.compactMap(Object.init)
        let byID = Dictionary(objects.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        // A node cut before its `media.class` (the end of a paste) is a sink when it shows a
        // playback device.
        let sinkNodes = objects.filter { object in
            guard object.isNode else { return false }
            guard let mediaClass = object.mediaClass else {
                return PipeWireNodeSink.isPlaybackNode(object.props.mapValues(string))
            }
            return mediaClass == "Audio/Sink" || mediaClass == "Audio/Duplex"
        }
        let sinkIDs = Set(sinkNodes.map(\.id))

        // Link: output node → input node.
        var linkedSink: [UInt32: UInt32] = [:]
        var fedNodes: Set<UInt32> = []
        for link in objects where link.type.hasSuffix(":Link") {
            let output = PactlJSONReader.uint32(link.info["output-node-id"] ?? link.props["link.output.node"])
            let input = PactlJSONReader.uint32(link.info["input-node-id"] ?? link.props["link.input.node"])
            if let input { fedNodes.insert(input) }
            if let output, let input, sinkIDs.contains(input), linkedSink[output] == nil {
                linkedSink[output] = input
            }
        }

        let sinks = sinkNodes.map { sink($0, objects: byID, isFed: fedNodes.contains($0.id), math: math) }
        let sinkInputs = objects
            .filter { $0.isNode && $0.mediaClass == "Stream/Output/Audio" }
            .map { node -> SinkInput in
                let (volume, mute, _) = volumeAndMute(params: node.params["Props"] ?? [], math: math)
                return SinkInput(index: node.index,
                                 sinkIndex: linkedSink[node.id].flatMap { byID[$0]?.index } ?? UInt32.max,
                                 name: node.props["media.name"].map(string) ?? "",
                                 volume: volume, mute: mute,
                                 corked: node.info["state"]?.string != "running",
                                 properties: pulseProperties(node.props, card: nil),
                                 ownerModule: ownerModule(node, objects: byID),
                                 driver: "PipeWire")
            }
        return Snapshot(sinks: sinks, sinkInputs: sinkInputs, defaultSinkName: defaultSink(objects))
    }

    // MARK: Sinks

    private static func sink(_ node: Object, objects: [UInt32: Object], isFed: Bool, math: VolumeArithmetic) -> Sink {
        let props = node.props
        let name = props["node.name"].map(string) ?? UnnamedSink.name("node \(node.id)")
        let card = PactlJSONReader.uint32(props["device.id"]).flatMap { objects[$0] }
            .flatMap { $0.type.hasSuffix(":Device") ? $0 : nil }
        let cardDevice = PactlJSONReader.uint32(props["card.profile.device"])

        // The card's active route for this node's device: volume, mute, active port.
        let route: [String: JSONValue]? = card.flatMap { card in
            guard let cardDevice else { return nil }
            return (card.params["Route"] ?? []).first { route in
                PactlJSONReader.uint32(route["device"]) == cardDevice
                    && route["direction"]?.string.map { $0 == "Output" } ?? true
            }
        }
        var (volume, mute, hasCodecs) = volumeAndMute(params: node.params["Props"] ?? [], math: math)
        var hwVolume = false, hwMute = false
        if let route {
            if let routeProps = route["props"]?.object {
                let (routeVolume, routeMute, _) = volumeAndMute(params: [routeProps], math: math)
                if !routeVolume.values.isEmpty { volume = routeVolume }
                if routeProps["mute"] != nil { mute = routeMute }
                hasCodecs = hasCodecs || routeProps["iec958Codecs"] != nil
            }
            let info = infoDictionary(route["info"])
            hwVolume = info["route.hw-volume"] == "true"
            hwMute = info["route.hw-mute"] == "true"
        }

        var ports: [Port] = []
        var activePortName: String?
        if let card, let cardDevice {
            let activeProfile = (card.params["Profile"] ?? []).first.flatMap { PactlJSONReader.uint32($0["index"]) }
            for entry in card.params["EnumRoute"] ?? [] {
                guard entry["direction"]?.string == "Output", let portName = entry["name"]?.string else { continue }
                if let devices = entry["devices"]?.array,
                   !devices.contains(where: { PactlJSONReader.uint32($0) == cardDevice }) { continue }
                if let activeProfile, let profiles = entry["profiles"]?.array,
                   !profiles.contains(where: { PactlJSONReader.uint32($0) == activeProfile }) { continue }
                let info = infoDictionary(entry["info"])
                ports.append(Port(name: portName,
                                  description: entry["description"]?.string ?? portName,
                                  type: info["port.type"].map(DumpVocabulary.portType) ?? .unknown,
                                  priority: PactlJSONReader.uint32(entry["priority"]) ?? 0,
                                  availability: entry["available"]?.string
                                      .flatMap { PortAvailability(rawValue: $0.lowercased()) } ?? .unknown))
            }
            if let routeName = route?["name"]?.string, ports.contains(where: { $0.name == routeName }) {
                activePortName = routeName
            } else if let routeIndex = route.flatMap({ PactlJSONReader.uint32($0["index"]) }),
                      let entry = (card.params["EnumRoute"] ?? []).first(where: { PactlJSONReader.uint32($0["index"]) == routeIndex }),
                      let entryName = entry["name"]?.string, ports.contains(where: { $0.name == entryName }) {
                activePortName = entryName
            } else {
                activePortName = ports.first?.name
            }
        }

        var flags: Set<String> = ["LATENCY", "DECIBEL_VOLUME"]
        if string(props["node.virtual"] ?? false) != "true" { flags.insert("HARDWARE") }
        if string(props["node.network"] ?? false) == "true" { flags.insert("NETWORK") }
        if hwVolume { flags.insert("HW_VOLUME_CTRL") }
        if hwMute { flags.insert("HW_MUTE_CTRL") }
        if hasCodecs { flags.insert("SET_FORMATS") }

        let state: SinkState = switch node.info["state"]?.string?.lowercased() {
        case "running": isFed ? .running : .idle
        case "idle": .idle
        case "suspended": .suspended
        default: .unknown
        }
        return Sink(index: node.index,
                    name: name,
                    description: props["node.description"].map(string) ?? name,
                    driver: "PipeWire",
                    state: state,
                    volume: volume,
                    channelMap: channelMap(node),
                    mute: mute,
                    flags: flags,
                    ports: ports,
                    activePortName: activePortName,
                    properties: pulseProperties(props, card: card?.props),
                    ownerModule: ownerModule(node, objects: objects))
    }

    /// `module.id` (a PipeWire module: its index), else `pulse.module.id`.
    private static func ownerModule(_ node: Object, objects: [UInt32: Object]) -> UInt32? {
        if let moduleID = PactlJSONReader.uint32(node.props["module.id"]) {
            return objects[moduleID]?.index ?? moduleID
        }
        return PactlJSONReader.uint32(node.props["pulse.module.id"])
    }

    /// Volume (pa_volume_t per channel), mute, and whether `iec958Codecs` is present, from
    /// `Props` params (or a route's `props`).
    private static func volumeAndMute(params: [[String: JSONValue]], math: VolumeArithmetic) -> (ChannelVolumes, Bool, Bool) {
        var volume = ChannelVolumes([])
        var mute = false
        var codecs = false
        for param in params {
            if volume.values.isEmpty, let linear = param["channelVolumes"]?.array {
                // A boolean counts as 1 or 0, as JSONSerialization's did.
                let values = linear.compactMap { value -> Double? in
                    if case .bool(let flag) = value { flag ? 1 : 0 } else { value.number }
                }
                if values.count == linear.count { volume = ChannelVolumes(values.map { math.fromLinear($0) }) }
            }
            // `true`/`false`, or 1/0 (JSONSerialization's numbers 1 and 0 cast to Bool too).
            if case .bool(let value) = param["mute"] {
                mute = value
            } else if let number = param["mute"]?.number, number == 0 || number == 1 {
                mute = number == 1
            }
            if param["iec958Codecs"] != nil { codecs = true }
        }
        return (volume, mute, codecs)
    }

    /// PipeWire channel names (`FL`, `FR`, `AUX0`) as libpulse's (`front-left`, `aux0`).
    static let channelNames: [String: String] = [
        "MONO": "mono", "FL": "front-left", "FR": "front-right", "FC": "front-center",
        "LFE": "lfe", "SL": "side-left", "SR": "side-right", "FLC": "front-left-of-center",
        "FRC": "front-right-of-center", "RC": "rear-center", "RL": "rear-left", "RR": "rear-right",
        "TC": "top-center", "TFL": "top-front-left", "TFC": "top-front-center",
        "TFR": "top-front-right", "TRL": "top-rear-left", "TRC": "top-rear-center",
        "TRR": "top-rear-right",
    ]

    private static func channelMap(_ node: Object) -> [String] {
        let names: [String]
        if let map = (node.params["Props"] ?? []).lazy.compactMap({ $0["channelMap"]?.array }).first {
            names = map.compactMap(\.string)
        } else if let position = node.props["audio.position"]?.string {
            names = position.split(whereSeparator: { ",[] ".contains($0) }).map(String.init)
        } else {
            names = []
        }
        return names.map { name in
            let upper = name.uppercased()
            if let pulse = channelNames[upper] { return pulse }
            if upper.hasPrefix("AUX"), let number = Int(upper.dropFirst(3)) { return "aux\(number)" }
            return name.lowercased()
        }
    }

    /// A route's `info`: `[n, "key", "value", …]` (or an object) as a dictionary.
    private static func infoDictionary(_ value: JSONValue?) -> [String: String] {
        if let object = value?.object { return object.mapValues(string) }
        guard let array = value?.array, !array.isEmpty else { return [:] }
        var items = Array(array.dropFirst())
        if items.count % 2 == 1 { items.removeLast() }
        var result: [String: String] = [:]
        for pair in stride(from: 0, to: items.count, by: 2) {
            if let key = items[pair].string { result[key] = string(items[pair + 1]) }
        }
        return result
    }

    // MARK: Properties

    /// PipeWire key → the key pipewire-pulse reports (`props_key_map` in `remap.c`).
    static let pulseKeys: [String: String] = [
        "device.bus-path": "device.bus_path",
        "device.sysfs.path": "sysfs.path",
        "device.form-factor": "device.form_factor",
        "device.icon-name": "device.icon_name",
        "device.intended-roles": "device.intended_roles",
        "node.description": "device.description",
        "media.icon-name": "media.icon_name",
        "application.icon-name": "application.icon_name",
        "application.process.machine-id": "application.process.machine_id",
        "application.process.session-id": "application.process.session_id",
    ]

    /// PipeWire `media.role` → PulseAudio's (`media_role_map` in `remap.c`).
    static let pulseRoles: [String: String] = [
        "Movie": "video", "Music": "music", "Game": "game", "Notification": "event",
        "Communication": "phone", "Production": "production", "Accessibility": "a11y", "Test": "test",
    ]

    /// Node properties plus the card's (those the node does not set), as strings, with keys
    /// and roles renamed as pipewire-pulse reports them.
    private static func pulseProperties(_ props: [String: JSONValue], card: [String: JSONValue]?) -> [String: String] {
        var merged = props.mapValues(string)
        for (key, value) in card ?? [:] where merged[key] == nil { merged[key] = string(value) }
        var result: [String: String] = [:]
        for (key, value) in merged {
            let pulseKey = pulseKeys[key] ?? key
            // A key PipeWire already spells the pulse way wins over the renamed one.
            if pulseKey != key, merged[pulseKey] != nil { continue }
            result[pulseKey] = value
        }
        if let role = result["media.role"], let pulse = pulseRoles[role] { result["media.role"] = pulse }
        return result
    }

    /// A property value as pactl prints it: strings as they are, numbers without a trailing
    /// `.0`, booleans `true`/`false`, anything else as compact JSON.
    static func string(_ value: JSONValue) -> String {
        switch value {
        case .string(let text):
            return text
        case .bool(let flag):
            return flag ? "true" : "false"
        case .int, .double:
            let number = value.number ?? 0
            if number.isFinite, number == number.rounded(), abs(number) < 1e15 { return String(Int64(number)) }
            return "\(number)"
        case .null:
            return ""
        case .object, .array:
            return value.jsonText ?? "\(value)"
        }
    }

    // MARK: Default sink

    private static func defaultSink(_ objects: [Object]) -> String? {
        for metadata in objects where metadata.type.hasSuffix(":Metadata") {
            let name = (metadata.outerProps["metadata.name"] ?? metadata.props["metadata.name"])?.string
            guard name == "default" else { continue }
            for key in ["default.audio.sink", "default.configured.audio.sink"] {
                guard let entry = metadata.metadata.first(where: {
                    $0["key"]?.string == key && (PactlJSONReader.uint32($0["subject"]) ?? 0) == 0
                }) else { continue }
                if let found = sinkName(entry["value"]) { return found }
            }
        }
        return nil
    }

    /// `{"name": "x"}`, or the same as a JSON string (older pw-dump), or a bare name.
    private static func sinkName(_ value: JSONValue?) -> String? {
        if let object = value?.object { return object["name"]?.string }
        guard let text = value?.string, !text.isEmpty else { return nil }
        if let object = (try? JSONValue.parse(Data(text.utf8)))?.object {
            return object["name"]?.string
        }
        return text
    }
}
