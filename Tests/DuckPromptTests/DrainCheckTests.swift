import Testing
@testable import DuckPromptCore

/// `DrainCheck.tookEverything`: whether a drained stream's bytes were all taken. A table.
@Suite("Drain check")
struct DrainCheckTests {
    @Test("tookEverything: a read index at or past the write index (PulseAudio's equal, PipeWire's a cycle past) took everything; one short of it did not; an index the server cannot tell stands as taken",
          arguments: [
              (Int64?(38_400), Int64?(38_400), true),
              (38_912, 38_400, true),
              (0, 0, true),
              (38_399, 38_400, false),
              (0, 38_400, false),
              (nil, 38_400, true),
              (38_400, nil, true),
          ] as [(Int64?, Int64?, Bool)])
    func tookEverything(read: Int64?, write: Int64?, expected: Bool) {
        #expect(DrainCheck.tookEverything(readIndex: read, writeIndex: write) == expected)
    }
}
