import Foundation
import Testing
@testable import DuckPrompt
@testable import DuckPromptCore

// Speech synthesized by libespeak-ng in memory: length, level, onset, errors and reading. No
// server is contacted; the tests need libespeak-ng and espeak-ng-data (Scripts/setup).

// Serialized, with the chunk tests nested in it: libespeak-ng keeps state between texts (after
// some texts, such as one with '%' or at 80 wpm, the same prompt comes out up to 50 ms longer),
// so `concurrent`, which compares lengths, must not run beside tests of odd texts and rates.
@Suite("SpeechSource", .serialized)
struct SpeechSourceTests {
    static let prompt = "In 200 metres, turn left"

    /// Reads the whole source in chunks of `sizes` (cycled), checking that each read fits.
    static func readAll(_ source: SpeechSource, chunkSizes sizes: [Int] = [4096]) -> [Float] {
        var out: [Float] = []
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: sizes.max()!)
        defer { buffer.deallocate() }
        var turn = 0
        while true {
            let size = sizes[turn % sizes.count]
            turn += 1
            let n = source.read(into: buffer, frames: size)
            #expect((0...size).contains(n))
            if n == 0 { break }
            out.append(contentsOf: UnsafeBufferPointer(start: buffer, count: n))
        }
        return out
    }

    static func dBFS(_ linear: Double) -> Double { 20 * log10(max(linear, 1e-12)) }

    @Test("a navigation prompt gives 1 to 4 s of audible mono speech at espeak's rate, starting at once",
          arguments: [nil, "en-us"] as [String?])
    func prompt(voice: String?) throws {
        let source = try SpeechSource(text: Self.prompt, voice: voice)
        #expect(source.rate == 22050)            // espeak-ng's output rate for its shipped voices
        #expect(source.channels == 1)
        #expect(source.text == Self.prompt)
        #expect(source.voice == voice ?? SpeechSource.defaultVoice)
        #expect(source.wordsPerMinute == 175)
        #expect((1.0...4.0).contains(source.duration), "duration \(source.duration) s")

        let samples = Self.readAll(source)
        #expect(Int64(samples.count) == source.frames)
        let rms = (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)).squareRoot()
        #expect(Self.dBFS(rms) > -40, "RMS \(Self.dBFS(rms)) dBFS")
        #expect(samples.allSatisfy { (-1.0...1.0).contains($0) })

        // Non-silence: the first sample above -40 dBFS (0.01 linear).
        let onset = try #require(samples.firstIndex { abs($0) > 0.01 })
        let onsetMs = Double(onset) * 1000 / Double(source.rate)
        #expect(onsetMs <= 20, "speech starts after \(onsetMs) ms")
    }

    // espeak-ng 1.51 starts these with about 49 ms of silence (the closure before the first
    // stop consonant), which the source must trim.
    @Test("speech that starts with a stop consonant starts at once too",
          arguments: ["Turn left", "Keep right", "200 metres"])
    func stopConsonantOnset(text: String) throws {
        let source = try SpeechSource(text: text)
        #expect((0.3...3.0).contains(source.duration), "duration \(source.duration) s")
        let samples = Self.readAll(source)
        let onset = try #require(samples.firstIndex { abs($0) > 0.01 })
        let onsetMs = Double(onset) * 1000 / Double(source.rate)
        #expect(onsetMs <= 20, "speech starts after \(onsetMs) ms")
    }

    @Test("a faster rate gives shorter audio")
    func fasterIsShorter() throws {
        let slow = try SpeechSource(text: Self.prompt, wordsPerMinute: 120)
        let normal = try SpeechSource(text: Self.prompt)
        let fast = try SpeechSource(text: Self.prompt, wordsPerMinute: 300)
        #expect(fast.duration < normal.duration * 0.85, "\(fast.duration) s at 300 wpm vs \(normal.duration) s at 175")
        #expect(normal.duration < slow.duration * 0.85, "\(normal.duration) s at 175 wpm vs \(slow.duration) s at 120")
        #expect(fast.wordsPerMinute == 300)
    }

    // By name or file first, then by language, as `espeak-ng -v` chooses.
    @Test("another voice is used when asked for",
          arguments: ["en-us", "de", "English (America)", "en+f3", "gmw/en-US", "en-gb", "fr-fr", "de-ch"])
    func voices(voice: String) throws {
        let source = try SpeechSource(text: Self.prompt, voice: voice)
        #expect(source.voice == voice)
        #expect((0.5...6.0).contains(source.duration), "duration \(source.duration) s")
    }

    @Test("empty or blank text is a usage error", arguments: ["", "   ", "\n\t "])
    func emptyText(text: String) {
        let error = #expect(throws: DuckPromptError.self) { try SpeechSource(text: text) }
        #expect(error?.code == .usage)
        #expect(error?.message.contains("empty") == true, "\(error?.message ?? "")")
    }

    @Test("text with nothing to speak is a usage error")
    func silentText() {
        let error = #expect(throws: DuckPromptError.self) { try SpeechSource(text: "...") }
        #expect(error?.code == .usage)
        #expect(error?.message.contains("no speech") == true, "\(error?.message ?? "")")
    }

    @Test("an unknown voice is a usage error that names it and lists voices that exist",
          arguments: ["xx-nonsense", "", "Klingon-ish", "en_US_missing"])
    func unknownVoice(voice: String) {
        let error = #expect(throws: DuckPromptError.self) { try SpeechSource(text: Self.prompt, voice: voice) }
        #expect(error?.code == .usage)
        let message = error?.message ?? ""
        #expect(message.contains("unknown espeak-ng voice '\(voice)'"), "\(message)")
        #expect(message.contains("en-us"), "\(message)")
        #expect(message.contains("de"), "\(message)")
        #expect(message.contains("espeak-ng --voices"), "\(message)")
    }

    @Test("a rate outside 80 to 450 wpm is a usage error", arguments: [0, 79, 451, 1000, -175])
    func badRate(wpm: Int) {
        let error = #expect(throws: DuckPromptError.self) {
            try SpeechSource(text: Self.prompt, wordsPerMinute: wpm)
        }
        #expect(error?.code == .usage)
        #expect(error?.message.hasPrefix("rate \(wpm) is out of range") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("80 to 450") == true, "\(error?.message ?? "")")
    }

    @Test("the rate limits themselves are accepted", arguments: [80, 450])
    func rateLimits(wpm: Int) throws {
        let source = try SpeechSource(text: "Turn left", wordsPerMinute: wpm)
        #expect(source.frames > 0)
    }

    @Test("a NUL character in the text is a usage error")
    func nulText() {
        let error = #expect(throws: DuckPromptError.self) { try SpeechSource(text: "Turn\u{0} left") }
        #expect(error?.code == .usage)
    }

    @Test("reading in odd-sized chunks returns exactly `frames` frames, then 0")
    func chunkedRead() throws {
        let source = try SpeechSource(text: Self.prompt)
        let samples = Self.readAll(source, chunkSizes: [1, 7, 13, 101, 997, 4099, 3])
        #expect(Int64(samples.count) == source.frames)
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 16)
        defer { buffer.deallocate() }
        #expect(source.read(into: buffer, frames: 16) == 0)
        #expect(source.read(into: buffer, frames: 0) == 0)
    }

    @Test("sources made on many threads at once all come out whole")
    func concurrent() async throws {
        let expected = try SpeechSource(text: Self.prompt).frames
        let counts = try await withThrowingTaskGroup(of: Int64.self) { group in
            for index in 0..<8 {
                group.addTask {
                    // Alternate voices so a voice left over from another thread would show.
                    let voice = index.isMultiple(of: 2) ? nil : "de"
                    let source = try SpeechSource(text: Self.prompt, voice: voice)
                    return voice == nil ? source.frames : -source.frames
                }
            }
            return try await group.reduce(into: [Int64]()) { $0.append($1) }
        }
        let english = counts.filter { $0 > 0 }
        #expect(english.count == 4)
        // The same text in the same voice is the same length (within 10 ms), whatever ran before.
        for frames in english {
            #expect(abs(frames - expected) <= 220, "\(frames) frames vs \(expected)")
        }
        #expect(counts.filter { $0 < 0 }.count == 4)
    }

    @Test("leading silence is trimmed to 1 ms before the first sample above -60 dBFS")
    func speechStart() {
        // rate 1000 Hz: 1 ms is 1 sample.
        #expect(SpeechSource.speechStart([0, 0, 0, 0, 500], rate: 1000) == 3)
        #expect(SpeechSource.speechStart([0, 0, 0, 0, -500], rate: 1000) == 3)
        #expect(SpeechSource.speechStart([0, 20, -30, 33, 34], rate: 1000) == 3)   // 33 is not above -60 dBFS
        #expect(SpeechSource.speechStart([800, 0], rate: 1000) == 0)
        #expect(SpeechSource.speechStart([0, 0, 0], rate: 1000) == nil)
        #expect(SpeechSource.speechStart([], rate: 22050) == nil)
        #expect(SpeechSource.speechStart([Int16.min], rate: 22050) == 0)
        // At 22050 Hz, 1 ms is 22 samples.
        #expect(SpeechSource.speechStart(Array(repeating: 0, count: 100) + [1000], rate: 22050) == 78)
    }

    @Test("libespeak-ng, loaded on demand, reports its version")
    func version() throws {
        let version = try SpeechSource.libraryVersion
        #expect(version.first?.isNumber == true, "\(version)")   // e.g. 1.51
        let library = try EspeakLibrary(fileName: EspeakLibrary.fileName)
        #expect(library.espeak_Info(nil).map { String(cString: $0) } == version)
    }
}

