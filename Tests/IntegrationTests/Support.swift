import DuckPromptProbe
import DuckPromptTestSupport
import Foundation

/// The most a ramped level may move between two 10 ms windows of a monitor recording in the
/// integration tests: 9 dB, above `Levels.rampStepLimit` (6 dB, what a quiet machine shows).
/// The two labs share this machine's two cores (Scripts/test runs them at once), and there the
/// music stream itself drops out now and then, or the server applies queued steps late and
/// together: dips the 5-window median cannot remove (CI at 070e164 and d7316e0 under
/// ThreadSanitizer, raw windows -27.7 -34.3 -32.5 -26.4 -25.8 -33.0 -25.0, read as steps of
/// 6.95 and 6.08 dB; CI at 7e50163 without it, 6.68 dB while a SIGHUP's release ran). A volume
/// set in one write still fails: a 20 dB duck shows as 10.5 to 16.7 dB in one window.
let rampStepLimit = 9.0

extension MonitorRecorder {
    /// Waits until the last 20 ms recorded hold a tone of `hertz` at `dB` or more (a level on
    /// the monitor: the prompt is being heard), at most `timeout` s.
    /// - Returns: whether it came.
    func waitForTone(hertz: Int, atLeast dB: Double, timeout: Double) -> Bool {
        eventually(timeout: timeout) {
            guard let last = latest(frames: 960) else { return false }
            return (Levels.tone(last, hertz: Double(hertz)).max() ?? -200) >= dB
        }
    }
}
