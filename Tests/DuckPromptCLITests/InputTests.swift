import DuckPromptTestSupport
import Foundation
import Testing

// Runs of the built binary on files cut short and on inputs that never end (a FIFO with no
// writer, a writer that never closes, standard input without an end), with no server
// reachable: a refusal must come before the server (65, not 69), a signal must end the wait.

@Suite("duckprompt play with truncated files and endless input")
struct InputRunTests {
    /// A 2 s stereo 44.1 kHz sine as `x.FORMAT` in `dir` (sox; lame for MP3, opusenc for Opus).
    static func encoded(_ format: String, in dir: Scratch) throws -> String {
        let wav = dir.path("source.wav"), target = dir.path("x.\(format)")
        try tool(["sox", "-n", "-r", "44100", "-c", "2", "-b", "16", wav, "synth", "2", "sine", "440", "vol", "0.5"])
        switch format {
        case "wav": return wav
        case "mp3": try tool(["lame", "--quiet", wav, target])
        case "opus": try tool(["opusenc", "--quiet", wav, target])
        default: try tool(["sox", wav, target])
        }
        return target
    }

    static func tool(_ arguments: [String]) throws {
        try DuckPromptTestSupport.run(arguments)
    }

    /// The first half of `path`, as `cut-NAME` beside it.
    static func firstHalf(of path: String) throws -> String {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let url = URL(fileURLWithPath: path)
        let cut = url.deletingLastPathComponent().appendingPathComponent("cut-" + url.lastPathComponent)
        try data.prefix(data.count / 2).write(to: cut)
        return cut.path
    }

    static let formats = ["wav", "aiff", "au", "flac", "ogg", "opus", "mp3"]

    @Test("the first half of a file exits 65 naming it as truncated, before the server (not 69)", arguments: formats)
    func truncated(format: String) throws {
        let dir = try Scratch()
        let cut = try Self.firstHalf(of: try Self.encoded(format, in: dir))
        let run = try Binary.run(["play", cut])
        // One line: an MP3 is refused before libmpg123 could print its own warning.
        expectError(run, status: 65)
        let ours = run.errorLines
        // Half of a 2 s Opus file holds no audio page: libsndfile calls it malformed.
        let said = format == "opus" ? ["truncated: ", "damaged or truncated ("] : ["truncated: "]
        #expect(said.contains { ours.first?.hasPrefix("duckprompt: \(cut): \($0)") == true }, "\(run)")
    }

    @Test("the same whole files reach the server (69: none is reachable)", arguments: formats)
    func whole(format: String) throws {
        let dir = try Scratch()
        let run = try Binary.run(["play", "--timeout", "0.5", try Self.encoded(format, in: dir)])
        expectError(run, status: 69)
    }

