import DuckPrompt

/// Opened once, from any thread; `wait(upTo:)` returns when it is open or the time ran out.
final class Latch: @unchecked Sendable {
    private let condition = Condition()
    private var isOpen = false

    func open() {
        condition.withLock { isOpen = true }
        condition.broadcast()
    }

    func wait(upTo limit: Duration) {
        let deadline = ContinuousClock.now + limit
        condition.withLock {
            while !isOpen {
                let left = deadline - ContinuousClock.now
                guard left > .zero else { return }
                _ = condition.waitLocked(milliseconds: Int(left.waitMilliseconds))
            }
        }
    }
}
