/// Where a prompter's prompts learn of the calls the session and system buses know of
/// (`CallBusSource`), without waiting for the buses at the prompt's route: a held prompter
/// follows them with a `BusCallWatch` started on a thread of its own when the prompter is
/// made; a one-shot prompt reads them once on a thread begun with it (`BusCalls.read`, about
/// 1 ms), joined at its route. A deferred prompt (`--during-call defer`) follows them while
/// it waits (`follow`): woken by the held watch, or by a watch a one-shot prompt starts then.
///
/// Thread-safe.
final class PromptCalls: @unchecked Sendable {
    private let condition = Condition()
    /// Guarded by `condition`.
    private var watch: BusCallWatch?
    private var first: [CallReading]?
    private var used = false
    private var closed = false
    /// Who `follow` wakes on a change, by key.
    private var followers: [Int: @Sendable () -> Void] = [:]
    private var lastFollower = 0
    private let held: Bool

    /// - Parameter held: follow the buses (a held prompter), rather than read them once.
    init(held: Bool) {
        self.held = held
        startThread { [self] in
            if held {
                let made = try? BusCallWatch(onChange: { [weak self] readings in
                    DebugTrace.write("calls on the buses: \(readings.map { "\($0.source.rawValue) \($0.state.rawValue)" })")
                    self?.changed()
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

    /// Calls `onChange` (on a watch's thread; it must not wait) each time the buses' calls
    /// change, until the returned function is called: a deferred prompt's wait. A held
    /// prompter's watch tells of the changes; for a one-shot prompt a watch is started here
    /// (a few ms: it reads every source first), whose readings `readings()` gives meanwhile,
    /// and stopped by the returned function.
    func follow(_ onChange: @escaping @Sendable () -> Void) -> () -> Void {
        let key = condition.withLock { () -> Int in
            lastFollower += 1
            followers[lastFollower] = onChange
            return lastFollower
        }
        let own = held ? nil : try? BusCallWatch(onChange: { [weak self] _ in self?.changed() })
        if let own {
            let taken = condition.withLock { () -> Bool in
                guard watch == nil && !closed else { return false }
                watch = own
                condition.broadcast()
                return true
            }
            if !taken { own.stop() }
        }
        return { [self] in
            let ending = condition.withLock { () -> BusCallWatch? in
                followers[key] = nil
                guard let own, watch === own else { return nil }
                watch = nil
                return own
            }
            ending?.stop()
        }
    }

    /// Tells every follower of a change.
    private func changed() {
        for onChange in condition.withLock({ Array(followers.values) }) { onChange() }
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
