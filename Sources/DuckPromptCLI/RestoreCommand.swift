import DuckPrompt
import FoundationEssentials
import Glibc

enum RestoreCommand {
    static let scanner = ArgumentScanner(valued: CommonOptions.valued, flags: ["help"], short: CommonOptions.short)

    static func run(_ args: [String]) throws -> Int32 {
        let r = try scanner.scan(args, verb: "restore")
        if r.has("help") { print(Help.restore); return 0 }
        guard r.positionals.isEmpty else { throw UsageError("restore takes no arguments, got '\(r.positionals[0])'") }
        let server = try CommonOptions.server(r)
        let report = try DuckPrompt.restore(server: server)
        if report.notes.isEmpty, report.problems.isEmpty { print("nothing to restore: no prompt died while ducking") }
        for note in report.notes { print(note) }
        // A file that is not a journal it can use (forged, garbled, a link): named, and 65.
        for problem in report.problems { DuckPromptCLI.printError("journal \(problem)") }
        guard report.kept.isEmpty else {
            DuckPromptCLI.printError("could not restore \(report.kept.count) journal\(report.kept.count == 1 ? "" : "s") "
                + "(kept: \(report.kept.joined(separator: ", "))); run `duckprompt restore` again once the server answers")
            return DuckPromptError(.unavailable, "").exitCode
        }
        return report.problems.isEmpty ? 0 : DuckPromptError(.unsupportedData, "").exitCode
    }
}
