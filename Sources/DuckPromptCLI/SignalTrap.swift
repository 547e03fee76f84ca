import Dispatch
import DuckPrompt
import FoundationEssentials
import Glibc

/// Catches the signals given (SIGINT, SIGTERM, SIGHUP; for play and say also SIGUSR2, a
/// parent's death: `exitWithParent`) on a thread of its own and remembers the first one received.
///
/// Blocks them in the calling thread, and so in every thread started after it (libpulse's
/// mainloop thread blocks all signals anyway), and waits for them with `sigwait`: create it
/// before any other thread. A no-op handler replaces `SIG_IGN` (a parent's `nohup`, or a
/// shell's background job), under which the kernel would discard them before `sigwait` sees
/// them; it never runs while they are blocked.
final class SignalTrap: @unchecked Sendable {
    private let lock = Lock()
    private var first: Int32?
    private var handler: (@Sendable () -> Void)?
    private var parentWatch: ParentWatch?
    private var firstWasParentExit = false

    init(_ signals: [Int32]) {
        var set = sigset_t()
        sigemptyset(&set)
        for sig in signals { sigaddset(&set, sig) }
        // Blocked first: a signal between the handler and the block would run the no-op
        // handler and be lost.
        pthread_sigmask(SIG_BLOCK, &set, nil)
        for sig in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { _ in }
            sigemptyset(&action.sa_mask)
            sigaction(sig, &action, nil)
        }
        let waited = set
        startThread { [self] in
            var set = waited
            while true {
                var sig: Int32 = 0
                guard sigwait(&set, &sig) == 0 else { continue }
                if sig == ParentWatch.signal {
                    // Counts only once the parent has really gone (not one of its threads).
                    guard let watch = lock.withLock({ parentWatch }), watch.parentIsGone else { continue }
                    deliver(SIGTERM, parentExited: true)
                } else {
                    deliver(sig, parentExited: false)
                }
            }
        }
    }

    /// Records `sig` as the first signal if none came yet, and calls the handler.
    private func deliver(_ sig: Int32, parentExited: Bool) {
        let handler = lock.withLock { () -> (@Sendable () -> Void)? in
            if first == nil {
                first = sig
                firstWasParentExit = parentExited
            }
            return self.handler
        }
        handler?()
    }

    /// The first signal received, as it counts: a parent's death (`exitWithParent`) counts as
    /// SIGTERM.
    var received: Int32? { lock.withLock { first } }

    /// Whether the first signal was the parent's death (`exitWithParent`).
    var parentExited: Bool { lock.withLock { firstWasParentExit } }

    /// The parent's pid `exitWithParent` watches, nil when not told to.
    var parentWatched: pid_t? { lock.withLock { parentWatch?.parent } }

    /// `--exit-with-parent`: from now on `ParentWatch.signal` (which the trap must catch) counts
    /// as SIGTERM once `watch.parentIsGone`; at once if the parent is gone already.
    func exitWithParent(_ watch: ParentWatch) {
        lock.withLock { parentWatch = watch }
        if watch.parentIsGone { deliver(SIGTERM, parentExited: true) }
    }

    /// "SIGTERM" for 15: the name of one of the signals a trap catches, else "signal N".
    static func name(_ signal: Int32) -> String {
        switch signal {
        case SIGINT: "SIGINT"
        case SIGTERM: "SIGTERM"
        case SIGHUP: "SIGHUP"
        default: "signal \(signal)"
        }
    }

    /// Calls `handler` on the trap's thread for every signal from now on (at once, if one came
    /// already).
    func onSignal(_ handler: @escaping @Sendable () -> Void) {
        let came = lock.withLock { () -> Bool in
            self.handler = handler
            return first != nil
        }
        if came { handler() }
    }
}
