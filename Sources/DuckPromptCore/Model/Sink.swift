/// Per-channel volume, as libpulse's `pa_cvolume`: one `pa_volume_t` per channel, in the sink's
/// or stream's channel order (`pa_channel_map`). `PA_VOLUME_NORM` (65536) is 0 dB.
package struct ChannelVolumes: Sendable, Equatable, Hashable, Codable, CustomStringConvertible {
    /// Raw `pa_volume_t` values, one per channel, in channel-map order.
    package var values: [UInt32]

    package init(_ values: [UInt32]) { self.values = values }

    package var description: String { values.map(String.init).joined(separator: ",") }

    /// Every channel at 0 (`PA_VOLUME_MUTED`): silence, or on pipewire-pulse a stream whose
    /// volume is not known yet (it answers 0 until it has read the node's Props).
    package var isSilent: Bool { values.allSatisfy { $0 == 0 } }
}

/// Port availability, as `pa_port_available_t` (`PA_PORT_AVAILABLE_*`).
package enum PortAvailability: String, Sendable, Codable {
    case unknown
    case yes
    case no
}

/// Port type, as `pa_device_port_type_t` (libpulse 14+, `pa_sink_port_info.type`).
/// The raw values are the names pactl prints after `type:`, lower-cased.
package enum PortType: String, Sendable, Codable, CaseIterable {
    case unknown, aux, speaker, headphones, line, mic, headset, handset, earpiece, spdif, hdmi,
         tv, radio, video, usb, bluetooth, portable, handsfree, car, hifi, phone, network, analog

    /// Maps `PA_DEVICE_PORT_TYPE_*` numbers (0 = UNKNOWN … 22 = ANALOG) to a case.
    package init(paValue: UInt32) {
        let all = PortType.allCases
        self = paValue < UInt32(all.count) ? all[Int(paValue)] : .unknown
    }
}

/// One output port of a sink (`pa_sink_port_info`).
package struct Port: Sendable, Equatable, Codable {
    /// Port name, e.g. `analog-output-speaker` (`pa_sink_port_info.name`).
    package var name: String
    /// Human description, possibly localised (`pa_sink_port_info.description`).
    package var description: String
    /// Port type (`pa_sink_port_info.type`); `.unknown` when the server or dump does not say.
    package var type: PortType
    /// Port priority (`pa_sink_port_info.priority`).
    package var priority: UInt32
    /// Whether something is plugged in (`pa_sink_port_info.available`).
    package var availability: PortAvailability

    package init(name: String, description: String = "", type: PortType = .unknown,
                priority: UInt32 = 0, availability: PortAvailability = .unknown) {
        self.name = name
        self.description = description
        self.type = type
        self.priority = priority
        self.availability = availability
    }
}

/// Sink state, as `pa_sink_state_t`.
package enum SinkState: String, Sendable, Codable {
    case running, idle, suspended, unknown
}

/// One sink (output device or virtual sink), as `pa_sink_info` or as read from a dump.
package struct Sink: Sendable, Equatable, Codable {
    /// Server-side index (`pa_sink_info.index`); nil when a dump omitted it.
    package var index: UInt32?
    /// Sink name (`pa_sink_info.name`).
    package var name: String
    /// Human description (`pa_sink_info.description`).
    package var description: String
    /// Driver (`pa_sink_info.driver`), e.g. `module-null-sink.c` or `PipeWire`.
    package var driver: String
    /// State (`pa_sink_info.state`).
    package var state: SinkState
    /// Volume per channel (`pa_sink_info.volume`).
    package var volume: ChannelVolumes
    /// Channel names in order (`pa_sink_info.channel_map`, `pa_channel_position_to_string`).
    package var channelMap: [String]
    /// Mute (`pa_sink_info.mute`).
    package var mute: Bool
    /// Flag names as pactl prints them (`HARDWARE`, `DECIBEL_VOLUME` …; `pa_sink_info.flags`).
    package var flags: Set<String>
    /// All ports (`pa_sink_info.ports`).
    package var ports: [Port]
    /// Name of the active port (`pa_sink_info.active_port`), nil when the sink has no ports.
    package var activePortName: String?
    /// Properties (`pa_sink_info.proplist`).
    package var properties: [String: String]
    /// Owner module index (`pa_sink_info.owner_module`), nil when none.
    package var ownerModule: UInt32?
    /// The sink's latency in µs: `pa_sink_info.latency` while it runs, else its
    /// `configured_latency` (what it will run at); on PipeWire a Bluetooth sink's includes the
    /// codec's delay. 0 when unknown (a dump).
    package var latencyUs: UInt64 = 0

    package init(index: UInt32? = nil, name: String, description: String = "", driver: String = "",
                state: SinkState = .unknown, volume: ChannelVolumes = ChannelVolumes([]),
                channelMap: [String] = [], mute: Bool = false, flags: Set<String> = [],
                ports: [Port] = [], activePortName: String? = nil,
                properties: [String: String] = [:], ownerModule: UInt32? = nil) {
        self.index = index
        self.name = name
        self.description = description
        self.driver = driver
        self.state = state
        self.volume = volume
        self.channelMap = channelMap
        self.mute = mute
        self.flags = flags
        self.ports = ports
        self.activePortName = activePortName
        self.properties = properties
        self.ownerModule = ownerModule
    }

    /// The active port, looked up by `activePortName` among `ports`.
    package var activePort: Port? {
        guard let activePortName else { return nil }
        return ports.first { $0.name == activePortName } ?? Port(name: activePortName)
    }
}

