import Foundation
import Testing
@testable import DuckPrompt
@testable import DuckPromptCore

// Pure tests of the duck arithmetic: ramp planning, the duck bookkeeping, libpulse's volume
// math and dB parsing. No server is contacted.

// MARK: - Ramp

@Suite("Ramp")
struct RampTests {
    /// (from dB, to dB, requested ms) → planned step count and total length in ms.
    struct Case: Sendable, CustomTestStringConvertible {
        var from: Double
        var to: Double
        var durationMs: Int
        var steps: Int
        var totalMs: Int
        var testDescription: String { "\(from) → \(to) dB in \(durationMs) ms" }
    }

    static let cases: [Case] = [
        // Time-bound: one step per 10 ms.
        Case(from: 0, to: -20, durationMs: 200, steps: 20, totalMs: 200),     // default attack
        Case(from: -20, to: 0, durationMs: 500, steps: 50, totalMs: 500),     // default release
        Case(from: 0, to: -20, durationMs: 1000, steps: 100, totalMs: 1000),
        Case(from: -6.5, to: -20, durationMs: 140, steps: 14, totalMs: 140),
        Case(from: 0, to: -1, durationMs: 30, steps: 3, totalMs: 30),
        // Requested lengths that are not a multiple of 10 ms round up to whole 10 ms steps.
        Case(from: 0, to: -20, durationMs: 205, steps: 21, totalMs: 210),
        Case(from: 0, to: -1, durationMs: 25, steps: 3, totalMs: 30),
        // Depth-bound: too steep for 1 dB per 10 ms, so lengthened.
        Case(from: 0, to: -20, durationMs: 0, steps: 20, totalMs: 200),
        Case(from: 0, to: -20, durationMs: 15, steps: 20, totalMs: 200),
        Case(from: -20, to: 0, durationMs: 0, steps: 20, totalMs: 200),
        Case(from: 0, to: -60, durationMs: 50, steps: 60, totalMs: 600),
        Case(from: 0, to: -3, durationMs: 0, steps: 3, totalMs: 30),
        Case(from: -6.5, to: -20, durationMs: 0, steps: 14, totalMs: 140),     // 13.5 / 1 rounds up to 14
        // Small spans fit in one step.
        Case(from: 0, to: -1.5, durationMs: 0, steps: 2, totalMs: 20),
        Case(from: 0, to: -1, durationMs: 0, steps: 1, totalMs: 10),
        // A negative length is treated as 0.
        Case(from: 0, to: -20, durationMs: -5, steps: 20, totalMs: 200),
        // Interrupted ramps start from an intermediate gain.
        Case(from: -7.3, to: 0, durationMs: 500, steps: 50, totalMs: 500),
    ]

    @Test("step count and length", arguments: cases)
    func stepCount(_ c: Case) {
        let ramp = Ramp(from: c.from, to: c.to, durationMs: c.durationMs)
        #expect(ramp.steps.count == c.steps)
        #expect(ramp.durationMs == c.totalMs)
        #expect(ramp.steps.last?.offsetMs == c.totalMs)
    }

    @Test("last step lands exactly on the target", arguments: cases)
    func lastStepExact(_ c: Case) throws {
        let last = try #require(Ramp(from: c.from, to: c.to, durationMs: c.durationMs).steps.last)
        // Bit for bit: the release's last step must be 0 dB so the originals come back exactly.
        #expect(last.gain.bitPattern == c.to.bitPattern)
    }

    @Test("gains move monotonically from `from` towards `to`", arguments: cases)
    func monotonic(_ c: Case) {
        let gains = [c.from] + Ramp(from: c.from, to: c.to, durationMs: c.durationMs).steps.map(\.gain)
        for (a, b) in zip(gains, gains.dropFirst()) {
            if c.to < c.from {
                #expect(b < a, "\(gains)")
            } else {
                #expect(b > a, "\(gains)")
            }
            #expect(b >= min(c.from, c.to) && b <= max(c.from, c.to), "\(b) is outside the span")
        }
    }

