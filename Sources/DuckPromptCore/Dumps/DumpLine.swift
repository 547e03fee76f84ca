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
    /// full-width colon (CJK locales) made `:`: one pass over the scalars, none when the dump
    /// holds none of them (a 10 MB dump took seconds through six `replacingOccurrences`).
    static func normalized(_ dump: String) -> String {
        let special: Set<Unicode.Scalar> = ["\r", "\u{00A0}", "\u{202F}", "\u{2007}", "\u{FF1A}"]
        guard dump.unicodeScalars.contains(where: special.contains) else { return dump }
        var out = String.UnicodeScalarView()
        var afterCR = false
        for scalar in dump.unicodeScalars {
            switch scalar {
            case "\r":
                out.append("\n")
                afterCR = true
                continue
            case "\n" where afterCR: break
            case "\u{00A0}", "\u{202F}", "\u{2007}": out.append(" ")
            case "\u{FF1A}": out.append(":")
            default: out.append(scalar)
            }
            afterCR = false
        }
        return String(out)
    }

    static func lines(of dump: String) -> [DumpLine] {
        return normalized(dump).split(separator: "\n", omittingEmptySubsequences: false).map { raw in
            var column = 0
            for character in raw {
                if character == "\t" {
                    column = (column / 8 + 1) * 8
                } else if character == " " {
                    column += 1
                } else {
                    break
                }
            }
            return DumpLine(indent: column, text: raw.trimmingSpaces())
        }
    }

    /// True for lines that carry nothing: empty, or an ellipsis left where a dump was cut.
    var isFiller: Bool {
        text.isEmpty || text == "..." || text == "…" || text == "[...]" || text == "(...)"
    }

    /// `key: value` split at the first colon; the key is normalised
    /// (`DumpVocabulary.normalizedKey`), the value trimmed. Nil when there is no colon, the key
    /// is empty or the line is a property line (`key = "value"`).
    var keyValue: (key: String, value: String)? {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let key = text[..<colon]
        guard !key.isEmpty, !key.contains("="), !key.contains("\"") else { return nil }
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
        guard let equals = body.firstRange(of: " = ") else { return nil }
        let key = body[..<equals.lowerBound].trimmingSpaces()
        guard !key.isEmpty, !key.contains(where: { $0 == " " || $0 == "\"" || $0 == "\t" })
        else { return nil }
        let rest = body[equals.upperBound...].trimmingSpaces()
        if rest.count >= 2, rest.hasPrefix("\""), rest.hasSuffix("\"") {
            return (key, Self.unescape(rest.dropFirst().dropLast()))
        }
        if rest.hasPrefix("hex:") || rest.isEmpty { return (key, rest) }
        // Unquoted single words (some tools print numbers bare).
        if !rest.contains(where: { $0 == " " || $0 == "\"" }) { return (key, rest) }
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
        guard !name.isEmpty, !name.contains(" = ") else { return nil }

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
            if lower.contains("group") || lower.contains("gruppe") || lower.contains("groupe")
                || lower.contains("群組") || lower.contains("그룹")
                || lower.contains("offset") || lower.contains("usec") {
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
        guard !text.contains(":"), !text.contains("=") else { return nil }
        if let match = text.wholeMatch(of: DumpPatterns.numberedHeader),
           let index = UInt32(match.output.2) {
            return (DumpVocabulary.normalizedKey(match.output.1), index)
        }
        if let match = text.wholeMatch(of: DumpPatterns.indexFirstHeader), let index = UInt32(match.output.1) {
            return (DumpVocabulary.normalizedKey(match.output.2), index)
        }
        return nil
    }
}
