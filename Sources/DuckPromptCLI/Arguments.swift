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

/// Parsers for option values, each throwing a usage error that names the option.
enum OptionValue {
    static func milliseconds(_ text: String, option: String, range: ClosedRange<Int> = 0...60_000) throws -> Int {
        let t = text.hasSuffix("ms") ? String(text.dropLast(2)) : text
        guard let v = Int(t), range.contains(v) else {
            throw UsageError("--\(option) '\(text)' is not a whole number of milliseconds in \(range.lowerBound)...\(range.upperBound)")
        }
        return v
    }

    /// `5`, `5s`, `2.5`, `500ms`.
    static func duration(_ text: String, option: String) throws -> Duration {
        if text.hasSuffix("ms"), let v = Double(text.dropLast(2)), v > 0, v <= 600_000 {
            return .milliseconds(v)
        }
        let t = text.hasSuffix("s") ? String(text.dropLast()) : text
        guard let v = Double(t), v > 0, v <= 600 else {
            throw UsageError("--\(option) '\(text)' is not a time in seconds (e.g. 5, 2.5s or 500ms)")
        }
        return .milliseconds(v * 1000)
    }

    static func decibels(_ text: String, option: String) throws -> Decibels {
        do { return try Decibels(parsing: text) } catch let error as DuckPromptError {
            throw UsageError("--\(option): \(error.message)")
        }
    }

    static func property(_ text: String) throws -> (String, String) {
        guard let eq = text.firstIndex(of: "="), eq != text.startIndex else {
            throw UsageError("--property '\(text)' is not KEY=VALUE")
        }
        return (String(text[..<eq]), String(text[text.index(after: eq)...]))
    }
}
