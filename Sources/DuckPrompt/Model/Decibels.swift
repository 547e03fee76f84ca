/// A gain in decibels. 0 dB leaves a volume as it is; -20 dB is a tenth of the amplitude.
public struct Decibels: Sendable, Equatable, Hashable, Codable, CustomStringConvertible {
    public var value: Double
    public init(_ value: Double) { self.value = value }

    public var description: String {
        // Int(value) traps for infinities and beyond Int's range; print those as Double does.
        value.isFinite && value == value.rounded() && abs(value) < 1e15 ? "\(Int(value))dB" : "\(value)dB"
    }

    /// Parses a volume the way pactl and paplay users write it: `-20dB`, `-20 dB`, `-20`
    /// (dB), `50%` (libpulse's cubic percentage: `50%` is about -18.1 dB) or a linear factor
    /// written with a leading `x` or `*` is not accepted — use dB or %.
    /// - Throws: `DuckPromptError(.usage)` naming the text.
    /// Percentages are converted with libpulse (`pa_sw_volume_to_dB`).
    public init(parsing text: String) throws {
        let t = text.trimmingWhitespace()
        let lower = t.lowercased()
        if lower.hasSuffix("db"), let v = Double(lower.dropLast(2).trimmingWhitespace()),
           v.isFinite {
            self.init(v)
        } else if lower.hasSuffix("%"), let p = Double(lower.dropLast()), p.isFinite, p >= 0 {
            // 0% (or a percentage libpulse rounds to 0) is PA_VOLUME_MUTED, -inf dB: not a gain
            // anything downstream can ramp to.
            let dB = VolumeMath.decibels(fromPercent: p)
            guard dB.isFinite else {
                throw DuckPromptError(.usage, "'\(text)' is silence, not a gain: give a percentage above 0 or a gain in dB (-60dB)")
            }
            self.init(dB)
        } else if let v = Double(lower), v.isFinite {
            self.init(v)
        } else {
            throw DuckPromptError(.usage, "'\(text)' is not a volume: write it in dB (-20dB) or percent (50%)")
        }
    }
}

import FoundationEssentials
import Glibc
