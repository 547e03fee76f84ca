import Testing
@testable import DuckPromptCore

/// `KeptStreamStart.verdict`: whether a kept stream plays after its uncork, from the server's
/// read index against the one it had once parked. A table, no server.
@Suite("Kept stream start")
struct KeptStreamStartTests {
    @Test("verdict: an index past the parked one plays; none past it waits until 500 ms, then is stuck; an index the server cannot tell is taken as playing",
          arguments: [
              (Int64?(1000), Int64?(1001), 0, KeptStreamStart.Verdict.playing),
              (1000, 5000, 499, .playing),
              (1000, 5000, 10_000, .playing),
              (1000, 1000, 0, .waiting),
              (1000, 1000, 499, .waiting),
              (1000, 1000, 500, .stuck),
              (1000, 1000, 7000, .stuck),
              // PipeWire's read index may run past the write index at a drain's end; it
              // never goes back while parked, but a smaller one is no sign of playing.
              (1000, 900, 600, .stuck),
              (0, 0, 500, .stuck),
              (nil, 1000, 600, .playing),
              (1000, nil, 600, .playing),
          ] as [(Int64?, Int64?, Int, KeptStreamStart.Verdict)])
    func verdict(parked: Int64?, read: Int64?, elapsedMs: Int, expected: KeptStreamStart.Verdict) {
        #expect(KeptStreamStart.verdict(parkedReadIndex: parked, readIndex: read, elapsedMs: elapsedMs) == expected)
    }
}
