// The pure decisions (DuckPromptCore) are part of the library's interface: an app that
// imports DuckPrompt sees them as its own, as NIO re-exports NIOCore.
@_exported import DuckPromptCore
import FoundationEssentials
import Glibc

/// The library's front door: everything the `duckprompt` command does is one call here.
public enum DuckPrompt {
    /// Versions of the C libraries in use: libpulse (`pa_get_library_version`) and
    /// libsndfile (`sf_version_string`).
    public static var libraryVersions: (libpulse: String, libsndfile: String) {
        (PulseConnection.libraryVersion, AudioSource.libraryVersion)
    }

    /// The sink a prompt asks for when none is named: `PULSE_SINK`, as libpulse clients honour it.
    package static func defaultRequest(environment: [String: String] = Environment.values("PULSE_SINK")) -> DeviceRequest? {
        guard let name = environment["PULSE_SINK"], !name.isEmpty else { return nil }
        return DeviceRequest(parsing: name)
    }

    /// Routes with the request, else `PULSE_SINK`, else the rules; an error about a sink named
    /// by `PULSE_SINK` says so.
    static func route(_ snapshot: Snapshot, request: DeviceRequest?, config: DuckPromptConfig) throws -> RouteDecision {
        if request == nil, let fromEnvironment = defaultRequest() {
            do {
                return try Router.route(snapshot, request: fromEnvironment, config: config)
            } catch let error as DuckPromptError {
                throw DuckPromptError(error.code, error.message + " (from $PULSE_SINK)")
            }
        }
        return try Router.route(snapshot, request: request, config: config)
    }

    /// Undoes what prompts that died mid-duck left behind (their journals under
    /// `$XDG_RUNTIME_DIR/duckprompt/`): streams still at a level their duck wrote go back to
    /// their own volume, saved volumes they left ducked are repaired, and the journals are
    /// removed. Waits while a prompt is playing (it holds the duck lock).
    ///
    /// A journal is removed only once every volume it names was confirmed restored; when its
    /// server does not answer (killed, restarting, stalled), it is kept for the next try.
    ///
    /// - Returns: one line per journal handled (empty when there was nothing to do), the
    ///   journals kept, and the files of the directory that are not journals it can use:
    ///   refused by `DuckJournal.validate()` (out of bounds: forged or damaged), garbled, of
    ///   another version, symbolic links, not regular files or too large; none of them changed
    ///   a volume.
    /// Blocks the calling thread (the command's own: no other thread is handed the work).
    /// - Throws: `.internal` when the journal directory is unsafe (a symlink, another owner).
    package static func restore(server: ServerOptions = ServerOptions()) throws -> RestoreReport {
        let store = try JournalStore()
        let lock = try RuntimeLock.acquire(in: store.runtimeDirectory, timeout: nil, cancelled: { false })
        defer { lock.release() }
        let outcome = Recovery.recoverOrphans(store: store, server: server)
        return RestoreReport(notes: outcome.notes, kept: outcome.kept, problems: outcome.problems)
    }

    /// Recovery as every command does it in passing: only when no prompt holds the lock.
    package static func recoverInPassing(server: ServerOptions) -> [String] {
        guard let store = try? JournalStore(), let lock = try? RuntimeLock.tryAcquire(in: store.runtimeDirectory) else { return [] }
        defer { lock.release() }
        return Recovery.recoverOrphans(store: store, server: server).lines
    }

    /// Lists and classifies the server's sinks and routes a prompt, without playing anything.
    ///
    /// - Throws: `DuckPromptError(.unavailable)` (69) when no server answers in time.
    /// libpulse: `pa_context_get_sink_info_list`, `pa_context_get_sink_input_info_list`,
    /// `pa_context_get_server_info`.
    public static func devices(request: DeviceRequest? = nil, config: DuckPromptConfig = DuckPromptConfig(),
                               server: ServerOptions = ServerOptions()) async throws -> DeviceListing {
        try await runBlocking(InterruptControl()) { control in
            try listDevices(request: request, config: config, server: server, control: control)
        }
    }

    /// `devices` on the calling thread, which it blocks (the command's: libpulse's mainloop
    /// thread is the one other thread involved).
    /// - Throws: as `devices`.
    package static func devicesBlocking(request: DeviceRequest? = nil, config: DuckPromptConfig = DuckPromptConfig(),
                                        server: ServerOptions = ServerOptions()) throws -> DeviceListing {
        try listDevices(request: request, config: config, server: server, control: InterruptControl())
    }

