import Glibc
import Testing
@testable import DuckPromptProbe

/// The integration tests' measures (`Levels`), on generated samples.
@Suite("Levels")
struct LevelsTests {
    /// `seconds` of a sine at `hertz` and `amplitude` (1 = full scale), mono at 48 kHz.
    static func sine(hertz: Double, amplitude: Double, seconds: Double) -> [Float] {
        (0..<Int(seconds * Double(BenchProbe.rate))).map {
            Float(amplitude * sin(2 * Double.pi * hertz * Double($0) / Double(BenchProbe.rate)))
        }
    }

    @Test("a tone's level: its own frequency at its amplitude in dB, another frequency far below", arguments: [
        (1000.0, 0.5, 1000.0, -6.02, 0.2),
        (1000.0, 0.05, 1000.0, -26.02, 0.2),
        (1000.0, 0.5, 300.0, -200.0, 0.0),     // 300 Hz is not in a 1000 Hz tone: at most -60 dB
    ])
    func tone(hertz: Double, amplitude: Double, probe: Double, expected: Double, tolerance: Double) {
        let levels = Levels.tone(Self.sine(hertz: hertz, amplitude: amplitude, seconds: 0.2), hertz: probe)
        #expect(levels.count == 19, "20 windows of 10 ms, the last without a whole 20 ms span")
        let median = Levels.median(levels)
        if expected > -100 {
            #expect(abs(median - expected) <= tolerance, "\(median)")
        } else {
            #expect(median < -60, "\(median)")
        }
    }

    @Test("RMS of a sine is 3.01 dB under its peak; silence is -200")
    func rms() {
        let levels = Levels.rms(Self.sine(hertz: 1000, amplitude: 1, seconds: 0.1))
        #expect(levels.count == 10 && levels.allSatisfy { abs($0 - -3.01) < 0.05 }, "\(levels)")
        #expect(Levels.rms([Float](repeating: 0, count: 960)) == [-200, -200])
    }

    @Test("medians: an even count takes the mean of the middle two; none is -200; a 2-window dropout is filtered out")
    func medians() {
        #expect(Levels.median([-10, -20, -30, -40]) == -25)
        #expect(Levels.median([Double]()) == -200)
        let levels: [Double] = [-10, -10, -10, -200, -200, -10, -10, -10]
        #expect(Levels.medianFiltered(levels) == Array(repeating: -10, count: 8))
        #expect(Levels.largestStep(levels).dB == 0)
        let step: [Double] = [-10, -10, -10, -10, -30, -30, -30, -30]
        #expect(Levels.largestStep(step).dB == 20)
    }

    @Test("runs above a threshold: gaps of up to 2 windows bridged, runs under 10 windows left out")
    func runs() {
        let levels: [Double] = Array(repeating: -10, count: 12) + [-90, -90] + Array(repeating: -10, count: 3)
            + Array(repeating: -90, count: 5) + Array(repeating: -10, count: 4)
        let found = Levels.runs(levels, above: -30)
        #expect(found.count == 1)
        #expect(found.first.map { [$0.first, $0.last, $0.count] } == [0, 16, 15])
        #expect(Levels.span(levels, above: -30).map { [$0.first, $0.last, $0.count] } == [0, 25, 19])
    }

    @Test("heard windows: a 0.4 s tone is 40 windows of it, with a 23 ms dropout inside still 40 (a count of windows above -30 dB makes it 41); silence is nil")
    func heardWindows() throws {
        let silence = [Float](repeating: 0, count: 4800)
        let tone = Self.sine(hertz: 1000, amplitude: 0.5, seconds: 0.4)
        let whole = try #require(Levels.heardWindows(silence + tone + silence))
        #expect(abs(whole - 40) < 0.05, "\(whole)")
        let split = Array(tone[..<9600]) + [Float](repeating: 0, count: 1104) + Array(tone[9600...])
        let recording = silence + split + silence
        let heard = try #require(Levels.heardWindows(recording))
        #expect(abs(heard - 40) < 0.05, "\(heard)")
        #expect(Levels.span(Levels.rms(recording), above: -30)?.count == 41, "the count this replaces")
        #expect(Levels.heardWindows(silence) == nil)
    }
}
