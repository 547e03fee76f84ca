import DuckPrompt
import FoundationEssentials
import Glibc

/// `duckprompt play` and `say` handing their prompt to a running `duckprompt serve`, which
/// starts it sooner than a new process can (Docs/cli.md, "Through the service"): the same
/// prompt the command would play, through the service's held connection. The choices are the
/// core's (`Handoff`); this file does the calls, on the command's thread, through the library's
/// `SessionBusClient`.
///
/// Order: as soon as the command line is read, a thread looks for the service (`Lookup`): when a
/// session bus is there and `serve` left its mark, one `Get` of the `Server` property from the
/// service's name, never activating it (no owner: the command plays the prompt itself; another
/// sound server than the command's: itself too); the reply's sender is the owner.
/// Meanwhile the options are validated and the audio opened here, as the command's own path
/// does (so a bad option or a missing file gets the same message and status, and no prompt is
/// asked of the service); a regular file is handed over unread, its audio checked by the
/// service, and checked here only when the service refuses it (for the command's own message);
/// then, subscribed first to the
/// service's `PromptFinished` and to its name's `NameOwnerChanged` (sent before the call, so no
/// end is missed), `PlayFd` with the audio's descriptor or `Say` with the text, with the options
/// given on the command line and `stop-with-caller` (the prompt stops if this process dies).
/// It waits for that prompt's `PromptFinished` in `poll(2)` on the bus and on the signal trap's
/// wake-up: SIGINT, SIGTERM or SIGHUP (or the parent's exit under `--exit-with-parent`) sends
/// `Cancel(id)` and waits for the end.
enum ServiceHandoff {
    /// What became of the attempt.
    enum Result {
        /// Handed over (or refused by the service): exit with this status.
        case handled(Int32)
        /// Play it here; with the sources already opened (standard input read), if any.
        case local([any PromptSource]?)
    }

    /// How long the bus daemon may take to say who owns the name and the service its server:
    /// no answer by then, the command plays the prompt itself.
    static let lookupTimeoutMs = 300
    /// How long the service may take to answer a prompt call (it reads a `PlayFd` descriptor
    /// within 10 s, `PromptLimits.descriptorSeconds`, and answers once the prompt is queued).
    static let callTimeoutMs = 15_000
    /// After `Cancel`, how long beyond the prompt's release the command waits for its end.
    static let cancelGraceMs = 3_000

    /// The look for a service (`Service.find`), begun on a thread of its own as soon as the
    /// command line is read, so that its round trips to the bus daemon overlap the reading of
    /// the config file and the opening of the audio, on the command's own path as on the way
    /// to the service. The thread is started after the signal trap, so it blocks the same
    /// signals.
    final class Lookup: @unchecked Sendable {
        /// Where the prompt may go (not `.local`).
        let route: Handoff.Route
        private let condition = Condition()
        private var done = false
        private var found: Service?

        private init(route: Handoff.Route) { self.route = route }

        /// Begins the look when the prompt may be handed over (`Handoff.route`); nil when it
        /// plays in the command.
        /// - Parameters:
        ///   - given: the long names of the options given on the command line.
        ///   - files, texts: `play`'s FILE arguments, and how many texts the prompt says.
        static func begin(given: Set<String>, files: [String], texts: Int) -> Lookup? {
            let route = Handoff.route(given: given, files: files, texts: texts,
                                      environment: Environment.values("DUCKPROMPT_DEBUG", "DUCKPROMPT_DEVICE"))
            // No `duckprompt serve` left its mark (or its process is gone): no look on the bus.
            if case .local = route { return nil }
            guard ServiceMark.mayBeRunning() else { return nil }
            let lookup = Lookup(route: route)
            startThread {
                let service = Service.find()
                lookup.condition.withLock {
                    lookup.found = service
                    lookup.done = true
                }
                lookup.condition.broadcast()
            }
            return lookup
        }