// libespeak-ng is opened with dlopen; these open other files through the same loader.
@Suite("EspeakLibrary")
struct EspeakLibraryTests {
    @Test("a library that cannot be loaded is 69, naming the file and the Debian package")
    func missingLibrary() {
        let name = "libespeak-ng-missing.so.1"
        let error = #expect(throws: DuckPromptError.self) { try EspeakLibrary(fileName: name) }
        #expect(error?.code == .unavailable)
        #expect(error?.exitCode == 69)
        let message = error?.message ?? ""
        #expect(message == "speech needs \(name), which cannot be loaded: cannot open shared object file: "
                    + "No such file or directory; install the Debian package libespeak-ng1")
    }

    @Test("a library without espeak's functions is 69, naming the function and the file")
    func missingFunction() {
        let error = #expect(throws: DuckPromptError.self) { try EspeakLibrary(fileName: "libc.so.6") }
        #expect(error?.code == .unavailable)
        let message = error?.message ?? ""
        #expect(message == "speech needs espeak_ng_InitializePath, which libc.so.6 does not define; "
                    + "install the Debian package libespeak-ng1")
    }
}

// Long texts: cut into chunks, synthesized ahead of the reader by a worker thread, bounded.
extension SpeechSourceTests {
@Suite("SpeechSource chunks")
struct Chunks {
    /// About 4900 characters of navigation sentences (a deterministic mix).
    static let longText: String = {
        let words = "in two hundred metres turn left then keep right on the motorway exit towards the city "
            + "centre at the roundabout take the second exit continue straight for three kilometres"
        let list = words.split(separator: " ")
        var sentences: [String] = []
        var length = 0
        var seed: UInt64 = 1
        while length < 4800 {
            var sentence: [Substring] = []
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            for i in 0..<(6 + Int(seed >> 60)) { sentence.append(list[(Int(seed >> 33) &+ i &* 7) % list.count]) }
            let text = sentence.joined(separator: " ").capitalized(first: true) + "."
            sentences.append(text)
            length += text.count + 1
        }
        return sentences.joined(separator: " ")
    }()