    /// `devices`' work on the calling thread; `control` interrupts it (Task cancellation).
    private static func listDevices(request: DeviceRequest?, config: DuckPromptConfig, server: ServerOptions,
                                    control: InterruptControl) throws -> DeviceListing {
        let connection = try PulseConnection(server)
        control.attach(connection)
        let notes = recoverInPassing(server: server)
        let (snapshot, info) = try connection.snapshot()
        var listing = DeviceListing(snapshot: snapshot, request: request ?? config.device ?? defaultRequest(), config: config,
                                    serverName: info.serverName, serverVersion: info.serverVersion,
                                    busCalls: BusCalls.read())
        listing.recoveryNotes = notes
        return listing
    }

    /// Reads a sink dump and classifies and routes it exactly as `devices` does live.
    ///
    /// - Parameters:
    ///   - path: a file holding `pactl list sinks`, `pacmd list-sinks`, `pactl --format=json
    ///     list sinks`, `pw-dump` or `wpctl inspect` output; `-` reads standard input.
    ///   - request: route as if this sink had been asked for.
    ///   - config: the user's routing settings (`DuckPromptConfig.load()`); default: none.
    /// - Throws: `.noInput` (66) when the file is missing or cannot be read, or is not a
    ///   regular file or a pipe (a directory, `/dev/zero`); `.unsupportedData` (65) when it is
    ///   larger than 16 MiB (`BoundedFile.dumpLimit`), in none of those formats (the message
    ///   lists them), or holds no sink with a name.
    /// A `pw-dump` or a full `pactl --format=json list` also carries the streams, so a filter
    /// such as EasyEffects is seen forwarding to its device, as live.
    package static func devices(fromDump path: String, request: DeviceRequest? = nil,
                               config: DuckPromptConfig = DuckPromptConfig()) throws -> DeviceListing {
        let data: Data
        do {
            data = path == "-"
                ? try BoundedFile.read(descriptor: STDIN_FILENO, limit: BoundedFile.dumpLimit, accept: .anything)
                : try BoundedFile.read(path: path, limit: BoundedFile.dumpLimit, accept: .regularFilesAndPipes)
        } catch {
            // Too large: no real dump is (65); missing, unreadable, not a file: 66.
            throw DuckPromptError(error.kind == .tooLarge ? .unsupportedData : .noInput,
                                  "\(path == "-" ? "standard input" : path): \(error.reason)"
                                  + (error.kind == .tooLarge ? ": no sink dump is that large" : ""))
        }
        // Text tools print no NUL byte: random bytes, a core file or UTF-16 are refused at
        // once rather than parsed line by line (16 MiB of random bytes took 17 s).
        guard !data.contains(0) else {
            throw DuckPromptError(.unsupportedData, "\(path == "-" ? "standard input" : path): is not a sink dump "
                                  + "(it holds NUL bytes, so it is not text): " + SinkDumpReader.formatsRead)
        }
        let text = String(decoding: data, as: UTF8.self)
        do {
            return DeviceListing(snapshot: try SinkDumpReader.readSnapshot(text), request: request, config: config)
        } catch let error as DuckPromptError {
            throw DuckPromptError(error.code, "\(path == "-" ? "standard input" : path): \(error.message)")
        }
    }

    /// Plays one prompt: routes it, ducks every other stream, plays it whole, restores. Through
    /// a `Prompter` held for this one prompt: the same implementation an app's prompter uses.
    ///
    /// Order: the file was already validated by `AudioSource`; start connecting; enter the
    /// `PromptQueue` and wait for this prompt's turn (the handshake goes on meanwhile); read
    /// sinks and sink-inputs; route; connect the prompt stream corked while the duck ramps down over
    /// `attackMs`; uncork; wait until the last sample was played (`pa_stream_drain`); ramp
    /// back over `releaseMs`, the last step setting every original `pa_cvolume` exactly.
    ///
    /// Cancelling the calling Task (the CLI does so on SIGINT, SIGTERM, SIGHUP) stops the
    /// prompt, ramps every ducked stream back, and then throws `CancellationError`.
    /// - Throws: `DuckPromptError` `.usage` (64: no source, or an option out of range, see
    ///   `PlayOptions.validate()`, thrown before the server is contacted), `.unavailable` (69:
    ///   no server, no sink of the requested name, no usable sink, stream refused),
    ///   `CancellationError`.
    public static func play(_ sources: [any PromptSource], options: PlayOptions = PlayOptions(),
                            server: ServerOptions = ServerOptions()) async throws -> PlayReport {
        try options.validate()
        return try await play(validated: sources, options: options, server: server)
    }

