import Testing
@testable import DuckPrompt
@testable import DuckPromptCore

/// `--dry-run`'s sentence (`EstimateSummary`), the service's answer read back in order
/// (`PromptEstimate.fields(from:)`) and the process's age (`ProcessAge`). Tables.
@Suite("Dry run: summary, fields, process age")
struct EstimateSummaryTests {
    typealias Value = PromptEstimate.EstimateValue

    static func fields(during: String = "play", call: String = "none", first: Int? = 306_000) -> [(key: String, value: Value)] {
        var values: [String: Value] = [
            "sink": .text("bt_headset"), "kind": .text("bluetooth-a2dp"), "pre-roll-us": .micros(300_000),
            "attack-us": .micros(200_000), "device-latency-us": .micros(40_000), "duration-us": .micros(1_204_000),
            "start-us": .micros(6000), "call-state": .text(call), "during-call": .text(during),
        ]
        if let first {
            values["first-sample-us"] = .micros(first)
            values["heard-us"] = .micros(first + 40_000)
            values["end-us"] = .micros(first + 1_204_000)
        }
        return PromptEstimate.fields(from: values)
    }

    @Test("the sentence, by what --during-call makes of the call", arguments: [
        ("play", "none", 306_000 as Int?,
         "would play on bt_headset (bluetooth-a2dp): pre-roll 300 ms, attack 200 ms, device latency 40 ms, first sample in 306 ms (heard in 346 ms), 1.20 s long"),
        ("mix", "active", 306_000,
         "would play under the call (active) on bt_headset (bluetooth-a2dp): pre-roll 300 ms, attack 200 ms, device latency 40 ms, first sample in 306 ms (heard in 346 ms), 1.20 s long"),
        ("chime", "ringing", 306_000,
         "would play a chime instead, during the call (ringing), on bt_headset (bluetooth-a2dp): pre-roll 300 ms, attack 200 ms, device latency 40 ms, first sample in 306 ms (heard in 346 ms), 1.20 s long"),
        ("defer", "active", nil,
         "would wait for the call (active) to end, then play on bt_headset (bluetooth-a2dp): pre-roll 300 ms, attack 200 ms, device latency 40 ms, 1.20 s long"),
        ("drop", "held", 306_000,
         "would be dropped during the call (held, --during-call drop), not played on bt_headset (bluetooth-a2dp): pre-roll 300 ms, attack 200 ms, device latency 40 ms, 1.20 s long"),
    ] as [(String, String, Int?, String)])
    func sentence(during: String, call: String, first: Int?, expected: String) {
        #expect(EstimateSummary.line(Self.fields(during: during, call: call, first: first)) == expected)
    }

    @Test("times: ms whole from 10 ms or when whole, to 0.1 ms below; seconds to 0.01", arguments: [
        (0, "0 ms"), (6000, "6 ms"), (6349, "6.3 ms"), (9960, "10.0 ms"), (10_000, "10 ms"), (306_499, "306 ms"), (306_500, "307 ms"),
    ])
    func milliseconds(us: Int, expected: String) {
        #expect(EstimateSummary.milliseconds(us) == expected)
    }

    @Test("seconds", arguments: [(0, "0.00 s"), (1_000_000, "1.00 s"), (1_204_999, "1.20 s"), (1_995_000, "2.00 s"), (50_000, "0.05 s")])
    func seconds(us: Int, expected: String) {
        #expect(EstimateSummary.seconds(us) == expected)
    }

    @Test("fields(from:): the keys in their order, an unknown key left out; every key of an estimate is among `keys`")
    func order() {
        let read = PromptEstimate.fields(from: ["end-us": .micros(3), "sink": .text("s"), "future-key": .micros(1),
                                                "start-us": .micros(2)])
        #expect(read.map(\.key) == ["sink", "start-us", "end-us"])
        #expect(Self.fields().map(\.key) == PromptEstimate.keys)
    }

    @Test("ProcessAge: now less the middle of the start's tick, in µs; never below 0", arguments: [
        (UInt64(100), 100, 1_010_000_000, 5000 as Int?),   // started in tick 100 of 10 ms: 1.005 s; now 1.010 s
        (100, 100, 1_000_000_000, 0),                      // now within the start's tick
        (100, 250, 1_000_000_000, 598_000),
        (1, 0, 1_000_000_000, nil),                        // no ticks per second
    ] as [(UInt64, Int, Int, Int?)])
    func age(start: UInt64, ticks: Int, now: Int, expected: Int?) {
        #expect(ProcessAge.age(startTicks: start, ticksPerSecond: ticks, nowNanoseconds: now) == expected)
    }

    @Test("ProcessAge: this test process has lived, less than a day")
    func ownAge() throws {
        let age = try #require(ProcessAge.microseconds())
        #expect(age > 0 && age < 86_400_000_000)
    }
}
