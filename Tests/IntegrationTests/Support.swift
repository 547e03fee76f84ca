import Foundation
import Testing

/// Which private server the tests run on: set by `duckprompt lab` (`DUCKPROMPT_LAB_SERVER`,
/// as `Scripts/test` runs them) or `Scripts/sound-server` (`DUCKPROMPT_TEST_SERVER`).
/// Integration tests fail (never skip) when it is missing: `Scripts/test` always provides it.
enum TestServer {
    static var kind: String {
        let environment = ProcessInfo.processInfo.environment
        return environment["DUCKPROMPT_LAB_SERVER"] ?? environment["DUCKPROMPT_TEST_SERVER"] ?? "none"
    }

    static func requireServer() throws {
        guard kind == "pipewire" || kind == "pulseaudio" else {
            throw TestFailure("integration tests need a private server: run them through Scripts/test (or "
                              + "duckprompt lab --device none --no-listen -- swift test --filter IntegrationTests)")
        }
    }
}

/// The product's time limit (issue: "exit 69 in under 6 s"), widened under ThreadSanitizer,
/// which slows every process it instruments (`Scripts/test --sanitize thread`) and makes each
/// one sleep 1 s before it exits (TSan's `atexit_sleep_ms`, 1000 by default).
func timeLimit(_ seconds: Double) -> Double {
    ProcessInfo.processInfo.environment["DUCKPROMPT_TEST_SANITIZER"] == nil ? seconds : seconds + 3
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A finished child process.
struct ProcessResult {
    var status: Int32
    var stdout: String
    var stderr: String
    var seconds: Double
}

/// Runs a program to the end (PATH lookup through /usr/bin/env), capturing its output.
@discardableResult
func run(_ arguments: [String], environment: [String: String] = [:], check: Bool = true) throws -> ProcessResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    var env = ProcessInfo.processInfo.environment
    for (k, v) in environment { env[k] = v }
    process.environment = env
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    let start = Date()
    try process.run()
    // Read both pipes concurrently to avoid filling one while waiting on the other.
    let group = DispatchGroup()
    nonisolated(unsafe) var outData = Data(), errData = Data()
    group.enter()
    // A thread of its own, not a dispatch worker: blocking reads of long-running Background
    // processes hold workers, and a new one can take a second to be spawned.
    Thread { outData = out.fileHandleForReading.readDataToEndOfFile(); group.leave() }.start()
    errData = err.fileHandleForReading.readDataToEndOfFile()
    group.wait()
    process.waitUntilExit()
    let result = ProcessResult(status: process.terminationStatus,
                               stdout: String(decoding: outData, as: UTF8.self),
                               stderr: String(decoding: errData, as: UTF8.self),
                               seconds: Date().timeIntervalSince(start))
    if check && result.status != 0 {
        throw TestFailure("\(arguments.joined(separator: " ")) exited \(result.status): \(result.stderr)")
    }
    return result
}

/// The `duckprompt` executable built next to the test bundle.
var duckpromptBinary: String {
    if let path = ProcessInfo.processInfo.environment["DUCKPROMPT_BIN"] { return path }
    var candidates: [URL] = []
    let bundle = Bundle.main.bundleURL
    candidates.append(bundle.appendingPathComponent("duckprompt"))
    candidates.append(bundle.deletingLastPathComponent().appendingPathComponent("duckprompt"))
    let argv0 = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
    candidates.append(argv0.deletingLastPathComponent().appendingPathComponent("duckprompt"))
    candidates.append(argv0.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("duckprompt"))
    for c in candidates where FileManager.default.isExecutableFile(atPath: c.path) { return c.path }
    return "duckprompt"
}

/// `pactl` against the private server.
enum Pactl {
    @discardableResult
    static func call(_ args: String...) throws -> String {
        try run(["pactl"] + args).stdout
    }

