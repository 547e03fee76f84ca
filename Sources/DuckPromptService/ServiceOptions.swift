import DuckPrompt

/// A prompt's options as a D-Bus caller gives them: the command's long options as keys of an
/// `a{sv}`, each with one type (Docs/dbus.md). Pure: `parse` turns them into the
/// `PlayOptions` the command would build from the same options, over the same config file's
/// defaults, and checks them as the command does (`PlayOptions.validate()`).
public struct ServiceOptions: Sendable {
    public var play: PlayOptions
    /// `voice` s: an espeak-ng voice (nil: `SpeechSource.defaultVoice`).
    public var voice: String?
    /// `rate` u: words per minute (nil: `SpeechSource.defaultWordsPerMinute`).
    public var wordsPerMinute: Int?

    /// Each key and the one D-Bus type it takes.
    public static let types: [String: String] = [
        "priority": "s", "duck": "d", "duck-mode": "s", "attack-ms": "u", "release-ms": "u",
        "volume": "d", "device": "s", "expire-ms": "u", "on-busy": "s", "pre-roll-ms": "u",
        "voice": "s", "rate": "u", "properties": "a{ss}", "no-pause": "b", "rewind-ms": "u",
    ]

    /// - Parameters:
    ///   - options: the caller's `a{sv}`.
    ///   - defaults: what the config file sets (`PlayOptions(config:)`); keys override it.
    /// - Throws: `DuckPromptError(.usage)` naming the key: an unknown key, a value of another
    ///   type than `types` gives, a word not among the choices, a number out of its range.
    package static func parse(_ options: [String: BusValue], defaults: PlayOptions) throws -> ServiceOptions {
        var result = ServiceOptions(play: defaults, voice: nil, wordsPerMinute: nil)
        for key in options.keys.sorted() {
            let value = options[key]!
            guard let type = types[key] else {
                throw DuckPromptError(.usage, "unknown option '\(key)' (options: \(types.keys.sorted().joined(separator: ", ")))")
            }
            guard value.signature == type else {
                throw DuckPromptError(.usage, "option '\(key)' takes a value of type \(type), not \(value.signature)")
            }
            try result.apply(key, value)
        }
        try result.play.validate()
        return result
    }

    private mutating func apply(_ key: String, _ value: BusValue) throws {
        switch (key, value) {
        case ("priority", .string(let s)): play.priority = try PlayOptions.choice(s, option: key)
        case ("duck-mode", .string(let s)): play.duckMode = try PlayOptions.choice(s, option: key)
        case ("on-busy", .string(let s)): play.onBusy = try PlayOptions.choice(s, option: key)
        case ("duck", .double(let d)): play.duck = try PlayOptions.duckGain(Decibels(d), given: "\(d)", option: key)
        case ("volume", .double(let d)): play.volume = Decibels(d)
        case ("attack-ms", .uint32(let u)): play.attackMs = Int(u)
        case ("release-ms", .uint32(let u)): play.releaseMs = Int(u)
        case ("expire-ms", .uint32(let u)): play.expireMs = Int(u)
        case ("pre-roll-ms", .uint32(let u)): play.preRollMs = Int(u)
        case ("no-pause", .bool(let b)): play.pausePlayers = !b
        case ("rewind-ms", .uint32(let u)): play.rewindMs = Int(u)
        case ("device", .string(let s)):
            guard !s.isEmpty else { throw DuckPromptError(.usage, "device needs a sink name, #index or @DEFAULT_SINK@") }
            play.device = DeviceRequest(parsing: s)
        case ("voice", .string(let s)): voice = s
        case ("rate", .uint32(let u)):
            let rate = Int(u)
            let range = SpeechSource.wordsPerMinuteRange
            guard range.contains(rate) else {
                throw DuckPromptError(.usage, "rate \(rate) is out of range (\(range.lowerBound) to \(range.upperBound) words per minute)")
            }
            wordsPerMinute = rate
        case ("properties", .stringMap(let map)):
            try PromptLimits.checkProperties(map)
            for (k, v) in map {
                guard !k.isEmpty else { throw DuckPromptError(.usage, "properties: a property needs a name") }
                play.properties[k] = v
            }
        default:
            preconditionFailure("types and apply disagree on \(key)")
        }
    }
}
