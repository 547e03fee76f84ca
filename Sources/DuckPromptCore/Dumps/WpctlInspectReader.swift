/// `wpctl inspect <id>` of a PipeWire node (WirePlumber 0.4 and 0.5, `src/tools/wpctl.c`,
/// `inspect_print_object`): an `id N, type PipeWire:Interface:Node` line, then the node's
/// properties sorted by key, `  * key = "value"` for a global property and `    key = "value"`
/// for the others, keys as PipeWire spells them (`device.icon-name`, `device.form-factor`).
/// With `--referenced`/`--associated` the objects a property names follow, nested under
/// ` ├─ ` / ` │  ` tree marks; the properties of a nested `Device` are the node's device's and
/// are added where the node does not set them (what pipewire-pulse reports for its card).
/// Only nodes whose `media.class` is a sink are kept (`PipeWireNodeSink`).
package enum WpctlInspectReader {
    /// `id 56, type PipeWire:Interface:Node`: the object id and its interface type.
    static func header(_ line: DumpLine) -> (id: UInt32, type: String)? {
        header(text: Substring(line.text))
    }

    private static func header(text: Substring) -> (id: UInt32, type: String)? {
        // A prefix test spares the regex to lines that cannot be headers.
        guard text.hasPrefix("id") else { return nil }
        guard let match = text.wholeMatch(of: DumpPatterns.wpctlHeader),
              let id = UInt32(match.output.1) else { return nil }
        return (id, String(match.output.2))
    }

    /// The tree marks wpctl puts before a nested object's lines (`TREE_INDENT_*`).
    private static let treeMarks: Set<Character> = ["│", "├", "└", "─", " "]

    static func read(_ text: String) -> [Sink] {
        read(lines: DumpLine.lines(of: text))
    }

    /// The same, from the dump's lines (`DumpLine.lines(of:)`), split once by the caller.
    static func read(lines: [DumpLine]) -> [Sink] {
        var sinks: [Sink] = []
        var properties: [String: String]?
        var device: [String: String] = [:]
        var nestedIsDevice = false
        var isNode = false

        func finish() {
            defer { properties = nil; device = [:] }
            guard isNode, let properties, PipeWireNodeSink.isSink(mediaClass: properties["media.class"]) else { return }
            sinks.append(PipeWireNodeSink.sink(properties: properties, device: device))
        }

        for line in lines {
            let nested = line.text.first.map { $0 == "│" || $0 == "├" || $0 == "└" } ?? false
            let body = nested ? line.text.drop(while: treeMarks.contains) : Substring(line.text)
            if let header = header(text: body) {
                if nested {
                    nestedIsDevice = header.type.hasSuffix(":Device")
                } else {
                    finish()
                    properties = [:]
                    isNode = header.type.hasSuffix(":Node")
                    nestedIsDevice = false
                }
                continue
            }
            guard properties != nil,
                  let (key, value) = nested ? DumpLine(indent: 0, text: String(body)).property : line.property
            else { continue }
            if !nested {
                properties?[key] = value
            } else if nestedIsDevice {
                device[key] = value
            }
        }
        finish()
        return sinks
    }
}
