import DuckPrompt
import DuckPromptSpeechd
import Glibc

/// `speechd-module [CONF]`: a speech-dispatcher output module (Sources/DuckPromptSpeechd/).
enum SpeechdModuleCommand {
    static let scanner = ArgumentScanner(valued: CommonOptions.valued, flags: ["help"], short: CommonOptions.short)

    /// Runs until the server says QUIT or closes the pipe, or SIGTERM, SIGINT, SIGHUP (then
    /// the playing prompt fades out and every volume is restored); exit 0. A bad config file
    /// exits 78 before the server's INIT is answered (speech-dispatcher then reports the
    /// module as failed to load).
    static func run(_ args: [String]) throws -> Int32 {
        let signals = SignalTrap([SIGINT, SIGTERM, SIGHUP])
        signal(SIGPIPE, SIG_IGN)
        let r = try scanner.scan(args, verb: "speechd-module")
        if r.has("help") { print(Help.speechdModule); return 0 }
        guard r.positionals.count <= 1 else {
            throw UsageError("speechd-module takes at most one operand, the config file (see duckprompt speechd-module --help)")
        }
        let module = try SpeechdModule(configPath: r.positionals.first, server: try CommonOptions.server(r))
        signals.onSignal {
            module.stop()
            exit(0)
        }
        module.run()
        return 0
    }
}
