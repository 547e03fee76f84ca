import CPulseAudio
import Synchronization

/// Boxes that collect the results of one libpulse query. Each is kept alive by the caller for
/// the duration of the (synchronous) wait, and passed unretained as `userdata`.
private final class ListBox<Element>: @unchecked Sendable {
    let mainloop: OpaquePointer
    var items: [Element] = []
    var failed = false
    init(mainloop: OpaquePointer) { self.mainloop = mainloop }
}

/// A sink list asked for ahead (`PulseConnection.prefetchSinks()`): its answer collects in
/// `box` (which the request's callback uses unretained: kept until the operation is done or
/// cancelled). Guarded by the loop lock.
final class SinkPrefetch: @unchecked Sendable {
    fileprivate let box: ListBox<Sink>
    fileprivate let op: OpaquePointer
    let asked: ContinuousClock.Instant

    fileprivate init(box: ListBox<Sink>, op: OpaquePointer, asked: ContinuousClock.Instant) {
        self.box = box
        self.op = op
        self.asked = asked
    }

    /// Not to be used: the request is cancelled (its callback never runs after this) and let
    /// go (`PulseConnection.endOperation`). Lock held.
    func drop() { PulseConnection.endOperation(op) }
}

private final class ServerInfoBox: @unchecked Sendable {
    let mainloop: OpaquePointer
    var info = ServerInfo(defaultSinkName: nil, serverName: "", serverVersion: "")
    init(mainloop: OpaquePointer) { self.mainloop = mainloop }
}

/// What `pa_context_get_server_info` tells.
package struct ServerInfo: Sendable {
    /// `default_sink_name`; nil when none is chosen.
    package var defaultSinkName: String?
    /// `server_name`, e.g. `PulseAudio (on PipeWire 0.3.65)` or `pulseaudio`.
    package var serverName: String
    /// `server_version`, e.g. `15.0.0`.
    package var serverVersion: String
}

extension ServerInfo {
    /// Copies a `pa_server_info`.
    init(_ info: pa_server_info) {
        // pipewire-pulse names the literal "@DEFAULT_SINK@" while no default is chosen.
        defaultSinkName = info.default_sink_name.map { String(cString: $0) }
            .flatMap { $0 == "@DEFAULT_SINK@" || $0.isEmpty ? nil : $0 }
        serverName = info.server_name.map { String(cString: $0) } ?? ""
        serverVersion = info.server_version.map { String(cString: $0) } ?? ""
    }
}

extension PulseConnection {
    /// How many times this process read the whole server (`snapshot()`): a test's check that
    /// a held prompter's prompts route from its mirror instead.
    package static let fullReads = Atomic<Int>(0)

    /// Reads sinks, sink-inputs, source-outputs and the server info in one round trip (four
    /// pipelined queries).
    ///
    /// - Throws: `.unavailable` when the connection is lost.
    /// libpulse: `pa_context_get_sink_info_list`, `pa_context_get_sink_input_info_list`,
    /// `pa_context_get_source_output_info_list`, `pa_context_get_server_info`.
    package func snapshot() throws -> (Snapshot, ServerInfo) {
        Self.fullReads.add(1, ordering: .relaxed)
        let sinks = ListBox<Sink>(mainloop: mainloop)
        let inputs = ListBox<SinkInput>(mainloop: mainloop)
        let outputs = ListBox<SourceOutput>(mainloop: mainloop)
        let server = ServerInfoBox(mainloop: mainloop)
        try withExtendedLifetime((sinks, inputs, outputs, server)) {
            try withLock {
                let op1 = requestSinksLocked(into: sinks)
                let op2 = requestSinkInputsLocked(into: inputs)
                let op3 = requestSourceOutputsLocked(into: outputs)
                let op4 = requestServerInfoLocked(into: server)
                try waitLocked(for: op1, what: "listing sinks")
                try waitLocked(for: op2, what: "listing sink-inputs")
                try waitLocked(for: op3, what: "listing source-outputs")
                try waitLocked(for: op4, what: "reading server info")
            }
        }
        if sinks.failed || inputs.failed || outputs.failed {
            throw DuckPromptError(.internal, "the server refused to list sinks, sink-inputs or source-outputs")
        }
        let snapshot = Snapshot(sinks: sinks.items, sinkInputs: inputs.items,
                                defaultSinkName: server.info.defaultSinkName, sourceOutputs: outputs.items)
        return (snapshot, server.info)
    }
}

