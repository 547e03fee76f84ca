import FoundationEssentials
import Glibc

/// `--exit-with-parent`: tells when the process that started this one has gone, so that a prompt
/// a wrapper started (Navit's speech command, a module, any parent) stops as for SIGTERM (fades,
/// restores) instead of leaving the music ducked until the next duckprompt command.
///
/// The kernel sends `signal` when the parent's thread that started this process exits
/// (`prctl(2)` `PR_SET_PDEATHSIG`). That thread may end while the parent lives on, so the signal
/// counts only when `parentIsGone`: the parent process id (`getppid(2)`) is no longer the one
/// read at `arm()` (the orphan was handed to init or a subreaper). A parent that died before
/// `arm()` was armed against is found by the same check right after it.
package struct ParentWatch: Sendable {
    /// The signal the kernel sends on the parent's death: SIGUSR2, not SIGTERM, so that a real
    /// SIGTERM is never taken for a parent's death or ignored as a false one.
    package static let signal = SIGUSR2

    /// The parent's process id when armed (`getppid(2)`).
    package let parent: pid_t

    /// Reads the parent's id and arms the death signal.
    /// - Throws: `DuckPromptError(.unavailable)` (69) when `prctl` fails.
    package static func arm() throws -> ParentWatch {
        let watch = ParentWatch(parent: getppid())
        do throws(Errno) {
            try POSIX.setParentDeathSignal(signal)
        } catch {
            throw DuckPromptError(.unavailable, "--exit-with-parent: \(error) (prctl PR_SET_PDEATHSIG)")
        }
        return watch
    }

    /// Whether the parent read at `arm()` has exited: this process has another parent now.
    package var parentIsGone: Bool { getppid() != parent }
}
