/// `pw-cli ls` / `pw-cli list-objects` (optionally of one type, `pw-cli ls Node`) and
/// `pw-cli info <id>|all`, as PipeWire's `src/tools/pw-cli.c` prints them (0.3.x and 1.x):
///
/// - `ls`: each object `\tid 41, type PipeWire:Interface:Node/3`, then its global properties
///   ` \t\tkey = "value"` (`print_properties` with mark `' '`): a few keys, no ports, no volume;
/// - `info`: `\tid: 41`, `\tpermissions: rwxm`, `\ttype: PipeWire:Interface:Node/3` (1.x:
///   `PipeWire:Interface:Node (version 3)`), then for a node `*\tinput ports: 1/0`,
///   `*\tstate: "suspended"`, `*\tproperties:` and `*\t\tkey = "value"`, `*\tparams: (8)` and
///   its list; the `*` marks what changed since the last print (everything, the first time).
///
/// Nodes whose `media.class` is a sink become sinks (`PipeWireNodeSink`): index
/// `object.serial`, name `node.name`; `info` also gives the state. A node pasted without its
/// class (cut before it) is a sink when it shows a playback device
/// (`PipeWireNodeSink.isPlaybackNode`), named `(unnamed node ID)` when its name was cut too. A `Device` object in the same
/// dump lends the node of its `device.id` the properties the node does not set.
package enum PwCliReader {
    /// An object's first line: `id 41, type PipeWire:Interface:Node/3` (ls) or `id: 41` (info).
    /// The type of an `ls` header always carries the interface version (`/3`), which tells it
    /// from `wpctl inspect`'s header.
    static func header(_ line: DumpLine) -> (id: UInt32, type: String?)? {
        let text = line.text
        guard text.hasPrefix("id") else { return nil }
        if text.hasPrefix("id:") {
            return UInt32(text.dropFirst(3).trimmingSpaces()).map { ($0, nil) }
        }
        guard let (id, type) = WpctlInspectReader.header(line),
              let slash = type.lastIndex(of: "/"), UInt32(type[type.index(after: slash)...]) != nil
        else { return nil }
        return (id, String(type[..<slash]))
    }

    /// Whether a dump is pw-cli output: an `ls` header, or one of the lines only `pw-cli info`
    /// prints: its `id: N` header, its `permissions:` or its `type: PipeWire:Interface:…` line,
    /// a field it marks changed with `*` and a tab (`wpctl inspect` marks with `*` and a space).
    /// A paste that lost some of them is still pw-cli's, and a refusal says so.
    static func looksLikePwCli(_ lines: [DumpLine]) -> Bool {
        lines.contains { line in
            if let found = header(line) { return found.type != nil || line.text.hasPrefix("id:") }
            return line.text.hasPrefix("type: PipeWire:Interface:") || line.text.hasPrefix("permissions: ")
                || line.text.hasPrefix("*\t")
        }
    }

    private struct Object {
        var id: UInt32
        var type = ""
        var state: String?
        var properties: [String: String] = [:]
    }

    static func read(_ text: String) -> [Sink] {
        read(lines: DumpLine.lines(of: text))
    }

    /// The same, from the dump's lines (`DumpLine.lines(of:)`), split once by the caller.
    static func read(lines: [DumpLine]) -> [Sink] {
        var objects: [Object] = []
        for line in lines {
            if let found = header(line) {
                objects.append(Object(id: found.id, type: found.type ?? ""))
                continue
            }
            guard !objects.isEmpty else { continue }
            if let (key, value) = line.property {
                objects[objects.count - 1].properties[key] = value
                continue
            }
            // info's own fields: `type: PipeWire:Interface:Node/3`, `*\tstate: "running"`.
            var body = Substring(line.text)
            if body.first == "*" { body = body.dropFirst().drop(while: \.isWhitespace) }
            if body.hasPrefix("type:") {
                let type = body.dropFirst(5).trimmingSpaces()
                objects[objects.count - 1].type = String(type.prefix { $0 != "/" && $0 != " " })
            } else if body.hasPrefix("state:") {
                let word = body.dropFirst(6).trimmingSpaces().split(separator: "\"", omittingEmptySubsequences: true).first
                objects[objects.count - 1].state = word.map(String.init)
            }
        }
        let devices = Dictionary(objects.filter { $0.type.hasSuffix(":Device") }.map { ($0.id, $0.properties) },
                                 uniquingKeysWith: { first, _ in first })
        return objects.compactMap { object in
            // pw-cli lists every node (drivers, streams, cameras): one without a class is no sink,
            // unless it shows a playback device (an `info` paste cut before its class and name).
            // An `info` paste that lost its `type:` line is judged by its properties alone.
            guard object.type.hasSuffix(":Node") || object.type.isEmpty else { return nil }
            if let mediaClass = object.properties["media.class"] {
                guard PipeWireNodeSink.isSink(mediaClass: mediaClass), object.properties["node.name"] != nil else { return nil }
            } else {
                guard PipeWireNodeSink.isPlaybackNode(object.properties) else { return nil }
            }
            return PipeWireNodeSink.sink(properties: object.properties,
                                         device: object.properties["device.id"].flatMap(UInt32.init).flatMap { devices[$0] },
                                         state: object.state, placeholder: "node \(object.id)")
        }
    }
}
