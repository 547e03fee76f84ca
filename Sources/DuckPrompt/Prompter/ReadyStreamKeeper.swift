/// The stream a held `Prompter` keeps ready between prompts: the last part's stream of the
/// last prompt that played whole, corked and empty, still connected to its sink. The next
/// prompt of the same shape (sink, rate, channels, sample format, buffer) plays on it, which
/// saves creating and connecting a stream (6-12 ms on PipeWire) before its first sample.
///
/// What a user sees of it: pavucontrol and `pactl list sink-inputs` list one corked stream of
/// duckprompt (`media.role=navigation`, named after the last prompt) while the prompter lives.
/// A corked stream does not keep its sink awake, and no prompt ducks it (`duckprompt.prompt`).
///
/// Thread-safe: prompts of one prompter end and begin on their own threads.
final class ReadyStreamKeeper: Sendable {
    private let lock = Lock()
    nonisolated(unsafe) private var kept: PromptStream?
    /// How many of the next streams taken are not really uncorked (`withholdUncorks`).
    nonisolated(unsafe) private var withheld = 0

    init() {}

    /// Keeps `stream` (parked: corked, its last prompt drained) in place of the one kept before,
    /// which is closed.
    func keep(_ stream: PromptStream) {
        stream.park()
        let previous = lock.withLock { () -> PromptStream? in
            defer { kept = stream }
            return kept
        }
        previous?.close()
    }

    /// The kept stream when it fits `shape` on `connection`, can play again and carries the
    /// same property names (`PromptStream.carries(sameNamesAs:)`, so that no property of the
    /// last prompt is left on it); it is then no longer kept. A kept stream that does not fit,
    /// or can no longer play (its connection gone, its sink gone), is closed: this prompt's own
    /// stream is kept after it.
    func take(_ shape: PromptStream.Shape, on connection: PulseConnection,
              properties: [String: String]) -> PromptStream? {
        let stream = lock.withLock { () -> PromptStream? in
            defer { kept = nil }
            return kept
        }
        guard let stream else { return nil }
        let usable = stream.connection === connection && stream.shape == shape
            && stream.carries(sameNamesAs: properties)
            && connection.withLock { stream.isReusableLocked(on: shape.sinkName) }
        if usable {
            if lock.withLock({ defer { withheld = max(0, withheld - 1) }; return withheld > 0 }) {
                stream.withholdUncork()
            }
            return stream
        }
        stream.close()
        return nil
    }

    /// Whether a stream of `shape` is kept now: a prompt of that shape would likely play on
    /// it, without making a stream (`Prompter.estimate`'s start; `take` checks more).
    func keeps(_ shape: PromptStream.Shape) -> Bool {
        lock.withLock { kept?.shape == shape }
    }

    /// For tests: the next `count` streams taken stay corked on the server when their prompt
    /// starts them (`PromptStream.withholdUncork()`), as PipeWire 0.3.65 at times leaves a kept
    /// stream that it was told to uncork: it takes no byte (`KeptStreamStart`).
    func withholdUncorks(_ count: Int) {
        lock.withLock { withheld = count }
    }

    /// Closes the kept stream (the prompter closes, or its connection was replaced).
    func close() {
        lock.withLock { () -> PromptStream? in
            defer { kept = nil }
            return kept
        }?.close()
    }
}
