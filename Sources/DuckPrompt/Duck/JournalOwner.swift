import FoundationEssentials
import Glibc

// The journal's owner: this process when a prompt writes one (its pid and start time from
// /proc), and whether the process that wrote a found one still runs.
extension DuckJournal {
    /// A journal owned by the calling process, holding what `plan` would restore.
    ///
    /// - Parameters:
    ///   - plan: the duck's bookkeeping; its entries, ended streams and depth are copied.
    ///   - server: the server string given to `pa_context_connect` (nil = default).
    ///   - runtimeDir: the `XDG_RUNTIME_DIR` in effect (default: from the environment).
    ///   - serverName: `pa_server_info.server_name`.
    /// - Throws: `DuckPromptError(.internal)` when `/proc/self/stat` cannot be read.
    package static func forCurrentProcess(plan: DuckPlan, server: String?,
                                         runtimeDir: String? = Environment.value("XDG_RUNTIME_DIR"),
                                         serverName: String) throws -> DuckJournal {
        let pid = getpid()
        guard let start = ProcessLiveness.start(of: pid) else {
            throw DuckPromptError(.internal, "cannot read the start time of this process from /proc/\(pid)/stat: is /proc mounted?")
        }
        var journal = DuckJournal(pid: pid, processStart: start, server: server, runtimeDir: runtimeDir,
                                  serverName: serverName, depth: plan.depth)
        journal.record(plan)
        return journal
    }

    /// Whether the process that wrote this journal still runs: `pid` exists with the same start
    /// time and is not a zombie (a zombie has closed its files, so its lock is free). A pid
    /// that exists with another start time was reused: the owner is dead.
    /// `ProcessLiveness.isRunning(pid:start:)`.
    package var ownerIsAlive: Bool {
        ProcessLiveness.isRunning(pid: pid, start: processStart)
    }
}
