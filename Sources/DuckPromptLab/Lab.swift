import DuckPrompt
import DuckPromptProbe
import Glibc

/// How a lab run ended.
package struct LabOutcome: Sendable {
    /// The lab's exit status: COMMAND's, 124 when it outlived `--timeout`, 128 + N when the
    /// lab was stopped by signal N.
    package var status: Int32
    package var report: ListeningReport
    /// The lab's directory when `--keep` kept it.
    package var keptDirectory: String?
    /// Whether COMMAND ran: false when it was not found (127) or not executable (126), the
    /// lab then started nothing and has no report.
    package var commandRan = true
}

/// `duckprompt lab`: runs COMMAND against a private, headless sound server with emulated
/// devices, records every sink's monitor and every stream's volume meanwhile, and reports
/// what a listener would have heard (Docs/lab.md).
///
/// Steps: `LabServers` (directory, bus, server) → the emulated devices' null sinks and the
/// default sink → `MonitorLevels` on every sink and `StreamLog` → the music (if asked) until it
/// is heard, and a second of it → COMMAND, until it ends, `--timeout` or a signal → the
/// service the bus activated, if any, until it leaves (2 s idle) → 300 ms more of recording →
/// everything stopped, by pid, in reverse order → `ListeningReport`.
package final class Lab: @unchecked Sendable {
    private let options: LabOptions
    private let lock = Lock()
    /// The first signal `interrupt(signal:)` was told of. Guarded by `lock`.
    private var signal: Int32?
    private var command: LabProcess?

    /// How long the recording goes on after COMMAND ended: the end of a release is heard.
    static let tailSeconds = 0.3
    /// How much of the music is recorded before COMMAND starts: the "before" of a duck.
    static let musicLeadSeconds = 1.0

    package init(options: LabOptions) {
        self.options = options
    }

    /// Stops the run: COMMAND is stopped (SIGTERM to its process group, SIGKILL 3 s later),
    /// then everything else, and `run` returns 128 + `signal`. Any thread.
    package func interrupt(signal received: Int32) {
        let command = lock.withLock { () -> LabProcess? in
            if signal == nil { signal = received }
            return self.command
        }
        command?.wake()
    }

    private var interrupted: Int32? { lock.withLock { signal } }

    /// Runs the lab.
    /// - Parameters:
    ///   - environment: the caller's environment (`environ`), which COMMAND gets without the
    ///     user's session (`LabServers.environment(base:)`).
    ///   - binary: the `duckprompt` binary, made activatable on the lab's bus; nil for none.
    ///   - say: where progress lines go (standard error).
    /// - Returns: the status and the report.
    /// - Throws: `.unavailable` (exit 69) when a server cannot start (the missing Debian package
    ///   named) or refuses the devices; `.usage` for options `LabOptions.validated()` refuses.
    package func run(environment: [String: String], binary: String?, say: (String) -> Void) throws -> LabOutcome {
        let options = try options.validated()
        guard LabProcess.find(options.command[0], path: environment["PATH"]) != nil else {
            // As a shell or timeout(1) says it, before any server is started.
            let found = LabProcess.exists(options.command[0], path: environment["PATH"])
            say("duckprompt: lab: \(options.command[0]): " + (found ? "permission denied (not executable)" : "command not found"))
            return LabOutcome(status: found ? 126 : 127, report: Self.emptyReport(options), keptDirectory: nil, commandRan: false)
        }
        let servers = try LabServers(kind: options.server, environment: environment,
                                     serviceBinary: options.offersService ? binary : nil)
        var keep = options.keep
        defer {
            servers.stop()
            if !keep { servers.remove() }
        }
        do {
            return try run(options, on: servers, environment: environment, say: say)
        } catch {
            keep = true
            say("lab: logs kept in \(servers.logs)")
            throw error
        }
    }

    private func run(_ options: LabOptions, on servers: LabServers, environment: [String: String],
                     say: (String) -> Void) throws -> LabOutcome {
        let control = try Self.connect(servers)
        let state = try control.snapshot().1
        say("lab: private \(state.serverName) \(state.serverVersion) in \(servers.directory)")
        // PulseAudio's null sinks start a stream up to 2 s late unless anchored (`LatencyAnchors`).
        let anchors = options.server == .pulseaudio ? LatencyAnchors(server: servers.pulseServer) : nil
        defer { anchors?.stop() }
        for device in options.emulated {
            _ = try control.loadModule("module-null-sink", argument: device.moduleArgument(on: options.server))
        }
        if let anchors {
            // Made before their anchors, the sinks have rendered 2 s ahead: suspended and
            // resumed, each starts its clock again at the anchor's 10 ms.
            // The sinks read again while waiting: one may go meanwhile (module-always-sink's
            // auto_null, once a device is there), and is not waited for.
            let deadline = ContinuousClock.now + .seconds(10)
            var sinks = try control.sinkList().map(\.name)
            while !anchors.waitAnchored(sinks, timeout: .milliseconds(500)) {
                guard ContinuousClock.now < deadline else {
                    throw DuckPromptError(.unavailable, "the lab could not anchor the latency of its sinks \(sinks.joined(separator: ", "))")
                }
                sinks = try control.sinkList().map(\.name)
            }
            for sink in sinks {
                // A sink gone since (auto_null) has nothing to start again.
                try? control.suspendSink(sink, true)
                try? control.suspendSink(sink, false)
            }
        }
        if let sink = options.defaultSinkName {
            // Asked again until it holds: on PipeWire the session manager applies it, and
            // pipewire-pulse answers "Not supported" until WirePlumber has made its "default"
            // metadata (a lab connects as soon as the pulse socket is there).
            var refusal: Error?
            try Self.waitUntil("\(sink) to become the default sink", seconds: 10, failure: { refusal }) {
                do {
                    try control.setDefaultSink(sink)
                } catch {
                    refusal = error
                    return false
                }
                return try control.snapshot().1.defaultSinkName == sink
            }
            say("lab: devices " + options.emulated.map { "\($0.name) (\($0.kind.rawValue))" }.joined(separator: ", ")
                + "; default sink \(sink)")
        } else {
            say("lab: no device (--device none)")
        }

        // Listening: every sink's monitor, every stream (not with --no-listen).
        let recorder = options.listens ? try MonitorLevels(server: servers.pulseServer) : nil
        let log = options.listens ? try StreamLog(server: servers.pulseServer) { sink in try? recorder?.record(sink) } : nil
        defer {
            log?.stop()
            recorder?.stop()
        }
        if let recorder {
            let sinks = try control.sinkList()
            for sink in sinks { try recorder.record(sink.name) }
        }

        var music: BenchProbe?
        if let sink = options.musicSink, let recorder {
            let probe = try BenchProbe(clientName: "duckprompt lab music", server: servers.pulseServer)
            _ = try probe.playTones(count: 1, sinks: [sink], hertz: LabMusic.hertz, amplitude: LabMusic.amplitude,
                                    latencyMs: 30, properties: LabMusic.properties)
            music = probe
            try Self.waitUntil("the music to be heard on \(sink)", seconds: 5) {
                recorder.timelines(zero: 0).first { $0.sink == sink }?.timeline.levels.contains {
                    ($0 ?? -200) > LevelTimeline.heardThreshold
                } ?? false
            }
            sleepThread(for: .milliseconds(Int(Self.musicLeadSeconds * 1000)))
            say("lab: music on \(sink): \(LabMusic.description)")
        }
        defer { music?.stopTones() }

        if let signal = interrupted { return LabOutcome(status: 128 + signal, report: Self.emptyReport(options), keptDirectory: nil) }
        say("lab: running \(options.command.map(Self.shellQuoted).joined(separator: " "))")
        let zero = monotonicNanoseconds()
        let process = try LabProcess(name: "command", options.command, environment: servers.environment(base: environment),
                                     output: nil, passInput: true)
        lock.withLock { command = process }
        let deadline = options.timeoutMs.map { ContinuousClock.now + .milliseconds($0) }
        var status = process.wait(until: deadline) { interrupted != nil }
        var timedOut = false
        var activated: [pid_t] = []
        if status == nil {
            timedOut = interrupted == nil
            say(timedOut ? "lab: \(options.command[0]) still runs after the --timeout: stopping it (pid \(process.pid))"
                         : "lab: stopping \(options.command[0]) (pid \(process.pid))")
            process.stop()
            status = nil
        } else {
            // Prompts COMMAND queued on the lab's service play to their end: the service
            // leaves once idle (`LabServers.serviceIdleSeconds`). Bounded by what is left of
            // --timeout, else a minute.
            let left = deadline.map { $0 - ContinuousClock.now } ?? .seconds(60)
            let service = servers.waitForActivated(limit: max(.zero, left), or: { interrupted != nil })
            activated = service.seen
            if !service.left {
                say("lab: duckprompt serve still runs after \(options.command[0]) ended: stopping it")
            }
            sleepThread(for: .milliseconds(Int(Self.tailSeconds * 1000)))
            // What COMMAND started and left running in its process group (`sleep 100 &`, a
            // prompt sent to the background) is stopped now, while the servers are still there
            // for it to restore what it changed.
            let leftovers = LabProcess.members(ofGroup: process.pid).filter(LabProcess.isRunning)
            if !leftovers.isEmpty {
                say("lab: stopping what \(options.command[0]) left running: pid "
                    + leftovers.map(String.init).joined(separator: ", "))
                LabProcess.stop(leftovers)
            }
        }
        let exit: Int32 = if let signal = interrupted { 128 + signal } else if timedOut { 124 } else { status ?? 0 }

        // The report: sinks classified as duckprompt would, the run's levels and streams. The
        // server may have been restarted meanwhile (a test killed it): a new connection then.
        let end = Double(monotonicNanoseconds() - zero) / 1e9
        let last = options.listens ? try? ((try? control.sinkList()) ?? Self.connect(servers).sinkList()) : nil
        let listing = DeviceListing(snapshot: Snapshot(sinks: last ?? []))
        let kinds = Dictionary(zip(listing.snapshot.sinks.map(\.name), listing.classifications.map(\.kind.rawValue)),
                               uniquingKeysWith: { a, _ in a })
        let emulated = Dictionary(options.emulated.map { ($0.name, $0.kind.rawValue) }, uniquingKeysWith: { a, _ in a })
        var report = ListeningReport(
            sinks: (recorder?.timelines(zero: zero) ?? []).map { entry in
                (entry.sink, emulated[entry.sink], kinds[entry.sink], entry.sink == options.defaultSinkName, entry.timeline)
            },
            streams: log?.streams(zero: zero) ?? [], end: end)
        report.listened = options.listens
        report.server = options.server.rawValue
        report.serverName = state.serverName
        report.serverVersion = state.serverVersion
        report.command = options.command
        report.exitStatus = timedOut || interrupted != nil ? nil : status
        report.timedOut = timedOut
        report.processes = Dictionary(servers.processes.map { ($0.name, $0.pid) } + [("command", process.pid)]
                                          + activated.prefix(1).map { ("service", $0) },
                                      uniquingKeysWith: { a, _ in a })
        return LabOutcome(status: exit, report: report, keptDirectory: options.keep ? servers.directory : nil)
    }

    /// Connects to the lab's server, retrying until it accepts (its socket exists before it
    /// listens), for up to 10 s.
    private static func connect(_ servers: LabServers) throws -> PulseConnection {
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            do {
                return try PulseConnection(server: servers.pulseServer, clientName: "duckprompt lab", timeout: .seconds(5))
            } catch {
                guard ContinuousClock.now < deadline else {
                    throw DuckPromptError(.unavailable, "the private \(servers.kind.rawValue) did not answer: \(error)"
                                          + servers.lastLines(of: servers.processes.last?.name ?? ""))
                }
                sleepThread(for: .milliseconds(50))
            }
        }
    }

    /// Looks at `done` every 20 ms until it is true.
    /// - Throws: `.unavailable` after `seconds`, naming `failure()`'s error when there is one.
    private static func waitUntil(_ what: String, seconds: Int, failure: () -> Error? = { nil },
                                  _ done: () throws -> Bool) throws {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while try !done() {
            guard ContinuousClock.now < deadline else {
                throw DuckPromptError(.unavailable, "timed out after \(seconds) s waiting for \(what)"
                                      + (failure().map { ": \($0)" } ?? ""))
            }
            sleepThread(for: .milliseconds(20))
        }
    }

    /// `word` as a shell would need it: as it is when it holds only safe characters, else in
    /// single quotes (`sh -c 'exit 3'`).
    static func shellQuoted(_ word: String) -> String {
        let safe = !word.isEmpty && word.utf8.allSatisfy { byte in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || "-_./=:,+@%".utf8.contains(byte)
        }
        return safe ? word : "'" + word.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }

    private static func emptyReport(_ options: LabOptions) -> ListeningReport {
        var report = ListeningReport(sinks: [], streams: [], end: 0)
        report.server = options.server.rawValue
        report.command = options.command
        return report
    }
}

/// The lab's background music: a documented test signal, so that a duck can be read off the
/// monitor. A 220 Hz sine at -20 dBFS peak (-23 dBFS RMS), mono, `media.role=music`.
package enum LabMusic {
    package static let hertz = 220.0
    package static let amplitude: Float = 0.1
    package static let description = "220 Hz sine, -20 dBFS peak, media.role=music"
    package static let properties = ["media.role": "music", "application.name": "duckprompt lab",
                                     "media.name": "duckprompt lab music (220 Hz sine)", StreamLog.labProperty: "music"]
}
