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
    ///   unknown (the message lists some that exist), or when the rate is outside
    ///   `PlayOptions.wordsPerMinuteRange`;
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
        // The range check of the option `rate` (PlayOptions.validate()), for an app that makes
        // a source itself.
        try PromptOption.rate.check(wordsPerMinute)
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
    /// - Throws: `DuckPromptError(.usage)` (64, `limit` `.textLength`) naming the length and the limit.
    public static func checkLength(_ texts: [String]) throws {
        var length = 0
        for text in texts { length += text.unicodeScalars.count }
        guard length > maxTextLength else { return }
        throw DuckPromptError(
            .usage,
            "the text to say is \(length) characters long; a prompt says at most \(maxTextLength) "
                + "(Unicode code points, all its texts together)", limit: .textLength)
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

extension SpeechSource: LibrarySource {
    /// espeak-ng synthesises 16-bit samples: `.s16le`.
    package var streamFormat: StreamSampleFormat { .s16le }

    /// The text in quotes (used as `media.name`), shortened to 60 characters.
    public var name: String {
        let short = text.count > 60 ? String(text.prefix(57)) + "..." : text
        return "\"\(short)\""
    }
}
