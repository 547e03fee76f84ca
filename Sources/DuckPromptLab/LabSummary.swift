import DuckPrompt
import DuckPromptProbe

/// The lines `duckprompt lab` prints on standard error at the end: where each prompt went and
/// how loud, how deep every other stream was ducked and whether it came back, in the words
/// Scripts/demo has used. Pure.
package enum LabSummary {
    /// The least unrecorded time of a prompt's that its line names, in seconds: less is the
    /// placement's jitter at its edges.
    static let unrecordedShown = 0.05
    /// A monitor level that fell by this much (dB) or more fell to silence: the recording's
    /// floor, not a duck's depth (a muted stream measured 177 dB).
    static let silenceDropDb = 100.0

    /// How `ListeningReport.Gap.reason` reads.
    static func reason(_ reason: String) -> String {
        switch reason {
        case "hole": "the server reported holes"
        case "no-samples": "no samples arrived"
        case "not-recording": "the recording had not started or had ended"
        default: reason
        }
    }

    package static func lines(_ report: ListeningReport) -> [String] {
        var lines: [String] = []
        let streams = Dictionary(report.streams.map { ($0.index, $0) }, uniquingKeysWith: { a, _ in a })
        func named(_ index: UInt32) -> String {
            let app = streams[index]?.properties["application.name"].map { ", \($0)" } ?? ""
            return "stream #\(index)\(app)"
        }
        guard report.listened else { return ["nothing recorded (--no-listen)"] }
        if report.summary.prompts.isEmpty {
            lines.append("no prompt played (the command opened no stream, or only ones of media.role music, video, game, movie or production)")
        }
        let prompts = report.summary.prompts
        /// A prompt by its place in `summary.prompts`: its stream, and which of the stream's
        /// prompts when it played several.
        func prompt(_ entry: Int) -> String {
            guard entry >= 0 && entry < prompts.count else { return "#?" }
            let prompt = prompts[entry]
            return prompt.parts > 1 ? "#\(prompt.stream) (\(prompt.part) of \(prompt.parts))" : "#\(prompt.stream)"
        }
        for prompt in prompts {
            let open = !prompt.openAtEnd ? "" : report.timedOut ? " (cut off by --timeout: its stream was still open)"
                : " (its stream was still open at the end)"
            let name = prompt.parts > 1
                ? "prompt \(prompt.part) of \(prompt.parts) (\(named(prompt.stream))\(prompt.mediaName.map { ", \($0)" } ?? ""))"
                : "prompt (\(named(prompt.stream)))"
            let missing = "its monitor's recording has no samples for \(formatted("%.2f", prompt.unrecordedSeconds)) s of it ("
                + prompt.unrecordedReasons.map(Self.reason).joined(separator: ", ") + ")"
            if prompt.heard, let level = prompt.levelDbfs, let start = prompt.start, let end = prompt.end {
                let shared = prompt.sharedWith.isEmpty ? "" : " (mixed with \(prompt.sharedWith.map { "#\($0)" }.joined(separator: ", ")))"
                let gaps = prompt.unrecordedSeconds >= Self.unrecordedShown ? "; \(missing)" : ""
                lines.append("\(name): heard on \(prompt.sink)'s monitor at "
                             + "\(formatted("%.2f", level)) dBFS RMS, \(formatted("%.2f", start)) s to \(formatted("%.2f", end)) s\(shared)\(open)\(gaps)")
            } else if prompt.corkedAllThrough {
                lines.append("\(name): NOT heard: its stream on \(prompt.sink.isEmpty ? "an unknown sink" : prompt.sink) "
                             + "stayed corked all through: it never played (a prompt cancelled or dropped while it waited, or a stream "
                             + "kept ready and not used)\(open)")
            } else if prompt.sink.isEmpty {
                // The stream came and went between two of the lab's reads of the server.
                lines.append("\(name): NOT heard as far as the lab knows: it never learned which sink the stream "
                             + "played on (it ended before the lab read it), so whether it was heard is unknown\(open)")
            } else if prompt.unrecordedSeconds >= Self.unrecordedShown {
                lines.append("\(name): played on \(prompt.sink); NOT heard, but \(missing): "
                             + "whether it was heard is unknown\(open)")
            } else {
                let silent = prompt.silentVolume ? "; its stream's volume was muted or -inf dB" : ""
                lines.append("\(name): played on \(prompt.sink) but NOT heard on its monitor "
                             + "(recorded all through: silence\(silent))\(open)")
            }
        }
        for other in report.summary.others {
            let what = other.role == "lab-music" ? "music" : other.mediaRole ?? "stream"
            var line = "\(what) on \(other.sink) (\(named(other.stream))) under prompt \(prompt(other.promptEntry)): "
            if other.paused { line += "paused (its stream corked) all through the prompt, " }
            if let change = other.volumeChangeDb {
                line += change == 0 ? "volume untouched" : "duck depth \(formatted("%.2f", -change)) dB (volume)"
            } else if other.volumeBeforeDb != nil {
                // Its volume went to -inf dB (`--duck-mode mute`): no finite depth.
                line += "muted (volume -inf dB)"
            }
            // Rounded first, then `+ 0` (which makes -0.0 0.0): an untouched level reads
            // "0.00 dB", not "-0.00 dB". A drop to the monitor's silence is silence, not a depth.
            if let level = other.levelChangeDb {
                line += level <= -Self.silenceDropDb ? ", silent on the monitor"
                    : ", \(formatted("%.2f", (-level * 100).rounded() / 100 + 0)) dB on the monitor"
            }
            if other.carriedOver {
                line += ", against before prompt \(prompt(other.baselineEntry)) at \(formatted("%.2f", other.baselineTime)) s"
                    + (other.handedOver ? " (the duck began under it and was handed over)"
                        : " (the duck began under it; back up for less than a second before this one)")
            }
            line += other.restored ? "; restored to exactly the volume it had" : "; NOT restored to the volume it had"
            if other.restored, let after = other.restoredAfterEntry, after != other.promptEntry {
                line += " (after prompt \(prompt(after)))"
            }
            lines.append(line)
        }
        return lines
    }
}
