/// How urgent a prompt is, with the meanings of speech-dispatcher's SSIP priorities (`SET
/// PRIORITY`), so that integrators already know them (`--priority`).
public enum PromptPriority: String, Sendable, Equatable, Hashable, CaseIterable, Codable {
    /// Never interrupted; goes before every waiting prompt; interrupts a playing `text`,
    /// `notification` or `progress`, and waits for a playing `message` or `important`.
    case important
    /// The default for `play` and `say`: interrupts a playing `text`, `notification` or
    /// `progress`; otherwise waits its turn.
    case message
    /// Waits its turn; a newer `text` replaces a waiting one (which is dropped).
    case text
    /// Dropped at once when any other prompt plays or waits.
    case notification
    /// Like `text` for a run of progress reports: a newer `progress` replaces a waiting one,
    /// so the last of a run is always spoken.
    case progress

    /// Queue order: lower goes first (`important` 0 … `progress` 4); equal ranks go in
    /// arrival order.
    public var rank: Int {
        switch self {
        case .important: 0
        case .message: 1
        case .text: 2
        case .notification: 3
        case .progress: 4
        }
    }

    /// Whether a prompt of this priority that is playing is stopped by one of `newcomer`'s.
    public func isInterrupted(by newcomer: PromptPriority) -> Bool {
        switch self {
        case .important, .message: false
        case .text, .notification, .progress: newcomer == .important || newcomer == .message
        }
    }
}

/// A prompt in the queue, as `QueuePolicy` sees it.
package struct QueuedPrompt: Sendable, Equatable {
    /// Arrival number: unique, increasing.
    package var seq: UInt64
    package var priority: PromptPriority
    /// Whether it holds the duck (plays) rather than waits.
    package var playing: Bool

    package init(seq: UInt64, priority: PromptPriority, playing: Bool = false) {
        self.seq = seq
        self.priority = priority
        self.playing = playing
    }
}

/// The queue's rules, pure: what a new prompt does to the prompts already there, and which
/// waiting prompt plays next. `PromptQueue` applies them to the files in
/// `$XDG_RUNTIME_DIR/duckprompt/` (`queue.lock` and one `ticket-<seq>.json` per prompt).
package enum QueuePolicy {
    /// What happens when a prompt arrives.
    package enum Arrival: Sendable, Equatable {
        /// It is not queued: exit 75 with this reason.
        case drop(reason: String)
        /// It is queued; the prompts listed are told to stop.
        case enqueue(interrupt: [UInt64], replace: [UInt64])
    }

    /// The arrival of a prompt of `priority` into `queue` (the live prompts: at most one
    /// playing, the rest waiting).
    ///
    /// - `notification`: dropped when anything plays or waits.
    /// - `onBusyDrop` (`--on-busy drop`): dropped when anything plays or waits.
    /// - `text` / `progress`: every waiting prompt of the same priority is replaced (dropped).
    /// - `message` / `important`: a playing prompt they interrupt (`isInterrupted(by:)`) is
    ///   told to stop.
    package static func arrive(_ priority: PromptPriority, into queue: [QueuedPrompt],
                              onBusyDrop: Bool = false) -> Arrival {
        if !queue.isEmpty {
            if priority == .notification {
                return .drop(reason: "a notification prompt is dropped while another prompt plays or waits")
            }
            if onBusyDrop {
                return .drop(reason: "another prompt is playing or waiting (--on-busy drop)")
            }
        }
        let interrupt = queue.filter { $0.playing && $0.priority.isInterrupted(by: priority) }.map(\.seq)
        let replace: [UInt64] = switch priority {
        case .text, .progress: queue.filter { !$0.playing && $0.priority == priority }.map(\.seq)
        default: []
        }
        return .enqueue(interrupt: interrupt, replace: replace)
    }

    /// The waiting prompt that plays next once nothing plays: lowest `rank`, then earliest
    /// `seq`. Nil when one plays or none waits.
    package static func next(in queue: [QueuedPrompt]) -> UInt64? {
        guard !queue.contains(where: \.playing) else { return nil }
        return queue.min { ($0.priority.rank, $0.seq) < ($1.priority.rank, $1.seq) }?.seq
    }
}
