import FoundationEssentials

/// The user's preferences for the cases the routing rules cannot know, read from
/// `$XDG_CONFIG_HOME/duckprompt/config.json` (else `$HOME/.config/duckprompt/config.json`).
///
/// The file is one JSON object; every key is optional, and a missing file means the defaults:
///
/// ```json
/// {
///   "prefer": ["WH-1000XM*", "alsa_output.usb-*"],
///   "ranking": ["car", "headphones", "bluetooth-a2dp", "usb", "line-out", "bluetooth-hfp", "hdmi"],
///   "never": ["hdmi", "alsa_output.*HDMI*"],
///   "pre_roll_ms": {"bluetooth-a2dp": 300, "hdmi": 500},
///   "duck_db": -20,
///   "attack_ms": 200,
///   "release_ms": 500
/// }
/// ```
///
/// - `prefer`: sink patterns tried in order before the rules; the first that matches a sink's
///   name or description (a usable sink: its active port is not unplugged, and `never` does not
///   exclude it) is chosen. Patterns are fnmatch-style and case-sensitive: `*` any run of
///   characters, `?` one character, `\` makes the next character literal. The
///   `DUCKPROMPT_DEVICE` environment variable, when set and not empty, replaces the whole list
///   with its single pattern.
/// - `ranking`: the order of external kinds when neither the default sink nor a playing sink
///   decides; it replaces `car > bluetooth-a2dp > headphones > usb > line-out > bluetooth-hfp >
///   hdmi`. Only external kinds, each at most once; kinds left out follow in that default order.
/// - `never`: device kinds (`hdmi`) or sink patterns (as `prefer`, matched against name and
///   description) that are never used unless named with `-d/--device`. An entry that is a kind
///   name is a kind; anything else is a pattern, except a bare word that is a near miss of a
///   kind name (`hdmii`), which is rejected as a likely typo.
/// - `pre_roll_ms`: per kind, silence in ms played before the prompt so that a sleeping device
///   (Bluetooth, HDMI) wakes up first; 0…5000.
/// - `duck_db`: how far other streams are lowered, in dB, -200…0 (`--duck` overrides).
/// - `attack_ms`, `release_ms`: duck ramp durations in ms, 0…60000 (`--attack-ms`,
///   `--release-ms` override).
/// - every other option a prompt takes (`PromptOption.configKey`: `duck_mode`, `volume_db`,
///   `priority`, …; `pre_roll_ms` also as one number for every kind), with the range and the
///   message of the command's and the D-Bus service's (`PlayOptions.validate()`).
///
/// Validation is strict: an unknown key, a value of the wrong type or out of range, or a name
/// that is not a device kind is a `DuckPromptError(.config)` (exit 78) naming the file and the
/// key.
public struct DuckPromptConfig: Sendable, Equatable {
    /// Where a `prefer` list came from: it decides the rule named in a route decision.
    package enum PreferSource: String, Sendable, Equatable {
        /// The config file's `prefer` key (rule `config-prefer`).
        case config
        /// The `DUCKPROMPT_DEVICE` environment variable (rule `env-DUCKPROMPT_DEVICE`).
        case environment
    }

    /// One `never` entry: a device kind, or a sink name/description pattern.
    package enum Exclusion: Sendable, Equatable, CustomStringConvertible {
        case kind(DeviceKind)
        case pattern(String)

        /// The entry as written in the file.
        package var description: String {
            switch self {
            case .kind(let kind): kind.rawValue
            case .pattern(let pattern): pattern
            }
        }
    }

    /// The external rank order the rules use when nothing else decides.
    public static let defaultRanking: [DeviceKind] = [
        .car, .bluetoothA2DP, .headphones, .usb, .lineOut, .bluetoothHFP, .hdmi,
    ]

    /// The keys a config file may hold, in documentation order: the routing settings, then
    /// every prompt option's (`PromptOption.configKey`, `pre_roll_ms` among them), then
    /// `players`.
    public static let validKeys = ["prefer", "ranking", "never"] + PromptOption.all.map(\.configKey) + ["players"]

