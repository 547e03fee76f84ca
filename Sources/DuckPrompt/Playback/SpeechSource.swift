import CEspeakNG
import FoundationEssentials
import Glibc

/// Speech synthesized from text by libespeak-ng, in memory, handed out as float32 mono frames.
///
/// The text is cut into chunks at sentence ends (`chunks(of:)`): a prompt of up to
/// `firstChunkLimit` code points is one chunk, synthesized whole when the source is made, as
/// one `espeak_ng_Synthesize` would. A longer text's first chunk is synthesized when the source
/// is made, and a worker thread synthesizes the others while it plays, at most `aheadSeconds`
/// of audio ahead of the reader: memory follows what is playing (a few seconds of 16-bit
/// samples), not the length of the text, and the first sample is ready after one chunk.
/// Every error a bad text, voice or rate can cause is thrown when the source is made, before
/// any server is touched. Nothing is written to disk and no audio device is opened: espeak
/// runs in synchronous mode and its synth callback appends the 16-bit samples to memory.
/// Leading silence is trimmed, so the first phoneme starts within about 1 ms of the first frame.
///
/// Reading is serialised by a lock, so the source may be passed between threads; it is meant to
/// have one reader. A read never waits on espeak: it takes what the worker has synthesized, and
/// only when the worker has fallen behind (it runs hundreds of times faster than speech) waits
/// up to `underrunWaitMs` for it, then hands out 10 ms of silence rather than block longer.
public final class SpeechSource: @unchecked Sendable {
    /// The voice used when none is given: espeak-ng's default, British English.
    public static let defaultVoice = "en"
    /// The speaking rate used when none is given, in words per minute (`espeakRATE_NORMAL`).
    public static let defaultWordsPerMinute = Int(espeakRATE_NORMAL)
    /// The speaking rates espeak accepts, in words per minute
    /// (`espeakRATE_MINIMUM` … `espeakRATE_MAXIMUM`).
    public static let wordsPerMinuteRange = Int(espeakRATE_MINIMUM)...Int(espeakRATE_MAXIMUM)
    /// The most text one prompt says, in Unicode code points (all its texts together): about
    /// five minutes of speech at 175 words per minute, far more than any prompt; longer text
    /// is a usage error (64).
    public static let maxTextLength = 5000

    /// The longest first chunk, in code points: any real prompt is one chunk; a longer text's
    /// first sentence (or clause) is ready after about 20 ms of synthesis.
    static let firstChunkLimit = 160
    /// The longest later chunk, in code points (about 15 s of speech at 175 wpm).
    static let chunkLimit = 250
    /// How far synthesis runs ahead of the reader, in seconds of audio.
    static let aheadSeconds = 5.0
    /// How long a read waits for a worker that has fallen behind, in ms.
    static let underrunWaitMs = 20
    /// An upper bound on the speech one code point gives at `defaultWordsPerMinute` or faster,
    /// in seconds, for `duration` before the whole text is synthesized: espeak-ng 1.51 speaks
    /// an unknown symbol's name or code (`𓀀` 1.7 s, `Ⅷ` 1.4 s), a digit of a long number in
    /// 0.6 s, a word's letter in about 0.07 s. Scaled up for slower rates.
    static let maxSecondsPerCodePoint = 2.0

    /// The text as given.
    public let text: String
    /// The espeak voice spoken with, as given or `defaultVoice`.
    public let voice: String
    /// The speaking rate in words per minute, as given or `defaultWordsPerMinute`.
    public let wordsPerMinute: Int
    /// Sample rate in Hz: espeak's output rate, 22050 for the voices espeak-ng ships
    /// (`espeak_ng_GetSampleRate`).
    public let rate: Int
    /// Channel count: espeak speaks mono.
    public let channels: Int = 1

    private let buffer: SpeechBuffer