    @Test("offsets start one interval in and grow by at least 10 ms", arguments: cases)
    func offsets(_ c: Case) {
        let offsets = Ramp(from: c.from, to: c.to, durationMs: c.durationMs).steps.map(\.offsetMs)
        #expect(offsets.first.map { $0 >= Ramp.stepIntervalMs } == true, "\(offsets)")
        for (a, b) in zip(offsets, offsets.dropFirst()) {
            #expect(b - a >= Ramp.stepIntervalMs, "\(offsets)")
        }
    }

    @Test("no step changes the gain by more than maxStepDecibels", arguments: cases)
    func stepSize(_ c: Case) {
        let gains = [c.from] + Ramp(from: c.from, to: c.to, durationMs: c.durationMs).steps.map(\.gain)
        for (a, b) in zip(gains, gains.dropFirst()) {
            #expect(abs(b - a) <= Ramp.maxStepDecibels + 1e-9, "step \(a) → \(b)")
        }
    }

    /// The product promise: a listener never hears more than 3 dB of change within 10 ms.
    /// For every window of 10 ms (closed at both ends, the worst case), the change is the
    /// distance from the gain before the window to the last gain set inside it.
    @Test("at most 3 dB change in any 10 ms window", arguments: cases)
    func tenMillisecondWindow(_ c: Case) {
        let ramp = Ramp(from: c.from, to: c.to, durationMs: c.durationMs)
        let points = [Ramp.Step(offsetMs: 0, gain: c.from)] + ramp.steps
        for first in 1..<points.count {
            for last in first..<points.count where points[last].offsetMs - points[first].offsetMs <= 10 {
                let change = abs(points[last].gain - points[first - 1].gain)
                #expect(change <= 3 + 1e-9,
                        "\(change) dB between \(points[first - 1].offsetMs) and \(points[last].offsetMs) ms")
            }
        }
    }

    @Test("a busy desktop: the writes stay within the budget, steps at most 3 dB, no 10 ms window over 3 dB",
          arguments: [(300, 200), (300, 0), (1000, 500), (100, 200), (150, 50)])
    func busy(streams: Int, durationMs: Int) {
        let ramp = Ramp(from: 0, to: -20, durationMs: durationMs, streams: streams)
        #expect(ramp.steps.last?.gain == -20)
        let fewest = Int((20 / Ramp.maxBusyStepDecibels).rounded(.up))
        #expect(ramp.steps.count * streams <= max(Ramp.writeBudget, fewest * streams), "\(ramp.steps.count) steps")
        let points = [Ramp.Step(offsetMs: 0, gain: 0)] + ramp.steps
        for (a, b) in zip(points, points.dropFirst()) {
            #expect(abs(b.gain - a.gain) <= Ramp.maxBusyStepDecibels + 1e-9)
        }
        for first in 1..<points.count {
            for last in first..<points.count where points[last].offsetMs - points[first].offsetMs <= 10 {
                #expect(abs(points[last].gain - points[first - 1].gain) <= 3 + 1e-9)
            }
        }
        // A few streams keep the 1 dB steps.
        #expect(Ramp(from: 0, to: -20, durationMs: durationMs, streams: 10).steps.count >= 20)
    }

    @Test("an instant -20 dB attack is lengthened to keep steps small")
    func instantAttackLengthened() {
        let ramp = Ramp(from: 0, to: -20, durationMs: 0)
        #expect(ramp.steps.count > 1)
        #expect(ramp.durationMs >= Int((20 / Ramp.maxStepDecibels).rounded(.up)) * Ramp.stepIntervalMs)
        #expect(ramp.steps.last?.gain == -20)
    }

    @Test("a 0 dB span is one step, at once, on the target", arguments: [
        (-20.0, 500), (0.0, 0), (0.0, 200), (-6.5, 10),
    ])
    func zeroSpan(gain: Double, durationMs: Int) {
        let ramp = Ramp(from: gain, to: gain, durationMs: durationMs)
        #expect(ramp.steps == [Ramp.Step(offsetMs: 0, gain: gain)])
        #expect(ramp.durationMs == 0)
    }

    @Test("constants match the promise: 1.5 dB steps no closer than 10 ms")
    func constants() {
        #expect(Ramp.stepIntervalMs == 10)
        #expect(Ramp.maxStepDecibels * 2 <= 3)
    }
}

// MARK: - RampSchedule

