import FoundationEssentials

/// A JSON document of no fixed shape, as `JSONDecoder` reads it: what the config file and the
/// `pactl --format=json` and `pw-dump` readers look into key by key (FoundationEssentials has
/// no `JSONSerialization`). Integer literals stay `.int` (`"object.serial": 42` is `42`, not
/// `42.0`); other numbers are `.double`.
package enum JSONValue: Equatable, Sendable {
    case object([String: JSONValue])
    case array([JSONValue])
    case string(String)
    case int(Int64)
    case double(Double)
    case bool(Bool)
    case null

    /// Parses JSON text (one value; a bare string or number is one too).
    /// - Throws: `DecodingError` when the text is not JSON; `JSONValue.describe` words it.
    static func parse(_ data: Data) throws -> JSONValue {
        let decoder = JSONDecoder()
        decoder.userInfo[KindHints.key] = KindHints()
        return try decoder.decode(JSONValue.self, from: data)
    }

    /// A one-line reason for a `parse` error. Off Darwin, JSONDecoder drops its parser's reason
    /// and position (`The given data was not valid JSON.` is all it says, also for a lone UTF-16
    /// surrogate or `1e400`), so such an error is worded here; an error with a coding path is
    /// named by that path (`prefer[0]: …`).
    static func describe(_ error: Error) -> String {
        let context: DecodingError.Context
        switch error {
        case DecodingError.dataCorrupted(let found), DecodingError.typeMismatch(_, let found),
             DecodingError.valueNotFound(_, let found), DecodingError.keyNotFound(_, let found):
            context = found
        default:
            return "\(error)".split(whereSeparator: \.isNewline).joined(separator: " ")
        }
        guard !context.codingPath.isEmpty else {
            return "it is not one JSON value: look for a missing or extra comma, quote or bracket, or a bad escape"
        }
        let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }
            .joined().drop { $0 == "." }
        return "\(path): \(context.debugDescription)"
    }

    var object: [String: JSONValue]? {
        if case .object(let object) = self { object } else { nil }
    }

    var array: [JSONValue]? {
        if case .array(let array) = self { array } else { nil }
    }

    var string: String? {
        if case .string(let string) = self { string } else { nil }
    }

    /// A number (not a boolean) as a Double.
    var number: Double? {
        switch self {
        case .int(let value): Double(value)
        case .double(let value): value
        default: nil
        }
    }

    /// The value as compact JSON text, object keys sorted (`{"k":[1,2.5]}`), as
    /// `JSONSerialization` wrote it with `.sortedKeys`; nil when it cannot be written.
    var jsonText: String? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) }
    }
}

extension JSONValue: Encodable {
    package func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .object(let object): try container.encode(object)
        case .array(let array): try container.encode(array)
        case .string(let string): try container.encode(string)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .null: try container.encodeNil()
        }
    }
}

/// Literals, for defaults (`props["node.virtual"] ?? false`) and tests.
extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral {
    package init(stringLiteral value: String) { self = .string(value) }
    package init(integerLiteral value: Int64) { self = .int(value) }
    package init(floatLiteral value: Double) { self = .double(value) }
    package init(booleanLiteral value: Bool) { self = .bool(value) }
    package init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    package init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

// MARK: Decoding

extension JSONValue: Decodable {
    /// The JSON types, in the order tried when no hint says otherwise (the most frequent in
    /// a pw-dump first).
    fileprivate enum Kind: CaseIterable {
        case string, number, object, bool, array, null
    }

    fileprivate var kind: Kind {
        switch self {
        case .string: .string
        case .int, .double: .number
        case .object: .object
        case .bool: .bool
        case .array: .array
        case .null: .null
        }
    }

    /// A decoder only says a value's type by failing to decode another type, and each failure
    /// builds an error with the whole coding path: deep in a pw-dump that costs more than the
    /// decoding. So the type is guessed first: a member's from the last member of that name,
    /// an array element's from the element two before (arrays hold one type, or alternate
    /// `"name", value` pairs).
    fileprivate final class KindHints: @unchecked Sendable {
        static let key = CodingUserInfoKey(rawValue: "duckprompt.JSONValue.hints")!
        /// The guess for the value decoded next.
        var next: Kind = .object
        /// The name of the member decoded next ("" in an array).
        var memberName = ""
        var memberKinds: [String: Kind] = [:]
        /// The first element's kind of the last array that was the member of this name.
        var firstElementKinds: [String: Kind] = [:]
        // @unchecked: one instance per `parse`, used by that one decode on its thread.
    }

    private struct MemberName: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    package init(from decoder: Decoder) throws {
        let hints = decoder.userInfo[KindHints.key] as? KindHints ?? KindHints()
        let guess = hints.next
        if let value = try Self.decode(guess, from: decoder, hints: hints) {
            self = value
            return
        }
        for kind in Kind.allCases where kind != guess {
            if let value = try Self.decode(kind, from: decoder, hints: hints) {
                self = value
                return
            }
        }
        // JSONDecoder accepted the text but cannot give this value: a string with a lone UTF-16
        // surrogate, a number no Double holds (`1e400`). Its error for that type says why.
        let container = try decoder.singleValueContainer()
        do {
            _ = try container.decode(String.self)
        } catch DecodingError.typeMismatch {
            _ = try container.decode(Double.self)
        }
        throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                debugDescription: "Not a JSON value."))
    }

    /// The value as `kind`; nil when it is of another type. Errors inside it are thrown.
    private static func decode(_ kind: Kind, from decoder: Decoder, hints: KindHints) throws -> JSONValue? {
        switch kind {
        case .string:
            return (try? decoder.singleValueContainer().decode(String.self)).map(JSONValue.string)
        case .number:
            guard let container = try? decoder.singleValueContainer(),
                  let value = try? container.decode(Double.self) else { return nil }
            // An integer literal (also `1.0` and `1e3`, which JSONSerialization printed as
            // integers too) stays exact beyond 2^53; -0.0 stays a double, printed `-0`.
            if value == value.rounded(), abs(value) < 9.2e18, value != 0 || value.sign == .plus,
               let integer = try? container.decode(Int64.self) {
                return .int(integer)
            }
            return .double(value)
        case .bool:
            return (try? decoder.singleValueContainer().decode(Bool.self)).map(JSONValue.bool)
        case .null:
            return (try? decoder.singleValueContainer().decodeNil()) == true ? .null : nil
        case .object:
            guard let container = try? decoder.container(keyedBy: MemberName.self) else { return nil }
            var object: [String: JSONValue] = [:]
            let names = container.allKeys
            object.reserveCapacity(names.count)
            for name in names {
                let guess = hints.memberKinds[name.stringValue] ?? .string
                hints.next = guess
                hints.memberName = name.stringValue
                let value = try container.decode(JSONValue.self, forKey: name)
                if value.kind != guess { hints.memberKinds[name.stringValue] = value.kind }
                object[name.stringValue] = value
            }
            return .object(object)
        case .array:
            guard var container = try? decoder.unkeyedContainer() else { return nil }
            let memberName = hints.memberName
            var array: [JSONValue] = []
            array.reserveCapacity(container.count ?? 0)
            var guesses = (hints.firstElementKinds[memberName] ?? .object, nil as Kind?)
            while !container.isAtEnd {
                hints.next = guesses.0
                hints.memberName = ""
                let value = try container.decode(JSONValue.self)
                if array.isEmpty, value.kind != guesses.0 { hints.firstElementKinds[memberName] = value.kind }
                array.append(value)
                guesses = (guesses.1 ?? value.kind, value.kind)
            }
            return .array(array)
        }
    }
}
