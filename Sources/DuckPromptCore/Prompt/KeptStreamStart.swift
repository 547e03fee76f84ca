/// Whether the stream a held prompter kept ready (`ReadyStreamKeeper`) really plays once it
/// was uncorked for the next prompt, told from the server's read index of the stream
/// (`pa_timing_info.read_index`: the bytes the server has taken from the stream's buffer),
/// asked again and again after the uncork, against the one it said once the stream was
/// parked (corked, its last prompt drained: it does not move while corked).
///
/// Why: PipeWire 0.3.65's pipewire-pulse, under load, at times never runs a kept stream again
/// after a cork and an uncork some ms apart: the stream shows uncorked, takes no byte, asks for
/// none, and never acknowledges its drain. Seen in `duckprompt lab` (1 run in 8 of 6 prompts
/// from `serve` under build load; 1 in 10 runs of 24 short prompts under 2 busy loops): the
/// prompt on it was silence until the hold's deadline failed it. A stream that takes nothing
/// within `limit` is given up, and the prompt is played again from its start on a new stream.
/// Pure: no server.
package enum KeptStreamStart {
    package enum Verdict: Equatable, Sendable {
        /// The server has taken bytes since the uncork.
        case playing
        /// Nothing taken yet; ask again.
        case waiting
        /// Nothing taken within `limit`: the stream does not play.
        case stuck
    }

    /// How long a kept stream may take nothing after its uncork, in ms. A stream that plays takes
    /// its first bytes within one or two server cycles (10 ms each with duckprompt's buffer):
    /// measured in `duckprompt lab` with `serve` and 24 short prompts a run, on PipeWire under
    /// 3 busy loops 298 starts in 0-65 ms (median 13), on PulseAudio 92 in 0-34 ms (median 1).
    /// 500 ms of silence is short next to the 5 s the hold's deadline took to fail the prompt.
    package static let limitMs = 500

    /// How often the read index is asked for meanwhile, in ms.
    package static let pollMs = 10

    /// The verdict after `elapsedMs` since the uncork.
    /// - Parameters:
    ///   - parkedReadIndex: the read index once the stream was parked, in bytes; nil when the
    ///     server did not say (`read_index_corrupt`): then nothing can be told, and the stream
    ///     is taken as playing (the hold's deadline still ends a prompt that never drains).
    ///   - readIndex: the read index now, in bytes; nil when the server did not say (as above).
    ///   - elapsedMs: ms since the uncork.
    package static func verdict(parkedReadIndex: Int64?, readIndex: Int64?, elapsedMs: Int,
                                limitMs: Int = limitMs) -> Verdict {
        guard let parkedReadIndex, let readIndex else { return .playing }
        if readIndex > parkedReadIndex { return .playing }
        return elapsedMs >= limitMs ? .stuck : .waiting
    }
}
