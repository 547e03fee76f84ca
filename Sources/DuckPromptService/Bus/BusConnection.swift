import CBusObject
import CSystemd
import DuckPrompt
import Glibc

/// The service's one connection to the session bus, and the only caller of sd-bus besides
/// `BusMessage.swift`: it owns the bus name, exports the object (its vtable in
/// Sources/CBusObject), and runs the bus on a thread of its own, which polls the bus's
/// descriptor and a wake-up pipe and nothing else: idle, it sleeps until a
/// message arrives or another thread queues a signal. sd-bus is not thread-safe: every sd-bus
/// call happens on that thread (method handlers run there too).
///
/// sd-bus: `sd_bus_open_user` (`DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus`),
/// `sd_bus_request_name`, `sd_bus_add_object_vtable`, `sd_bus_process`, `sd_bus_get_fd`,
/// `sd_bus_get_events`, `sd_bus_get_timeout`, `sd_bus_message_new_signal`, `sd_bus_send`.
final class BusConnection: @unchecked Sendable {
    /// What a method call is answered with.
    enum Answer {
        /// A method return with these values, in order.
        case values([BusValue])
        /// An error reply: a D-Bus error name and its one-line message.
        case error(name: String, message: String)
        /// Answered later, from any thread, with `answer(_:_:)` on the call `hold(_:)` kept.
        case later
    }

    /// A method call kept for an answer that another thread works out (`Answer.later`).
    struct HeldCall: @unchecked Sendable {
        fileprivate let message: OpaquePointer
    }

    /// What the bus thread sends next: signals and late answers, in order.
    private enum Outgoing {
        case signal(member: String, values: [BusValue])
        case answer(HeldCall, Answer)
        case callState(CallState)
    }

    /// Handles one method call on the bus thread; its arguments are read from `call`.
    typealias Handler = (_ method: dp_bus_method, _ call: BusReader) -> Answer

    private let bus: OpaquePointer
    /// A pipe another thread writes a byte to, to wake the bus thread: read end, write end.
    private let wake: (read: Int32, write: Int32)
    private let lock = Lock()
    /// Signals and answers queued by other threads, sent by the bus thread. Lock held.
    private var outbox: [Outgoing] = []
    private var stopping = false
    private var object: OpaquePointer? = nil
    private let handler: Handler
    /// Told, on the bus thread, of each unique bus name that left the bus
    /// (`NameOwnerChanged` with an empty new owner).
    var onNameLost: (String) -> Void = { _ in }
    /// The match for `NameOwnerChanged` (`sd_bus_match_signal`).
    private var nameMatch: OpaquePointer? = nil
    private let path: String
    private let interface: String