@Suite("RampSchedule")
struct RampScheduleTests {
    /// Drives a schedule with a clock that wakes `lateMs` after each due time (as a timer
    /// does), and not before `stallUntilMs`. Returns the steps with the times they were sent.
    static func drive(_ ramp: Ramp, lateMs: Double = 0, stallUntilMs: Double = 0) -> [(atMs: Double, step: Ramp.Step)] {
        var schedule = RampSchedule(ramp)
        var sent: [(atMs: Double, step: Ramp.Step)] = []
        var now = 0.0
        while let due = schedule.dueMs, sent.count <= ramp.steps.count {
            // Not yet due a moment before.
            var early = schedule
            #expect(early.take(atMs: due - 0.5) == nil)
            now = max(now, due + lateMs, stallUntilMs)
            if let step = schedule.take(atMs: now) { sent.append((now, step)) }
        }
        return sent
    }

    /// Every closed 10 ms window of send times holds at most 3 dB of change.
    static func expectWindows(_ sent: [(atMs: Double, step: Ramp.Step)], from: Double) {
        let gains = [from] + sent.map(\.step.gain)
        for first in sent.indices {
            for last in first..<sent.count where sent[last].atMs - sent[first].atMs <= 10 {
                let change = abs(gains[last + 1] - gains[first])
                #expect(change <= 3 + 1e-9, "\(change) dB between \(sent[first].atMs) and \(sent[last].atMs) ms")
            }
        }
    }

    @Test("on time: every step at its planned offset")
    func onTime() {
        let ramp = Ramp(from: 0, to: -20, durationMs: 200)
        let sent = Self.drive(ramp)
        #expect(sent.map(\.step) == ramp.steps)
        #expect(sent.map(\.atMs) == ramp.steps.map { Double($0.offsetMs) })
    }

    @Test("late wake-ups do not add up: the release ends within one lateness of 500 ms",
          arguments: [0.3, 1.0, 2.5])
    func noDrift(lateMs: Double) throws {
        let ramp = Ramp(from: -20, to: 0, durationMs: 500)
        let sent = Self.drive(ramp, lateMs: lateMs)
        #expect(sent.map(\.step) == ramp.steps)
        let last = try #require(sent.last)
        #expect(last.atMs <= 500 + lateMs + 1e-9, "last step at \(last.atMs) ms")
        Self.expectWindows(sent, from: -20)
    }

    @Test("after a stall, the steps catch up no faster than 3 dB per 10 ms",
          arguments: [(1, 200), (100, 200), (150, 50), (300, 200), (300, 0), (1, 500)])
    func stall(streams: Int, durationMs: Int) {
        let ramp = Ramp(from: 0, to: -20, durationMs: durationMs, streams: streams)
        let sent = Self.drive(ramp, stallUntilMs: Double(ramp.durationMs) * 0.8)
        #expect(sent.map(\.step) == ramp.steps)
        Self.expectWindows(sent, from: 0)
    }

    @Test("spacing: two steps of up to 1.5 dB fit in 10 ms, larger ones do not")
    func spacing() {
        #expect(RampSchedule.minimumSpacingMs(stepDecibels: -1) * 2 > 10)
        #expect(RampSchedule.minimumSpacingMs(stepDecibels: 1.5) * 2 > 10)
        #expect(RampSchedule.minimumSpacingMs(stepDecibels: -2.9) > 10)
    }
}

// MARK: - DuckPlan

@Suite("DuckPlan")
struct DuckPlanTests {
    static let stereo = ChannelVolumes([65536, 65536])

    static func input(_ index: UInt32, role: String? = nil, volume: ChannelVolumes = stereo,
                      hasVolume: Bool = true, writable: Bool = true) -> SinkInput {
        SinkInput(index: index, sinkIndex: 0, name: "stream \(index)", volume: volume,
                  hasVolume: hasVolume, volumeWritable: writable,
                  properties: role.map { ["media.role": $0] } ?? [:])
    }

    static let mixed: [SinkInput] = [
        input(7, role: "music"),
        input(2, role: "phone"),
        input(5),                                    // no role: ducked
        input(3, role: "video"),
        input(9, role: "music", hasVolume: false),   // passthrough: no volume
        input(4, role: "game", writable: false),     // volume fixed by its client
        input(11, role: "event"),
        input(12, volume: ChannelVolumes([])),       // no channels to set
    ]