    @Test("a truncated FLAC on standard input exits 65 naming standard input")
    func truncatedInput() throws {
        let dir = try Scratch()
        let cut = try Self.firstHalf(of: try Self.encoded("flac", in: dir))
        let run = try Binary.run(["play", "-"], input: try #require(FileHandle(forReadingAtPath: cut)))
        expectError(run, status: 65)
        #expect(run.stderr.hasPrefix("duckprompt: standard input: truncated: "), "\(run)")
    }

    @Test("a WAV sox wrote to a pipe, length unknown (size placeholder 0x7FFFF000), is not truncated: 69")
    func streamedWAV() throws {
        let dir = try Scratch()
        let wav = try Self.encoded("wav", in: dir)
        let piped = dir.path("piped.wav")
        // Raw samples from a pipe: sox cannot know the length when it writes the header.
        try Self.tool(["sh", "-c", "sox '\(wav)' -t raw - | sox -t raw -r 44100 -e signed -b 16 -c 2 - -t wav - | cat > '\(piped)'"])
        expectError(try Binary.run(["play", "--timeout", "0.5", piped]), status: 69)
    }

    @Test("/dev/zero by name or on standard input: exit 65 past 64 MiB, not all memory")
    func endlessDevice() throws {
        for (arguments, input, name) in [(["play", "/dev/zero"], FileHandle.nullDevice, "/dev/zero"),
                                         (["play", "-"], try #require(FileHandle(forReadingAtPath: "/dev/zero")), "standard input")] {
            let run = try Binary.run(arguments, limit: 20, input: input)
            expectError(run, status: 65)
            #expect(run.stderr == "duckprompt: \(name): longer than 64 MiB, the most read from a pipe or device (give a file by name)\n",
                    "\(run)")
        }
    }

    static let signals: [(Int32, Int32)] = [(SIGINT, 130), (SIGTERM, 143), (SIGHUP, 129)]

    @Test("a FIFO no one writes: SIGINT, SIGTERM, SIGHUP end the wait at once with 130, 143, 129",
          arguments: signals)
    func fifoWithoutWriter(signal: Int32, status: Int32) throws {
        let dir = try Scratch()
        let fifo = dir.path("prompt.wav")
        try #require(mkfifo(fifo, 0o600) == 0)
        let run = try Binary.run(["play", fifo], limit: 10, signal: (signal, 0.3))
        #expect(run.status == status, "\(run)")
        #expect(run.stdout.isEmpty && run.stderr.isEmpty, "\(run)")
        let after = try #require(run.secondsAfterSignal, "\(run)")
        #expect(after < timeLimit(0.5), "exit \(after) s after the signal")
    }

    @Test("a FIFO whose writer sent a header and then nothing, never closing: SIGTERM gives 143")
    func fifoWriterNeverCloses() throws {
        let dir = try Scratch()
        let fifo = dir.path("prompt.wav")
        try #require(mkfifo(fifo, 0o600) == 0)
        // O_RDWR on a FIFO opens at once (Linux); this end stays open, as a writer that stalls.
        let writer = open(fifo, O_RDWR)
        try #require(writer >= 0)
        defer { close(writer) }
        let header = try Data(contentsOf: URL(fileURLWithPath: try Self.encoded("wav", in: dir))).prefix(100)
        _ = header.withUnsafeBytes { write(writer, $0.baseAddress, $0.count) }
        let run = try Binary.run(["play", fifo], limit: 10, signal: (SIGTERM, 0.3))
        #expect(run.status == 143, "\(run)")
        #expect(run.stdout.isEmpty && run.stderr.isEmpty, "\(run)")
        #expect(try #require(run.secondsAfterSignal) < timeLimit(0.5))
    }

    @Test("standard input that never ends: SIGINT, SIGTERM, SIGHUP give 130, 143, 129", arguments: signals)
    func endlessInput(signal: Int32, status: Int32) throws {
        let pipe = Pipe()
        defer { try? pipe.fileHandleForWriting.close() }
        pipe.fileHandleForWriting.write(Data("RIFF".utf8))
        let run = try Binary.run(["play", "-"], limit: 10, input: pipe.fileHandleForReading, signal: (signal, 0.3))
        #expect(run.status == status, "\(run)")
        #expect(run.stdout.isEmpty && run.stderr.isEmpty, "\(run)")
        #expect(try #require(run.secondsAfterSignal) < timeLimit(0.5))
    }

    @Test("a FIFO whose writer sends a whole file and closes is read like a file (69: no server)")
    func fifoWithWriter() throws {
        let dir = try Scratch()
        let fifo = dir.path("prompt.flac")
        try #require(mkfifo(fifo, 0o600) == 0)
        let data = try Data(contentsOf: URL(fileURLWithPath: try Self.encoded("flac", in: dir)))
        let writer = Thread {
            // Opens once the binary opened its end; writes in pieces, then closes.
            guard let handle = FileHandle(forWritingAtPath: fifo) else { return }
            for start in stride(from: 0, to: data.count, by: 4096) {
                handle.write(data[start..<min(data.count, start + 4096)])
            }
            try? handle.close()
        }
        writer.start()
        expectError(try Binary.run(["play", "--timeout", "0.5", fifo], limit: 10), status: 69)
    }
}

// `duckprompt say -`: the text on standard input, with no server reachable. Each refusal
// comes before the server (not 69); a text that passes reaches it (69).
@Suite("duckprompt say - reads its text from standard input")
struct SayInputTests {
    /// `bytes` in a file of `dir`, opened for reading: a standard input that ends.
    static func input(_ bytes: [UInt8], in dir: Scratch) throws -> FileHandle {
        let path = dir.path("text")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return try #require(FileHandle(forReadingAtPath: path))
    }

    @Test("a text that is not UTF-8 exits 65 naming standard input and the first bad byte")
    func notUTF8() throws {
        let run = try Binary.run(["say", "-"], input: try Self.input(Array("Turn ".utf8) + [0xFF, 0xFE], in: Scratch()))
        expectError(run, status: 65)
        #expect(run.stderr == "duckprompt: standard input: not UTF-8 text (byte 5 is not)\n", "\(run)")
    }

    @Test("more than 5000 code points exit 64, the text limit, without reading all of it")
    func tooLong() throws {
        let run = try Binary.run(["say", "-"], input: try Self.input(Array(repeating: UInt8(ascii: "a"), count: 1 << 20), in: Scratch()))
        expectError(run, status: 64)
        #expect(run.stderr.contains("longer than 5000 characters"), "\(run)")
    }

    @Test("an empty standard input exits 64: nothing to say")
    func empty() throws {
        let run = try Binary.run(["say", "-"], input: try Self.input([], in: Scratch()))
        expectError(run, status: 64)
        #expect(run.stderr.contains("empty"), "\(run)")
    }

    @Test("'-' among other words is a usage error (64), not a text with a dash read from standard input")
    func dashAmongWords() throws {
        let run = try Binary.run(["say", "turn", "-", "left"])
        expectError(run, status: 64)
        #expect(run.stderr.contains("'say -'"), "\(run)")
    }

    @Test("two lines of UTF-8 text, the line break at the end dropped, reach the server (69: none is reachable)")
    func readsText() throws {
        let text = "Bitte wenden. Dann rechts abbiegen.\n"
        let run = try Binary.run(["say", "--timeout", "0.5", "--voice", "de", "-"], input: try Self.input(Array(text.utf8), in: Scratch()))
        expectError(run, status: 69)
    }

    @Test("standard input that never ends: SIGTERM ends the wait with 143, nothing said")
    func endless() throws {
        let pipe = Pipe()
        defer { try? pipe.fileHandleForWriting.close() }
        pipe.fileHandleForWriting.write(Data("Turn left".utf8))
        let run = try Binary.run(["say", "-"], limit: 10, input: pipe.fileHandleForReading, signal: (SIGTERM, 0.3))
        #expect(run.status == 143, "\(run)")
        #expect(run.stdout.isEmpty && run.stderr.isEmpty, "\(run)")
        #expect(try #require(run.secondsAfterSignal) < timeLimit(0.5))
    }
}
