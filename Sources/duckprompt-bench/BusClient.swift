import DuckPrompt
import DuckPromptProbe
import DuckPromptService
import Foundation

/// The bench's D-Bus client of `duckprompt serve` (figures 8 and 9): one `SessionBusClient`
/// (the library's, `DuckPrompt/Bus/`) on the session bus (`DBUS_SESSION_BUS_ADDRESS`, which
/// `duckprompt lab` exports), used from one thread, which waits in the client's `dispatch` (no
/// Dispatch, no thread of its own). It subscribes to `PromptFinished` when made and stamps each
/// one with `monotonicNanoseconds()` as it is dispatched; between calls it sends nothing, so an
/// idle service hears nothing from it.
final class BusClient {
    static let name = DuckPromptService.busName, path = DuckPromptService.objectPath
    static let interface = DuckPromptService.interface

    /// A `PromptFinished` signal: when it was dispatched (monotonic ns), its outcome and message.
    struct Finished {
        var received: UInt64
        var outcome: String
        var message: String
    }

    private let bus: SessionBusClient
    /// `PromptFinished` per prompt id, as dispatched by `bus.dispatch`.
    private var finished: [UInt64: Finished] = [:]
    /// `PromptTiming`'s `first_sample_us` per prompt id (CLOCK_MONOTONIC µs).
    private var timings: [UInt64: UInt64] = [:]

    /// Connects to the session bus and subscribes to the service's `PromptFinished`.
    /// - Throws: `BenchError` when there is no session bus or the match cannot be added.
    init() throws {
        do {
            bus = try SessionBusClient()
            // The handler runs in `dispatch`, on this thread; `self` is whole by then.
            try bus.subscribe(to: "PromptFinished", of: Self.interface, from: Self.name, path: Self.path) { [unowned self] signal in
                received(signal)
            }
            try bus.subscribe(to: "PromptTiming", of: Self.interface, from: Self.name, path: Self.path) { [unowned self] signal in
                guard let id = try? signal.readUInt64(), let first = try? signal.readUInt64() else { return }
                timings[id] = first
            }
        } catch let error as DuckPromptError {
            throw BenchError(error.message)
        }
    }

    /// Waits until `name` has an owner on the bus (`NameHasOwner`, asked every 20 ms).
    /// - Throws: `BenchError` when it has none after `timeoutMs`.
    func waitForOwner(of name: String = BusClient.name, timeoutMs: Int) throws {
        let deadline = monotonicNanoseconds() + UInt64(timeoutMs) * 1_000_000
        while try !bench({ try bus.hasOwner(name, timeoutMs: 10_000) }) {
            guard monotonicNanoseconds() < deadline else { throw BenchError("no process owns \(name) after \(timeoutMs) ms") }
            pause(ms: 20)
        }
    }

    /// `Play(as files, a{sv} options)`; returns the prompt's id once the service answered.
    /// - Throws: `BenchError` with the service's error name and message.
    func play(files: [String], options: [String: BusValue]) throws -> UInt64 {
        try bench {
            try bus.call(Self.name, Self.path, Self.interface, "Play", [.strings(files), .dictionary(options)],
                         timeoutMs: 10_000) { try $0.readUInt64() }
        }
    }

    /// `Estimate(as files, a{sv} options)`: its times in µs, by key.
    /// - Throws: `BenchError` with the service's error name and message.
    func estimate(files: [String], options: [String: BusValue]) throws -> [String: UInt64] {
        try bench {
            try bus.call(Self.name, Self.path, Self.interface, "Estimate", [.strings(files), .dictionary(options)],
                         timeoutMs: 10_000) { try $0.readOptions() }
        }.compactMapValues { if case .uint64(let us) = $0 { us } else { nil } }
    }

    /// `KeepAwake(u seconds)`.
    /// - Throws: `BenchError` with the service's error name and message.
    func keepAwake(seconds: UInt32) throws {
        try bench { try bus.call(Self.name, Self.path, Self.interface, "KeepAwake", [.uint32(seconds)], timeoutMs: 10_000) { _ in } }
    }

    /// The `PromptTiming` of `id` dispatched so far (it comes before its `PromptFinished`):
    /// its `first_sample_us`, CLOCK_MONOTONIC µs; taken once.
    func takeTiming(_ id: UInt64) -> UInt64? { timings.removeValue(forKey: id) }

    /// Dispatches what arrives until the `PromptFinished` of `id` came; nil at `deadline`
    /// (monotonic ns).
    /// - Throws: `BenchError` when the bus connection fails.
    func waitForFinished(_ id: UInt64, deadline: UInt64) throws -> Finished? {
        let left = deadline > monotonicNanoseconds() ? deadline - monotonicNanoseconds() : 0
        _ = try bench { try bus.dispatch(for: .nanoseconds(Int64(left))) { finished[id] != nil } }
        return finished.removeValue(forKey: id)
    }

    /// `PromptFinished(t id, s outcome, s message)`, read in `dispatch`.
    private func received(_ signal: BusReader) {
        let now = monotonicNanoseconds()
        guard let id = try? signal.readUInt64(), let outcome = try? signal.readString(),
              let text = try? signal.readString() else { return }
        finished[id] = Finished(received: now, outcome: outcome, message: text)
    }

    /// `body`, the library's errors as the bench's.
    private func bench<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as DuckPromptError { throw BenchError(error.message) }
    }
}