    /// `play(_:options:server:)` once `options.validate()` passed: each public entry validates
    /// once, before it opens anything.
    private static func play(validated sources: [any PromptSource], options: PlayOptions,
                             server: ServerOptions) async throws -> PlayReport {
        guard !sources.isEmpty else { throw DuckPromptError(.usage, "nothing to play: a prompt needs a file or a text") }
        let box = SourceList(sources)
        // The handshake (a few round trips) runs on libpulse's thread while this prompt enters
        // the queue; nothing is asked of the server before its turn.
        let connection = try PulseConnection(server, waitingUntilReady: false)
        return try await runBlocking(InterruptControl()) { control in
            try Prompter(server: server, connection: connection).runHere(box.sources, options: options, control: control)
        }
    }

    /// `play(_:options:server:)` on the calling thread, for a caller that may block it (a
    /// command-line tool): no Swift concurrency is involved. An async `main` that awaits a
    /// `Task` costs about 2.4 ms more of a process's life than a synchronous one (measured with
    /// `perf stat` on static Swift 6.3 binaries: 4.5 against 2.1 ms), which is most of what a
    /// 50 ms prompt's start latency has over paplay's.
    ///
    /// - Parameter cancellation: `cancel()` it from another thread (a signal-handling thread,
    ///   a UI thread) to stop the prompt as cancelling `play`'s Task would: every ducked
    ///   stream is ramped back, then this throws `CancellationError`, and
    ///   `cancellation.report` tells what the prompt had done.
    /// - Throws: what `play(_:options:server:)` throws.
    package static func playBlocking(_ sources: [any PromptSource], options: PlayOptions = PlayOptions(),
                                    server: ServerOptions = ServerOptions(),
                                    cancellation: PlayCancellation = PlayCancellation()) throws -> PlayReport {
        try options.validate()
        return try playBlocking(validated: sources, options: options, server: server, cancellation: cancellation)
    }

    /// `playBlocking(_:options:server:cancellation:)` once `options.validate()` passed.
    private static func playBlocking(validated sources: [any PromptSource], options: PlayOptions, server: ServerOptions,
                                     cancellation: PlayCancellation) throws -> PlayReport {
        guard !sources.isEmpty else { throw DuckPromptError(.usage, "nothing to play: a prompt needs a file or a text") }
        let connection = try PulseConnection(server, waitingUntilReady: false)
        return try Prompter(server: server, connection: connection)
            .runHere(sources, options: options, control: cancellation.control)
    }

    /// `play(files:say:voice:wordsPerMinute:options:server:)` on the calling thread: see
    /// `playBlocking(_:options:server:cancellation:)`. `cancellation` also stops the wait for
    /// standard input or a FIFO to end (`AudioSource.init(path:cancellation:)`), before
    /// anything is ducked.
    /// - Throws: what `play(files:say:…)` throws; `CancellationError` when cancelled.
    package static func playBlocking(files paths: [String], say texts: [String] = [], voice: String? = nil,
                                    wordsPerMinute: Int? = nil, options: PlayOptions = PlayOptions(),
                                    server: ServerOptions = ServerOptions(),
                                    cancellation: PlayCancellation = PlayCancellation()) throws -> PlayReport {
        try options.validate()
        return try playBlocking(validated: sources(files: paths, say: texts, voice: voice ?? options.voice,
                                                   wordsPerMinute: wordsPerMinute ?? options.wordsPerMinute,
                                                   cancellation: cancellation),
                                options: options, server: server, cancellation: cancellation)
    }

