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
            case "serve": return try ServeCommand.run(args)
            case "speechd-module": return try SpeechdModuleCommand.run(args)
            case "lab": return try LabCommand.run(args)
            default:
                throw UsageError("unknown subcommand '\(verb)' (see duckprompt --help)")
            }
        } catch let error as UsageError {
            printError(error.message)
            return 64
        } catch let error as DuckPromptError {
            printError(error.message + noServerHint(error, program: arguments.first ?? "duckprompt", verb: verb,
                                                    more: !args.isEmpty))
            return error.exitCode
        } catch {
            printError("internal error: \(error)")
            return 70
        }
    }

    /// For a command that found no sound server to connect to, where to try it without one:
    /// `duckprompt lab` runs a private server (Docs/lab.md), the command named as it was run
    /// (`.build/debug/duckprompt` from a checkout). Empty for any other error.
    static func noServerHint(_ error: DuckPromptError, program: String, verb: String, more: Bool) -> String {
        guard error.code == .unavailable, error.message.hasPrefix("cannot connect to the sound server") else { return "" }
        let command = "\(program) \(verb)" + (more ? " …" : "")
        return " (no PipeWire or PulseAudio runs for this user? `\(program) lab -- \(command)` runs it on a private one)"
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
        if let t = r.last("timeout") { options.timeoutMs = try OptionValue.milliseconds(t, option: "timeout") }
        return options
    }
}

enum CLIErrors {
    static func print(_ error: DuckPromptError) { DuckPromptCLI.printError(error.message) }
}
