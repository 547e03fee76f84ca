import FoundationEssentials
import Glibc

/// Keeps the journal of the running prompt in step with its duck: written before the first
/// volume write, rewritten when what must be restored changes, removed when all is restored.
final class JournalKeeper: @unchecked Sendable {
    private let store: JournalStore
    private var journal: DuckJournal
    private var last: (entries: [DuckPlan.Entry], ended: [DuckPlan.Entry])

    /// Writes the first journal.
    /// - Throws: `.internal` when the journal cannot be written (then nothing is ducked).
    /// - Parameter players: the MPRIS players the prompt is about to pause, and those it holds
    ///   paused (a handed-over duck's).
    init(store: JournalStore, plan: DuckPlan, server: String?, serverName: String, players: [PausedPlayer] = []) throws {
        self.store = store
        journal = try DuckJournal.forCurrentProcess(plan: plan, server: server, serverName: serverName)
        journal.players = players
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

    /// Journals the MPRIS players the prompt holds paused (best effort, as `update`): after
    /// they were paused (their positions), and after they were resumed (none).
    func setPlayers(_ players: [PausedPlayer]) {
        guard players != journal.players else { return }
        journal.players = players
        try? store.write(journal)
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

    /// Where the journal is (`journal-<pid>.json`), for messages.
    var path: String { store.path }

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
