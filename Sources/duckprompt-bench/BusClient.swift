import CSystemd
import DuckPrompt
import DuckPromptProbe
import DuckPromptService
import Foundation

/// The bench's D-Bus client of `duckprompt serve` (figures 8 and 9), and the bench's only
/// caller of sd-bus: one connection to the session bus (`DBUS_SESSION_BUS_ADDRESS`, which
/// `Scripts/sound-server` exports), used from one thread, which waits in `sd_bus_wait` (no
/// Dispatch, no thread of its own). It subscribes to `PromptFinished` when made and stamps each
/// one with `monotonicNanoseconds()` as it is dispatched; between calls it sends nothing, so an
/// idle service hears nothing from it.
///
/// Messages are written and read by the service's own `BusWriter` and `BusReader`.
/// sd-bus: `sd_bus_open_user`, `sd_bus_match_signal`, `sd_bus_message_new_method_call`,
/// `sd_bus_call`, `sd_bus_process`, `sd_bus_wait`.
final class BusClient {
    static let name = DuckPromptService.busName, path = DuckPromptService.objectPath
    static let interface = DuckPromptService.interface

    /// A `PromptFinished` signal: when it was dispatched (monotonic ns), its outcome and message.
    struct Finished {
        var received: UInt64
        var outcome: String
        var message: String
    }

    private let bus: OpaquePointer
    private var slot: OpaquePointer? = nil
    /// `PromptFinished` per prompt id, as dispatched by `sd_bus_process`.
    private var finished: [UInt64: Finished] = [:]

    /// Connects to the session bus and subscribes to the service's `PromptFinished`.
    /// - Throws: `BenchError` when there is no session bus or the match cannot be added.
    init() throws {
        var opened: OpaquePointer? = nil
        let r = sd_bus_open_user(&opened)
        guard r >= 0, let opened else { throw BenchError("no session bus: \(String(cString: strerror(-r)))") }
        bus = opened
        // The slot is released in deinit, before self: the callback's unretained self is
        // alive whenever sd-bus can call it.
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        let m = sd_bus_match_signal(bus, &slot, Self.name, Self.path, Self.interface, "PromptFinished", { message, userdata, _ in
            let client = Unmanaged<BusClient>.fromOpaque(userdata!).takeUnretainedValue()
            client.received(message!)
            return 0
        }, userdata)
        // Thrown with self whole: deinit closes the bus.
        guard m >= 0 else { throw BenchError("cannot subscribe to PromptFinished: \(String(cString: strerror(-m)))") }
    }

    deinit {
        sd_bus_slot_unref(slot)
        sd_bus_flush_close_unref(bus)
    }

    /// Waits until `name` has an owner on the bus (`NameHasOwner`, asked every 20 ms).
    /// - Throws: `BenchError` when it has none after `timeoutMs`.
    func waitForOwner(of name: String = BusClient.name, timeoutMs: Int) throws {
        let deadline = monotonicNanoseconds() + UInt64(timeoutMs) * 1_000_000
        while true {
            var owned = false
            try call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner", [.string(name)]) { reply in
                owned = try reply.readBool()
            }
            if owned { return }
            guard monotonicNanoseconds() < deadline else { throw BenchError("no process owns \(name) after \(timeoutMs) ms") }
            pause(ms: 20)
        }
    }

    /// `Play(as files, a{sv} options)`; returns the prompt's id once the service answered.
    /// - Throws: `BenchError` with the service's error name and message.
    func play(files: [String], options: [String: BusValue]) throws -> UInt64 {
        var id: UInt64 = 0
        try call(Self.name, Self.path, Self.interface, "Play", [.strings(files), .dictionary(options)]) { reply in
            id = try reply.readUInt64()
        }
        return id
    }

    /// Dispatches what arrives (`sd_bus_process`, then `sd_bus_wait` until `deadline`) until
    /// the `PromptFinished` of `id` came; nil at the deadline.
    /// - Throws: `BenchError` when the bus connection fails.
    func waitForFinished(_ id: UInt64, deadline: UInt64) throws -> Finished? {
        while finished[id] == nil {
            let r = sd_bus_process(bus, nil)
            try check(r, "processing the bus")
            if r > 0 { continue }
            let now = monotonicNanoseconds()
            guard now < deadline else { return nil }
            try check(sd_bus_wait(bus, (deadline - now) / 1000 + 1), "waiting on the bus")
        }
        return finished.removeValue(forKey: id)
    }

    /// `PromptFinished(t id, s outcome, s message)`, read in `sd_bus_process`.
    private func received(_ message: OpaquePointer) {
        let now = monotonicNanoseconds()
        let signal = BusReader(message: message)
        guard let id = try? signal.readUInt64(), let outcome = try? signal.readString(),
              let text = try? signal.readString() else { return }
        finished[id] = Finished(received: now, outcome: outcome, message: text)
    }

    /// One method call of `arguments`, 10 s at most; `read` reads the reply.
    private func call(_ destination: String, _ path: String, _ interface: String, _ member: String,
                      _ arguments: [BusValue], reading read: (BusReader) throws -> Void) throws {
        do {
            try callMethod(on: bus, destination, path, interface, member, arguments, timeoutMs: 10_000, reading: read)
        } catch let error as DuckPromptError {
            throw BenchError(error.message)
        }
    }
}
