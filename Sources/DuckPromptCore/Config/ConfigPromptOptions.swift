/// A config file's prompt options (`duck_db`, `attack_ms`, …, `PromptOption.configKey`), read
/// through the table the command and the D-Bus service read theirs through.
extension DuckPromptConfig {
    /// The prompt options of a config file's object, by long option name, each checked as
    /// `PlayOptions.validate()` checks it: a bad value gets the command's and the service's
    /// message, after the file's name. `pre_roll_ms` is one only as a number (per kind, it is
    /// the routing's).
    /// - Throws: `DuckPromptError(.config)` naming the file, and the key for a wrong type.
    static func promptOptions(in object: [String: JSONValue],
                              fail: (String) -> DuckPromptError) throws -> [String: PromptOptionValue] {
        var options: [String: PromptOptionValue] = [:]
        var probe = PlayOptions()
        for option in PromptOption.all {
            guard let json = object[option.configKey] else { continue }
            if option == .preRollMs, json.number == nil { continue }
            let value = try Self.value(json, of: option, fail: fail)
            try checked(fail) {
                try option.apply(value, to: &probe)
                try option.check(in: probe)
            }
            options[option.name] = value
        }
        return options
    }

    /// A prompt option's JSON value as its `PromptOption.kind` takes it.
    /// - Throws: the config error naming the key, for a value of another type.
    private static func value(_ json: JSONValue, of option: PromptOption,
                              fail: (String) -> DuckPromptError) throws -> PromptOptionValue {
        let key = option.configKey
        switch option.kind {
        case .milliseconds(let range):
            return .whole(try integer(json, key: key, unit: "ms", range: range, fail: fail))
        case .wordsPerMinute(let range):
            return .whole(try integer(json, key: key, unit: "words per minute", range: range, fail: fail))
        case .gain(let range):
            guard let number = json.number else {
                throw fail("'\(key)' must be a number of dB between \(format(range.lowerBound)) and "
                           + "\(format(range.upperBound)), not \(typeName(json))")
            }
            return .gain(Decibels(number))
        case .choice(let words):
            guard let word = json.string else {
                throw fail("'\(key)' must be one of \(words.joined(separator: ", ")), not \(typeName(json))")
            }
            return .word(word)
        case .text:
            guard let word = json.string else { throw fail("'\(key)' must be a string, not \(typeName(json))") }
            return .word(word)
        case .texts:
            return .words(try strings(json, key: key, what: "strings", fail: fail))
        case .properties:
            guard let object = json.object else {
                throw fail("'\(key)' must be an object of names to strings ({\"media.role\": \"event\"}), not \(typeName(json))")
            }
            return .properties(try object.mapValues { value in
                guard let string = value.string else { throw fail("'\(key)' values must be strings, not \(typeName(value))") }
                return string
            })
        case .flag:
            guard case .bool(let flag) = json else { throw fail("'\(key)' must be true or false, not \(typeName(json))") }
            return .flag(flag)
        }
    }

    /// A usage error of the table (`PromptOption.apply`, `check(in:)`) as a config error:
    /// "PATH: " and the message the command and the service give for the same value.
    static func checked(_ fail: (String) -> DuckPromptError, _ body: () throws -> Void) throws {
        do { try body() } catch let error as DuckPromptError where error.code == .usage {
            throw fail(error.message)
        }
    }
}
