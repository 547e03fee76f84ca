import FoundationEssentials
import Glibc

extension DuckPrompt {
    /// Follows the server's sinks: yields the current listing first (with no changes), then a
    /// new listing each time a sink appears, goes away, changes its active port or that port's
    /// availability, the default sink changes, or the route changes.
    ///
    /// Stop by ending the iteration (or cancelling the consuming Task): the subscription and
    /// the connection close. The stream ends with an error when the connection fails or is lost.
    /// The call state (`DeviceListing.callState`) follows the server's call streams and the
    /// buses' calls (`BusCallWatch`).
    /// libpulse: `pa_context_subscribe` (sink, sink-input, source-output, card, server events), then a fresh
    /// snapshot per batch of events; on PipeWire, the default sink is followed on the "default"
    /// metadata and read anew with a binding of its own for each snapshot (libpipewire:
    /// `pw_metadata`). Only when PipeWire cannot be reached, or once its metadata stopped telling
    /// this connection of changes (PipeWire 0.3.65, `PipeWireWatch`), the default sink is read
    /// after each `defaultCheckInterval` (100 ms) without events.
    package static func watchDevices(request: DeviceRequest? = nil, config: DuckPromptConfig = DuckPromptConfig(),
                                    server: ServerOptions = ServerOptions()) -> AsyncThrowingStream<DeviceUpdate, Error> {
        watchDevices(request: request, config: config, server: server, closed: {})
    }

