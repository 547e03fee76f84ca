import Glibc

/// `DUCKPROMPT_DEBUG=1` (any value) traces what duckprompt does on stderr, a line each,
/// prefixed `duckprompt[debug] ` and the µs since the Unix epoch (`CLOCK_REALTIME`), to line
/// them up with other programs' logs. Used by `DuckSession` (events and actions of a duck),
/// `DuckPrompt.runPrompt` (each `PromptLifecycle` action) and `DuckPrompt.watchDevices`
/// (what each look at the server found), and `duckprompt serve`'s bus loop (an idle time
/// that passed while something was still going on).
package enum DebugTrace {
    package static let enabled = Environment.value("DUCKPROMPT_DEBUG") != nil

    /// Writes one line when tracing is on; `text` is not evaluated otherwise.
    package static func write(_ text: @autoclosure () -> String) {
        guard enabled else { return }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let microseconds = Int(now.tv_sec) * 1_000_000 + Int(now.tv_nsec) / 1000
        StandardStreams.writeError("duckprompt[debug] \(microseconds): \(text())\n")
    }
}
