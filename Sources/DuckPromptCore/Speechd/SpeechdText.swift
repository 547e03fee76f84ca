/// The text of a speech-dispatcher message as duckprompt says it. speech-dispatcher 0.11 sends
/// every message as SSML (`<speak>Hello there.<mark name="__spd_0"/> Second sentence.</speak>`,
/// seen from spd-say): its tags are taken out (a mark is where the server's own sentence
/// tracking is; the module does not report marks), its five entities and numeric character
/// references read, and the whole is one text, so that a message of several sentences is one
/// prompt under one duck.
package enum SpeechdText {
    /// `ssml` as plain text: tags removed (`<break/>` and the end of `<p>`, `<s>` as a space), entities
    /// read; white space runs left as they were.
    package static func plain(fromSSML ssml: String) -> String {
        var out = ""
        var i = ssml.startIndex
        while i < ssml.endIndex {
            let c = ssml[i]
            if c == "<", let close = ssml[i...].firstIndex(of: ">") {
                let tag = ssml[ssml.index(after: i)..<close].lowercased()
                if tag.hasPrefix("break") || tag == "/p" || tag == "/s" { out.append(" ") }
                i = ssml.index(after: close)
            } else if c == "&", let semi = ssml[i...].prefix(12).firstIndex(of: ";"),
                      let read = entity(String(ssml[ssml.index(after: i)..<semi])) {
                out.append(read)
                i = ssml.index(after: semi)
            } else {
                out.append(c)
                i = ssml.index(after: i)
            }
        }
        return out
    }

    /// An entity's character: `lt`, `gt`, `amp`, `quot`, `apos`, `#NN`, `#xHH`; nil for others.
    static func entity(_ name: String) -> Character? {
        switch name {
        case "lt": return "<"
        case "gt": return ">"
        case "amp": return "&"
        case "quot": return "\""
        case "apos": return "'"
        default:
            guard name.hasPrefix("#") else { return nil }
            let digits = name.dropFirst()
            let value = digits.first == "x" || digits.first == "X" ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits)
            return value.flatMap(Unicode.Scalar.init).map(Character.init)
        }
    }

    /// A `KEY` message's key name (SSIP: `a`, `shift_a`, `kp-enter`, `double-quote`) as words:
    /// underscores and dashes as spaces.
    package static func spokenKey(_ key: String) -> String {
        String(key.map { $0 == "_" || $0 == "-" ? " " : $0 })
    }
}