    /// Loads a null sink with properties; returns the module index. Values must not hold spaces.
    static func loadNullSink(name: String, properties: [String: String]) throws -> String {
        let props = properties.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        var args = ["pactl", "load-module", "module-null-sink", "sink_name=\(name)"]
        if !props.isEmpty { args.append("sink_properties=\"\(props)\"") }
        return try run(args).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func unload(_ module: String) { _ = try? run(["pactl", "unload-module", module], check: false) }

    /// Sink-inputs as `pactl --format=json list sink-inputs` reports them.
    static func sinkInputs() throws -> [[String: Any]] {
        let text = try run(["pactl", "--format=json", "list", "sink-inputs"]).stdout
        return (try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]]) ?? []
    }

    /// Raw per-channel volume values of the sink-input whose `application.name` is `app`.
    static func volume(ofApp app: String) throws -> [Int]? {
        for input in try sinkInputs() {
            let props = input["properties"] as? [String: Any] ?? [:]
            guard props["application.name"] as? String == app else { continue }
            let volume = input["volume"] as? [String: [String: Any]] ?? [:]
            let map = (input["channel_map"] as? String)?.split(separator: ",").map(String.init) ?? Array(volume.keys).sorted()
            return map.compactMap { volume[$0]?["value"] as? Int }
        }
        return nil
    }

    static func defaultSink() throws -> String {
        try run(["pactl", "get-default-sink"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// A background process (a player or a recorder), stopped on `stop()`.
final class Background: @unchecked Sendable {
    let process = Process()
    private let out = Pipe()
    private var data = Data()
    private let lock = NSLock()
    private let done = DispatchSemaphore(value: 0)

    /// - Parameter captureStderr: collect standard error with standard output.
    init(_ arguments: [String], environment: [String: String] = [:], captureStderr: Bool = false) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        process.environment = env
        process.standardOutput = out
        process.standardError = captureStderr ? out : FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let handle = out.fileHandleForReading
        Thread { [self] in
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                lock.withLock { data.append(chunk) }
            }
            done.signal()
        }.start()
    }

    var bytes: Data { lock.withLock { data } }

    /// Waits for the process to end by itself (at most `timeout` s, then SIGKILL); returns its
    /// exit status, or nil when it had to be killed.
    func wait(timeout: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        if process.isRunning {
            stop()
            return nil
        }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Sends SIGKILL and waits for the end of its output. (Not SIGTERM: a child spawned from
    /// a dispatch worker thread inherits its blocked signal mask, and parec would never see it.)
    @discardableResult
    func stop() -> Data {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        _ = done.wait(timeout: .now() + 5)
        return bytes
    }
}

/// Records a sink's monitor as mono float32 at 48 kHz with `parec`.
final class MonitorRecorder {
    static let rate = 48_000
    let background: Background

    init(sink: String) throws {
        background = try Background(["parec", "-d", "\(sink).monitor", "--raw", "--format=float32le",
                                     "--channels=1", "--rate=\(MonitorRecorder.rate)", "--latency-msec=10"])
    }

    /// Stops and returns the samples.
    func stop() -> [Float] {
        let data = background.stop()
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }

    /// Seconds of audio received so far.
    var receivedSeconds: Double { Double(background.bytes.count / 4) / Double(MonitorRecorder.rate) }

    /// Waits until `seconds` more of audio than now have arrived: monitor data comes late and
    /// in chunks on PulseAudio, so wall-clock sleeps do not tell what was recorded.
    func waitForMoreAudio(seconds: Double, timeout: Double = 10) throws {
        try waitForAudio(seconds: receivedSeconds + seconds, timeout: timeout)
    }

    /// Waits until at least `seconds` of audio have arrived in all (monitor data may start late).
    func waitForAudio(seconds: Double, timeout: Double = 10) throws {
        let needed = Int(seconds * Double(MonitorRecorder.rate)) * 4
        let deadline = Date().addingTimeInterval(timeout)
        while background.bytes.count < needed {
            guard Date() < deadline else { throw TestFailure("the monitor recorder got no audio within \(timeout) s") }
            Thread.sleep(forTimeInterval: 0.02)
        }
    }
}

/// Level analysis of a recording, in 10 ms windows.
enum Levels {
    static let window = MonitorRecorder.rate / 100

    /// Level of one frequency per 10 ms window (Goertzel over a 20 ms Hann-windowed span
    /// centred on it), in dB relative to a full-scale sine. -200 for silence.
    static func tone(_ samples: [Float], hertz: Double) -> [Double] {
        let span = window * 2
        guard samples.count >= span else { return [] }
        let k = 2 * cos(2 * Double.pi * hertz / Double(MonitorRecorder.rate))
        var levels: [Double] = []
        var start = 0
        let hann = (0..<span).map { 0.5 - 0.5 * cos(2 * Double.pi * Double($0) / Double(span - 1)) }
        while start + span <= samples.count {
            var s1 = 0.0, s2 = 0.0
            for i in 0..<span {
                let s = Double(samples[start + i]) * hann[i] + k * s1 - s2
                s2 = s1
                s1 = s
            }
            let power = s1 * s1 + s2 * s2 - k * s1 * s2
            let amplitude = 2 * sqrt(max(power, 0)) / (Double(span) * 0.5)
            levels.append(amplitude > 1e-10 ? 20 * log10(amplitude) : -200)
            start += window
        }
        return levels
    }

    /// RMS per 10 ms window in dBFS. -200 for silence.
    static func rms(_ samples: [Float]) -> [Double] {
        stride(from: 0, to: samples.count - window + 1, by: window).map { start in
            var sum = 0.0
            for i in start..<start + window { sum += Double(samples[i]) * Double(samples[i]) }
            let rms = sqrt(sum / Double(window))
            return rms > 1e-10 ? 20 * log10(rms) : -200
        }
    }

    static func median(_ values: some Collection<Double>) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return -200 }
        return sorted[sorted.count / 2]
    }

    /// Each window replaced by the median of the `span` windows centred on it, the same
    /// length and indices as `levels` (the first and last `span / 2` windows, which have no
    /// whole span, keep the median of their nearest whole span). A volume step lasts and
    /// passes whole; a dropout or a splash of up to `span / 2` windows (an underrun on a
    /// loaded machine, another prompt's edge) is gone.
    static func medianFiltered(_ levels: [Double], span: Int = 5) -> [Double] {
        let half = span / 2
        guard levels.count >= span else { return levels }
        return levels.indices.map { i in
            let centre = min(max(i, half), levels.count - 1 - half)
            return median(levels[(centre - half)...(centre + half)])
        }
    }

    /// The most a ramped volume may change the level from one 10 ms window to the next, in dB,
    /// after `largestStep`'s median. A ramp moves 1 dB per write, about one write per window;
    /// the 20 dB duck set in one write shows as 10.5 to 16.7 dB in one window (`tone`'s 20 ms
    /// span, any alignment; `rms` more). The margin is for a dropout at a ramp's end, which
    /// the median cannot tell from the ramp (3.5 dB seen under ThreadSanitizer).
    static let rampStepLimit = 6.0

    /// The largest change in dB between neighbouring 10 ms windows once a median over five
    /// windows has removed dropouts: a ramp stays near 1 dB per window, a volume set in one
    /// write shows whole. `detail` names the window and the raw levels around it.
    static func largestStep(_ levels: [Double]) -> (dB: Double, detail: String) {
        let smooth = medianFiltered(levels)
        guard smooth.count >= 2 else { return (99, "fewer than two windows") }
        let steps = zip(smooth, smooth.dropFirst()).map { abs($1 - $0) }
        let at = steps.indices.max { steps[$0] < steps[$1] }!
        let raw = levels[max(0, at - 4)..<min(levels.count, at + 6)].map { String(format: "%.1f", $0) }
        return (steps[at], String(format: "%.2f dB at window %d of %d (raw: %@)", steps[at], at, steps.count,
                                  raw.joined(separator: " ")))
    }

    /// Runs of windows at or above `threshold`, bridging gaps of up to `gap` windows, with at
    /// least `minCount` windows above, in time order, as (first, last, count of windows
    /// above): the prompts heard, without the stray window another prompt's edge splashes into
    /// their frequency.
    static func runs(_ levels: [Double], above threshold: Double, gap: Int = 2,
                     minCount: Int = 10) -> [(first: Int, last: Int, count: Int)] {
        var found: [(first: Int, last: Int, count: Int)] = []
        var current: (first: Int, last: Int, count: Int)? = nil
        for i in levels.indices where levels[i] >= threshold {
            if let c = current, i - c.last <= gap + 1 {
                current = (c.first, i, c.count + 1)
            } else {
                if let c = current, c.count >= minCount { found.append(c) }
                current = (i, i, 1)
            }
        }
        if let c = current, c.count >= minCount { found.append(c) }
        return found
    }

    /// Indices of windows at or above `threshold`, as (first, last, count).
    static func span(_ levels: [Double], above threshold: Double) -> (first: Int, last: Int, count: Int)? {
        let hits = levels.indices.filter { levels[$0] >= threshold }
        guard let first = hits.first, let last = hits.last else { return nil }
        return (first, last, hits.count)
    }
}

/// Test audio made with sox: sines at a level, written once per run into a temp dir.
enum TestAudio {
    static let directory: URL = {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("duckprompt-tests-\(getpid())")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: TestAudio.directory) }
        return dir
    }()

    /// A sine file: `seconds` long at `hertz`, amplitude `gain` (0…1), `channels`, 48 kHz.
    static func sine(_ name: String, hertz: Int, seconds: Double, gain: Double = 0.5, channels: Int = 2,
                     rate: Int = 48_000) throws -> String {
        let path = directory.appendingPathComponent(name).path
        if !FileManager.default.fileExists(atPath: path) {
            try run(["sox", "-n", "-r", "\(rate)", "-c", "\(channels)", "-b", "16", path,
                     "synth", "\(seconds)", "sine", "\(hertz)", "vol", "\(gain)"])
        }
        return path
    }
}

/// Polls `condition` every 20 ms until it holds or `timeout` s pass.
func eventually(timeout: Double = 5, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if try condition() { return true }
        Thread.sleep(forTimeInterval: 0.02)
    }
    return try condition()
}
