import Glibc

/// Follows the calls the D-Bus sources tell of (`CallBusSource`): a thread of its own with its
/// own connection to each bus subscribes to the signals that announce a change of a source
/// (its NameOwnerChanged, ObjectManager, PropertiesChanged and own signals,
/// `CallBusSource.matchRules`), re-reads the source a signal concerns, and calls `onChange`
/// with every source's calls when they differ from the last ones. A source that starts later
/// or goes away is followed on its NameOwnerChanged. A bus that cannot be reached when the
/// watch starts, or whose connection fails later (its daemon ended), gives no calls from then
/// on (it is not connected again).
///
/// Thread-safe: `readings` and `stop()` from any thread; `onChange` runs on the watch's thread,
/// never from inside `init`, and must not call `stop()`. The thread ends on `stop()` or when
/// the watch goes away (the thread holds `onChange`, not the watch: an `onChange` that holds
/// the watch keeps it until `stop()`).
/// Uses `SessionBusClient` (sd-bus) for the buses and `poll(2)` on their sockets and a pipe
/// that `stop()` writes to.
package final class BusCallWatch: @unchecked Sendable {
    private let shared: Shared
    private let wake: (read: Int32, write: Int32)

    /// Starts the watch and returns once it has read every source the first time (`readings`).
    /// - Parameters:
    ///   - timeoutMs: the most each D-Bus call may take, in milliseconds.
    ///   - onChange: every source's calls (`BusCalls.read`'s order), each time they changed
    ///     after the first reading.
    /// - Throws: `DuckPromptError(.internal)` "a pipe for the call watch: …" when the process
    ///   is out of descriptors (the pipe that stops the thread cannot be made). Buses and
    ///   sources that cannot be reached are no error: they have no calls.
    package init(timeoutMs: Int = 250, onChange: @escaping @Sendable ([CallReading]) -> Void) throws {
        wake = try orThrow("a pipe for the call watch", POSIX.pipe())
        let shared = Shared()
        self.shared = shared
        let wakeRead = wake.read
        startThread {
            Self.run(shared, wake: wakeRead, timeoutMs: timeoutMs, onChange: onChange)
        }
        shared.condition.withLock {
            while !shared.started { shared.condition.waitLocked() }
        }
    }

    deinit { stop() }

    /// Every source's calls as last read.
    package var readings: [CallReading] { shared.condition.withLock { shared.readings } }

    /// Ends the thread and closes its connections; returns once it has ended (a few ms: the
    /// thread is woken from its `poll` at once). Later calls only wait for that end.
    package func stop() {
        let first = shared.condition.withLock {
            defer { shared.stopping = true }
            return !shared.stopping
        }
        if first {
            var byte: UInt8 = 1
            _ = try? withUnsafeBytes(of: &byte) { try POSIX.write(wake.write, $0) }
        }
        shared.condition.withLock {
            while !shared.ended { shared.condition.waitLocked() }
        }
        if first {
            try? POSIX.close(wake.read)
            try? POSIX.close(wake.write)
        }
    }

    /// What the thread and the callers share, guarded by `condition`.
    private final class Shared: @unchecked Sendable {
        let condition = Condition()
        var readings: [CallReading] = []
        var started = false
        var stopping = false
        var ended = false

        func set(_ readings: [CallReading], started: Bool = false, ended: Bool = false) {
            condition.withLock {
                self.readings = readings
                if started { self.started = true }
                if ended { self.ended = true }
            }
            condition.broadcast()
        }
    }

    /// The sources a signal concerned since they were last read. Used on the watch's thread only.
    private final class Dirty {
        var sources: Set<CallBusSource> = []
    }

    /// The watch's thread: connects, subscribes, reads every source, then waits for signals
    /// and re-reads the sources they concern, until `wake` is readable.
    private static func run(_ shared: Shared, wake: Int32, timeoutMs: Int,
                            onChange: @Sendable ([CallReading]) -> Void) {
        let dirty = Dirty()
        var clients: [BusKind: SessionBusClient] = [:]
        for kind in [BusKind.session, .system] {
            guard let client = try? SessionBusClient(kind) else { continue }
            do {
                for source in CallBusSource.allCases where source.bus == kind {
                    for rule in source.matchRules + [source.nameOwnerRule] {
                        try client.subscribe(match: rule) { _ in dirty.sources.insert(source) }
                    }
                }
                clients[kind] = client
            } catch {
                // A bus that refuses the subscriptions is left out: it could not be followed.
            }
        }
        var calls: [CallBusSource: [CallReading]] = [:]
        func combined() -> [CallReading] { CallBusSource.allCases.flatMap { calls[$0] ?? [] } }
        // Subscribed first, then read: a change after the read comes as a signal, queued.
        for source in CallBusSource.allCases {
            if let client = clients[source.bus] { calls[source] = source.read(on: client, timeoutMs: timeoutMs) }
        }
        func drop(_ kind: BusKind, _ error: any Error) {
            DebugTrace.write("calls: the \(kind.rawValue) bus connection failed (\(error)): its sources give no calls from now on")
            clients[kind] = nil
            for source in CallBusSource.allCases where source.bus == kind { calls[source] = nil }
        }
        var last = combined()
        shared.set(last, started: true)
        while true {
            // Every signal that arrived (and those queued during reads) is handled, and the
            // sources they concern read again, until none is left.
            while true {
                for (kind, client) in clients {
                    do { try client.processPending() } catch { drop(kind, error) }
                }
                guard !dirty.sources.isEmpty else { break }
                let sources = dirty.sources
                dirty.sources.removeAll()
                for source in CallBusSource.allCases where sources.contains(source) {
                    if let client = clients[source.bus] { calls[source] = source.read(on: client, timeoutMs: timeoutMs) }
                }
            }
            let now = combined()
            if now != last {
                last = now
                shared.set(now)
                onChange(now)
            }
            var fds = [pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
            var deadline: ContinuousClock.Instant? = nil
            for (kind, client) in clients {
                do {
                    let wait = try client.pollDescriptor()
                    fds.append(wait.descriptor)
                    if let at = wait.deadline { deadline = min(deadline ?? at, at) }
                } catch {
                    drop(kind, error)
                    deadline = .now
                }
            }
            _ = try? POSIX.poll(&fds, until: deadline)
            if fds[0].revents != 0 { break }
        }
        clients.removeAll()
        shared.set(last, ended: true)
    }
}