    /// The text on standard input, read to its end (`duckprompt say -`): see
    /// `WaitingInput.readText`; at most `SpeechSource.maxTextLength` code points.
    /// `cancellation` stops the wait (a signal), before anything is ducked.
    /// - Throws: `.usage` (64) for too long a text, `.unsupportedData` (65) when it is not
    ///   UTF-8, `.noInput` (66) when it cannot be read, `CancellationError` when cancelled.
    package static func standardInputText(cancellation: PlayCancellation) throws -> String {
        try WaitingInput.readText(STDIN_FILENO, label: "standard input", wake: cancellation.control.cancelDescriptor(),
                                  maxCodePoints: SpeechSource.maxTextLength)
    }

    /// Opens every path with libsndfile (see `AudioSource.init(path:)`; `-` is standard input),
    /// then plays them as one prompt under one duck: consecutive files of the same rate and
    /// channel count back to back without a gap, others one after another. A file that cannot
    /// be played throws before any server is contacted, so it never changes a volume. Files
    /// are opened on a thread of its own: cancelling the Task stops a wait for standard input
    /// or a FIFO.
    /// - Throws: `.noInput` (66), `.unsupportedData` (65), and what `play` throws
    ///   (`CancellationError`).
    public static func play(files paths: [String], options: PlayOptions = PlayOptions(),
                            server: ServerOptions = ServerOptions()) async throws -> PlayReport {
        try options.validate()
        return try await play(validated: try await openedSources(files: paths, say: []), options: options, server: server)
    }

    /// Speaks texts with libespeak-ng (see `SpeechSource`) after the files, as one prompt:
    /// `duckprompt say "Turn left"`, `duckprompt play chime.wav --say "Turn left"`.
    /// - Parameters:
    ///   - files: audio files first (may be empty); `texts`: then these, spoken.
    ///   - voice: an espeak-ng voice (`en`, `en-us`, `de` …); nil for `options.voice`, else
    ///     espeak's default.
    ///   - wordsPerMinute: 80…450; nil for `options.wordsPerMinute`, else 175.
    /// - Throws: `.usage` for empty text, text over `SpeechSource.maxTextLength` code points
    ///   (all texts together), an unknown voice or rate; what `play(files:)` throws.
    public static func play(files paths: [String], say texts: [String], voice: String? = nil,
                            wordsPerMinute: Int? = nil, options: PlayOptions = PlayOptions(),
                            server: ServerOptions = ServerOptions()) async throws -> PlayReport {
        try options.validate()
        return try await play(validated: try await openedSources(files: paths, say: texts, voice: voice ?? options.voice,
                                                                 wordsPerMinute: wordsPerMinute ?? options.wordsPerMinute),
                              options: options, server: server)
    }

    /// `sources(files:say:…)` on a thread of its own (`runBlocking`), not Swift's cooperative
    /// pool: reading standard input or a FIFO may wait for ever, and cancelling the calling
    /// Task stops that wait (`CancellationError`).
    private static func openedSources(files paths: [String], say texts: [String], voice: String? = nil,
                                      wordsPerMinute: Int? = nil) async throws -> [any PromptSource] {
        let cancellation = PlayCancellation()
        return try await runBlocking(cancellation.control) { _ in
            try sources(files: paths, say: texts, voice: voice, wordsPerMinute: wordsPerMinute, cancellation: cancellation)
        }
    }

    /// The files, opened, then the texts, to be spoken.
    /// - Throws: what `AudioSource` and `SpeechSource` throw; `limit: .duration` when the
    ///   files last longer than `PromptLimits.maxDuration` together.
    package static func sources(files paths: [String], say texts: [String], voice: String?,
                                wordsPerMinute: Int?, cancellation: PlayCancellation? = nil) throws -> [any PromptSource] {
        // All the texts of one prompt together: first, before a file is opened or espeak loaded.
        try SpeechSource.checkLength(texts)
        let files: [any PromptSource] = try paths.map { try AudioSource(path: $0, cancellation: cancellation) }
        // The service's limit too: a prompt holds the queue, and every other stream ducked.
        try PromptLimits.checkDuration(files.map(\.duration))
        return try files + texts.map { try SpeechSource(text: $0, voice: voice, wordsPerMinute: wordsPerMinute) as any PromptSource }
    }

    /// One file: `play(files: [path])`.
    public static func play(file path: String, options: PlayOptions = PlayOptions(),
                            server: ServerOptions = ServerOptions()) async throws -> PlayReport {
        try await play(files: [path], options: options, server: server)
    }
}
