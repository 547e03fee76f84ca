import DuckPrompt

/// A prompt's options as a D-Bus caller gives them: the keys of an `a{sv}`, each with one type
/// (`PromptOption.busKey`, `busType`; Docs/dbus.md). Pure: `parse` reads them through the
/// table the command and the config file read theirs through, so the same value gets the same
/// `PlayOptions` and the same message.
public enum ServiceOptions {
    /// - Parameters:
    ///   - options: the caller's `a{sv}`.
    ///   - defaults: what the config file sets (`PlayOptions(config:)`); keys override it.
    /// - Returns: the options, checked (`PlayOptions.validate()`, once).
    /// - Throws: `DuckPromptError(.usage)` naming the key: an unknown key, a value of another
    ///   type than the table's, then what `PromptOption.apply(_:to:)` and
    ///   `PlayOptions.validate()` throw.
    package static func parse(_ options: [String: BusValue], defaults: PlayOptions) throws -> PlayOptions {
        var play = defaults
        for key in options.keys.sorted() {
            let value = options[key]!
            guard let option = PromptOption.busKey(key) else {
                let keys = PromptOption.all.map(\.busKey).sorted().joined(separator: ", ")
                throw DuckPromptError(.usage, "unknown option '\(key)' (options: \(keys))")
            }
            guard value.signature == option.busType else {
                throw DuckPromptError(.usage, "option '\(key)' takes a value of type \(option.busType), not \(value.signature)")
            }
            try option.apply(Self.value(value), to: &play)
        }
        try play.validate()
        return play
    }

    /// A variant of the type its option takes, as the table's value.
    private static func value(_ value: BusValue) -> PromptOptionValue {
        switch value {
        case .uint32(let number): .whole(Int(number))
        case .double(let dB): .gain(Decibels(dB))
        case .string(let word): .word(word)
        case .strings(let words): .words(words)
        case .stringMap(let map): .properties(map)
        case .bool(let flag): .flag(flag)
        default: preconditionFailure("no option takes \(value.signature)")
        }
    }
}
