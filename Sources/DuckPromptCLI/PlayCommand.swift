import Dispatch
import DuckPrompt
import FoundationEssentials
import Glibc

enum PlayCommand {
    /// A prompt's options as the table names them (`PromptOption`), and the command's own:
    /// `--say`, `-v/--verbose`, `--exit-with-parent`, `--no-service`, `--dry-run`, `--json`,
    /// `--keep-awake`, the connection's (`CommonOptions`).
    static let scanner = ArgumentScanner(
        valued: CommonOptions.valued.union(PromptOption.all.filter { $0.kind != .flag }.map(\.name)).union(["say", "keep-awake"]),
        flags: Set(["help", "verbose", "exit-with-parent", "no-service", "dry-run", "json"]
            + PromptOption.all.filter { $0.kind == .flag }.map(\.name)),
        short: CommonOptions.short.merging(PromptOption.all.compactMap { option in option.short.map { ($0, option.name) } }
            + [("v", "verbose")]) { a, _ in a })

    /// The prompt options given, over `defaults` (the config file's), through the table; not
    /// yet validated (`DuckPrompt.playBlocking` does so, once).
    static func options(_ r: ArgumentScanner.Result, over defaults: PlayOptions) throws -> PlayOptions {
        var options = defaults
        for option in PromptOption.all where r.has(option.name) {
            try option.apply(try OptionValue.value(option, words: r.all(option.name)), to: &options)
        }
        return options
    }

    /// The command's own ways of running a prompt, not a prompt's options: `--dry-run` (and its
    /// `--json`), `--keep-awake SECONDS`.
    struct Mode: Equatable {
        /// Print what the prompt would do, play nothing (`DryRun`); as JSON with `--json`.
        var dryRun = false
        var json = false
        /// Keep the prompt's sink awake this many seconds from its start, the command staying.
        var keepAwakeSeconds: Int?

        init(dryRun: Bool = false, json: Bool = false, keepAwakeSeconds: Int? = nil) {
            self.dryRun = dryRun
            self.json = json
            self.keepAwakeSeconds = keepAwakeSeconds
        }

        /// - Throws: `UsageError` (64): `--json` without `--dry-run`, `--keep-awake` with it, a
        ///   `--keep-awake` out of range or not a whole number of seconds.
        init(_ r: ArgumentScanner.Result) throws {
            dryRun = r.has("dry-run")
            json = r.has("json")
            keepAwakeSeconds = try r.last("keep-awake").map(OptionValue.keepAwakeSeconds)
            guard !json || dryRun else { throw UsageError("--json needs --dry-run (a prompt played prints no JSON)") }
            guard !dryRun || keepAwakeSeconds == nil else {
                throw UsageError("--keep-awake does nothing with --dry-run, which plays nothing")
            }
        }
    }

