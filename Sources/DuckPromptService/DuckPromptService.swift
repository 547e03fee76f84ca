import CBusObject
import DuckPrompt
import Glibc

/// `duckprompt serve`: the session-bus front end over one held `Prompter` (Docs/dbus.md).
/// Each method call is answered on the bus's thread (`BusConnection`); the prompter's events
/// become the `PromptStarted` and `PromptFinished` signals; one line per prompt goes to
/// standard error (the journal, under systemd).
///
/// Bus name, object path and interface: `busName`, `objectPath`, `interface`. Errors are
/// `io.github.duckprompt.DuckPrompt1.Error.<Code>` (`errorName(for:)`) carrying the command's
/// one-line message.
public final class DuckPromptService: Sendable {
    public static let busName = "io.github.duckprompt.DuckPrompt1"
    public static let objectPath = "/io/github/duckprompt/DuckPrompt1"
    public static let interface = "io.github.duckprompt.DuckPrompt1"

    /// The D-Bus error name of a `DuckPromptError`'s code: `…Error.NoInput`,
    /// `UnsupportedData`, `Usage`, `Unavailable`, `Dropped`, `Internal`, `Config`.
    public static func errorName(for code: DuckPromptError.Code) -> String {
        let name = switch code {
        case .usage: "Usage"
        case .unsupportedData: "UnsupportedData"
        case .noInput: "NoInput"
        case .unavailable: "Unavailable"
        case .internal: "Internal"
        case .config: "Config"
        case .dropped: "Dropped"
        }
        return "\(interface).Error.\(name)"
    }

    private let prompter: Prompter
    /// Where the service's async work runs (the events, the route changes): one
    /// thread of its own, never Dispatch's global queues, whose workqueue monitor would wake
    /// an idle service every second.
    private let executor = ThreadExecutor()
    private let server: ServerOptions
    nonisolated(unsafe) private var bus: BusConnection!
    private let version: String
    private let lock = Lock()
    /// A prompt not yet finished: who asked for it, and what it plays (for the line logged
    /// when it ends).
    private struct Record {
        /// The caller's unique bus name (`sd_bus_message_get_sender`).
        var owner: String
        var name: String
    }
    /// Every prompt not yet finished. Lock held; a prompt's record is made under the same hold
    /// as its `play` call, so its end (`forward`) always finds it.
    nonisolated(unsafe) private var records: [UInt64: Record] = [:]
    /// Per client, its `PlayFd` descriptors still being read (not yet prompts): they count
    /// toward its limit, or a client could hold a reading thread per call. Lock held.
    nonisolated(unsafe) private var reading: [String: Int] = [:]
    /// The `PlayFd` calls whose descriptor is still being read, by a token of their own: the
    /// reading thread answers one when it is done, or `run()` does when the service stops
    /// first. Lock held.
    nonisolated(unsafe) private var unread: [UInt64: BusConnection.HeldCall] = [:]
    nonisolated(unsafe) private var nextUnread: UInt64 = 0
    /// The callers that called `WatchRoute` and are still on the bus: while any is, the
    /// service does not leave on `--exit-idle`, so none misses a `RouteChanged`. Bus thread.
    nonisolated(unsafe) private var routeWatchers: Set<String> = []

    /// Connects to the sound server (a held `Prompter`) and the session bus, and takes the
    /// bus name.
    /// - Throws: `DuckPromptError(.unavailable)` when there is no session bus or the name is
    ///   taken; what `Prompter.init(server:)` throws.
    public init(version: String, server: ServerOptions = ServerOptions()) throws {
        self.version = version
        self.server = server
        prompter = try Prompter(server: server)
        // A prompt of a service killed mid-duck (kill -9) left its journal: repaired now, as
        // every verb does in passing, not at the next prompt.
        for line in DuckPrompt.recoverInPassing(server: server) { serviceLog(line) }
        bus = try BusConnection(name: Self.busName, path: Self.objectPath, interface: Self.interface,
                                version: version) { [unowned self] method, call in
            self.answer(method, call)
        }
        bus.onNameLost = { [unowned self] name in routeWatchers.remove(name) }
    }

