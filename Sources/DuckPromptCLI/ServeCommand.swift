import DuckPrompt
import DuckPromptService
import Glibc

/// `serve [--exit-idle SECONDS]`: the D-Bus session service (Docs/dbus.md), in the foreground.
enum ServeCommand {
    static let scanner = ArgumentScanner(valued: CommonOptions.valued.union(["exit-idle"]), flags: ["help"],
                                         short: CommonOptions.short)

    /// Serves until SIGTERM, SIGINT or SIGHUP (then the playing prompt fades out, every volume
    /// is restored, exit 0), or until `--exit-idle` seconds passed with no call and no prompt.
    static func run(_ args: [String]) throws -> Int32 {
        let signals = SignalTrap([SIGINT, SIGTERM, SIGHUP])
        signal(SIGPIPE, SIG_IGN)
        let r = try scanner.scan(args, verb: "serve")
        if r.has("help") { print(Help.serve); return 0 }
        guard r.positionals.isEmpty else { throw UsageError("serve takes no operands (see duckprompt serve --help)") }
        let idle = try r.last("exit-idle").map { Double(try OptionValue.milliseconds($0, option: "exit-idle")) / 1000 }
        let service = try DuckPromptService(version: DuckPromptCLI.version, server: try CommonOptions.server(r))
        signals.onSignal { service.stop() }
        // The bus name is the service's now: `duckprompt play` may look for it (ServiceMark).
        let unmark = ServiceMark.write()
        defer { unmark?() }
        try service.run(exitIdle: idle)
        return 0
    }
}