    /// Synthesizes the first chunk of `text` in memory, and starts a worker thread for the rest.
    ///
    /// Blocks the calling thread while espeak synthesizes the first chunk (measured: about
    /// 2 ms per second of speech on x86-64); other speech sources being made or synthesizing at
    /// the same time wait their turn, chunk by chunk, as libespeak-ng has one global state and
    /// is not thread-safe. The first one in the process initialises libespeak-ng, which sets
    /// the process's `LC_CTYPE` locale to `C.UTF-8`.
    ///
    /// - Parameters:
    ///   - text: UTF-8 text to speak, plain (no SSML, no `[[phonemes]]`); not empty or blank;
    ///     at most `maxTextLength` (5000) Unicode code points.
    ///   - voice: an espeak-ng voice, chosen as the `espeak-ng -v` option does: a voice name
    ///     (`English (America)`) or file (`en-US`, `gmw/en-US`), optionally with a variant
    ///     (`en+f3`), or else a language (`en-gb`, `fr-fr`; `de-ch` falls back to `de`);
    ///     `nil` for `defaultVoice`. `espeak-ng --voices` lists them.
    ///   - wordsPerMinute: speaking rate, 80 … 450 words per minute; `nil` for 175.
    /// - Throws: `DuckPromptError(.usage)` (64) when the text is empty, blank, longer than
    ///   `maxTextLength`, holds a NUL character or gives no audible speech, when the voice is
    ///   unknown (the message lists some that exist), or when the rate is outside 80 … 450 wpm;
    ///   `.internal` (70) when libespeak-ng cannot initialise (its data directory is missing or
    ///   damaged; the message names the path it tried) or fails to synthesize; `.unavailable`
    ///   (69) when libespeak-ng itself cannot be loaded (the message names `libespeak-ng.so.1`
    ///   and the Debian package libespeak-ng1). Each is thrown before any server is contacted.
    ///   A later chunk that espeak fails to synthesize ends the speech there.
    /// libespeak-ng, loaded on first use (`EspeakLibrary`): `espeak_ng_InitializePath`,
    /// `espeak_ng_Initialize`, `espeak_ng_InitializeOutput(ENOUTPUT_MODE_SYNCHRONOUS)`,
    /// `espeak_SetSynthCallback` (once per process), then `espeak_ng_SetVoiceByName` (or `espeak_ng_SetVoiceByProperties` with
    /// the language, and `espeak_ListVoices` for the error), `espeak_ng_SetParameter(espeakRATE)` and
    /// `espeak_ng_Synthesize(espeakCHARS_UTF8)` per chunk (with `espeakENDPAUSE` for a chunk
    /// that ends a sentence or clause before the last).
    public init(text: String, voice: String? = nil, wordsPerMinute: Int? = nil) throws {
        try Self.checkLength([text])
        guard !text.trimmingWhitespace().isEmpty else {
            throw DuckPromptError(.usage, "nothing to say: the text is empty")
        }
        guard !text.utf8.contains(0) else {
            throw DuckPromptError(.usage, "the text to say holds a NUL character")
        }
        let wordsPerMinute = wordsPerMinute ?? Self.defaultWordsPerMinute
        guard Self.wordsPerMinuteRange.contains(wordsPerMinute) else {
            throw DuckPromptError(
                .usage,
                "speech rate \(wordsPerMinute) wpm is out of range (\(Self.wordsPerMinuteRange.lowerBound) to "
                    + "\(Self.wordsPerMinuteRange.upperBound) words per minute)")
        }
        let voice = voice ?? Self.defaultVoice
        let chunks = Self.chunks(of: text)
        // Chunks before the first speech (punctuation, white space) are silence: skipped.
        var next = 0
        var first: (samples: ArraySlice<Int16>, rate: Int)? = nil
        while next < chunks.count, first == nil {
            let speech = try Espeak.shared.synthesize(text: chunks[next].text, voice: voice, wordsPerMinute: wordsPerMinute,
                                                      endPause: chunks[next].pause)
            next += 1
            if let start = Self.speechStart(speech.samples, rate: speech.rate) {
                first = (speech.samples[start...], speech.rate)
            }
        }
        guard let first else {
            throw DuckPromptError(.usage, "\(Self.quoted(text)) gives no speech in espeak-ng voice '\(voice)'")
        }
        self.text = text
        self.voice = voice
        self.wordsPerMinute = wordsPerMinute
        rate = first.rate
        let rest = Array(chunks[next...])
        buffer = SpeechBuffer(first: Array(first.samples),
                              pendingCodePoints: rest.reduce(0) { $0 + $1.text.unicodeScalars.count })
        if !rest.isEmpty {
            Self.synthesizeAhead(rest, into: buffer, voice: voice, wordsPerMinute: wordsPerMinute,
                                 aheadFrames: Int(Self.aheadSeconds * Double(first.rate)))
        }
    }

