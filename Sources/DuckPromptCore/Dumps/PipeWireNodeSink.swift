/// A sink from the properties of a PipeWire node as `wpctl inspect` and `pw-cli` print them
/// (`key = "value"`, every value a string): the readers of those two tools share it.
package enum PipeWireNodeSink {
    /// Whether a node's `media.class` makes it a sink, as pipewire-pulse lists sinks
    /// (`Audio/Sink`, `Audio/Duplex`; also `Audio/Sink/Virtual` and `Audio/Sink/Internal`, which
    /// PipeWire gives filter and internal sinks). Nil (no class printed) counts as a sink: a
    /// pasted excerpt of one node often lacks it.
    static func isSink(mediaClass: String?) -> Bool {
        guard let mediaClass else { return true }
        return mediaClass == "Audio/Duplex" || mediaClass == "Audio/Sink" || mediaClass.hasPrefix("Audio/Sink/")
    }

    /// Whether a node that prints no `media.class` (a paste cut before it) is a playback
    /// device's node: an ALSA playback PCM (`api.alsa.pcm.stream=playback`, an `object.path`
    /// ending in `:playback`), a sink factory (`api.alsa.pcm.sink`, `api.bluez5.a2dp.sink`),
    /// or a profile PipeWire names for a sink (`HiFi: Speaker: sink`).
    static func isPlaybackNode(_ properties: [String: String]) -> Bool {
        properties["api.alsa.pcm.stream"] == "playback"
            || properties["object.path"]?.hasSuffix(":playback") == true
            || properties["factory.name"].map { $0.hasSuffix(".sink") || $0.hasSuffix("_sink") } == true
            || properties["device.profile.name"]?.hasSuffix(": sink") == true
    }

    /// The sink of one node.
    /// - Parameters:
    ///   - properties: the node's properties, keys as PipeWire spells them.
    ///   - device: the properties of the node's device (`device.id`) when the dump holds them;
    ///     those the node does not set are added, as pipewire-pulse adds its card's.
    ///   - state: the node's state word (`pw-cli info`'s `state: "suspended"`), if printed.
    /// - Returns: index `object.serial` (the index pipewire-pulse reports), name `node.name`
    ///   (else the placeholder's),
    ///   description `node.description`, else `device.description`, `node.nick`, the name;
    ///   driver `PipeWire`; no ports, volume or flags (these tools print none).
    ///   - placeholder: what the node is called in its dump (`node 58`), for the name
    ///     (`UnnamedSink`) when it has no `node.name` (a paste cut before it).
    static func sink(properties: [String: String], device: [String: String]? = nil, state: String? = nil,
                     placeholder: String? = nil) -> Sink {
        var merged = properties
        for (key, value) in device ?? [:] where merged[key] == nil { merged[key] = value }
        let name = merged["node.name"] ?? placeholder.map(UnnamedSink.name) ?? ""
        return Sink(index: merged["object.serial"].flatMap { SinkBlockBuilder.index($0) },
                    name: name,
                    description: merged["node.description"]
                        ?? merged["device.description"] ?? merged["node.nick"] ?? name,
                    driver: "PipeWire",
                    state: state.flatMap { DumpVocabulary.state($0) } ?? .unknown,
                    properties: merged)
    }
}