extension PulseConnection {
    /// The server info alone, in one round trip; call without the lock.
    /// - Throws: `.unavailable` when the connection is lost.
    /// libpulse: `pa_context_get_server_info`.
    func serverInfo() throws -> ServerInfo {
        let server = ServerInfoBox(mainloop: mainloop)
        try withExtendedLifetime(server) {
            try withLock {
                try waitLocked(for: requestServerInfoLocked(into: server), what: "reading server info")
            }
        }
        return server.info
    }

    /// Asks for the server info, collected in `box`; lock held. `pa_context_get_server_info`.
    private func requestServerInfoLocked(into box: ServerInfoBox) -> OpaquePointer? {
        libpulse.pa_context_get_server_info(context, { _, info, userdata in
            let box = Unmanaged<ServerInfoBox>.fromOpaque(userdata!).takeUnretainedValue()
            if let info { box.info = ServerInfo(info.pointee) }
            libpulse.pa_threaded_mainloop_signal(box.mainloop, 0)
        }, Unmanaged.passUnretained(box).toOpaque())
    }

    /// Asks for every sink's info, collected in `box`; lock held. `pa_context_get_sink_info_list`.
    private func requestSinksLocked(into box: ListBox<Sink>) -> OpaquePointer? {
        libpulse.pa_context_get_sink_info_list(context, { _, info, eol, userdata in
            let box = Unmanaged<ListBox<Sink>>.fromOpaque(userdata!).takeUnretainedValue()
            if eol != 0 {
                if eol < 0 { box.failed = true }
                libpulse.pa_threaded_mainloop_signal(box.mainloop, 0)
                return
            }
            if let info { box.items.append(Sink(info.pointee)) }
        }, Unmanaged.passUnretained(box).toOpaque())
    }

    /// Asks for every sink-input's info, collected in `box`; lock held.
    /// `pa_context_get_sink_input_info_list`.
    private func requestSinkInputsLocked(into box: ListBox<SinkInput>) -> OpaquePointer? {
        libpulse.pa_context_get_sink_input_info_list(context, { _, info, eol, userdata in
            let box = Unmanaged<ListBox<SinkInput>>.fromOpaque(userdata!).takeUnretainedValue()
            if eol != 0 {
                if eol < 0 { box.failed = true }
                libpulse.pa_threaded_mainloop_signal(box.mainloop, 0)
                return
            }
            if let info { box.items.append(SinkInput(info.pointee)) }
        }, Unmanaged.passUnretained(box).toOpaque())
    }

    /// Asks for every source-output's info, collected in `box`; lock held.
    /// `pa_context_get_source_output_info_list`.
    private func requestSourceOutputsLocked(into box: ListBox<SourceOutput>) -> OpaquePointer? {
        libpulse.pa_context_get_source_output_info_list(context, { _, info, eol, userdata in
            let box = Unmanaged<ListBox<SourceOutput>>.fromOpaque(userdata!).takeUnretainedValue()
            if eol != 0 {
                if eol < 0 { box.failed = true }
                libpulse.pa_threaded_mainloop_signal(box.mainloop, 0)
                return
            }
            if let info { box.items.append(SourceOutput(info.pointee)) }
        }, Unmanaged.passUnretained(box).toOpaque())
    }

    /// Asks for every sink now, not waiting for the answer, for the next `sinkList(askedWithin:)`
    /// (a held prompter's prompt, when it is asked for: its round trip then overlaps the
    /// prompt's way to its turn). A request still in flight from before is cancelled. Call
    /// without the lock. libpulse: `pa_context_get_sink_info_list`.
    func prefetchSinks() {
        withLock {
            dropPrefetchLocked()
            guard subscribers.mirror != nil, isAliveLocked else { return }
            let box = ListBox<Sink>(mainloop: mainloop)
            guard let op = requestSinksLocked(into: box) else { return }
            subscribers.sinkPrefetch = SinkPrefetch(box: box, op: op, asked: .now)
        }
    }

    /// The sinks `prefetchSinks()` asked for, when it asked within `freshness` (waiting for
    /// the answer if it is not in yet), else read now (`sinkList()`); the prefetch is used
    /// once. Call without the lock.
    /// - Throws: as `sinkList()`.
    func sinkList(askedWithin freshness: Duration) throws -> [Sink] {
        let fetched = try withLock { () throws -> [Sink]? in
            guard let prefetch = subscribers.sinkPrefetch else { return nil }
            subscribers.sinkPrefetch = nil
            guard ContinuousClock.now - prefetch.asked <= freshness else {
                prefetch.drop()
                return nil
            }
            // `waitLocked(for:)` ends the operation (cancelled if given up, unreferenced).
            try withExtendedLifetime(prefetch.box) { try waitLocked(for: prefetch.op, what: "listing sinks") }
            return try Self.sinks(in: prefetch.box)
        }
        return try fetched ?? sinkList()
    }