    /// Sink patterns tried in order (`prefer`, or `DUCKPROMPT_DEVICE`).
    public var prefer: [String]
    /// Where `prefer` came from.
    package var preferSource: PreferSource
    /// The external kinds, best first: always every external kind exactly once.
    public var ranking: [DeviceKind]
    /// Kinds and patterns never routed to unless requested by name.
    package var never: [Exclusion]
    /// Pre-roll per kind, in ms (0…5000); kinds not listed have none configured.
    public var preRollMs: [DeviceKind: Int]
    /// What to do with MPRIS players (`players`), first match wins; tried before the default
    /// list of spoken-word players and the genre (`SpokenWordPolicy`).
    package var players: [PlayerRule] = []
    /// The prompt options the file sets, by long option name (`attack-ms`), each of its
    /// `PromptOption.kind` and within its range: `PlayOptions(config:)` applies them.
    package internal(set) var options: [String: PromptOptionValue] = [:]
    /// Duck depth in dB (`duck_db`, -200…0); nil when the file does not set it.
    public var duck: Decibels? {
        get { if case .gain(let gain) = options[PromptOption.duck.name] { gain } else { nil } }
        set { options[PromptOption.duck.name] = newValue.map(PromptOptionValue.gain) }
    }
    /// Attack ramp in ms (`attack_ms`, 0…60000); nil when not set.
    public var attackMs: Int? {
        get { whole(PromptOption.attackMs) }
        set { options[PromptOption.attackMs.name] = newValue.map(PromptOptionValue.whole) }
    }
    /// Release ramp in ms (`release_ms`, 0…60000); nil when not set.
    public var releaseMs: Int? {
        get { whole(PromptOption.releaseMs) }
        set { options[PromptOption.releaseMs.name] = newValue.map(PromptOptionValue.whole) }
    }
    /// How far back a paused player resumes, ms (`rewind_ms`, 0…60000); nil when not set.
    public var rewindMs: Int? {
        get { whole(PromptOption.rewindMs) }
        set { options[PromptOption.rewindMs.name] = newValue.map(PromptOptionValue.whole) }
    }
    /// The file the settings were read from; nil for the defaults (no file).
    public var path: String?

    /// The defaults, or the given settings. `ranking` is completed with the external kinds it
    /// leaves out, in their default order.
    public init(prefer: [String] = [], ranking: [DeviceKind] = DuckPromptConfig.defaultRanking,
                preRollMs: [DeviceKind: Int] = [:], duck: Decibels? = nil, attackMs: Int? = nil,
                releaseMs: Int? = nil, path: String? = nil) {
        self.prefer = prefer
        self.preferSource = .config
        self.ranking = Self.completed(ranking)
        self.never = []
        self.preRollMs = preRollMs
        self.duck = duck
        self.attackMs = attackMs
        self.releaseMs = releaseMs
        self.path = path
    }

    /// As `init(prefer:ranking:preRollMs:duck:attackMs:releaseMs:path:)`, with exclusions.
    package init(prefer: [String] = [], ranking: [DeviceKind] = DuckPromptConfig.defaultRanking,
                 never: [Exclusion], preRollMs: [DeviceKind: Int] = [:], duck: Decibels? = nil,
                 attackMs: Int? = nil, releaseMs: Int? = nil, path: String? = nil) {
        self.init(prefer: prefer, ranking: ranking, preRollMs: preRollMs, duck: duck, attackMs: attackMs,
                  releaseMs: releaseMs, path: path)
        self.never = never
    }

    /// The sink the file names (`device`), which a listing routes to as `duckprompt route
    /// -d` would; nil when not set.
    public var device: DeviceRequest? {
        if case .word(let sink) = options[PromptOption.device.name] { DeviceRequest(parsing: sink) } else { nil }
    }

    private func whole(_ option: PromptOption) -> Int? {
        if case .whole(let value) = options[option.name] { value } else { nil }
    }

    /// Whether `ranking` differs from `defaultRanking`.
    public var hasCustomRanking: Bool { ranking != Self.defaultRanking }

    /// Pre-roll for a kind, in ms; nil when the config sets none for it.
    public func preRollMs(for kind: DeviceKind) -> Int? { preRollMs[kind] }

    /// The `never` entry that excludes a sink of this kind, name and description; nil when none.
    package func exclusion(for sink: Sink, kind: DeviceKind) -> Exclusion? {
        never.first { entry in
            switch entry {
            case .kind(let excluded): excluded == kind
            case .pattern(let pattern): Glob.matches(pattern, sink.name) || Glob.matches(pattern, sink.description)
            }
        }
    }


