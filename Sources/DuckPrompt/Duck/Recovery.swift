import FoundationEssentials
import Glibc

/// Undoes the duck of a duckprompt process that died mid-prompt (killed, crashed), from the
/// journal it left: streams still at a level its duck wrote go back to their own volume, and
/// saved volumes it left ducked are repaired.
enum Recovery {
    /// Restores every orphaned journal in `store` and removes it. Call while holding the
    /// `RuntimeLock`, so that no two processes restore the same journal.
    ///
    /// - Parameter problems: where files that are not usable journals are reported; nil puts
    ///   them among the returned lines.
    /// - Returns: one line per journal for stderr: what was restored, or why a journal was kept.
    static func recoverOrphans(store: JournalStore, server: ServerOptions,
                               problems: ((JournalProblem) -> Void)? = nil) -> [String] {
        var notes: [String] = []
        let orphans: [(path: String, journal: DuckJournal)]
        do {
            orphans = try store.orphans { problem in
                if let problems { problems(problem) } else { notes.append("journal \(problem)") }
            }
        } catch {
            return ["cannot look for journals of dead prompts: \(error)"]
        }
        for (path, journal) in orphans {
            let serverString = journal.server
                ?? journal.runtimeDir.map { "unix:\($0)/pulse/native" }
            do {
                let connection = try PulseConnection(server: serverString, clientName: server.clientName,
                                                     timeout: server.timeout)
                let (snapshot, _) = try connection.snapshot()
                let actions = journal.restoreActions(live: snapshot.sinkInputs)
                var streams = 0
                var repairs: [(key: RestoreKey, volume: ChannelVolumes)] = []
                let pending = PendingOperations(mainloop: connection.mainloop)
                connection.withLock {
                    for action in actions {
                        switch action {
                        case .setVolume(let index, let volume):
                            connection.setSinkInputVolumeLocked(index, volume, pending: pending)
                            streams += 1
                        case .repairSaved(let key, let volume):
                            repairs.append((key, volume))
                        }
                    }
                    connection.waitLocked(for: pending)
                }
                connection.repairSavedVolumes(repairs)
                try store.remove(path: path)
                notes.append("restored \(streams) stream volume\(streams == 1 ? "" : "s") and repaired "
                    + "\(repairs.count) saved volume\(repairs.count == 1 ? "" : "s") left ducked by "
                    + "duckprompt (pid \(journal.pid)), which died mid-prompt")
            } catch {
                notes.append("could not restore the volumes left ducked by duckprompt (pid \(journal.pid)): "
                    + "\(error); kept \(path)")
            }
        }
        return notes
    }
}

/// Keeps the journal of the running prompt in step with its duck: written before the first
/// volume write, rewritten when what must be restored changes, removed when all is restored.
final class JournalKeeper: @unchecked Sendable {
    private let store: JournalStore
    private var journal: DuckJournal
    private var last: (entries: [DuckPlan.Entry], ended: [DuckPlan.Entry])

    /// Writes the first journal.
    /// - Throws: `.internal` when the journal cannot be written (then nothing is ducked).
    init(store: JournalStore, plan: DuckPlan, server: String?, serverName: String) throws {
        self.store = store
        journal = try DuckJournal.forCurrentProcess(plan: plan, server: server, serverName: serverName)
        last = (plan.entries, plan.ended)
        try store.write(journal)
    }

    /// The saved volume of the prompt's own `media.role` before a relative `--volume`
    /// changed it: a prompt that dies mid-prompt leaves it to be repaired, like a stream that
    /// ended while ducked. Nil: the prompt left it alone.
    private(set) var promptSlot: DuckJournal.Ended?

    /// Journals the prompt slot (best effort, as `update`).
    func setPromptSlot(_ slot: DuckJournal.Ended?, plan: DuckPlan) {
        promptSlot = slot
        record(plan)
        try? store.write(journal)
    }

    private func record(_ plan: DuckPlan) {
        last = (plan.entries, plan.ended)
        journal.record(plan)
        if let promptSlot { journal.ended.append(promptSlot) }
    }

    /// Rewrites the journal if the streams to restore or their own volumes changed.
    /// Best effort: a failed rewrite keeps the previous journal.
    func update(_ plan: DuckPlan) {
        guard plan.entries != last.entries || plan.ended != last.ended else { return }
        record(plan)
        try? store.write(journal)
    }

    /// Removes the journal: everything is restored.
    func remove() { try? store.remove() }

    /// Hands the duck over to the next prompt: the journal, with the gain the streams are at,
    /// becomes `handover.json` (`JournalStore.handOver`).
    /// - Throws: `.internal` when it cannot be written (then the caller releases instead).
    /// The prompt slot is not handed over: the interrupted prompt has set it back already.
    func handOver(_ plan: DuckPlan) throws {
        promptSlot = nil
        record(plan)
        journal.gain = plan.gain
        try store.handOver(journal)
    }

    /// After a handover that no one adopted, `handover.json` is this journal again.
    func reclaim() -> Bool {
        journal.gain = nil
        return store.reclaimHandover()
    }
}
