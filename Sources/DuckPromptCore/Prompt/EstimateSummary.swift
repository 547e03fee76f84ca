/// `duckprompt play --dry-run`'s line without `--json`: an estimate's fields (`PromptEstimate.fields`,
/// or the service's `Estimate` answer read back) as a sentence, e.g. "would play on bt_headset
/// (bluetooth-a2dp): pre-roll 300 ms, attack 0 ms, device latency 40 ms, first sample in 306 ms
/// (heard in 346 ms), 1.20 s long". Pure.
package enum EstimateSummary {
    /// The sentence; a field that is absent is left out of it.
    package static func line(_ fields: [(key: String, value: PromptEstimate.EstimateValue)]) -> String {
        var text: [String: String] = [:]
        var micros: [String: Int] = [:]
        for field in fields {
            switch field.value {
            case .text(let word): text[field.key] = word
            case .micros(let us): micros[field.key] = us
            }
        }
        let sink = "\(text["sink"] ?? "?") (\(text["kind"] ?? "?"))"
        let call = text["call-state"] ?? "none"
        let head = switch text["during-call"] {
        case "drop": "would be dropped during the call (\(call), --during-call drop), not played on \(sink)"
        case "defer": "would wait for the call (\(call)) to end, then play on \(sink)"
        case "chime": "would play a chime instead, during the call (\(call)), on \(sink)"
        case "mix": "would play under the call (\(call)) on \(sink)"
        default: "would play on \(sink)"
        }
        var parts: [String] = []
        if let us = micros["pre-roll-us"] { parts.append("pre-roll \(milliseconds(us))") }
        if let us = micros["attack-us"] { parts.append("attack \(milliseconds(us))") }
        if let us = micros["device-latency-us"] { parts.append("device latency \(milliseconds(us))") }
        if text["during-call"] != "drop", let first = micros["first-sample-us"] {
            parts.append("first sample in \(milliseconds(first))"
                + (micros["heard-us"].map { " (heard in \(milliseconds($0)))" } ?? ""))
        }
        if let us = micros["duration-us"] { parts.append("\(seconds(us)) long") }
        return parts.isEmpty ? head : head + ": " + parts.joined(separator: ", ")
    }

    /// µs as ms: whole from 10 ms or when whole, to 0.1 ms below ("0 ms", "6 ms", "6.3 ms", "306 ms").
    static func milliseconds(_ us: Int) -> String {
        guard us < 10_000, us % 1000 != 0 else { return "\((us + 500) / 1000) ms" }
        let tenths = (max(0, us) + 50) / 100
        return "\(tenths / 10).\(tenths % 10) ms"
    }

    /// µs as seconds to 0.01 s ("1.20 s").
    static func seconds(_ us: Int) -> String {
        let hundredths = (max(0, us) + 5000) / 10_000
        let rest = hundredths % 100
        return "\(hundredths / 100).\(rest < 10 ? "0" : "")\(rest) s"
    }
}
