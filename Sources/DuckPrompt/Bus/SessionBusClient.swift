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
/// `sd_bus_match_signal`, `sd_bus_add_match`, `sd_bus_add_match_async`, `sd_bus_process`, `sd_bus_wait`,
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

    /// Whether the connection is still open (`sd_bus_is_open`): false once the bus closed it.
    package var isOpen: Bool { sd_bus_is_open(bus) > 0 }

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
        let reply: Reply
        do {
            reply = try request(destination, path, interface, member, timeoutMs: timeoutMs, autoStart: autoStart) { writer in
                for argument in arguments { try writer.append(argument) }
            }
        } catch let failure as BusCallFailure {
            throw DuckPromptError(.unavailable, "\(member) to \(destination): \(failure.detail)")
        }
        return try read(reply.reader)
    }

    /// A method call's reply, held until this is released.
    package final class Reply {
        private let message: OpaquePointer
        init(_ message: OpaquePointer) { self.message = message }
        deinit { sd_bus_message_unref(message) }
        /// Its arguments, read in order.
        package var reader: BusReader { BusReader(message: message) }
    }

    /// One method call whose arguments `write` appends (a passed descriptor, `BusWriter.appendDescriptor`),
    /// answered within `timeoutMs`. `autoStart` false: a well-known name no process owns is an
    /// error at once (`ServiceUnknown`), never a D-Bus activation
    /// (`sd_bus_message_set_auto_start`).
    /// - Returns: the reply (its `reader.sender`: the unique name that answered).
    /// - Throws: `BusCallFailure`: the error the callee answered (its D-Bus name and message),
    ///   no answer in time, or the call not sent (what `write` threw, as its description).
    package func request(_ destination: String, _ path: String, _ interface: String, _ member: String,
                         timeoutMs: Int, autoStart: Bool = true, writing write: (BusWriter) throws -> Void) throws -> Reply {
        var message: OpaquePointer? = nil
        let made = sd_bus_message_new_method_call(bus, &message, destination, path, interface, member)
        guard made >= 0, let message else {
            throw BusCallFailure(name: nil, message: "making \(member): \(String(cString: strerror(-made)))", timedOut: false)
        }
        defer { sd_bus_message_unref(message) }
        if !autoStart {
            let r = sd_bus_message_set_auto_start(message, 0)
            guard r >= 0 else {
                throw BusCallFailure(name: nil, message: "making \(member): \(String(cString: strerror(-r)))", timedOut: false)
            }
        }
        do { try write(BusWriter(message: message)) } catch {
            throw BusCallFailure(name: nil, message: "\(error)", timedOut: false)
        }
        var error = sd_bus_error()
        defer { sd_bus_error_free(&error) }
        var reply: OpaquePointer? = nil
        let r = sd_bus_call(bus, message, UInt64(timeoutMs) * 1000, &error, &reply)
        guard r >= 0, let reply else {
            if r == -ETIMEDOUT { throw BusCallFailure(name: nil, message: "no answer within \(timeoutMs) ms", timedOut: true) }
            throw BusCallFailure(name: error.name.map { String(cString: $0) },
                                 message: error.message.map { String(cString: $0) } ?? String(cString: strerror(-r)),
                                 timedOut: false)
        }
        return Reply(reply)
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
    /// `waiting` false: the match is sent without waiting for the bus daemon's answer
    /// (`sd_bus_add_match_async`): the daemon reads a connection's messages in order, so a call
    /// sent after it is handled with the match in place, and a signal its callee then sends is
    /// not missed (`duckprompt play` handing its prompt to the service).
    /// - Throws: `DuckPromptError(.unavailable)` when the match cannot be added (or queued).
    package func subscribe(match rule: String, waiting: Bool = true, _ handle: @escaping (BusReader) -> Void) throws {
        let handler = SignalHandler(handle)
        var slot: OpaquePointer? = nil
        let callback: sd_bus_message_handler_t = { message, userdata, _ in
            Unmanaged<SignalHandler>.fromOpaque(userdata!).takeUnretainedValue().handle(BusReader(message: message!))
            return 0
        }
        let userdata = Unmanaged.passUnretained(handler).toOpaque()
        let r = waiting ? sd_bus_add_match(bus, &slot, rule, callback, userdata)
                        : sd_bus_add_match_async(bus, &slot, rule, callback, nil, userdata)
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

    /// How `dispatch(until:wake:done:)` ended.
    package enum Dispatched: Equatable {
        /// `done()` held.
        case done
        /// The deadline passed.
        case timedOut
        /// `wake` became readable (not read here).
        case woken
    }

    /// Handles what arrives (`processPending`: the subscribed signals' handlers run here),
    /// waiting in `poll(2)` on the bus's descriptor (`pollDescriptor`) and on `wake` (a pipe
    /// another thread writes to: a signal-handling thread, since this connection is used from
    /// one thread), until `done()` holds, `wake` is readable or `deadline` passed (nil: none).
    /// - Throws: `DuckPromptError(.unavailable)` when the connection fails (the bus went away).
    package func dispatch(until deadline: ContinuousClock.Instant?, wake: Int32?,
                          done: () -> Bool) throws -> Dispatched {
        while true {
            try processPending()
            if done() { return .done }
            if let deadline, ContinuousClock.now >= deadline { return .timedOut }
            let (bus, busDeadline) = try pollDescriptor()
            var fds = [bus]
            if let wake { fds.append(pollfd(fd: wake, events: Int16(POLLIN), revents: 0)) }
            let until = [deadline, busDeadline].compactMap { $0 }.min()
            do throws(Errno) { _ = try POSIX.poll(&fds, until: until) } catch {
                throw DuckPromptError(.unavailable, "session bus: \(String(cString: strerror(error.rawValue)))")
            }
            if fds.count > 1, fds[1].revents != 0 { return .woken }
        }
    }

    /// Whether a session bus may be there to connect to, without connecting:
    /// `DBUS_SESSION_BUS_ADDRESS` set, or `$XDG_RUNTIME_DIR/bus` present (where `sd_bus_open_user`
    /// looks). One `stat(2)` at most.
    package static var mayExist: Bool {
        if let address = Environment.value("DBUS_SESSION_BUS_ADDRESS"), !address.isEmpty { return true }
        guard let runtime = Environment.value("XDG_RUNTIME_DIR"), !runtime.isEmpty else { return false }
        return (try? POSIX.stat(runtime + "/bus")) != nil
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

    package static let busDriver = "org.freedesktop.DBus", busPath = "/org/freedesktop/DBus"
    private static let propertiesInterface = "org.freedesktop.DBus.Properties"
}

/// A method call that failed (`SessionBusClient.request`): the callee's error, no answer in
/// time, or a call that could not be sent.
package struct BusCallFailure: Error, CustomStringConvertible {
    /// The D-Bus error name the callee (or the bus daemon) answered, e.g.
    /// `org.freedesktop.DBus.Error.ServiceUnknown`; nil when no error came back.
    package var name: String?
    /// The error's message.
    package var message: String
    /// No answer came within the call's timeout.
    package var timedOut: Bool
    /// "NAME: message", or the message alone.
    package var detail: String { name.map { "\($0): \(message)" } ?? message }
    package var description: String { detail }
}
