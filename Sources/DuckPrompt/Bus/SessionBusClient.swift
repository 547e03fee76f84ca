import CSystemd
import Glibc

/// Which bus a `SessionBusClient` connects to.
package enum BusKind: String, Sendable {
    /// The user's session bus: `DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus`.
    case session
    /// The system bus: `DBUS_SYSTEM_BUS_ADDRESS`, else `/run/dbus/system_bus_socket`.
    case system
}

/// A client's connection to the session bus (or, made with `.system`, the system bus), for
/// calls to other programs (MPRIS players, `Players/PlayerPauser.swift`; the bench's calls to
/// `duckprompt serve`; the call sources, `Calls/CallBusSource.swift`), and the library's
/// only caller of sd-bus besides `BusMessage.swift`. Used from one thread (sd-bus is not
/// thread-safe): each prompt opens its own on its own thread. Every call has a timeout, so a
/// player that does not answer costs at most that, never a hang. Signals it subscribed to are
/// handled only in `dispatch(for:until:)`, on the caller's thread (no thread of its own): between
/// calls it sends nothing.
///
/// A thread that waits on several connections at once (`BusCallWatch`) polls each one's
/// `pollDescriptor` and then calls `processPending()`.
///
/// sd-bus: `sd_bus_open_user` (`DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus`),
/// `sd_bus_open_system` (`DBUS_SYSTEM_BUS_ADDRESS`, else `/run/dbus/system_bus_socket`),
/// `sd_bus_message_new_method_call`, `sd_bus_message_set_auto_start`, `sd_bus_call`,
/// `sd_bus_match_signal`, `sd_bus_add_match`, `sd_bus_process`, `sd_bus_wait`,
/// `sd_bus_get_fd`, `sd_bus_get_events`, `sd_bus_get_timeout`, `sd_bus_slot_unref`,
/// `sd_bus_flush_close_unref`.
package final class SessionBusClient {
    private let bus: OpaquePointer
    /// Each subscription's slot and handler; the slots are released in deinit before the bus,
    /// so a handler (held here, passed unretained) is alive whenever sd-bus can call it.
    private var subscriptions: [(slot: OpaquePointer?, handler: SignalHandler)] = []

    /// A signal's handler, boxed for sd-bus's userdata.
    private final class SignalHandler {
        let handle: (BusReader) -> Void
        init(_ handle: @escaping (BusReader) -> Void) { self.handle = handle }
    }

    /// Connects to the session bus, or to the system bus.
    /// - Throws: `DuckPromptError(.unavailable)` "no session bus at …" ("no system bus at …")
    ///   when there is none (no address, no socket, refused).
    package init(_ kind: BusKind = .session) throws {
        var opened: OpaquePointer? = nil
        let r = kind == .session ? sd_bus_open_user(&opened) : sd_bus_open_system(&opened)
        guard r >= 0, let opened else {
            let address = switch kind {
            case .session:
                Environment.value("DBUS_SESSION_BUS_ADDRESS")
                    ?? Environment.value("XDG_RUNTIME_DIR").map { "unix:path=\($0)/bus" } ?? "none"
            case .system:
                Environment.value("DBUS_SYSTEM_BUS_ADDRESS") ?? "unix:path=/run/dbus/system_bus_socket"
            }
            throw DuckPromptError(.unavailable, "no \(kind.rawValue) bus at \(address): \(String(cString: strerror(-r)))")
        }
        bus = opened
    }

    deinit {
        for subscription in subscriptions { sd_bus_slot_unref(subscription.slot) }
        sd_bus_flush_close_unref(bus)
    }

    /// One method call of `arguments`, answered within `timeoutMs`; `read` reads the reply.
    /// - Parameter autoStart: false asks the bus not to start `destination`'s service when no
    ///   one owns the name (it answers `org.freedesktop.DBus.Error.ServiceUnknown` at once).
    /// - Throws: `DuckPromptError(.unavailable)` naming the method and the D-Bus error (or
    ///   "no answer within N ms"); what `read` throws.
    package func call<T>(_ destination: String, _ path: String, _ interface: String, _ member: String,
                         _ arguments: [BusValue] = [], timeoutMs: Int, autoStart: Bool = true,
                         reading read: (BusReader) throws -> T) throws -> T {
        var message: OpaquePointer? = nil
        try check(sd_bus_message_new_method_call(bus, &message, destination, path, interface, member), "making \(member)")
        defer { sd_bus_message_unref(message) }
        if !autoStart { try check(sd_bus_message_set_auto_start(message, 0), "making \(member)") }
        for argument in arguments { try BusWriter(message: message!).append(argument) }
        var error = sd_bus_error()
        defer { sd_bus_error_free(&error) }
        var reply: OpaquePointer? = nil
        let r = sd_bus_call(bus, message, UInt64(timeoutMs) * 1000, &error, &reply)
        defer { sd_bus_message_unref(reply) }
        guard r >= 0, let reply else {
            let detail: String
            if r == -ETIMEDOUT {
                detail = "no answer within \(timeoutMs) ms"
            } else if let name = error.name {
                detail = String(cString: name) + (error.message.map { ": " + String(cString: $0) } ?? "")
            } else {
                detail = String(cString: strerror(-r))
            }
            throw DuckPromptError(.unavailable, "\(member) to \(destination): \(detail)")
        }
        return try read(BusReader(message: reply))
    }

    /// Subscribes to the signal `member` of `interface` that `sender` emits from `path`
    /// (`sd_bus_match_signal`, its match added before this returns), for as long as this
    /// connection lives; `handle` reads each one as `dispatch(for:until:)` delivers it.
    /// - Throws: `DuckPromptError(.unavailable)` when the match cannot be added.
    package func subscribe(to member: String, of interface: String, from sender: String, path: String,
                           _ handle: @escaping (BusReader) -> Void) throws {
        let handler = SignalHandler(handle)
        var slot: OpaquePointer? = nil
        let r = sd_bus_match_signal(bus, &slot, sender, path, interface, member, { message, userdata, _ in
            Unmanaged<SignalHandler>.fromOpaque(userdata!).takeUnretainedValue().handle(BusReader(message: message!))
            return 0
        }, Unmanaged.passUnretained(handler).toOpaque())
        guard r >= 0 else {
            throw DuckPromptError(.unavailable, "cannot subscribe to \(member): \(String(cString: strerror(-r)))")
        }
        subscriptions.append((slot, handler))
    }

    /// Subscribes to the signals a D-Bus match `rule` selects ("type='signal',sender='org.ofono',
    /// interface='org.ofono.VoiceCall'", with `arg0` and `path_namespace` as the bus allows;
    /// `sd_bus_add_match`, added before this returns), for as long as this connection lives;
    /// `handle` reads each one as `dispatch(for:until:)` or `processPending()` delivers it.
    /// - Throws: `DuckPromptError(.unavailable)` when the match cannot be added.
    package func subscribe(match rule: String, _ handle: @escaping (BusReader) -> Void) throws {
        let handler = SignalHandler(handle)
        var slot: OpaquePointer? = nil
        let r = sd_bus_add_match(bus, &slot, rule, { message, userdata, _ in
            Unmanaged<SignalHandler>.fromOpaque(userdata!).takeUnretainedValue().handle(BusReader(message: message!))
            return 0
        }, Unmanaged.passUnretained(handler).toOpaque())
        guard r >= 0 else {
            throw DuckPromptError(.unavailable, "cannot subscribe to \(rule): \(String(cString: strerror(-r)))")
        }
        subscriptions.append((slot, handler))
    }

    /// Handles every message already arrived or queued (`sd_bus_process` until it has none:
    /// the subscribed signals' handlers run here, and signals that came during a `call`,
    /// which sd-bus queued, are handled too), without waiting.
    /// - Throws: `DuckPromptError(.unavailable)` when the connection failed (the bus went away).
    package func processPending() throws {
        while true {
            let r = sd_bus_process(bus, nil)
            guard r >= 0 else { throw DuckPromptError(.unavailable, "bus connection: \(String(cString: strerror(-r)))") }
            if r == 0 { return }
        }
    }

    /// What to `poll` for this connection once `processPending()` returned: its socket and the
    /// events sd-bus waits for, and when at the latest to call `processPending()` again
    /// (nil: only on an event).
    /// - Throws: `DuckPromptError(.unavailable)` when the connection failed.
    package func pollDescriptor() throws -> (descriptor: pollfd, deadline: ContinuousClock.Instant?) {
        let fd = sd_bus_get_fd(bus)
        let events = sd_bus_get_events(bus)
        guard fd >= 0, events >= 0 else {
            throw DuckPromptError(.unavailable, "bus connection: \(String(cString: strerror(-(fd < 0 ? fd : events))))")
        }
        var timeout: UInt64 = 0
        var deadline: ContinuousClock.Instant? = nil
        if sd_bus_get_timeout(bus, &timeout) >= 0, timeout != UInt64.max {
            // sd-bus's timeout is on CLOCK_MONOTONIC, in microseconds: made relative to now
            // (`monotonicNanoseconds`: no `timespec` in a file that imports CSystemd, whose
            // headers bring it in too and would take its fields from the other files).
            let now = monotonicNanoseconds() / 1000
            deadline = ContinuousClock.now + .microseconds(Int64(clamping: timeout > now ? timeout - now : 0))
        }
        return (pollfd(fd: fd, events: Int16(truncatingIfNeeded: events), revents: 0), deadline)
    }

    /// Handles what arrives (`sd_bus_process`: the subscribed signals' handlers run here),
    /// waiting in `sd_bus_wait` between messages, until `done()` holds or `timeout` passed.
    /// - Returns: whether `done()` held.
    /// - Throws: `DuckPromptError(.unavailable)` when the connection fails.
    package func dispatch(for timeout: Duration, until done: () -> Bool) throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while !done() {
            let r = sd_bus_process(bus, nil)
            guard r >= 0 else { throw DuckPromptError(.unavailable, "session bus: \(String(cString: strerror(-r)))") }
            if r > 0 { continue }
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return false }
            let w = sd_bus_wait(bus, left.microseconds + 1)
            guard w >= 0 else { throw DuckPromptError(.unavailable, "session bus: \(String(cString: strerror(-w)))") }
        }
        return true
    }

    /// The names on the bus (`org.freedesktop.DBus.ListNames`).
    package func listNames(timeoutMs: Int) throws -> [String] {
        try call(Self.busDriver, Self.busPath, Self.busDriver, "ListNames", timeoutMs: timeoutMs) { try $0.readStrings() }
    }

    /// The process id of the connection that owns `name`
    /// (`org.freedesktop.DBus.GetConnectionUnixProcessID`).
    package func processID(of name: String, timeoutMs: Int) throws -> Int32 {
        try call(Self.busDriver, Self.busPath, Self.busDriver, "GetConnectionUnixProcessID", [.string(name)],
                 timeoutMs: timeoutMs) { Int32(bitPattern: try $0.readUInt32()) }
    }

    /// Whether a connection owns `name` (`org.freedesktop.DBus.NameHasOwner`).
    package func hasOwner(_ name: String, timeoutMs: Int) throws -> Bool {
        try call(Self.busDriver, Self.busPath, Self.busDriver, "NameHasOwner", [.string(name)],
                 timeoutMs: timeoutMs) { try $0.readBool() }
    }

    /// The unique name (`:1.42`) that owns `name` (`org.freedesktop.DBus.GetNameOwner`).
    package func owner(of name: String, timeoutMs: Int) throws -> String {
        try call(Self.busDriver, Self.busPath, Self.busDriver, "GetNameOwner", [.string(name)],
                 timeoutMs: timeoutMs) { try $0.readString() }
    }

    /// Every property of `interface` on `destination`'s object `path`
    /// (`org.freedesktop.DBus.Properties.GetAll`), as `BusReader.readProperties` keeps them.
    package func properties(of destination: String, path: String, interface: String,
                            timeoutMs: Int, autoStart: Bool = true) throws -> [String: BusValue] {
        try call(destination, path, Self.propertiesInterface, "GetAll", [.string(interface)],
                 timeoutMs: timeoutMs, autoStart: autoStart) { try $0.readProperties() }
    }

    /// One property (`org.freedesktop.DBus.Properties.Get`); nil for a type not kept.
    package func property(_ name: String, of destination: String, path: String, interface: String,
                          timeoutMs: Int, autoStart: Bool = true) throws -> BusValue? {
        try call(destination, path, Self.propertiesInterface, "Get", [.string(interface), .string(name)],
                 timeoutMs: timeoutMs, autoStart: autoStart) { try $0.readVariant() }
    }

    private static let busDriver = "org.freedesktop.DBus", busPath = "/org/freedesktop/DBus"
    private static let propertiesInterface = "org.freedesktop.DBus.Properties"
}
