/// speech-dispatcher's output-module protocol, as the module speaks it, as a state machine:
/// each line the server sends goes in (`receive`), each thing the module reports goes in
/// (`began`, `ended`, `stopped`), and the lines to write back and the one thing the driver must
/// do come out. No I/O, no clock: the driver (`duckprompt speechd-module`,
/// Sources/DuckPromptSpeechd/) reads standard input, plays, and writes what comes out, in order;
/// table tests drive it the same way (`SpeechdModuleProtocolTests`).
///
/// The protocol (speech-dispatcher 0.11, src/modules/module_main.c and module_process.c; the
/// server's side in src/server/output.c): the server starts the module with its config file as
/// the one argument, sends `INIT` (answered `299-…`, `299 OK LOADED SUCCESSFULLY`), then `AUDIO`
/// and `LOGLEVEL` blocks (`207 OK RECEIVING …`, `NAME=VALUE` lines, `.`, `203 OK …`; the
/// module refuses the server's own audio with `300`, and the server sends `AUDIO` again with its
/// output method) and `LIST VOICES`. For each message: a `SET` block (`203 OK RECEIVING SETTINGS`, …,
/// `203 OK SETTINGS RECEIVED`), then `SPEAK` (or `CHAR`, `KEY`, `SOUND_ICON`): `202 OK RECEIVING
/// MESSAGE`, the text (SSML) in lines, a line that starts with a dot sent with one more, ended by
/// a lone `.`; `200 OK SPEAKING` (or `301 ERROR CANT SPEAK`). Then the events: `701 BEGIN`,
/// `702 END`, or `703 STOP` after `STOP` (`704 PAUSE` after `PAUSE`); the server speaks its next
/// message only after the end or stop of this one (speaking.c, `is_sb_speaking`), so both are
/// reported as soon as the prompt's audio is over (played, or faded out), before its duck is
/// handed over or released. `STOP` and `PAUSE` get no reply; `QUIT`
/// gets `210 OK QUIT`. The server does not say the message's SSIP priority.
package struct SpeechdModuleProtocol: Sendable, Equatable {
    /// Something to speak.
    package struct Message: Sendable, Equatable {
        /// Counts the messages from 1: the driver's `began`/`ended` name it, so that the late
        /// end of a stopped message is told apart from the next one's.
        package var number: Int
        /// What was asked for: `SPEAK`, `CHAR`, `KEY` or `SOUND_ICON`.
        package var kind: Kind
        /// The text to say, plain (SSML's tags taken out, its entities read: `SpeechdText`);
        /// empty for a sound icon, which the module does not play.
        package var text: String
        /// The message's settings (the `SET` block before it).
        package var settings: SpeechdSettings
    }

    package enum Kind: String, Sendable, Equatable {
        case speak = "SPEAK", char = "CHAR", key = "KEY", soundIcon = "SOUND_ICON"
    }

    /// What the driver must do, besides writing the lines.
    package enum Action: Sendable, Equatable {
        /// Start speaking `message` (the module's prompter), then report `spoken(_:accepted:)`.
        case speak(Message)
        /// Stop message `number` (`Prompter.cancel(_:keepingDuckFor:)`); `703 STOP` follows
        /// when its audio is over (`ended`).
        case stop(number: Int)
        /// Exit: the server said `QUIT` (`210 OK QUIT` written), or its standard input ended.
        case quit
    }

    /// What comes out of one step: the lines to write, in order (each without its newline),
    /// and the action, if any.
    package struct Output: Sendable, Equatable {
        package var lines: [String] = []
        package var action: Action?
        package init(lines: [String] = [], action: Action? = nil) {
            self.lines = lines
            self.action = action
        }
    }

    /// Where the reader is in the server's lines.
    enum Reading: Sendable, Equatable {
        /// Before `INIT`.
        case starting
        /// A command line comes next.
        case command
        /// Inside a `SET`, `AUDIO` or `LOGLEVEL` block: its `NAME=VALUE` lines, to the lone dot.
        case block(Block, lines: [String])
        /// Inside a message's text, to the lone dot.
        case text(Kind, lines: [String])
        case quit
    }

    enum Block: String, Sendable, Equatable {
        case set = "SET", audio = "AUDIO", logLevel = "LOGLEVEL"
    }

    /// What the module is doing with the current message.
    package enum Speaking: Sendable, Equatable {
        /// No message, or its end or stop reported.
        case idle
        /// Message `number` is being spoken: `began` it (701) or not yet.
        case speaking(number: Int, begun: Bool)
        /// Message `number` was stopped (`STOP`, or `PAUSE`: `paused`) and fades out.
        case stopping(number: Int, paused: Bool)
    }

    private(set) var reading: Reading = .starting
    package private(set) var speaking: Speaking = .idle
    /// The settings the next message is spoken with: each `SET` block changes them.
    package private(set) var settings = SpeechdSettings()
    private var lastNumber = 0

    /// The greeting's first line (`299-…`): what the module says of itself.
    package let greeting: String

    package init(greeting: String = "duckprompt: speaks through duckprompt's prompter") {
        self.greeting = greeting
    }

    /// The answer to `INIT` of a module that cannot start (module_main.c): `399-MESSAGE` (one
    /// line: a newline in it becomes a space), `399 ERR CANT INIT MODULE`; the server then
    /// reports the module as not loaded.
    package static func initFailure(_ message: String) -> [String] {
        ["399-" + String(message.map { $0.isNewline ? " " : $0 }), "399 ERR CANT INIT MODULE"]
    }

    // MARK: - The server's lines

    /// Feeds one line the server sent (without its newline).
    package mutating func receive(_ line: String) -> Output {
        switch reading {
        case .starting:
            guard line == "INIT" else {
                // module_main.c exits when the first line is not INIT.
                reading = .quit
                return Output(lines: [], action: .quit)
            }
            reading = .command
            return Output(lines: ["299-\(greeting)", "299 OK LOADED SUCCESSFULLY"])
        case .command:
            return command(line)
        case .block(let block, let lines):
            guard line == "." else {
                reading = .block(block, lines: lines + [line])
                return Output()
            }
            reading = .command
            return endBlock(block, lines)
        case .text(let kind, let lines):
            guard line == "." else {
                // A line of the text that starts with a dot comes with one more (escape_dot).
                reading = .text(kind, lines: lines + [line.hasPrefix(".") ? String(line.dropFirst()) : line])
                return Output()
            }
            reading = .command
            return endText(kind, lines)
        case .quit:
            return Output()
        }
    }

    /// The server's standard input ended: the module exits (its prompt is stopped).
    package mutating func endOfInput() -> Output {
        reading = .quit
        return Output(action: .quit)
    }

    private mutating func command(_ line: String) -> Output {
        switch line {
        case "SET": reading = .block(.set, lines: []); return Output(lines: ["203 OK RECEIVING SETTINGS"])
        case "AUDIO": reading = .block(.audio, lines: []); return Output(lines: ["207 OK RECEIVING AUDIO SETTINGS"])
        case "LOGLEVEL": reading = .block(.logLevel, lines: []); return Output(lines: ["207 OK RECEIVING LOGLEVEL SETTINGS"])
        case "SPEAK", "CHAR", "KEY", "SOUND_ICON":
            reading = .text(Kind(rawValue: line) ?? .speak, lines: [])
            return Output(lines: ["202 OK RECEIVING MESSAGE"])
        case "STOP": return stop(pause: false)
        case "PAUSE": return stop(pause: true)
        case "QUIT":
            reading = .quit
            return Output(lines: ["210 OK QUIT"], action: .quit)
        default:
            if line.hasPrefix("LIST VOICES") {
                // espeak-ng's voices are taken by language (`language=`), not listed by name.
                return Output(lines: ["304 CANT LIST VOICES"])
            }
            if line.hasPrefix("DEBUG") { return debug(line) }
            return Output(lines: ["300 ERR UNKNOWN COMMAND"])
        }
    }

    private mutating func endBlock(_ block: Block, _ lines: [String]) -> Output {
        var pairs: [(String, String)] = []
        for line in lines {
            // module_process.c: NAME=VALUE, both non-empty, else 302 after the block.
            guard let eq = line.firstIndex(of: "="), eq != line.startIndex, line.index(after: eq) != line.endIndex else {
                return Output(lines: ["302 ERROR BAD SYNTAX"])
            }
            pairs.append((String(line[..<eq]), String(line[line.index(after: eq)...])))
        }
        switch block {
        case .set:
            var next = settings
            for (name, value) in pairs {
                guard next.set(name, value) else { return Output(lines: ["303 ERROR INVALID PARAMETER OR VALUE"]) }
            }
            settings = next
            return Output(lines: ["203 OK SETTINGS RECEIVED"])
        case .audio:
            // The module plays through its own prompter's stream and sends no `705 AUDIO`. The
            // server asks for its own audio first (`audio_output_method=server`): refused, as a
            // module that cannot is (module_process.c's 300), so that the server opens no
            // stream of its own for the module (output.c, `output_send_audio_settings`), and
            // sends the block again with its own method, which is accepted and not used.
            if pairs.contains(where: { $0.0 == "audio_output_method" && $0.1 == "server" }) {
                return Output(lines: ["300-duckprompt plays through its own stream, not the server's",
                                      "300 MODULE ERROR"])
            }
            return Output(lines: ["203 OK AUDIO INITIALIZED"])
        case .logLevel:
            return Output(lines: ["203 OK LOGLEVEL SET"])
        }
    }

    private mutating func endText(_ kind: Kind, _ lines: [String]) -> Output {
        let raw = lines.joined(separator: "\n")
        // module_process.c: 301 for no text; 305 for a CHAR, KEY or icon of more than one line.
        guard !raw.isEmpty else { return Output(lines: ["301 ERROR CANT SPEAK"]) }
        guard kind == .speak || lines.count == 1 else { return Output(lines: ["305 DATA MORE THAN ONE LINE"]) }
        let text: String
        switch kind {
        case .speak: text = SpeechdText.plain(fromSSML: raw)
        case .char: text = raw == "space" ? " " : SpeechdText.plain(fromSSML: raw)
        case .key: text = SpeechdText.spokenKey(raw)
        case .soundIcon: text = ""
        }
        lastNumber += 1
        let message = Message(number: lastNumber, kind: kind, text: text, settings: settings)
        speaking = .speaking(number: lastNumber, begun: false)
        // The reply (200 or 301) comes once the driver has tried: `spoken(_:accepted:)`.
        return Output(action: .speak(message))
    }

    private mutating func stop(pause: Bool) -> Output {
        guard case .speaking(let number, _) = speaking else { return Output() }
        speaking = .stopping(number: number, paused: pause)
        // Reported when the fade is over (`ended`): the server then sends the next message,
        // which takes the duck the stopped prompt keeps for it.
        return Output(action: .stop(number: number))
    }

    private func debug(_ line: String) -> Output {
        let words = line.split(separator: " ")
        switch (words.count, words.count > 1 ? String(words[1]) : "") {
        case (3, "ON"): return Output(lines: ["200 OK DEBUGGING ON"])
        case (2, "OFF"): return Output(lines: ["200 OK DEBUGGING OFF"])
        default: return Output(lines: ["302 ERROR BAD SYNTAX"])
        }
    }

    // MARK: - The driver's reports

    /// The driver tried to speak message `number`: `200 OK SPEAKING`, or `301 ERROR CANT SPEAK`
    /// (nothing will be spoken: the module is idle again). A sound icon, which the module does
    /// not play, is accepted and ends at once.
    package mutating func spoken(_ number: Int, accepted: Bool) -> Output {
        guard accepted else {
            if case .speaking(number, _) = speaking { speaking = .idle }
            return Output(lines: ["301 ERROR CANT SPEAK"])
        }
        return Output(lines: ["200 OK SPEAKING"])
    }

    /// Message `number`'s first sample went to the server: `701 BEGIN` (once; nothing for a
    /// message stopped or replaced meanwhile).
    package mutating func began(_ number: Int) -> Output {
        guard case .speaking(number, false) = speaking else { return Output() }
        speaking = .speaking(number: number, begun: true)
        return Output(lines: ["701 BEGIN"])
    }

    /// Message `number`'s audio is over: played whole (or failed, dropped or expired in
    /// duckprompt's queue): `702 END`, also for one that never began (the server waits for an
    /// end in any case); stopped: `703 STOP` (`704 PAUSE`) once it faded out. Said once: nothing
    /// for a message already ended or an older one (the driver reports both the audio's end and
    /// the prompt's).
    package mutating func ended(_ number: Int) -> Output {
        switch speaking {
        case .speaking(number, _):
            speaking = .idle
            return Output(lines: ["702 END"])
        case .stopping(number, let paused):
            speaking = .idle
            return Output(lines: [paused ? "704 PAUSE" : "703 STOP"])
        default:
            return Output()
        }
    }
}
