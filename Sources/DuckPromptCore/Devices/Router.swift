/// Which sink a user asked for, in the grammar pactl and pacat accept for `-d/--device`.
public enum DeviceRequest: Sendable, Equatable {
    /// A sink name, e.g. `alsa_output.pci-0000_00_1f.3.analog-stereo`.
    case name(String)
    /// A sink index (`pa_sink_info.index`), written `#3`.
    case index(UInt32)
    /// The server's default sink, written `@DEFAULT_SINK@`.
    case defaultSink

    /// Parses `#3` (index), `@DEFAULT_SINK@` (the default sink) or anything else (a name).
    /// A bare number stays a name; `Router` then looks it up as libpulse's name registry does
    /// (`pa_namereg_get`): a sink of that name first, else the sink of that index.
    /// - Parameter text: the request as typed; surrounding blanks are ignored.
    public init(parsing text: String) {
        let trimmed = text.trimmingSpaces()
        if trimmed == "@DEFAULT_SINK@" {
            self = .defaultSink
        } else if trimmed.hasPrefix("#"), let index = UInt32(trimmed.dropFirst()) {
            self = .index(index)
        } else {
            self = .name(trimmed)
        }
    }
}

/// Where a prompt goes, and why.
public struct RouteDecision: Sendable, Equatable {
    /// The chosen sink.
    package var sink: Sink
    /// Its classification (`Classifier.classify(_ snapshot:ranking:)`, so a virtual sink says
    /// where it forwards).
    package var classification: Classification
    /// One sentence naming the sink, its kind and why it was chosen, e.g.
    /// `Bluetooth A2DP headset 'WH-1000XM5' is the external output in use (default sink).`
    public var reason: String
    /// A short, stable identifier of the rule or setting that decided (see `Router`), e.g.
    /// `default-external`, `config-prefer`; for scripts and for `duckprompt route --json`.
    public var rule: String

    /// The chosen sink's name (`pa_sink_info.name`), as `PULSE_SINK` and `paplay -d` take it.
    public var sinkName: String { sink.name }
    /// The chosen sink's description (`pa_sink_info.description`), as pavucontrol shows it.
    public var sinkDescription: String { sink.description }
    /// The kind of device it plays on: a virtual sink's is where it forwards, when known.
    public var kind: DeviceKind { classification.forwardsTo ?? classification.kind }
    /// Whether it is an external output (`Classification.external`).
    public var external: Bool { classification.external }
    /// The property, driver or port that decided the kind, e.g. `bluetooth.protocol=a2dp_sink`.
    public var evidence: String { classification.evidence }

    package init(sink: Sink, classification: Classification, reason: String, rule: String = "") {
        self.sink = sink
        self.classification = classification
        self.reason = reason
        self.rule = rule
    }
}

