import FoundationEssentials
import Glibc

/// Lets Task cancellation reach a connection that a blocking thread owns, or one prompt's
/// waits on a connection that prompts share (a `Prompter`'s).
final class InterruptControl: @unchecked Sendable {
    private let lock = Lock()
    private var connection: PulseConnection?
    /// Whether `connection` is shared: then only it is woken, and each wait checks `isStopped`.
    private var shared = false
    private var cancelled = false

    /// Lets `cancel()` and `stop(_:)` interrupt `connection`'s waits; either one that
    /// came before (while the prompt waited its turn or read the server) interrupts it now.
    /// - Parameter shared: other prompts use `connection` too: it is woken (its waits look
    ///   at `isStopped`), not interrupted for all.
    func attach(_ connection: PulseConnection, shared: Bool = false) {
        let interruptNow = lock.withLock { () -> Bool in
            self.connection = connection
            self.shared = shared
            return cancelled || request != nil
        }
        if interruptNow { interrupt(connection, shared: shared) }
    }

    /// Lets go of the attached connection (its owner is done with it), so that it closes when
    /// its owner drops it, not when this control goes.
    func detach() {
        // Taken out under the lock, released after it: closing joins the connection's threads.
        let attached = lock.withLock { () -> PulseConnection? in
            defer { connection = nil }
            return connection
        }
        withExtendedLifetime(attached) {}
    }

    private func interrupt(_ connection: PulseConnection, shared: Bool) {
        if shared { connection.wake() } else { connection.interrupt() }
    }

    /// Whether the prompt was cancelled or stopped by a newer one. Thread-safe; may be called
    /// with the connection's loop lock held.
    var isStopped: Bool { lock.withLock { cancelled || request != nil } }

    private var request: StopRequest?

    /// Whether the caller cancelled (checked while waiting for the duck lock).
    var isCancelled: Bool { lock.withLock { cancelled } }

    /// Why a newer prompt stopped this one (`stop(_:)`), nil otherwise.
    var stopRequest: StopRequest? { lock.withLock { request } }

    private var cancelledReport: PlayReport?

    /// What a cancelled prompt had done (`PlayCancellation.report`). Thread-safe.
    var report: PlayReport? {
        get { lock.withLock { cancelledReport } }
        set { lock.withLock { cancelledReport = newValue } }
    }

    /// Stops the prompt because a newer one interrupts it: like `cancel()`, but the duck is
    /// handed over rather than released.
    func stop(_ request: StopRequest) {
        let (connection, shared) = lock.withLock { () -> (PulseConnection?, Bool) in
            self.request = request
            return (self.connection, self.shared)
        }
        if let connection { interrupt(connection, shared: shared) }
    }

    /// How long the prompt keeps its duck for the next prompt once its audio is over: after a
    /// `cancel(keepingDuckFor:)`, that time (nil after a plain `cancel()`); else (played whole,
    /// or stopped by a newer prompt, which waits already) `keepAfterPlaying`. Nil: handed over
    /// only to a prompt that waits already, else released.
    var duckKept: Duration? { lock.withLock { cancelled ? keepDuck : keepAfterPlaying } }
    private var keepDuck: Duration?
    /// How long a prompt played whole keeps its duck for the next one (the held prompter's
    /// `keepDuckAfterPlaying`); nil: not kept.
    private let keepAfterPlaying: Duration?

    init(keepAfterPlaying: Duration? = nil) { self.keepAfterPlaying = keepAfterPlaying }

    /// `cancel()`, keeping the duck for a prompt that comes within `keep`
    /// (`Prompter.cancel(_:keepingDuckFor:)`).
    func cancel(keepingDuckFor keep: Duration) { cancel(keeping: keep) }

    func cancel() { cancel(keeping: nil) }

    private func cancel(keeping keep: Duration?) {
        let (connection, shared, wake) = lock.withLock { () -> (PulseConnection?, Bool, WakePipe?) in
            // The first cancel says whether the duck is kept.
            if !cancelled { keepDuck = keep }
            cancelled = true
            return (self.connection, self.shared, self.wake)
        }
        wake?.signal()
        if let connection { interrupt(connection, shared: shared) }
    }

    private var wake: WakePipe?

    /// A descriptor that is readable once `cancel()` was called, for a `poll` on input that
    /// may never come (`WaitingInput.readAll`); the pipe is made on the first call. Nil when
    /// no pipe can be made.
    func cancelDescriptor() -> Int32? {
        let (pipe, cancelledAlready) = lock.withLock { () -> (WakePipe?, Bool) in
            if wake == nil { wake = WakePipe() }
            return (wake, cancelled)
        }
        if cancelledAlready { pipe?.signal() }
        return pipe?.descriptor
    }
}

/// Stops a prompt that `DuckPrompt.playBlocking` runs, from another thread.
package final class PlayCancellation: Sendable {
    let control = InterruptControl()

    package init() {}

    /// Stops the prompt: every ducked stream is ramped back, and `playBlocking` throws
    /// `CancellationError`. Thread-safe; before the prompt has started, it never starts.
    package func cancel() { control.cancel() }

    /// Whether `cancel()` was called.
    package var isCancelled: Bool { control.isCancelled }

    /// A descriptor that is readable once `cancel()` was called, to `poll` beside another
    /// (`duckprompt play` waiting for the service's answer); nil when no pipe can be made.
    package func wakeDescriptor() -> Int32? { control.cancelDescriptor() }

    /// Once `playBlocking` has thrown `CancellationError`: what the prompt had done by then
    /// (where it went, the frames handed to the server, the streams it ducked, each ramped
    /// back, the players it paused and resumed, and its warnings); nil when it was cancelled
    /// before it was routed.
    package var report: PlayReport? { control.report }
}

/// Runs blocking libpulse work on its own thread (it waits on the threaded mainloop's
/// condition), resuming the caller when done; Task cancellation interrupts it.
func runBlocking<T: Sendable>(_ control: InterruptControl,
                              _ body: @escaping @Sendable (InterruptControl) throws -> T) async throws -> T {
    try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            startThread {
                continuation.resume(with: Result { try body(control) })
            }
        }
    } onCancel: {
        control.cancel()
    }
}
