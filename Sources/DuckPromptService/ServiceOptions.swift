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
                let keys = (PromptOption.all.map(\.busKey) + [stopWithCaller]).sorted().joined(separator: ", ")
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

    /// The service's own key, not a prompt option (no command-line option, no config key):
    /// `stop-with-caller` (`b`), the prompt cancelled when its caller leaves the bus
    /// (`duckprompt play` handing its prompt over sets it, so that a command killed with
    /// kill -9 does not leave its prompt playing for no one).
    package static let stopWithCaller = Handoff.stopWithCaller

    /// The service's own keys taken out of `options` (before `parse`, which knows only the
    /// prompt options): the prompt options left, and whether `stop-with-caller` is true.
    /// - Throws: `DuckPromptError(.usage)` when its value is not a boolean (`b`).
    package static func splitStopWithCaller(_ options: [String: BusValue]) throws -> (options: [String: BusValue], stops: Bool) {
        var options = options
        guard let value = options.removeValue(forKey: stopWithCaller) else { return (options, false) }
        guard case .bool(let on) = value else {
            throw DuckPromptError(.usage, "option '\(stopWithCaller)' takes a value of type b, not \(value.signature)")
        }
        return (options, on)
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