/// Chooses the sink a navigation prompt plays on, as a phone routes it: to the external output
/// the user is listening on, else to the built-in speaker.
///
/// Policy, first match wins; `RouteDecision.rule` names the step:
/// 1. `device-option`: an explicit request (`-d/--device`, or `PULSE_SINK`: a name, `#index`,
///    `@DEFAULT_SINK@`) is obeyed, whatever its kind and whatever the config says.
/// 2. `config-prefer` / `env-DUCKPROMPT_DEVICE`: the config's `prefer` patterns (or the
///    `DUCKPROMPT_DEVICE` pattern that replaces them), tried in order against each sink's name
///    and description; the first pattern that matches a usable sink (active port not unplugged,
///    not excluded by `never`) decides.
/// 3. From here on, sinks the config's `never` excludes (by kind or name pattern, or a virtual
///    sink that forwards to such a device) are left out, and the external rank is the config's
///    `ranking` (default car > Bluetooth A2DP > headphones > USB > line-out > Bluetooth HFP >
///    HDMI).
/// 4. External candidates are the sinks classified external (car, Bluetooth A2DP or HFP, USB,
///    line-out, headphones, with their active port not unplugged), and HDMI only when it is the
///    default sink (or the default forwards to it) or plays a stream (a sink-input on it that
///    is not corked): an idle monitor's speakers are not where a user listens. Then:
///    - `default-external`: the default sink is one;
///    - `default-forwarding`: the default sink is a virtual sink that forwards to one (a filter
///      such as EasyEffects in front of Bluetooth headphones): the prompt goes *through* the
///      virtual sink, keeping the user's effects;
///    - `playing-external`: one plays a stream now (best rank among those);
///    - `external-rank`: the best by rank.
/// 5. No external candidate:
///    - `default-device`: the default sink if it is a real device (not virtual, not network);
///    - `default-forwarding`: the default sink if it is a virtual sink forwarding to a real
///      device (through it, as above);
///    - `speaker`: a built-in speaker (one whose port is not unplugged first);
///    - `unknown-device`: an `unknown` device;
///    - `other-device`: any other real device (an idle HDMI output, an unplugged port).
/// 6. Only virtual and network sinks left:
///    - `default-virtual`: the default sink;
///    - `network`: a network sink (its audio is heard on another machine);
///    - `only-sink`: the virtual sink when it is the only sink left.
///
/// A virtual sink that forwards to a device but is not the default is never chosen over that
/// device: only the default sink is taken as the user's choice of filter. Ties go to the lowest
/// index, then the name. `reason` is one sentence.
package enum Router {
    /// Routes a prompt.
    /// - Parameters:
    ///   - snapshot: the server's sinks, sink-inputs and default sink.
    ///   - request: what the user asked for (`-d/--device`, `PULSE_SINK`); nil to decide.
    ///   - config: the user's `prefer`, `ranking` and `never` settings; default: none.
    /// - Returns: the sink, its classification, the reason and the rule.
    /// - Throws: `DuckPromptError` `.unavailable` when the server has no sinks, when no sink
    ///   matches the request (`no sink named 'x'`, `no sink with index #3`, no default sink),
    ///   when `never` excludes every sink, or when only several virtual sinks exist and none is
    ///   the default.
    ///
    /// Pure; safe from any thread. Uses `pa_server_info.default_sink_name`, and
    /// `pa_sink_input_info.sink` and `corked` to tell which sinks play.
    package static func route(_ snapshot: Snapshot, request: DeviceRequest?,
                             config: DuckPromptConfig = DuckPromptConfig()) throws -> RouteDecision {
        try route(snapshot, classifications: Classifier.classify(snapshot, ranking: config.ranking),
                  request: request, config: config)
    }

    /// Routes a prompt with the snapshot already classified, as `DeviceListing` has it.
    /// - Parameter classifications: `Classifier.classify(snapshot, ranking: config.ranking)`.
    static func route(_ snapshot: Snapshot, classifications: [Classification], request: DeviceRequest?,
                      config: DuckPromptConfig) throws -> RouteDecision {
        guard !snapshot.sinks.isEmpty else {
            throw DuckPromptError(.unavailable, "the server has no sinks")
        }
        let defaultName = defaultSinkName(snapshot)
        let sinks = snapshot.sinks
        // Made on the first forwarding sink's need: hashing 10 000 names is a tenth of routing.
        var positionByName: [String: Int]?
        func position(of name: String) -> Int? {
            if positionByName == nil {
                positionByName = Dictionary(zip(sinks.map(\.name), sinks.indices), uniquingKeysWith: { first, _ in first })
            }
            return positionByName?[name]
        }
        let playing = playingSinkIndices(snapshot)
        let candidates = zip(sinks, classifications).map { sink, classification in
            var exclusion = config.exclusion(for: sink, kind: classification.kind)
            if exclusion == nil, let target = classification.forwardsToSink, let forwardKind = classification.forwardsTo,
               let position = position(of: target) {
                exclusion = config.exclusion(for: sinks[position], kind: forwardKind)
            }
            return Candidate(sink: sink, classification: classification,
                             isDefault: defaultName == sink.name,
                             isPlaying: sink.index.map(playing.contains) ?? false,
                             exclusion: exclusion,
                             ranking: config.ranking)
        }.sorted(by: Candidate.order)

        // 1. An explicit request.
        if let request {
            return try explicit(request, candidates: candidates, defaultName: defaultName)
        }

        // 2. The user's preferred devices.
        for pattern in config.prefer {
            let match = candidates.first { candidate in
                candidate.exclusion == nil && !candidate.isUnplugged
                    && (Glob.matches(pattern, candidate.sink.name) || Glob.matches(pattern, candidate.sink.description))
            }
            guard let chosen = match else { continue }
            switch config.preferSource {
            case .environment:
                return chosen.decision("matches DUCKPROMPT_DEVICE \"\(pattern)\".", rule: "env-DUCKPROMPT_DEVICE")
            case .config:
                let file = config.path.map { " (\($0))" } ?? ""
                return chosen.decision("matches config prefer \"\(pattern)\"\(file).", rule: "config-prefer")
            }
        }

        // 3. Leave out what the config forbids.
        let pool = candidates.filter { $0.exclusion == nil }
        if pool.isEmpty {
            let entries = config.never.map { "\"\($0)\"" }.joined(separator: ", ")
            throw DuckPromptError(.unavailable,
                                  "every sink is excluded by config never (\(entries)); name one with -d/--device")
        }
        let defaultCandidate = pool.first(where: \.isDefault)
        /// The device the default sink forwards to, when the default is a virtual sink.
        let forwardedFromDefault: Candidate? = defaultCandidate.flatMap { chosen in
            guard chosen.kind == .virtual, let target = chosen.classification.forwardsToSink else { return nil }
            return pool.first { $0.sink.name == target }
        }
        let rankNote = config.hasCustomRanking ? " by the config ranking" : ""

        // 4. External outputs.
        let external = pool.filter { candidate in
            guard candidate.classification.external else { return false }
            return candidate.kind != .hdmi || candidate.isDefault || candidate.isPlaying
                || candidate.sink.name == forwardedFromDefault?.sink.name
        }
        if let chosen = external.first(where: \.isDefault) {
            return chosen.decision("is the external output in use (default sink).", rule: "default-external")
        }
        if let chosen = defaultCandidate, let device = forwardedFromDefault,
           external.contains(where: { $0.sink.name == device.sink.name }) {
            return chosen.decision(throughDefault(to: device), rule: "default-forwarding")
        }
        if let chosen = external.filter(\.isPlaying).min(by: Candidate.byRank) {
            return chosen.decision("is the external output in use (it is playing a stream).", rule: "playing-external")
        }
        if let chosen = external.min(by: Candidate.byRank) {
            // Why the default did not decide: it is no external output, or none is known, or
            // the one named is not among the sinks (a dump cut before that sink's name).
            let defaultNote = if let defaultName, !candidates.contains(where: \.isDefault) {
                "the default sink '\(defaultName)' is not among the sinks read"
            } else if defaultName == nil {
                "no default sink is known"
            } else {
                "the default sink is not one"
            }
            return chosen.decision("is the preferred connected external output\(rankNote); \(defaultNote).",
                                   rule: "external-rank")
        }

        // 5. Built-in and other real devices.
        let real = pool.filter { $0.kind != .virtual && $0.kind != .network }
        // Say so when the config is why no external output was chosen.
        let noExternal: String
        if let left = candidates.first(where: { $0.exclusion != nil && $0.classification.external }),
           let entry = left.exclusion {
            noExternal = "config never \"\(entry)\" leaves out the external output '\(left.sink.name)'"
        } else {
            noExternal = "no external output is in use"
        }
        if let chosen = real.first(where: \.isDefault) {
            return chosen.decision("is the default sink and \(noExternal).", rule: "default-device")
        }
        if let chosen = defaultCandidate, let device = forwardedFromDefault,
           real.contains(where: { $0.sink.name == device.sink.name }) {
            return chosen.decision(throughDefault(to: device), rule: "default-forwarding")
        }
        let whyNotDefault: String
        if defaultName == nil {
            whyNotDefault = "no default sink is known (the server names none, or the dump does not say)"
        } else if let excluded = candidates.first(where: { $0.isDefault && $0.exclusion != nil }),
                  let entry = excluded.exclusion {
            whyNotDefault = "the default sink is excluded by config never \"\(entry)\""
        } else {
            whyNotDefault = "the default sink is not a device"
        }
        let speakers = real.filter { $0.kind == .speaker }
        if let chosen = speakers.first(where: { !$0.isUnplugged }) ?? speakers.first {
            return chosen.decision("is used because \(noExternal) and \(whyNotDefault).", rule: "speaker")
        }
        if let chosen = real.first(where: { $0.kind == .unknown }) {
            return chosen.decision("is used because no external output or built-in speaker was found.",
                                   rule: "unknown-device")
        }
        if let chosen = real.first {
            return chosen.decision("is the only device left (not in use, or its port is unplugged).", rule: "other-device")
        }

        // 6. Virtual and network sinks only.
        if let chosen = defaultCandidate {
            return chosen.decision("is the default sink and the server has no output device.", rule: "default-virtual")
        }
        if let chosen = pool.first(where: { $0.kind == .network }) {
            return chosen.decision("is used because the server has no local output device.", rule: "network")
        }
        if pool.count == 1 {
            return pool[0].decision(candidates.count == 1 ? "is the only sink." : "is the only sink config never leaves.",
                                    rule: "only-sink")
        }
        let names = pool.map { "'\($0.sink.name)'" }.joined(separator: ", ")
        throw DuckPromptError(.unavailable,
                              "no output device: only virtual sinks (\(names)) and none is the default; name one")
    }

    /// `is the default sink and forwards to Bluetooth A2DP headset 'X': the prompt goes through
    /// it, keeping the user's effects.`
    private static func throughDefault(to device: Candidate) -> String {
        "is the default sink and forwards to \(label(device.sink, kind: device.kind)): "
            + "the prompt goes through it, keeping the user's effects."
    }

    private static func explicit(_ request: DeviceRequest, candidates: [Candidate],
                                 defaultName: String?) throws -> RouteDecision {
        let rule = "device-option"
        switch request {
        case .name(let name):
            if let chosen = candidates.first(where: { $0.sink.name == name }) {
                return chosen.decision("was requested by name.", rule: rule)
            }
            if let index = UInt32(name), let chosen = candidates.first(where: { $0.sink.index == index }) {
                return chosen.decision("was requested by index #\(index).", rule: rule)
            }
            throw DuckPromptError(.unavailable, "no sink named '\(name)'")
        case .index(let index):
            if let chosen = candidates.first(where: { $0.sink.index == index }) {
                return chosen.decision("was requested by index #\(index).", rule: rule)
            }
            throw DuckPromptError(.unavailable, "no sink with index #\(index)")
        case .defaultSink:
            guard let name = defaultName else {
                throw DuckPromptError(.unavailable, "@DEFAULT_SINK@ was requested but the server names no default sink")
            }
            if let chosen = candidates.first(where: { $0.sink.name == name }) {
                return chosen.decision("was requested as @DEFAULT_SINK@.", rule: rule)
            }
            throw DuckPromptError(.unavailable, "no sink named '\(name)' (the default sink)")
        }
    }

    /// The default sink's name; nil when the server names none (pipewire-pulse reports the
    /// literal `@DEFAULT_SINK@` before a session manager has chosen one).
    private static func defaultSinkName(_ snapshot: Snapshot) -> String? {
        guard let name = snapshot.defaultSinkName, !name.isEmpty, name != "@DEFAULT_SINK@" else { return nil }
        return name
    }

    /// The indices of the sinks a sink-input that is not corked plays on. Sinks without an
    /// index (from a dump) never play.
    private static func playingSinkIndices(_ snapshot: Snapshot) -> Set<UInt32> {
        // duckprompt's keep-awake silence (`SinkKeeper`) is not a stream that plays.
        Set(snapshot.sinkInputs.lazy.filter { !$0.corked && $0.properties["duckprompt.keep-awake"] == nil }.map(\.sinkIndex))
    }

    /// Rank among external outputs in the default ranking, lower first.
    static func rank(_ kind: DeviceKind) -> Int {
        rank(kind, ranking: DuckPromptConfig.defaultRanking)
    }

    /// Rank among external outputs in `ranking`, lower first; kinds that are not external
    /// come last.
    static func rank(_ kind: DeviceKind, ranking: [DeviceKind]) -> Int {
        ranking.firstIndex(of: kind) ?? ranking.count
    }

    /// A sink with what the policy asks of it. A class: the policy filters and sorts thousands
    /// of them, and copying a reference is cheaper than copying a sink.
    private final class Candidate {
        let sink: Sink
        let classification: Classification
        let isDefault: Bool
        let isPlaying: Bool
        /// The `never` entry that leaves this sink out, if any.
        let exclusion: DuckPromptConfig.Exclusion?
        let ranking: [DeviceKind]

        init(sink: Sink, classification: Classification, isDefault: Bool, isPlaying: Bool,
             exclusion: DuckPromptConfig.Exclusion?, ranking: [DeviceKind]) {
            self.sink = sink
            self.classification = classification
            self.isDefault = isDefault
            self.isPlaying = isPlaying
            self.exclusion = exclusion
            self.ranking = ranking
        }

        var kind: DeviceKind { classification.kind }
        var isUnplugged: Bool { Classifier.effectiveActivePort(sink)?.availability == .no }

        /// Lowest index first (sinks without one last), then name.
        static func order(_ lhs: Candidate, _ rhs: Candidate) -> Bool {
            Classifier.sinkOrder(lhs.sink, rhs.sink)
        }

        static func byRank(_ lhs: Candidate, _ rhs: Candidate) -> Bool {
            let (l, r) = (Router.rank(lhs.kind, ranking: lhs.ranking), Router.rank(rhs.kind, ranking: rhs.ranking))
            return l != r ? l < r : order(lhs, rhs)
        }

        func decision(_ why: String, rule: String) -> RouteDecision {
            RouteDecision(sink: sink, classification: classification,
                          reason: "\(Router.label(sink, kind: kind)) \(why)", rule: rule)
        }
    }

    /// `Bluetooth A2DP headset 'WH-1000XM5'`: the kind in words, then the description (or the
    /// name when there is none).
    static func label(_ sink: Sink, kind: DeviceKind) -> String {
        let title = sink.description.isEmpty ? sink.name : sink.description
        let formFactor = Classifier.lookup(sink.properties, "device.form_factor")?.value
        let noun: String
        switch formFactor {
        case "headset": noun = "headset"
        case "headphone": noun = "headphones"
        case "speaker": noun = "speaker"
        case "car": noun = "car kit"
        case "hands-free": noun = "hands-free kit"
        default: noun = "device"
        }
        let words: String = switch kind {
        case .car: "Car audio"
        case .bluetoothA2DP: "Bluetooth A2DP \(noun)"
        case .bluetoothHFP: "Bluetooth HFP/HSP \(noun)"
        case .usb: "USB audio device"
        case .lineOut: "Line-out"
        case .hdmi: "HDMI/DisplayPort output"
        case .headphones: "Headphones"
        case .speaker: "Built-in speaker"
        case .network: "Network sink"
        case .virtual: "Virtual sink"
        case .unknown: "Output"
        }
        return "\(words) '\(title)'"
    }
}