    deinit { buffer.cancel() }

    /// Reads up to `count` frames of float32 mono samples, in -1 … 1, into `buffer`.
    /// - Returns: frames read; 0 at the end.
    public func read(into out: UnsafeMutablePointer<Float>, frames count: Int) -> Int {
        guard count > 0 else { return 0 }
        return buffer.read(into: out, frames: count, silenceFrames: rate / 100)
    }

    /// Length in frames after the leading silence is trimmed: exact once the whole text is
    /// synthesized (`isSynthesized`; at once for a text of one chunk), until then the frames
    /// synthesized plus an upper bound for the rest (`maxSecondsPerCodePoint` per code point),
    /// so a deadline made from it is never too early.
    public var frames: Int64 {
        let (synthesized, pending, complete) = buffer.progress
        guard !complete else { return synthesized }
        let perCodePoint = Self.maxSecondsPerCodePoint * max(1, Double(Self.defaultWordsPerMinute) / Double(wordsPerMinute))
        return synthesized + Int64((Double(pending) * perCodePoint * Double(rate)).rounded(.up))
    }

    /// Frames synthesized and not yet read: the memory the source holds, in frames of 2 bytes.
    var bufferedFrames: Int { buffer.unreadFrames }

    /// Whether the whole text is synthesized (then `frames` is exact).
    public var isSynthesized: Bool { buffer.progress.complete }

    /// Duration in seconds: `frames` / `rate` (exact, or an upper bound until `isSynthesized`).
    public var duration: Double { Double(frames) / Double(rate) }

    /// libespeak-ng's version string, e.g. `1.51`; loads the library if no speech has yet.
    /// - Throws: `DuckPromptError(.unavailable)` (69) when libespeak-ng cannot be loaded.
    /// libespeak-ng: `espeak_Info`.
    public static var libraryVersion: String {
        get throws { try Espeak.shared.version() }
    }

    /// Checks the length of the texts of one prompt, together, against `maxTextLength`.
    /// - Throws: `DuckPromptError(.usage)` (64) naming the length and the limit.
    public static func checkLength(_ texts: [String]) throws {
        var length = 0
        for text in texts { length += text.unicodeScalars.count }
        guard length > maxTextLength else { return }
        throw DuckPromptError(
            .usage,
            "the text to say is \(length) characters long; a prompt says at most \(maxTextLength) "
                + "(Unicode code points, all its texts together)")
    }

    /// A piece of the text synthesized in one `espeak_ng_Synthesize` call.
    struct Chunk: Equatable {
        var text: Substring
        /// It ends a sentence or clause and is not the last: espeak adds the pause it would make
        /// there in the whole text (`espeakENDPAUSE`).
        var pause: Bool
    }

