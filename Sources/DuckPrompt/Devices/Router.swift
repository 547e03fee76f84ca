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
    public var sink: Sink
    /// Its classification (`Classifier.classify`).
    public var classification: Classification
    /// One sentence naming the sink, its kind and why it was chosen, e.g.
    /// `Bluetooth A2DP headset 'WH-1000XM5' is the external output in use (default sink).`
    public var reason: String

    public init(sink: Sink, classification: Classification, reason: String) {
        self.sink = sink
        self.classification = classification
        self.reason = reason
    }
}

/// Chooses the sink a navigation prompt plays on, as a phone routes it: to the external output
/// the user is listening on, else to the built-in speaker.
///
/// Policy, first match wins:
/// 1. An explicit request (name, `#index`, `@DEFAULT_SINK@`) is obeyed, whatever its kind.
/// 2. External candidates are the sinks classified external (car, Bluetooth A2DP or HFP, USB,
///    line-out, headphones, with their active port not unplugged), and HDMI only when it is the
///    default sink or plays a stream (a sink-input on it that is not corked): an idle monitor's
///    speakers are not where a user listens. Among them: the default sink; else one that plays
///    a stream now; else by rank car > Bluetooth A2DP > headphones > USB > line-out >
///    Bluetooth HFP > HDMI.
/// 3. No external candidate: the default sink if it is a real device (not virtual, not
///    network); else a built-in speaker (one whose port is not unplugged first); else an
///    `unknown` device; else any other real device (an idle HDMI output, an unplugged port).
/// 4. Only virtual and network sinks left: the default sink; else a network sink (its audio is
///    heard on another machine); else the virtual sink when it is the only sink.
///
/// Ties go to the lowest index, then the name. `reason` is one sentence.
public enum Router {
    /// Routes a prompt.
    /// - Parameters:
    ///   - snapshot: the server's sinks, sink-inputs and default sink.
    ///   - request: what the user asked for (`-d/--device`, `PULSE_SINK`); nil to decide.
    /// - Returns: the sink, its classification and the reason.
    /// - Throws: `DuckPromptError` `.unavailable` when the server has no sinks, when no sink
    ///   matches the request (`no sink named 'x'`, `no sink with index #3`, no default sink),
    ///   or when only several virtual sinks exist and none is the default.
    ///
    /// Pure; safe from any thread. Uses `pa_server_info.default_sink_name`, and
    /// `pa_sink_input_info.sink` and `corked` to tell which sinks play.
    public static func route(_ snapshot: Snapshot, request: DeviceRequest?) throws -> RouteDecision {
        guard !snapshot.sinks.isEmpty else {
            throw DuckPromptError(.unavailable, "the server has no sinks")
        }
        let defaultName = defaultSinkName(snapshot)
        let candidates = snapshot.sinks.map { sink in
            Candidate(sink: sink, classification: Classifier.classify(sink),
                      isDefault: defaultName == sink.name,
                      isPlaying: isPlaying(sink, in: snapshot))
        }.sorted(by: Candidate.order)

        if let request {
            return try explicit(request, candidates: candidates, defaultName: defaultName)
        }

        // 2. External outputs.
        let external = candidates.filter { candidate in
            guard candidate.classification.external else { return false }
            return candidate.kind != .hdmi || candidate.isDefault || candidate.isPlaying
        }
        if let chosen = external.first(where: \.isDefault) {
            return chosen.decision("is the external output in use (default sink).")
        }
        if let chosen = external.filter(\.isPlaying).min(by: Candidate.byRank) {
            return chosen.decision("is the external output in use (it is playing a stream).")
        }
        if let chosen = external.min(by: Candidate.byRank) {
            return chosen.decision("is the preferred connected external output; the default sink is not one.")
        }

        // 3. Built-in and other real devices.
        let real = candidates.filter { $0.kind != .virtual && $0.kind != .network }
        if let chosen = real.first(where: \.isDefault) {
            return chosen.decision("is the default sink and no external output is in use.")
        }
        let whyNotDefault = defaultName == nil
            ? "the server names no default sink"
            : "the default sink is not a device"
        let speakers = real.filter { $0.kind == .speaker }
        if let chosen = speakers.first(where: { !$0.isUnplugged }) ?? speakers.first {
            return chosen.decision("is used because no external output is in use and \(whyNotDefault).")
        }
        if let chosen = real.first(where: { $0.kind == .unknown }) {
            return chosen.decision("is used because no external output or built-in speaker was found.")
        }
        if let chosen = real.first {
            return chosen.decision("is the only device left (not in use, or its port is unplugged).")
        }

        // 4. Virtual and network sinks only.
        if let chosen = candidates.first(where: \.isDefault) {
            return chosen.decision("is the default sink and the server has no output device.")
        }
        if let chosen = candidates.first(where: { $0.kind == .network }) {
            return chosen.decision("is used because the server has no local output device.")
        }
        if candidates.count == 1 {
            return candidates[0].decision("is the only sink.")
        }
        let names = candidates.map { "'\($0.sink.name)'" }.joined(separator: ", ")
        throw DuckPromptError(.unavailable,
                              "no output device: only virtual sinks (\(names)) and none is the default; name one")
    }

