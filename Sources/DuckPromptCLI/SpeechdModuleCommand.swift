import DuckPrompt
import DuckPromptSpeechd
import Glibc

/// `speechd-module [CONF]`: a speech-dispatcher output module (Sources/DuckPromptSpeechd/).
enum SpeechdModuleCommand {
    static let scanner = ArgumentScanner(valued: CommonOptions.valued, flags: ["help"], short: CommonOptions.short)

    /// Runs until the server says QUIT or closes the pipe, or SIGTERM, SIGINT, SIGHUP (then
    /// the playing prompt fades out and every volume is restored); exit 0. A bad config file
    /// (78), one that cannot be read (66) or no sound server (69) answers the server's INIT
    /// with `399` lines naming the problem (speech-dispatcher reports the module as not
    /// loaded), writes it on standard error and exits with that code.
    static func run(_ args: [String]) throws -> Int32 {
        let signals = SignalTrap([SIGINT, SIGTERM, SIGHUP])
        signal(SIGPIPE, SIG_IGN)
        let r = try scanner.scan(args, verb: "speechd-module")
        if r.has("help") { print(Help.speechdModule); return 0 }
        guard r.positionals.count <= 1 else {
            throw UsageError("speechd-module takes at most one operand, the config file (see duckprompt speechd-module --help)")
        }
        let module: SpeechdModule
        do {
            module = try SpeechdModule(configPath: r.positionals.first, server: try CommonOptions.server(r))
        } catch let error as DuckPromptError {
            SpeechdModule.refuse(error.message)
            throw error
        }
        signals.onSignal {
            module.stop()
            exit(0)
        }
        module.run()
        return 0
    }
}
