import DuckPromptCLI
import Glibc
exit(await DuckPromptCLI.main(CommandLine.arguments))