    /// `watchDevices(request:config:server:)`, and `closed` called on the watching thread once
    /// its connection is closed (libpulse's and libpipewire's threads joined): a process that
    /// exits after it leaves none of them behind.
    /// - Parameter prompter: a held prompter whose watch of the buses' calls the listing
    ///   shares (the service's), instead of a `BusCallWatch` of its own.
    package static func watchDevices(request: DeviceRequest? = nil, config: DuckPromptConfig, server: ServerOptions,
                                     prompter: Prompter? = nil,
                                     closed: @escaping @Sendable () -> Void) -> AsyncThrowingStream<DeviceUpdate, Error> {
        let control = InterruptControl()
        return AsyncThrowingStream { continuation in
            continuation.onTermination = { _ in control.cancel() }
            startThread {
                defer { closed() }
                // The connection lives in this scope only (detached from `control`, which the
                // stream keeps): it is closed when the scope ends, before `closed`.
                defer { control.detach() }
                do {
                    let connection = try PulseConnection(server)
                    control.attach(connection)
                    let inbox = EventInbox(mainloop: connection.mainloop)
                    try connection.subscribe(into: inbox)
                    // On PipeWire the default sink is followed where the server keeps it, the
                    // "default" metadata (`PipeWireWatch`), and read anew for each look: PipeWire
                    // 0.3.65 can stop telling every long-lived binding (ours, and pipewire-pulse's
                    // copy behind this connection's server info) of a change, for good, once a
                    // client left while its own bind was pending. A look that finds another
                    // default than the follower was told of, twice, means the follower went
                    // deaf: from then on the default is read after each quiet
                    // `defaultCheckInterval`, as it is when PipeWire cannot be reached.
                    let onPipeWire = try connection.serverInfo().serverName.contains("PipeWire")
                    let followed = DefaultSinkBox()
                    let following = onPipeWire && connection.withLock { () -> Bool in
                        guard let watch = connection.pipeWireWatchLocked() else { return false }
                        watch.followDefaultSinkLocked { name in
                            followed.name = .some(name)
                            inbox.events.append(.defaultSinkChanged)
                        }
                        return true
                    }
                    func currentDefault() throws -> String?? {
                        guard onPipeWire else { return nil }
                        return try connection.withLock {
                            try connection.pipeWireDefaultSinkLocked(until: ContinuousClock.now + .milliseconds(500))
                        }
                    }
                    // The buses' calls (GNOME Calls, ModemManager, oFono, PipeWire's telephony):
                    // a change is an event of the server's kind, so that it is looked at as one.
                    // Followed by the prompter's watch when one is given, else by one of our own.
                    let shared = prompter?.calls
                    let unfollow = shared?.follow { connection.post(.busCallsChanged, to: inbox) }
                    let own = shared == nil ? try? BusCallWatch(onChange: { _ in connection.post(.busCallsChanged, to: inbox) }) : nil
                    defer {
                        unfollow?()
                        own?.stop()
                    }
                    func look() throws -> DeviceListing {
                        var (snapshot, info) = try connection.snapshot()
                        if let name = try currentDefault() { snapshot.defaultSinkName = name }
                        return DeviceListing(snapshot: snapshot, request: request ?? config.device ?? defaultRequest(), config: config,
                                             serverName: info.serverName, serverVersion: info.serverVersion,
                                             busCalls: shared?.readings() ?? own?.readings ?? [])
                    }
                    var listing = try look()
                    continuation.yield(DeviceUpdate(listing: listing, changes: []))
                    var deaf = false
                    var suspect = false
                    /// Compares the follower's last word with what a look read.
                    func checkFollower() {
                        guard following, !deaf else { return }
                        let told = connection.withLock { followed.name }
                        guard let told, told != listing.snapshot.defaultSinkName else { suspect = false; return }
                        if suspect {
                            deaf = true
                            DebugTrace.write("pipewire: the \"default\" metadata no longer tells this connection of changes (it said \(told ?? "none"), a new binding reads \(listing.snapshot.defaultSinkName ?? "none")): the default sink is read after each quiet \(Int(Self.defaultCheckInterval.seconds * 1000)) ms from now on")
                        }
                        suspect = true
                    }
                    checkFollower()
                    while true {
                        let checkDefault = onPipeWire && (!following || deaf || suspect)
                        let waited = try connection.withLock {
                            try checkDefault
                                ? connection.nextEventsLocked(inbox, until: ContinuousClock.now + Self.defaultCheckInterval)
                                : connection.nextEventsLocked(inbox)
                        }
                        guard let events = waited else {
                            let serverDefault = try currentDefault() ?? connection.serverInfo().defaultSinkName
                            DebugTrace.write("watch: \(Int(Self.defaultCheckInterval.seconds * 1000)) ms without events, the server's default sink is \(serverDefault ?? "none")")
                            if serverDefault != listing.snapshot.defaultSinkName {
                                let next = try look()
                                let changes = DeviceChange.between(listing, next)
                                listing = next
                                if !changes.isEmpty { continuation.yield(DeviceUpdate(listing: next, changes: changes)) }
                            }
                            checkFollower()
                            continue
                        }
                        if events.isEmpty { break }
                        if events.allSatisfy(Self.isVolumeChurn) {
                            // A duck ramp changes sink-inputs up to 100 times a second: such
                            // changes alone are gathered for 100 ms into one look at the server.
                            let until = ContinuousClock.now + .milliseconds(100)
                            connection.withLock {
                                connection.withWakeupLocked(at: until) {
                                    while ContinuousClock.now < until, !connection.interrupted,
                                          inbox.events.allSatisfy(Self.isVolumeChurn) {
                                        connection.waitLocked()
                                    }
                                }
                                inbox.events.removeAll()
                            }
                        }
                        let next = try look()
                        DebugTrace.write("watch: \(events.count) events, the server's default sink is \(next.snapshot.defaultSinkName ?? "none")")
                        let changes = DeviceChange.between(listing, next)
                        listing = next
                        if !changes.isEmpty { continuation.yield(DeviceUpdate(listing: next, changes: changes)) }
                        checkFollower()
                    }
                    withExtendedLifetime(inbox) {}
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
        }
    }

    /// How long `watchDevices` waits for an event on PipeWire, when it cannot follow the
    /// "default" metadata or the metadata stopped telling it of changes, before it reads the
    /// default sink itself: a change the server did not announce is reported this late at most.
    static let defaultCheckInterval: Duration = .milliseconds(100)

    /// A sink-input that changed (volume, cork, properties): it may change the route, but
    /// needs no look at once.
    private static func isVolumeChurn(_ event: ServerEvent) -> Bool {
        event.facility == .sinkInput && event.change == .changed
    }
}

/// The default sink the metadata named last (`.some(nil)`: none; nil: not known yet). Guarded
/// by the connection's loop lock.
private final class DefaultSinkBox: @unchecked Sendable {
    var name: String??
}
