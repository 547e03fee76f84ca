import DuckPromptTestSupport
import Foundation
import Testing
@testable import DuckPromptCLI

// The man pages against their sources: the committed files in share/man are what
// Scripts/make-man makes of the current --help texts and Docs/config.md; every option each
// --help lists is in duckprompt(1), under its subcommand; man itself reads both pages without a
// warning. Then the reading of a help text (HelpText) and roff's escapes, by tables.

/// The checkout: three levels above this file.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()

func repositoryFile(_ path: String) throws -> String {
    try String(contentsOf: repositoryRoot.appendingPathComponent(path), encoding: .utf8)
}

/// Runs `arguments` (found on PATH) with `input` on standard input, in `environment` (this
/// process's when nil), through the shared runner; its status, stdout, stderr.
func runTool(_ arguments: [String], input: String = "", environment: [String: String]? = nil) throws -> ProcessResult {
    try run(arguments, environment: environment ?? [:], inheritEnvironment: environment == nil,
            input: .text(input), check: false)
}

/// The options a help text's entries name, read with a pattern of their own (not HelpText):
/// every `-x` and `--word` in the first 24 columns of a line indented by 2.
func helpOptions(_ help: String) -> Set<String> {
    var options = Set<String>()
    for line in help.split(separator: "\n") where line.hasPrefix("  ") && !line.hasPrefix("   ") {
        let term = line.prefix(25)
        for match in term.matches(of: /(?:^|[ ,])(--?[A-Za-z][A-Za-z0-9-]*)/) {
            options.insert(String(match.output.1))
        }
    }
    return options
}

/// A man page's text with roff's escapes for a minus sign undone.
func unescapedMinus(_ roff: String) -> String { roff.replacingOccurrences(of: "\\-", with: "-") }

@Suite("man pages")
struct ManPageTests {
    @Test("share/man/man1/duckprompt.1 is what ManPage makes of the --help texts (else run Scripts/make-man)")
    func duckpromptPageIsCurrent() throws {
        let committed = try repositoryFile("share/man/man1/duckprompt.1")
        #expect(committed == ManPage.duckprompt(), "share/man/man1/duckprompt.1 is stale: run Scripts/make-man")
    }

    @Test("share/man/man5/duckprompt-config.5 is go-md2man's page of Docs/config.md (else run Scripts/make-man)")
    func configPageIsCurrent() throws {
        let markdown = ManPage.configMarkdown(try repositoryFile("Docs/config.md"))
        let made = try runTool(["go-md2man"], input: markdown)
        try #require(made.status == 0, "go-md2man (apt-get install go-md2man): \(made.stderr)")
        let committed = try repositoryFile("share/man/man5/duckprompt-config.5")
        #expect(committed == made.stdout, "share/man/man5/duckprompt-config.5 is stale: run Scripts/make-man")
        #expect(committed.contains("DUCKPROMPT\\-CONFIG") || committed.contains("DUCKPROMPT-CONFIG"))
        for key in ["prefer", "ranking", "never", "pre_roll_ms", "duck_db", "attack_ms", "release_ms", "players", "rewind_ms"] {
            #expect(committed.contains(key), "config(5) lacks \(key)")
        }
    }

