/// Why a newer prompt asked one to stop: interrupted by a `message` or `important` prompt, or
/// replaced by a newer `text` or `progress` prompt while it waited (`QueuePolicy.arrive`). The
/// queue carries it between processes (`ticket-<seq>.stop`, one JSON object); the prompt's
/// lifecycle ends with it (`PromptLifecycle.Ending.interrupted`), and its error says it
/// (`DuckPromptError.DropReason`).
package struct StopRequest: Sendable, Equatable, Codable {
    /// `.interrupted` or `.replaced`.
    package var drop: DuckPromptError.DropReason
    /// The newer prompt, as messages name it: "a message prompt (pid 12)", "a newer text
    /// prompt (pid 12)".
    package var by: String

    package init(drop: DuckPromptError.DropReason, by: String) {
        self.drop = drop
        self.by = by
    }

    /// A stop request whose file could not be read whole (written by a duckprompt of another
    /// version): an interruption by another prompt.
    package static let unreadable = StopRequest(drop: .interrupted, by: "another prompt")

    /// "interrupted by a message prompt (pid 12)", "replaced by a newer text prompt (pid 12)".
    package var reason: String { (drop == .replaced ? "replaced by " : "interrupted by ") + by }
}