    /// The sinks a list request collected in `box`.
    /// - Throws: `.internal` when the server refused the list.
    private static func sinks(in box: ListBox<Sink>) throws -> [Sink] {
        if box.failed { throw DuckPromptError(.internal, "the server refused to list sinks") }
        return box.items
    }

    /// Cancels a prefetch not taken. Lock held.
    func dropPrefetchLocked() {
        subscribers.sinkPrefetch?.drop()
        subscribers.sinkPrefetch = nil
    }

    /// Every sink, in one round trip; call without the lock.
    /// - Throws: `.unavailable` when the connection is lost, `.internal` when the server refuses.
    /// libpulse: `pa_context_get_sink_info_list`.
    package func sinkList() throws -> [Sink] {
        let box = ListBox<Sink>(mainloop: mainloop)
        try withExtendedLifetime(box) {
            try withLock { try waitLocked(for: requestSinksLocked(into: box), what: "listing sinks") }
        }
        return try Self.sinks(in: box)
    }

    /// Every sink-input, in one round trip; call without the lock.
    /// - Throws: `.unavailable` when the connection is lost, `.internal` when the server refuses.
    /// libpulse: `pa_context_get_sink_input_info_list`.
    package func sinkInputList() throws -> [SinkInput] {
        let box = ListBox<SinkInput>(mainloop: mainloop)
        try withExtendedLifetime(box) {
            try withLock { try waitLocked(for: requestSinkInputsLocked(into: box), what: "listing sink-inputs") }
        }
        if box.failed { throw DuckPromptError(.internal, "the server refused to list sink-inputs") }
        return box.items
    }

    /// One sink-input's info, or nil when it is gone. Blocks for one round trip; call without
    /// the lock. libpulse: `pa_context_get_sink_input_info`.
    func sinkInput(_ index: UInt32) throws -> SinkInput? {
        let box = ListBox<SinkInput>(mainloop: mainloop)
        try withExtendedLifetime(box) {
            try withLock {
                let op = libpulse.pa_context_get_sink_input_info(context, index, { _, info, eol, userdata in
                    let box = Unmanaged<ListBox<SinkInput>>.fromOpaque(userdata!).takeUnretainedValue()
                    if eol == 0, let info { box.items.append(SinkInput(info.pointee)) }
                    if eol != 0 { libpulse.pa_threaded_mainloop_signal(box.mainloop, 0) }
                }, Unmanaged.passUnretained(box).toOpaque())
                try waitLocked(for: op, what: "reading the prompt stream")
            }
        }
        return box.items.first
    }
}

// MARK: - Copying out of the C structs (libpulse frees them when the callback returns)

/// Copies a `pa_proplist` into a dictionary; binary values are skipped.
/// libpulse: `pa_proplist_iterate`, `pa_proplist_gets`.
func proplistDictionary(_ list: OpaquePointer?) -> [String: String] {
    guard let list else { return [:] }
    var result: [String: String] = [:]
    var state: UnsafeMutableRawPointer? = nil
    while let key = libpulse.pa_proplist_iterate(list, &state) {
        if let value = libpulse.pa_proplist_gets(list, key) {
            result[String(cString: key)] = String(cString: value)
        }
    }
    return result
}

/// Copies a `pa_cvolume` into `ChannelVolumes`.
func channelVolumes(_ cv: pa_cvolume) -> ChannelVolumes {
    var copy = cv
    let count = Int(cv.channels)
    return withUnsafeBytes(of: &copy.values) { raw in
        ChannelVolumes(Array(raw.bindMemory(to: UInt32.self).prefix(count)))
    }
}

/// Builds a `pa_cvolume` from `ChannelVolumes`.
func cvolume(_ volumes: ChannelVolumes) -> pa_cvolume {
    var cv = pa_cvolume()
    cv.channels = UInt8(min(volumes.values.count, Int(PA_CHANNELS_MAX)))
    withUnsafeMutableBytes(of: &cv.values) { raw in
        let buffer = raw.bindMemory(to: UInt32.self)
        for (i, v) in volumes.values.prefix(Int(cv.channels)).enumerated() { buffer[i] = v }
    }
    return cv
}

