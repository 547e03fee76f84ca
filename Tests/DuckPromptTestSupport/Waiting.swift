import Foundation

/// A test's own failure, thrown where a helper cannot go on (no server, a player that did not
/// start).
package struct TestFailure: Error, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}

/// Polls `condition` every 20 ms until it holds or `timeout` s pass; for states the tests can
/// only read (a volume pactl shows, a sink's state), not be told of.
/// - Returns: whether it held within the time.
/// - Throws: what `condition` throws.
package func eventually(timeout: Double = 5, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if try condition() { return true }
        Thread.sleep(forTimeInterval: 0.02)
    }
    return try condition()
}

/// The product's time limit (issue: "exit 69 in under 6 s"), widened under ThreadSanitizer,
/// which slows every process it instruments (`Scripts/test --sanitize thread` sets
/// `DUCKPROMPT_TEST_SANITIZER`; it also turns TSan's 1 s `atexit_sleep_ms` off, which a run
/// by hand may not): `seconds`, plus 3 s there.
package func timeLimit(_ seconds: Double) -> Double {
    ProcessInfo.processInfo.environment["DUCKPROMPT_TEST_SANITIZER"] == nil ? seconds : seconds + 3
}

/// Waits until the main thread of `pid` sleeps in `poll(2)`: its
/// `/proc/PID/task/PID/wchan` names `poll_schedule_timeout`, the kernel function a `poll` waits
/// in (a process waiting for its input, as `WaitingInput` does). A state only readable, so
/// read every 20 ms (`eventually`), at most `timeout` s.
/// - Returns: whether it did; false once the process is gone.
package func waitUntilPolling(_ pid: pid_t, timeout: Double = 5) -> Bool {
    eventually(timeout: timeout) {
        guard let wchan = try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/wchan", encoding: .utf8) else { return false }
        return wchan.hasPrefix("poll_schedule_timeout")
    }
}