    @Test("a prompt is one chunk; a long text is cut after sentence ends, clauses, then spaces, within the limits",
          arguments: [
            ("In 200 metres, turn left", 160, ["In 200 metres, turn left"], [false]),
            ("Turn left. Then right.", 12, ["Turn left.", " Then right."], [true, false]),
            ("Turn left now, then right.", 16, ["Turn left now,", " then right."], [true, false]),
            ("Turn left now then right.", 16, ["Turn left now", " then right."], [false, false]),
            ("Turnleftnowthenright", 8, ["Turnleft", "nowthenr", "ight"], [false, false, false]),
            ("A. B, C. D", 9, ["A. B, C.", " D"], [true, false]),
            ("3.5 km. Go", 8, ["3.5 km.", " Go"], [true, false]),
            ("One\nTwo", 5, ["One\n", "Two"], [true, false]),
          ] as [(String, Int, [String], [Bool])])
    func chunks(text: String, limit: Int, expected: [String], pauses: [Bool]) {
        let chunks = SpeechSource.chunks(of: text, firstLimit: limit, limit: limit)
        #expect(chunks.map { String($0.text) } == expected)
        #expect(chunks.map(\.pause) == pauses)
    }

    @Test("the chunks of a long text are the text, each within its limit")
    func longChunks() {
        let chunks = SpeechSource.chunks(of: Self.longText)
        #expect(chunks.map { String($0.text) }.joined() == Self.longText)
        #expect(chunks.count > 20)
        #expect(chunks[0].text.unicodeScalars.count <= SpeechSource.firstChunkLimit)
        #expect(chunks.allSatisfy { $0.text.unicodeScalars.count <= SpeechSource.chunkLimit })
        #expect(chunks.dropLast().allSatisfy { $0.pause }, "every cut of this text is at a sentence end")
        #expect(chunks.last?.pause == false)
    }

