// Prints a man page's source for Scripts/make-man (not installed):
//   duckprompt-man 1            duckprompt(1) in roff, from the --help texts
//   duckprompt-man 5 < CONFIG   the markdown go-md2man makes duckprompt-config(5) of, from
//                               Docs/config.md on standard input
import DuckPromptCLI
import Glibc

switch CommandLine.arguments.dropFirst().first {
case "1":
    print(ManPage.duckprompt(), terminator: "")
case "5":
    var config = ""
    while let line = readLine(strippingNewline: false) { config += line }
    print(ManPage.configMarkdown(config), terminator: "")
default:
    print("usage: duckprompt-man 1 | duckprompt-man 5 < Docs/config.md")
    exit(64)
}
