/// A `--help` text (Help.swift) read back as its parts, so the man page (ManPage.swift) is made
/// from the very text `--help` prints.
///
/// The layout it reads is the one every text in Help.swift keeps:
/// - a heading is a line in capitals ending in a colon at column 0 (`OPTIONS:`), maybe followed
///   by its first words (`USAGE: duckprompt play [options] FILE...`);
/// - an entry is a term indented by 2 (`  -d, --device SINK`) with its description starting at
///   column 26 on the same line, or on the next line when the term is longer; the description
///   goes on on lines indented by 26;
/// - anything else is prose; a blank line ends a paragraph.
struct HelpText: Equatable {
    /// One part of a help text, in the order printed.
    enum Block: Equatable {
        /// `OPTIONS:` → "OPTIONS".
        case heading(String)
        /// A term and its description, each joined into one line.
        case entry(term: String, description: String)
        /// Lines of prose joined with spaces.
        case paragraph(String)
    }

    /// The column where an entry's description starts.
    static let descriptionColumn = 26

    var blocks: [Block]

    init(_ text: String) {
        var blocks: [Block] = []
        var paragraph: [String] = []
        var entry: (term: String, description: [String])?

        func flush() {
            if let e = entry { blocks.append(.entry(term: e.term, description: e.description.joined(separator: " "))) }
            entry = nil
            if !paragraph.isEmpty { blocks.append(.paragraph(paragraph.joined(separator: " "))) }
            paragraph = []
        }

        for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = String(raw)
            let indent = line.prefix(while: { $0 == " " }).count
            let body = line.dropFirst(indent).trimmingSuffix(while: { $0 == " " })
            if body.isEmpty {
                flush()
            } else if indent == 0, let heading = HelpText.heading(in: body) {
                flush()
                blocks.append(.heading(heading.name))
                if !heading.rest.isEmpty { paragraph = [heading.rest] }
            } else if indent >= HelpText.descriptionColumn, entry != nil {
                entry!.description.append(String(body))
            } else if indent == 2, let split = HelpText.entry(in: line) {
                flush()
                entry = (split.term, split.description.map { [$0] } ?? [])
            } else {
                if entry != nil { flush() }
                paragraph.append(String(body))
            }
        }
        flush()
        self.blocks = blocks
    }

    /// The text after a heading up to the next heading.
    func section(_ name: String) -> [Block] {
        guard let start = blocks.firstIndex(of: .heading(name)) else { return [] }
        let rest = blocks[(start + 1)...]
        let end = rest.firstIndex(where: { if case .heading = $0 { return true } else { return false } }) ?? rest.endIndex
        return Array(rest[..<end])
    }

    /// Every option an entry term names, long and short, in order: `-d, --device SINK` →
    /// `["-d", "--device"]`.
    var options: [String] {
        blocks.flatMap { block -> [String] in
            guard case .entry(let term, _) = block else { return [] }
            return HelpText.optionNames(in: term)
        }
    }

    static func optionNames(in term: String) -> [String] {
        term.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "|" })
            .filter { $0.hasPrefix("-") && $0.count > 1 && $0 != "--" }
            .map { String($0.split(separator: "[").first ?? $0) }
    }

    /// `OPTIONS:` or `USAGE: words`: capitals and spaces before the colon.
    private static func heading(in line: Substring) -> (name: String, rest: String)? {
        guard let colon = line.firstIndex(of: ":") else { return nil }
        let name = line[..<colon]
        guard name.first?.isUppercase == true,
              name.allSatisfy({ ($0.isUppercase && $0.isASCII) || $0 == " " }) else { return nil }
        let rest = line[line.index(after: colon)...].drop(while: { $0 == " " })
        return (String(name), String(rest))
    }

    /// `  TERM<spaces>DESCRIPTION` with DESCRIPTION at column 26, or `  TERM` alone (a term too
    /// long for the column; its description follows on the next lines). A term has no run of
    /// two spaces.
    private static func entry(in line: String) -> (term: String, description: String?)? {
        let characters = Array(line)
        let column = descriptionColumn
        if characters.count > column, characters[column - 1] == " ", characters[column] != " " {
            let term = String(characters[2..<(column - 1)]).trimmingSuffix(while: { $0 == " " })
            guard !term.isEmpty, !term.contains("  ") else { return nil }
            return (String(term), String(characters[column...]))
        }
        let term = String(characters.dropFirst(2))
        return term.contains("  ") ? nil : (term, nil)
    }
}

extension StringProtocol {
    func trimmingSuffix(while predicate: (Character) -> Bool) -> SubSequence {
        var end = endIndex
        while end > startIndex, predicate(self[index(before: end)]) { end = index(before: end) }
        return self[startIndex..<end]
    }
}
