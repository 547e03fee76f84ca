import DuckPrompt
import Foundation

/// Formats listings as text tables and JSON (documented in Docs/json.md).
enum Output {
    static func devicesTable(_ listing: DeviceListing) -> String {
        var rows: [[String]] = [["", "INDEX", "NAME", "KIND", "EXTERNAL", "STATE", "ACTIVE PORT", ""]]
        for (sink, c) in zip(listing.snapshot.sinks, listing.classifications) {
            let routed = listing.route?.sink.name == sink.name
            let isDefault = listing.snapshot.defaultSinkName == sink.name
            rows.append([routed ? "*" : " ", sink.index.map { "\($0)" } ?? "-", sink.name,
                         c.kind.rawValue, c.external ? "yes" : "no", sink.state.rawValue,
                         sink.activePortName ?? "-", isDefault ? "default" : ""])
        }
        let widths = (0..<rows[0].count).map { col in rows.map { $0[col].count }.max() ?? 0 }
        var lines = rows.map { row in
            let padded = zip(row, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }
            var line = padded.joined(separator: "  ")
            while line.last == " " { line.removeLast() }
            return line
        }
        if let route = listing.route {
            lines.append("* prompt goes to \(route.sink.name): \(route.reason)")
        } else if let error = listing.routeError {
            lines.append("no sink for a prompt: \(error.message)")
        }
        return lines.joined(separator: "\n")
    }

    struct SinkJSON: Encodable {
        var index: UInt32?
        var name: String
        var description: String
        var kind: String
        var external: Bool
        var state: String
        var activePort: String?
        var portType: String?
        var available: String?
        var evidence: String
        var isDefault: Bool
        var chosen: Bool
        var volume: [UInt32]
        var properties: [String: String]

        enum CodingKeys: String, CodingKey {
            case index, name, description, kind, external, state, evidence, chosen, volume, properties
            case activePort = "active_port", portType = "port_type", available, isDefault = "default"
        }
    }

    struct RouteJSON: Encodable {
        var sink: String?
        var index: UInt32?
        var kind: String?
        var reason: String
    }

    struct DevicesJSON: Encodable {
        var server: String
        var serverVersion: String
        var defaultSink: String?
        var sinks: [SinkJSON]
        var route: RouteJSON
        enum CodingKeys: String, CodingKey {
            case server, sinks, route
            case serverVersion = "server_version", defaultSink = "default_sink"
        }
    }

    static func sinks(_ listing: DeviceListing) -> [SinkJSON] {
        zip(listing.snapshot.sinks, listing.classifications).map { sink, c in
            SinkJSON(index: sink.index, name: sink.name, description: sink.description,
                     kind: c.kind.rawValue, external: c.external, state: sink.state.rawValue,
                     activePort: sink.activePortName, portType: sink.activePort?.type.rawValue,
                     available: sink.activePort?.availability.rawValue, evidence: c.evidence,
                     isDefault: listing.snapshot.defaultSinkName == sink.name,
                     chosen: listing.route?.sink.name == sink.name,
                     volume: sink.volume.values, properties: sink.properties)
        }
    }

    static func route(_ listing: DeviceListing) -> RouteJSON {
        if let r = listing.route {
            return RouteJSON(sink: r.sink.name, index: r.sink.index, kind: r.classification.kind.rawValue, reason: r.reason)
        }
        return RouteJSON(sink: nil, index: nil, kind: nil, reason: listing.routeError?.message ?? "")
    }

    static func devicesJSON(_ listing: DeviceListing) -> String {
        encode(DevicesJSON(server: listing.serverName, serverVersion: listing.serverVersion,
                           defaultSink: listing.snapshot.defaultSinkName,
                           sinks: sinks(listing), route: route(listing)))
    }

    static func routeJSON(_ listing: DeviceListing) -> String {
        encode(route(listing))
    }

    static func encode<T: Encodable>(_ value: T) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(value)) ?? Data("{}".utf8), as: UTF8.self)
    }
}
