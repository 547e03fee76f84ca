/// Waits for the turns of a held `Prompter`'s queued prompts, all on one thread: a waiting
/// prompt costs no thread of its own, and the queue is read once per look however many wait
/// (each waiting thread read it every 5 ms once: 64 waiting prompts made 12 800 reads of the
/// queue directory a second, a core's whole time). It looks when its `WaiterBell` rings (a
/// ticket left, a stop request, the duck lock released; a prompt added or cancelled here), at
/// the nearest deadline, or after `WaiterBell.fallback`: at each waiting ticket (cancelled,
/// stopped by a newer prompt, past its deadline: `Ticket.checkStillWaiting`), and gives the
/// turn to the one that is next (`Ticket.takeTurn(among:)`); each is handed its outcome once,
/// on the waiter's thread, which then forgets it. The thread and its bell live while a prompt
/// waits and end when none does.
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

    private let lock = Lock()
    /// Lock held.
    private var waiting: [Waiting] = []
    /// The running thread's bell; nil when no thread runs. Lock held.
    private var bell: WaiterBell?

    /// Waits for `prompt`'s turn along with the others; `prompt.done` is called from the
    /// waiter's thread, or from the caller's when nothing waits here and the turn is free now
    /// (`takeNow`). Does not wait.
    func wait(_ prompt: Waiting) {
        if takeNow(prompt) { return }
        let (running, start) = lock.withLock { () -> (WaiterBell, Bool) in
            waiting.append(prompt)
            if let bell { return (bell, false) }
            // Made before the thread's first look: a change after it rings it.
            let made = WaiterBell(in: prompt.ticket.queue.directory)
            bell = made
            return (made, true)
        }
        if start {
            startThread { [self] in run(running) }
        } else {
            running.wake()
        }
    }

    /// The first look, on the caller's thread, when no prompt waits here (the waiter's thread
    /// does not run): a prompt whose turn is free now (an idle service's next prompt) is told
    /// at once, without the bell's FIFO and the waiter's thread, one thread hop less before
    /// its first sample. The queue decides as on the waiter's thread (`Ticket.takeTurn`: the
    /// next of the user's whole queue, the duck lock free); a prompt another waits before, or
    /// a queue that cannot be read, goes to the waiter's thread, which looks again.
    /// - Returns: whether `prompt.done` was called.
    private func takeNow(_ prompt: Waiting) -> Bool {
        guard lock.withLock({ waiting.isEmpty && bell == nil }) else { return false }
        do {
            try prompt.ticket.checkStillWaiting(deadline: prompt.deadline, expireMs: prompt.expireMs,
                                                cancelled: prompt.cancelled)
        } catch {
            prompt.done(.failure(error))
            return true
        }
        guard let (_, turn) = try? Ticket.takeTurn(among: [prompt.ticket]) else { return false }
        prompt.done(.success(turn))
        return true
    }

    /// Looks again now (a prompt was cancelled). Any thread.
    func poke() { lock.withLock { bell }?.wake() }

    private func run(_ bell: WaiterBell) {
        while true {
            let now = lock.withLock { () -> [Waiting]? in
                if waiting.isEmpty {
                    self.bell = nil
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
            let done = lock.withLock { () -> [(Waiting, Result<RuntimeLock, any Error>)] in
                var told: [(Waiting, Result<RuntimeLock, any Error>)] = []
                for (ticket, result) in ended {
                    guard let i = waiting.firstIndex(where: { $0.ticket === ticket }) else { continue }
                    told.append((waiting.remove(at: i), result))
                }
                return told
            }
            for (prompt, result) in done { prompt.done(result) }
            if !done.isEmpty { continue }
            bell.wait(until: now.compactMap(\.deadline).min())
        }
    }
}