    @Test("every option of every --help is in duckprompt(1), under its subcommand or the common options",
          arguments: Help.subcommands.map(\.name))
    func everyOptionIsInThePage(verb: String) throws {
        let help = try #require(Help.subcommands.first { $0.name == verb }?.text)
        let page = unescapedMinus(ManPage.duckprompt())
        let section = try #require(page.components(separatedBy: "\n.SS \(verb)\n").dropFirst().first?
            .components(separatedBy: "\n.S").first, "no .SS \(verb) in the page")
        let common = try #require(page.components(separatedBy: "\n.SH \"COMMON OPTIONS\"\n").dropFirst().first?
            .components(separatedBy: "\n.SH").first)
        let options = helpOptions(help)
        #expect(options.contains("--help"), "the pattern read no option of \(verb)'s help")
        for option in options {
            let pattern = "\\fB\(option)\\fR"
            #expect(section.contains(pattern) || common.contains(pattern), "\(option) of \(verb) is not in duckprompt(1)")
        }
        // Documenting an option --help does not list is drift the other way.
        for match in section.matches(of: /\.TP\n([^\n]*)/) {
            for option in match.output.1.matches(of: /\\fB(--?[A-Za-z][A-Za-z0-9-]*)\\fR/) {
                #expect(options.contains(String(option.output.1)), "\(option.output.1) is in the page under \(verb) but not in its --help")
            }
        }
    }

    @Test("the top-level options, exit codes, files and environment of duckprompt --help are in the page")
    func mainHelpIsInThePage() throws {
        let page = unescapedMinus(ManPage.duckprompt())
        for option in helpOptions(Help.main) { #expect(page.contains("\\fB\(option)\\fR"), "\(option)") }
        for code in ["0", "64", "65", "66", "69", "70", "75", "78", "128+N"] {
            #expect(page.contains(".TP\n\\fB\(code)\\fR\n"), "exit code \(code)")
        }
        for name in ["PULSE_SERVER", "PULSE_SINK", "DUCKPROMPT_DEVICE", "DUCKPROMPT_DEBUG", "DBUS_SESSION_BUS_ADDRESS",
                     "$XDG_CONFIG_HOME/duckprompt/config.json", "$XDG_RUNTIME_DIR/duckprompt/"] {
            #expect(page.contains(".TP\n\\fB\(name)\\fR\n"), "\(name)")
        }
        for verb in Help.subcommands.map(\.name) { #expect(page.contains("\n.SS \(verb)\n"), "\(verb)") }
        #expect(page.hasPrefix(".TH DUCKPROMPT 1 \"\" \"duckprompt \(DuckPromptCLI.version)\""))
        #expect(page.unicodeScalars.allSatisfy { $0.isASCII })
    }

    @Test("Docs/cli.md shows each --help as printed", arguments: [("", Help.main)] + Help.subcommands.map { (" " + $0.name, $0.text) })
    func cliReferenceIsCurrent(verb: String, help: String) throws {
        let doc = try repositoryFile("Docs/cli.md")
        let section = try #require(doc.components(separatedBy: "## duckprompt\(verb)").dropFirst().first)
        let block = try #require(section.components(separatedBy: "```\n").dropFirst().first)
        #expect(block == help.trimmingSuffix(while: { $0 == "\n" }) + "\n", "Docs/cli.md's duckprompt\(verb) --help is stale")
    }

    @Test("man reads both pages without a warning", arguments: ["share/man/man1/duckprompt.1", "share/man/man5/duckprompt-config.5"])
    func manReadsThePage(path: String) throws {
        let file = repositoryRoot.appendingPathComponent(path).path
        // As lintian checks a page: man's warnings, formatted in UTF-8.
        let run = try runTool(["man", "--warnings", "-E", "UTF-8", "-l", "-Tutf8", "-Z", file],
                              environment: ["PATH": "/usr/bin:/bin", "MANROFFSEQ": "", "MANWIDTH": "80", "LC_ALL": "C.UTF-8"])
        #expect(run.status == 0, "man: \(run.stderr)")
        #expect(run.stderr.isEmpty, "\(path): \(run.stderr)")
        #expect(run.stdout.count > 2000)
    }
}

@Suite("help text read back")
struct HelpTextTests {
    typealias B = HelpText.Block

    @Test("blocks of a help text", arguments: [
        ("OVERVIEW: One line.\n", [B.heading("OVERVIEW"), .paragraph("One line.")]),
        ("OPTIONS:\n  -d, --device SINK       Play on SINK.\n", [.heading("OPTIONS"), .entry(term: "-d, --device SINK", description: "Play on SINK.")]),
        ("OPTIONS:\n  --duck GAIN             Lower other\n                          streams.\n",
         [.heading("OPTIONS"), .entry(term: "--duck GAIN", description: "Lower other streams.")]),
        ("FILES:\n  $XDG_RUNTIME_DIR/duckprompt/\n                          The queue.\n",
         [.heading("FILES"), .entry(term: "$XDG_RUNTIME_DIR/duckprompt/", description: "The queue.")]),
        ("OPTIONS:\n  --duck-exempt-role ROLE Never duck.\n", [.heading("OPTIONS"), .entry(term: "--duck-exempt-role ROLE", description: "Never duck.")]),
        ("OPTIONS:\n  --a                     A.\n\nProse that\ngoes on.\n\nMore.\n",
         [.heading("OPTIONS"), .entry(term: "--a", description: "A."), .paragraph("Prose that goes on."), .paragraph("More.")]),
        ("One line per sink: index, name.\n", [.paragraph("One line per sink: index, name.")]),
        ("Exit status: COMMAND's; 124 timeout.\n", [.paragraph("Exit status: COMMAND's; 124 timeout.")]),
        ("  Two  spaces in a line indented by 2 is prose.\n", [.paragraph("Two  spaces in a line indented by 2 is prose.")]),
    ] as [(String, [B])])
    func blocks(text: String, expected: [B]) {
        #expect(HelpText(text).blocks == expected)
    }

    @Test("option names of a term", arguments: [
        ("-d, --device SINK", ["-d", "--device"]),
        ("--music [SINK]", ["--music"]),
        ("lab -- COMMAND", []),
        ("--watch | --from FILE", ["--watch", "--from"]),
        ("128+N", []),
    ] as [(String, [String])])
    func optionNames(term: String, expected: [String]) {
        #expect(HelpText.optionNames(in: term) == expected)
    }

    @Test("every help text reads as headings, entries and prose only where its layout says")
    func everyHelpParses() {
        for (verb, text) in Help.subcommands + [("main", Help.main)] {
            let help = HelpText(text)
            #expect(help.blocks.first == .heading("OVERVIEW"), "\(verb)")
            guard case .paragraph(let usage)? = help.section("USAGE").first else {
                Issue.record("\(verb): no usage line"); continue
            }
            #expect(usage.hasPrefix("duckprompt "), "\(verb): \(usage)")
            #expect(Set(help.options) == helpOptions(text), "\(verb): HelpText and the plain pattern disagree")
        }
    }
}

@Suite("roff escapes")
struct RoffTests {
    @Test("text is escaped for roff", arguments: [
        ("--duck", "\\-\\-duck"),
        ("a\\b", "a\\eb"),
        ("1 … 2 µs", "1 \\[u2026] 2 \\[u00B5]s"),
        ("plain", "plain"),
    ])
    func escape(text: String, expected: String) {
        #expect(Roff.escape(text) == expected)
    }

    @Test("a line starting with a period or an apostrophe is not a request")
    func leadingPeriod() {
        var roff = Roff()
        roff.text(".config is not a macro")
        roff.text("'quoted")
        roff.macro("TP")
        #expect(roff.text == "\\&.config is not a macro\n\\&'quoted\n.TP\n")
    }

    @Test("terms: options and commands bold, placeholders italic", arguments: [
        ("-d, --device SINK", "\\fB\\-d\\fR, \\fB\\-\\-device\\fR \\fISINK\\fR"),
        ("play FILE...", "\\fBplay\\fR \\fIFILE...\\fR"),
        ("PULSE_SERVER", "\\fBPULSE_SERVER\\fR"),
    ])
    func term(term: String, expected: String) {
        #expect(Roff.term(term) == expected)
    }
}
