import Testing
@testable import DuckPromptCLI
import DuckPrompt

/// The command's own ways of running a prompt (`PlayCommand.Mode`): `--dry-run`, `--json`,
/// `--keep-awake SECONDS`, as the command reads its words; and the dry run's JSON (`DryRun.json`).
@Suite("play and say: --dry-run, --json, --keep-awake")
struct PlayModeTests {
    static func mode(_ words: [String]) -> Result<PlayCommand.Mode, UsageError> {
        Result {
            try PlayCommand.Mode(try PlayCommand.scanner.scan(words + ["x.wav"], verb: "play"))
        }.mapError { $0 as? UsageError ?? UsageError("not a usage error: \($0)") }
    }

    @Test("what each combination means, and the one-line usage errors (64) naming the option", arguments: [
        ([], PlayCommand.Mode(), nil),
        (["--dry-run"], PlayCommand.Mode(dryRun: true), nil),
        (["--dry-run", "--json"], PlayCommand.Mode(dryRun: true, json: true), nil),
        (["--json", "--dry-run"], PlayCommand.Mode(dryRun: true, json: true), nil),
        (["--keep-awake", "60"], PlayCommand.Mode(keepAwakeSeconds: 60), nil),
        (["--keep-awake=1"], PlayCommand.Mode(keepAwakeSeconds: 1), nil),
        (["--keep-awake", "3600s"], PlayCommand.Mode(keepAwakeSeconds: 3600), nil),
        (["--keep-awake", "5", "--keep-awake", "7"], PlayCommand.Mode(keepAwakeSeconds: 7), nil),
        (["--json"], nil, "--json needs --dry-run (a prompt played prints no JSON)"),
        (["--dry-run", "--keep-awake", "5"], nil, "--keep-awake does nothing with --dry-run, which plays nothing"),
        (["--keep-awake", "0"], nil, "keep-awake 0 s is out of range (1 to 3600 s)"),
        (["--keep-awake", "3601"], nil, "keep-awake 3601 s is out of range (1 to 3600 s)"),
        (["--keep-awake", "-5"], nil, "keep-awake -5 s is out of range (1 to 3600 s)"),
        (["--keep-awake", "2.5"], nil, "--keep-awake '2.5' is not a whole number of seconds (e.g. 60)"),
        (["--keep-awake", "soon"], nil, "--keep-awake 'soon' is not a whole number of seconds (e.g. 60)"),
        (["--keep-awake", ""], nil, "--keep-awake '' is not a whole number of seconds (e.g. 60)"),
    ] as [([String], PlayCommand.Mode?, String?)])
    func mode(words: [String], expected: PlayCommand.Mode?, message: String?) {
        switch Self.mode(words) {
        case .success(let mode): #expect(mode == expected && message == nil, "\(words): \(mode)")
        case .failure(let error): #expect(error.message == message && expected == nil, "\(words): \(error.message)")
        }
    }

    @Test("--dry-run --json: one object of the estimate's keys, words as strings, times as whole µs")
    func json() throws {
        let fields: [(key: String, value: PromptEstimate.EstimateValue)] = [
            ("sink", .text("bt_headset")), ("pre-roll-us", .micros(300_000)), ("first-sample-us", .micros(306_000)),
        ]
        let text = DryRun.json(fields)
        #expect(text == """
            {
              "first-sample-us" : 306000,
              "pre-roll-us" : 300000,
              "sink" : "bt_headset"
            }
            """, "\(text)")
    }
}
