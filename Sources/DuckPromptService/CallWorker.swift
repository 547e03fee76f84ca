import DuckPrompt

/// Where the service's calls do the work that may wait, so that the bus thread never does
/// (Docs/dbus.md: every call is answered, or its work handed off, at once): loading the config
/// file, asking the bus daemon for a caller's pid, opening and checking files, reading the
/// prompter's copy of the server (`Prompter.devices`, which waits up to `--timeout` for a
/// stalled server), and queueing the prompt. One thread of its own, its jobs one at a time in
/// the order they were handed over, so prompts are queued in call order; it lives as long as
/// the process.
final class CallWorker: @unchecked Sendable {
    private let condition = Condition()
    /// Jobs handed over and not yet begun. Condition's lock held.
    private var jobs: [@Sendable () -> Void] = []

    init() {
        startThread { [self] in
            while true {
                let job = condition.withLock {
                    while jobs.isEmpty { condition.waitLocked() }
                    return jobs.removeFirst()
                }
                job()
            }
        }
    }

    /// Runs `job` on the worker's thread after those handed over before it. Any thread; does
    /// not wait.
    func submit(_ job: @escaping @Sendable () -> Void) {
        condition.withLock { jobs.append(job) }
        condition.broadcast()
    }
}
