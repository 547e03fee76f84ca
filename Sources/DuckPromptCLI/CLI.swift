import Dispatch
import DuckPrompt
import FoundationEssentials
import Glibc

/// The `duckprompt` command: parses arguments, calls the library once, prints.
public enum DuckPromptCLI {
    public static let version = "0.1.0"

    /// Runs the command line and returns the exit status (see `Help.main` for the codes).
    /// Output goes to stdout, errors to stderr as one line starting `duckprompt: `.
    /// Synchronous: `play` and `say` run on this thread (`DuckPrompt.playBlocking`), so a prompt
    /// starts no Swift concurrency threads; the other verbs wait here for the async library.
    public static func main(_ arguments: [String]) -> Int32 {
        var args = Array(arguments.dropFirst())
        guard let verb = args.first else {
            StandardStreams.writeError("duckprompt: missing subcommand (see duckprompt --help)\n")
            return 64
        }
        args.removeFirst()
        do {
            switch verb {
            case "-h", "--help", "help":
                if let topic = args.first { return main(["duckprompt", topic, "--help"]) }
                print(Help.main)
                return 0
            case "--version", "-V":
                let v = DuckPrompt.libraryVersions
                let sndfile = v.libsndfile.hasPrefix("libsndfile-") ? String(v.libsndfile.dropFirst(11)) : v.libsndfile
                print("duckprompt \(version) (libpulse \(v.libpulse), libsndfile \(sndfile))")
                return 0
            case "play": return try PlayCommand.run(args)
            case "say": return try PlayCommand.run(args, say: true)
            case "restore": return try RestoreCommand.run(args)
            case "devices": return try DevicesCommand.run(args, routeOnly: false)
            case "route": return try DevicesCommand.run(args, routeOnly: true)
            default:
                throw UsageError("unknown subcommand '\(verb)' (see duckprompt --help)")
            }
        } catch let error as UsageError {
            printError(error.message)
            return 64
        } catch let error as DuckPromptError {
            printError(error.message)
            return error.exitCode
        } catch {
            printError("internal error: \(error)")
            return 70
        }
    }

    /// Writes `duckprompt: MESSAGE` as one line: control characters in a quoted value (a
    /// newline in an option) are written as escapes.
    static func printError(_ message: String) {
        StandardStreams.writeError("duckprompt: \(message.escapingControlCharacters)\n")
    }
}

/// Options every verb that talks to a server takes.
enum CommonOptions {
    static let valued: Set<String> = ["server", "client-name", "timeout"]
    static let short: [Character: String] = ["s": "server", "n": "client-name", "h": "help"]

    static func server(_ r: ArgumentScanner.Result) throws -> ServerOptions {
        var options = ServerOptions()
        options.server = r.last("server")
        if let name = r.last("client-name") {
            guard !name.isEmpty else { throw UsageError("--client-name must not be empty") }
            options.clientName = name
        }
        if let t = r.last("timeout") { options.timeout = try OptionValue.duration(t, option: "timeout") }
        return options
    }
}

