import DuckPromptTestSupport
import Foundation
import Testing

/// Truncated files and inputs that never end, with music playing: the documented exit code,
/// and not one volume read while duckprompt ran differs from the music's own.
@Suite(.serialized)
struct InputIntegrationTests {
    /// A speaker as default sink with music at 65 %; the music's app name and volume.
    static func musicRig() throws -> (rig: Rig, app: String, before: [Int]) {
        try TestServer.requireServer()
        let rig = Rig()
        let speaker = try rig.speaker()
        try Pactl.call("set-default-sink", speaker)
        let app = "dpmusic-\(rig.tag)"
        try rig.music(on: speaker, app: app, volume: "65%")
        return (rig, app, try #require(try Pactl.volume(ofApp: app)))
    }

    /// `TestAudio`'s 3 s sine, encoded as FORMAT (sox; lame for MP3, opusenc for Opus).
    static func encoded(_ format: String) throws -> String {
        let wav = try TestAudio.sine("input-source.wav", hertz: 700, seconds: 3, gain: 0.5, channels: 2, rate: 44_100)
        let path = TestAudio.directory.appendingPathComponent("input.\(format)").path
        switch format {
        case "wav": return wav
        case "mp3": try run(["lame", "--quiet", wav, path])
        case "opus": try run(["opusenc", "--quiet", wav, path])
        default: try run(["sox", wav, path])
        }
        return path
    }

    static let formats = ["wav", "aiff", "flac", "ogg", "opus", "mp3"]

    /// Starts `arguments`, sends `signal` once it waits for its input (its main thread in
    /// `poll`), waits for its end while the music's volume is read: the process, its exit
    /// status (nil: killed after 5 s), the seconds from the signal to the exit, and the
    /// volumes seen.
    static func interrupt(_ arguments: [String], with signal: Int32, app: String) throws
        -> (Background, Int32?, Double, (values: [[Int]?], reads: Int)) {
        let watch = VolumeWatch(app: app)
        let prompt = try Background(arguments, captureStderr: true)
        #expect(waitUntilPolling(prompt.process.processIdentifier, timeout: timeLimit(5)), "duckprompt did not wait for its input")
        #expect(prompt.process.isRunning, "duckprompt did not wait for its input")
        let sent = Date()
        kill(prompt.process.processIdentifier, signal)
        let exit = prompt.wait(timeout: 5)
        let after = Date().timeIntervalSince(sent)
        return (prompt, exit, after, watch.stop())
    }

    @Test("The first half of a WAV, AIFF, FLAC, Ogg Vorbis, Opus or MP3 file: exit 65 naming it, nothing ducked")
    func truncatedFiles() throws {
        let (rig, app, before) = try Self.musicRig()
        defer { withExtendedLifetime(rig) {} }   // its music plays until the test ends
        for format in Self.formats {
            let whole = try Data(contentsOf: URL(fileURLWithPath: try Self.encoded(format)))
            let cut = TestAudio.directory.appendingPathComponent("cut-\(rig.tag).\(format)").path
            try whole.prefix(whole.count / 2).write(to: URL(fileURLWithPath: cut))
            let watch = VolumeWatch(app: app)
            let result = try run([duckpromptBinary, "play", cut], check: false)
            let seen = watch.stop()
            let ours = result.stderr.split(separator: "\n")
            #expect(result.status == 65, "\(format): \(result.stderr)")
            #expect(ours.count == 1 && ours[0].hasPrefix("duckprompt: \(cut): ") && ours[0].contains("truncated"),
                    "\(format): \(result.stderr)")
            #expect(seen.values == [before], "\(format): the music's volume moved: \(seen.values)")
            print("[\(TestServer.kind)] \(format) cut: exit \(result.status) in \(result.seconds) s, \(seen.reads) volume reads")
        }
        #expect(try Pactl.volume(ofApp: app) == before)
    }

