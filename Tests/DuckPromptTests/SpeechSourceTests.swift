import Foundation
import Testing
@testable import DuckPrompt

// Speech synthesized by libespeak-ng in memory: length, level, onset, errors and reading. No
// server is contacted; the tests need libespeak-ng and espeak-ng-data (Scripts/setup).

@Suite("SpeechSource")
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
        #expect(error?.message.contains("\(wpm) wpm") == true, "\(error?.message ?? "")")
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
