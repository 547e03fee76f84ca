import FoundationEssentials

/// Watches a playing prompt's ticket for a stop request from a newer prompt, and stops the
/// prompt (`InterruptControl.stop`) when one comes. It sleeps until the ticket's `Doorbell`
/// rings; without one it polls every `PromptQueue.pollInterval`.
final class StopWatcher: @unchecked Sendable {
    private let lock = Lock()
    private var cancelled = false
    private let bell: Doorbell?

    init(ticket: Ticket, control: InterruptControl) {
        bell = ticket.doorbell
        startThread { [self] in
            while true {
                if let request = ticket.stopRequest {
                    control.stop(request)
                    return
                }
                if lock.withLock({ cancelled }) { return }
                if let bell {
                    // A safety net of 1 s: a request is seen at once, through the bell.
                    bell.wait(timeoutMs: 1000)
                } else {
                    sleepThread(for: PromptQueue.pollInterval)
                }
            }
        }
    }

    func cancel() {
        lock.withLock { cancelled = true }
        bell?.wake()
    }
}
