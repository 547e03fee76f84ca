import Foundation

/// One sink-input's volume as the server reports it, from the watch's start on: read each time
/// `pactl subscribe` shows a change of that sink-input, so that a volume it held between two
/// looks is not missed, as it could be between two polls. A batch of events that came together
/// is read once (a ramp's writes come faster than pactl reads). Stopped when it goes away.
package final class VolumeEvents {
    /// A change the server reported: when its event came, and the volume read after it (raw
    /// per-channel values; nil when the stream was gone or pactl failed).
    package struct Reading: CustomStringConvertible {
        package var at: Date
        package var volume: [Int]?
        package var description: String { "\(at.timeIntervalSince1970): \(volume.map { "\($0)" } ?? "none")" }
    }

    /// What the reader thread found, guarded by its condition.
    private final class Found: @unchecked Sendable {
        let condition = NSCondition()
        var readings: [Reading] = []
        var probeChanges = 0
    }

    private let events: Background
    private let found = Found()
    private let probe: (name: String, index: Int)
    private var louder = false

    /// Starts `pactl subscribe` and returns once it shows events (`caughtUp`).
    /// - Parameters:
    ///   - rig: whose probe sink (`Rig.probeSink`) marks how far the events have come.
    ///   - index: the sink-input watched.
    ///   - read: its volume now (`Pactl.volume(ofApp:)`, a player's own reader).
    /// - Throws: `TestFailure` when pactl fails or subscribe shows nothing within `timeLimit(5)`.
    package init(rig: Rig, sinkInput index: Int, read: @escaping @Sendable () throws -> [Int]?) throws {
        probe = try rig.probeSink()
        let events = try Background(["stdbuf", "-oL", "pactl", "subscribe"])
        self.events = events
        let found = found, probeIndex = probe.index
        Thread {
            var taken = 0, partial = ""
            while true {
                // (An hour, not distantFuture, which NSCondition cannot wait until.)
                guard events.waitForBytes(moreThan: taken, until: Date().addingTimeInterval(3600)) else {
                    if events.process.isRunning { continue } else { break }
                }
                let at = Date(), data = events.bytes
                let lines = (partial + String(decoding: data[taken...], as: UTF8.self)).split(separator: "\n", omittingEmptySubsequences: false)
                taken = data.count
                partial = String(lines.last ?? "")
                // The stream's change is read before the probe's is counted: a probe change seen
                // means every change before it has its reading.
                if lines.dropLast().contains(where: { $0.hasSuffix("'change' on sink-input #\(index)") }) {
                    let reading = Reading(at: at, volume: try? read())
                    found.condition.withLock { found.readings.append(reading) }
                }
                if lines.dropLast().contains(where: { $0.hasSuffix("'change' on sink #\(probeIndex)") }) {
                    found.condition.withLock {
                        found.probeChanges += 1
                        found.condition.broadcast()
                    }
                }
            }
        }.start()
        do {
            guard try caughtUp() else { throw TestFailure("pactl subscribe reported nothing") }
        } catch {
            events.stop()
            throw error
        }
    }

    deinit { events.stop() }

    /// Sets the probe sink's volume to the other of two values and waits until the watch has
    /// seen that change: the server sends its events in order, so every change before it has been
    /// read by then. Made again every 0.25 s (one made before pactl subscribed is not shown),
    /// at most `timeLimit(5)`.
    /// - Returns: whether the watch saw one.
    private func caughtUp() throws -> Bool {
        let deadline = Date().addingTimeInterval(timeLimit(5))
        while Date() < deadline {
            let before = found.condition.withLock { found.probeChanges }
            louder.toggle()
            try Pactl.call("set-sink-volume", probe.name, louder ? "60%" : "50%")
            let until = min(deadline, Date().addingTimeInterval(0.25))
            let seen = found.condition.withLock {
                while found.probeChanges == before {
                    if !found.condition.wait(until: until) { break }
                }
                return found.probeChanges > before
            }
            if seen { return true }
        }
        return false
    }

    /// Every reading from the watch's start until now (once it caught up with the server).
    /// - Throws: `TestFailure` when pactl subscribe stopped showing events.
    package func readings() throws -> [Reading] {
        guard try caughtUp() else { throw TestFailure("pactl subscribe stopped showing events") }
        return found.condition.withLock { found.readings }
    }
}
