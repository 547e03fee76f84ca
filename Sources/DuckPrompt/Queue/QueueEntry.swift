/// A prompt's place in the queue: the runtime directory's store and the ticket
/// (`PromptQueue.enter`).
struct QueueEntry {
    let store: JournalStore
    let ticket: Ticket

    /// Enters the queue with the options' priority and `--on-busy` policy.
    /// - Parameter store: the runtime directory's store, opened already (a `Prompter` keeps
    ///   one for all its prompts); nil opens it.
    /// - Throws: `DuckPromptError(.dropped)` with a `dropReason` when the policy drops the
    ///   prompt at once; `.internal` when the runtime directory or a queue file cannot be used.
    init(options: PlayOptions, name: String, store: JournalStore? = nil) throws {
        self.store = try store ?? JournalStore()
        ticket = try PromptQueue(directory: self.store.runtimeDirectory)
            .enter(priority: options.priority, onBusyDrop: options.onBusy == .drop, name: name)
    }
}
