import DuckPrompt
import Foundation

/// `duckprompt-bench hold --file PATH --device SINK`, the idle prompter of figure 8 (a hidden
/// subcommand, started by `ServerBench.idleCost`): creates a `Prompter` on the default server,
/// plays one prompt to its end, so that its connection, its subscription and whatever it keeps
/// ready between prompts exist, writes `idleLine` to standard output, then does nothing until
/// its standard input ends (the parent closes it, or goes away), and closes the prompter.
///
/// It never uses Dispatch (the wait for the prompt's result runs on a `ThreadExecutor`, and
/// `main.swift` is synchronous, so no `dispatch_main`): with Dispatch's workqueue monitor, the
/// harness itself would wake every second (measured: one context switch a second on that
/// thread, none on the prompter's).
enum HoldCommand {
    /// The line written once the prompt has ended.
    static let idleLine = "idle"

    /// - Returns: the exit status: 0 after the idle wait; 69 when the prompt could not be played.
    static func run(file: String, sink: String) -> Int32 {
        let prompter: Prompter
        do {
            prompter = try Prompter(server: ServerOptions())
            let id = try prompter.play(files: [file], options: try promptOptions(sink: sink))
            _ = try ThreadExecutor().wait { try await prompter.result(of: id) }.get()
        } catch {
            FileHandle.standardError.write(Data("duckprompt-bench hold: \(error)\n".utf8))
            return 69
        }
        FileHandle.standardOutput.write(Data((idleLine + "\n").utf8))
        // Blocked in read(2): no timer of this process's own wakes it.
        var byte: UInt8 = 0
        while (try? withUnsafeMutableBytes(of: &byte) { try POSIX.read(0, into: $0) }) ?? 0 > 0 {}
        prompter.close()
        return 0
    }
}