    @Test("a long text starts after one chunk of synthesis, holds a few seconds ahead, and sounds as the whole text would")
    func longText() throws {
        let text = Self.longText
        let clock = ContinuousClock()
        let wholeStart = clock.now
        let whole = try SpeechSource.synthesizeWhole(text)
        let wholeTime = clock.now - wholeStart
        let made = clock.now
        let source = try SpeechSource(text: text)
        let firstTime = clock.now - made
        print("[speech] \(text.count) characters: whole synthesis \(wholeTime), first chunk ready after \(firstTime)")
        #expect(firstTime * 4 < wholeTime, "first chunk \(firstTime), whole text \(wholeTime)")
        #expect(!source.isSynthesized)

        // Given time, the worker stops a few seconds ahead of the reader (not the whole 5 min).
        let wholeSeconds = Double(whole.count) / Double(source.rate)
        #expect(wholeSeconds > 200, "\(wholeSeconds) s")
        Thread.sleep(forTimeInterval: 0.5)
        let ahead = Double(source.bufferedFrames) / Double(source.rate)
        print("[speech] \(wholeSeconds) s of speech; \(ahead) s synthesized ahead of the reader")
        #expect(ahead >= SpeechSource.aheadSeconds)
        #expect(ahead <= SpeechSource.aheadSeconds + 20, "one chunk (at most ~17 s) over the window")
        // Until the end is synthesized, the duration is an upper bound (a deadline made from it
        // is never early).
        #expect(source.duration >= wholeSeconds, "\(source.duration) s estimated, \(wholeSeconds) s whole")

        // Read it all, as the stream does, checking the buffer stays bounded.
        var samples: [Float] = []
        samples.reserveCapacity(whole.count + 44100)
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: 2205)
        defer { buffer.deallocate() }
        var most = 0
        while true {
            // At the pace of a stream, not faster than the worker: a read that finds nothing
            // synthesized yet would get 10 ms of silence (an underrun) instead of waiting.
            while source.bufferedFrames == 0 && !source.isSynthesized { Thread.sleep(forTimeInterval: 0.001) }
            let n = source.read(into: buffer, frames: 2205)
            if n == 0 { break }
            samples.append(contentsOf: UnsafeBufferPointer(start: buffer, count: n))
            most = max(most, source.bufferedFrames)
        }
        #expect(Double(most) / Double(source.rate) <= SpeechSource.aheadSeconds + 20, "at most \(most) frames buffered")
        #expect(source.isSynthesized)
        #expect(Int64(samples.count) == source.frames)
        // The chunks together are as long as the whole text in one call (sentence pauses kept
        // through espeakENDPAUSE), within 2 %, and have no gap the whole text lacks.
        let chunked = Double(samples.count) / Double(source.rate)
        print("[speech] chunked \(chunked) s, whole \(wholeSeconds) s")
        #expect(abs(chunked - wholeSeconds) / wholeSeconds < 0.02, "chunked \(chunked) s, whole \(wholeSeconds) s")
        let longestGap = { (values: [Float]) -> Int in
            var longest = 0, run = 0
            for v in values { run = abs(v) * 32768 > 33 ? 0 : run + 1; longest = max(longest, run) }
            return longest
        }
        let gapChunked = longestGap(samples)
        let gapWhole = longestGap(whole.map { Float($0) / 32768 })
        #expect(gapChunked <= gapWhole + source.rate / 20, "longest silence \(gapChunked) frames chunked, \(gapWhole) whole")
    }

