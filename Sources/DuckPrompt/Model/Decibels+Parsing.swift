import FoundationEssentials

// A volume as pactl and paplay users write it, read into a gain; a percentage goes through
// libpulse's cubic scale (`VolumeMath`), so this lives beside it in the I/O shell.
extension Decibels {
    /// Parses a volume the way pactl and paplay users write it: `-20dB`, `-20 dB`, `-20`
    /// (dB), `50%` (libpulse's cubic percentage: `50%` is about -18.1 dB); a linear factor
    /// is not accepted — use dB or %. The number is plain decimal (`NumberText`): no white
    /// space around it, no exponent, hex, `inf` or `nan`; `dB` may be written in any case and
    /// after one space. The range is the caller's to check (`--duck`, `--volume`).
    /// - Throws: `DuckPromptError(.usage)` naming the text.
    /// Percentages are converted with libpulse (`pa_sw_volume_to_dB`).
    public init(parsing text: String) throws {
        let lower = text.lowercased()
        if lower.hasSuffix("db"), let v = NumberText.decimal(Self.number(beforeUnit: lower.dropLast(2))) {
            self.init(v)
        } else if lower.hasSuffix("%"), let p = NumberText.decimal(lower.dropLast()), p >= 0 {
            // 0% (or a percentage libpulse rounds to 0) is PA_VOLUME_MUTED, -inf dB: not a gain
            // anything downstream can ramp to.
            let dB = VolumeMath.decibels(fromPercent: p)
            guard dB.isFinite else {
                throw DuckPromptError(.usage, "'\(text.escapingControlCharacters)' is silence, not a gain: give a percentage above 0 or a gain in dB (-60dB)")
            }
            self.init(dB)
        } else if let v = NumberText.decimal(lower) {
            self.init(v)
        } else {
            throw DuckPromptError(.usage, "'\(text.escapingControlCharacters)' is not a volume: write it in dB (-20dB) or percent (50%)")
        }
    }

    /// The number before a unit: `-20` of `-20dB` or of `-20 dB` (one space).
    private static func number(beforeUnit text: Substring) -> Substring {
        text.hasSuffix(" ") ? text.dropLast() : text
    }
}