    /// Cuts `text` into chunks of at most `firstLimit` code points, then `limit`: each ends
    /// after the last sentence end in reach (`.`, `!`, `?`, `;`, `:` before white space, or a
    /// line break), else after the last `, `, else before the last white space, else at the
    /// limit. A text within `firstLimit` is one chunk. The chunks together are the text.
    static func chunks(of text: String, firstLimit: Int = firstChunkLimit, limit: Int = chunkLimit) -> [Chunk] {
        let scalars = text.unicodeScalars
        var chunks: [Chunk] = []
        var start = scalars.startIndex
        var reach = firstLimit
        while start < scalars.endIndex {
            var index = start
            var count = 0
            // The best cut so far: its index and rank (3 sentence, 2 clause, 1 white space).
            var cut: (index: String.UnicodeScalarView.Index, rank: Int)? = nil
            while index < scalars.endIndex, count < reach {
                let scalar = scalars[index]
                let after = scalars.index(after: index)
                let spaceAfter = after == scalars.endIndex || scalars[after].properties.isWhitespace
                count += 1
                if scalar == "\n" || (".!?;:".unicodeScalars.contains(scalar) && spaceAfter) {
                    cut = (after, 3)
                } else if scalar == ",", spaceAfter, (cut?.rank ?? 0) <= 2 {
                    cut = (after, 2)
                } else if scalar.properties.isWhitespace, index > start, (cut?.rank ?? 0) <= 1 {
                    cut = (index, 1)
                }
                index = after
            }
            if index == scalars.endIndex {
                chunks.append(Chunk(text: Substring(scalars[start...]), pause: false))
                break
            }
            let end = cut?.index ?? index
            chunks.append(Chunk(text: Substring(scalars[start..<end]), pause: (cut?.rank ?? 0) >= 2))
            start = end
            reach = limit
        }
        return chunks
    }

    /// Starts the worker that synthesizes `chunks` into `buffer`, one at a time, each once
    /// fewer than `aheadFrames` frames wait to be read. It ends after the last chunk, after a
    /// chunk espeak fails on, or when the source goes away (`SpeechBuffer.cancel`).
    private static func synthesizeAhead(_ chunks: [Chunk], into buffer: SpeechBuffer, voice: String,
                                        wordsPerMinute: Int, aheadFrames: Int) {
        let work = ChunkList(chunks)
        startThread {
            for chunk in work.chunks {
                guard buffer.waitForRoom(aheadFrames: aheadFrames) else { break }
                guard let speech = try? Espeak.shared.synthesize(text: chunk.text, voice: voice,
                                                                 wordsPerMinute: wordsPerMinute, endPause: chunk.pause) else { break }
                buffer.append(speech.samples, codePoints: chunk.text.unicodeScalars.count)
            }
            buffer.finish()
        }
    }

    /// `text` in one `espeak_ng_Synthesize` call, leading silence included, as the source
    /// did before it cut texts into chunks (tests compare the two).
    static func synthesizeWhole(_ text: String, voice: String = defaultVoice,
                                wordsPerMinute: Int = defaultWordsPerMinute) throws -> [Int16] {
        try Espeak.shared.synthesize(text: text, voice: voice, wordsPerMinute: wordsPerMinute).samples
    }

    /// The magnitude, in 16-bit sample units, above which a sample counts as speech: -60 dBFS.
    static let speechThreshold: Int16 = 33
    /// How much of the quiet before the first speech sample is kept, in ms, so the waveform
    /// starts from near zero rather than mid-rise.
    static let leadInMs = 1

    /// The index to start playing from: `leadInMs` before the first sample louder than
    /// `speechThreshold`, or `nil` when there is none.
    static func speechStart(_ samples: [Int16], rate: Int) -> Int? {
        guard let first = samples.firstIndex(where: { $0.magnitude > speechThreshold.magnitude }) else {
            return nil
        }
        return max(0, first - rate * leadInMs / 1000)
    }

    private static func quoted(_ text: String) -> String {
        text.count <= 40 ? "'\(text)'" : "'\(text.prefix(40))…'"
    }
}

/// Carries the chunks to the worker thread (Substrings of an immutable String).
private final class ChunkList: @unchecked Sendable {
    let chunks: [SpeechSource.Chunk]
    init(_ chunks: [SpeechSource.Chunk]) { self.chunks = chunks }
}

/// The synthesized samples a `SpeechSource` has not handed out yet, shared by its reader and
/// its worker thread. Everything is guarded by `condition`'s lock, which neither side holds
/// while espeak runs.
final class SpeechBuffer: @unchecked Sendable {
    private let condition = Condition()
    /// Synthesized chunks not yet read whole, oldest first; `offset` frames of the first are read.
    private var queue: [[Int16]]
    private var offset = 0
    /// Frames in `queue` not yet read.
    private var unread: Int
    /// Frames synthesized so far, read or not.
    private var synthesized: Int64
    /// Code points of the chunks not yet synthesized.
    private var pendingCodePoints: Int
    /// No more chunks will come.
    private var finished: Bool
    /// The source went away: the worker stops.
    private var cancelled = false
    /// The last read found nothing and gave silence.
    private var underrun = false