    /// Parses and validates a config file's contents.
    /// - Parameters:
    ///   - data: the file's bytes (UTF-8 JSON: one object).
    ///   - path: the file's path, for messages.
    /// - Returns: the settings, with `path` set.
    /// - Throws: `DuckPromptError(.config)`: not JSON, not an object, an unknown key (the
    ///   message lists the valid keys), a wrong type, a value out of range, or a name that is not
    ///   a device kind (the message lists the kinds).
    public static func parse(_ data: Data, path: String) throws -> DuckPromptConfig {
        func fail(_ message: String) -> DuckPromptError {
            DuckPromptError(.config, "\(path): \(message)")
        }
        let json: JSONValue
        do {
            json = try JSONValue.parse(data)
        } catch {
            throw fail("not valid JSON (\(JSONValue.describe(error)))")
        }
        guard let object = json.object else {
            throw fail("must hold one JSON object ({\"prefer\": [...], ...}), not \(Self.typeName(json))")
        }
        for key in object.keys.sorted() where !validKeys.contains(key) {
            let hint = validKeys.first { Self.editDistance($0, key) <= 2 }.map { " (did you mean '\($0)'?)" } ?? ""
            throw fail("unknown key '\(key)'\(hint); valid keys: \(validKeys.joined(separator: ", "))")
        }

        var config = DuckPromptConfig(path: path)
        if let value = object["prefer"] {
            config.prefer = try strings(value, key: "prefer", what: "sink name patterns", fail: fail)
            if let empty = config.prefer.firstIndex(where: { $0.trimmingSpaces().isEmpty }) {
                throw fail("'prefer' entry \(empty + 1) is empty: give a sink name pattern such as \"WH-*\"")
            }
        }
        if let value = object["ranking"] {
            let names = try strings(value, key: "ranking", what: "device kinds", fail: fail)
            var ranking: [DeviceKind] = []
            for name in names {
                let kind = try Self.kind(name, key: "ranking", fail: fail)
                guard kind.isExternalKind else {
                    throw fail("'ranking': '\(name)' is not an external kind; the ranking orders only \(Self.externalKindList)")
                }
                guard !ranking.contains(kind) else {
                    throw fail("'ranking': '\(name)' is listed twice")
                }
                ranking.append(kind)
            }
            config.ranking = Self.completed(ranking)
        }
        if let value = object["never"] {
            config.never = try strings(value, key: "never", what: "device kinds or sink name patterns", fail: fail)
                .map { entry in
                    let trimmed = entry.trimmingSpaces()
                    if let kind = DeviceKind(rawValue: trimmed) { return .kind(kind) }
                    guard !trimmed.isEmpty else {
                        throw fail("'never' holds an empty entry: give a device kind or a sink name pattern")
                    }
                    let bareWord = trimmed.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" }
                    if bareWord, let near = DeviceKind.allCases.first(where: { Self.editDistance($0.rawValue, trimmed.lowercased()) <= 2 }) {
                        throw fail("'never': '\(entry)' is not a device kind (did you mean '\(near.rawValue)'?); "
                                   + "kinds are \(Self.kindList); for a sink name write a pattern such as \"*\(trimmed)*\"")
                    }
                    return .pattern(trimmed)
                }
        }
        if let value = object["pre_roll_ms"], value.number == nil {
            // Per kind, or one number for every kind (the option `pre-roll-ms`, below).
            guard let table = value.object else {
                throw fail("'pre_roll_ms' must be an object of device kind to milliseconds ({\"bluetooth-a2dp\": 300}) "
                           + "or a whole number of ms, not \(Self.typeName(value))")
            }
            var preRoll: [DeviceKind: Int] = [:]
            for name in table.keys.sorted() {
                let kind = try Self.kind(name, key: "pre_roll_ms", fail: fail)
                let key = "pre_roll_ms.\(name)"
                let ms = try integer(table[name]!, key: key, unit: "ms", range: PlayOptions.preRollRangeMs, fail: fail)
                try checked({ fail("'\(key)': \($0)") }) { try PromptOption.preRollMs.check(ms) }
                preRoll[kind] = ms
            }
            config.preRollMs = preRoll
        }
        config.options = try promptOptions(in: object, fail: fail)
        if let value = object["players"] {
            config.players = try playerRules(value, fail: fail)
        }
        return config
    }

    // MARK: Validation helpers