        /// The service found, once the look is over (its connection now the caller's, on one
        /// thread at a time); nil for none.
        func wait() -> Service? {
            condition.withLock {
                while !done { condition.waitLocked() }
                return found
            }
        }
    }

    /// Hands the prompt over if `lookup` found a service on the same sound server.
    /// - Parameters:
    ///   - lookup: begun when the command line was read; nil: the prompt plays in the command.
    ///   - given: the options given on the command line, and their words (sent as the
    ///     service's keys: the service applies the same config file).
    ///   - texts: the prompt's texts (`say -`'s text read already).
    ///   - options: the options over the config file's (validated here, as the command's own
    ///     path does first).
    ///   - keepAwake: `--keep-awake`'s seconds: at the prompt's `PromptStarted` the service is
    ///     asked to keep its sink awake that long (`KeepAwake`), and once it played the command
    ///     stays on the bus until then (the service ends it when the command leaves).
    /// - Throws: what opening the audio throws (`DuckPrompt.sources`), `CancellationError` when a
    ///   signal came while standard input was read, and `options.validate()`'s errors.
    static func attempt(_ lookup: Lookup?, given: [(name: String, value: String?)], texts: [String],
                        options: PlayOptions, keepAwake: Int? = nil, signals: SignalTrap,
                        cancellation: PlayCancellation) throws -> Result {
        guard let lookup else { return .local(nil) }
        let route = lookup.route
        try options.validate()
        var (keys, fromSink) = try serviceKeys(given, options: options)
        // The service's KeepAwake keeps the sink it routes to, not the one PULSE_SINK names.
        if keepAwake != nil, fromSink != nil { return .local(nil) }
        keys[Handoff.stopWithCaller] = .bool(true)
        // A regular file is opened here and handed over unread: the service checks its audio
        // (this process then loads no libsndfile). Anything else (standard input, a FIFO, a
        // file that cannot be opened, an empty one, one larger than the service reads from a
        // descriptor) is opened and checked here, as the command's own path opens it.
        var sources: [any PromptSource]? = nil
        var descriptor: Int32? = nil
        defer { if let descriptor { close(descriptor) } }
        if case .file(let file) = route {
            descriptor = AudioSource.unreadDescriptor(path: file)
            if descriptor == nil {
                sources = try DuckPrompt.sources(files: [file], say: [], voice: nil, wordsPerMinute: nil,
                                                 cancellation: cancellation)
            }
        } else {
            try SpeechSource.checkLength(texts)
        }
        // A file larger than the service reads from a descriptor (it would answer
        // LimitsExceeded after reading 64 MiB) plays here, streamed from the disk.
        if let size = (sources?.first as? AudioSource)?.fileSize, size > AudioSource.inputLimit {
            return .local(sources)
        }
        // A signal meanwhile: the command's own path ends at once (CancellationError).
        guard !cancellation.isCancelled, let service = lookup.wait() else { return .local(sources) }
        let call: Service.Call
        if let descriptor {
            call = .playFd(descriptor)
        } else if let audio = sources?.first as? AudioSource {
            // No /proc, no memory for a memfd: played here.
            guard let fd = try? audio.handOverDescriptor() else { return .local(sources) }
            descriptor = fd
            call = .playFd(fd)
        } else {
            call = .say(texts[0])
        }
        let verdict = service.play(call, options: keys, releaseMs: options.releaseMs, keepAwake: keepAwake,
                                   signals: signals, cancellation: cancellation)
        switch verdict {
        case .playLocally:
            return .local(sources)
        case .exit(let status, let lines):
            // The service refused the unread file's audio: checked here, so that the message
            // and status are the command's own (what opening it throws); the service's, if
            // this finds nothing wrong.
            if [65, 66].contains(status), sources == nil, case .file(let file) = route {
                _ = try DuckPrompt.sources(files: [file], say: [], voice: nil, wordsPerMinute: nil,
                                           cancellation: cancellation)
            }
            printLines(lines, status: status, fromSink: fromSink)
            if status == 0, let until = service.keepAwakeUntil { service.stay(until: until, cancellation: cancellation) }
            return .handled(status)
        }
    }