enum PlayCommand {
    static let scanner = ArgumentScanner(
        valued: CommonOptions.valued.union(["device", "duck", "duck-mode", "duck-exempt-role", "attack-ms",
                                            "release-ms", "volume", "latency-msec", "property", "expire-ms",
                                            "on-busy", "priority", "pre-roll-ms", "say", "voice", "rate"]),
        flags: ["help", "verbose"],
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
            options.duck = try OptionValue.decibels(d, option: "duck")
            guard options.duck.value <= 0 else {
                throw UsageError("--duck '\(d)' would raise other streams: give a negative gain such as -20dB")
            }
            // A ramp takes one 10 ms step per 1.5 dB: an unbounded depth would mean an
            // unbounded attack (and Ramp traps once the step count overflows Int).
            options.duck = try OptionValue.decibels(d, option: "duck", range: PlayOptions.duckRange)
        }
        if let m = r.last("duck-mode") {
            guard let mode = DuckMode(rawValue: m) else {
                throw UsageError("--duck-mode '\(m)' is not one of: \(DuckMode.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            options.duckMode = mode
        }
        if let p = r.last("pre-roll-ms") {
            options.preRollMs = try OptionValue.milliseconds(p, option: "pre-roll-ms", range: PlayOptions.preRollRangeMs)
        }
        if let e = r.last("expire-ms") {
            options.expireMs = try OptionValue.milliseconds(e, option: "expire-ms", range: PlayOptions.expireRangeMs)
        }
        if let b = r.last("on-busy") {
            guard let policy = BusyPolicy(rawValue: b) else {
                throw UsageError("--on-busy '\(b)' is not one of: wait, drop")
            }
            options.onBusy = policy
        }
        if let p = r.last("priority") {
            guard let priority = PromptPriority(rawValue: p) else {
                throw UsageError("--priority '\(p)' is not one of: \(PromptPriority.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            options.priority = priority
        }
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
            for note in report.recoveryNotes { DuckPromptCLI.printError(note) }
            if r.has("verbose") {
                let ducked = report.duckedStreams.map { "#\($0)" }.joined(separator: " ")
                StandardStreams.writeError("""
                    duckprompt: played \(report.framesPlayed) frames on \(report.route.sink.name): \(report.route.reason)
                    duckprompt: pre-roll \(report.preRollMs) ms\(report.preRollMs > 0 ? " (the sink was not running)" : "")
                    duckprompt: ducked and restored: \(ducked.isEmpty ? "none" : ducked)

                    """)
            }
            return 0
        } catch is CancellationError {
            let signal = signals.received ?? SIGINT
            return 128 + signal
        }
    }
}

enum DevicesCommand {
    static let scanner = ArgumentScanner(
        valued: CommonOptions.valued.union(["device", "from"]),
        flags: ["help", "json", "watch"],
        short: CommonOptions.short.merging(["d": "device"]) { a, _ in a })

    static func run(_ args: [String], routeOnly: Bool) throws -> Int32 {
        let verb = routeOnly ? "route" : "devices"
        let r = try scanner.scan(args, verb: verb)
        if r.has("help") { print(routeOnly ? Help.route : Help.devices); return 0 }
        guard r.positionals.isEmpty else {
            throw UsageError("\(verb) takes no arguments, got '\(r.positionals[0])'")
        }
        let json = r.has("json")
        let request = r.last("device").map(DeviceRequest.init(parsing:))
        let config = try DuckPromptConfig.load()
        if r.has("watch") {
            guard !routeOnly else { throw UsageError("--watch is an option of devices, not route") }
            guard r.last("from") == nil else { throw UsageError("--watch follows a live server; it cannot read --from a file") }
            return try watch(request: request, config: config, server: try CommonOptions.server(r), json: json)
        }
        let listing: DeviceListing
        if let path = r.last("from") {
            listing = try DuckPrompt.devices(fromDump: path, request: request, config: config)
        } else {
            let server = try CommonOptions.server(r)
            listing = try waitFor { try await DuckPrompt.devices(request: request, config: config, server: server) }
            for note in listing.recoveryNotes { DuckPromptCLI.printError(note) }
        }
        if json {
            print(Output.devicesJSON(listing))
        } else if routeOnly {
            guard let route = listing.route else { throw listing.routeError! }
            print("\(route.sink.name)\t\(route.classification.kind.rawValue)\t\(route.rule)\t\(route.reason)")
        } else {
            print(Output.devicesTable(listing))
        }
        if routeOnly, listing.route == nil, let error = listing.routeError {
            DuckPromptCLI.printError(error.message)
            return error.exitCode
        }
        return 0
    }

    /// Prints the table (or one JSON line), then one line per change until interrupted.
    static func watch(request: DeviceRequest?, config: DuckPromptConfig, server: ServerOptions, json: Bool) throws -> Int32 {
        let signals = SignalTrap([SIGINT, SIGTERM, SIGHUP])
        let task = Task {
            for try await update in DuckPrompt.watchDevices(request: request, config: config, server: server) {
                if update.changes.isEmpty {
                    Output.emit(json ? Output.devicesJSON(update.listing, compact: true, event: "devices")
                                     : Output.devicesTable(update.listing))
                    continue
                }
                for change in update.changes {
                    Output.emit(json ? Output.changeJSON(change, update.listing) : Output.changeLine(change, update.listing))
                }
            }
        }
        signals.onSignal { task.cancel() }
        do {
            try waitFor { try await task.value }
        } catch is CancellationError {}
        if let signal = signals.received { return 128 + signal }
        return 0
    }
}

enum RestoreCommand {
    static let scanner = ArgumentScanner(valued: CommonOptions.valued, flags: ["help"], short: CommonOptions.short)

    static func run(_ args: [String]) throws -> Int32 {
        let r = try scanner.scan(args, verb: "restore")
        if r.has("help") { print(Help.restore); return 0 }
        guard r.positionals.isEmpty else { throw UsageError("restore takes no arguments, got '\(r.positionals[0])'") }
        let server = try CommonOptions.server(r)
        let report = try waitFor { try await DuckPrompt.restore(server: server) }
        if report.notes.isEmpty, report.problems.isEmpty { print("nothing to restore: no prompt died while ducking") }
        for note in report.notes { print(note) }
        // A file that is not a journal it can use (forged, garbled, a link): named, and 65.
        for problem in report.problems { DuckPromptCLI.printError("journal \(problem)") }
        guard report.kept.isEmpty else {
            DuckPromptCLI.printError("could not restore \(report.kept.count) journal\(report.kept.count == 1 ? "" : "s") "
                + "(kept: \(report.kept.joined(separator: ", "))); run `duckprompt restore` again once the server answers")
            return DuckPromptError(.unavailable, "").exitCode
        }
        return report.problems.isEmpty ? 0 : DuckPromptError(.unsupportedData, "").exitCode
    }
}

enum CLIErrors {
    static func print(_ error: DuckPromptError) { DuckPromptCLI.printError(error.message) }
}

/// Catches SIGINT/SIGTERM/SIGHUP on a thread of its own and remembers the first one received.
///
/// Blocks them in the calling thread, and so in every thread started after it (libpulse's
/// mainloop thread blocks all signals anyway), and waits for them with `sigwait`: create it
/// before any other thread. A no-op handler replaces `SIG_IGN` (a parent's `nohup`, or a
/// shell's background job), under which the kernel would discard them before `sigwait` sees
/// them; it never runs while they are blocked.
final class SignalTrap: @unchecked Sendable {
    private let lock = Lock()
    private var first: Int32?
    private var handler: (@Sendable () -> Void)?

    init(_ signals: [Int32]) {
        var set = sigset_t()
        sigemptyset(&set)
        for sig in signals { sigaddset(&set, sig) }
        // Blocked first: a signal between the handler and the block would run the no-op
        // handler and be lost.
        pthread_sigmask(SIG_BLOCK, &set, nil)
        for sig in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { _ in }
            sigemptyset(&action.sa_mask)
            sigaction(sig, &action, nil)
        }
        let waited = set
        startThread { [self] in
            var set = waited
            while true {
                var sig: Int32 = 0
                guard sigwait(&set, &sig) == 0 else { continue }
                let handler = lock.withLock { () -> (@Sendable () -> Void)? in
                    if first == nil { first = sig }
                    return self.handler
                }
                handler?()
            }
        }
    }

    var received: Int32? { lock.withLock { first } }

    /// Calls `handler` on the trap's thread for every signal from now on (at once, if one came
    /// already).
    func onSignal(_ handler: @escaping @Sendable () -> Void) {
        let came = lock.withLock { () -> Bool in
            self.handler = handler
            return first != nil
        }
        if came { handler() }
    }
}

/// Runs an async library call from the synchronous `main`: in a `Task`, while this thread waits.
func waitFor<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let outcome = Outcome<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        do { outcome.result = .success(try await body()) } catch { outcome.result = .failure(error) }
        done.signal()
    }
    done.wait()
    return try outcome.result!.get()
}

/// Where `waitFor`'s Task leaves its result (written before the semaphore is signalled).
private final class Outcome<T>: @unchecked Sendable { var result: Result<T, any Error>? }
