import CEspeakNG
import FoundationEssentials
import Glibc

/// The only caller of libespeak-ng, through `EspeakLibrary`. espeak keeps one global state
/// (voice, parameters, output buffer, callback) and is not thread-safe, so every call happens
/// under `lock` (sources made at once, and their workers, take turns chunk by chunk), and the
/// library is loaded and initialised once per process, on first use.
final class Espeak: @unchecked Sendable {
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