    /// Prints the service's lines as the command's own: a sink named by PULSE_SINK that is not
    /// there said as the command says it.
    private static func printLines(_ lines: [String], status: Int32, fromSink: String?) {
        for line in lines {
            DuckPromptCLI.printError(fromSink != nil && status == 69 && lines.count == 1 && line.contains(fromSink!)
                                     ? line + " (from $PULSE_SINK)" : line)
        }
    }

    /// The options given as the service's keys, and PULSE_SINK as `device` (with its name), as
    /// the command's own path takes it: when neither -d nor the config file names a sink (the
    /// service reads its own environment, not the command's).
    /// - Throws: what reading an option's words throws (`OptionValue.value`).
    private static func serviceKeys(_ given: [(name: String, value: String?)],
                                    options: PlayOptions) throws -> (keys: [String: BusValue], fromSink: String?) {
        var keys = try busOptions(given)
        let fromSink = options.device == nil ? DuckPrompt.defaultRequest().flatMap { _ in Environment.value("PULSE_SINK") } : nil
        if let fromSink { keys["device"] = .string(fromSink) }
        return (keys, fromSink)
    }

    /// What the service's estimate came to (`DryRun`).
    enum EstimateAnswer {
        /// Its fields, in `PromptEstimate.keys`' order.
        case answered([(key: String, value: PromptEstimate.EstimateValue)])
        /// Refused (printed already): exit with this status.
        case exit(Int32)
        /// No service, or one that cannot estimate this prompt: estimate it here.
        case local
    }

    /// `play --dry-run` and `say --dry-run` where the real command would hand its prompt over:
    /// the service's `Estimate` (the file's absolute path) or `EstimateSay`, with the same
    /// options `attempt` would send, so the answer is the path's that would play it. Standard
    /// input (`-`), an `AccessDenied` (a sandboxed command), an older service without the
    /// methods: `.local`. The caller opened and checked the audio first, as `attempt` does.
    static func estimate(_ lookup: Lookup?, given: [(name: String, value: String?)], texts: [String],
                         options: PlayOptions, cancellation: PlayCancellation) throws -> EstimateAnswer {
        guard let lookup else { return .local }
        let (keys, fromSink) = try serviceKeys(given, options: options)
        let member: String
        let arguments: (BusWriter) throws -> Void
        switch lookup.route {
        case .local: return .local
        case .file(let file):
            guard file != "-" else { return .local }
            let path = file.hasPrefix("/") ? file : FileManager.default.currentDirectoryPath + "/" + file
            member = "Estimate"
            arguments = { try $0.append(.strings([path])); try $0.append(.dictionary(keys)) }
        case .text:
            member = "EstimateSay"
            arguments = { try $0.append(.string(texts[0])); try $0.append(.dictionary(keys)) }
        }
        guard !cancellation.isCancelled, let service = lookup.wait() else { return .local }
        do {
            let reply = try service.bus.request(service.owner, Handoff.objectPath, Handoff.interface, member,
                                                timeoutMs: callTimeoutMs, writing: arguments)
            var values: [String: PromptEstimate.EstimateValue] = [:]
            for (key, value) in try reply.reader.readOptions() {
                switch value {
                case .string(let word): values[key] = .text(word)
                case .uint64(let us): values[key] = .micros(Int(clamping: us))
                default: continue
                }
            }
            return .answered(PromptEstimate.fields(from: values))
        } catch let failure as BusCallFailure {
            switch Handoff.refused(name: failure.name, message: failure.message, timedOut: failure.timedOut) {
            case .playLocally: return .local
            case .exit(let status, let lines):
                printLines(lines, status: status, fromSink: fromSink)
                return .exit(status)
            }
        } catch {
            DuckPromptCLI.printError("duckprompt serve's estimate could not be read: \(error)")
            return .exit(70)
        }
    }