    @Test("selects writable streams in index order, skipping phone calls")
    func defaultSelection() {
        let plan = DuckPlan(inputs: Self.mixed, depth: -20, math: .libpulse)
        #expect(plan.entries.map(\.index) == [3, 5, 7, 11])
        #expect(plan.depth == -20)
    }

    @Test("custom exempt roles replace the default; a call's roles (phone, communication) are never ducked")
    func customExemptRoles() {
        let plan = DuckPlan(inputs: Self.mixed, depth: -20, exemptRoles: ["phone", "event", "video"], math: .libpulse)
        #expect(plan.entries.map(\.index) == [5, 7])
        let noExempt = DuckPlan(inputs: Self.mixed + [Self.input(13, role: "Communication")], depth: -20, exemptRoles: [],
                                math: .libpulse)
        #expect(noExempt.entries.map(\.index) == [3, 5, 7, 11])
    }

    @Test("excluded indices (the prompt's own stream) are never ducked")
    func excluded() {
        let plan = DuckPlan(inputs: Self.mixed, depth: -20, excluding: [5, 11, 99], math: .libpulse)
        #expect(plan.entries.map(\.index) == [3, 7])
    }

    @Test("streams without a writable volume are skipped")
    func notWritable() {
        let plan = DuckPlan(inputs: [Self.input(1, hasVolume: false), Self.input(2, writable: false),
                                     Self.input(3, hasVolume: false, writable: false)], depth: -20, math: .libpulse)
        #expect(plan.entries.isEmpty)
    }

    @Test("depth 0 (or anything not below 0) ducks nothing", arguments: [0.0, -0.0, 6.0, .nan])
    func noDepthNoDuck(depth: Double) {
        let plan = DuckPlan(inputs: Self.mixed, depth: depth, math: .libpulse)
        #expect(plan.entries.isEmpty)
        #expect(plan.volumes(atGain: -20).isEmpty)
    }

    @Test("originals are kept exactly as found")
    func originalsKept() {
        let odd = ChannelVolumes([65535, 1, 0])
        let plan = DuckPlan(inputs: [Self.input(8, volume: odd), Self.input(1)], depth: -20, math: .libpulse)
        #expect(plan.entries == [DuckPlan.Entry(index: 1, original: Self.stereo),
                                 DuckPlan.Entry(index: 8, original: odd)])
    }

    static let oddVolumes: [[UInt32]] = [
        [65535, 1, 0, 98304, 12345, 40000],
        [1],
        [65535, 1, 0],
        [98304, 12345, 40000, 65536, 7],
        [32767, 32769, 131072, 3, 65537, 2, 30419],
    ]

    @Test("at 0 dB every stream gets its original back, bit for bit", arguments: oddVolumes)
    func zeroGainRestoresExactly(values: [UInt32]) throws {
        let original = ChannelVolumes(values)
        var plan = DuckPlan(inputs: [Self.input(4, volume: original), Self.input(6, volume: Self.stereo)],
                            depth: -20, math: .libpulse)
        #expect(plan.volumes(atGain: 0).map(\.volume) == [original, Self.stereo])
        #expect(plan.volumes(atGain: -0.0).map(\.volume) == [original, Self.stereo])
        // Also after the ramp's last step of a release computed by Ramp.
        let release = Ramp(from: -20, to: 0, durationMs: 500)
        let last = try #require(release.steps.last)
        #expect(plan.volumes(atGain: last.gain).map(\.volume) == [original, Self.stereo])
        plan.remove(index: 6)
        #expect(plan.volumes(atGain: 0).map(\.index) == [4])
        #expect(plan.volumes(atGain: 0).map(\.volume) == [original])
    }

    @Test("at -20 dB each channel is pa_sw_volume_multiply by pa_sw_volume_from_dB(-20)",
          arguments: oddVolumes)
    func ducked(values: [UInt32]) throws {
        let plan = DuckPlan(inputs: [Self.input(4, volume: ChannelVolumes(values))], depth: -20, math: .libpulse)
        let result = try #require(plan.volumes(atGain: -20).first)
        #expect(result.index == 4)
        #expect(result.volume.values.count == values.count)
        let factor = UInt64(VolumeMath.volume(fromDecibels: -20))
        let norm = UInt64(VolumeMath.norm)
        for (original, ducked) in zip(values, result.volume.values) {
            // pa_sw_volume_multiply: (a * b + NORM / 2) / NORM.
            #expect(UInt64(ducked) == (UInt64(original) * factor + norm / 2) / norm,
                    "channel \(original) → \(ducked)")
            #expect(ducked <= original)
            // Far enough above the quantum, the gain in dB is -20 within 0.01 dB.
            if original >= 1000 {
                let change = VolumeMath.decibels(of: ducked) - VolumeMath.decibels(of: original)
                #expect(abs(change - -20) < 0.01, "channel \(original) → \(ducked): \(change) dB")
            }
            if original == 0 { #expect(ducked == 0) }
        }
    }

    @Test("an intermediate ramp gain is applied per channel")
    func intermediateGain() throws {
        let plan = DuckPlan(inputs: [Self.input(1, volume: ChannelVolumes([65536, 32768]))], depth: -20, math: .libpulse)
        let volume = try #require(plan.volumes(atGain: -7.5).first?.volume)
        for (original, ducked) in zip([UInt32(65536), 32768], volume.values) {
            let change = VolumeMath.decibels(of: ducked) - VolumeMath.decibels(of: original)
            #expect(abs(change - -7.5) < 0.01)
        }
    }

    @Test("remove forgets a stream that ended")
    func remove() {
        var plan = DuckPlan(inputs: Self.mixed, depth: -20, math: .libpulse)
        plan.remove(index: 7)
        plan.remove(index: 1000)
        #expect(plan.entries.map(\.index) == [3, 5, 11])
    }
}

