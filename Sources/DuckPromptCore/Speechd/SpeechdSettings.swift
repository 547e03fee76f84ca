/// A message's settings as speech-dispatcher sends them in a `SET` block (src/server/output.c,
/// `output_send_settings`: `pitch`, `pitch_range`, `rate`, `volume` from -100 to 100,
/// `punctuation_mode`, `spelling_mode`, `cap_let_recogn`, `voice` (male1 …), `language`
/// (`NULL` or a code such as `en-US`; `c` for the C locale), `synthesis_voice`), and what
/// duckprompt's speech takes of them: the rate, as words per minute, and the language, as an
/// espeak-ng voice. The others are accepted and not used (duckprompt's speech has no pitch, and
/// the prompt's level is its `--volume` setting, not the message's).
package struct SpeechdSettings: Sendable, Equatable {
    /// -100 … 100; 0 is the normal rate.
    package var rate = 0
    package var pitch = 0
    package var pitchRange = 0
    package var volume = 0
    /// The message's language, as sent (nil: `NULL`, none given).
    package var language: String?
    /// The synthesis voice asked for by name (nil: `NULL`).
    package var synthesisVoice: String?

    package init() {}

    /// The parameters whose values are numbers from -100 to 100.
    static let numbers: Set<String> = ["rate", "pitch", "pitch_range", "volume"]
    /// The parameters taken as words and not used.
    static let words: Set<String> = ["punctuation_mode", "spelling_mode", "cap_let_recogn", "voice"]

    /// Sets one parameter from its `NAME=VALUE` line.
    /// - Returns: false for a number out of -100 … 100 or not a number (the module answers
    ///   `303 ERROR INVALID PARAMETER OR VALUE`, as module_utils.c does). A name the module does
    ///   not know is accepted and ignored (a newer server may send more).
    package mutating func set(_ name: String, _ value: String) -> Bool {
        if Self.numbers.contains(name) {
            guard let n = Int(value), (-100...100).contains(n) else { return false }
            switch name {
            case "rate": rate = n
            case "pitch": pitch = n
            case "pitch_range": pitchRange = n
            default: volume = n
            }
            return true
        }
        switch name {
        case "language": language = value == "NULL" ? nil : value
        case "synthesis_voice": synthesisVoice = value == "NULL" ? nil : value
        default: break
        }
        return true
    }

    /// The slowest, normal and fastest rates, in words per minute, that -100, 0 and 100 map to:
    /// speech-dispatcher's espeak-ng module's (`EspeakMinRate` 80, `EspeakMaxRate` 449, linear
    /// on each side of 0), with duckprompt's normal rate (`duckprompt say`'s 175, espeak-ng's
    /// `espeakRATE_NORMAL`) at 0 and its upper bound, 450, at 100.
    package static let slowest = 80, normal = 175, fastest = 450

    /// `rate` in words per minute, within `PlayOptions.wordsPerMinuteRange`.
    package var wordsPerMinute: Int {
        rate < 0 ? Self.normal + (Self.normal - Self.slowest) * rate / 100
                 : Self.normal + (Self.fastest - Self.normal) * rate / 100
    }

    /// The espeak-ng voice for the message: the synthesis voice asked for by name, else the
    /// language in espeak-ng's spelling (`en-US` → `en-us`, `pt_BR` → `pt-br`); nil for none,
    /// `c`, `C` or `POSIX` (the server's language when the client set none): the default voice.
    package var espeakVoice: String? {
        if let synthesisVoice, !synthesisVoice.isEmpty { return synthesisVoice }
        guard let language, !["c", "posix"].contains(language.lowercased()) else { return nil }
        let spelled = String(language.lowercased().map { $0 == "_" ? "-" : $0 })
        // A locale's encoding or modifier (`en_US.UTF-8`, `de_DE@euro`) is not a voice's.
        let cut = spelled.split(whereSeparator: { $0 == "." || $0 == "@" }).first.map(String.init) ?? ""
        return cut.isEmpty ? nil : cut
    }
}
