import Dispatch
import DuckPrompt
import FoundationEssentials
import Glibc

enum PlayCommand {
    static let scanner = ArgumentScanner(
        valued: CommonOptions.valued.union(["device", "duck", "duck-mode", "duck-exempt-role", "attack-ms",
                                            "release-ms", "volume", "latency-msec", "property", "expire-ms",
                                            "on-busy", "priority", "pre-roll-ms", "say", "voice", "rate",
                                            "rewind-ms"]),
        flags: ["help", "verbose", "no-pause"],
        short: CommonOptions.short.merging(["d": "device", "v": "verbose"]) { a, _ in a })

    /// `play FILE... [--say TEXT]...`, or `say TEXT...` (`say` true: positionals are texts).
    static func run(_ args: [String], say: Bool = false) throws -> Int32 {
        // First, so that a signal during parsing is not lost (nor one a parent ignores).
        let signals = SignalTrap([SIGINT, SIGTERM, SIGHUP])
        // A write to a pipe no one reads any more (standard error piped to a program that
        // ended) fails with EPIPE instead of killing the prompt mid-duck with SIGPIPE, which
        // would leave the music ducked until the next command.
        signal(SIGPIPE, SIG_IGN)
        let verb = say ? "say" : "play"
        let r = try scanner.scan(args, verb: verb)
        if r.has("help") { print(say ? Help.say : Help.play); return 0 }
        // say's words are one text, as `echo` prints them: one sentence, not a prompt per word.
        let spoken = say && !r.positionals.isEmpty ? [r.positionals.joined(separator: " ")] : []
        let texts = spoken + r.all("say")
        let files = say ? [] : r.positionals
        guard !files.isEmpty || !texts.isEmpty else {
            throw UsageError(say ? "say needs a TEXT (see duckprompt say --help)"
                                 : "play needs a FILE (see duckprompt play --help)")
        }
        let wordsPerMinute = try r.last("rate").map {
            try OptionValue.integer($0, option: "rate", range: SpeechSource.wordsPerMinuteRange, unit: "words per minute")
        }
        let voice = r.last("voice")
        guard r.positionals.filter({ $0 == "-" }).count <= 1 else {
            throw UsageError("standard input ('-') can be given once")
        }
        let server = try CommonOptions.server(r)
        // The config file's duck settings are defaults; options given here win.
        var options = PlayOptions(config: try DuckPromptConfig.load())
        if let d = r.last("device") { options.device = DeviceRequest(parsing: d) }
        if let d = r.last("duck") {
            options.duck = try PlayOptions.duckGain(try OptionValue.decibels(d, option: "duck"), given: d, option: "--duck")
            // A ramp takes one 10 ms step per 1.5 dB: an unbounded depth would mean an
            // unbounded attack (and Ramp traps once the step count overflows Int).
            options.duck = try OptionValue.decibels(d, option: "duck", range: PlayOptions.duckRange)
        }
        if let m = r.last("duck-mode") { options.duckMode = try PlayOptions.choice(m, option: "--duck-mode") }
        if r.has("no-pause") { options.pausePlayers = false }
        if let w = r.last("rewind-ms") {
            options.rewindMs = try OptionValue.milliseconds(w, option: "rewind-ms", range: PlayOptions.rewindRangeMs)
        }
        if let p = r.last("pre-roll-ms") {
            options.preRollMs = try OptionValue.milliseconds(p, option: "pre-roll-ms", range: PlayOptions.preRollRangeMs)
        }
        if let e = r.last("expire-ms") {
            options.expireMs = try OptionValue.milliseconds(e, option: "expire-ms", range: PlayOptions.expireRangeMs)
        }
        if let b = r.last("on-busy") { options.onBusy = try PlayOptions.choice(b, option: "--on-busy") }
        if let p = r.last("priority") { options.priority = try PlayOptions.choice(p, option: "--priority") }
        let exempt = r.all("duck-exempt-role")
        if !exempt.isEmpty {
            guard !exempt.contains(where: \.isEmpty) else { throw UsageError("--duck-exempt-role needs a media.role, e.g. phone") }
            options.exemptRoles = Set(exempt)
        }
        if let a = r.last("attack-ms") {
            options.attackMs = try OptionValue.milliseconds(a, option: "attack-ms", range: PlayOptions.rampRangeMs)
        }
        if let a = r.last("release-ms") {
            options.releaseMs = try OptionValue.milliseconds(a, option: "release-ms", range: PlayOptions.rampRangeMs)
        }
        if let v = r.last("volume") {
            options.volume = try OptionValue.decibels(v, option: "volume", range: PlayOptions.volumeRange,
                                                      relative: " relative to the saved prompt volume")
        }
        if let l = r.last("latency-msec") {
            options.latencyMs = try OptionValue.milliseconds(l, option: "latency-msec", range: PlayOptions.latencyRangeMs)
        }
        for p in r.all("property") {
            let (k, v) = try OptionValue.property(p)
            options.properties[k] = v
        }
        let paths = files

        let cancellation = PlayCancellation()
        signals.onSignal { cancellation.cancel() }
        do {
            let report = try DuckPrompt.playBlocking(files: paths, say: texts, voice: voice, wordsPerMinute: wordsPerMinute,
                                                     options: options, server: server, cancellation: cancellation)
            Self.printReport(report, verbose: r.has("verbose"))
            return 0
        } catch is CancellationError {
            let signal = signals.received ?? SIGINT
            if let report = cancellation.report {
                Self.printReport(report, verbose: r.has("verbose"), stoppedBy: signal)
            }
            return 128 + signal
        }
    }

    /// A prompt's warnings (whatever the verbosity), and with `-v` where it went, the pre-roll,
    /// the streams ducked and restored and the players paused and resumed. `stoppedBy`: the
    /// signal that cancelled it.
    private static func printReport(_ report: PlayReport, verbose: Bool, stoppedBy signal: Int32? = nil) {
        for note in report.recoveryNotes + report.warnings { DuckPromptCLI.printError(note) }
        guard verbose else { return }
        let ducked = report.duckedStreams.map { "#\($0)" }.joined(separator: " ")
        let played = signal.map { "stopped by \(SignalTrap.name($0)) after \(report.framesPlayed) frames" }
            ?? "played \(report.framesPlayed) frames"
        StandardStreams.writeError("""
            duckprompt: \(played) on \(report.route.sink.name): \(report.route.reason)
            duckprompt: pre-roll \(report.preRollMs) ms\(report.preRollMs > 0 ? " (the sink was not running)" : "")
            duckprompt: ducked and restored: \(ducked.isEmpty ? "none" : ducked)

            """)
        for note in report.playerNotes { StandardStreams.writeError("duckprompt: \(note)\n") }
    }
}
