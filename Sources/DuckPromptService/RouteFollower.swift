import DuckPrompt

/// The service's watch of the route (RouteChanged, CallState): the server's sinks followed by
/// `DuckPrompt.watchDevices`, each listing handed to `onUpdate`. When the server goes away or
/// stops answering, the watch is made again once it answers (after 0.25 s, then twice as long
/// each time, at most 1 s apart: a listener hears of the route about a second after the server
/// is back at most), so that a restarted pipewire-pulse or PulseAudio does not end RouteChanged
/// for the service's life.
/// It says so on stderr once per outage, and once followed again.
///
/// Thread-safe. `run` on the service's executor until `stop()` (and the task's cancellation);
/// `waitClosed(upTo:)` then waits until the last watch's connection is closed.
final class RouteFollower: @unchecked Sendable {
    private let condition = Condition()
    private var stopped = false
    /// Opened once the current watch's connection is closed (libpulse's and libpipewire's
    /// threads joined); nil before the first watch.
    private var closed: Latch?

    /// Follows the route until stopped. A configuration that cannot be read ends it (logged).
    /// - Parameter onUpdate: each listing, the first of every watch included, in order.
    func run(server: ServerOptions, prompter: Prompter, onUpdate: (DeviceUpdate) -> Void) async {
        let config: DuckPromptConfig
        do {
            config = try DuckPromptConfig.load()
        } catch {
            serviceLog("route changes not followed: \(error)")
            return
        }
        var delayMs = 250
        var lost = false
        while !isStopped {
            let latch = Latch()
            condition.withLock { closed = latch }
            let updates = DuckPrompt.watchDevices(config: config, server: server, prompter: prompter, closed: latch.open)
            do {
                for try await update in updates {
                    if lost {
                        serviceLog("route changes followed again")
                        lost = false
                    }
                    delayMs = 250
                    DebugTrace.write("route watch: \(update.listing.route?.sink.name ?? "no route") of "
                                     + "\(update.listing.snapshot.sinks.map(\.name).joined(separator: ", "))")
                    onUpdate(update)
                }
                // Ended without an error: cancelled (the service stops).
                return
            } catch {
                if isStopped || Task.isCancelled { return }
                DebugTrace.write("route watch ended: \(error); again in \(delayMs) ms")
                if !lost { serviceLog("route changes not followed while the server is away: \(error); following again once it answers") }
                lost = true
            }
            await pause(milliseconds: delayMs)
            delayMs = min(delayMs * 2, Self.longestPauseMs)
        }
    }

    /// Ends `run` (with the task's cancellation, which ends the current watch).
    func stop() {
        condition.withLock { stopped = true }
        condition.broadcast()
    }

    /// Waits until the current watch's connection is closed, at most `limit`.
    func waitClosed(upTo limit: Duration) {
        condition.withLock { closed }?.wait(upTo: limit)
    }

    /// The longest pause between two tries while the server is away, in ms: a try is one
    /// connect(2) to its socket, refused at once.
    static let longestPauseMs = 1000

    private var isStopped: Bool { condition.withLock { stopped } }

    /// Waits `milliseconds`, or less once stopped, on a thread of its own: the executor's
    /// one thread goes on forwarding the prompter's events meanwhile, and no Dispatch timer
    /// is started (`ThreadExecutor`).
    private func pause(milliseconds: Int) async {
        await withCheckedContinuation { (resume: CheckedContinuation<Void, Never>) in
            startThread { [self] in
                let deadline = ContinuousClock.now + .milliseconds(milliseconds)
                condition.withLock {
                    while !stopped {
                        let left = deadline - ContinuousClock.now
                        guard left > .zero else { break }
                        _ = condition.waitLocked(milliseconds: Int(left.waitMilliseconds))
                    }
                }
                resume.resume()
            }
        }
    }
}
