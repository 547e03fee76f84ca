// Between two prompts: whether another waits its turn, and handing the duck over to it so
// that nothing rises in between (`PromptRun`'s `.checkQueue` and `.handOver`).
/// Whether a prompt other than `ticket`'s is in the queue (waiting its turn): then the duck is
/// handed over to it rather than released.
func anotherPromptWaits(store: JournalStore, ticket: Ticket) -> Bool {
    let queue = PromptQueue(directory: store.runtimeDirectory)
    let live = (try? queue.withQueueLock { _ in try queue.liveTickets() }) ?? []
    return live.contains { $0.seq != ticket.seq }
}

/// What became of a duck handed over (`handOver`).
enum Handover {
    /// The next prompt adopted it (or will find it).
    case handedOver
    /// No prompt was left to adopt it: it is this prompt's again, with this lock; release it.
    case reclaimed(RuntimeLock)
    /// Nothing was ducked, or the handover file could not be written: release as usual.
    case kept
}

/// Hands a prompt's duck to the next prompt (the one that interrupted it, or the next one
/// waiting its turn): writes `handover.json`, leaves the queue, releases the `RuntimeLock`, and
/// waits until the next prompt adopts it (that one removes the file). When no prompt is left in
/// the queue to adopt it, takes it back with the lock: at once, or, with `keepFor` (a cancel
/// that keeps the duck, `Prompter.cancel(_:keepingDuckFor:)`), once that long has passed with
/// no prompt come to adopt it.
func handOver(_ session: DuckSession, store: JournalStore, ticket: Ticket,
              lock: RuntimeLock, keepFor: Duration = .zero) -> Handover {
    guard (try? session.handOver()) == true else { return .kept }
    // Made before the ticket leaves: the adoption (`removeHandover`) rings it.
    let bell = WaiterBell(in: store.runtimeDirectory)
    ticket.leave()
    lock.release()
    let queue = PromptQueue(directory: store.runtimeDirectory)
    let keepUntil = ContinuousClock.now + keepFor
    let giveUp = ContinuousClock.now + .seconds(10)
    while store.hasHandover && ContinuousClock.now < giveUp {
        // A new ticket rings no bell: the end of the keeping is looked at on time.
        bell.wait(until: ContinuousClock.now < keepUntil ? keepUntil : giveUp)
        // No one left to adopt it (the interrupting prompt died or was dropped; or no prompt
        // came while the duck was kept)?
        guard ContinuousClock.now >= keepUntil else { continue }
        let nobody = (try? queue.withQueueLock { _ in try queue.liveTickets().isEmpty }) ?? false
        if nobody, let again = try? RuntimeLock.tryAcquire(in: store.runtimeDirectory) {
            if session.reclaim() { return .reclaimed(again) }
            again.release()
        }
    }
    // Adopted; or, after 10 s, left for the next duckprompt to restore once this one exits.
    return .handedOver
}
