import Foundation

/// Test audio made with sox: sines at a level, written once per run into a temp dir.
package enum TestAudio {
    package static let directory: URL = {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("duckprompt-tests-\(getpid())")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: TestAudio.directory) }
        return dir
    }()

    /// A sine file in `directory`: `seconds` long at `hertz`, amplitude `gain` (0…1),
    /// `channels`, 16-bit, `rate` Hz; made once, then reused by name.
    /// - Throws: `TestFailure` when sox fails.
    package static func sine(_ name: String, hertz: Int, seconds: Double, gain: Double = 0.5, channels: Int = 2,
                             rate: Int = 48_000) throws -> String {
        let path = directory.appendingPathComponent(name).path
        if !FileManager.default.fileExists(atPath: path) {
            try sine(at: path, hertz: hertz, seconds: seconds, gain: gain, channels: channels, rate: rate)
        }
        return path
    }

    /// A sine file at `path` (made anew), as `sine(_:hertz:…)`.
    /// - Throws: `TestFailure` when sox fails.
    package static func sine(at path: String, hertz: Int, seconds: Double, gain: Double = 0.5, channels: Int = 2,
                             rate: Int = 48_000) throws {
        try run(["sox", "-n", "-r", "\(rate)", "-c", "\(channels)", "-b", "16", path,
                 "synth", "\(seconds)", "sine", "\(hertz)", "vol", "\(gain)"])
    }
}
