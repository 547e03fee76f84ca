// duckprompt-bench: the measuring tool behind Scripts/bench (Docs/performance.md).
//
// USAGE:
//   duckprompt-bench measure --duckprompt PATH --output FILE.json [--runs N] [--figures 1,2,3,4,5,7,8,9,10,11,12,13]
//                            [--counts 1,10,100,300]
//       in a lab: `duckprompt lab --server pipewire|pulseaudio --device speaker
//       --device bluetooth-a2dp --no-listen --no-service -- …` (as Scripts/bench runs it)
//   duckprompt-bench inprocess --fixtures DIR --output FILE.json [--runs N]
//   duckprompt-bench report --output Docs/performance.md --command TEXT [--preamble TEXT] FILE.json...
//   duckprompt-bench hold --file PATH --device SINK
//       (hidden: figure 8's idle prompter, which `measure` starts; see HoldCommand.swift)
// Figures 8, 9, 11, 12 and 13 start `duckprompt serve` and call it on the lab's session bus
// (DBUS_SESSION_BUS_ADDRESS); figure 11's `duckprompt play` hands its prompt to it.
//
// Exit status: 0 whatever the figures show; 64 for a usage error; 69 when no server answers
// or a figure cannot be measured at all.
import DuckPrompt
import DuckPromptProbe
import Foundation

let usage = """
    USAGE: duckprompt-bench measure --duckprompt PATH --output FILE [--runs N] [--figures 1,2,3,4,5,7,8,9,10,11,12,13] [--counts 1,10,100,300]
           duckprompt-bench inprocess --fixtures DIR --output FILE [--runs N]
           duckprompt-bench report --output FILE --command TEXT [--preamble TEXT] FILE...
    """

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("duckprompt-bench: \(message)\n".utf8))
    if status == 64 { FileHandle.standardError.write(Data((usage + "\n").utf8)) }
    exit(status)
}

/// `--name value` options and the rest, in order.
func parse(_ args: ArraySlice<String>, valued: Set<String>) -> (options: [String: String], rest: [String]) {
    var options: [String: String] = [:], rest: [String] = []
    var i = args.startIndex
    while i < args.endIndex {
        let arg = args[i]
        if arg.hasPrefix("--") {
            let name = String(arg.dropFirst(2))
            guard valued.contains(name), i + 1 < args.endIndex else { fail("unknown option or missing value: \(arg)", status: 64) }
            options[name] = args[i + 1]
            i += 2
        } else {
            rest.append(arg)
            i += 1
        }
    }
    return (options, rest)
}

func integers(_ text: String?, default value: [Int]) -> [Int] {
    guard let text else { return value }
    let list = text.split(separator: ",").compactMap { Int($0) }
    guard !list.isEmpty, list.allSatisfy({ $0 > 0 }) else { fail("expected positive numbers separated by commas: \(text)", status: 64) }
    return list
}

func writeJSON<T: Encodable>(_ value: T, to path: String) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    try encoder.encode(value).write(to: URL(fileURLWithPath: path))
}

// No top-level `await` (async code is waited for with `waitForTask`): the figures run on the main
// thread, and `hold` runs in a process that never starts Dispatch's queues (HoldCommand.swift).
let arguments = CommandLine.arguments
guard arguments.count > 1 else { fail("missing subcommand", status: 64) }
let (options, rest) = parse(arguments.dropFirst(2), valued: ["duckprompt", "output", "runs", "figures", "counts",
                                                              "fixtures", "command", "preamble", "file", "device"])
let runs = integers(options["runs"], default: [5])[0]
if arguments[1] == "hold" {
    guard let file = options["file"], let device = options["device"], rest.isEmpty else {
        fail("hold needs --file PATH --device SINK", status: 64)
    }
    exit(HoldCommand.run(file: file, sink: device))
}
guard let outputPath = options["output"] else { fail("--output is required", status: 64) }

switch arguments[1] {
case "measure":
    guard let duckprompt = options["duckprompt"], rest.isEmpty else { fail("measure needs --duckprompt PATH", status: 64) }
    let figures = Set(integers(options["figures"], default: [1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 13]))
    let kind = ProcessInfo.processInfo.environment["DUCKPROMPT_LAB_SERVER"] ?? "unknown"
    let began = monotonicNanoseconds()
    let listing: DeviceListing
    do { listing = try waitForTask { try await DuckPrompt.devices() }.get() } catch { fail("no sound server: \(error)", status: 69) }
    do {
        let bench = try ServerBench(kind: kind, runs: runs, duckprompt: duckprompt,
                                    serverVersion: "\(listing.serverName) \(listing.serverVersion)")
        // A figure that cannot be measured is a note in the report, not the end of the others.
        func figure(_ numbers: Set<Int>, _ body: () throws -> Void) {
            guard !figures.isDisjoint(with: numbers) else { return }
            do { try body() } catch { bench.note("figure \(numbers.sorted().map(String.init).joined(separator: ", ")) "
                                                 + "could not be measured: \(error)") }
        }
        figure([1, 2]) { try bench.latency() }
        figure([3]) { try bench.wallTime() }
        figure([4]) { try bench.duckScale(counts: integers(options["counts"], default: [1, 10, 100, 300])) }
        figure([5]) { try bench.cost(rounds: max(1, (runs + 1) / 2)) }
        figure([7]) { try bench.heldPrompter() }
        figure([8]) { try bench.idleCost(seconds: ServerBench.idleSeconds) }
        figure([9]) { try bench.service() }
        figure([10]) { try bench.spokenInstructions() }
        figure([11]) { try bench.handoff() }
        figure([12]) { try bench.leadTime() }
        figure([13]) { try bench.keepAwakeCost(seconds: ServerBench.keepAwakeSeconds) }
        bench.evaluateTargets()
        bench.results.seconds = Double(monotonicNanoseconds() - began) / 1e9
        try writeJSON(bench.results, to: outputPath)
    } catch {
        fail("\(kind): \(error)", status: 69)
    }
case "inprocess":
    guard let fixtures = options["fixtures"] else { fail("inprocess needs --fixtures DIR", status: 64) }
    do {
        let results = try InProcessBench.run(fixtures: fixtures, runs: runs) {
            FileHandle.standardError.write(Data("duckprompt-bench[in-process]: \($0)\n".utf8))
        }
        try writeJSON(results, to: outputPath)
    } catch {
        fail("\(error)", status: 69)
    }
case "report":
    guard let command = options["command"], !rest.isEmpty else { fail("report needs --command and result files", status: 64) }
    var servers: [ServerResults] = [], inprocess: InProcessResults? = nil
    let decoder = JSONDecoder()
    for path in rest {
        guard let data = FileManager.default.contents(atPath: path) else { fail("cannot read \(path)", status: 66) }
        if let r = try? decoder.decode(ServerResults.self, from: data) {
            servers.append(r)
        } else if let r = try? decoder.decode(InProcessResults.self, from: data) {
            inprocess = r
        } else {
            fail("\(path) holds no bench results", status: 65)
        }
    }
    do {
        try Report.write(to: outputPath, command: command, servers: servers, inprocess: inprocess,
                         preamble: options["preamble"])
    } catch {
        fail("cannot write \(outputPath): \(error)", status: 73)
    }
default:
    fail("unknown subcommand '\(arguments[1])'", status: 64)
}
