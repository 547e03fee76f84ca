import CEspeakNG
import FoundationEssentials
import Glibc

/// Speech synthesized from text by libespeak-ng, in memory, handed out as float32 mono frames.
///
/// The whole text is synthesized when the source is made, so every error a bad text, voice or
/// rate can cause is thrown before any server is touched, and `frames` is exact. Nothing is
/// written to disk and no audio device is opened: espeak runs in synchronous mode and its synth
/// callback appends the 16-bit samples to memory. Leading silence is trimmed, so the first
/// phoneme starts within about 1 ms of the first frame.
///
/// Reading is serialised by a lock, so the source may be passed between threads; it is meant to
/// have one reader.
public final class SpeechSource: @unchecked Sendable {
    /// The voice used when none is given: espeak-ng's default, British English.
    public static let defaultVoice = "en"
    /// The speaking rate used when none is given, in words per minute (`espeakRATE_NORMAL`).
    public static let defaultWordsPerMinute = Int(espeakRATE_NORMAL)
    /// The speaking rates espeak accepts, in words per minute
    /// (`espeakRATE_MINIMUM` … `espeakRATE_MAXIMUM`).
    public static let wordsPerMinuteRange = Int(espeakRATE_MINIMUM)...Int(espeakRATE_MAXIMUM)

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
    /// Length in frames, exact, after the leading silence is trimmed.
    public let frames: Int64

    private let samples: [Float]
    private let lock = Lock()
    private var position = 0

    /// Synthesizes `text` in memory.
    ///
    /// Blocks the calling thread while espeak synthesizes (measured: about 2 ms per second of
    /// speech on x86-64); other speech sources being made at the same time wait their turn, as
    /// libespeak-ng has one global state and is not thread-safe. The first one in the process
    /// initialises libespeak-ng, which sets the process's `LC_CTYPE` locale to `C.UTF-8`.
    ///
    /// - Parameters:
    ///   - text: UTF-8 text to speak, plain (no SSML, no `[[phonemes]]`); not empty or blank.
    ///   - voice: an espeak-ng voice, chosen as the `espeak-ng -v` option does: a voice name
    ///     (`English (America)`) or file (`en-US`, `gmw/en-US`), optionally with a variant
    ///     (`en+f3`), or else a language (`en-gb`, `fr-fr`; `de-ch` falls back to `de`);
    ///     `nil` for `defaultVoice`. `espeak-ng --voices` lists them.
    ///   - wordsPerMinute: speaking rate, 80 … 450 words per minute; `nil` for 175.
    /// - Throws: `DuckPromptError(.usage)` (64) when the text is empty, blank, holds a NUL
    ///   character or gives no audible speech, when the voice is unknown (the message lists some
    ///   that exist), or when the rate is outside 80 … 450 wpm; `.internal` (70) when
    ///   libespeak-ng cannot initialise (its data directory is missing or damaged; the message
    ///   names the path it tried) or fails to synthesize; `.unavailable` (69) when libespeak-ng
    ///   itself cannot be loaded (the message names `libespeak-ng.so.1` and the Debian package
    ///   libespeak-ng1). Each is thrown before any server is contacted.
    /// libespeak-ng, loaded on first use (`EspeakLibrary`): `espeak_ng_InitializePath`,
    /// `espeak_ng_Initialize`, `espeak_ng_InitializeOutput(ENOUTPUT_MODE_SYNCHRONOUS)`,
    /// `espeak_SetSynthCallback` (once per process), then `espeak_ng_SetVoiceByName` (or `espeak_ng_SetVoiceByProperties` with
    /// the language, and `espeak_ListVoices` for the error), `espeak_ng_SetParameter(espeakRATE)` and
    /// `espeak_ng_Synthesize(espeakCHARS_UTF8)`.
    public init(text: String, voice: String? = nil, wordsPerMinute: Int? = nil) throws {
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
        let speech = try Espeak.shared.synthesize(text: text, voice: voice, wordsPerMinute: wordsPerMinute)
        let start = Self.speechStart(speech.samples, rate: speech.rate)
        guard let start else {
            throw DuckPromptError(.usage, "\(Self.quoted(text)) gives no speech in espeak-ng voice '\(voice)'")
        }
        self.text = text
        self.voice = voice
        self.wordsPerMinute = wordsPerMinute
        rate = speech.rate
        samples = speech.samples[start...].map { Float($0) / 32768 }
        frames = Int64(samples.count)
    }

    /// Reads up to `count` frames of float32 mono samples, in -1 … 1, into `buffer`.
    /// - Returns: frames read; 0 at the end.
    public func read(into buffer: UnsafeMutablePointer<Float>, frames count: Int) -> Int {
        guard count > 0 else { return 0 }
        return lock.withLock {
            let n = min(count, samples.count - position)
            guard n > 0 else { return 0 }
            samples.withUnsafeBufferPointer { all in
                buffer.update(from: all.baseAddress! + position, count: n)
            }
            position += n
            return n
        }
    }

    /// Duration in seconds.
    public var duration: Double { Double(frames) / Double(rate) }

    /// libespeak-ng's version string, e.g. `1.51`; loads the library if no speech has yet.
    /// - Throws: `DuckPromptError(.unavailable)` (69) when libespeak-ng cannot be loaded.
    /// libespeak-ng: `espeak_Info`.
    public static var libraryVersion: String {
        get throws { try Espeak.shared.version() }
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

// MARK: - libespeak-ng

/// The only caller of libespeak-ng, through `EspeakLibrary`. espeak keeps one global state
/// (voice, parameters, output buffer, callback) and is not thread-safe, so every call happens
/// under `lock`, and the library is loaded and initialised once per process, on first use.
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

    /// Sets the voice and rate and synthesizes `text`, all under the lock.
    func synthesize(text: String, voice: String, wordsPerMinute: Int) throws -> Speech {
        try lock.withLock {
            let (library, rate) = try initialise()
            try setVoice(voice, library)
            let status = library.espeak_ng_SetParameter(espeakRATE, Int32(wordsPerMinute), 0)
            guard status == ENS_OK else {
                throw DuckPromptError(.internal, "espeak-ng refused rate \(wordsPerMinute) wpm: \(Self.message(status, library))")
            }
            let sink = Sink()
            let userData = Unmanaged.passRetained(sink).toOpaque()
            defer { Unmanaged<Sink>.fromOpaque(userData).release() }
            let synthesized = text.withCString { bytes in
                // flags: UTF-8 text; no SSML, no [[phonemes]], no end-of-sentence pause.
                library.espeak_ng_Synthesize(bytes, strlen(bytes) + 1, 0, POS_CHARACTER, 0,
                                             UInt32(espeakCHARS_UTF8), nil, userData)
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
