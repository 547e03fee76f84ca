import Foundation

/// Applies a `DuckPlan` to a live server: ramps every ducked stream between its original
/// volume and the duck depth, pipelining the volume writes, and restores the originals.
///
/// Threading: call from one thread (the prompt's driver thread). It sleeps between ramp steps
/// and holds the loop lock only while sending a step.
final class DuckSession: @unchecked Sendable {
    private let connection: PulseConnection
    private(set) var plan: DuckPlan
    private let pending: PendingOperations
    /// The gain last applied, in dB relative to the originals (0 = not ducked).
    private(set) var currentGain: Double = 0

    init(connection: PulseConnection, plan: DuckPlan) {
        self.connection = connection
        self.plan = plan
        pending = PendingOperations(mainloop: connection.mainloop)
    }

    /// Sends one gain to every ducked stream without waiting for acknowledgements.
    /// libpulse: `pa_context_set_sink_input_volume`, pipelined.
    private func apply(gain: Double) {
        let targets = plan.volumes(atGain: gain)
        connection.withLock {
            for target in targets {
                connection.setSinkInputVolumeLocked(target.index, target.volume, pending: pending)
            }
        }
        currentGain = gain
    }

    /// Runs a ramp from the current gain to `gain` over `durationMs`, sleeping between steps.
    ///
    /// - Parameters:
    ///   - gain: target gain in dB (0 restores the originals exactly).
    ///   - durationMs: attack or release length in ms.
    ///   - stop: polled before each step; when it returns true the ramp ends early (the
    ///     streams stay at the last gain sent).
    /// - Returns: false if stopped early.
    @discardableResult
    func ramp(to gain: Double, durationMs: Int, stop: () -> Bool = { false }) -> Bool {
        guard !plan.entries.isEmpty else { currentGain = gain; return true }
        let ramp = Ramp(from: currentGain, to: gain, durationMs: durationMs)
        let start = ContinuousClock.now
        for step in ramp.steps {
            if stop() { return false }
            let due = start + .milliseconds(step.offsetMs)
            let now = ContinuousClock.now
            if due > now { Thread.sleep(forTimeInterval: (due - now).seconds) }
            apply(gain: step.gain)
        }
        return true
    }

    /// Waits until the server acknowledged every volume write sent so far.
    /// - Returns: how many writes it refused (streams that ended meanwhile).
    @discardableResult
    func flush() -> Int {
        connection.withLock {
            connection.waitLocked(for: pending)
            return pending.failures
        }
    }
}
