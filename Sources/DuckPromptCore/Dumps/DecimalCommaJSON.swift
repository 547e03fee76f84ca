/// `pactl --format=json` run under a locale whose decimal separator is a comma (de_DE, fr_FR,
/// ru_RU…) before PulseAudio 16.99 prints its doubles with `%.*f` in that locale
/// (`json_write_double` in `src/pulsecore/json.c`): `"balance":0,00` and
/// `"latency":{"actual":0,00,"configured":0,00}`, which is not JSON (py3status PR #2140,
/// PulseAudio MR 702). Strings such as `"db":"-4,00 dB"` are JSON and stay as they are.
package enum DecimalCommaJSON {
    /// The text with every object member's number whose decimal point a comma replaced
    /// repaired (`"balance":0,00,` → `"balance":0.00,`); nil when there is none.
    ///
    /// A member value `digits,digits` followed by `,` or `}` is never JSON (in an object a
    /// comma is followed by a key, which is quoted), so valid JSON is never changed; array
    /// elements (`[1,2]`) are not member values and are left alone.
    static func repaired(_ text: String) -> String? {
        var bytes = Array(text.utf8)
        var changed = false
        var inString = false
        var escaped = false
        var index = 0

        func isDigit(_ at: Int) -> Bool { at < bytes.count && bytes[at] >= 0x30 && bytes[at] <= 0x39 }
        func skipBlanks(_ from: Int) -> Int {
            var at = from
            while at < bytes.count, bytes[at] == 0x20 || bytes[at] == 0x09 || bytes[at] == 0x0A || bytes[at] == 0x0D { at += 1 }
            return at
        }

        while index < bytes.count {
            let byte = bytes[index]
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                index += 1
                continue
            }
            if byte == UInt8(ascii: "\"") { inString = true; index += 1; continue }
            guard byte == UInt8(ascii: ":") else { index += 1; continue }
            var at = skipBlanks(index + 1)
            if at < bytes.count, bytes[at] == UInt8(ascii: "-") { at += 1 }
            guard isDigit(at) else { index += 1; continue }
            while isDigit(at) { at += 1 }
            let comma = at
            guard comma < bytes.count, bytes[comma] == UInt8(ascii: ","), isDigit(comma + 1) else { index = at; continue }
            at = comma + 1
            while isDigit(at) { at += 1 }
            let next = skipBlanks(at)
            if next < bytes.count, bytes[next] == UInt8(ascii: ",") || bytes[next] == UInt8(ascii: "}") {
                bytes[comma] = UInt8(ascii: ".")
                changed = true
            }
            index = at
        }
        return changed ? String(decoding: bytes, as: UTF8.self) : nil
    }
}