    init(first: [Int16], pendingCodePoints: Int) {
        queue = [first]
        unread = first.count
        synthesized = Int64(first.count)
        self.pendingCodePoints = pendingCodePoints
        finished = pendingCodePoints == 0
    }

    var unreadFrames: Int { condition.withLock { unread } }

    /// Frames synthesized, code points still to synthesize, and whether synthesis is over.
    var progress: (synthesized: Int64, pending: Int, complete: Bool) {
        condition.withLock { (synthesized, pendingCodePoints, finished) }
    }

    /// Copies up to `count` frames out as floats (sample / 32768). When nothing is ready and
    /// more will come, waits up to `SpeechSource.underrunWaitMs` (once, until data comes
    /// again), then gives `silenceFrames` of silence rather than wait longer. Returns 0 only at
    /// the end.
    func read(into out: UnsafeMutablePointer<Float>, frames count: Int, silenceFrames: Int) -> Int {
        condition.withLock {
            if unread == 0, !finished {
                // Waits once per underrun: the stream asks again at once for the rest of its
                // request, which then gets silence without a wait.
                var waited = underrun ? SpeechSource.underrunWaitMs : 0
                while unread == 0, !finished, waited < SpeechSource.underrunWaitMs {
                    condition.waitLocked(milliseconds: 5)
                    waited += 5
                }
                if unread == 0, !finished {
                    underrun = true
                    let n = min(count, max(1, silenceFrames))
                    out.update(repeating: 0, count: n)
                    return n
                }
            }
            underrun = false
            var done = 0
            while done < count, unread > 0 {
                let n = queue[0].withUnsafeBufferPointer { chunk in
                    let n = min(count - done, chunk.count - offset)
                    for i in 0..<n { out[done + i] = Float(chunk[offset + i]) / 32768 }
                    return n
                }
                done += n
                offset += n
                unread -= n
                if offset == queue[0].count {
                    queue.removeFirst()
                    offset = 0
                }
            }
            if !finished { condition.broadcast() }
            return done
        }
    }

    /// Blocks the worker until fewer than `aheadFrames` frames wait to be read.
    /// - Returns: false when the source went away.
    func waitForRoom(aheadFrames: Int) -> Bool {
        condition.withLock {
            while unread >= aheadFrames, !cancelled { condition.waitLocked() }
            return !cancelled
        }
    }

    /// Adds a synthesized chunk of `codePoints` code points.
    func append(_ samples: [Int16], codePoints: Int) {
        condition.withLock {
            if !samples.isEmpty {
                queue.append(samples)
                unread += samples.count
                synthesized += Int64(samples.count)
            }
            pendingCodePoints -= codePoints
        }
        condition.broadcast()
    }

    /// No more chunks: the rest of the text, if any, is left unsaid.
    func finish() {
        condition.withLock {
            finished = true
            pendingCodePoints = 0
        }
        condition.broadcast()
    }

    /// The source went away: wakes the worker so that it stops.
    func cancel() {
        condition.withLock { cancelled = true }
        condition.broadcast()
    }
}

// MARK: - libespeak-ng

/// The only caller of libespeak-ng, through `EspeakLibrary`. espeak keeps one global state
/// (voice, parameters, output buffer, callback) and is not thread-safe, so every call happens
/// under `lock` (sources made at once, and their workers, take turns chunk by chunk), and the
/// library is loaded and initialised once per process, on first use.
private final class Espeak: @unchecked Sendable {
    static let shared = Espeak()

    private let lock = Lock()
    /// The library and its output sample rate in Hz once initialised, or why initialising
    /// failed. A failure is kept: espeak cannot be initialised twice safely.
    private var initialised: Result<(library: EspeakLibrary, rate: Int), DuckPromptError>?

