import FoundationEssentials
import Glibc

/// The prompt queue shared by every duckprompt of a user, across processes and inside one:
/// one ticket file per prompt in the `RuntimeDirectory` (`$XDG_RUNTIME_DIR/duckprompt/`), the
/// rules of `QueuePolicy`, and the `RuntimeLock` for the prompt that plays.
///
/// Files:
/// - `queue.lock`: held (`flock` `LOCK_EX`) for the few µs a prompt reads or changes the queue;
///   holds the arrival counter.
/// - `ticket-<seq>.json`: one per waiting or playing prompt (`{"seq", "pid", "priority",
///   "playing", "name"}`). Its owner holds a shared `flock` on it for as long as it is in the
///   queue: a ticket whose lock can be taken belongs to a dead prompt and is removed.
/// - `ticket-<seq>.stop`: written by a newer prompt that interrupts or replaces it; a
///   `StopRequest` in JSON. A waiting owner looks for it when its `WaiterBell` rings; a
///   playing one when its ticket's bell rings.
/// - `ticket-<seq>.bell`: a playing owner's `Doorbell` (a FIFO), rung after the stop file is
///   written.
/// - `wait-<pid>-<n>.bell`: a waiting process's `WaiterBell`, rung by every change that may
///   give the turn to another: a ticket leaving, a stop request, the duck lock released.
///
/// Threading: a `PromptQueue` is immutable; a `Ticket` is used by one thread at a time, except
/// `stopRequest`, which any thread may call.
package final class PromptQueue: Sendable {
    let directory: RuntimeDirectory

    /// How often a waiting prompt looks at the queue, and a playing one for a stop request,
    /// where the file system refuses the FIFOs of their bells.
    package static let pollInterval: Duration = .milliseconds(5)

    /// - Parameter directory: the runtime directory (it holds the journals and the lock too).
    package init(directory: RuntimeDirectory) {
        self.directory = directory
    }

    /// Enters the queue (`QueuePolicy.arrive`): tells the prompts it interrupts or replaces to
    /// stop, and takes a ticket.
    ///
    /// - Parameters:
    ///   - priority: the prompt's priority.
    ///   - onBusyDrop: `--on-busy drop`: give up when any prompt plays or waits.
    ///   - name: for messages (`media.name`, the file name).
    /// - Returns: the ticket; `waitTurn` it, then `leave()` it when the prompt is done.
    /// - Throws: `DuckPromptError(.dropped)` with the reason when the policy drops the prompt;
    ///   `.internal` naming the file when a queue file cannot be used.
    package func enter(priority: PromptPriority, onBusyDrop: Bool = false, name: String = "") throws -> Ticket {
        try withQueueLock { counterFD in
            let live = try liveTickets()
            switch QueuePolicy.arrive(priority, into: live.map(\.prompt), onBusyDrop: onBusyDrop) {
            case .drop(let reason):
                throw DuckPromptError(.dropped, "prompt dropped: \(reason)", dropReason: .busy)
            case .enqueue(let interrupt, let replace):
                let seq = try nextSeq(counterFD)
                let who = "\(priority.rawValue) prompt (pid \(getpid()))"
                let article = priority == .important ? "an" : "a"
                for s in interrupt { requestStop(seq: s, StopRequest(drop: .interrupted, by: "\(article) \(who)")) }
                for s in replace { requestStop(seq: s, StopRequest(drop: .replaced, by: "a newer \(who)")) }
                return try Ticket(queue: self, seq: seq, priority: priority, name: name)
            }
        }
    }

    // MARK: - Files

    static let lockName = "queue.lock"
    static func ticketName(_ seq: UInt64) -> String { "ticket-\(seq).json" }
    static func stopName(_ seq: UInt64) -> String { "ticket-\(seq).stop" }
    static func bellName(_ seq: UInt64) -> String { "ticket-\(seq).bell" }

    /// `ticket-<seq>.json` → seq.
    static func seq(inTicketName name: String) -> UInt64? {
        guard name.hasPrefix("ticket-"), name.hasSuffix(".json") else { return nil }
        return UInt64(name.dropFirst("ticket-".count).dropLast(".json".count))
    }

    /// What a ticket file holds.
    struct TicketRecord: Codable, Equatable {
        var seq: UInt64
        var pid: Int32
        var priority: PromptPriority
        var playing: Bool
        var name: String
        var prompt: QueuedPrompt { QueuedPrompt(seq: seq, priority: priority, playing: playing) }
    }

    /// Runs `body` holding `queue.lock` (blocking `flock`: it is held only for a few file
    /// operations).
    func withQueueLock<T>(_ body: (Int32) throws -> T) throws -> T {
        let fd = try directory.open(Self.lockName, O_CREAT | O_RDWR, mode: 0o600)
            .orThrow("cannot open \(directory.path(of: Self.lockName))")
        defer { try? POSIX.close(fd) }
        try orThrow("cannot lock \(directory.path(of: Self.lockName))", POSIX.flock(fd, LOCK_EX))
        defer { try? POSIX.flock(fd, LOCK_UN) }
        return try body(fd)
    }

    /// The next arrival number, kept in `queue.lock` (queue lock held).
    private func nextSeq(_ fd: Int32) throws -> UInt64 {
        var buffer = [UInt8](repeating: 0, count: 32)
        let n = buffer.withUnsafeMutableBytes { (try? POSIX.pread(fd, into: $0, at: 0)) ?? -1 }
        let last = n > 0 ? UInt64(String(decoding: buffer[0..<n], as: UTF8.self)
            .trimmingWhitespace()) ?? 0 : 0
        let seq = last + 1
        let text = Array("\(seq)\n".utf8)
        let written = text.withUnsafeBytes { (try? POSIX.pwrite(fd, $0, at: 0)) ?? -1 }
        guard written == text.count else { throw Errno.current.failure("cannot write \(directory.path(of: Self.lockName))") }
        try? POSIX.ftruncate(fd, text.count)  // after the write: see `Ticket.write(playing:)`
        return seq
    }

    /// The tickets of live prompts, in arrival order; removes those of dead ones, and stop files
    /// and bells left without a ticket (queue lock held).
    func liveTickets() throws -> [TicketRecord] {
        var live: [TicketRecord] = []
        let names = try directory.names()
        for name in names {
            guard let seq = Self.seq(inTicketName: name),
                  case .success(let fd) = directory.open(name, O_RDONLY | O_NONBLOCK) else { continue }
            defer { try? POSIX.close(fd) }
            // The owner holds LOCK_SH for as long as it is queued: an exclusive lock that
            // succeeds means the owner is gone.
            if (try? POSIX.flock(fd, LOCK_EX | LOCK_NB)) != nil {
                directory.unlink(name)
                directory.unlink(Self.stopName(seq))
                directory.unlink(Self.bellName(seq))
                continue
            }
            guard case .success(let data) = directory.read(name, limit: BoundedFile.journalLimit),
                  let record = try? JSONDecoder().decode(TicketRecord.self, from: data), record.seq == seq else {
                // Being written by its owner (it holds the lock): not counted this time.
                continue
            }
            live.append(record)
        }
        for name in names where name.hasPrefix("ticket-") && (name.hasSuffix(".stop") || name.hasSuffix(".bell")) {
            let ticket = String(name.dropLast(".stop".count)) + ".json"
            if !names.contains(ticket) { directory.unlink(name) }
        }
        return live.sorted { $0.seq < $1.seq }
    }

    /// Writes `ticket-<seq>.stop` with the reason (queue lock held), atomically: written under
    /// a temporary name, then renamed, so that its owner (which reads it without the lock)
    /// never reads it empty; then rings the owner's bell. Best effort: a prompt that cannot be
    /// told plays on.
    private func requestStop(seq: UInt64, _ request: StopRequest) {
        guard let json = try? JSONEncoder().encode(request) else { return }
        let temp = ".\(Self.stopName(seq)).\(getpid()).tmp"
        guard case .success(let fd) = directory.open(temp, O_CREAT | O_WRONLY | O_TRUNC, mode: 0o600) else { return }
        let text = Array(json) + [UInt8(ascii: "\n")]
        let written = text.withUnsafeBytes { (try? POSIX.write(fd, $0)) ?? -1 }
        try? POSIX.close(fd)
        guard written == text.count, case .success = directory.rename(temp, to: Self.stopName(seq)) else {
            directory.unlink(temp)
            return
        }
        Doorbell.ring(in: directory, name: Self.bellName(seq))
        WaiterBell.ringAll(in: directory)
    }
}

