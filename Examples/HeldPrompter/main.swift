// An app's first use of duckprompt: hold one Prompter for the whole drive, queue prompts with
// speech-dispatcher's priorities, and read what became of each from its events.
//
//     swift run held-prompter-example [FILE]     (default: Docs/examples/turn-left.wav)
//
// A `text` plays; once it has started, a second `text` is queued (it waits: a text does not
// interrupt a text) and then a `message`, which interrupts the playing text and takes its duck
// over; the waiting text plays after the message, and the music stays down until it ends.
import DuckPrompt
import Glibc

let file = CommandLine.arguments.dropFirst().first ?? "Docs/examples/turn-left.wav"

func options(_ priority: PromptPriority) -> PlayOptions {
    var options = PlayOptions()
    options.priority = priority
    return options
}

do {
    let prompter = try Prompter()
    let events = prompter.events()   // before the first play: every event from here on
    let first = try prompter.play(files: [file], options: options(.text))
    var open: Set<Prompter.PromptID> = [first]
    for await event in events {
        switch event {
        case .queued(let id, let name):
            print("\(id) queued: \(name)")
        case .started(let id, let start):
            print("\(id) started on \(start.sink) (\(start.kind.rawValue)), pre-roll \(start.preRollMs) ms")
            if id == first {
                open.insert(try prompter.play(files: [file], options: options(.text)))
                open.insert(try prompter.play(files: [file], options: options(.message)))
            }
        case .timing(let id, let timing):
            print("\(id) heard from \(timing.firstSampleUs) µs to \(timing.endUs) µs (CLOCK_MONOTONIC)")
        case .finished(let id, let outcome):
            switch outcome {
            case .played(let report):
                let ducked = report.duckedStreams.count
                print("\(id) played \(report.framesPlayed) frames, ducked \(ducked) stream\(ducked == 1 ? "" : "s")")
            case .interrupted(let error):
                print("\(id) interrupted: \(error.message)")
            case .replaced(let error):
                print("\(id) replaced: \(error.message)")
            case .dropped(let error):
                print("\(id) dropped: \(error.message)")
            case .expired(let error):
                print("\(id) expired: \(error.message)")
            case .cancelled:
                print("\(id) cancelled")
            case .failed(let error):
                print("\(id) failed (exit \(error.exitCode)): \(error.message)")
            }
            open.remove(id)
        }
        if open.isEmpty { break }
    }
    prompter.close()
} catch let error as DuckPromptError {
    print("held-prompter-example: \(error.message)")
    exit(error.exitCode)
} catch {
    print("held-prompter-example: \(error)")
    exit(70)
}