    /// The options given, as the service's keys (`PromptOption.busKey`, of its `busType`).
    /// - Throws: what reading an option's words throws (`OptionValue.value`).
    private static func busOptions(_ given: [(name: String, value: String?)]) throws -> [String: BusValue] {
        var keys: [String: BusValue] = [:]
        for option in PromptOption.all where given.contains(where: { $0.name == option.name }) {
            let words = given.filter { $0.name == option.name }.compactMap(\.value)
            keys[option.busKey] = switch try OptionValue.value(option, words: words) {
            case .whole(let number): .uint32(UInt32(clamping: number))
            case .gain(let gain): .double(gain.value)
            case .word(let word): .string(word)
            case .words(let words): .strings(words)
            case .properties(let map): .stringMap(map)
            case .flag(let on): .bool(on)
            }
        }
        return keys
    }

    /// A `duckprompt serve` on the session bus, on the command's sound server.
    final class Service: @unchecked Sendable {
        let bus: SessionBusClient
        /// Its unique bus name.
        let owner: String
        /// `PromptFinished` per prompt id: outcome and message.
        private var finished: [UInt64: (outcome: String, message: String)] = [:]
        /// The bus name lost its owner.
        private var left = false
        /// When each prompt's `PromptStarted` came (subscribed under `--keep-awake`).
        private var started: [UInt64: ContinuousClock.Instant] = [:]
        /// Until when the service keeps the prompt's sink awake (`KeepAwake` was asked): the
        /// command stays on the bus until then (`stay(until:cancellation:)`).
        private(set) var keepAwakeUntil: ContinuousClock.Instant?

        enum Call {
            case playFd(Int32)
            case say(String)
        }

        private init(bus: SessionBusClient, owner: String) {
            self.bus = bus
            self.owner = owner
        }

        /// The service, if a session bus is there, a process owns the name and its `Server`
        /// is the command's (`ServerOptions.named` of no `-s`); nil otherwise, or when any of
        /// it cannot be asked. One call after the connection's own handshake: `Get` of `Server`
        /// from the well-known name, never activating it (no owner: the bus daemon's
        /// `ServiceUnknown` at once); the reply's sender is the owner's unique name.
        static func find() -> Service? {
            guard SessionBusClient.mayExist, let bus = try? SessionBusClient(),
                  let reply = try? bus.request(Handoff.busName, Handoff.objectPath, "org.freedesktop.DBus.Properties", "Get",
                                               timeoutMs: lookupTimeoutMs, autoStart: false, writing: { writer in
                                                   try writer.append(.string(Handoff.interface))
                                                   try writer.append(.string("Server"))
                                               }),
                  case .string(let server)? = try? reply.reader.readVariant(),
                  server == ServerOptions().named else { return nil }
            let owner = reply.reader.sender
            guard owner.hasPrefix(":") else { return nil }
            return Service(bus: bus, owner: owner)
        }

