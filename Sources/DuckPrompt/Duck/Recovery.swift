import FoundationEssentials
import Glibc

/// Undoes the duck of a duckprompt process that died mid-prompt (killed, crashed), from the
/// journal it left: streams still at a level its duck wrote go back to their own volume,
/// saved volumes it left ducked are repaired, and the MPRIS players it paused are resumed
/// (`PlayerPauser.resume`, within `PausedPlayer.staleAfterSeconds`).
enum Recovery {
    /// What `recoverOrphans` did.
    struct Outcome: Sendable {
        /// One line per journal for stderr: what was restored, or why a journal was kept.
        var notes: [String] = []
        /// The journals kept because their server did not answer or did not confirm every
        /// write: a later duckprompt (or `duckprompt restore`) tries again.
        var kept: [String] = []
        /// Files in the journal directory that are not usable journals (refused, garbled,
        /// links), each reported once.
        var problems: [JournalProblem] = []
        /// Players dead prompts paused, still paused as they left them: taken over by the
        /// prompt that recovers (`adoptPlayers`), which resumes them at its release.
        var players: [PausedPlayer] = []

        /// The notes, then one line per problem, for a command that reports them in passing.
        var lines: [String] { notes + problems.map { "journal \($0)" } }
    }

    /// Restores every orphaned journal in `store`, and removes each one once every volume it
    /// names was confirmed restored: the writes acknowledged, the saved volumes repaired, the
    /// connection still up. A journal whose server is away (killed, restarting, stalled) is
    /// kept for the next try. Call while holding the `RuntimeLock`, so that no two processes
    /// restore the same journal.
    /// - Parameter includingOwn: also this process's own kept journal (`JournalStore.orphans`).
    /// - Parameter adoptPlayers: a prompt about to play takes the dead prompts' paused players
    ///   over (`Outcome.players`) rather than resuming them (`PlayerPauser.adoptable`).
    static func recoverOrphans(store: JournalStore, server: ServerOptions, includingOwn: Bool = false,
                               adoptPlayers: Bool = false) -> Outcome {
        var outcome = Outcome()
        let orphans: [(path: String, journal: DuckJournal)]
        do {
            orphans = try store.orphans(includingOwn: includingOwn) { problem in outcome.problems.append(problem) }
        } catch {
            outcome.notes.append("cannot look for journals of dead prompts: \(error)")
            return outcome
        }
        var bus: SessionBusClient? = nil
        for (path, journal) in orphans {
            // The players it paused first: the session bus does not depend on the sound
            // server, and a player is resumed only within the staleness window.
            if !journal.players.isEmpty {
                do {
                    bus = try bus ?? SessionBusClient()
                    let lines: PlayerPauser.Lines
                    if adoptPlayers {
                        let adopted: [PausedPlayer]
                        (adopted, lines) = PlayerPauser.adoptable(journal.players, on: bus!, ageFrom: PlayerPauser.now())
                        outcome.players += adopted
                    } else {
                        lines = PlayerPauser.resume(journal.players, on: bus!, ageFrom: PlayerPauser.now())
                    }
                    outcome.notes += (lines.warnings + lines.notes)
                        .map { "a player paused by duckprompt (pid \(journal.pid)), which died mid-prompt: \($0)" }
                } catch {
                    outcome.notes.append("could not resume the players paused by duckprompt (pid \(journal.pid)): "
                        + ((error as? DuckPromptError)?.message ?? "\(error)"))
                }
            }
            if journal.streams.isEmpty && journal.ended.isEmpty {
                try? store.remove(path: path)
                continue
            }
            let serverString = journal.server
                ?? journal.runtimeDir.map { "unix:\($0)/pulse/native" }
            do {
                let (streams, repairs) = try restore(journal, server: serverString, options: server)
                try store.remove(path: path)
                outcome.notes.append("restored \(streams) stream volume\(streams == 1 ? "" : "s") and repaired "
                    + "\(repairs) saved volume\(repairs == 1 ? "" : "s") left ducked by "
                    + (journal.pid == getpid() ? "an earlier prompt of this process, whose server went away"
                                               : "duckprompt (pid \(journal.pid)), which died mid-prompt"))
            } catch {
                let message = (error as? DuckPromptError)?.message ?? "\(error)"
                outcome.kept.append(path)
                outcome.notes.append("could not restore the volumes left ducked by duckprompt (pid \(journal.pid)): "
                    + "\(message); kept \(path) for the next try")
            }
        }
        return outcome
    }

    /// Undoes one journal's duck on its server.
    /// - Returns: how many stream volumes were set and saved volumes repaired.
    /// - Throws: `.unavailable` when the server cannot be reached, stops answering, refuses a
    ///   write or a repair: then nothing is confirmed and the journal must be kept.
    private static func restore(_ journal: DuckJournal, server: String?,
                                options: ServerOptions) throws -> (streams: Int, repairs: Int) {
        var journalServer = options
        journalServer.server = server
        let connection = try PulseConnection(journalServer)
        let (snapshot, _) = try connection.snapshot()
        let actions = journal.restoreActions(live: snapshot.sinkInputs, math: .libpulse)
        let writes = actions.volumeWrites, repairs = actions.savedRepairs
        let pending = PendingOperations(mainloop: connection.mainloop)
        try connection.withLock {
            for (index, volume) in writes { connection.setSinkInputVolumeLocked(index, volume, pending: pending) }
            connection.waitLocked(for: pending)
            guard connection.isAliveLocked else { throw connection.lostErrorLocked("restoring volumes") }
            // A refused write: the stream ended in between, and the server saved its ducked
            // volume; the next try repairs it.
            guard pending.failures == 0 else {
                throw DuckPromptError(.unavailable, "the server refused \(pending.failures) volume write\(pending.failures == 1 ? "" : "s") (a stream ended meanwhile)")
            }
        }
        guard connection.repairSavedVolumes(repairs) else {
            throw DuckPromptError(.unavailable,
                "the saved volumes could not be repaired at \(connection.serverDescription)")
        }
        return (writes.count, repairs.count)
    }
}
