import DuckPrompt
import DuckPromptProbe

/// The lines `duckprompt lab` prints on standard error at the end: where each prompt went and
/// how loud, how deep every other stream was ducked and whether it came back, in the words
/// Scripts/demo has used. Pure.
package enum LabSummary {
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
        for prompt in report.summary.prompts {
            let open = !prompt.openAtEnd ? "" : report.timedOut ? " (cut off by --timeout: its stream was still open)"
                : " (its stream was still open at the end)"
            if prompt.heard, let level = prompt.levelDbfs, let start = prompt.start, let end = prompt.end {
                let shared = prompt.sharedWith.isEmpty ? "" : " (mixed with \(prompt.sharedWith.map { "#\($0)" }.joined(separator: ", ")))"
                lines.append("prompt (\(named(prompt.stream))): heard on \(prompt.sink)'s monitor at "
                             + "\(formatted("%.2f", level)) dBFS RMS, \(formatted("%.2f", start)) s to \(formatted("%.2f", end)) s\(shared)\(open)")
            } else {
                lines.append("prompt (\(named(prompt.stream))): played on \(prompt.sink) but NOT heard on its monitor\(open)")
            }
        }
        for other in report.summary.others {
            let what = other.role == "lab-music" ? "music" : other.mediaRole ?? "stream"
            var line = "\(what) on \(other.sink) (\(named(other.stream))) under prompt #\(other.prompt): "
            if other.paused { line += "paused (its stream corked) all through the prompt, " }
            if let change = other.volumeChangeDb {
                line += change == 0 ? "volume untouched" : "duck depth \(formatted("%.2f", -change)) dB (volume)"
            }
            // Rounded first, then `+ 0` (which makes -0.0 0.0): an untouched level reads
            // "0.00 dB", not "-0.00 dB".
            if let level = other.levelChangeDb {
                line += ", \(formatted("%.2f", (-level * 100).rounded() / 100 + 0)) dB on the monitor"
            }
            line += other.restored ? "; restored to exactly the volume it had" : "; NOT restored to the volume it had"
            lines.append(line)
        }
        return lines
    }
}
