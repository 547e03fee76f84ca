/// The options a prompt takes, one row each: the one table the command (`duckprompt play`,
/// `say`), the config file and the D-Bus service (`a{sv}` options of `Play`, `PlayFd`, `Say`)
/// read them through. Each front turns what it was given into a `PromptOptionValue` of the
/// row's `kind` (a word, a JSON value, a D-Bus variant), and `apply(_:to:)` sets the field of
/// `PlayOptions`; `PlayOptions.validate()` then checks every range, once per prompt. A bad
/// value therefore gets the same one-line message from every front. The help text, the man
/// page, the completions, the introspection XML and Docs/ are tested against this table
/// (`OptionTableTests`).
///
/// Not in the table, because they mean something on one front only:
/// - the command's `--say TEXT` (on D-Bus the text is `Say`'s argument; a config file names
///   no prompt), `-v/--verbose` (what the command prints), and its connection's `-s/--server`,
///   `-n/--client-name`, `--timeout` and `-h/--help` (the service holds one connection of its
///   own for every caller);
/// - the other verbs' options (`devices --json`, `--watch`, `--from`, `serve --exit-idle`,
///   `lab`'s), which are not a prompt's;
/// - the config file's routing settings (`prefer`, `ranking`, `never`, the per-kind form of
///   `pre_roll_ms`) and `players` rules, which are the user's and apply to every prompt.
///
/// Pure: no C module, no I/O.
package struct PromptOption: Sendable, Equatable, CustomStringConvertible {
    /// What values an option takes, and so how each front writes them.
    package enum Kind: Sendable, Equatable {
        /// Whole milliseconds in the range: `MS` or `MSms` on the command line, `u` on D-Bus, a
        /// whole JSON number.
        case milliseconds(ClosedRange<Int>)
        /// A whole number of words per minute in the range: `WPM`, `u`, a whole JSON number.
        case wordsPerMinute(ClosedRange<Int>)
        /// A gain in dB in the range: `-20dB`, `50%` or `-20` on the command line, `d` on
        /// D-Bus, a JSON number of dB.
        case gain(ClosedRange<Double>)
        /// One of these words: `s`, a JSON string.
        case choice([String])
        /// Any word: `s`, a JSON string.
        case text
        /// Words, the option repeated on the command line: `as`, a JSON array of strings.
        case texts
        /// `KEY=VALUE`, the option repeated on the command line: `a{ss}`, a JSON object of strings.
        case properties
        /// On when given on the command line: `b`, JSON `true` or `false`.
        case flag
    }

    /// The long option, without `--` (`attack-ms`); also the name every message uses.
    package let name: String
    /// The short option's letter (`d` for `-d`), if there is one.
    package let short: Character?
    /// What the help calls its value (`MS`, `GAIN`); nil for a flag.
    package let valueName: String?
    /// The key in a D-Bus call's `a{sv}` options.
    package let busKey: String
    /// The key in the config file (`DuckPromptConfig`).
    package let configKey: String
    /// Its values, and their range.
    package let kind: Kind
    /// Its value when no front gives one, as the help writes it ("" when there is none: the
    /// router, the saved volume, no deadline).
    package let defaultValue: String
    /// Its one-line help: how the command's help (and the man page) starts its entry.
    package let help: String

    /// The D-Bus type signature of its `a{sv}` value.
    package var busType: String {
        switch kind {
        case .milliseconds, .wordsPerMinute: "u"
        case .gain: "d"
        case .choice, .text: "s"
        case .texts: "as"
        case .properties: "a{ss}"
        case .flag: "b"
        }
    }

    /// `--name`, as the command's help writes it.
    package var description: String { "--\(name)" }

    /// Every option a prompt takes, in the order the help lists them.
    package static let all: [PromptOption] = [
        device, duck, duckMode, noPause, rewindMs, duckExemptRole, attackMs, releaseMs, volume, latencyMsec,
        preRollMs, priority, expireMs, onBusy, duringCall, callDuck, property, voice, rate,
    ]

    /// The row with this long option name.
    package static func named(_ name: String) -> PromptOption? { all.first { $0.name == name } }
    /// The row with this D-Bus key.
    package static func busKey(_ key: String) -> PromptOption? { all.first { $0.busKey == key } }

    package static let device = PromptOption(
        name: "device", short: "d", valueName: "SINK", busKey: "device", configKey: "device", kind: .text,
        defaultValue: "", help: "Play on SINK: a sink name, #INDEX or @DEFAULT_SINK@")
    package static let duck = PromptOption(
        name: "duck", valueName: "GAIN", busKey: "duck", configKey: "duck_db", kind: .gain(PlayOptions.duckRange),
        defaultValue: "-20dB", help: "Lower other streams by GAIN while the prompt plays")
    package static let duckMode = PromptOption(
        name: "duck-mode", valueName: "MODE", busKey: "duck-mode", configKey: "duck_mode",
        kind: .choice(DuckMode.allCases.map(\.rawValue)), defaultValue: DuckMode.duck.rawValue,
        help: "How other streams are treated")
    package static let noPause = PromptOption(
        name: "no-pause", valueName: nil, busKey: "no-pause", configKey: "no_pause", kind: .flag,
        defaultValue: "false", help: "Duck spoken word too")
    package static let rewindMs = PromptOption(
        name: "rewind-ms", valueName: "MS", busKey: "rewind-ms", configKey: "rewind_ms",
        kind: .milliseconds(PlayOptions.rewindRangeMs), defaultValue: "2000",
        help: "How far back a paused player resumes")
    package static let duckExemptRole = PromptOption(
        name: "duck-exempt-role", valueName: "ROLE", busKey: "duck-exempt-role", configKey: "duck_exempt_role",
        kind: .texts, defaultValue: "phone", help: "Never duck streams with this media.role")
    package static let attackMs = PromptOption(
        name: "attack-ms", valueName: "MS", busKey: "attack-ms", configKey: "attack_ms",
        kind: .milliseconds(PlayOptions.rampRangeMs), defaultValue: "200",
        help: "Ramp down over MS before the first prompt sample")
    package static let releaseMs = PromptOption(
        name: "release-ms", valueName: "MS", busKey: "release-ms", configKey: "release_ms",
        kind: .milliseconds(PlayOptions.rampRangeMs), defaultValue: "500",
        help: "Ramp back over MS after the last sample was heard")
    package static let volume = PromptOption(
        name: "volume", valueName: "GAIN", busKey: "volume", configKey: "volume_db", kind: .gain(PlayOptions.volumeRange),
        defaultValue: "", help: "The prompt's level relative to the volume the server saved for prompts")
    package static let latencyMsec = PromptOption(
        name: "latency-msec", valueName: "MS", busKey: "latency-msec", configKey: "latency_msec",
        kind: .milliseconds(PlayOptions.latencyRangeMs), defaultValue: "", help: "Prompt stream buffer (tlength) in ms")
    package static let preRollMs = PromptOption(
        name: "pre-roll-ms", valueName: "MS", busKey: "pre-roll-ms", configKey: "pre_roll_ms",
        kind: .milliseconds(PlayOptions.preRollRangeMs), defaultValue: "",
        help: "Silence before the prompt when the sink is asleep")
    package static let priority = PromptOption(
        name: "priority", valueName: "PRIORITY", busKey: "priority", configKey: "priority",
        kind: .choice(PromptPriority.allCases.map(\.rawValue)), defaultValue: PromptPriority.message.rawValue,
        help: "Place in the queue of prompts of every process, as in speech-dispatcher (SSIP)")
    package static let expireMs = PromptOption(
        name: "expire-ms", valueName: "MS", busKey: "expire-ms", configKey: "expire_ms",
        kind: .milliseconds(PlayOptions.expireRangeMs), defaultValue: "",
        help: "Drop the prompt (exit 75) if it has not started within MS")
    package static let onBusy = PromptOption(
        name: "on-busy", valueName: "POLICY", busKey: "on-busy", configKey: "on_busy",
        kind: .choice(BusyPolicy.allCases.map(\.rawValue)), defaultValue: BusyPolicy.wait.rawValue,
        help: "When another prompt plays or waits")
    package static let duringCall = PromptOption(
        name: "during-call", valueName: "POLICY", busKey: "during-call", configKey: "during_call",
        kind: .choice(DuringCallPolicy.allCases.map(\.rawValue)), defaultValue: DuringCallPolicy.mix.rawValue,
        help: "While a call rings or is on")
    package static let callDuck = PromptOption(
        name: "call-duck", valueName: "GAIN", busKey: "call-duck", configKey: "call_duck_db",
        kind: .gain(PlayOptions.duckRange), defaultValue: "-10dB",
        help: "Under --during-call mix, play the prompt GAIN below its own level")
    package static let property = PromptOption(
        name: "property", valueName: "KEY=VALUE", busKey: "properties", configKey: "properties", kind: .properties,
        defaultValue: "", help: "Set a stream property")
    package static let voice = PromptOption(
        name: "voice", valueName: "VOICE", busKey: "voice", configKey: "voice", kind: .text, defaultValue: "en",
        help: "An espeak-ng voice")
    package static let rate = PromptOption(
        name: "rate", valueName: "WPM", busKey: "rate", configKey: "rate",
        kind: .wordsPerMinute(PlayOptions.wordsPerMinuteRange), defaultValue: "175",
        help: "Words per minute")

    init(name: String, short: Character? = nil, valueName: String?, busKey: String, configKey: String, kind: Kind,
         defaultValue: String, help: String) {
        self.name = name
        self.short = short
        self.valueName = valueName
        self.busKey = busKey
        self.configKey = configKey
        self.kind = kind
        self.defaultValue = defaultValue
        self.help = help
    }

    // MARK: Setting and checking

    /// Sets this option's field of `options`: the one place each option is mapped to
    /// `PlayOptions`, whichever front it came from. Ranges are left to `PlayOptions.validate()`.
    /// - Parameter value: of this option's `kind` (the fronts make it so; another is a bug).
    /// - Throws: `DuckPromptError(.usage)`: a word not among the choices ("NAME 'WORD' is not
    ///   one of: …"), an empty device, role, property name or voice.
    package func apply(_ value: PromptOptionValue, to options: inout PlayOptions) throws {
        switch (name, value) {
        case ("device", .word(let sink)):
            guard !sink.trimmingSpaces().isEmpty else { throw failure("needs a sink name, #INDEX or @DEFAULT_SINK@") }
            options.device = DeviceRequest(parsing: sink)
        case ("duck", .gain(let gain)): options.duck = gain
        case ("duck-mode", .word(let word)): options.duckMode = try choice(word)
        case ("no-pause", .flag(let on)): options.pausePlayers = !on
        case ("rewind-ms", .whole(let ms)): options.rewindMs = ms
        case ("duck-exempt-role", .words(let roles)):
            guard !roles.isEmpty, !roles.contains(where: { $0.trimmingSpaces().isEmpty }) else {
                throw failure("needs a media.role, e.g. phone")
            }
            options.exemptRoles = Set(roles)
        case ("attack-ms", .whole(let ms)): options.attackMs = ms
        case ("release-ms", .whole(let ms)): options.releaseMs = ms
        case ("volume", .gain(let gain)): options.volume = gain
        case ("latency-msec", .whole(let ms)): options.latencyMs = ms
        case ("pre-roll-ms", .whole(let ms)): options.preRollMs = ms
        case ("priority", .word(let word)): options.priority = try choice(word)
        case ("expire-ms", .whole(let ms)): options.expireMs = ms
        case ("on-busy", .word(let word)): options.onBusy = try choice(word)
        case ("during-call", .word(let word)): options.duringCall = try choice(word)
        case ("call-duck", .gain(let gain)): options.callDuck = gain
        case ("property", .properties(let properties)):
            guard !properties.keys.contains(where: \.isEmpty) else { throw failure("needs a name: KEY=VALUE") }
            options.properties.merge(properties) { _, given in given }
        case ("voice", .word(let voice)):
            guard !voice.trimmingSpaces().isEmpty else { throw failure("needs an espeak-ng voice, e.g. en") }
            options.voice = voice
        case ("rate", .whole(let wordsPerMinute)): options.wordsPerMinute = wordsPerMinute
        default:
            preconditionFailure("\(name) takes no \(value)")
        }
    }

    /// Checks this option's field of `options` against its range (the properties against
    /// `PromptLimits`): `PlayOptions.validate()` is this for every option, and the config file
    /// checks each option it sets with it. Words and flags were checked when applied.
    /// - Throws: `DuckPromptError(.usage)`: "NAME VALUE is out of range (LOW to HIGH)";
    ///   `limit: .properties` for too many or too long properties.
    package func check(in options: PlayOptions) throws {
        switch name {
        case "duck": try check(options.duck)
        case "call-duck": try check(options.callDuck)
        case "volume": try check(options.volume)
        case "rewind-ms": try check(options.rewindMs)
        case "attack-ms": try check(options.attackMs)
        case "release-ms": try check(options.releaseMs)
        case "latency-msec": try check(options.latencyMs)
        case "pre-roll-ms": try check(options.preRollMs)
        case "expire-ms": try check(options.expireMs)
        case "rate": try check(options.wordsPerMinute)
        case "property": try PromptLimits.checkProperties(options.properties)
        default: return
        }
    }

    /// Checks a number against this option's range (also `SpeechSource`'s rate, for an app that
    /// makes a source itself).
    package func check(_ value: Int?) throws {
        guard let value else { return }
        switch kind {
        case .milliseconds(let range) where !range.contains(value):
            throw failure("\(value) ms is out of range (\(range.lowerBound) to \(range.upperBound) ms)")
        case .wordsPerMinute(let range) where !range.contains(value):
            throw failure("\(value) is out of range (\(range.lowerBound) to \(range.upperBound) words per minute)")
        default: return
        }
    }

    /// Checks a gain against this option's range (NaN is in none).
    private func check(_ gain: Decibels?) throws {
        guard let gain, case .gain(let range) = kind, !range.contains(gain.value) else { return }
        // To 0.1 dB (a percentage on the command line, 300%, is +28.6dB), unless that would
        // round it into the range (+20.04dB).
        let dB = { (v: Double) in v > 0 ? "+\(Decibels(v))" : "\(Decibels(v))" }
        let rounded = (gain.value * 10).rounded() / 10
        let shown = rounded.isFinite && !range.contains(rounded) ? rounded : gain.value
        throw failure("\(dB(shown)) is out of range (\(dB(range.lowerBound)) to \(dB(range.upperBound)))")
    }

    /// One of a `choice` option's words as its enum.
    private func choice<T: RawRepresentable & CaseIterable>(_ word: String) throws -> T where T.RawValue == String {
        guard let parsed = T(rawValue: word) else {
            throw failure("'\(word)' is not one of: \(T.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return parsed
    }

    /// A usage error about this option: "NAME WHAT".
    func failure(_ what: String) -> DuckPromptError {
        DuckPromptError(.usage, "\(name) \(what)")
    }
}

/// An option's value as a front read it (a word parsed, a JSON value, a D-Bus variant), before
/// `PromptOption.apply(_:to:)` sets it. Which case each `PromptOption.Kind` takes: `whole`
/// for milliseconds and words per minute, `gain`, `word` for a choice or a text, `words`,
/// `properties`, `flag`.
package enum PromptOptionValue: Sendable, Equatable {
    case whole(Int)
    case gain(Decibels)
    case word(String)
    case words([String])
    case properties([String: String])
    case flag(Bool)
}
