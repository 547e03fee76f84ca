import FoundationEssentials

/// What a finished prompt did.
public struct PlayReport: Sendable {
    /// Where the prompt went, and why.
    public var route: RouteDecision
    /// Sink-input indices that were ducked, each restored to its original `pa_cvolume`.
    public var duckedStreams: [UInt32]
    /// Frames handed to the server.
    public var framesPlayed: Int64
    /// What was undone first for prompts that died mid-duck (one line each; usually empty).
    public var recoveryNotes: [String] = []
    /// Silence played first because the sink was not running (idle or suspended), in ms (0: none).
    public var preRollMs: Int = 0
    /// What was done with MPRIS players, one line each ("paused: …", "resumed: …", "ducked,
    /// not paused: …"); `recoveryNotes` carries what went wrong with them (no session bus).
    public var playerNotes: [String] = []
    /// What a listener may not have heard, one line each: "played at -inf dB (the saved volume
    /// for media.role=navigation is 0: raise it in pavucontrol)", or "played muted (…)", read
    /// from the prompt stream's own volume after its last sample (`pa_context_get_sink_input_info`).
    /// Empty when the prompt was audible as far as its own volume goes.
    public var warnings: [String] = []
    /// What the call policy (`PlayOptions.duringCall`) did, nil when no call was on: "played
    /// under a call at -10 dB", "deferred 12.3 s for a call", "chime instead of speech during
    /// a call".
    public var callNote: String?
    /// When the first sample of the prompt's own audio went to the server (`Prompter.Event.started`),
    /// on `ContinuousClock`; nil when it never started. For `play --keep-awake`, which counts
    /// its time from the prompt's start.
    package var startedAt: ContinuousClock.Instant?
}

/// What `DuckPrompt.restore` did.
package struct RestoreReport: Sendable {
    /// One line per journal handled: what was restored, or why it was kept. Empty when no
    /// prompt died while ducking.
    package var notes: [String]
    /// Paths of the journals kept because their server could not be reached or did not
    /// confirm every write (`duckprompt restore` then exits 69).
    package var kept: [String]
    /// Files of the journal directory that are not journals it can use (`duckprompt restore`
    /// then exits 65, unless a journal was kept).
    package var problems: [JournalProblem]
}
