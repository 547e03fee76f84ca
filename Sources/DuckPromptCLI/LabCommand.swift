import DuckPrompt
import DuckPromptLab
import DuckPromptProbe
import FoundationEssentials
import Glibc

/// `lab [options] -- COMMAND [ARGS...]`: COMMAND on a private headless server with emulated
/// devices, and a report of what a listener would have heard (Docs/lab.md).
enum LabCommand {
    /// Runs the lab; returns COMMAND's status (124 on timeout, 128+N on signal N).
    static func run(_ args: [String]) throws -> Int32 {
        let signals = SignalTrap([SIGINT, SIGTERM, SIGHUP])
        signal(SIGPIPE, SIG_IGN)
        if args.prefix(while: { $0 != "--" }).contains(where: { $0 == "-h" || $0 == "--help" }) { print(Help.lab); return 0 }
        let options = try parse(args)
        // The report's file is made before anything runs: a path that cannot be written is
        // known at once, not after COMMAND ran (73, EX_CANTCREAT).
        if let report = options.report, report != "-" {
            let fd = open(report, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard fd >= 0 else {
                DuckPromptCLI.printError("lab: cannot write the report to \(report): \(String(cString: strerror(errno)))")
                return 73
            }
            close(fd)
        }
        let lab = Lab(options: options)
        signals.onSignal { if let sig = signals.received { lab.interrupt(signal: sig) } }
        let outcome: LabOutcome
        do {
            outcome = try lab.run(environment: Environment.all, binary: selfPath()) { StandardStreams.writeError("\($0)\n") }
        } catch let error as DuckPromptError {
            throw DuckPromptError(error.code, "lab: \(error.message)")
        }
        if let report = options.report, outcome.commandRan {
            let json = encode(outcome.report)
            if report == "-" {
                StandardStreams.writeOutput(json + "\n")
            } else if !FileManager.default.createFile(atPath: report, contents: Data((json + "\n").utf8)) {
                DuckPromptCLI.printError("lab: cannot write the report to \(report): \(String(cString: strerror(errno)))")
                return outcome.status == 0 ? 73 : outcome.status
            }
        }
        if outcome.commandRan {
            for line in LabSummary.lines(outcome.report) { StandardStreams.writeError("lab: \(line)\n") }
            let end = outcome.report.timedOut ? "stopped at the --timeout: exit 124"
                : outcome.report.exitStatus.map { "exited with status \($0)" } ?? "stopped: exit \(outcome.status)"
            StandardStreams.writeError("lab: \(options.command[0]) \(end)\n")
        }
        if let kept = outcome.keptDirectory { StandardStreams.writeError("lab: kept \(kept)\n") }
        return outcome.status
    }

    /// The report as one line of JSON, keys in snake_case (Docs/lab.md).
    static func encode(_ report: ListeningReport) -> String {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: (try? encoder.encode(report)) ?? Data("{}".utf8), as: UTF8.self)
    }

    static let scanner = ArgumentScanner(valued: ["server", "device", "default", "music", "report", "timeout"],
                                         flags: ["keep", "no-listen", "no-service", "help"], short: ["h": "help"])

    /// Parses the options before `--`, and COMMAND after it.
    /// - Throws: `UsageError` naming the problem.
    static func parse(_ args: [String]) throws -> LabOptions {
        guard let dashes = args.firstIndex(of: "--") else {
            throw UsageError("lab needs -- before the command, e.g. duckprompt lab -- duckprompt play a.wav (see duckprompt lab --help)")
        }
        // `--music [SINK]`: its value is optional, so it is made explicit for the scanner
        // (`--music=` for the default sink).
        var words: [String] = []
        for word in args[..<dashes] {
            if words.last == "--music" {
                words[words.count - 1] = word.hasPrefix("-") ? "--music=" : "--music=\(word)"
                if !word.hasPrefix("-") { continue }
            }
            words.append(word)
        }
        if words.last == "--music" { words[words.count - 1] = "--music=" }
        let r = try scanner.scan(words, verb: "lab")
        guard r.positionals.isEmpty else {
            throw UsageError("lab takes its command after --: '\(r.positionals[0])' comes before it (see duckprompt lab --help)")
        }
        var options = LabOptions()
        options.command = Array(args[(dashes + 1)...])
        do {
            if let server = r.last("server") {
                guard let kind = LabServerKind(rawValue: server) else { throw UsageError("--server '\(server)' is not pipewire or pulseaudio") }
                options.server = kind
            }
            let devices = try r.all("device").map(LabOptions.device)
            options.devices = devices.compactMap { $0 }
            options.noDevices = devices.contains { $0 == nil }
            options.listens = !r.has("no-listen")
            options.offersService = !r.has("no-service")
            options.defaultSink = r.last("default")
            options.music = r.last("music").map { $0.isEmpty ? .defaultSink : .sink($0) }
            options.report = r.last("report")
            options.timeoutMs = try r.last("timeout").map(duration)
            options.keep = r.has("keep")
            return try options.validated()
        } catch let error as DuckPromptError {
            throw UsageError(error.message)
        }
    }

    /// `--timeout`: `90`, `90s`, `500ms`, `10m`, `1h`: 1 ms to 24 h, in ms.
    static func duration(_ text: String) throws -> Int {
        let units: [(String, Double)] = [("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000)]
        let (suffix, scale) = units.first { text.hasSuffix($0.0) } ?? ("", 1000)
        guard let number = NumberText.decimal(text.dropLast(suffix.count)), number.isFinite else {
            throw UsageError("--timeout '\(text)' is not a time (e.g. 90, 90s, 500ms, 10m)")
        }
        let ms = (number * scale).rounded()
        guard ms >= 1, ms <= 86_400_000 else { throw UsageError("--timeout '\(text)' is out of range: give 1ms to 24h") }
        return Int(ms)
    }

    /// This binary's path (`/proc/self/exe`), which the lab's bus activates as `serve`.
    static func selfPath() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
