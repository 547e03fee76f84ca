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

    /// The sink of one node.
    /// - Parameters:
    ///   - properties: the node's properties, keys as PipeWire spells them.
    ///   - device: the properties of the node's device (`device.id`) when the dump holds them;
    ///     those the node does not set are added, as pipewire-pulse adds its card's.
    ///   - state: the node's state word (`pw-cli info`'s `state: "suspended"`), if printed.
    /// - Returns: index `object.serial` (the index pipewire-pulse reports), name `node.name`,
    ///   description `node.description`, else `device.description`, `node.nick`, the name;
    ///   driver `PipeWire`; no ports, volume or flags (these tools print none).
    static func sink(properties: [String: String], device: [String: String]? = nil, state: String? = nil) -> Sink {
        var merged = properties
        for (key, value) in device ?? [:] where merged[key] == nil { merged[key] = value }
        let name = merged["node.name"] ?? ""
        return Sink(index: merged["object.serial"].flatMap { SinkBlockBuilder.index($0) },
                    name: name,
                    description: merged["node.description"]
                        ?? merged["device.description"] ?? merged["node.nick"] ?? name,
                    driver: "PipeWire",
                    state: state.flatMap { DumpVocabulary.state($0) } ?? .unknown,
                    properties: merged)
    }
}
