/// Where a prompter's prompts learn of the calls the session and system buses know of
/// (`CallBusSource`), without waiting for the buses at the prompt's route: a held prompter
/// follows them with a `BusCallWatch` started on a thread of its own when the prompter is
/// made; a one-shot prompt reads them once on a thread begun with it (`BusCalls.read`, about
/// 1 ms), joined at its route. A deferred prompt (`--during-call defer`) asks again at each
/// look: the watch's readings, or a new read.
///
/// Thread-safe.
final class PromptCalls: @unchecked Sendable {
    private let condition = Condition()
    /// Guarded by `condition`.
    private var watch: BusCallWatch?
    private var first: [CallReading]?
    private var used = false
    private var closed = false
    private let held: Bool

    /// - Parameter held: follow the buses (a held prompter), rather than read them once.
    init(held: Bool) {
        self.held = held
        startThread { [self] in
            if held {
                let made = try? BusCallWatch(onChange: { readings in
                    DebugTrace.write("calls on the buses: \(readings.map { "\($0.source.rawValue) \($0.state.rawValue)" })")
                })
                let extra = condition.withLock { () -> BusCallWatch? in
                    defer { condition.broadcast() }
                    if closed { return made }
                    watch = made
                    if made == nil { first = [] }
                    return nil
                }
                extra?.stop()
            } else {
                let read = BusCalls.read()
                condition.withLock {
                    first = read
                    condition.broadcast()
                }
            }
        }
    }

    /// The calls on the buses now: the watch's, or the first read (waited for), then new reads.
    func readings() -> [CallReading] {
        let (following, once) = condition.withLock { () -> (BusCallWatch?, [CallReading]?) in
            while watch == nil && first == nil && !closed { condition.waitLocked() }
            if let watch { return (watch, nil) }
            defer { used = true }
            return (nil, used ? nil : first)
        }
        if let following { return following.readings }
        return once ?? BusCalls.read()
    }

    /// Stops the watch (a held prompter's `close()`).
    func close() {
        let ending = condition.withLock { () -> BusCallWatch? in
            defer { watch = nil; closed = true; condition.broadcast() }
            return watch
        }
        ending?.stop()
    }
}