    private static func explicit(_ request: DeviceRequest, candidates: [Candidate],
                                 defaultName: String?) throws -> RouteDecision {
        switch request {
        case .name(let name):
            if let chosen = candidates.first(where: { $0.sink.name == name }) {
                return chosen.decision("was requested by name.")
            }
            if let index = UInt32(name), let chosen = candidates.first(where: { $0.sink.index == index }) {
                return chosen.decision("was requested by index #\(index).")
            }
            throw DuckPromptError(.unavailable, "no sink named '\(name)'")
        case .index(let index):
            if let chosen = candidates.first(where: { $0.sink.index == index }) {
                return chosen.decision("was requested by index #\(index).")
            }
            throw DuckPromptError(.unavailable, "no sink with index #\(index)")
        case .defaultSink:
            guard let name = defaultName else {
                throw DuckPromptError(.unavailable, "@DEFAULT_SINK@ was requested but the server names no default sink")
            }
            if let chosen = candidates.first(where: { $0.sink.name == name }) {
                return chosen.decision("was requested as @DEFAULT_SINK@.")
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

    /// Whether a sink-input that is not corked plays on the sink. Sinks without an index (from
    /// a dump) never play.
    private static func isPlaying(_ sink: Sink, in snapshot: Snapshot) -> Bool {
        guard let index = sink.index else { return false }
        return snapshot.sinkInputs.contains { $0.sinkIndex == index && !$0.corked }
    }

    /// Rank among external outputs, lower first.
    static func rank(_ kind: DeviceKind) -> Int {
        switch kind {
        case .car: 0
        case .bluetoothA2DP: 1
        case .headphones: 2
        case .usb: 3
        case .lineOut: 4
        case .bluetoothHFP: 5
        case .hdmi: 6
        case .speaker, .unknown, .network, .virtual: 7
        }
    }

    private struct Candidate {
        var sink: Sink
        var classification: Classification
        var isDefault: Bool
        var isPlaying: Bool

        var kind: DeviceKind { classification.kind }
        var isUnplugged: Bool { Classifier.effectiveActivePort(sink)?.availability == .no }

        /// Lowest index first (sinks without one last), then name.
        static func order(_ lhs: Candidate, _ rhs: Candidate) -> Bool {
            switch (lhs.sink.index, rhs.sink.index) {
            case let (l?, r?) where l != r: l < r
            case (_?, nil): true
            case (nil, _?): false
            default: lhs.sink.name < rhs.sink.name
            }
        }

        static func byRank(_ lhs: Candidate, _ rhs: Candidate) -> Bool {
            let (l, r) = (Router.rank(lhs.kind), Router.rank(rhs.kind))
            return l != r ? l < r : order(lhs, rhs)
        }

        func decision(_ why: String) -> RouteDecision {
            RouteDecision(sink: sink, classification: classification,
                          reason: "\(Router.label(sink, kind: kind)) \(why)")
        }
    }

    /// `Bluetooth A2DP headset 'WH-1000XM5'`: the kind in words, then the description (or the
    /// name when there is none).
    static func label(_ sink: Sink, kind: DeviceKind) -> String {
        let title = sink.description.isEmpty ? sink.name : sink.description
        let formFactor = sink.properties["device.form_factor"].map { $0.lowercased() }
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