// MARK: - VolumeMath

@Suite("VolumeMath")
struct VolumeMathTests {
    @Test("norm and the ends of the scale")
    func ends() {
        #expect(VolumeMath.norm == 65536)
        #expect(VolumeMath.volume(fromDecibels: 0) == 65536)
        #expect(VolumeMath.volume(fromDecibels: -.infinity) == 0)
        #expect(VolumeMath.decibels(of: 65536) == 0)
        #expect(VolumeMath.decibels(of: 0) == -.infinity)
    }

    /// libpulse's software volumes are cubic: pa_sw_volume_from_dB(-20) is cbrt(0.1) of norm,
    /// about 30419, and a tenth of norm (6554) is -60 dB.
    @Test("-20 dB of norm is cbrt(0.1) × 65536; a tenth of norm is -60 dB")
    func cubic() {
        let minus20 = VolumeMath.volume(fromDecibels: -20)
        #expect((30417...30421).contains(minus20), "\(minus20)")
        #expect(VolumeMath.scale(ChannelVolumes([65536]), by: -20).values == [minus20])
        let minus60 = VolumeMath.volume(fromDecibels: -60)
        #expect((6552...6556).contains(minus60), "\(minus60)")
        #expect(VolumeMath.scale(ChannelVolumes([65536]), by: -60).values == [minus60])
        #expect(abs(VolumeMath.decibels(of: 6554) - -60) < 0.01)
    }