        /// Queues the prompt and waits for its end; with `keepAwake`, asks `KeepAwake(seconds)`
        /// when the prompt's `PromptStarted` comes (`keepAwakeUntil`).
        func play(_ call: Call, options: [String: BusValue], releaseMs: Int, keepAwake: Int?, signals: SignalTrap,
                  cancellation: PlayCancellation) -> Handoff.Verdict {
            do {
                if keepAwake != nil {
                    try bus.subscribe(match: Handoff.startedMatch(owner: owner), waiting: false) { [unowned self] signal in
                        guard let id = try? signal.readUInt64() else { return }
                        started[id] = .now
                    }
                }
                try bus.subscribe(match: Handoff.finishedMatch(owner: owner), waiting: false) { [unowned self] signal in
                    guard let id = try? signal.readUInt64(), let outcome = try? signal.readString(),
                          let message = try? signal.readString() else { return }
                    finished[id] = (outcome, message)
                }
                try bus.subscribe(match: Handoff.ownerMatch, waiting: false) { [unowned self] signal in
                    guard (try? signal.readString()) != nil, (try? signal.readString()) != nil,
                          let new = try? signal.readString(), new != owner else { return }
                    left = true
                }
            } catch {
                return .playLocally("\(error)")
            }
            let id: UInt64
            do {
                let (member, method): (String, (BusWriter) throws -> Void) = switch call {
                case .playFd(let fd): ("PlayFd", { try $0.appendDescriptor(fd); try $0.append(.dictionary(options)) })
                case .say(let text): ("Say", { try $0.append(.string(text)); try $0.append(.dictionary(options)) })
                }
                let reply = try bus.request(owner, Handoff.objectPath, Handoff.interface, member,
                                            timeoutMs: callTimeoutMs, writing: method)
                id = try reply.reader.readUInt64()
            } catch let failure as BusCallFailure {
                return Handoff.refused(name: failure.name, message: failure.message, timedOut: failure.timedOut)
            } catch {
                return .exit(70, ["duckprompt serve's answer could not be read: \(error)"])
            }
            do {
                let wake = cancellation.wakeDescriptor()
                // Under --keep-awake, the wait stops once at the prompt's start to ask KeepAwake.
                var keepAwakeAsked = keepAwake == nil
                var end = try bus.dispatch(until: nil, wake: wake, done: {
                    finished[id] != nil || left || (!keepAwakeAsked && started[id] != nil)
                })
                while end == .done, !keepAwakeAsked, let start = started[id], !left {
                    keepAwakeAsked = true
                    askKeepAwake(seconds: keepAwake ?? 0, from: start)
                    if finished[id] != nil { break }
                    end = try bus.dispatch(until: nil, wake: wake, done: { finished[id] != nil || left })
                }
                if end == .woken {
                    keepAwakeUntil = nil
                    let signal = signals.received ?? SIGTERM
                    _ = try? bus.call(owner, Handoff.objectPath, Handoff.interface, "Cancel", [.uint64(id)],
                                      timeoutMs: lookupTimeoutMs * 4) { _ in }
                    let deadline = ContinuousClock.now + .milliseconds(releaseMs + cancelGraceMs)
                    guard try bus.dispatch(until: deadline, wake: nil, done: { finished[id] != nil || left }) == .done else {
                        return Handoff.cancelUnanswered(signal: signal)
                    }
                    guard let end = finished[id] else { return .exit(128 + signal, []) }
                    return Handoff.finished(outcome: end.outcome, message: end.message, signal: signal)
                }
            } catch {
                return Handoff.serviceLeft
            }
            guard let end = finished[id] else { return Handoff.serviceLeft }
            if end.outcome != "played" { keepAwakeUntil = nil }
            return Handoff.finished(outcome: end.outcome, message: end.message)
        }

        /// `KeepAwake(seconds)`, its time counted from `start` (the prompt's `PromptStarted`);
        /// refused or unanswered, a line on stderr and no keep-awake.
        private func askKeepAwake(seconds: Int, from start: ContinuousClock.Instant) {
            do {
                _ = try bus.call(owner, Handoff.objectPath, Handoff.interface, "KeepAwake", [.uint32(UInt32(seconds))],
                                 timeoutMs: lookupTimeoutMs * 4) { _ in }
                keepAwakeUntil = start + .seconds(seconds)
            } catch let error as DuckPromptError {
                DuckPromptCLI.printError("--keep-awake: \(error.message)")
            } catch {
                DuckPromptCLI.printError("--keep-awake: \(error)")
            }
        }

        /// Stays on the bus until `deadline` (the service keeps the sink awake while its caller
        /// is there), a signal, or the service's leaving.
        func stay(until deadline: ContinuousClock.Instant, cancellation: PlayCancellation) {
            _ = try? bus.dispatch(until: deadline, wake: cancellation.wakeDescriptor(), done: { left })
        }
    }
}
