/// `wpctl inspect <id>` of a PipeWire node: an `id N, type PipeWire:Interface:Node` line, then
/// `key = "value"` lines (some marked `* `). Only nodes whose `media.class` is a sink are kept.
/// The index is `object.serial` (the index pipewire-pulse reports), the name `node.name`.
enum WpctlInspectReader {
    /// `id 56, type PipeWire:Interface:Node`: the object id and its interface type.
    static func header(_ line: DumpLine) -> (id: UInt32, type: String)? {
        // A prefix test spares the regex to lines that cannot be headers.
        guard line.text.hasPrefix("id") else { return nil }
        guard let match = line.text.wholeMatch(of: DumpPatterns.wpctlHeader),
              let id = UInt32(match.output.1) else { return nil }
        return (id, String(match.output.2))
    }

    static func read(_ text: String) -> [Sink] {
        var sinks: [Sink] = []
        var properties: [String: String]?
        var isNode = false

        func finish() {
            defer { properties = nil }
            guard isNode, let properties else { return }
            let mediaClass = properties["media.class"] ?? "Audio/Sink"
            guard mediaClass.hasSuffix("Sink") else { return }
            let name = properties["node.name"] ?? ""
            sinks.append(Sink(index: properties["object.serial"].flatMap { SinkBlockBuilder.index($0) },
                              name: name,
                              description: properties["node.description"]
                                  ?? properties["device.description"] ?? properties["node.nick"] ?? name,
                              driver: "PipeWire",
                              properties: properties))
        }

        for line in DumpLine.lines(of: text) {
            if let header = header(line) {
                finish()
                properties = [:]
                isNode = header.type.hasSuffix(":Node")
                continue
            }
            if let (key, value) = line.property, properties != nil {
                properties?[key] = value
            }
        }
        finish()
        return sinks
    }
}
