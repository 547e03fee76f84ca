import DuckPrompt
import FoundationEssentials
import Glibc

/// Formats listings as text tables and JSON (documented in Docs/json.md).
enum Output {
    static func devicesTable(_ listing: DeviceListing) -> String {
        var rows: [[String]] = [["", "INDEX", "NAME", "KIND", "EXTERNAL", "STATE", "ACTIVE PORT", ""]]
        for (sink, c) in zip(listing.snapshot.sinks, listing.classifications) {
            let routed = listing.route?.sink.name == sink.name
            let isDefault = listing.snapshot.defaultSinkName == sink.name
            rows.append([routed ? "*" : " ", sink.index.map { "\($0)" } ?? "-", sink.name,
                         c.forwardsTo.map { "\(c.kind.rawValue)->\($0.rawValue)" } ?? c.kind.rawValue,
                         c.external ? "yes" : "no", sink.state.rawValue,
                         sink.activePortName ?? "-", isDefault ? "default" : ""])
        }
        let widths = (0..<rows[0].count).map { col in rows.map { $0[col].count }.max() ?? 0 }
        var lines = rows.map { row in
            let padded = zip(row, widths).map { $0 + String(repeating: " ", count: max(0, $1 - $0.count)) }
            var line = padded.joined(separator: "  ")
            while line.last == " " { line.removeLast() }
            return line
        }
        if let route = listing.route {
            lines.append("* prompt goes to \(route.sink.name): \(route.reason)")
        } else if let error = listing.routeError {
            lines.append("no sink for a prompt: \(error.message)")
        }
        lines += listing.notes.map { "note: \($0)" }
        if listing.callState != .none {
            lines.append("call: \(listing.callState.rawValue)"
                + listing.calls.readings.map { " (\($0.detail): \($0.state.rawValue))" }.joined(separator: ","))
        }
        return lines.joined(separator: "\n")
    }

    struct RouteJSON: Encodable {
        var sink: String?
        var index: UInt32?
        var kind: String?
        var rule: String?
        var reason: String
    }

    struct DevicesJSON: Encodable {
        var event: String?
        var server: String?
        var serverVersion: String?
        var defaultSink: String?
        var sinks: [SinkReport]
        var route: RouteJSON
        var chosen: String?
        var reason: String
        var call: CallJSON?
        /// `DeviceListing.notes` (a sink a dump gave no name, listed under a placeholder);
        /// absent when there is none.
        var notes: [String]?
        enum CodingKeys: String, CodingKey {
            case event, server, sinks, route, chosen, reason, call, notes
            case serverVersion = "server_version", defaultSink = "default_sink"
        }
    }

    struct ChangeJSON: Encodable {
        var event: String
        var time: String
        var sink: String?
        var summary: String
        var route: RouteJSON
        var call: String?
    }

    /// The call state and each call seen (`DeviceListing.calls`); absent for a dump.
    struct CallJSON: Encodable {
        var state: String
        var calls: [CallReading]
    }

    static func call(_ listing: DeviceListing) -> CallJSON? {
        listing.serverName.isEmpty ? nil : CallJSON(state: listing.callState.rawValue, calls: listing.calls.readings)
    }

    static func route(_ listing: DeviceListing) -> RouteJSON {
        if let r = listing.route {
            return RouteJSON(sink: r.sink.name, index: r.sink.index, kind: r.classification.kind.rawValue,
                             rule: r.rule, reason: r.reason)
        }
        return RouteJSON(sink: nil, index: nil, kind: nil, rule: nil, reason: listing.routeError?.message ?? "")
    }

    static func devicesJSON(_ listing: DeviceListing, compact: Bool = false, event: String? = nil) -> String {
        let route = route(listing)
        return encode(DevicesJSON(event: event,
                                  server: listing.serverName.isEmpty ? nil : listing.serverName,
                                  serverVersion: listing.serverVersion.isEmpty ? nil : listing.serverVersion,
                                  defaultSink: listing.snapshot.defaultSinkName,
                                  sinks: listing.sinkReports, route: route, chosen: route.sink, reason: route.reason,
                                  call: call(listing), notes: listing.notes.isEmpty ? nil : listing.notes),
                      compact: compact)
    }

    /// Local wall-clock time as `HH:mm:ss.SSS` (`clock_gettime(CLOCK_REALTIME)`, `localtime_r`).
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var local = tm()
        localtime_r(&now.tv_sec, &local)
        return formatted("%02d:%02d:%02d.%03d", local.tm_hour, local.tm_min, local.tm_sec, now.tv_nsec / 1_000_000)
    }

    /// `12:00:01.250 sink-added: sink bt (bluetooth-a2dp) appeared; prompts go to bt (bluetooth-a2dp): …`
    static func changeLine(_ change: DeviceChange, _ listing: DeviceListing) -> String {
        let routeText: String
        if let r = listing.route {
            routeText = "prompts go to \(r.sink.name) (\(r.classification.kind.rawValue)): \(r.reason)"
        } else {
            routeText = "no sink for prompts: \(listing.routeError?.message ?? "")"
        }
        return "\(timestamp()) \(change.event): \(change.summary); \(routeText)"
    }

    static func changeJSON(_ change: DeviceChange, _ listing: DeviceListing) -> String {
        let time = Date().formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
        return encode(ChangeJSON(event: change.event, time: time,
                                 sink: change.sinkName, summary: change.summary, route: route(listing),
                                 call: call(listing)?.state),
                      compact: true)
    }

    /// Writes a line to stdout at once (no buffering: `--watch` output goes to pipes).
    static func emit(_ line: String) {
        StandardStreams.writeOutput(line + "\n")
    }

    static func encode<T: Encodable>(_ value: T, compact: Bool = false) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = compact ? [.sortedKeys, .withoutEscapingSlashes]
                                           : [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(value)) ?? Data("{}".utf8), as: UTF8.self)
    }
}
