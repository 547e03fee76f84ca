/// A `Duration` in the units the C calls take: the one conversion of a `Duration` in the library,
/// the service and the lab (the core keeps its own, in ms, as values; a timeout already in ms,
/// like `SessionBusClient`'s, is multiplied where it is used).
extension Duration {
    /// Seconds as a Double, for messages and arithmetic.
    package var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// Whole milliseconds, rounded up (a wait of 0.1 ms is 1 ms, so a wait never returns early
    /// and spins), 0 for a duration ≤ 0, clamped to `Int32.max`: for `poll(2)`, a doorbell's
    /// and a condition variable's timeouts.
    package var waitMilliseconds: Int32 {
        guard self > .zero else { return 0 }
        let (seconds, attoseconds) = components
        return Int32(clamping: seconds.multipliedReportingOverflow(by: 1000).overflow ? Int64.max
                     : seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }

    /// Whole microseconds, rounded down, 0 for a duration ≤ 0: for libpulse's and sd-bus's µs.
    package var microseconds: UInt64 {
        guard self > .zero else { return 0 }
        let (seconds, attoseconds) = components
        return UInt64(seconds) * 1_000_000 + UInt64(attoseconds / 1_000_000_000_000)
    }
}
