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

/// Parsers for option values. Numbers are plain decimal (`NumberText`): no white space,
/// exponent, hex, `inf` or `nan`, at most 12 digits. A prompt's options are read as the table
/// says (`PromptOption`); their ranges are `PlayOptions.validate()`'s, as for the config file
/// and the D-Bus service.
enum OptionValue {
    /// A prompt option's words as the table's value: the last one counts, every one for a
    /// repeatable option (`--duck-exempt-role`, `--property`); a flag given is `true`.
    /// - Throws: `DuckPromptError(.usage)` naming the option, for a word that is not of its kind
    ///   (not a whole number of ms, not a gain, not `KEY=VALUE`).
    static func value(_ option: PromptOption, words: [String]) throws -> PromptOptionValue {
        let word = words.last ?? ""
        func notA(_ what: String) -> DuckPromptError {
            DuckPromptError(.usage, "\(option.name) '\(word)' is not \(what)")
        }
        switch option.kind {
        case .flag: return .flag(true)
        case .texts: return .words(words)
        case .choice, .text: return .word(word)
        case .properties:
            return .properties(Dictionary(try words.map { text in
                guard let eq = text.firstIndex(of: "=") else {
                    throw DuckPromptError(.usage, "\(option.name) '\(text)' is not KEY=VALUE")
                }
                return (String(text[..<eq]), String(text[text.index(after: eq)...]))
            }, uniquingKeysWith: { _, last in last }))
        case .milliseconds:
            guard let ms = NumberText.integer(word.hasSuffix("ms") ? word.dropLast(2) : Substring(word)) else {
                throw notA("a whole number of ms")
            }
            return .whole(ms)
        case .wordsPerMinute:
            guard let wordsPerMinute = NumberText.integer(word) else { throw notA("a whole number of words per minute") }
            return .whole(wordsPerMinute)
        case .gain:
            do { return .gain(try Decibels(parsing: word)) } catch let error as DuckPromptError {
                throw DuckPromptError(.usage, "\(option.name) \(error.message)")
            }
        }
    }

    /// `--keep-awake`'s range, in whole seconds: 1 s to an hour (`Prompter.keepAwakeRange`, but 0,
    /// which ends it there).
    static let keepAwakeRange = 1...3600

    /// `--keep-awake SECONDS`: a whole number of seconds, 1 to 3600 (`60`, `60s`).
    static func keepAwakeSeconds(_ text: String) throws -> Int {
        guard let seconds = NumberText.integer(text.hasSuffix("s") ? text.dropLast() : Substring(text)) else {
            throw UsageError("--keep-awake '\(text)' is not a whole number of seconds (e.g. 60)")
        }
        guard keepAwakeRange.contains(seconds) else {
            throw UsageError("keep-awake \(seconds) s is out of range (\(keepAwakeRange.lowerBound) to \(keepAwakeRange.upperBound) s)")
        }
        return seconds
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
}
