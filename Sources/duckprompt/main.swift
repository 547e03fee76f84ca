import DuckPromptCLI
import Foundation
exit(await DuckPromptCLI.main(CommandLine.arguments))
