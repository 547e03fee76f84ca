import CBusObject
import DuckPrompt
import Glibc

/// `duckprompt serve`: the session-bus front end over one held `Prompter` (Docs/dbus.md).
/// Each method call is read on the bus's thread (`BusConnection`), which never waits: what may
/// wait is handed to the `CallWorker` and answered from there; the prompter's events
/// become the `PromptStarted` and `PromptFinished` signals; one line per prompt goes to
/// standard error (the journal, under systemd).
///
/// Bus name, object path and interface: `busName`, `objectPath`, `interface`. Errors are
/// `io.github.duckprompt.DuckPrompt1.Error.<Code>` (`errorName(for:)`) carrying the command's
/// one-line message.
public final class DuckPromptService: Sendable {
    public static let busName = Handoff.busName
    public static let objectPath = Handoff.objectPath
    public static let interface = Handoff.interface

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
        /// The caller's unique bus name (`BusReader.sender`).
        var owner: String
        var name: String
        /// Cancelled when its caller leaves the bus (the `stop-with-caller` key).
        var stopsWithCaller: Bool
    }
    /// Every prompt not yet finished. Lock held; a prompt's record is made under the same hold
    /// as its `play` call, so its end (`forward`) always finds it.
    nonisolated(unsafe) private var records: [UInt64: Record] = [:]
    /// A call whose work is handed off (`handOff`) and not yet answered.
    private struct Waiting {
        var held: BusConnection.HeldCall
        /// The caller's unique bus name.
        var sender: String
        /// It queues a prompt when its work is done: it counts toward the prompt limits.
        var makesPrompt: Bool
        /// The prompt stops when its caller leaves the bus (`stop-with-caller`).
        var stopsWithCaller = false
        /// Its caller left the bus meanwhile: a `stopsWithCaller` prompt is then not queued.
        var callerLeft = false
    }
    /// The calls handed off, by a token of their own: the work answers one when it is done, or
    /// `run()` does when the service stops first. Lock held.
    nonisolated(unsafe) private var waiting: [UInt64: Waiting] = [:]
    nonisolated(unsafe) private var nextToken: UInt64 = 0
    /// Whether a listing of the route's watch is said in `RouteChanged`; lock held.
    nonisolated(unsafe) private var announcement = RouteAnnouncement()
    /// How long `run()` waits for the route's first listing before it serves calls.
    static let firstRouteWaitMs = 1000
    /// The calls as the route's watch last saw them (`CallState`'s value); lock held.
    nonisolated(unsafe) private var calls = CallStatus()
    /// Who asked for the sink to be kept awake (`KeepAwake`): when it leaves the bus, the
    /// silence ends. Bus thread.
    nonisolated(unsafe) private var keepAwakeOwner: String?
    /// Where the calls' work runs, off the bus thread, in call order.
    private let worker = CallWorker()
    /// The worker's own connection to the bus daemon, to ask for a caller's pid
    /// (`GetConnectionUnixProcessID`) without a round trip on the bus thread. Worker thread.
    nonisolated(unsafe) private var daemon: SessionBusClient? = nil
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
        // A call's input (a descriptor read whole, up to 64 MiB; a text) is given back to the
        // system once done with, not kept for the service's life.
        unmapLargeAllocationsWhenFreed()
        prompter = try Prompter(server: server)
        // A prompt of a service killed mid-duck (kill -9) left its journal: repaired now, as
        // every verb does in passing, not at the next prompt.
        for line in DuckPrompt.recoverInPassing(server: server) { serviceLog(line) }
        bus = try BusConnection(name: Self.busName, path: Self.objectPath, interface: Self.interface,
                                version: version, server: server.named) { [unowned self] method, call in
            self.answer(method, call)
        }
        bus.onNameLost = { [unowned self] name in
            routeWatchers.remove(name)
            if keepAwakeOwner == name {
                keepAwakeOwner = nil
                _ = try? prompter.keepAwake(seconds: 0)
            }
            callerLeft(name)
        }
    }

    /// Serves until `stop()` (or until `exitIdle` seconds passed with no call and no prompt),
    /// then cancels what still plays and waits until every volume is restored.
    /// - Throws: `DuckPromptError(.unavailable)` when the session bus goes away.
    public func run(exitIdle: Double? = nil) throws {
        let forwarding = executor.start { [self] in
            for await event in prompter.events() { forward(event) }
        }
        // RouteChanged: the sinks followed from the server's events (`watchDevices`; no
        // polling on either server), a signal each time the routed sink changes; followed
        // again after the server went away (`RouteFollower`).
        let follower = RouteFollower()
        let firstListing = Latch()
        let watching = executor.start { [self] in
            await follower.run(server: server, prompter: prompter) { update in
                let route = update.listing.route
                let sink = route?.sink.name ?? ""
                let (said, last) = lock.withLock { () -> (Bool, String?) in
                    let before = announcement.last
                    return (announcement.listed(sink), before)
                }
                firstListing.open()
                DebugTrace.write("service: route \(sink.isEmpty ? "none" : sink), last \(last.map { $0.isEmpty ? "none" : $0 } ?? "nothing yet")\(said ? ": said" : "")")
                if said {
                    prompter.followRoute(sink)
                    bus.emit("RouteChanged", [.string(sink), .string(route?.classification.kind.rawValue ?? ""),
                                              .string(route?.reason ?? update.listing.routeError?.message ?? "")])
                }
                // CallState, with PropertiesChanged when it changed.
                lock.withLock { calls = update.listing.calls }
                bus.setCallState(update.listing.callState)
            }
        }
        // No call is served before the route is known (RouteAnnouncement), for at most
        // `firstRouteWaitMs`: a server that does not answer by then does not hold the calls up.
        firstListing.wait(upTo: .milliseconds(Self.firstRouteWaitMs))
        lock.withLock { announcement.startServing() }
        let served = Result { try bus.run(idleTimeout: exitIdle) { [self] in
            routeWatchers.isEmpty && !prompter.isKeepingAwake && lock.withLock { records.isEmpty && waiting.isEmpty }
        } }
        // The route's connection closed before the exit (its libpulse and libpipewire threads
        // joined), at most 2 s.
        follower.stop()
        watching.cancel()
        follower.waitClosed(upTo: .seconds(2))
        // A call whose work is not done is not played: its caller hears so before the exit.
        let unanswered = lock.withLock { () -> [BusConnection.HeldCall] in
            defer { waiting.removeAll() }
            return waiting.values.map(\.held)
        }
        for held in unanswered {
            bus.answer(held, Self.failure(DuckPromptError(.unavailable,
                "duckprompt serve stopped before the call was answered")))
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

    /// Answers a call on the bus thread, which never waits: its arguments are read here, and
    /// what may wait (the config file, files, the server, the caller's pid) is handed off
    /// (`handOff`). `Cancel` and `WatchRoute` are answered here.
    private func answer(_ method: dp_bus_method, _ call: BusReader) -> BusConnection.Answer {
        do {
            switch method {
            case DP_BUS_PLAY:
                let files = try call.readStrings()
                let (given, stops) = try ServiceOptions.splitStopWithCaller(try call.readOptions())
                try PromptLimits.checkFileCount(files.count)
                return try handOff(call, makesPrompt: true, stopsWithCaller: stops) { [self] sender in
                    try checkPaths(files, of: sender, in: "Play", otherwise: "pass the file's descriptor with PlayFd, "
                                   + "or the text with Say")
                    let options = try readOptions(given)
                    // The service's rights are the user's: only regular files it may read,
                    // never a FIFO or a device. Each is checked now and closed again, and
                    // opened when the prompt's turn comes: a waiting prompt holds no descriptor.
                    let sources = try files.map { try FileAtTurn(checking: $0) }
                    try PromptLimits.checkDuration(sources.map(\.duration))
                    return .prompt(sources, options, name: files.joined(separator: " "))
                }
            case DP_BUS_PLAY_FD:
                DebugTrace.write("service: PlayFd from \(call.sender)")
                let fd = try call.readDescriptor()
                do {
                    let (given, stops) = try ServiceOptions.splitStopWithCaller(try call.readOptions())
                    // Read on a thread of its own, not the worker's: a pipe may take its time
                    // (up to `PromptLimits.descriptorSeconds`), and the calls behind it would wait.
                    return try handOff(call, makesPrompt: true, stopsWithCaller: stops, ownThread: true) { [self] _ in
                        defer { close(fd) }
                        DebugTrace.write("service: PlayFd's thread began")
                        let options = try readOptions(given)
                        DebugTrace.write("service: PlayFd's options read")
                        let source = try AudioSource(descriptor: fd, name: "passed descriptor",
                                                     deadline: .now + .seconds(PromptLimits.descriptorSeconds))
                        try PromptLimits.checkDuration([source.duration])
                        DebugTrace.write("service: PlayFd's options and audio read")
                        return .prompt([source], options, name: "passed descriptor")
                    }
                } catch {
                    close(fd)
                    throw error
                }
            case DP_BUS_SAY:
                let text = try call.readString()
                let (given, stops) = try ServiceOptions.splitStopWithCaller(try call.readOptions())
                return try handOff(call, makesPrompt: true, stopsWithCaller: stops) { [self] _ in
                    let options = try readOptions(given)
                    // Its length (a limit) is checked before libespeak-ng is loaded.
                    let speech = try SpeechSource(text: text, voice: options.voice, wordsPerMinute: options.wordsPerMinute)
                    return .prompt([speech], options, name: "text of \(text.unicodeScalars.count) characters")
                }
            case DP_BUS_CANCEL:
                let id = try call.readUInt64()
                prompter.cancel(Prompter.PromptID(id))
                return .values([])
            case DP_BUS_ROUTE:
                return try handOff(call, makesPrompt: false) { [self] _ in
                    let listing = try prompter.devices(config: try DuckPromptConfig.load())
                    guard let route = listing.route else {
                        throw listing.routeError ?? DuckPromptError(.unavailable, "no sink for a prompt")
                    }
                    return .values([.string(route.sink.name), .string(route.classification.kind.rawValue),
                                    .string(route.rule), .string(route.reason)])
                }
            case DP_BUS_WATCH_ROUTE:
                routeWatchers.insert(call.sender)
                return .values([])
            case DP_BUS_ESTIMATE:
                let files = try call.readStrings()
                // The same options as Play's, `stop-with-caller` too (an estimate has nothing to stop).
                let given = try ServiceOptions.splitStopWithCaller(try call.readOptions()).options
                try PromptLimits.checkFileCount(files.count)
                return try handOff(call, makesPrompt: false) { [self] sender in
                    try checkPaths(files, of: sender, in: "Estimate", otherwise: "use EstimateSay")
                    let options = try readOptions(given, estimating: true)
                    let sources = try files.map { try FileAtTurn(checking: $0) }
                    return .values([Self.estimateValue(try prompter.estimate(sources, options: options))])
                }
            case DP_BUS_ESTIMATE_SAY:
                let text = try call.readString()
                let given = try ServiceOptions.splitStopWithCaller(try call.readOptions()).options
                return try handOff(call, makesPrompt: false) { [self] _ in
                    let options = try readOptions(given, estimating: true)
                    let speech = try SpeechSource(text: text, voice: options.voice, wordsPerMinute: options.wordsPerMinute)
                    return .values([Self.estimateValue(try prompter.estimate([speech], options: options))])
                }
            case DP_BUS_KEEP_AWAKE:
                let seconds = try call.readUInt32()
                // The caller is remembered here, on the bus thread (`onNameLost` reads it).
                keepAwakeOwner = seconds > 0 ? call.sender : nil
                return try handOff(call, makesPrompt: false) { [self] _ in
                    try prompter.keepAwake(seconds: Double(seconds), config: try DuckPromptConfig.load())
                    return .values([])
                }
            case DP_BUS_DEVICES:
                return try handOff(call, makesPrompt: false) { [self] _ in
                    let listing = try prompter.devices(config: try DuckPromptConfig.load())
                    return .values([.dictionaries(listing.sinkReports.map(\.busDictionary))])
                }
            default:
                throw DuckPromptError(.usage, "not implemented yet")
            }
        } catch {
            return Self.failure(error)
        }
    }

    /// What a handed-off call's work comes to.
    private enum Work {
        /// Answer with these values.
        case values([BusValue])
        /// Queue this prompt and answer its id (or the error `play` throws).
        case prompt([any PromptSource], PlayOptions, name: String)
    }

    /// A caller left the bus (bus thread): its prompts asked with `stop-with-caller` are
    /// cancelled (a playing one fades out, its duck released), and those still being worked
    /// on are not queued.
    private func callerLeft(_ name: String) {
        let ids = lock.withLock { () -> [UInt64] in
            for (token, call) in waiting where call.sender == name && call.stopsWithCaller {
                waiting[token]?.callerLeft = true
            }
            return records.filter { $0.value.owner == name && $0.value.stopsWithCaller }.map(\.key)
        }
        for id in ids.sorted() {
            serviceLog("prompt \(id): its caller \(name) left the bus (stop-with-caller): cancelled")
            prompter.cancel(Prompter.PromptID(id))
        }
    }

    /// Holds `call` for a later answer, counted toward its caller's limits (refused at once
    /// over them), and runs `work` on the worker (`ownThread`: on a thread of its own); then
    /// answers it, unless `run()` answered it first because the service stopped. A prompt is
    /// queued under the same hold of the lock that takes the call's token, so a call
    /// answered by `run()` never plays.
    /// - Throws: what `admitLocked` throws.
    private func handOff(_ call: BusReader, makesPrompt: Bool, stopsWithCaller: Bool = false, ownThread: Bool = false,
                         _ work: @escaping @Sendable (_ sender: String) throws -> Work) throws -> BusConnection.Answer {
        let sender = call.sender
        let token = try lock.withLock { () throws -> UInt64 in
            try admitLocked(sender, makesPrompt: makesPrompt)
            nextToken += 1
            waiting[nextToken] = Waiting(held: bus.hold(call), sender: sender, makesPrompt: makesPrompt,
                                         stopsWithCaller: stopsWithCaller)
            return nextToken
        }
        let job: @Sendable () -> Void = { [self] in
            let done = Result { try work(sender) }
            let reply = lock.withLock { () -> (BusConnection.HeldCall, BusConnection.Answer)? in
                guard let call = waiting.removeValue(forKey: token) else { return nil }
                let held = call.held
                do {
                    switch try done.get() {
                    case .values(let values):
                        return (held, .values(values))
                    case .prompt(let sources, let options, let name):
                        guard !call.callerLeft else {
                            throw DuckPromptError(.unavailable, "the caller left the bus before its prompt was queued")
                        }
                        return (held, try playLocked(sources, options, by: sender, name: name,
                                                     stopsWithCaller: call.stopsWithCaller))
                    }
                } catch {
                    return (held, Self.failure(error))
                }
            }
            if let (held, answer) = reply { bus.answer(held, answer) }
        }
        if ownThread { startThread(job) } else { worker.submit(job) }
        return .later
    }

    /// The pid of a caller, as the bus daemon knows it (`GetConnectionUnixProcessID`, within
    /// 1 s); nil when it cannot be asked or does not say. Worker thread.
    private func processID(of sender: String) -> pid_t? {
        if daemon == nil { daemon = try? SessionBusClient() }
        guard let pid = try? daemon?.processID(of: sender, timeoutMs: 1000), pid > 0 else { return nil }
        return pid
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

    /// Refuses a call over its caller's limits: a prompt when fewer than
    /// `PromptLimits.reservedDescriptors` file descriptors are free, when the caller has
    /// `PromptLimits.promptsPerClient` unfinished, or every caller together
    /// `PromptLimits.promptsInTotal` (calls whose work will queue one counted); another call
    /// when `PromptLimits.callsPerClient` of the caller's wait for the worker. Lock held.
    private func admitLocked(_ sender: String, makesPrompt: Bool) throws {
        let handedOff = waiting.values.filter { $0.makesPrompt == makesPrompt }
        if makesPrompt {
            // Out of descriptors, a prompt would fail halfway (its files, its ticket, a
            // restore): refused while a margin is left. /proc/self/fd unreadable counts as full.
            if let limit = Descriptors.limit() {
                try PromptLimits.checkDescriptors(open: Descriptors.openCount() ?? limit, limit: limit)
            }
            let mine = records.values.filter { $0.owner == sender }.count + handedOff.filter { $0.sender == sender }.count
            try PromptLimits.admit(unfinished: mine, client: sender)
            try PromptLimits.admit(unfinishedInTotal: records.count + handedOff.count)
        } else {
            try PromptLimits.admit(waitingCalls: handedOff.filter { $0.sender == sender }.count, client: sender)
        }
    }

    /// The call's options over the config file's defaults; a `device` that names no sink now is
    /// `Error.Unavailable` at the call (the sinks as the prompter's copy of the server has
    /// them; a sink that comes later is not waited for), so that nothing is queued for a prompt
    /// that cannot be routed. Worker thread (it reads the config file and the server).
    private func readOptions(_ given: [String: BusValue], estimating: Bool = false) throws -> PlayOptions {
        let options = try ServiceOptions.parse(given, defaults: PlayOptions(config: try DuckPromptConfig.load()))
        // `during-call` `drop` while a call is on: Error.Dropped at the call (a call that
        // starts while the prompt waits ends it `dropped` at its turn); an estimate says so.
        let calls = lock.withLock { self.calls }
        if !estimating, CallDecision.decide(options.duringCall, state: calls.state, callDuck: options.callDuck) == .drop {
            throw DuckPromptError(.dropped, "prompt dropped: a call is on (\(calls.cause?.detail ?? "a call"); "
                + "--during-call drop)", dropReason: .duringCall)
        }
        if let device = options.device {
            let listing = try prompter.listingFromCopy(request: device, config: options.config)
            if listing.route == nil {
                throw listing.routeError ?? DuckPromptError(.unavailable, "no usable sink for \(device)")
            }
        }
        return options
    }

    /// Queues the prompt and records who asked for it, lock held (its end, in `forward`, waits
    /// for the record).
    private func playLocked(_ sources: [any PromptSource], _ options: PlayOptions, by sender: String,
                            name: String, stopsWithCaller: Bool) throws -> BusConnection.Answer {
        // A prompt the queue drops at once is Error.Dropped at the call, with no id.
        let id = try prompter.play(sources, options: options, dropAtCall: true)
        records[id.value] = Record(owner: sender, name: name, stopsWithCaller: stopsWithCaller)
        return .values([.uint64(id.value)])
    }

    /// The paths of a `Play` or `Estimate`: a sandboxed caller may not borrow the service's
    /// rights to read host files (one answer for every path, before any is looked at); a
    /// relative path would be read from the service's working directory, not the caller's
    /// (under D-Bus activation, /): refused, not guessed. Worker thread.
    /// - Throws: `AccessDenied` naming `method` and what to do `otherwise`; `.usage` for a
    ///   relative path.
    private func checkPaths(_ files: [String], of sender: String, in method: String, otherwise: String) throws {
        if let why = CallerSandbox.verdict(CallerSandbox.facts(of: processID(of: sender))) {
            throw AccessDenied("\(method) by path is refused: the caller is sandboxed (\(why)); \(otherwise)")
        }
        if let relative = files.first(where: { !$0.hasPrefix("/") }) {
            throw DuckPromptError(.usage, "'\(relative)' is not an absolute path: the service cannot know "
                                  + "the caller's working directory")
        }
    }

    /// An estimate as `Estimate`'s `a{sv}`: words as `s`, times in µs as `t`.
    static func estimateValue(_ estimate: PromptEstimate) -> BusValue {
        .dictionary(Dictionary(uniqueKeysWithValues: estimate.fields.map { field in
            switch field.value {
            case .text(let word): (field.key, BusValue.string(word))
            case .micros(let us): (field.key, BusValue.uint64(UInt64(max(0, us))))
            }
        }))
    }

    // MARK: - Events

    private func forward(_ event: Prompter.Event) {
        switch event {
        case .queued:
            break
        case .started(let id, let start):
            bus.emit("PromptStarted", [.uint64(id.value), .string(start.sink), .string(start.kind.rawValue),
                                       .uint32(UInt32(clamping: start.preRollMs))])
        case .timing(let id, let timing):
            bus.emit("PromptTiming", [.uint64(id.value), .uint64(UInt64(max(0, timing.firstSampleUs))),
                                      .uint64(UInt64(max(0, timing.endUs)))])
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
            ("played", (["on \(report.route.sink.name)"] + report.warnings + [report.callNote].compactMap { $0 })
                .joined(separator: "; "))
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
