import DuckPrompt
import FoundationEssentials
import Glibc

/// `duckprompt speechd-module`: a speech-dispatcher output module over one held `Prompter`,
/// as `duckprompt serve` is a D-Bus service over one. The protocol is
/// `SpeechdModuleProtocol`'s (DuckPromptCore): this driver reads the server's lines on standard
/// input, feeds them to it, speaks each message as one prompt of synthesized speech
/// (`Prompter.say`, libespeak-ng), writes the replies and the events (`701 BEGIN` at the
/// prompt's `started`; `702 END`, or `703 STOP` after a stop, when its audio is over: played
/// whole or faded out) to standard output, and stops a message with
/// `Prompter.cancel(_:keepingDuckFor:)`. The server sends its next message only after that
/// end or stop; the prompt keeps its duck for it (`DuckpromptKeepDuckMs`, played whole or
/// stopped), so that the music does not come up between two messages.
///
/// Every message gets the priority of the module's config file (`SpeechdModuleConfig`): the
/// protocol does not carry the SSIP priority. speech-dispatcher applies its priorities itself
/// (it stops a `text` message for an `important` one, and sends the next only after the stop);
/// the module's priority ranks its prompts against other apps' duckprompt prompts.
package final class SpeechdModule: @unchecked Sendable {
    private let prompter: Prompter
    private let config: SpeechdModuleConfig
    private let options: PlayOptions
    private let executor = ThreadExecutor()
    /// Guards the protocol's state, the maps and the writes, so that replies and events go out
    /// in the order they were made.
    private let lock = Lock()
    private var machine = SpeechdModuleProtocol()
    private var prompts: [Int: Prompter.PromptID] = [:]
    private var messages: [Prompter.PromptID: Int] = [:]
    private let events: AsyncStream<Prompter.Event>

    /// Reads the config file and connects.
    /// - Parameters:
    ///   - configPath: the file speech-dispatcher names (nil: the defaults).
    ///   - server: the sound server to connect to.
    /// - Throws: `DuckPromptError(.config)` (78) for a bad config file (or the user's
    ///   config.json), `.noInput` (66) for one that cannot be read, what `Prompter.init` throws.
    package init(configPath: String?, server: ServerOptions) throws {
        if let configPath {
            let data: Data
            do { data = try BoundedFile.read(path: configPath, limit: 64 * 1024) } catch {
                throw DuckPromptError(.noInput, "cannot read the module's config file \(configPath): \(error.reason)")
            }
            config = try SpeechdModuleConfig(parsing: String(decoding: data, as: UTF8.self), path: configPath)
        } else {
            config = SpeechdModuleConfig()
        }
        var options = PlayOptions(config: try DuckPromptConfig.load())
        options.priority = config.priority
        self.options = options
        let ended = AudioEnded()
        prompter = try Prompter(server: server, keepDuckAfterPlaying: .milliseconds(config.keepDuckMs),
                                onAudioEnded: { id in ended.tell(id) })
        // Made before the first prompt, so that no event is missed.
        events = prompter.events()
        ended.module = self
    }

    /// Answers the server's `INIT` with `399` lines saying why the module cannot start (its
    /// config file, no sound server), so that speech-dispatcher logs the reason rather than
    /// "bad syntax"; the caller then exits with the error's code.
    package static func refuse(_ message: String) {
        var reader = LineReader(fd: STDIN_FILENO)
        guard reader.next() == "INIT" else { return }
        StandardStreams.writeOutput(SpeechdModuleProtocol.initFailure(message).map { $0 + "\n" }.joined())
    }

    /// Speaks the protocol until the server says `QUIT` or closes standard input; then stops
    /// what plays (a 50 ms fade) and returns once every volume is restored.
    package func run() {
        let forwarding = executor.start { [self] in
            for await event in events { handle(event) }
        }
        lock.withLock { self.forwarding = forwarding }
        var reader = LineReader(fd: STDIN_FILENO)
        while true {
            // Read without the lock: events are written while the server is silent.
            let line = reader.next()
            let output = lock.withLock { line.map { machine.receive($0) } ?? machine.endOfInput() }
            if perform(output) { break }
        }
        finish(forwarding)
    }

    /// Stops at once (a signal, from another thread than `run`'s): what plays fades out and
    /// its duck is released; returns once every volume is restored (the caller then exits).
    package func stop() {
        if let forwarding = lock.withLock({ forwarding }) { finish(forwarding) } else { prompter.close() }
    }

    private var forwarding: Task<Void, any Error>?

    private func finish(_ forwarding: Task<Void, any Error>) {
        prompter.close()
        // The events end once the last prompt finished: its duck released.
        _ = executor.wait { try await forwarding.value }
    }

    /// Writes the output's lines and carries out its action. Returns true to quit.
    private func perform(_ output: SpeechdModuleProtocol.Output) -> Bool {
        switch output.action {
        case .speak(let message):
            DebugTrace.write("speechd-module: message \(message.number): \(message.kind.rawValue) "
                + "\(message.text.debugDescription), voice \(message.settings.espeakVoice ?? "default"), "
                + "\(message.settings.wordsPerMinute) wpm")
            // The reading thread holds no lock here: an event that comes meanwhile waits for it.
            lock.withLock {
                write(output.lines)
                speak(message)
            }
            return false
        case .stop(let number):
            DebugTrace.write("speechd-module: message \(number) stopped")
            let id = lock.withLock { () -> Prompter.PromptID? in
                write(output.lines)
                return prompts[number]
            }
            if let id { prompter.cancel(id, keepingDuckFor: .milliseconds(config.keepDuckMs)) }
            return false
        case .quit:
            lock.withLock { write(output.lines) }
            return true
        case nil:
            lock.withLock { write(output.lines) }
            return false
        }
    }

    /// Queues one message as one prompt and answers 200 or 301; under the lock.
    private func speak(_ message: SpeechdModuleProtocol.Message) {
        let text = String(message.text.unicodeScalars.prefix(SpeechSource.maxTextLength))
        guard text.contains(where: { !$0.isWhitespace }) else {
            // A sound icon, or nothing to say: accepted, and at its end at once.
            write(machine.spoken(message.number, accepted: true).lines)
            write(machine.ended(message.number).lines)
            return
        }
        let wpm = message.settings.wordsPerMinute
        var id: Prompter.PromptID?
        do {
            id = try prompter.say(text, voice: message.settings.espeakVoice, wordsPerMinute: wpm, options: options)
        } catch let error as DuckPromptError where error.code == .usage && message.settings.espeakVoice != nil {
            // A language espeak-ng has no voice for: the default voice.
            id = try? prompter.say(text, voice: nil, wordsPerMinute: wpm, options: options)
        } catch {
            StandardStreams.writeError("duckprompt speechd-module: message \(message.number) not spoken: \(error)\n")
        }
        guard let id else {
            write(machine.spoken(message.number, accepted: false).lines)
            return
        }
        prompts[message.number] = id
        messages[id] = message.number
        write(machine.spoken(message.number, accepted: true).lines)
    }

    /// A prompt's audio is over (on its thread): the message's end or stop.
    fileprivate func audioEnded(_ id: Prompter.PromptID) {
        lock.withLock {
            if let number = messages[id] { write(machine.ended(number).lines) }
        }
    }

    private func handle(_ event: Prompter.Event) {
        lock.withLock {
            switch event {
            case .queued, .timing: break
            case .started(let id, _):
                if let number = messages[id] { write(machine.began(number).lines) }
            case .finished(let id, let outcome):
                guard let number = messages.removeValue(forKey: id) else { return }
                prompts[number] = nil
                if case .failed(let error) = outcome {
                    StandardStreams.writeError("duckprompt speechd-module: message \(number): \(error.message)\n")
                }
                // Said already when its audio ended; a prompt dropped or expired in the queue
                // never played, and ends here.
                write(machine.ended(number).lines)
            }
        }
    }

    /// Writes lines to standard output, each with its newline, in one write.
    private func write(_ lines: [String]) {
        guard !lines.isEmpty else { return }
        StandardStreams.writeOutput(lines.map { $0 + "\n" }.joined())
    }
}

/// Carries the prompter's audio-ended calls to the module, which is made after the prompter.
private final class AudioEnded: @unchecked Sendable {
    private let lock = Lock()
    private weak var target: SpeechdModule?
    var module: SpeechdModule? {
        get { lock.withLock { target } }
        set { lock.withLock { target = newValue } }
    }
    func tell(_ id: Prompter.PromptID) { module?.audioEnded(id) }
}
