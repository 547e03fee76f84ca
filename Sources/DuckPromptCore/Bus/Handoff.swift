/// `duckprompt play` and `say` handing their prompt to a running `duckprompt serve`
/// (Docs/cli.md, "Through the service"): which invocations may, what they send, and what the
/// service's answers come to for the command, as exit statuses and the lines it prints. Pure:
/// the command's `ServiceHandoff` does the bus calls.
package enum Handoff {
    /// The service's bus name, object and interface (`DuckPromptService`'s).
    package static let busName = "io.github.duckprompt.DuckPrompt1"
    package static let objectPath = "/io/github/duckprompt/DuckPrompt1"
    package static let interface = "io.github.duckprompt.DuckPrompt1"

    /// The service's own key (not a prompt option): the prompt is cancelled when its caller
    /// leaves the bus (`ServiceOptions.splitStopWithCaller`); the command sets it.
    package static let stopWithCaller = "stop-with-caller"

    /// The command's options whose meaning is the command's own process: given, the command
    /// plays the prompt itself. `-s/--server`, `-n/--client-name` and `--timeout` are about its
    /// own connection to the sound server; `-v/--verbose` prints what only the process that
    /// played the prompt knows (the streams ducked, the players paused).
    package static let localOptions = ["no-service", "server", "client-name", "timeout", "verbose"]

    /// What the command hands over.
    package enum Route: Equatable, Sendable {
        /// Played by the command itself, for this reason (the first that applies).
        case local(String)
        /// One file (or `-`, standard input): `PlayFd` with its descriptor.
        case file(String)
        /// One text (`say`'s words, `say -`, one `--say`): `Say`.
        case text
    }

    /// Which way a prompt goes, before the bus is looked at.
    /// - Parameters:
    ///   - given: the long names of the options given (`verbose` for `-v`); `keep-awake` with
    ///     `device` plays here too (the service's `KeepAwake` keeps the sink it routes to).
    ///   - files: `play`'s FILE arguments.
    ///   - texts: how many texts the prompt says (`say`'s words count as one; `say -` too).
    ///   - environment: `DUCKPROMPT_DEBUG` (set: a trace of the duck that only the process that
    ///     ducks can write) and `DUCKPROMPT_DEVICE` (set and not empty: the command's routing,
    ///     which the service, reading its own environment, would not use) send it local.
    package static func route(given: Set<String>, files: [String], texts: Int,
                              environment: [String: String]) -> Route {
        if let option = localOptions.first(where: given.contains) {
            return .local(option == "no-service" ? "--no-service" : "--\(option) is the command's own")
        }
        // The service's KeepAwake keeps the sink it routes to, not the one -d names.
        if given.contains("keep-awake") && given.contains("device") {
            return .local("--keep-awake on the sink -d names is the command's own")
        }
        if environment["DUCKPROMPT_DEBUG"] != nil { return .local("DUCKPROMPT_DEBUG traces the command's own duck") }
        if let device = environment["DUCKPROMPT_DEVICE"], !device.allSatisfy({ $0 == " " || $0 == "\t" }) {
            return .local("DUCKPROMPT_DEVICE is the command's own")
        }
        switch (files.count, texts) {
        case (1, 0): return .file(files[0])
        case (0, 1): return .text
        default: return .local("a prompt of several parts")
        }
    }

    /// What the command does with an answer or a signal.
    package enum Verdict: Equatable, Sendable {
        /// Exit with this status, after printing each line as `duckprompt: LINE` on stderr.
        case exit(Int32, [String])
        /// Nothing was queued: play the prompt as if no service ran (the reason, for a trace).
        case playLocally(String)
    }

    /// A prompt call answered with an error (`Play`, `PlayFd`, `Say`; Docs/dbus.md "Errors"):
    /// the service's `Error.<Code>` is the command's exit status for that code with its
    /// message; `LimitsExceeded` (the service is busy with other clients' prompts),
    /// `AccessDenied` and the bus's own errors (the service left, an older service without
    /// the method) are played locally, since nothing was queued. No answer in time: exit 69 (a
    /// prompt may have been queued, so it is not played twice).
    /// - Parameters:
    ///   - name: the D-Bus error name; nil when none came (no answer).
    ///   - timedOut: no answer within the call's timeout.
    package static func refused(name: String?, message: String, timedOut: Bool) -> Verdict {
        if timedOut { return .exit(69, ["duckprompt serve did not answer: \(message)"]) }
        let prefix = interface + ".Error."
        guard let name, name.hasPrefix(prefix) else {
            return .playLocally("the bus answered \(name ?? "nothing"): \(message)")
        }
        let status: Int32? = switch name.dropFirst(prefix.count) {
        case "Usage": 64
        case "UnsupportedData": 65
        case "NoInput": 66
        case "Unavailable": 69
        case "Internal": 70
        case "Dropped": 75
        case "Config": 78
        default: nil
        }
        guard let status else { return .playLocally("duckprompt serve answered \(name): \(message)") }
        return .exit(status, [message])
    }

    /// The `; `-separated clauses of a `PromptFinished` message, empty ones left out. By hand:
    /// `split(separator: "; ")` is _StringProcessing's generic split, whose types took the
    /// handed-over command 0.24 ms to make at run time, after its prompt had played.
    static func clauses(of message: String) -> [String] {
        var clauses: [String] = []
        var start = message.startIndex, index = message.startIndex
        while index < message.endIndex {
            let next = message.index(after: index)
            if message[index] == ";", next < message.endIndex, message[next] == " " {
                if start < index { clauses.append(String(message[start..<index])) }
                start = message.index(after: next)
                index = start
            } else {
                index = next
            }
        }
        if start < message.endIndex { clauses.append(String(message[start...])) }
        return clauses
    }

    /// The prompt's `PromptFinished(id, outcome, message)`: `played` exits 0 printing the
    /// warnings after "on SINK" (`; `-separated), as the command prints its own; `interrupted`,
    /// `replaced`, `dropped`, `expired` exit 75 with the message, `failed` 69 (the audio was
    /// checked before the call, so what fails later is the sound server), `cancelled` (a Cancel
    /// from another client, or the service stopped) 75. `signal`: the one the command caught
    /// and asked `Cancel` for; then `cancelled` is 128 + signal, silent, as the command's own
    /// prompt stopped by it.
    package static func finished(outcome: String, message: String, signal: Int32? = nil) -> Verdict {
        switch outcome {
        case "played":
            return .exit(0, Array(clauses(of: message).dropFirst()))
        case "interrupted", "replaced", "dropped", "expired":
            return .exit(75, [message])
        case "failed":
            return .exit(69, [message])
        case "cancelled":
            if let signal { return .exit(128 + signal, []) }
            return .exit(75, ["the prompt was cancelled by duckprompt serve (a Cancel from another client, or the service stopped)"])
        default:
            return .exit(70, ["duckprompt serve ended the prompt with an unknown outcome '\(outcome)': \(message)"])
        }
    }

    /// The service's bus name lost its owner before the prompt's `PromptFinished` came.
    package static let serviceLeft = Verdict.exit(69, [
        "duckprompt serve left the bus before the prompt finished (stopped or died); what it ducked, it restores when it starts again",
    ])

    /// After a signal and `Cancel`, no `PromptFinished` within the time allowed.
    package static func cancelUnanswered(signal: Int32) -> Verdict {
        .exit(128 + signal, ["duckprompt serve did not confirm the cancel of the prompt in time"])
    }

    /// The bus match rule of the service's `PromptFinished` from its unique name `owner`.
    package static func finishedMatch(owner: String) -> String {
        "type='signal',sender='\(owner)',path='\(objectPath)',interface='\(interface)',member='PromptFinished'"
    }

    /// The bus match rule of the service's `PromptStarted` from its unique name `owner`
    /// (`--keep-awake` asks `KeepAwake` then).
    package static func startedMatch(owner: String) -> String {
        "type='signal',sender='\(owner)',path='\(objectPath)',interface='\(interface)',member='PromptStarted'"
    }

    /// The bus match rule of the service's name changing owner (leaving).
    package static let ownerMatch = "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
        + "interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(busName)'"
}