    /// Connects to the session bus and takes `name`.
    /// - Throws: `DuckPromptError(.unavailable)` when there is no session bus or another
    ///   process owns `name`.
    /// `version` and `server` are the object's `Version` and `Server` properties.
    init(name: String, path: String, interface: String, version: String, server: String,
         handler: @escaping Handler) throws {
        var opened: OpaquePointer? = nil
        let r = sd_bus_open_user(&opened)
        guard r >= 0, let opened else {
            throw DuckPromptError(.unavailable, "cannot connect to the session bus: \(String(cString: strerror(-r)))")
        }
        bus = opened
        self.handler = handler
        self.path = path
        self.interface = interface
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else {
            sd_bus_flush_close_unref(opened)
            throw DuckPromptError(.internal, "pipe failed: \(String(cString: strerror(errno)))")
        }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, O_NONBLOCK)
        }
        wake = (ends[0], ends[1])
        var added: OpaquePointer? = nil
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        let a = dp_bus_object_add(bus, path, interface, version, server, { method, call, userdata, error in
            let connection = Unmanaged<BusConnection>.fromOpaque(userdata!).takeUnretainedValue()
            return connection.dispatch(method, call!, error!)
        }, userdata, &added)
        // From here every stored property is set: a throw runs deinit, which frees the object
        // and closes the bus (freeing them here too was a double free: exit 139 when another
        // process owned the name).
        guard a >= 0 else {
            throw DuckPromptError(.internal, "cannot export \(path): \(String(cString: strerror(-a)))")
        }
        object = added
        // Which clients leave the bus (a WatchRoute caller, for one).
        let m = sd_bus_match_signal(bus, &nameMatch, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                    "org.freedesktop.DBus", "NameOwnerChanged", { message, userdata, _ in
            let connection = Unmanaged<BusConnection>.fromOpaque(userdata!).takeUnretainedValue()
            let reader = BusReader(message: message!)
            if let name = try? reader.readString(), let _ = try? reader.readString(),
               let owner = try? reader.readString(), owner.isEmpty, name.hasPrefix(":") {
                connection.onNameLost(name)
            }
            return 0
        }, userdata)
        guard m >= 0 else {
            throw DuckPromptError(.internal, "cannot follow NameOwnerChanged: \(String(cString: strerror(-m)))")
        }
        let n = sd_bus_request_name(bus, name, 0)
        guard n >= 0 else {
            let why = n == -EEXIST ? "another process owns it" : String(cString: strerror(-n))
            throw DuckPromptError(.unavailable, "cannot take the bus name \(name): \(why)")
        }
    }

    deinit {
        sd_bus_slot_unref(nameMatch)
        dp_bus_object_free(object)
        sd_bus_flush_close_unref(bus)
        close(wake.read)
        close(wake.write)
    }

    /// Queues a signal on the object; sent by the bus thread. Any thread.
    func emit(_ member: String, _ values: [BusValue]) {
        lock.withLock { outbox.append(.signal(member: member, values: values)) }
        poke()
    }

    /// Sets the `CallState` property; sent (with `PropertiesChanged` when it changed) by the
    /// bus thread. Any thread.
    func setCallState(_ state: CallState) {
        lock.withLock { outbox.append(.callState(state)) }
        poke()
    }

    /// Keeps a call for a later answer; on the bus thread, in a handler (`sd_bus_message_ref`).
    func hold(_ call: BusReader) -> HeldCall {
        HeldCall(message: sd_bus_message_ref(call.message))
    }

    /// Answers a held call; sent by the bus thread, which then lets it go. Any thread.
    func answer(_ call: HeldCall, _ answer: Answer) {
        lock.withLock { outbox.append(.answer(call, answer)) }
        poke()
    }

    /// Ends `run()` once queued signals are sent. Any thread.
    func stop() {
        lock.withLock { stopping = true }
        poke()
    }

    /// Runs the bus on the calling thread until `stop()`, or until `idle` returns true when
    /// `idleTimeout` seconds passed with no call (nil: never). Returns normally, or throws
    /// when the bus connection is lost.
    /// - Throws: `DuckPromptError(.unavailable)` when the bus closes the connection.
    func run(idleTimeout: Double? = nil, idle: () -> Bool = { true }) throws {
        let clock = ContinuousClock()
        let idleDuration = idleTimeout.map { Duration.milliseconds(Int64(($0 * 1000).rounded(.up))) }
        var lastActivity = clock.now
        while true {
            var processed: Int32
            repeat {
                processed = sd_bus_process(bus, nil)
                if processed < 0 {
                    throw DuckPromptError(.unavailable, "the session bus went away: \(String(cString: strerror(-processed)))")
                }
                if processed > 0 { lastActivity = clock.now }
            } while processed > 0
            if !sendQueuedItems() { lastActivity = clock.now }
            if lock.withLock({ stopping }) {
                sd_bus_flush(bus)
                return
            }
            var timeoutMs: Int32 = -1
            var deadline: UInt64 = 0
            if sd_bus_get_timeout(bus, &deadline) >= 0, deadline != UInt64.max {
                // sd_bus_get_timeout's deadline: CLOCK_MONOTONIC, in µs.
                var ts = timespec()
                clock_gettime(CLOCK_MONOTONIC, &ts)
                let now = UInt64(ts.tv_sec) * 1_000_000 + UInt64(ts.tv_nsec) / 1000
                timeoutMs = deadline > now ? Duration.microseconds(Int64(clamping: deadline - now)).waitMilliseconds : 0
            }
            if let idleDuration {
                let left = idleDuration - lastActivity.duration(to: clock.now)
                if left <= .zero {
                    if idle() { sd_bus_flush(bus); return }
                    DebugTrace.write("serve: idle for \(idleTimeout ?? 0) s, but a prompt, a call or a route watcher is there: staying")
                    lastActivity = clock.now
                } else {
                    let ms = left.waitMilliseconds
                    timeoutMs = timeoutMs < 0 ? ms : min(timeoutMs, ms)
                }
            }
            var fds = [pollfd(fd: sd_bus_get_fd(bus), events: Int16(sd_bus_get_events(bus)), revents: 0),
                       pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)]
            do {
                _ = try POSIX.poll(&fds, until: timeoutMs < 0 ? nil : .now + .milliseconds(timeoutMs))
            } catch {
                throw DuckPromptError(.internal, "poll failed: \(error)")
            }
            if fds[1].revents != 0 {
                var bytes = [UInt8](repeating: 0, count: 256)
                while (try? bytes.withUnsafeMutableBytes { try POSIX.read(wake.read, into: $0) }) ?? 0 > 0 {}
            }
        }
    }

    /// Sends what other threads queued and flushes; after `run()` returned, on the thread that
    /// ran it (the last signals before an exit).
    func sendQueued() {
        _ = sendQueuedItems()
        sd_bus_flush(bus)
    }

    /// Sends the queued signals and answers; true when there were none. Bus thread.
    private func sendQueuedItems() -> Bool {
        let pending = lock.withLock { () -> [Outgoing] in
            defer { outbox.removeAll() }
            return outbox
        }
        for item in pending {
            switch item {
            case .signal(let member, let values): send(member, values)
            case .callState(let state):
                let r = dp_bus_object_set_call_state(object, bus, path, interface, state.rawValue)
                if r < 0 { serviceLog("CallState not sent: \(String(cString: strerror(-r)))") }
            case .answer(let call, let answer):
                var error = sd_bus_error()
                let r = reply(call.message, answer, &error)
                if r < 0 { _ = sd_bus_reply_method_errno(call.message, r, &error) }
                sd_bus_error_free(&error)
                sd_bus_message_unref(call.message)
            }
        }
        return pending.isEmpty
    }

    private func poke() {
        var one: UInt8 = 1
        _ = write(wake.write, &one, 1)
    }

    /// On the bus thread: a signal on the object.
    private func send(_ member: String, _ values: [BusValue]) {
        var message: OpaquePointer? = nil
        guard sd_bus_message_new_signal(bus, &message, path, interface, member) >= 0, let message else { return }
        defer { sd_bus_message_unref(message) }
        do {
            for value in values { try BusWriter(message: message).append(value) }
            _ = sd_bus_send(bus, message, nil)
        } catch {
            serviceLog("signal \(member) not sent: \(error)")
        }
    }

    /// On the bus thread: one method call, answered.
    private func dispatch(_ method: dp_bus_method, _ call: OpaquePointer,
                          _ error: UnsafeMutablePointer<sd_bus_error>) -> Int32 {
        reply(call, handler(method, BusReader(message: call)), error)
    }

    /// Sends `answer` to `call`: 1 when sent (or left for later), else a negative errno with
    /// `error` set, which sd-bus (or the caller) sends instead.
    private func reply(_ call: OpaquePointer, _ answer: Answer, _ error: UnsafeMutablePointer<sd_bus_error>) -> Int32 {
        switch answer {
        case .later:
            return 1
        case .error(let name, let message):
            return sd_bus_error_set(error, name, message)
        case .values(let values):
            var reply: OpaquePointer? = nil
            var r = sd_bus_message_new_method_return(call, &reply)
            guard r >= 0, let reply else { return r }
            defer { sd_bus_message_unref(reply) }
            do {
                for value in values { try BusWriter(message: reply).append(value) }
            } catch let failure as BusError {
                return failure.errno
            } catch {
                return -EIO
            }
            r = sd_bus_send(nil, reply, nil)
            return r < 0 ? r : 1
        }
    }
}