    /// Samples and their rate, as espeak produced them: 16-bit mono, leading silence included.
    struct Speech {
        var rate: Int
        var samples: [Int16]
    }

    /// Where the synth callback appends samples; retained once for one `espeak_ng_Synthesize`
    /// call and released when it returns.
    private final class Sink {
        var samples: [Int16] = []
    }

    /// The voice and rate last set, skipped when the next synthesis asks for the same (espeak
    /// keeps them); nil after a failure. Guarded by the lock.
    private var current: (voice: String, wordsPerMinute: Int)?

    /// Sets the voice and rate (unless they are set already) and synthesizes `text`, all under
    /// the lock. `endPause`: add the pause espeak makes at the end of a sentence
    /// (`espeakENDPAUSE`); without it the audio ends with the last phoneme.
    func synthesize(text: some StringProtocol, voice: String, wordsPerMinute: Int, endPause: Bool = false) throws -> Speech {
        try lock.withLock {
            let (library, rate) = try initialise()
            if current?.voice != voice || current?.wordsPerMinute != wordsPerMinute {
                current = nil
                try setVoice(voice, library)
                let status = library.espeak_ng_SetParameter(espeakRATE, Int32(wordsPerMinute), 0)
                guard status == ENS_OK else {
                    throw DuckPromptError(.internal, "espeak-ng refused rate \(wordsPerMinute) wpm: \(Self.message(status, library))")
                }
                current = (voice, wordsPerMinute)
            }
            let sink = Sink()
            let userData = Unmanaged.passRetained(sink).toOpaque()
            defer { Unmanaged<Sink>.fromOpaque(userData).release() }
            // UTF-8 text; no SSML, no [[phonemes]].
            let flags = UInt32(espeakCHARS_UTF8) | (endPause ? UInt32(espeakENDPAUSE) : 0)
            let synthesized = String(text).withCString { bytes in
                library.espeak_ng_Synthesize(bytes, strlen(bytes) + 1, 0, POS_CHARACTER, 0, flags, nil, userData)
            }
            guard synthesized == ENS_OK else {
                throw DuckPromptError(.internal, "espeak-ng cannot synthesize the text: \(Self.message(synthesized, library))")
            }
            return Speech(rate: rate, samples: sink.samples)
        }
    }

    /// Loads and initialises espeak on first use. Call under the lock.
    ///
    /// Side effect of `espeak_ng_Initialize`: the process's `LC_CTYPE` becomes `C.UTF-8`
    /// (espeak needs a UTF-8 ctype locale to classify characters).
    private func initialise() throws -> (library: EspeakLibrary, rate: Int) {
        if let initialised { return try initialised.get() }
        let library = try EspeakLibrary.shared()   // a failure to load is kept there
        let result: Result<(library: EspeakLibrary, rate: Int), DuckPromptError>
        library.espeak_ng_InitializePath(nil)
        var context: espeak_ng_ERROR_CONTEXT? = nil
        let status = library.espeak_ng_Initialize(&context)
        library.espeak_ng_ClearErrorContext(&context)
        if status != ENS_OK {
            var path: UnsafePointer<CChar>? = nil
            _ = library.espeak_Info(&path)
            let tried = path.map { String(cString: $0) } ?? "(unknown)"
            result = .failure(DuckPromptError(
                .internal,
                "espeak-ng cannot initialise: \(Self.message(status, library)) (data directory \(tried); "
                    + "install espeak-ng-data, or set ESPEAK_DATA_PATH to the directory that holds espeak-ng-data)"))
        } else {
            let output = library.espeak_ng_InitializeOutput(ENOUTPUT_MODE_SYNCHRONOUS, 0, nil)
            if output != ENS_OK {
                result = .failure(DuckPromptError(.internal, "espeak-ng cannot set up in-memory output: \(Self.message(output, library))"))
            } else {
                // The synth callback: appends the samples to the `Sink` passed as user data.
                // Captures nothing; runs on the thread that called `espeak_ng_Synthesize`, under
                // the lock. A NULL buffer marks the end. Returns 0 to continue.
                library.espeak_SetSynthCallback { wav, count, events in
                    guard let wav, count > 0, let userData = events?.pointee.user_data else { return 0 }
                    let sink = Unmanaged<Sink>.fromOpaque(userData).takeUnretainedValue()
                    sink.samples.append(contentsOf: UnsafeBufferPointer(start: wav, count: Int(count)))
                    return 0
                }
                result = .success((library, Int(library.espeak_ng_GetSampleRate())))
            }
        }
        initialised = result
        return try result.get()
    }

