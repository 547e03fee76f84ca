import FoundationEssentials

/// What a prompt plays: float32 interleaved frames at one rate and channel count.
/// `AudioSource` (libsndfile) and `SpeechSource` (libespeak-ng) conform; an app may give its
/// own (a tone, a synthesizer of its own), which is sent as float32.
public protocol PromptSource: AnyObject, Sendable {
    /// A name for messages and `media.name`: the file name, `standard input`, the text.
    var name: String { get }
    /// Sample rate in Hz.
    var rate: Int { get }
    /// Channel count; channel order WAVEEX (FL FR FC LFE BL BR …).
    var channels: Int { get }
    /// Length in seconds, as far as known (headers of compressed formats may be approximate).
    var duration: Double { get }
    /// Reads up to `frames` frames into `buffer`; returns how many; 0 at the end.
    func read(into buffer: UnsafeMutablePointer<Float>, frames: Int) -> Int
}

/// What the library's own sources (`AudioSource`, `SpeechSource`, `FileAtTurn`,
/// `PromptSequence`, `SilencePrefixed`) tell a prompt besides their frames.
package protocol LibrarySource: PromptSource {
    /// The sample format the prompt's stream is sent in.
    var streamFormat: StreamSampleFormat { get }
    /// Called on the prompt's thread when its turn has come, before it is routed and anything
    /// is ducked: a source that holds nothing while it waits (`FileAtTurn`) opens its input.
    /// - Throws: why the input can no longer be read; the prompt then fails, no volume touched.
    func openForTurn() throws
}

extension LibrarySource {
    package func openForTurn() throws {}
}

extension PromptSource {
    /// The sample format of this source's stream: a library source's own, `.float32le` for any
    /// other.
    package var sampleFormat: StreamSampleFormat { (self as? any LibrarySource)?.streamFormat ?? .float32le }

    /// `LibrarySource.openForTurn()` for a library source; nothing for any other.
    package func openIfLibrarySource() throws { try (self as? any LibrarySource)?.openForTurn() }
}

/// The sample format of a prompt's stream (`pa_sample_spec.format`).
///
/// PipeWire 0.3.65 creates an s16 stream about 2.5 ms sooner than a float32 one (a libpulse
/// client, creation to `PA_STREAM_READY`, 10 runs each: 6.1 against 8.5 ms), so sources whose
/// samples are 16-bit integers are sent as such.
package enum StreamSampleFormat: Sendable, Equatable {
    /// `PA_SAMPLE_S16LE`, for 8- and 16-bit integer sources (PCM, µ-law, A-law, speech): their
    /// float samples (the integer / 32768, as libsndfile normalises them) × 32768 are the
    /// integers again, so nothing is lost.
    case s16le
    /// `PA_SAMPLE_FLOAT32LE`, for everything else (24- and 32-bit PCM, float, lossy codecs).
    case float32le
}
