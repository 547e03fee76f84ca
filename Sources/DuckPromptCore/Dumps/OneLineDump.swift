/// `echo $(pacmd list-sinks)` or `echo $(pactl list sinks)`: the shell split the listing into
/// words and echo joined them with single spaces, so the whole dump is one line. The words are
/// put back into lines by the keys pactl (`src/utils/pactl.c`, English, and de_CH's two
/// keys of its own) and pacmd
/// (`src/pulsecore/cli-text.c`) print, `key = "value"` properties and port entries
/// (`name: Description (…)`), indented as the tools indent them, for the readers of those.
///
/// The `*` that marks pacmd's default sink (`* index: 0`) is a glob to the shell: it became the
/// names of the files where the command ran (or stayed `*` where none matched). Words that
/// belong to no key in front of an `index:` are taken for that and mark the default sink.
package enum OneLineDump {
    /// Keys, as words, with the indentation level of their line: 0 block headers, 1 fields.
    /// A key of one word (`Properties:`) or several (`Sample Specification:`).
    private static let keys: [[String]] = [
        // pactl
        "State:", "Name:", "Description:", "Driver:", "Sample Specification:", "Channel Map:",
        "Owner Module:", "Mute:", "Volume:", "balance", "Base Volume:", "Monitor Source:",
        "Latency:", "Flags:", "Properties:", "Ports:", "Active Port:", "Formats:",
        // pactl in de_CH names the ports `Profile:` and the active one `Aktive Profile:`; its
        // other keys are the English ones.
        "Profile:", "Aktive Profile:",
        // pacmd
        "name:", "driver:", "flags:", "state:", "suspend cause:", "priority:", "volume:",
        "base volume:", "volume steps:", "muted:", "current latency:", "max request:",
        "max rewind:", "monitor source:", "sample spec:", "channel map:", "used by:", "linked by:",
        "configured latency:", "fixed latency:", "card:", "module:", "properties:", "ports:",
        "active port:",
    ].map { $0.split(separator: " ").map(String.init) }

    /// Keys whose value is one word (more words after it belong to no key).
    private static let oneWordKeys: Set<String> = [
        "State:", "Name:", "Driver:", "Channel Map:", "Owner Module:", "Mute:", "Monitor Source:",
        "name:", "driver:", "state:", "priority:", "muted:", "monitor source:",
        "channel map:", "used by:", "linked by:", "module:", "volume steps:",
    ]

    /// Keys whose value is a port's name, which has blanks in it under ALSA UCM (`[Out] Speaker`,
    /// `HiFi: HDMI1`): pactl's runs to the next key, pacmd's `<…>` to the word that closes it.
    private static let portNameKeys: Set<String> = ["Active Port:", "Aktive Profile:", "active port:"]

    /// Block header words of a full `pactl list` (`Sink #0`, `Sink Input #3`).
    private static let headerWords: Set<String> = ["Sink", "Source", "Module", "Card", "Client", "Sample"]

    /// Whether a dump is one line of a pactl or pacmd listing.
    static func looksLikeOneLine(_ text: String) -> Bool {
        // Two lines with a visible ASCII character each, between them an ASCII line end: not
        // one line, whatever else the text holds (decided on the first bytes of a 10 MiB dump,
        // which the split below went through whole).
        var visibleLines = 0, lineHasVisible = false
        for byte in text.utf8 {
            if byte >= 0x0A && byte <= 0x0D {
                if lineHasVisible { visibleLines += 1 }
                lineHasVisible = false
                if visibleLines == 2 { return false }
            } else if byte > 0x20 && byte < 0x7F {
                lineHasVisible = true
            }
        }
        if lineHasVisible { visibleLines += 1 }
        if visibleLines >= 2 { return false }
        let lines = text.split(whereSeparator: \.isNewline).filter { !$0.allSatisfy(\.isWhitespace) }
        guard lines.count == 1, let line = lines.first else { return false }
        return line.contains(" index: ") || line.hasPrefix("index: ") || line.contains("Sink #")
            || (line.contains("Name: ") && line.contains("Driver: "))
    }

    /// The listing with its lines back.
    static func lines(_ text: String) -> String {
        let words = text.split(whereSeparator: { $0 == " " || $0 == "\t" || $0.isNewline }).map(String.init)
        var out: [String] = []
        var current: String?
        var level = 0
        var leftover: [String] = []
        var section = ""
        var index = 0

        func flush() {
            if let line = current { out.append(String(repeating: "\t", count: level) + line) }
            current = nil
        }
        func key(at position: Int) -> [String]? {
            keys.filter { key in
                position + key.count <= words.count && Array(words[position..<position + key.count]) == key
            }.max { $0.count < $1.count }
        }

        while index < words.count {
            let word = words[index]
            // pacmd's block header, the default one's `*` perhaps a glob's file names.
            if word == "index:", index + 1 < words.count, UInt32(words[index + 1]) != nil {
                let isDefault = !leftover.isEmpty || current?.hasSuffix(" *") == true
                if current?.hasSuffix(" *") == true { current?.removeLast(2) }
                flush()
                leftover = []
                out.append((isDefault ? "  * " : "    ") + "index: " + words[index + 1])
                index += 2
                section = ""
                continue
            }
            if headerWords.contains(word), index + 1 < words.count,
               words[index + 1].hasPrefix("#") || (["Input", "Output"].contains(words[index + 1])
                                                   && index + 2 < words.count && words[index + 2].hasPrefix("#")) {
                flush()
                let count = words[index + 1].hasPrefix("#") ? 2 : 3
                out.append(words[index..<index + count].joined(separator: " "))
                index += count
                section = ""
                continue
            }
            if word == "sink(s)", index + 1 < words.count, words[index + 1] == "available.", current == nil,
               let count = leftover.last, UInt32(count) != nil {
                leftover.removeLast()
                out.append("\(count) sink(s) available.")
                index += 2
                continue
            }
            if let found = key(at: index) {
                flush()
                leftover = []
                let name = found.joined(separator: " ")
                level = 1
                current = name
                index += found.count
                section = ["Properties:", "properties:"].contains(name)
                    ? (section == "ports" ? "port-properties" : "properties")
                    : (["Ports:", "ports:", "Profile:"].contains(name) ? "ports" : (oneWordKeys.contains(name) ? "one" : ""))
                if section == "port-properties" { level = 2 }
                if section == "one", index < words.count, key(at: index) == nil {
                    current = name + " " + words[index]
                    index += 1
                    section = "done"
                }
                if portNameKeys.contains(name), index < words.count, words[index].hasPrefix("<") {
                    var value = words[index]
                    index += 1
                    while !value.hasSuffix(">"), index < words.count, key(at: index) == nil {
                        value += " " + words[index]
                        index += 1
                    }
                    current = name + " " + value
                    section = "done"
                }
                continue
            }
            // `key = "value"`: to the word that ends the quotes.
            if section.hasSuffix("properties"), index + 2 < words.count, words[index + 1] == "=" {
                flush()
                let property = word
                var value = words[index + 2]
                index += 3
                if value.hasPrefix("\"") {
                    while !(value.count >= 2 && value.hasSuffix("\"") && !value.hasSuffix("\\\"")), index < words.count {
                        value += " " + words[index]
                        index += 1
                    }
                }
                out.append(String(repeating: "\t", count: section == "port-properties" ? 3 : 2) + "\(property) = \(value)")
                continue
            }
            // A port: `name: Description (…)`, to the word that closes the parentheses with its
            // priority (pactl's `(type: Line, priority: 9000, …)`, pacmd's `(priority 9000, …)`):
            // a description may have its own (`Line Out (Rear)`, `Digital Output (S/PDIF)`).
            // Without one, it ends at the next key. A UCM port's name has blanks in it
            // (`[Out] Speaker:`, the `[Out]` perhaps a glob's file name): it runs to the first
            // word that ends in a colon.
            if section == "ports" || section == "port-properties",
               let nameEnd = (index..<min(index + 4, words.count)).first(where: { words[$0].hasSuffix(":") && words[$0].count > 1 }),
               (index...nameEnd).allSatisfy({ key(at: $0) == nil && !words[$0].contains("=") }) {
                flush()
                var entry = words[index...nameEnd].joined(separator: " ")
                var depth = 0
                var sawPriority = false
                index = nameEnd + 1
                while index < words.count {
                    if depth <= 0, key(at: index) != nil { break }
                    let next = words[index]
                    entry += " " + next
                    index += 1
                    depth += next.filter { $0 == "(" }.count - next.filter { $0 == ")" }.count
                    if depth > 0, next.hasPrefix("priority") || next.hasPrefix("(priority") { sawPriority = true }
                    if sawPriority, depth <= 0 { break }
                }
                out.append("\t\t" + entry)
                section = "ports"
                continue
            }
            if section == "one" || section == "done" || section.hasSuffix("properties") || section == "ports" {
                leftover.append(word)
            } else if current != nil {
                current! += " " + word
            } else {
                leftover.append(word)
            }
            index += 1
        }
        flush()
        return out.joined(separator: "\n") + "\n"
    }
}
