/// The one grammar for numbers a user types (command-line values, volumes): plain decimal,
/// nothing else. `Int("…")` and `Double("…")` accept more than a person means: `Double` takes
/// `0x10` (16), `1e300`, `inf`, `nan` and, through `strtod`, leading white space; both
/// overflow to values no option can use. Here a number is
///
///     [+|-] digits [. digits]        (at most `maxDigits` digits in all)
///
/// with ASCII digits only: no white space, no exponent, no hex, no `inf` or `nan`, no `.5` or
/// `5.`. Callers check the range and name the option; nil means "not a number".
package enum NumberText {
    /// Digits accepted in one number, integer and fraction together: enough for any value an
    /// option takes (a time in ms up to an hour is 7), few enough that `Int` never overflows.
    package static let maxDigits = 12

    /// A whole number: `[+|-]digits`. `"007"` is 7; `"+5"` is 5.
    package static func integer(_ text: some StringProtocol) -> Int? {
        guard let parts = split(text), parts.fraction.isEmpty else { return nil }
        var value = 0
        for digit in parts.whole { value = value * 10 + Int(digit - UInt8(ascii: "0")) }
        return parts.negative ? -value : value
    }

    /// A decimal number: `[+|-]digits[.digits]`. Exact for what it accepts as far as `Double`
    /// is (the text, checked here, is then read by `Double`).
    package static func decimal(_ text: some StringProtocol) -> Double? {
        guard split(text) != nil else { return nil }
        return Double(String(text))
    }

    /// Sign, integer digits and fraction digits, or nil when `text` breaks the grammar.
    private static func split(_ text: some StringProtocol) -> (negative: Bool, whole: [UInt8], fraction: [UInt8])? {
        var bytes = Array(text.utf8)[...]
        var negative = false
        if let first = bytes.first, first == UInt8(ascii: "+") || first == UInt8(ascii: "-") {
            negative = first == UInt8(ascii: "-")
            bytes = bytes.dropFirst()
        }
        let isDigit = { (byte: UInt8) in (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
        let whole = bytes.prefix(while: isDigit)
        var rest = bytes.dropFirst(whole.count)
        var fraction: ArraySlice<UInt8> = []
        if rest.first == UInt8(ascii: ".") {
            rest = rest.dropFirst()
            fraction = rest.prefix(while: isDigit)
            guard !fraction.isEmpty else { return nil }
            rest = rest.dropFirst(fraction.count)
        }
        guard !whole.isEmpty, rest.isEmpty, whole.count + fraction.count <= maxDigits else { return nil }
        return (negative, Array(whole), Array(fraction))
    }
}

extension StringProtocol {
    /// The text with control characters (line breaks, tabs, escapes: Unicode category Cc)
    /// written as Swift escapes (`\n`, `\t`, `\u{1B}`), so that a value quoted in a message
    /// keeps the message on one line and cannot move a terminal's cursor.
    package var escapingControlCharacters: String {
        var out = ""
        for scalar in unicodeScalars {
            guard scalar.properties.generalCategory == .control else {
                out.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default: out += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            }
        }
        return out
    }
}