/// One prompt's place in the `PromptQueue`: waiting, then playing, then gone.
package final class Ticket: @unchecked Sendable {
    /// Arrival number.
    package let seq: UInt64
    package let priority: PromptPriority
    let queue: PromptQueue
    private let name: String
    private let lock = Lock()
    /// The open ticket file, with `LOCK_SH` held; -1 once left.
    private var fd: Int32
    /// Rung when a newer prompt writes this ticket's stop file, from when the ticket plays; nil
    /// while it waits (a waiting prompt looks at its stop file with its other checks,
    /// `checkStillWaiting`: one descriptor less for each), and when the directory refuses
    /// FIFOs (then `stopReason` must be polled).
    var doorbell: Doorbell? { lock.withLock { bell } }
    private var bell: Doorbell?

    /// Creates the ticket file (queue lock held).
    fileprivate init(queue: PromptQueue, seq: UInt64, priority: PromptPriority, name: String) throws {
        self.queue = queue
        self.seq = seq
        self.priority = priority
        self.name = name
        let directory = queue.directory
        let file = PromptQueue.ticketName(seq)
        directory.unlink(PromptQueue.stopName(seq))
        switch directory.open(file, O_CREAT | O_EXCL | O_RDWR, mode: 0o600) {
        case .success(let opened): fd = opened
        case .failure(let err):
            throw err.failure("cannot create \(directory.path(of: file))")
        }
        do throws(Errno) { try POSIX.flock(fd, LOCK_SH | LOCK_NB) } catch {
            try? POSIX.close(fd)
            directory.unlink(file)
            throw error.failure("cannot lock \(directory.path(of: file))")
        }
        try write(playing: false)
    }

    deinit { leave() }

    private func write(playing: Bool) throws {
        let record = PromptQueue.TicketRecord(seq: seq, pid: getpid(), priority: priority, playing: playing, name: name)
        let data = try JSONEncoder().encode(record)
        // Written over the old text, then cut to length: readers hold the queue lock. Not
        // ftruncate to 0 first: ext4 (an XDG_RUNTIME_DIR under /tmp) flushes a file that is
        // truncated to 0 with data pending (auto_da_alloc), 0.1 ms each time.
        let n = data.withUnsafeBytes { (try? POSIX.pwrite(fd, $0, at: 0)) ?? -1 }
        guard n == data.count else {
            throw Errno.current.failure("cannot write \(queue.directory.path(of: PromptQueue.ticketName(seq)))")
        }
        try? POSIX.ftruncate(fd, data.count)
    }

    /// Why a newer prompt asked this one to stop (`ticket-<seq>.stop`), nil while none did.
    /// Any thread.
    package var stopRequest: StopRequest? {
        guard case .success(let data) = queue.directory.read(PromptQueue.stopName(seq), limit: BoundedFile.journalLimit) else {
            return nil
        }
        return (try? JSONDecoder().decode(StopRequest.self, from: data)) ?? .unreadable
    }

    /// Waits until this prompt is the next to play (`QueuePolicy.next`) and the `RuntimeLock`
    /// is free, then marks the ticket playing. Looks again when its `WaiterBell` rings (at
    /// most `WaiterBell.fallback` apart).
    ///
    /// - Parameters:
    ///   - deadline: when the prompt has not started by then it is dropped (`--expire-ms`);
    ///     nil waits as long as it takes.
    ///   - expireMs: for the message.
    ///   - cancelled: polled; true stops the wait.
    /// - Returns: the held lock: the duck is this prompt's until it releases it.
    /// - Throws: `DuckPromptError(.dropped)` when the deadline passes or a newer prompt
    ///   replaced this one; `CancellationError`; `.internal` when a queue file cannot be used.
    ///   The ticket has left the queue when it throws.
    package func waitTurn(deadline: ContinuousClock.Instant?, expireMs: Int? = nil,
                         cancelled: () -> Bool = { false }) throws -> RuntimeLock {
        // Made before the first look: a change after it rings it.
        let bell = WaiterBell(in: queue.directory)
        while true {
            try checkStillWaiting(deadline: deadline, expireMs: expireMs, cancelled: cancelled)
            do {
                if let (_, lock) = try Self.takeTurn(among: [self]) { return lock }
            } catch {
                leave()
                throw error
            }
            bell.wait(until: deadline)
        }
    }

    /// What ends a wait for the turn other than the turn: cancelled (`CancellationError`), a
    /// newer prompt's stop (`.dropped` with its reason), or the deadline passed (`.dropped`,
    /// `.expired`). Each leaves the queue before it throws.
    package func checkStillWaiting(deadline: ContinuousClock.Instant?, expireMs: Int?,
                                   cancelled: () -> Bool) throws {
        do {
            if cancelled() { throw CancellationError() }
            if let request = stopRequest {
                throw DuckPromptError(.dropped, "prompt dropped: \(request.reason)", dropReason: request.drop)
            }
            if let deadline, ContinuousClock.now >= deadline {
                let ms = expireMs.map { "\($0) ms" } ?? "its deadline"
                throw DuckPromptError(.dropped, "prompt dropped: not started within \(ms) (another prompt was playing)",
                                      dropReason: .expired)
            }
        } catch {
            leave()
            throw error
        }
    }

    /// Gives the turn to whichever of `tickets` (one runtime directory's) is the next to play
    /// (`QueuePolicy.next`), when the `RuntimeLock` is free: marks it playing and returns it
    /// with the lock; nil when none is next or the lock is held. One hold of the queue lock,
    /// one read of the queue, however many tickets wait.
    /// - Throws: `.internal` when the queue cannot be read.
    package static func takeTurn(among tickets: [Ticket]) throws -> (Ticket, RuntimeLock)? {
        guard let queue = tickets.first?.queue else { return nil }
        return try queue.withQueueLock { _ -> (Ticket, RuntimeLock)? in
            let live = try queue.liveTickets()
            guard let next = QueuePolicy.next(in: live.map(\.prompt)),
                  let ticket = tickets.first(where: { $0.seq == next }),
                  let lock = try RuntimeLock.tryAcquire(in: queue.directory) else { return nil }
            try ticket.write(playing: true)
            // Made before the prompt's `StopWatcher` first looks at the stop file: a stop
            // written before the bell was there is seen by that look, one after it rings it.
            ticket.lock.withLock { ticket.bell = Doorbell(in: queue.directory, name: PromptQueue.bellName(ticket.seq)) }
            return (ticket, lock)
        }
    }

    /// Leaves the queue: removes the ticket, its stop file and its bell, drops its lock.
    /// Idempotent.
    package func leave() {
        lock.lock()
        defer { lock.unlock() }
        guard fd >= 0 else { return }
        let directory = queue.directory
        directory.unlink(PromptQueue.ticketName(seq))
        directory.unlink(PromptQueue.stopName(seq))
        directory.unlink(PromptQueue.bellName(seq))
        try? POSIX.close(fd)
        fd = -1
        WaiterBell.ringAll(in: directory)
    }
}
