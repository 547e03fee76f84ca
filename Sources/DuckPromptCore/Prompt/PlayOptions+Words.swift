/// The checks of a prompt's options as a caller names them, shared by the command
/// (`--priority`, `--duck`, …) and the D-Bus service (the `a{sv}` keys `priority`, `duck`, …),
/// so that both refuse the same values with the same words.
extension PlayOptions {
    /// One of a word option's choices: `PromptPriority`, `DuckMode`, `BusyPolicy`.
    /// - Parameters:
    ///   - text: the word given.
    ///   - option: the option as the caller wrote it, for the message (`--priority`, `priority`).
    /// - Throws: `DuckPromptError(.usage)`: "OPTION 'TEXT' is not one of: a, b, c".
    public static func choice<T: RawRepresentable & CaseIterable>(_ text: String, option: String) throws -> T
    where T.RawValue == String {
        guard let parsed = T(rawValue: text) else {
            throw DuckPromptError(.usage, "\(option) '\(text)' is not one of: \(T.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return parsed
    }

    /// A duck's gain as given: 0 dB or less (its range is `validate()`'s).
    /// - Parameters:
    ///   - gain: the gain, in dB.
    ///   - given: the value as the caller wrote it (`-20dB`, `-20.0`), and `option`, for the message.
    /// - Throws: `DuckPromptError(.usage)` for a gain over 0 dB: "OPTION 'GIVEN' would raise
    ///   other streams".
    public static func duckGain(_ gain: Decibels, given: String, option: String) throws -> Decibels {
        guard gain.value <= 0 else {
            throw DuckPromptError(.usage, "\(option) '\(given)' would raise other streams: give a negative gain such as -20dB")
        }
        return gain
    }
}
