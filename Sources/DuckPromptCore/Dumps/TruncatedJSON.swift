/// JSON that a poster stopped copying part-way (a `pw-dump` object cut off mid-object, one
/// object copied out of the array with its trailing comma): one pass over the bytes finds the
/// last point where every value so far was whole, and where the text stops being JSON.
///
/// Pure; the scan is linear in the text's length. It checks structure (brackets, strings,
/// commas, colons, the shape of literals), not every rule JSONDecoder applies (escapes,
/// control characters inside strings): the text it returns can still fail to decode.
package enum TruncatedJSON {
    /// Where the scan stopped.
    struct Scan: Equatable {
        /// Bytes up to the last whole value (or opening bracket).
        var cut: Int
        /// What closes the brackets still open at `cut`, innermost first (`}]`).
        var closers: String
        /// The byte offset where the text stops being JSON (a stray character, a missing
        /// value, the end of the text inside a value); nil when it is whole.
        var errorOffset: Int?
    }

    /// The token before the one being read.
    private enum Previous { case nothing, opener, value, comma, colon, key }

    /// Scans JSON text. - Returns: see `Scan`.
    static func scan(_ text: String) -> Scan {
        let bytes = Array(text.utf8)
        /// Open brackets, innermost last: true for an object.
        var stack: [Bool] = []
        var cut = 0
        var previous = Previous.nothing
        var index = 0

        func mark() { cut = index }
        func stop(_ at: Int) -> Scan { Scan(cut: cut, closers: closers(bytes[..<cut]), errorOffset: at) }
        /// Whether a value may start here: at the top before anything, after `[`, `,` in an
        /// array, or `:`.
        var valueMayStart: Bool {
            switch previous {
            case .nothing: return stack.isEmpty
            case .colon: return true
            case .opener, .comma: return stack.last.map { !$0 } ?? false
            case .value, .key: return false
            }
        }

        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1; continue }
            switch byte {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                guard valueMayStart else { return stop(index) }
                stack.append(byte == UInt8(ascii: "{"))
                index += 1
                previous = .opener
                mark()
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                guard let top = stack.last, top == (byte == UInt8(ascii: "}")),
                      previous == .value || previous == .opener else { return stop(index) }
                stack.removeLast()
                index += 1
                previous = .value
                mark()
            case UInt8(ascii: ","):
                guard !stack.isEmpty, previous == .value else { return stop(index) }
                previous = .comma
                index += 1
            case UInt8(ascii: ":"):
                guard previous == .key else { return stop(index) }
                previous = .colon
                index += 1
            case UInt8(ascii: "\""):
                let isKey = (previous == .opener || previous == .comma) && stack.last == true
                guard isKey || valueMayStart else { return stop(index) }
                index += 1
                var escaped = false
                var closed = false
                while index < bytes.count {
                    let character = bytes[index]
                    index += 1
                    if escaped {
                        escaped = false
                    } else if character == UInt8(ascii: "\\") {
                        escaped = true
                    } else if character == UInt8(ascii: "\"") {
                        closed = true
                        break
                    }
                }
                // A string the text ends in (`"audi`) was cut, not wrong.
                guard closed else { return stop(bytes.count) }
                if isKey {
                    previous = .key
                } else {
                    previous = .value
                    mark()
                }
            default:
                guard valueMayStart else { return stop(index) }
                let start = index
                while index < bytes.count, Self.literalBytes.contains(bytes[index]) { index += 1 }
                let word = String(decoding: bytes[start..<index], as: UTF8.self)
                let isLiteral = ["true", "false", "null"].contains(word) || (Double(word) != nil && word.first != "+")
                // A literal that runs to the end of the text may have been cut (`0.21` of `0.215`).
                guard index > start, index < bytes.count, isLiteral else { return stop(start) }
                previous = .value
                mark()
            }
        }
        let whole = stack.isEmpty && previous == .value
        return Scan(cut: cut, closers: closers(bytes[..<cut]), errorOffset: whole ? nil : bytes.count)
    }

    /// What closes the brackets open at the end of `prefix`, innermost first: one more pass
    /// over it, so that marking a cut stays O(1) however deep the nesting (a prefix that the
    /// scan found to be JSON so far, its strings whole).
    private static func closers(_ prefix: ArraySlice<UInt8>) -> String {
        var open: [UInt8] = []
        var inString = false
        var escaped = false
        for byte in prefix {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"): open.append(UInt8(ascii: "}"))
            case UInt8(ascii: "["): open.append(UInt8(ascii: "]"))
            case UInt8(ascii: "}"), UInt8(ascii: "]"): _ = open.popLast()
            default: break
            }
        }
        return String(decoding: open.reversed(), as: UTF8.self)
    }

    private static let literalBytes = Set("0123456789+-.eEtruefalsn".utf8)

    /// The text cut after its last whole value, its open brackets closed; nil when nothing
    /// whole was found or the text was whole already.
    static func closed(_ text: String) -> String? {
        let found = scan(text)
        guard found.errorOffset != nil, found.cut > 0 else { return nil }
        return String(decoding: Array(text.utf8)[..<found.cut], as: UTF8.self) + found.closers
    }
}
