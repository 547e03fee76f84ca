/// The calls the D-Bus sources tell of (`CallBusSource`: GNOME Calls and PipeWire's Bluetooth
/// telephony on the session bus, ModemManager and oFono on the system bus), read once.
package enum BusCalls {
    /// One look at every D-Bus source, on a connection of its own to each bus (opened and
    /// closed here), one source after the other.
    ///
    /// A bus that cannot be reached (no session bus, no system bus socket) and a source that is
    /// not running give no calls, never an error: with nothing running, this takes one
    /// connection to each bus and one refused call per source, 1.2 ms (median of 10, a lab's
    /// session bus and a private system bus; 0.6 ms with no system bus;
    /// `CallSourceIntegrationTests.nothingThere`).
    /// - Parameter timeoutMs: the most each D-Bus call may take, in milliseconds (a source that
    ///   hangs costs that per call).
    /// - Returns: every call found, by source (`CallBusSource`'s order), then object path.
    package static func read(timeoutMs: Int = 250) -> [CallReading] {
        var buses: [BusKind: SessionBusClient?] = [:]
        return CallBusSource.allCases.flatMap { source -> [CallReading] in
            if buses[source.bus] == nil { buses[source.bus] = .some(try? SessionBusClient(source.bus)) }
            guard let bus = buses[source.bus] ?? nil else { return [] }
            return source.read(on: bus, timeoutMs: timeoutMs)
        }
    }
}
