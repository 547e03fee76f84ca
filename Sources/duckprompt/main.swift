import DuckPromptCLI
import Glibc
exit(DuckPromptCLI.main(CommandLine.arguments))