    /// Selects `voice` as the espeak-ng command does: by name or file name first, then by
    /// language. Call under the lock, after `initialise`.
    /// libespeak-ng: `espeak_ng_SetVoiceByName`, `espeak_ng_SetVoiceByProperties`.
    private func setVoice(_ voice: String, _ library: EspeakLibrary) throws {
        guard !voice.isEmpty else { throw unknownVoice(voice, library) }
        var status = library.espeak_ng_SetVoiceByName(voice)
        if status == ENS_OK { return }
        if status == ENS_VOICE_NOT_FOUND {
            status = voice.withCString { language in
                var selector = espeak_VOICE()
                selector.languages = language
                return library.espeak_ng_SetVoiceByProperties(&selector)
            }
            if status == ENS_OK { return }
        }
        guard status == ENS_VOICE_NOT_FOUND else {
            throw DuckPromptError(.internal, "espeak-ng cannot load voice '\(voice)': \(Self.message(status, library))")
        }
        throw unknownVoice(voice, library)
    }

    /// The error for a voice espeak does not know, listing some it does. Call under the lock.
    private func unknownVoice(_ voice: String, _ library: EspeakLibrary) -> DuckPromptError {
        let languages = availableLanguages(library)
        let preferred = ["en-gb", "en-us", "de", "fr-fr", "es", "it", "nl"]
        var examples = preferred.filter(languages.contains)
        if examples.isEmpty { examples = Array(languages.prefix(8)) }
        let prefix = voice.prefix(2).lowercased()
        let similar = prefix.count == 2 ? languages.filter { $0.hasPrefix(prefix) && !examples.contains($0) } : []
        examples += similar.prefix(4)
        return DuckPromptError(
            .usage,
            "unknown espeak-ng voice '\(voice)'; try one of \(examples.joined(separator: ", ")) "
                + "(\(languages.count) voices installed; `espeak-ng --voices` lists them)")
    }

    /// The first language of every installed voice, e.g. `en-us`, in espeak's order. Call under
    /// the lock. libespeak-ng: `espeak_ListVoices(NULL)`.
    private func availableLanguages(_ library: EspeakLibrary) -> [String] {
        guard let list = library.espeak_ListVoices(nil) else { return [] }
        var languages: [String] = []
        var index = 0
        while let voice = list[index] {
            // `languages` is a priority byte, then a NUL-terminated name, repeated.
            if let pairs = voice.pointee.languages, pairs[0] != 0 {
                languages.append(String(cString: pairs + 1))
            }
            index += 1
        }
        return languages
    }

    /// The library's version string, e.g. `1.51`; loads the library but does not initialise
    /// it. libespeak-ng: `espeak_Info`.
    /// - Throws: `.unavailable` (69) when libespeak-ng cannot be loaded.
    func version() throws -> String {
        try lock.withLock {
            let library = try EspeakLibrary.shared()
            return library.espeak_Info(nil).map { String(cString: $0) } ?? ""
        }
    }

    /// espeak's own text for a status code (`espeak_ng_GetStatusCodeMessage`).
    private static func message(_ status: espeak_ng_STATUS, _ library: EspeakLibrary) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        library.espeak_ng_GetStatusCodeMessage(status, &buffer, buffer.count)
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}

extension SpeechSource: PromptSource {
    /// espeak-ng synthesises 16-bit samples: `.s16le`.
    public var streamFormat: StreamSampleFormat { .s16le }

    /// The text in quotes (used as `media.name`), shortened to 60 characters.
    public var name: String {
        let short = text.count > 60 ? String(text.prefix(57)) + "..." : text
        return "\"\(short)\""
    }
}