    /// `play FILE... [--say TEXT]...`, or `say TEXT...` (`say` true: positionals are texts).
    static func run(_ args: [String], say: Bool = false) throws -> Int32 {
        // First, so that a signal during parsing is not lost (nor one a parent ignores);
        // ParentWatch.signal, a parent's death, counts only with --exit-with-parent.
        let signals = SignalTrap([SIGINT, SIGTERM, SIGHUP, ParentWatch.signal])
        // A write to a pipe no one reads any more (standard error piped to a program that
        // ended) fails with EPIPE instead of killing the prompt mid-duck with SIGPIPE, which
        // would leave the music ducked until the next command.
        signal(SIGPIPE, SIG_IGN)
        let verb = say ? "say" : "play"
        let r = try scanner.scan(args, verb: verb)
        if r.has("help") { print(say ? Help.say : Help.play); return 0 }
        let mode = try Mode(r)
        // `say -`: the text is standard input, read once the signals can stop the wait.
        let sayInput = say && r.positionals == ["-"]
        guard !say || sayInput || !r.positionals.contains("-") else {
            throw UsageError("say reads standard input only as its one TEXT ('say -')")
        }
        guard r.positionals.filter({ $0 == "-" }).count <= 1 else {
            throw UsageError("standard input ('-') can be given once")
        }
        // say's words are one text, as `echo` prints them: one sentence, not a prompt per word.
        var spoken = say && !sayInput && !r.positionals.isEmpty ? [r.positionals.joined(separator: " ")] : []
        let files = say ? [] : r.positionals
        guard !files.isEmpty || !spoken.isEmpty || sayInput || r.has("say") else {
            throw UsageError(say ? "say needs a TEXT (see duckprompt say --help)"
                                 : "play needs a FILE (see duckprompt play --help)")
        }
        // The look for a running `duckprompt serve`, on a thread of its own meanwhile.
        let lookup = ServiceHandoff.Lookup.begin(given: Set(r.options.map(\.name)), files: files,
                                                 texts: spoken.count + (sayInput ? 1 : 0) + r.all("say").count)
        let server = try CommonOptions.server(r)
        // The config file's settings are defaults; options given here win.
        let options = try Self.options(r, over: PlayOptions(config: try DuckPromptConfig.load()))
        let cancellation = PlayCancellation()
        signals.onSignal { cancellation.cancel() }
        if r.has("exit-with-parent") { signals.exitWithParent(try ParentWatch.arm()) }
        do {
            if sayInput { spoken = [try DuckPrompt.standardInputText(cancellation: cancellation)] }
            if mode.dryRun {
                return try DryRun.run(lookup, given: r.options, files: files, texts: spoken + r.all("say"), options: options,
                                      server: server, json: mode.json, cancellation: cancellation)
            }
            // Through a running `duckprompt serve` when it plays the same prompt (ServiceHandoff).
            let opened: [any PromptSource]?
            switch try ServiceHandoff.attempt(lookup, given: r.options, texts: spoken + r.all("say"), options: options,
                                              keepAwake: mode.keepAwakeSeconds, signals: signals, cancellation: cancellation) {
            case .handled(let status): return status
            case .local(let sources): opened = sources
            }
            let report = if let opened {
                try DuckPrompt.playBlocking(opened, options: options, server: server, cancellation: cancellation)
            } else {
                try DuckPrompt.playBlocking(files: files, say: spoken + r.all("say"), options: options,
                                            server: server, cancellation: cancellation)
            }
            Self.printReport(report, verbose: r.has("verbose"))
            if let seconds = mode.keepAwakeSeconds {
                keepAwake(report, seconds: seconds, server: server, cancellation: cancellation)
            }
            return 0
        } catch is CancellationError {
            let signal = signals.received ?? SIGINT
            if let report = cancellation.report {
                Self.printReport(report, verbose: r.has("verbose"), stoppedBy: signal,
                                 parentExited: signals.parentExited ? signals.parentWatched : nil)
            }
            return 128 + signal
        }
    }

    /// `--keep-awake` after a prompt played here: its sink kept awake until `seconds` after its
    /// start, or until a signal; a failure is a line on stderr, the exit status stays the prompt's.
    private static func keepAwake(_ report: PlayReport, seconds: Int, server: ServerOptions,
                                  cancellation: PlayCancellation) {
        let start = report.startedAt ?? .now
        do {
            try DuckPrompt.keepAwakeBlocking(report.route.sink.name, until: start + .seconds(seconds), server: server,
                                             cancellation: cancellation)
        } catch let error as DuckPromptError {
            DuckPromptCLI.printError("--keep-awake: \(error.message)")
        } catch {
            DuckPromptCLI.printError("--keep-awake: \(error)")
        }
    }

    /// A prompt's warnings and what a call made of it (whatever the verbosity), and with `-v` where it went, the pre-roll,
    /// the streams ducked and restored and the players paused and resumed. `stoppedBy`: the
    /// signal that cancelled it.
    /// `parentExited`: the parent's pid when the stop was its exit (`--exit-with-parent`).
    private static func printReport(_ report: PlayReport, verbose: Bool, stoppedBy signal: Int32? = nil,
                                    parentExited parent: pid_t? = nil) {
        for note in report.recoveryNotes + report.warnings + [report.callNote].compactMap({ $0 }) {
            DuckPromptCLI.printError(note)
        }
        guard verbose else { return }
        let ducked = report.duckedStreams.map { "#\($0)" }.joined(separator: " ")
        let cause = parent.map { "the exit of its parent (pid \($0), --exit-with-parent)" } ?? signal.map(SignalTrap.name)
        let played = cause.map { "stopped by \($0) after \(report.framesPlayed) frames" }
            ?? "played \(report.framesPlayed) frames"
        StandardStreams.writeError("""
            duckprompt: \(played) on \(report.route.sink.name): \(report.route.reason)
            duckprompt: pre-roll \(report.preRollMs) ms\(report.preRollMs > 0 ? " (the sink was not running)" : "")
            duckprompt: ducked and restored: \(ducked.isEmpty ? "none" : ducked)

            """)
        for note in report.playerNotes { StandardStreams.writeError("duckprompt: \(note)\n") }
    }
}
