/// The man pages: `duckprompt(1)` rendered in roff from the `--help` texts themselves (read back
/// by HelpText), and the markdown of `duckprompt-config(5)`, which go-md2man turns into roff from
/// Docs/config.md. `Scripts/make-man` writes both into share/man; a test fails when the files
/// there are not what these functions make of the current texts.
public enum ManPage {
    /// duckprompt(1) in roff (man(7) macros), ASCII only: every subcommand with its arguments
    /// and options, the common options, exit status, files and environment, as `--help` has them.
    public static func duckprompt(version: String = DuckPromptCLI.version) -> String {
        let main = HelpText(Help.main)
        let common = HelpText(Help.common).blocks
        var out = Roff()
        out.macro("TH", "DUCKPROMPT", "1", "", "duckprompt \(version)", "User Commands")
        out.macro("SH", "NAME")
        out.text("duckprompt - \(name(main))")

        out.macro("SH", "SYNOPSIS")
        out.macro("nf")
        for (_, text) in Help.subcommands {
            guard case .paragraph(let usage)? = HelpText(text).section("USAGE").first else { continue }
            out.line(Roff.usage(usage))
        }
        out.line("\\fBduckprompt\\fR " + Roff.escape("--version | --help"))
        out.macro("fi")

        out.macro("SH", "DESCRIPTION")
        out.blocks(main.section("OVERVIEW"))
        out.blocks(main.section("SUBCOMMANDS"))

        out.macro("SH", "OPTIONS")
        out.blocks(main.section("OPTIONS"))

        out.macro("SH", "COMMON OPTIONS")
        out.text("play, say, devices, route, restore, serve and speechd-module take these too:")
        out.blocks(common)

        out.macro("SH", "SUBCOMMANDS")
        for (verb, text) in Help.subcommands {
            let help = HelpText(text)
            // A subcommand that takes the common options lists them once, above.
            let takesCommon = common.allSatisfy(help.blocks.contains)
            out.macro("SS", verb)
            var heading = ""
            let own = help.blocks.filter { !(takesCommon && common.contains($0)) }
            // A heading left with nothing under it (restore's OPTIONS: the common ones alone).
            let kept = own.enumerated().filter { index, block in
                guard case .heading = block else { return true }
                guard index + 1 < own.count, case .heading = own[index + 1] else { return index + 1 < own.count }
                return false
            }.map(\.element)
            for block in kept {
                defer { if case .heading(let name) = block { heading = name } else { heading = "" } }
                switch block {
                case .heading("OVERVIEW"), .heading("USAGE"):
                    continue
                case .paragraph(let usage) where heading == "USAGE":
                    out.macro("PP")
                    out.line("Usage: " + Roff.usage(usage))
                default:
                    out.blocks([block])
                }
            }
            if takesCommon {
                out.macro("PP")
                out.text("And the common options (see COMMON OPTIONS).")
            }
        }

        for section in ["EXIT STATUS", "FILES", "ENVIRONMENT"] {
            out.macro("SH", section)
            out.blocks(main.section(section))
        }

        out.macro("SH", "SEE ALSO")
        out.line("\\fBduckprompt-config\\fR(5), \\fBpaplay\\fR(1), \\fBpactl\\fR(1), \\fBspd-say\\fR(1), "
                 + "\\fBpw-play\\fR(1), \\fBwpctl\\fR(1)")
        out.macro("PP")
        out.text("The D-Bus interface (Docs/dbus.md), the lab (Docs/lab.md) and the JSON output "
                 + "(Docs/json.md) are described in /usr/share/doc/duckprompt/.")
        return out.text
    }

    /// The markdown go-md2man makes duckprompt-config(5) of: a title block and NAME, then
    /// `config` (Docs/config.md) with its title left out and its `##` headings made sections.
    public static func configMarkdown(_ config: String, version: String = DuckPromptCLI.version) -> String {
        var lines = config.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.first?.hasPrefix("# ") == true { lines.removeFirst() }
        let body = lines.map { $0.hasPrefix("## ") ? "# " + $0.dropFirst(3).uppercased() : $0 }
        return """
        % DUCKPROMPT-CONFIG 5 "" "duckprompt \(version)" "File Formats"

        # NAME
        duckprompt-config - the configuration file of duckprompt

        # DESCRIPTION
        """ + body.joined(separator: "\n") + """

        # SEE ALSO
        **duckprompt**(1)

        """
    }

    /// "OVERVIEW: Play a voice prompt … else." → "play a voice prompt … else".
    private static func name(_ main: HelpText) -> String {
        guard case .paragraph(let overview)? = main.section("OVERVIEW").first else { return "" }
        var name = overview.hasSuffix(".") ? String(overview.dropLast()) : overview
        if let first = name.first { name = first.lowercased() + name.dropFirst() }
        return name
    }
}

/// Roff text being written: one request or text line at a time, every character escaped.
struct Roff {
    private(set) var text = ""

    /// `.NAME ARG…`, each argument quoted when it has a space or is empty.
    mutating func macro(_ name: String, _ arguments: String...) {
        let quoted = arguments.map { $0.isEmpty || $0.contains(" ") ? "\"\(Roff.escape($0))\"" : Roff.escape($0) }
        text += ([".\(name)"] + quoted).joined(separator: " ") + "\n"
    }

    /// A line of already formatted roff text (a leading `.` or `'` is escaped).
    mutating func line(_ line: String) {
        text += (line.first == "." || line.first == "'" ? "\\&" : "") + line + "\n"
    }

    /// Plain words, escaped.
    mutating func text(_ words: String) { line(Roff.escape(words)) }

    mutating func blocks(_ blocks: [HelpText.Block]) {
        for block in blocks {
            switch block {
            case .heading(let name):
                macro("PP")
                line("\\fB\(Roff.escape(name.capitalizedFirst)):\\fR")
            case .paragraph(let words):
                macro("PP")
                text(words)
            case .entry(let term, let description):
                macro("TP")
                line(Roff.term(term))
                text(description)
            }
        }
    }

    /// "duckprompt play [options] FILE..." with the command in bold.
    static func usage(_ usage: String) -> String {
        let words = usage.split(separator: " ", maxSplits: 2).map(String.init)
        return "\\fB\(escape(words.prefix(2).joined(separator: " ")))\\fR"
            + (words.count > 2 ? " " + escape(words[2]) : "")
    }

    /// An entry's term: options and subcommands in bold, placeholders (SINK, FILE...) in italics.
    static func term(_ term: String) -> String {
        term.split(separator: " ", omittingEmptySubsequences: false).enumerated().map { index, word in
            let isPlaceholder = word.first?.isUppercase == true && !word.contains(where: { $0.isLowercase })
            let font = isPlaceholder && index > 0 ? "I" : "B"
            let (core, comma) = word.hasSuffix(",") ? (word.dropLast(), ",") : (word[...], "")
            return "\\f\(font)\(escape(String(core)))\\fR\(comma)"
        }.joined(separator: " ")
    }

    /// Backslashes, minus signs (so options can be copied), and every non-ASCII character as
    /// `\[uXXXX]`.
    static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\e"
            case "-": out += "\\-"
            case _ where scalar.isASCII: out.unicodeScalars.append(scalar)
            default:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += "\\[u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]"
            }
        }
        return out
    }
}

private extension String {
    /// "EXIT STATUS" → "Exit status".
    var capitalizedFirst: String { prefix(1).uppercased() + dropFirst().lowercased() }
}
