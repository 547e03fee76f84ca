/// Waits for the turns of a held `Prompter`'s queued prompts, all on one thread: a waiting
/// prompt costs no thread of its own, and the queue is read once per look however many wait
/// (each waiting thread read it every `PromptQueue.pollInterval` before: 64 waiting prompts made
/// 12 800 reads of the queue directory a second, a core's whole time). Every
/// `PromptQueue.pollInterval` (less often when many wait) it looks at each waiting ticket (cancelled, stopped by a newer prompt, past its deadline:
/// `Ticket.checkStillWaiting`) and gives the turn to the one that is next
/// (`Ticket.takeTurn(among:)`); each is handed its outcome once, on the waiter's thread, which
/// then forgets it. The thread runs while a prompt waits and ends when none does.
///
/// Thread-safe.
final class TurnWaiter: @unchecked Sendable {
    /// A prompt waiting for its turn.
    struct Waiting {
        let ticket: Ticket
        /// When it is dropped unstarted (`PlayOptions.expireMs` from the call); nil: never.
        let deadline: ContinuousClock.Instant?
        let expireMs: Int?
        let cancelled: @Sendable () -> Bool
        /// Told once: the turn's lock, or why the prompt will not play (the ticket left).
        let done: @Sendable (Result<RuntimeLock, any Error>) -> Void
    }

    private let condition = Condition()
    /// Condition's lock held.
    private var waiting: [Waiting] = []
    private var running = false

    /// Waits for `prompt`'s turn along with the others; `prompt.done` is called from the
    /// waiter's thread. Does not wait.
    func wait(_ prompt: Waiting) {
        let start = condition.withLock { () -> Bool in
            waiting.append(prompt)
            defer { running = true }
            return !running
        }
        if start { startThread { [self] in run() } }
    }

    /// Looks again now rather than at the next poll (a prompt was cancelled). Any thread.
    func poke() { condition.broadcast() }

    private func run() {
        while true {
            let now = condition.withLock { () -> [Waiting]? in
                if waiting.isEmpty {
                    running = false
                    return nil
                }
                return waiting
            }
            guard let now else { return }
            var ended: [(Ticket, Result<RuntimeLock, any Error>)] = []
            var still: [Waiting] = []
            for prompt in now {
                do {
                    try prompt.ticket.checkStillWaiting(deadline: prompt.deadline, expireMs: prompt.expireMs,
                                                        cancelled: prompt.cancelled)
                    still.append(prompt)
                } catch {
                    ended.append((prompt.ticket, .failure(error)))
                }
            }
            do {
                if let (ticket, lock) = try Ticket.takeTurn(among: still.map(\.ticket)) {
                    ended.append((ticket, .success(lock)))
                }
            } catch {
                // The queue cannot be read: every waiting prompt fails with it.
                for prompt in still {
                    prompt.ticket.leave()
                    ended.append((prompt.ticket, .failure(error)))
                }
            }
            let done = condition.withLock { () -> [(Waiting, Result<RuntimeLock, any Error>)] in
                var told: [(Waiting, Result<RuntimeLock, any Error>)] = []
                for (ticket, result) in ended {
                    guard let i = waiting.firstIndex(where: { $0.ticket === ticket }) else { continue }
                    told.append((waiting.remove(at: i), result))
                }
                return told
            }
            for (prompt, result) in done { prompt.done(result) }
            if !done.isEmpty { continue }
            // The next look: every `PromptQueue.pollInterval` for up to 8 waiting prompts, less
            // often for more (each look reads every waiting ticket's stop file and the whole
            // queue: with 64 waiting, every 40 ms), sooner when the nearest deadline is.
            var pause = PromptQueue.pollInterval * max(1, still.count / 8)
            if let nearest = now.compactMap(\.deadline).min() { pause = min(pause, max(.zero, nearest - .now)) }
            let ms = Int(pause.components.attoseconds / 1_000_000_000_000_000) + Int(pause.components.seconds) * 1000
            condition.withLock { _ = condition.waitLocked(milliseconds: max(1, ms)) }
        }
    }
}