    @Test("percent to dB, on libpulse's cubic scale", arguments: [
        (10.0, -60.0), (20.0, -41.94), (50.0, -18.06), (100.0, 0.0), (150.0, 10.57),
    ])
    func percent(percent: Double, dB: Double) {
        #expect(abs(VolumeMath.decibels(fromPercent: percent) - dB) < 0.01,
                "\(percent)% → \(VolumeMath.decibels(fromPercent: percent)) dB")
    }

    @Test("0% is muted")
    func zeroPercent() {
        #expect(VolumeMath.decibels(fromPercent: 0) == -.infinity)
    }

    @Test("scale by 0 dB returns the volumes unchanged")
    func scaleZero() {
        let v = ChannelVolumes([65535, 1, 0, 98304, 12345])
        #expect(VolumeMath.scale(v, by: 0) == v)
        #expect(VolumeMath.unscale(v, by: 0) == v)
    }

    @Test("scale by -inf mutes every channel")
    func scaleMute() {
        #expect(VolumeMath.scale(ChannelVolumes([65536, 1, 98304]), by: -.infinity).values == [0, 0, 0])
    }

    @Test("unscale undoes scale within libpulse's rounding", arguments: [-1.5, -6.0, -20.0, -7.3])
    func roundTrip(dB: Double) {
        let values: [UInt32] = [65536, 65535, 98304, 40000, 12345, 30000, 1000]
        let scaled = VolumeMath.scale(ChannelVolumes(values), by: dB)
        let back = VolumeMath.unscale(scaled, by: dB)
        // One rounding in each direction: at most half a step of the divided value plus half.
        let factor = Double(VolumeMath.volume(fromDecibels: dB))
        let bound = 0.5 * Double(VolumeMath.norm) / factor + 0.5
        for (original, restored) in zip(values, back.values) {
            #expect(abs(Double(restored) - Double(original)) <= bound, "\(original) → \(restored)")
        }
        #expect(scaled != ChannelVolumes(values))
    }

    @Test("unscale takes a user's change made while ducked back out of the duck")
    func unscaleOfUserChange() {
        // The user set 50 % while ducked by -20 dB: undoing the duck gives a volume whose
        // gain is 20 dB above it.
        let whileDucked = ChannelVolumes([32768])
        let undone = VolumeMath.unscale(whileDucked, by: -20)
        let change = VolumeMath.decibels(of: undone.values[0]) - VolumeMath.decibels(of: 32768)
        #expect(abs(change - 20) < 0.01)
    }
}

// MARK: - Decibels

@Suite("Decibels parsing")
struct DecibelsTests {
    @Test("dB and percent forms", arguments: [
        ("-20dB", -20.0), ("-20 dB", -20.0), ("-20", -20.0), ("-6.5dB", -6.5), ("0dB", 0.0),
        ("-20db", -20.0), ("-20DB", -20.0), ("0", 0.0), ("+3dB", 3.0), ("+300dB", 300.0),
        ("100%", 0.0), ("10%", -60.0),
    ])
    func parses(text: String, dB: Double) throws {
        let value = try Decibels(parsing: text).value
        #expect(abs(value - dB) < 0.01, "'\(text)' → \(value)")
    }

    @Test("percent is libpulse's cubic scale")
    func percent() throws {
        let fifty = try Decibels(parsing: "50%").value
        #expect(abs(fifty - VolumeMath.decibels(fromPercent: 50)) < 1e-12)
        #expect(abs(fifty - -18.06) < 0.01)
    }

    @Test("text that is no volume is a usage error naming it", arguments: [
        "loud", "", "dB", "--20", "%", "-50%", "20 %dB", "x20dB", "inf", "-infdB", "nan", "nandB",
        // Plain decimal only (NumberText): no white space around, no hex, exponent or overflow.
        " -20dB ", " -20dB", "-20dB ", "-20  dB", "0x10", "0x10dB", "1e3dB", "-1e300dB", "10.dB", ".5dB",
        "999999999999999999999999", "999999999999999999999999%", "５0%",
    ])
    func rejects(text: String) {
        let error = #expect(throws: DuckPromptError.self) { try Decibels(parsing: text) }
        #expect(error?.code == .usage)
        #expect(error?.exitCode == 64)
        #expect(error?.message.contains("'\(text)'") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("\n") == false)
    }

    @Test("a line break in the text is refused, and written as an escape: the message stays one line")
    func lineBreak() {
        let error = #expect(throws: DuckPromptError.self) { try Decibels(parsing: "-20dB\n\u{1B}[2J") }
        #expect(error?.message.hasPrefix("'-20dB\\n\\u{1B}[2J' is not a volume") == true, "\(error?.message ?? "")")
    }

    @Test("a percentage that libpulse rounds to silence is rejected, not -inf dB",
          arguments: ["0%", "0.0001%"])
    func silentPercent(text: String) {
        let error = #expect(throws: DuckPromptError.self) { try Decibels(parsing: text) }
        #expect(error?.code == .usage)
    }

    @Test("description", arguments: [
        (Decibels(-20), "-20dB"), (Decibels(0), "0dB"), (Decibels(-6.5), "-6.5dB"),
        (Decibels(-.infinity), "-infdB"), (Decibels(1e300), "1e+300dB"),
    ])
    func description(value: Decibels, text: String) {
        #expect(value.description == text)
    }
}
