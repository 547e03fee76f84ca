import FoundationEssentials

// The journal's JSON: non-finite dB values as strings, `updated` as seconds since 1970, every
// read checked by `validate()`.
extension DuckJournal: Codable {
    private enum CodingKeys: String, CodingKey {
        case version, pid, processStart, server, runtimeDir, serverName, depth, streams, ended, updated, gain, players
    }

    /// A dB value that may be -infinity: a number, or `"-inf"`, `"inf"`, `"nan"`.
    private static func decodeDecibels(_ c: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) throws -> Double {
        if let text = try? c.decode(String.self, forKey: key) {
            switch text {
            case "-inf": return -.infinity
            case "inf": return .infinity
            case "nan": return .nan
            default:
                throw DecodingError.dataCorruptedError(forKey: key, in: c,
                    debugDescription: "\(key.stringValue) '\(text)' is neither a number nor -inf, inf or nan")
            }
        }
        return try c.decode(Double.self, forKey: key)
    }

    private static func encodeDecibels(_ value: Double, _ c: inout KeyedEncodingContainer<CodingKeys>, _ key: CodingKeys) throws {
        if value.isFinite {
            try c.encode(value, forKey: key)
        } else {
            try c.encode(value.isNaN ? "nan" : value < 0 ? "-inf" : "inf", forKey: key)
        }
    }

    package init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        version = try c.decode(Int.self, forKey: .version)
        pid = try c.decode(Int32.self, forKey: .pid)
        processStart = try c.decode(UInt64.self, forKey: .processStart)
        server = try c.decodeIfPresent(String.self, forKey: .server)
        runtimeDir = try c.decodeIfPresent(String.self, forKey: .runtimeDir)
        serverName = try c.decodeIfPresent(String.self, forKey: .serverName) ?? ""
        depth = try Self.decodeDecibels(c, .depth)
        streams = try c.decode([Stream].self, forKey: .streams)
        ended = try c.decodeIfPresent([Ended].self, forKey: .ended) ?? []
        updated = Date(timeIntervalSince1970: try c.decode(Double.self, forKey: .updated))
        gain = c.contains(.gain) ? try Self.decodeDecibels(c, .gain) : nil
        players = try c.decodeIfPresent([PausedPlayer].self, forKey: .players) ?? []
    }

    package func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(version, forKey: .version)
        try c.encode(pid, forKey: .pid)
        try c.encode(processStart, forKey: .processStart)
        try c.encodeIfPresent(server, forKey: .server)
        try c.encodeIfPresent(runtimeDir, forKey: .runtimeDir)
        try c.encode(serverName, forKey: .serverName)
        try Self.encodeDecibels(depth, &c, .depth)
        try c.encode(streams, forKey: .streams)
        try c.encode(ended, forKey: .ended)
        try c.encode(updated.timeIntervalSince1970, forKey: .updated)
        if let gain { try Self.encodeDecibels(gain, &c, .gain) }
        if !players.isEmpty { try c.encode(players, forKey: .players) }
    }

    /// The journal as JSON (sorted keys, pretty-printed: it is small and people read it).
    package func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }

    /// A journal read back from JSON, checked by `validate()`: every journal read (orphans,
    /// handover, a store's own) comes through here.
    /// - Throws: `DuckPromptError(.unsupportedData)` when `data` is not a journal of a version
    ///   this build reads, or is out of `validate()`'s bounds (the message gives the reason;
    ///   the caller names the file).
    package static func decoded(from data: Data) throws -> DuckJournal {
        let version: Int
        do { version = try JSONDecoder().decode(Header.self, from: data).version } catch {
            throw DuckPromptError(.unsupportedData, "not a duckprompt journal (\(Self.describe(error)))")
        }
        guard version == currentVersion else {
            throw DuckPromptError(.unsupportedData, "journal version \(version), this duckprompt reads version \(currentVersion)")
        }
        let journal: DuckJournal
        do {
            journal = try JSONDecoder().decode(DuckJournal.self, from: data)
        } catch {
            throw DuckPromptError(.unsupportedData, "garbled journal (\(Self.describe(error)))")
        }
        try journal.validate()
        return journal
    }

    private struct Header: Decodable { var version: Int }

    /// The `version` of a journal's JSON, nil when it has none.
    package static func version(of data: Data) -> Int? {
        try? JSONDecoder().decode(Header.self, from: data).version
    }

    private static func describe(_ error: Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let ctx): return ctx.debugDescription
        case DecodingError.keyNotFound(let key, _): return "no '\(key.stringValue)'"
        case DecodingError.typeMismatch(_, let ctx), DecodingError.valueNotFound(_, let ctx):
            return "bad '\(ctx.codingPath.map(\.stringValue).joined(separator: "."))'"
        default: return "\(error)"
        }
    }
}