    /// Serves until `stop()` (or until `exitIdle` seconds passed with no call and no prompt),
    /// then cancels what still plays and waits until every volume is restored.
    /// - Throws: `DuckPromptError(.unavailable)` when the session bus goes away.
    public func run(exitIdle: Double? = nil) throws {
        let forwarding = executor.start { [self] in
            for await event in prompter.events() { forward(event) }
        }
        // RouteChanged: the sinks followed from the server's events (`watchDevices`; no
        // polling on either server), a signal each time the routed sink changes.
        let watching = executor.start { [self] in
            var last: String? = nil
            do {
                for try await update in DuckPrompt.watchDevices(config: try DuckPromptConfig.load(), server: server) {
                    let route = update.listing.route
                    let sink = route?.sink.name ?? ""
                    if last != nil, sink != last {
                        bus.emit("RouteChanged", [.string(sink), .string(route?.classification.kind.rawValue ?? ""),
                                                  .string(route?.reason ?? update.listing.routeError?.message ?? "")])
                    }
                    last = sink
                }
            } catch {
                serviceLog("route changes no longer followed: \(error)")
            }
        }
        defer { watching.cancel() }
        let served = Result { try bus.run(idleTimeout: exitIdle) { [self] in
            routeWatchers.isEmpty && lock.withLock { records.isEmpty && unread.isEmpty }
        } }
        // A descriptor still being read is not played: its caller hears so before the exit.
        let unanswered = lock.withLock { () -> [BusConnection.HeldCall] in
            defer { unread.removeAll() }
            return Array(unread.values)
        }
        for held in unanswered {
            bus.answer(held, Self.failure(DuckPromptError(.unavailable,
                "duckprompt serve stopped before the passed descriptor was read")))
        }
        // Every prompt cancelled: a playing one fades out and its duck is ramped back; the
        // events end once the last has finished, and their signals go out before the exit.
        prompter.close()
        _ = executor.wait { try await forwarding.value }
        bus.sendQueued()
        try served.get()
    }

    /// Ends `run()`: any thread (a signal handler's thread).
    public func stop() { bus.stop() }

    // MARK: - Calls

    private func answer(_ method: dp_bus_method, _ call: BusReader) -> BusConnection.Answer {
        do {
            switch method {
            case DP_BUS_PLAY:
                let files = try call.readStrings()
                // A sandboxed caller may not borrow the service's rights to read host files:
                // one answer for every path, before any is looked at (nothing to probe).
                if let why = CallerSandbox.verdict(CallerSandbox.facts(of: call.senderPID)) {
                    throw AccessDenied("Play by path is refused: the caller is sandboxed (\(why)); "
                                       + "pass the file's descriptor with PlayFd, or the text with Say")
                }
                // A relative path would be read from the service's working directory, not the
                // caller's (under D-Bus activation, /): refused, not guessed.
                if let relative = files.first(where: { !$0.hasPrefix("/") }) {
                    throw DuckPromptError(.usage, "'\(relative)' is not an absolute path: the service cannot know "
                                          + "the caller's working directory")
                }
                let options = try readOptions(call)
                try admit(call.sender)
                // The service's rights are the user's: only regular files it may read, never a
                // FIFO or a device, whose open or read would hold the bus thread.
                let sources = try files.map { try AudioSource(regularFile: $0) }
                try PromptLimits.checkDuration(sources.map(\.duration))
                return try play(sources, options.play, by: call.sender, name: files.joined(separator: " "))
            case DP_BUS_PLAY_FD:
                let fd = try call.readDescriptor()
                let options: ServiceOptions
                do {
                    options = try readOptions(call)
                    try admit(call.sender, reading: true)
                } catch {
                    close(fd)
                    throw error
                }
                // Read on a thread of its own (a pipe may take its time); answered from there,
                // or by `run()` when the service stops first.
                let sender = call.sender
                let token = lock.withLock { () -> UInt64 in
                    nextUnread += 1
                    unread[nextUnread] = bus.hold(call)
                    return nextUnread
                }
                startThread { [self] in
                    defer { close(fd) }
                    let opened = Result { () throws -> AudioSource in
                        let source = try AudioSource(descriptor: fd, name: "passed descriptor",
                                                     deadline: .now + .seconds(PromptLimits.descriptorSeconds))
                        try PromptLimits.checkDuration([source.duration])
                        return source
                    }
                    // Queued only while its call is still unanswered: once `run()` answered it,
                    // nothing plays.
                    let reply = lock.withLock { () -> (BusConnection.HeldCall, BusConnection.Answer)? in
                        let left = reading[sender, default: 1] - 1
                        reading[sender] = left > 0 ? left : nil
                        guard let held = unread.removeValue(forKey: token) else { return nil }
                        do {
                            return (held, try playLocked([opened.get()], options.play, by: sender, name: "passed descriptor"))
                        } catch {
                            return (held, Self.failure(error))
                        }
                    }
                    if let (held, answer) = reply { bus.answer(held, answer) }
                }
                return .later
            case DP_BUS_SAY:
                let text = try call.readString()
                let options = try readOptions(call)
                try admit(call.sender)
                // Its length (a limit) is checked before libespeak-ng is loaded.
                let speech = try SpeechSource(text: text, voice: options.voice, wordsPerMinute: options.wordsPerMinute)
                return try play([speech], options.play, by: call.sender,
                                name: "text of \(text.unicodeScalars.count) characters")
            case DP_BUS_CANCEL:
                let id = try call.readUInt64()
                prompter.cancel(Prompter.PromptID(id))
                return .values([])
            case DP_BUS_ROUTE:
                let listing = try prompter.devices(config: try DuckPromptConfig.load())
                guard let route = listing.route else {
                    throw listing.routeError ?? DuckPromptError(.unavailable, "no sink for a prompt")
                }
                return .values([.string(route.sink.name), .string(route.classification.kind.rawValue),
                                .string(route.rule), .string(route.reason)])
            case DP_BUS_WATCH_ROUTE:
                routeWatchers.insert(call.sender)
                return .values([])
            case DP_BUS_DEVICES:
                let listing = try prompter.devices(config: try DuckPromptConfig.load())
                return .values([.dictionaries(listing.sinkReports.map(\.busDictionary))])
            default:
                throw DuckPromptError(.usage, "not implemented yet")
            }
        } catch {
            return Self.failure(error)
        }
    }