    @Test("The whole FLAC, Ogg Vorbis, Opus and MP3 files play (exit 0) and every volume comes back")
    func wholeFiles() throws {
        let (rig, app, before) = try Self.musicRig()
        defer { withExtendedLifetime(rig) {} }   // its music plays until the test ends
        for format in ["flac", "ogg", "opus", "mp3"] {
            let result = try run([duckpromptBinary, "play", "--release-ms", "100", try Self.encoded(format)], check: false)
            #expect(result.status == 0, "\(format): \(result.stderr)")
            let after = try Pactl.volume(ofApp: app)
            #expect(after == before, "\(format): \(String(describing: after)) after, \(before) before")
        }
    }

    @Test("A FIFO no one writes: SIGINT, SIGTERM, SIGHUP give 130, 143, 129 within 0.5 s, nothing ducked",
          arguments: [(SIGINT, Int32(130)), (SIGTERM, Int32(143)), (SIGHUP, Int32(129))])
    func fifoSignals(signal: Int32, status: Int32) throws {
        let (rig, app, before) = try Self.musicRig()
        defer { withExtendedLifetime(rig) {} }   // its music plays until the test ends
        let fifo = TestAudio.directory.appendingPathComponent("fifo-\(rig.tag).wav").path
        try #require(mkfifo(fifo, 0o600) == 0)
        defer { unlink(fifo) }
        let (prompt, exit, after, seen) = try Self.interrupt([duckpromptBinary, "play", fifo], with: signal, app: app)
        #expect(exit == status)
        #expect(after < timeLimit(0.5), "exit \(after) s after signal \(signal)")
        #expect(prompt.bytes.isEmpty, "\(String(decoding: prompt.bytes, as: UTF8.self))")
        #expect(seen.values == [before], "the music's volume moved: \(seen.values)")
        print("[\(TestServer.kind)] FIFO, signal \(signal): exit \(exit.map(String.init) ?? "killed") \(Int(after * 1000)) ms after it")
    }

    @Test("Standard input whose writer never closes: SIGTERM gives 143 within 0.5 s, nothing ducked")
    func endlessInput() throws {
        let (rig, app, before) = try Self.musicRig()
        defer { withExtendedLifetime(rig) {} }   // its music plays until the test ends
        let fifo = TestAudio.directory.appendingPathComponent("stdin-\(rig.tag)").path
        try #require(mkfifo(fifo, 0o600) == 0)
        defer { unlink(fifo) }
        // This end (O_RDWR opens a FIFO at once) is the writer that sends a header and stalls.
        let writer = open(fifo, O_RDWR)
        try #require(writer >= 0)
        defer { close(writer) }
        let header = try Data(contentsOf: URL(fileURLWithPath: try Self.encoded("wav"))).prefix(44)
        _ = header.withUnsafeBytes { write(writer, $0.baseAddress, $0.count) }
        // exec: the signal goes to duckprompt itself, its standard input the FIFO.
        let (_, exit, after, seen) = try Self.interrupt(["sh", "-c", "exec \"$0\" play - < \"$1\"", duckpromptBinary, fifo],
                                                        with: SIGTERM, app: app)
        #expect(exit == 143)
        #expect(after < timeLimit(0.5), "exit \(after) s after SIGTERM")
        #expect(seen.values == [before], "the music's volume moved: \(seen.values)")
    }
}

/// Reads a stream's volume (`pactl`) over and over on a thread of its own until `stop()`.
final class VolumeWatch: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [[Int]?] = []
    private var reads = 0
    private var running = true
    private let done = DispatchSemaphore(value: 0)

    init(app: String) {
        Thread { [self] in
            while lock.withLock({ running }) {
                let value = (try? Pactl.volume(ofApp: app)) ?? nil
                lock.withLock {
                    reads += 1
                    if values.last != value { values.append(value) }
                }
            }
            done.signal()
        }.start()
    }

    /// Stops reading: every distinct value in the order seen (nil: the stream was gone), and
    /// how many reads were made.
    func stop() -> (values: [[Int]?], reads: Int) {
        lock.withLock { running = false }
        done.wait()
        return lock.withLock { (values, reads) }
    }
}
