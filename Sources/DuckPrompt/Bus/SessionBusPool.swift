/// Session-bus connections kept between a held `Prompter`'s prompts, for their players' calls
/// (`PlayerPauser`): a prompt borrows one and gives it back when it is done with its players,
/// so that the next prompt with a stream playing skips the connection's handshake (measured
/// in the service's trace on PulseAudio: 0.49 ms from asking the bus to knowing the players,
/// most of it `sd_bus_open_user`'s SASL and `Hello`). One is kept; a prompt that finds none
/// idle (another has it) connects as before. A connection found closed (the bus daemon gone)
/// is let go and a new one made.
///
/// Thread-safe; a connection lent is used by its borrower alone (`SessionBusClient` is not
/// thread-safe).
final class SessionBusPool: @unchecked Sendable {
    private let lock = Lock()
    /// Lock held.
    private var idle: SessionBusClient?

    /// A connection of the pool's, or a new one.
    /// - Throws: what `SessionBusClient()` throws (no session bus).
    func borrow() throws -> SessionBusClient {
        if let kept = lock.withLock({ () -> SessionBusClient? in
            defer { idle = nil }
            return idle
        }), kept.isOpen {
            return kept
        }
        return try SessionBusClient()
    }

    /// Keeps `bus` for the next borrower, unless one is kept already (then it is closed).
    func giveBack(_ bus: SessionBusClient) {
        lock.withLock { if idle == nil, bus.isOpen { idle = bus } }
    }
}
