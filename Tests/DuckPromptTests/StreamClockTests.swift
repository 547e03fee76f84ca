import Testing
@testable import DuckPromptCore

/// `StreamClock`: when a stream's byte reaches the device, from a timing answer. A table.
@Suite("Stream clock")
struct StreamClockTests {
    @Test("deviceTimeUs: the answer's instant, plus the bytes between the read index and the byte at the stream's rate, plus what the sink holds; nothing without a read index",
          arguments: [
              // 48 kHz mono float32: 192 000 bytes a second.
              (Int64(192_000), Int64?(0), UInt64(0), Int64(1_000_000), Int64?(2_000_000)),
              (19_200, 0, 10_000, 1_000_000, 1_110_000),
              (0, 19_200, 0, 1_000_000, 900_000),
              (38_400, 38_400, 20_000, 5, 20_005),
              (192_000, nil, 0, 1_000_000, nil),
          ] as [(Int64, Int64?, UInt64, Int64, Int64?)])
    func deviceTime(position: Int64, read: Int64?, sinkUs: UInt64, stamp: Int64, expected: Int64?) {
        #expect(StreamClock.deviceTimeUs(ofByte: position, readIndex: read, sinkUs: sinkUs, bytesPerSecond: 192_000,
                                         stampMonotonicUs: stamp) == expected)
    }

    @Test("deviceTimeUs: no rate, no time")
    func noRate() {
        #expect(StreamClock.deviceTimeUs(ofByte: 10, readIndex: 0, sinkUs: 0, bytesPerSecond: 0, stampMonotonicUs: 1) == nil)
    }

    @Test("monotonicUs: a realtime stamp 3 ms before now is 3 ms before the monotonic now")
    func monotonic() {
        #expect(StreamClock.monotonicUs(ofRealtimeUs: 1_700_000_000_997_000, realNowUs: 1_700_000_001_000_000,
                                        monotonicNowUs: 50_000_000) == 49_997_000)
    }
}

/// `PromptEstimate.heldStartUs(keptStream:asleep:onPipeWire:)`: a held prompter's start. A table.
@Suite("Held prompter's start")
struct HeldStartTests {
    @Test("A kept stream starts in 6 ms; a new one in 12, in 30 on PipeWire to a sleeping sink",
          arguments: [
              (true, true, true, 6000), (true, false, false, 6000),
              (false, false, true, 12_000), (false, true, false, 12_000), (false, false, false, 12_000),
              (false, true, true, 30_000),
          ] as [(Bool, Bool, Bool, Int)])
    func start(kept: Bool, asleep: Bool, onPipeWire: Bool, expected: Int) {
        #expect(PromptEstimate.heldStartUs(keptStream: kept, asleep: asleep, onPipeWire: onPipeWire) == expected)
    }
}
