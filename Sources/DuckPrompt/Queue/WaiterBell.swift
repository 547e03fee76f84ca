import FoundationEssentials
import Glibc
import Synchronization

/// Wakes a wait for the queue when whose turn it is may have changed, without polling: a
/// `Doorbell` (`wait-<pid>-<n>.bell`) that a waiter (`Ticket.waitTurn`, the held prompter's
/// `TurnWaiter`, a handover waiting to be adopted, `RuntimeLock.acquire`) makes before its first
/// look, and that every change rings (`ringAll`): a ticket leaving the queue, a stop request
/// written, a handover adopted, the duck lock released. What no one rings for, a prompt killed
/// with kill -9 (its files closed, nothing written), is seen by the next look, at most
/// `fallback` later. One descriptor a waiting process, however many prompts it holds.
///
/// Not inotify: closing an inotify descriptor costs up to 20 ms (`Doorbell` says why).
///
/// Threading: one thread calls `wait`; any thread may call `wake`.
final class WaiterBell: @unchecked Sendable {
    /// How long a wait lasts when nothing rings: the most a change that no one rings for takes
    /// to be seen.
    static let fallback: Duration = .milliseconds(100)

    private static let counter = Atomic<Int>(0)
    private static let prefix = "wait-"
    private static let suffix = ".bell"

    private let directory: RuntimeDirectory
    private let name: String
    /// Nil when the file system refuses FIFOs: the waiter then polls every
    /// `PromptQueue.pollInterval`.
    private let bell: Doorbell?

    init(in directory: RuntimeDirectory) {
        self.directory = directory
        name = "\(Self.prefix)\(getpid())-\(Self.counter.add(1, ordering: .relaxed).newValue)\(Self.suffix)"
        bell = Doorbell(in: directory, name: name)
    }

    deinit { directory.unlink(name) }

    /// Returns when the bell was rung or woken since the last call (or since `init`), at
    /// `deadline`, or after `fallback`, whichever comes first.
    /// - Returns: true when it was rung or woken, false when the time ran out.
    @discardableResult
    func wait(until deadline: ContinuousClock.Instant? = nil) -> Bool {
        var pause = bell == nil ? PromptQueue.pollInterval : Self.fallback
        if let deadline { pause = min(pause, max(.zero, deadline - .now)) }
        guard let bell else {
            sleepThread(for: pause)
            return false
        }
        return bell.wait(timeoutMs: pause.waitMilliseconds)
    }

    /// Makes the current or next `wait` return (this process's own threads: a cancellation,
    /// another prompt to wait for).
    func wake() { bell?.wake() }

    /// Rings every waiter's bell in `directory`: one byte each, without blocking. Removes the
    /// bells of processes that are gone. Best effort: a waiter not rung looks again within
    /// `fallback`.
    static func ringAll(in directory: RuntimeDirectory) {
        guard let names = try? directory.names() else { return }
        for name in names where name.hasPrefix(prefix) && name.hasSuffix(suffix) {
            let pid = name.dropFirst(prefix.count).prefix { $0 != "-" }
            if let pid = Int32(pid), !ProcessLiveness.exists(pid) {
                directory.unlink(name)
                continue
            }
            Doorbell.ring(in: directory, name: name)
        }
    }
}
