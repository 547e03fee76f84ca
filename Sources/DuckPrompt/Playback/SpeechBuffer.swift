import FoundationEssentials
import Glibc

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