    /// The error answer for what a call threw: a limit is `…Error.LimitsExceeded`, another
    /// `DuckPromptError` `…Error.<Code>` (`errorName(for:)`).
    static func failure(_ error: any Error) -> BusConnection.Answer {
        switch error {
        case let error as AccessDenied:
            .error(name: "\(interface).Error.AccessDenied", message: error.message)
        case let error as DuckPromptError where error.limit != nil:
            .error(name: "\(interface).Error.LimitsExceeded", message: error.message)
        case let error as DuckPromptError:
            .error(name: errorName(for: error.code), message: error.message)
        case let error as BusValueTypeError:
            .error(name: errorName(for: .usage),
                   message: "option '\(error.key)' has a value of type \(error.signature), which no option takes")
        default:
            .error(name: errorName(for: .internal), message: "\(error)")
        }
    }

    /// Refuses a client that has `PromptLimits.promptsPerClient` prompts unfinished, its
    /// descriptors still being read counted; `reading`: the call is a `PlayFd`, counted as
    /// being read from now on when it is taken.
    private func admit(_ sender: String, reading isRead: Bool = false) throws {
        try lock.withLock {
            let count = records.values.filter { $0.owner == sender }.count + reading[sender, default: 0]
            try PromptLimits.admit(unfinished: count, client: sender)
            if isRead { reading[sender, default: 0] += 1 }
        }
    }

    /// The call's options; a `device` that names no sink now is `Error.Unavailable` at the call
    /// (the sinks as the prompter's copy of the server has them; a sink that comes later is not
    /// waited for), so that nothing is queued for a prompt that cannot be routed.
    private func readOptions(_ call: BusReader) throws -> ServiceOptions {
        let options = try ServiceOptions.parse(try call.readOptions(), defaults: PlayOptions(config: try DuckPromptConfig.load()))
        if let device = options.play.device {
            let listing = try prompter.devices(request: device, config: options.play.config)
            if listing.route == nil {
                throw listing.routeError ?? DuckPromptError(.unavailable, "no usable sink for \(device)")
            }
        }
        return options
    }

    /// Queues the prompt and records who asked for it, under one hold of the lock (its end,
    /// in `forward`, waits for the record).
    private func play(_ sources: [any PromptSource], _ options: PlayOptions, by sender: String,
                      name: String) throws -> BusConnection.Answer {
        try lock.withLock { try playLocked(sources, options, by: sender, name: name) }
    }

    /// `play`, lock held.
    private func playLocked(_ sources: [any PromptSource], _ options: PlayOptions, by sender: String,
                            name: String) throws -> BusConnection.Answer {
        // A prompt the queue drops at once is Error.Dropped at the call, with no id.
        let id = try prompter.play(sources, options: options, dropAtCall: true)
        records[id.value] = Record(owner: sender, name: name)
        return .values([.uint64(id.value)])
    }

    // MARK: - Events

    private func forward(_ event: Prompter.Event) {
        switch event {
        case .queued:
            break
        case .started(let id, let start):
            bus.emit("PromptStarted", [.uint64(id.value), .string(start.sink), .string(start.kind.rawValue),
                                       .uint32(UInt32(clamping: start.preRollMs))])
        case .finished(let id, let outcome):
            let (word, message) = Self.describe(outcome)
            let record = lock.withLock { records.removeValue(forKey: id.value) }
            serviceLog("prompt \(id.value) (\(record?.name ?? "?")) from \(record?.owner ?? "?"): \(word)\(message.isEmpty ? "" : ": \(message)")")
            // What became of the MPRIS players (paused, resumed), and what could not be reached.
            if case .played(let report) = outcome {
                for line in report.recoveryNotes + report.playerNotes { serviceLog("prompt \(id.value): \(line)") }
            }
            bus.emit("PromptFinished", [.uint64(id.value), .string(word), .string(message)])
        }
    }

    /// `PromptFinished`'s outcome word and message.
    static func describe(_ outcome: Prompter.Outcome) -> (String, String) {
        switch outcome {
        case .played(let report):
            ("played", (["on \(report.route.sink.name)"] + report.warnings).joined(separator: "; "))
        case .interrupted(let e): ("interrupted", e.message)
        case .replaced(let e): ("replaced", e.message)
        case .dropped(let e): ("dropped", e.message)
        case .expired(let e): ("expired", e.message)
        case .cancelled: ("cancelled", "")
        case .failed(let e): ("failed", e.message)
        }
    }
}

/// A call the caller has no right to make (`…Error.AccessDenied`): Play by path from a
/// sandboxed caller (`CallerSandbox`).
struct AccessDenied: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

/// One line on standard error, `duckprompt serve: …`.
func serviceLog(_ line: String) {
    StandardStreams.writeError("duckprompt serve: \(line)\n")
}
