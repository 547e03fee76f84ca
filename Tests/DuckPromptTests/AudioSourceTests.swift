import Testing
@testable import DuckPrompt

/// `AudioSource.truncation(inLog:)` on libsndfile 1.2's `SFC_GET_LOG_INFO` text.
@Suite("AudioSource truncation")
struct AudioSourceTruncationTests {
    /// The log of the first 2000 bytes of a 4844-byte 16-bit mono WAV (libsndfile 1.2.0).
    static let cutLog = """
        File : /tmp/trunc.wav
        Length : 2000
        RIFF : 4836 (should be 1992)
        WAVE
        fmt  : 16
          Format        : 0x1 => WAVE_FORMAT_PCM
          Channels      : 1
          Sample Rate   : 48000
        data : 4800 (should be 1956)
        End

        """

    @Test("a data chunk cut short gives the promised and the held bytes; the RIFF line is not read")
    func cutFile() {
        let found = AudioSource.truncation(inLog: Self.cutLog)
        #expect(found?.promised == 4800)
        #expect(found?.held == 1956)
    }

    @Test("a whole file, a data chunk that holds more than promised, and an AIFF SSND chunk")
    func otherLogs() {
        #expect(AudioSource.truncation(inLog: "RIFF : 4836\nWAVE\ndata : 4800\nEnd\n") == nil)
        #expect(AudioSource.truncation(inLog: "data : 1000 (should be 4000)\n") == nil)
        let aiff = AudioSource.truncation(inLog: "FORM : 9000\nSSND : 8000 (should be 120)\n")
        #expect(aiff?.promised == 8000)
        #expect(aiff?.held == 120)
    }

    @Test("the sizes a WAV written to a pipe puts in its header are not a truncation")
    func pipePlaceholders() {
        #expect(AudioSource.truncation(inLog: "data : 4294967295 (should be 4800)\n") == nil)
        #expect(AudioSource.truncation(inLog: "data : 4294967287 (should be 4800)\n") == nil)
        #expect(AudioSource.truncation(inLog: "data : 4800 (should be 0)\n") == nil)
    }

    @Test("lines that only look alike are skipped")
    func otherShapes() {
        #expect(AudioSource.truncation(inLog: "data : 4800 (maybe 12)\n") == nil)
        #expect(AudioSource.truncation(inLog: "data 4800 (should be 12)\n") == nil)
        #expect(AudioSource.truncation(inLog: "  data : 4800 (should be 12)\n") == nil)
        #expect(AudioSource.truncation(inLog: "data : x (should be 12)\n") == nil)
    }
}