/// Channel position names of a `pa_channel_map` (`pa_channel_position_to_string`).
func channelNames(_ map: pa_channel_map) -> [String] {
    var copy = map
    let count = Int(map.channels)
    return withUnsafeBytes(of: &copy.map) { raw in
        raw.bindMemory(to: pa_channel_position_t.self).prefix(count).map {
            libpulse.pa_channel_position_to_string($0).map { String(cString: $0) } ?? "aux"
        }
    }
}

extension Sink {
    /// Copies a `pa_sink_info`.
    init(_ info: pa_sink_info) {
        var ports: [Port] = []
        if let list = info.ports {
            for i in 0..<Int(info.n_ports) {
                guard let p = list[i]?.pointee else { continue }
                ports.append(Port(p))
            }
        }
        let flagNames: [(UInt32, String)] = [
            (PA_SINK_HW_VOLUME_CTRL.rawValue, "HW_VOLUME_CTRL"), (PA_SINK_LATENCY.rawValue, "LATENCY"),
            (PA_SINK_HARDWARE.rawValue, "HARDWARE"), (PA_SINK_NETWORK.rawValue, "NETWORK"),
            (PA_SINK_HW_MUTE_CTRL.rawValue, "HW_MUTE_CTRL"),
            (PA_SINK_DECIBEL_VOLUME.rawValue, "DECIBEL_VOLUME"),
            (PA_SINK_FLAT_VOLUME.rawValue, "FLAT_VOLUME"),
            (PA_SINK_DYNAMIC_LATENCY.rawValue, "DYNAMIC_LATENCY"),
            (PA_SINK_SET_FORMATS.rawValue, "SET_FORMATS"),
        ]
        let state: SinkState = switch info.state {
        case PA_SINK_RUNNING: .running
        case PA_SINK_IDLE: .idle
        case PA_SINK_SUSPENDED: .suspended
        default: .unknown
        }
        self.init(
            index: info.index,
            name: info.name.map { String(cString: $0) } ?? "",
            description: info.description.map { String(cString: $0) } ?? "",
            driver: info.driver.map { String(cString: $0) } ?? "",
            state: state,
            volume: channelVolumes(info.volume),
            channelMap: channelNames(info.channel_map),
            mute: info.mute != 0,
            flags: Set(flagNames.filter { info.flags.rawValue & $0.0 != 0 }.map(\.1)),
            ports: ports,
            activePortName: info.active_port?.pointee.name.map { String(cString: $0) },
            properties: proplistDictionary(info.proplist),
            ownerModule: info.owner_module == dp_pa_invalid_index() ? nil : info.owner_module)
        latencyUs = state == .running && info.latency > 0 ? info.latency : info.configured_latency
    }
}

extension Port {
    /// Copies a `pa_sink_port_info`.
    init(_ p: pa_sink_port_info) {
        let availability: PortAvailability = switch UInt32(p.available) {
        case PA_PORT_AVAILABLE_YES.rawValue: .yes
        case PA_PORT_AVAILABLE_NO.rawValue: .no
        default: .unknown
        }
        self.init(name: p.name.map { String(cString: $0) } ?? "",
                  description: p.description.map { String(cString: $0) } ?? "",
                  type: PortType(paValue: p.type), priority: p.priority,
                  availability: availability)
    }
}

extension SinkInput {
    /// Copies a `pa_sink_input_info`.
    init(_ info: pa_sink_input_info) {
        self.init(index: info.index, sinkIndex: info.sink,
                  name: info.name.map { String(cString: $0) } ?? "",
                  volume: channelVolumes(info.volume), mute: info.mute != 0,
                  corked: info.corked != 0, hasVolume: info.has_volume != 0,
                  volumeWritable: info.volume_writable != 0,
                  properties: proplistDictionary(info.proplist),
                  ownerModule: info.owner_module == dp_pa_invalid_index() ? nil : info.owner_module,
                  driver: info.driver.map { String(cString: $0) } ?? "",
                  client: info.client == dp_pa_invalid_index() ? nil : info.client)
    }
}

extension SourceOutput {
    /// Copies a `pa_source_output_info`.
    init(_ info: pa_source_output_info) {
        self.init(index: info.index, client: info.client == dp_pa_invalid_index() ? nil : info.client,
                  corked: info.corked != 0, properties: proplistDictionary(info.proplist))
    }
}
