import FoundationEssentials

/// How a prompt is routed, ducked and played.
public struct PlayOptions: Sendable {
    /// The sink to use (`-d/--device`); nil lets the router decide, after `PULSE_SINK`.
    public var device: DeviceRequest?
    /// Gain applied to every other stream while the prompt plays, in dB (<= 0). 0 turns the
    /// duck off. Default -20 dB (`--duck`).
    public var duck: Decibels
    /// `duck`, `mute`, `pause` or `none` (`--duck-mode`).
    public var duckMode: DuckMode
    /// Whether a player playing spoken word is paused rather than ducked (false:
    /// `--no-pause`). See `pauseMode`.
    public var pausePlayers = true
    /// How far back a paused player resumes, in ms (`--rewind-ms`, config `rewind_ms`),
    /// default 2000, within `rewindRangeMs`; 0 resumes where it was paused.
    public var rewindMs = 2000
    /// Ramp down before the first prompt sample, in ms (`--attack-ms`), default 200.
    public var attackMs: Int
    /// Ramp back up after the last sample was heard, in ms (`--release-ms`), default 500.
    public var releaseMs: Int
    /// `media.role` values never ducked; default `phone`.
    public var exemptRoles: Set<String>
    /// The prompt stream's gain in dB relative to the volume the server saved for its
    /// `media.role` (`navigation` unless `properties` says otherwise) — the user's setting for
    /// prompts in pavucontrol — (`--volume`); that saved volume is left as it was. Nil plays at
    /// the saved volume. Within `volumeRange` (-200 … +20 dB), else `play` throws `.usage`.
    public var volume: Decibels?
    /// Target buffer of the prompt stream in ms (`--latency-msec`, `pa_buffer_attr.tlength`
    /// with `PA_STREAM_ADJUST_LATENCY` and the server's `minreq`, as `paplay --latency-msec`).
    /// Nil (the default): `tlength` 220 ms refilled 100 ms at a time (`minreq`), which has the
    /// server run the sink at 10 ms for the prompt while the client wakes ten times a second.
    public var latencyMs: Int?
    /// Extra stream properties (`--property K=V`); `media.role` defaults to `navigation` and
    /// `media.name` to the file name.
    public var properties: [String: String]
    /// The user's routing settings (`DuckPromptConfig.load()`); default: none.
    public var config: DuckPromptConfig = DuckPromptConfig()
    /// Drop the prompt when it has not started this many ms after `play` was called
    /// (`--expire-ms`): a stale "turn left" is worse than none. Nil: wait as long as it takes.
    public var expireMs: Int?
    /// What to do when another prompt is playing or waiting (`--on-busy`).
    public var onBusy: BusyPolicy = .wait
    /// Its place in the queue of prompts, across processes and inside one (`--priority`,
    /// SSIP's meanings; see `PromptPriority`). Default `message`.
    public var priority: PromptPriority = .message
    /// Silence before the prompt when the chosen sink is asleep (suspended or idle), in ms
    /// (`--pre-roll-ms`); nil: the config file's `pre_roll_ms` for the sink's kind, else
    /// `PlayOptions.defaultPreRollMs`.
    public var preRollMs: Int?
    /// The espeak-ng voice texts are spoken with (`--voice`); nil: `SpeechSource.defaultVoice`.
    public var voice: String?
    /// The rate texts are spoken at, in words per minute (`--rate`), within
    /// `wordsPerMinuteRange`; nil: `SpeechSource.defaultWordsPerMinute`.
    public var wordsPerMinute: Int?
    /// What the prompt does while a call rings or is on (`--during-call`, `CallState.isOn`):
    /// default `mix`.
    public var duringCall: DuringCallPolicy = .mix
    /// Under `mix`, the prompt's own volume during a call, in dB relative to what it would be
    /// (`--volume`, else the saved volume): at most 0, default -10 dB (`--call-duck`), within
    /// `duckRange`.
    public var callDuck = Decibels(-10)

