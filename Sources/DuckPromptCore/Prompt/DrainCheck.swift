/// Whether a prompt stream whose drain the server acknowledged really took every byte written
/// to it, told from the server's indexes of the stream (`pa_timing_info`): a drain acknowledged
/// with bytes still untaken would have a prompt reported played that was not heard whole.
/// Measured at the drain's end (Prompter, Play and MultiPart suites, 26 drains each): PulseAudio
/// 16.1 reads exactly what was written (read index = write index); PipeWire 0.3.65 reads past
/// it (it reads a whole cycle at the end, e.g. 38 912 of 38 400 bytes). Never seen short.
/// Pure: no server.
package enum DrainCheck {
    /// Whether the server took every byte: its read index at or past its write index, both in
    /// bytes. When it cannot say either (`*_index_corrupt`), true: nothing can be told, and the
    /// drain's acknowledgement stands, as before this check.
    package static func tookEverything(readIndex: Int64?, writeIndex: Int64?) -> Bool {
        guard let readIndex, let writeIndex else { return true }
        return readIndex >= writeIndex
    }
}