    @Test("a reader that finds nothing synthesized waits 20 ms once, then gets silence at once, never the end")
    func underrun() {
        let buffer = SpeechBuffer(first: [16384, -16384], pendingCodePoints: 10)
        let out = UnsafeMutablePointer<Float>.allocate(capacity: 64)
        defer { out.deallocate() }
        #expect(buffer.read(into: out, frames: 64, silenceFrames: 8) == 2)
        #expect(out[0] == 0.5 && out[1] == -0.5)
        let clock = ContinuousClock()
        let start = clock.now
        #expect(buffer.read(into: out, frames: 64, silenceFrames: 8) == 8)
        let first = clock.now - start
        #expect(first >= .milliseconds(SpeechSource.underrunWaitMs), "\(first)")
        #expect((0..<8).allSatisfy { out[$0] == 0 })
        let again = clock.now
        #expect(buffer.read(into: out, frames: 64, silenceFrames: 8) == 8)
        #expect(clock.now - again < .milliseconds(5), "the second read of an underrun does not wait")
        buffer.append([8192, 8192, 8192], codePoints: 4)
        #expect(buffer.read(into: out, frames: 64, silenceFrames: 8) == 3)
        #expect(out[0] == 0.25)
        #expect(buffer.progress == (5, 6, false))
        buffer.finish()
        #expect(buffer.read(into: out, frames: 64, silenceFrames: 8) == 0)
        #expect(buffer.progress == (5, 0, true))
    }

    @Test("more than 5000 characters is a usage error naming the limit; 5000 are spoken")
    func textLimit() throws {
        let over = String(repeating: "Turn left. ", count: 455) + "x"   // 5006
        let error = #expect(throws: DuckPromptError.self) { try SpeechSource(text: over) }
        #expect(error?.code == .usage)
        #expect(error?.message.contains("5006 characters") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("at most 5000") == true, "\(error?.message ?? "")")
        // All the texts of one prompt together; code points, so combining marks count.
        #expect(throws: DuckPromptError.self) { try SpeechSource.checkLength([String(repeating: "a", count: 3000), String(repeating: "b", count: 2001)]) }
        #expect(throws: DuckPromptError.self) { try SpeechSource.checkLength(["a" + String(repeating: "\u{301}", count: 5000)]) }
        try SpeechSource.checkLength([String(repeating: "a", count: 3000), String(repeating: "b", count: 2000)])
        let atLimit = String(repeating: "Turn left. ", count: 454) + "Go on"   // 4999 + 5
        #expect(atLimit.unicodeScalars.count <= 5000)
        let source = try SpeechSource(text: String(atLimit.prefix(5000)))
        #expect(source.frames > 0)
    }

    // espeak-ng 1.51 speaks unknown symbols by name or code: the longest per code point here.
    // No '%': once espeak has read one, every later "In 200 metres, turn left" in the process
    // is 40 ms longer (espeak-ng 1.51 keeps some state), which `concurrent` would see.
    @Test("the duration bound per code point holds for the slowest text espeak makes of few characters",
          arguments: [80, 175, 450])
    func durationBound(wpm: Int) throws {
        let perCodePoint = SpeechSource.maxSecondsPerCodePoint * max(1, 175 / Double(wpm))
        for text in ["𓀀𓀀𓀀", "ⅧⅧⅧ", "ꙮꙮꙮ", "ǅǅǅ", "1234567890", "999999999999999999999999999999", "WWWWWWWWWW", "©©©"] {
            let samples = try SpeechSource.synthesizeWhole(text, wordsPerMinute: wpm)
            let seconds = Double(samples.count) / 22050
            let bound = Double(text.unicodeScalars.count) * perCodePoint
            #expect(seconds <= bound, "'\(text)' at \(wpm) wpm: \(seconds) s over the bound \(bound) s")
        }
    }
}

}

private extension String {
    func capitalized(first: Bool) -> String { prefix(1).uppercased() + dropFirst() }
}

extension SpeechSource {
    /// `text` in one `espeak_ng_Synthesize` call, leading silence included, as the source did
    /// before it cut texts into chunks: the tests compare the two.
    static func synthesizeWhole(_ text: String, voice: String = defaultVoice,
                                wordsPerMinute: Int = defaultWordsPerMinute) throws -> [Int16] {
        try Espeak.shared.synthesize(text: text, voice: voice, wordsPerMinute: wordsPerMinute).samples
    }
}