    /// `players`: `[{"match": "gPodder", "action": "pause"}, …]`.
    private static func playerRules(_ value: JSONValue, fail: (String) -> DuckPromptError) throws -> [PlayerRule] {
        let actions = PlayerAction.allCases.map(\.rawValue).joined(separator: ", ")
        guard let array = value.array else {
            throw fail("'players' must be an array of rules ([{\"match\": \"gPodder\", \"action\": \"pause\"}]), not \(typeName(value))")
        }
        return try array.enumerated().map { offset, element in
            let n = offset + 1
            guard let rule = element.object else {
                throw fail("'players' entry \(n) must be an object {\"match\": …, \"action\": …}, not \(typeName(element))")
            }
            for key in rule.keys.sorted() where key != "match" && key != "action" {
                throw fail("'players' entry \(n): unknown key '\(key)'; a rule holds 'match' and 'action'")
            }
            guard let match = rule["match"]?.string else {
                throw fail("'players' entry \(n) needs 'match': a pattern of a player's MPRIS Identity, DesktopEntry or application.name")
            }
            guard !match.trimmingSpaces().isEmpty else {
                throw fail("'players' entry \(n): 'match' is empty: give a pattern such as \"gPodder\" or \"*podcast*\"")
            }
            guard let word = rule["action"]?.string else {
                throw fail("'players' entry \(n) needs 'action': one of \(actions)")
            }
            guard let action = PlayerAction(rawValue: word) else {
                throw fail("'players' entry \(n): action '\(word)' is not one of \(actions)")
            }
            return PlayerRule(pattern: match.trimmingSpaces(), action: action)
        }
    }

    static func strings(_ value: JSONValue, key: String, what: String,
                                fail: (String) -> DuckPromptError) throws -> [String] {
        if case .string = value {
            throw fail("'\(key)' must be an array of \(what) ([\"…\"]), not a string")
        }
        guard let array = value.array else {
            throw fail("'\(key)' must be an array of \(what), not \(typeName(value))")
        }
        return try array.enumerated().map { offset, element in
            guard let string = element.string else {
                throw fail("'\(key)' entry \(offset + 1) must be a string, not \(typeName(element))")
            }
            return string
        }
    }

    /// A whole number; `range` only says what to give in the message (the range check is
    /// `PlayOptions.validate()`'s).
    static func integer(_ value: JSONValue, key: String, unit: String, range: ClosedRange<Int>,
                                fail: (String) -> DuckPromptError) throws -> Int {
        guard let number = value.number else {
            throw fail("'\(key)' must be a whole number of \(unit) (\(range.lowerBound)…\(range.upperBound)), not \(typeName(value))")
        }
        guard number.isFinite, number == number.rounded(), let whole = Int(exactly: number) else {
            throw fail("'\(key)' must be a whole number of \(unit), not \(format(number))")
        }
        return whole
    }

    private static func kind(_ name: String, key: String, fail: (String) -> DuckPromptError) throws -> DeviceKind {
        if let kind = DeviceKind(rawValue: name) { return kind }
        let near = DeviceKind.allCases.first { editDistance($0.rawValue, name.lowercased()) <= 2 }
        let hint = near.map { " (did you mean '\($0.rawValue)'?)" } ?? ""
        throw fail("'\(key)': '\(name)' is not a device kind\(hint); kinds are \(kindList)")
    }

    static let kindList = DeviceKind.allCases.map(\.rawValue).joined(separator: ", ")
    static let externalKindList = DeviceKind.allCases.filter(\.isExternalKind).map(\.rawValue)
        .joined(separator: ", ")

    /// `ranking` followed by the external kinds it leaves out, in default order.
    private static func completed(_ ranking: [DeviceKind]) -> [DeviceKind] {
        var result: [DeviceKind] = []
        for kind in ranking where kind.isExternalKind && !result.contains(kind) { result.append(kind) }
        for kind in defaultRanking where !result.contains(kind) { result.append(kind) }
        return result
    }

    /// `a string`, `a number`, `true`, `an array`, … for messages.
    static func typeName(_ value: JSONValue) -> String {
        switch value {
        case .string: "a string"
        case .int, .double: "a number"
        case .bool(let flag): flag ? "true" : "false"
        case .array: "an array"
        case .object: "an object"
        case .null: "null"
        }
    }

    static func format(_ number: Double) -> String {
        number.isFinite && number == number.rounded() && abs(number) < 1e15 ? "\(Int(number))" : "\(number)"
    }

    /// Levenshtein distance, for "did you mean" hints.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1,
                                 previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
