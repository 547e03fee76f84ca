import CPulseAudio
import FoundationEssentials

/// What a `PromptStream`'s libpulse callbacks share with it, on the loop thread or with the
/// loop lock held: the frames to pull, where the stream is, how far it has written.
final class StreamBox: @unchecked Sendable {
    let mainloop: OpaquePointer
    /// The prompt's frames; replaced when a kept stream plays the next prompt (`rearm`).
    var pull: FramePuller
    let channels: Int
    let format: StreamSampleFormat
    /// For `.s16le`: the float frames pulled before they are converted (loop thread only).
    var floats: [Float] = []
    var stream: OpaquePointer?
    var reachedEnd = false
    var drained = false
    /// The server moved the stream to another sink (`pa_stream_set_moved_callback`): its sink
    /// went away, or someone moved it. Cleared by `PromptStream.takeMovedLocked()`.
    var moved = false
    var framesWritten: Int64 = 0
    /// Playing: not corked (`start()`, or connected uncorked).
    var uncorked = false
    /// The frames of silence (pre-roll) before the prompt's own audio.
    var audioFrom: Int64 = 0
    /// Called once, on the loop thread with the lock held, when the stream is uncorked and a
    /// frame of the prompt's own audio has been handed to the server (`announceIfDue`).
    var onAudio: (() -> Void)? = nil
    /// Called once after `onAudio`, on the loop thread with the lock held, with the
    /// CLOCK_MONOTONIC µs at which the prompt's first own frame reaches the device, from the
    /// server's timing answer (`requestAudioTiming`); not called when the server cannot say.
    var onAudioTiming: ((Int64) -> Void)? = nil
    /// The frames pulled since `rearm` (interleaved floats, before any conversion) while the
    /// server has not yet been seen playing them: a kept stream that does not play hands them
    /// to the new one (`PromptStream.reopened()`). nil: not recorded.
    var replay: [Float]? = nil
    /// The next write goes to the server's read index (`PA_SEEK_RELATIVE_ON_READ`), not after
    /// the last one: set by `PromptStream.rearm`. A parked stream ran past its last frame (the
    /// server kept reading the drained stream until the cork: on PipeWire 256 frames), so its
    /// write index lies behind its read index, and a write there would lose the next prompt's
    /// first frames.
    var writeAtReadIndex = false
    /// The server's read index of the stream once it was parked, in bytes (`park()`); nil
    /// until the server said, or when it could not.
    var parkedReadIndex: Int64? = nil
    /// The read and write indexes of the last timing answer (`PromptStream.indexesLocked()`),
    /// in bytes; nil when the server could not say.
    var lastReadIndex: Int64? = nil
    var lastWriteIndex: Int64? = nil

    /// Calls `onAudio` (once) when the stream plays and has been handed its first frame past
    /// `audioFrom`. Lock held.
    func announceIfDue() {
        guard uncorked, framesWritten > audioFrom, let call = onAudio else { return }
        onAudio = nil
        call()
        if onAudioTiming != nil { requestAudioTiming() }
    }

    /// Asks the server where the stream stands and hands `onAudioTiming` the instant its
    /// frame `audioFrom` (of this prompt's frames) reaches the device (`StreamClock`): its byte
    /// is the answer's write index less the frames written since it. Lock held.
    /// libpulse: `pa_stream_update_timing_info`, `pa_stream_get_timing_info`,
    /// `pa_stream_get_sample_spec`, `pa_bytes_per_second`.
    private func requestAudioTiming() {
        guard let stream else { return }
        // Cancelled when the prompt lets its stream go first (cancelled, the service stopping).
        keep(libpulse.pa_stream_update_timing_info(stream, { stream, success, userdata in
            let box = Unmanaged<StreamBox>.fromOpaque(userdata!).takeUnretainedValue()
            guard let told = box.onAudioTiming else { return }
            box.onAudioTiming = nil
            guard success != 0, let stream, let info = libpulse.pa_stream_get_timing_info(stream)?.pointee,
                  info.write_index_corrupt == 0, let spec = libpulse.pa_stream_get_sample_spec(stream) else { return }
            let (realNow, monotonicNow) = (realtimeNanoseconds(), monotonicNanoseconds())
            let frameBytes = Int64(libpulse.pa_frame_size(spec))
            let first = info.write_index - (box.framesWritten - box.audioFrom) * frameBytes
            let stamp = StreamClock.monotonicUs(
                ofRealtimeUs: microseconds(of: info.timestamp),
                realNowUs: Int64(realNow / 1000), monotonicNowUs: Int64(monotonicNow / 1000))
            if let at = StreamClock.deviceTimeUs(ofByte: first, readIndex: info.read_index_corrupt == 0 ? info.read_index : nil,
                                                 sinkUs: info.sink_usec, bytesPerSecond: Int(libpulse.pa_bytes_per_second(spec)),
                                                 stampMonotonicUs: stamp) {
                told(at)
            }
        }, Unmanaged.passUnretained(self).toOpaque()))
    }

    /// The operations sent with this box as their userdata and not yet answered (each with a
    /// reference of ours). Lock held.
    private var operations: [OpaquePointer] = []

    /// Keeps `op` (a reference of the caller's, now this box's) until it is answered or
    /// `cancelOperations()`; drops those answered meanwhile. Lock held.
    func keep(_ op: OpaquePointer?) {
        operations.removeAll { old in
            guard libpulse.pa_operation_get_state(old) != PA_OPERATION_RUNNING else { return false }
            libpulse.pa_operation_unref(old)
            return true
        }
        if let op { operations.append(op) }
    }

    /// Cancels every operation not yet answered, so that none of their callbacks reaches this
    /// box once its stream is let go (`PromptStream.close()`). Lock held.
    /// libpulse: `pa_operation_cancel`, `pa_operation_unref`.
    func cancelOperations() {
        for op in operations { PulseConnection.endOperation(op) }
        operations.removeAll()
    }

    init(mainloop: OpaquePointer, channels: Int, format: StreamSampleFormat, pull: @escaping FramePuller) {
        self.mainloop = mainloop
        self.channels = channels
        self.format = format
        self.pull = pull
    }
}