/// One playback stream (`pa_sink_input_info`).
package struct SinkInput: Sendable, Equatable, Codable {
    /// Server-side index (`pa_sink_input_info.index`).
    package var index: UInt32
    /// Index of the sink it plays on (`pa_sink_input_info.sink`).
    package var sinkIndex: UInt32
    /// Stream name (`pa_sink_input_info.name`).
    package var name: String
    /// Volume per channel (`pa_sink_input_info.volume`).
    package var volume: ChannelVolumes
    /// Mute (`pa_sink_input_info.mute`).
    package var mute: Bool
    /// Paused (`pa_sink_input_info.corked`).
    package var corked: Bool
    /// Whether the stream has a volume at all (`pa_sink_input_info.has_volume`).
    package var hasVolume: Bool
    /// Whether clients may set its volume (`pa_sink_input_info.volume_writable`).
    package var volumeWritable: Bool
    /// Properties (`pa_sink_input_info.proplist`): `media.role`, `application.name` …
    package var properties: [String: String]
    /// The module that owns the stream (`pa_sink_input_info.owner_module`), nil for a client's
    /// stream. A filter, combine or loopback module's stream carries audio of another sink.
    package var ownerModule: UInt32?
    /// Driver (`pa_sink_input_info.driver`), e.g. `protocol-native.c`, `module-combine-sink.c`.
    package var driver: String
    /// The client's index (`pa_sink_input_info.client`), nil for a module's stream or when
    /// unknown: a call app's playback stream is found by its recording stream's client
    /// (`CallStreams`).
    package var client: UInt32?

    package init(index: UInt32, sinkIndex: UInt32, name: String = "",
                volume: ChannelVolumes = ChannelVolumes([]), mute: Bool = false,
                corked: Bool = false, hasVolume: Bool = true, volumeWritable: Bool = true,
                properties: [String: String] = [:], ownerModule: UInt32? = nil, driver: String = "",
                client: UInt32? = nil) {
        self.client = client
        self.ownerModule = ownerModule
        self.driver = driver
        self.index = index
        self.sinkIndex = sinkIndex
        self.name = name
        self.volume = volume
        self.mute = mute
        self.corked = corked
        self.hasVolume = hasVolume
        self.volumeWritable = volumeWritable
        self.properties = properties
    }

    /// `media.role` property, if set.
    package var mediaRole: String? { properties["media.role"] }
}

/// Everything routing needs to know about a server at one moment.
package struct Snapshot: Sendable, Equatable {
    /// All sinks (`pa_context_get_sink_info_list`).
    package var sinks: [Sink]
    /// All sink-inputs (`pa_context_get_sink_input_info_list`).
    package var sinkInputs: [SinkInput]
    /// Name of the default sink (`pa_server_info.default_sink_name`), nil when unknown.
    package var defaultSinkName: String?
    /// All source-outputs, the recording streams (`pa_context_get_source_output_info_list`):
    /// a call records (`CallStreams`). Empty in a dump, which has none.
    package var sourceOutputs: [SourceOutput]

    package init(sinks: [Sink], sinkInputs: [SinkInput] = [], defaultSinkName: String? = nil,
                 sourceOutputs: [SourceOutput] = []) {
        self.sinks = sinks
        self.sinkInputs = sinkInputs
        self.defaultSinkName = defaultSinkName
        self.sourceOutputs = sourceOutputs
    }
}
