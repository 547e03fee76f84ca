import DuckPrompt

/// A usage error: exit 64 with a one-line message.
struct UsageError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

/// A small getopt-like scanner: `--name=value`, `--name value`, `-x value`, `-xVALUE`,
/// `--` ends options. Option values are taken literally, so `--duck -20dB` works.
struct ArgumentScanner {
    /// Long option name → takes a value. Short names map to long ones.
    let valued: Set<String>
    let flags: Set<String>
    let short: [Character: String]

    struct Result {
        var options: [(name: String, value: String?)] = []
        var positionals: [String] = []

        func last(_ name: String) -> String? { options.last { $0.name == name }?.value ?? nil }
        func all(_ name: String) -> [String] { options.filter { $0.name == name }.compactMap(\.value) }
        func has(_ name: String) -> Bool { options.contains { $0.name == name } }
    }

    func scan(_ args: [String], verb: String) throws -> Result {
        var result = Result()
        var i = 0
        var optionsEnded = false
        func value(for name: String, inline: String?) throws -> String {
            if let inline { return inline }
            i += 1
            guard i < args.count else { throw UsageError("option --\(name) needs a value (see duckprompt \(verb) --help)") }
            return args[i]
        }
        while i < args.count {
            let arg = args[i]
            if optionsEnded || arg == "-" || !arg.hasPrefix("-") {
                result.positionals.append(arg)
            } else if arg == "--" {
                optionsEnded = true
            } else if arg.hasPrefix("--") {
                let body = arg.dropFirst(2)
                let name: String
                var inline: String? = nil
                if let eq = body.firstIndex(of: "=") {
                    name = String(body[..<eq])
                    inline = String(body[body.index(after: eq)...])
                } else {
                    name = String(body)
                }
                if valued.contains(name) {
                    result.options.append((name, try value(for: name, inline: inline)))
                } else if flags.contains(name) {
                    guard inline == nil else { throw UsageError("option --\(name) takes no value (see duckprompt \(verb) --help)") }
                    result.options.append((name, nil))
                } else {
                    throw UsageError("unknown option '--\(name)' for \(verb) (see duckprompt \(verb) --help)")
                }
            } else {
                let letter = arg.dropFirst().first!
                guard let name = short[letter] else {
                    throw UsageError("unknown option '-\(letter)' for \(verb) (see duckprompt \(verb) --help)")
                }
                let rest = String(arg.dropFirst(2))
                if valued.contains(name) {
                    result.options.append((name, try value(for: name, inline: rest.isEmpty ? nil : rest)))
                } else {
                    guard rest.isEmpty else { throw UsageError("option -\(letter) takes no value (see duckprompt \(verb) --help)") }
                    result.options.append((name, nil))
                }
            }
            i += 1
        }
        return result
    }
}

/// Parsers for option values, each throwing a usage error that names the option, the text and
/// the range. Numbers are plain decimal (`NumberText`): no white space, exponent, hex, `inf` or
/// `nan`, at most 12 digits; every one is checked against its range here, so a value the
/// library would refuse or could not use is a usage error before anything else happens.
enum OptionValue {
    /// `MS` or `MSms`: a whole number of milliseconds in `range`.
    static func milliseconds(_ text: String, option: String, range: ClosedRange<Int>) throws -> Int {
        try integer(text.hasSuffix("ms") ? String(text.dropLast(2)) : text, option: option, range: range,
                    unit: "milliseconds", shown: text)
    }

    /// A whole number in `range`, e.g. words per minute.
    static func integer(_ text: String, option: String, range: ClosedRange<Int>, unit: String,
                        shown: String? = nil) throws -> Int {
        let shown = shown ?? text
        guard let v = NumberText.integer(text) else {
            throw UsageError("--\(option) '\(shown)' is not a whole number of \(unit) (\(range.lowerBound) to \(range.upperBound))")
        }
        guard range.contains(v) else {
            throw UsageError("--\(option) '\(shown)' is out of range: give \(range.lowerBound) to \(range.upperBound) \(unit)")
        }
        return v
    }

    /// The `--timeout` range: 1 ms to 10 minutes.
    static let millisecondsRange = 1...600_000

    /// `5`, `5s`, `2.5`, `500ms`: a time from 1 ms to 600 s.
    static func milliseconds(_ text: String, option: String) throws -> Int {
        let inMilliseconds = text.hasSuffix("ms")
        let number = inMilliseconds ? text.dropLast(2) : text.hasSuffix("s") ? text.dropLast() : Substring(text)
        guard let v = NumberText.decimal(number) else {
            throw UsageError("--\(option) '\(text)' is not a time in seconds (e.g. 5, 2.5s or 500ms)")
        }
        let ms = (inMilliseconds ? v : v * 1000).rounded()
        guard ms >= Double(millisecondsRange.lowerBound), ms <= Double(millisecondsRange.upperBound) else {
            throw UsageError("--\(option) '\(text)' is out of range: give 1ms to 600s")
        }
        return Int(ms)
    }

    /// A gain in dB or percent (`Decibels(parsing:)`) in `range` dB; `relative` says what it is
    /// relative to, for the message.
    static func decibels(_ text: String, option: String, range: ClosedRange<Double>? = nil,
                         relative: String = "") throws -> Decibels {
        let gain: Decibels
        do { gain = try Decibels(parsing: text) } catch let error as DuckPromptError {
            throw UsageError("--\(option): \(error.message)")
        }
        if let range, !range.contains(gain.value) {
            let dB = { (v: Double) in v > 0 ? "+\(Decibels(v))" : "\(Decibels(v))" }
            let shown = text.lowercased().hasSuffix("db") ? "'\(text)'" : "'\(text)' (\(dB((gain.value * 10).rounded() / 10)))"
            throw UsageError("--\(option) \(shown) is out of range: give a gain from \(dB(range.lowerBound)) to "
                             + "\(dB(range.upperBound))\(relative)")
        }
        return gain
    }

    static func property(_ text: String) throws -> (String, String) {
        guard let eq = text.firstIndex(of: "="), eq != text.startIndex else {
            throw UsageError("--property '\(text)' is not KEY=VALUE")
        }
        return (String(text[..<eq]), String(text[text.index(after: eq)...]))
    }
}
