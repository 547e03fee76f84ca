import DuckPrompt
import FoundationEssentials

/// `duckprompt play --dry-run` and `say --dry-run` (Docs/cli.md, "Dry run"): what the prompt
/// would do now, without queueing, ducking or playing anything — its sink, pre-roll, attack,
/// the device's latency, its length and the time to its first sample (`PromptEstimate`), one
/// sentence (`EstimateSummary`) or, with `--json`, one JSON object of `PromptEstimate.keys`.
///
/// The audio is opened and checked (a text synthesized and counted) as the real command opens
/// it, so bad input gets the same message and status. Where the real command would hand its
/// prompt to a running `duckprompt serve` (`ServiceHandoff`), the service's `Estimate` or
/// `EstimateSay` answers, so the figures are the path's that would play it; otherwise the
/// command estimates it on its own connection, its `start-us` its own age (`ProcessAge`).
/// A prompt `--during-call drop` would drop, or `defer` would hold, is an answer too: exit 0.
enum DryRun {
    /// Prints the estimate and returns the exit status (0), or throws what the real command
    /// would for bad input (`UsageError`, `DuckPromptError`: 64, 65, 66, 69).
    static func run(_ lookup: ServiceHandoff.Lookup?, given: [(name: String, value: String?)], files: [String],
                    texts: [String], options: PlayOptions, server: ServerOptions, json: Bool,
                    cancellation: PlayCancellation) throws -> Int32 {
        try options.validate()
        // The texts' length and the files first, as the prompt checks them; the texts are
        // synthesized (libespeak-ng loaded) only when the command estimates them itself.
        try SpeechSource.checkLength(texts)
        let opened = try DuckPrompt.sources(files: files, say: [], voice: nil, wordsPerMinute: nil, cancellation: cancellation)
        let fields: [(key: String, value: PromptEstimate.EstimateValue)]
        switch try ServiceHandoff.estimate(lookup, given: given, texts: texts, options: options, cancellation: cancellation) {
        case .answered(let answered): fields = answered
        case .exit(let status): return status
        case .local:
            let spoken = try DuckPrompt.sources(files: [], say: texts, voice: options.voice,
                                                wordsPerMinute: options.wordsPerMinute, cancellation: cancellation)
            fields = try DuckPrompt.estimateBlocking(opened + spoken, options: options, server: server).fields
        }
        print(json ? Self.json(fields) : EstimateSummary.line(fields))
        return 0
    }

    /// One JSON object of the fields: words as strings, times as whole µs; keys sorted, as every
    /// JSON the command prints (Docs/json.md).
    static func json(_ fields: [(key: String, value: PromptEstimate.EstimateValue)]) -> String {
        Output.encode(Dictionary(fields.map { ($0.key, Field($0.value)) }, uniquingKeysWith: { _, last in last }))
    }

    /// A field's value as JSON: a string or an integer.
    struct Field: Encodable {
        let value: PromptEstimate.EstimateValue
        init(_ value: PromptEstimate.EstimateValue) { self.value = value }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch value {
            case .text(let word): try container.encode(word)
            case .micros(let us): try container.encode(us)
            }
        }
    }
}
