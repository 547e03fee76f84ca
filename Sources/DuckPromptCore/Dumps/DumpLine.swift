import FoundationEssentials

/// One line of a text dump: its indentation (tabs count to the next multiple of 8 columns) and
/// its text without surrounding blanks. No-break spaces (French `Nom : x`) become spaces and the
/// full-width colon becomes `:`.
package struct DumpLine: Sendable, Equatable {
    /// Columns of leading blanks.
    var indent: Int
    /// The text, trimmed.
    var text: String

    /// Splits a dump into lines, normalising line ends (CRLF, CR) and blanks.
    /// Line ends made `\n` (from `\r\n` and `\r`), no-break and figure spaces made spaces, the
    /// full-width colon (CJK locales) made `:`: one pass over the UTF-8 bytes, none when the
    /// dump holds none of them (a 10 MB dump took seconds through six `replacingOccurrences`,
    /// and 0.3 s through its scalars).
    static func normalized(_ dump: String) -> String {
        // U+00A0 is C2 A0; U+202F, U+2007 are E2 80 AF, E2 80 87; U+FF1A is EF BC 9A.
        guard dump.utf8.contains(where: { $0 == 0x0D || $0 == 0xC2 || $0 == 0xE2 || $0 == 0xEF }) else { return dump }
        let bytes = Array(dump.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case 0x0D:
                out.append(0x0A)
                index += index + 1 < bytes.count && bytes[index + 1] == 0x0A ? 2 : 1
                continue
            case 0xC2 where index + 1 < bytes.count && bytes[index + 1] == 0xA0:
                out.append(0x20)
                index += 2
                continue
            case 0xE2 where index + 2 < bytes.count && bytes[index + 1] == 0x80
                && (bytes[index + 2] == 0xAF || bytes[index + 2] == 0x87):
                out.append(0x20)
                index += 3
                continue
            case 0xEF where index + 2 < bytes.count && bytes[index + 1] == 0xBC && bytes[index + 2] == 0x9A:
                out.append(0x3A)
                index += 3
                continue
            default:
                out.append(byte)
                index += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The dump's lines (`normalized` first), each with its indentation and its trimmed text.
    /// Split at the `\n` bytes (a line end is never part of a larger character); the
    /// indentation counted on the bytes unless a line's first non-blank byte starts a
    /// multi-byte character (a combining mark could join the blank before it), where the
    /// characters are counted as before.
    static func lines(of dump: String) -> [DumpLine] {
        let text = normalized(dump)
        var result: [DumpLine] = []
        let utf8 = text.utf8
        var lineStart = utf8.startIndex
        while true {
            let lineEnd = utf8[lineStart...].firstIndex(of: 0x0A) ?? utf8.endIndex
            let raw = text[lineStart..<lineEnd]
            result.append(DumpLine(indent: indentation(raw), text: raw.trimmingSpaces()))
            guard lineEnd < utf8.endIndex else { break }
            lineStart = utf8.index(after: lineEnd)
        }
        return result
    }

    /// Columns of leading blanks: tabs to the next multiple of 8.
    private static func indentation(_ raw: Substring) -> Int {
        var column = 0
        for byte in raw.utf8 {
            if byte == 0x09 {
                column = (column / 8 + 1) * 8
            } else if byte == 0x20 {
                column += 1
            } else if byte < 0x80 {
                return column
            } else {
                break
            }
        }
        // A blank line, or a multi-byte character after the blanks: by characters.
        column = 0
        for character in raw {
            if character == "\t" {
                column = (column / 8 + 1) * 8
            } else if character == " " {
                column += 1
            } else {
                break
            }
        }
        return column
    }

    /// True for lines that carry nothing: empty, or an ellipsis left where a dump was cut.
    var isFiller: Bool {
        text.isEmpty || text == "..." || text == "…" || text == "[...]" || text == "(...)"
    }

    /// `key: value` split at the first colon; the key is normalised
    /// (`DumpVocabulary.normalizedKey`), the value trimmed. Nil when there is no colon, the key
    /// is empty or the line is a property line (`key = "value"`).
    var keyValue: (key: String, value: String)? {
        guard let colon = text.isASCII ? text.utf8.firstIndex(of: 0x3A) : text.firstIndex(of: ":") else { return nil }
        let key = text[..<colon]
        guard !key.isEmpty, !key.containsText("="), !key.containsText("\"") else { return nil }
        return (DumpVocabulary.normalizedKey(key), text[text.index(after: colon)...].trimmingSpaces())
    }

    /// `key = "value"` as `pa_proplist_to_string_sep` prints a property (quotes and backslashes
    /// in the value escaped with a backslash), `key = hex:…` for a binary property, or an
    /// unquoted single word; wpctl marks some lines with a leading `* `, pw-cli info with `*` and
    /// a tab. Nil for any other line.
    var property: (key: String, value: String)? {
        var body = Substring(text)
        // wpctl's `  * key = …`, pw-cli info's `*\t\tkey = …` (a changed value).
        if body.first == "*", body.dropFirst().first?.isWhitespace == true {
            body = body.dropFirst().drop(while: \.isWhitespace)
        }
        guard let equals = Self.spacedEquals(in: body) else { return nil }
        let key = body[..<equals.lowerBound].trimmingSpaces()
        // An ASCII key or value is looked at byte by byte (each character is one byte).
        guard !key.isEmpty, key.isASCII ? !key.utf8.contains(where: { $0 == 0x20 || $0 == 0x22 || $0 == 0x09 })
                                        : !key.contains(where: { $0 == " " || $0 == "\"" || $0 == "\t" })
        else { return nil }
        let rest = body[equals.upperBound...].trimmingSpaces()
        if rest.isASCII {
            let bytes = rest.utf8
            if bytes.count >= 2, bytes.first == 0x22, bytes.last == 0x22 {
                let inner = Substring(rest).dropFirst().dropLast()
                return (key, inner.utf8.contains(0x5C) ? Self.unescape(inner) : String(inner))
            }
            if rest.hasPrefix("hex:") || rest.isEmpty { return (key, rest) }
            if !bytes.contains(where: { $0 == 0x20 || $0 == 0x22 }) { return (key, rest) }
            return nil
        }
        if rest.count >= 2, rest.hasPrefix("\""), rest.hasSuffix("\"") {
            return (key, Self.unescape(rest.dropFirst().dropLast()))
        }
        if rest.hasPrefix("hex:") || rest.isEmpty { return (key, rest) }
        // Unquoted single words (some tools print numbers bare).
        if !rest.contains(where: { $0 == " " || $0 == "\"" }) { return (key, rest) }
        return nil
    }

    /// The first ` = ` of a line: found on its bytes, and by characters only where a
    /// non-ASCII scalar beside it could join one of its blanks into a larger character.
    private static func spacedEquals(in body: Substring) -> Range<String.Index>? {
        let utf8 = body.utf8
        var from = utf8.startIndex
        while let equals = utf8[from...].firstIndex(of: 0x3D) {
            let after = utf8.index(after: equals)
            if equals > utf8.startIndex, after < utf8.endIndex,
               utf8[utf8.index(before: equals)] == 0x20, utf8[after] == 0x20 {
                let start = utf8.index(before: equals), end = utf8.index(after: after)
                if (start > utf8.startIndex && utf8[utf8.index(before: start)] >= 0x80)
                    || (end < utf8.endIndex && utf8[end] >= 0x80) {
                    return body.firstRange(of: " = ")
                }
                return start..<end
            }
            from = after
        }
        return nil
    }

    private static func unescape(_ value: Substring) -> String {
        guard value.contains("\\") else { return String(value) }
        var result = ""
        var escaped = false
        for character in value {
            if escaped {
                result.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else {
                result.append(character)
            }
        }
        if escaped { result.append("\\") }
        return result
    }

    /// A port line, recognised by its shape rather than its words:
    /// `name: Description (type: Speaker, priority: 10000, availability group: Legacy 3, not available)`
    /// (pactl 14+), `name: Description (priority: 10000, available)` (older pactl),
    /// `name: Description (priority. 100)` (pactl 1.0), or pacmd's
    /// `name: Description (priority 0, latency offset 0 usec, available: yes)`. The last
    /// parenthesised group must hold a priority number; the description may itself contain
    /// parentheses (`Digital Output (S/PDIF) (priority: 0)`). Nil for any other line.
    var port: Port? {
        guard text.hasSuffix(")") else { return nil }
        // Find the "(" that opens the final group.
        var depth = 0
        var open: String.Index?
        var index = text.index(before: text.endIndex)
        while true {
            let character = text[index]
            if character == ")" { depth += 1 }
            if character == "(" {
                depth -= 1
                if depth == 0 { open = index; break }
            }
            if index == text.startIndex { break }
            index = text.index(before: index)
        }
        guard let open else { return nil }
        let tail = text[text.index(after: open)..<text.index(before: text.endIndex)]
        let head = text[..<open].trimmingSpaces()
        let name: String
        let description: String
        if let separator = head.firstRange(of: ": ") {
            name = head[..<separator.lowerBound].trimmingSpaces()
            description = head[separator.upperBound...].trimmingSpaces()
        } else if head.hasSuffix(":") {
            name = String(head.dropLast()).trimmingSpaces()
            description = ""
        } else {
            return nil
        }
        guard !name.isEmpty, !name.containsText(" = ") else { return nil }

        var priority: UInt32?
        var fallbackPriority: UInt32?
        var type = PortType.unknown
        var availability = PortAvailability.unknown
        // zh_TW separates the fields with a full-width comma (`類型：喇叭，優先序10000，可用`).
        for rawField in tail.split(whereSeparator: { $0 == "," || $0 == "\u{FF0C}" }) {
            let field = rawField.trimmingSpaces()
            let lower = DumpVocabulary.normalizedKey(Substring(field))
            if let found = DumpVocabulary.availability(field) {
                availability = found
                continue
            }
            if let colon = field.firstIndex(of: ":") {
                let key = DumpVocabulary.normalizedKey(field[..<colon])
                if ["type", "typ", "tipo", "類型", "유형"].contains(key) {
                    type = DumpVocabulary.portType(field[field.index(after: colon)...].trimmingSpaces())
                    continue
                }
            }
            if lower.containsText("group") || lower.containsText("gruppe") || lower.containsText("groupe")
                || lower.containsText("群組") || lower.containsText("그룹")
                || lower.containsText("offset") || lower.containsText("usec") {
                continue
            }
            guard let number = field.firstMatch(of: DumpPatterns.trailingNumber).flatMap({ UInt32($0.output.1) })
            else { continue }
            if lower.hasPrefix("prio") {
                priority = priority ?? number
            } else if field.wholeMatch(of: DumpPatterns.wordAndNumber) != nil {
                fallbackPriority = fallbackPriority ?? number
            }
        }
        guard let found = priority ?? fallbackPriority else { return nil }
        return Port(name: name, description: description, type: type, priority: found,
                    availability: availability)
    }

    /// `Sink #3`, `Destination #3`, `Source #1`, `Аудиоприёмник №3`, `3. odpływ`: a block
    /// header of `pactl list`. Returns the lower-cased header word and the index.
    var blockHeader: (word: String, index: UInt32)? {
        // Most lines hold a `:` or a `=`: seen on the bytes when the line is ASCII (a byte of
        // `:` may be part of a larger character only next to a non-ASCII scalar).
        let utf8 = text.utf8
        var colonOrEquals = false, nonASCII = false, hash = false
        for byte in utf8 {
            if byte == 0x3A || byte == 0x3D { colonOrEquals = true } else if byte == 0x23 { hash = true } else if byte >= 0x80 { nonASCII = true }
        }
        if colonOrEquals, !nonASCII || text.contains(":") || text.contains("=") { return nil }
        // Each pattern only where it can match (a regex match costs microseconds a line): a
        // `#`, `№`, `č.` or `Nr.` for the first; an ASCII digit first for the second (an index
        // of other digits is no UInt32).
        if hash || nonASCII || text.containsText("Nr."),
           let match = text.wholeMatch(of: DumpPatterns.numberedHeader),
           let index = UInt32(match.output.2) {
            return (DumpVocabulary.normalizedKey(match.output.1), index)
        }
        if let first = utf8.first, first >= 0x30, first <= 0x39,
           let match = text.wholeMatch(of: DumpPatterns.indexFirstHeader), let index = UInt32(match.output.1) {
            return (DumpVocabulary.normalizedKey(match.output.2), index)
        }
        return nil
    }
}

extension StringProtocol {
    /// Whether every byte is ASCII: then each character is one byte, and a search can run on
    /// the bytes.
    package var isASCII: Bool { utf8.allSatisfy { $0 < 0x80 } }

    /// `contains(_:)`: on the bytes when the text is ASCII (no character
    /// search, which cost a tenth of reading a 10 MiB dump), by characters otherwise.
    package func containsText(_ needle: String) -> Bool {
        guard isASCII else { return contains(needle) }
        let haystack = utf8, pattern = Array(needle.utf8)
        guard let first = pattern.first else { return true }
        var index = haystack.startIndex
        while let found = haystack[index...].firstIndex(of: first) {
            if haystack[found...].starts(with: pattern) { return true }
            index = haystack.index(after: found)
        }
        return false
    }
}
