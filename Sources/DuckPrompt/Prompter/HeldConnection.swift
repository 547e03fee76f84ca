import Glibc

/// A held `Prompter`'s connection, kept up: when the server goes away or stalls (a request
/// unanswered for the timeout: `PulseConnection.markStalledLocked`), a thread of its own
/// connects again as soon as the server answers (after 0.25 s, then twice as long each time,
/// at most 5 s apart, only while the server is gone), starts the new connection's copy of the
/// server, and restores what a prompt of this process left ducked when the server died (its
/// journal), when no other prompt holds the duck. While the connection is up the thread sleeps
/// on `ConnectionLoss`, woken by nothing else: no timer, no poll.
///
/// Thread-safe. `close()` ends the thread and closes the kept stream.
final class HeldConnection: Sendable {
    private let server: ServerOptions
    private let lock = Lock()
    /// Serialises connecting again (a prompt and the thread may both find it failed).
    private let connecting = Lock()
    /// Ends the waits between two tries when the prompter closes.
    private let pause = Condition()
    nonisolated(unsafe) private var connection: PulseConnection
    nonisolated(unsafe) private var closed = false
    /// The stream kept ready between prompts (`ReadyStreamKeeper`); its connection's.
    let keeper = ReadyStreamKeeper()
    /// The session-bus connection kept between prompts for their players (`PlayerPauser`).
    let buses = SessionBusPool()

    /// Holds `connection` (begun, perhaps not ready yet) and starts its copy of the server
    /// and the thread that keeps it up.
    init(_ connection: PulseConnection, server: ServerOptions) {
        self.connection = connection
        self.server = server
        startThread { [self] in
            try? connection.startMirror()
            keepUp()
        }
    }

    /// The connection as it is now (perhaps failed: see `usable()`).
    var current: PulseConnection { lock.withLock { connection } }

    /// The held connection when it is up, else a new one, which is held from then on.
    /// - Throws: `.unavailable` when the server refuses or does not answer; `.usage` once closed.
    func usable() throws -> PulseConnection {
        try connecting.withLock {
            let held = current
            if !held.hasFailed { return held }
            guard !lock.withLock({ closed }) else { throw DuckPromptError(.usage, "the prompter is closed") }
            let fresh = try PulseConnection(server)
            try fresh.startMirror()
            lock.withLock { connection = fresh }
            keeper.close()
            return fresh
        }
    }

    /// Ends the thread and closes the kept stream.
    func close() {
        let held = lock.withLock { () -> PulseConnection in
            closed = true
            return connection
        }
        pause.withLock {}
        pause.broadcast()
        held.loss.release()
        keeper.close()
    }

    /// The thread's body: waits for the connection's loss, then connects again until the
    /// server answers, and restores this process's kept journal; until `close()`.
    private func keepUp() {
        var delayMs = 250
        while true {
            let held = current
            guard held.loss.wait(), !lock.withLock({ closed }) else { return }
            do {
                let fresh = try usable()
                DebugTrace.write("prompter: connected again to \(fresh.serverDescription)")
                delayMs = 250
                restoreKeptJournal()
            } catch {
                // The server is not back yet: try again later, unless closed meanwhile.
                let stop = pause.withLock { () -> Bool in
                    if lock.withLock({ closed }) { return true }
                    pause.waitLocked(milliseconds: delayMs)
                    return lock.withLock { closed }
                }
                if stop { return }
                delayMs = min(delayMs * 2, 5000)
            }
        }
    }

    /// What a prompt of this process left ducked when its server died, restored now that the
    /// server answers again, under the duck lock. When the lock is held (the failed prompt
    /// still letting it go, or another prompt playing, which restores such journals itself
    /// before it ducks), a thread of its own waits for it and restores what is then still
    /// left: the music is never left ducked because the lock was busy at that moment.
    private func restoreKeptJournal() {
        guard let store = try? JournalStore() else { return }
        if let duck = try? RuntimeLock.tryAcquire(in: store.runtimeDirectory) {
            restore(store, holding: duck)
            return
        }
        DebugTrace.write("prompter: the duck lock is held: the kept journal waits for it")
        startThread { [self] in
            guard let duck = try? RuntimeLock.acquire(in: store.runtimeDirectory, timeout: nil,
                                                      cancelled: { self.lock.withLock { self.closed } })
            else { return }
            restore(store, holding: duck)
        }
    }

    /// `Recovery.recoverOrphans` of this process's own journals too, then lets `duck` go.
    private func restore(_ store: JournalStore, holding duck: RuntimeLock) {
        defer { duck.release() }
        for line in Recovery.recoverOrphans(store: store, server: server, includingOwn: true).lines {
            DebugTrace.write("prompter: \(line)")
        }
    }
}