    /// `volume`'s range in dB: at most 20 dB over the saved prompt volume (ten times its
    /// amplitude; libpulse would take up to `PA_VOLUME_MAX`, about +192 dB, and a typo such as
    /// +300dB would deafen), down to -200 dB (inaudible).
    public static let volumeRange: ClosedRange<Double> = -200...20
    /// `duck`'s range in dB: 0 (no duck) down to -200 dB (inaudible already; a ramp takes one
    /// 10 ms step per 1.5 dB, so an unbounded depth would mean an unbounded attack).
    public static let duckRange: ClosedRange<Double> = -200...0
    /// `attackMs` and `releaseMs`: 0 … 60000 ms.
    public static let rampRangeMs = 0...60_000
    /// `latencyMs`: 1 … 10000 ms.
    public static let latencyRangeMs = 1...10_000
    /// `expireMs`: 0 … 3600000 ms (an hour).
    public static let expireRangeMs = 0...3_600_000
    /// `preRollMs`: 0 … 5000 ms.
    public static let preRollRangeMs = 0...5000
    /// `rewindMs`: 0 … 60000 ms.
    public static let rewindRangeMs = 0...60_000
    /// `wordsPerMinute`: 80 … 450, the rates espeak-ng takes (`espeakRATE_MINIMUM`,
    /// `espeakRATE_MAXIMUM`).
    public static let wordsPerMinuteRange = 80...450

    /// Which MPRIS players the prompt pauses: none with `--duck-mode none` (which leaves
    /// every stream as it is), none with `--no-pause` (but a player a rule ignores is left
    /// alone), every one that can pause with `--duck-mode pause`, else spoken word
    /// (`SpokenWordPolicy`).
    public var pauseMode: PauseMode {
        guard duckMode != .none else { return .off }
        guard pausePlayers else { return .noPause }
        return duckMode == .pause ? .every : .spokenWord
    }

    /// Checks every number against its range (the ranges above), and the stream properties
    /// against `PromptLimits`: the one range check of a prompt's options, whichever front gave
    /// them (`PromptOption`). `play` calls it once, before it opens a file or contacts a
    /// server, so out-of-range options never change a volume.
    /// - Throws: `DuckPromptError(.usage)` (64): "NAME VALUE is out of range (LOW to HIGH)",
    ///   NAME the long option (`attack-ms`); `limit: .properties` for too many or too long
    ///   properties.
    public func validate() throws {
        // NaN is in no range: `contains` says false for it, so it is refused.
        for option in PromptOption.all { try option.check(in: self) }
    }

    /// Pre-roll by kind when nothing else says: Bluetooth A2DP 300 ms, Bluetooth HFP 1000 ms,
    /// HDMI 1000 ms (devices that take that long to wake), others 0.
    public static let defaultPreRollMs: [DeviceKind: Int] = [.bluetoothA2DP: 300, .bluetoothHFP: 1000, .hdmi: 1000]

    /// The pre-roll for a route: 0 when the sink is running (awake), else the option, the
    /// config's value for the kind, or the default. A virtual sink forwarding to a device uses
    /// that device's kind.
    public func preRoll(for route: RouteDecision) -> Int {
        guard route.sink.state == .suspended || route.sink.state == .idle else { return 0 }
        if let preRollMs { return preRollMs }
        let kind = route.classification.forwardsTo ?? route.classification.kind
        return config.preRollMs(for: kind) ?? Self.defaultPreRollMs[kind] ?? 0
    }

    /// The options a prompt gets from the user's config file, as `duckprompt play` and the
    /// service start from them: each prompt option the file sets (`duck_db`, `attack_ms`, …,
    /// `PromptOption.configKey`) replaces its default, its `players` rules decide which
    /// players are paused, and its `prefer`, `ranking`, `never` and `pre_roll_ms` route the
    /// prompt. Set fields afterwards to override (the command does so for the options given
    /// to it, the service for the keys of a call).
    /// - Parameter config: e.g. `try DuckPromptConfig.load()`, which checked every value.
    public init(config: DuckPromptConfig) {
        self.init()
        self.config = config
        for (name, value) in config.options.sorted(by: { $0.key < $1.key }) {
            do { try PromptOption.named(name)!.apply(value, to: &self) } catch {
                preconditionFailure("DuckPromptConfig.parse let \(name) \(value) through: \(error)")
            }
        }
    }

    public init(device: DeviceRequest? = nil, duck: Decibels = Decibels(-20), duckMode: DuckMode = .duck,
                attackMs: Int = 200, releaseMs: Int = 500, exemptRoles: Set<String> = ["phone"],
                volume: Decibels? = nil, latencyMs: Int? = nil, properties: [String: String] = [:]) {
        self.device = device
        self.duck = duck
        self.duckMode = duckMode
        self.attackMs = attackMs
        self.releaseMs = releaseMs
        self.exemptRoles = exemptRoles
        self.volume = volume
        self.latencyMs = latencyMs
        self.properties = properties
    }
}

/// What a prompt does when another one is playing.
public enum BusyPolicy: String, Sendable, CaseIterable {
    /// Wait its turn (up to `--expire-ms`).
    case wait
    /// Give up at once: exit 75.
    case drop
}
