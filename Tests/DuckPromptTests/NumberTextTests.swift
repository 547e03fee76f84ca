import Testing
@testable import DuckPrompt
@testable import DuckPromptCore

// The one grammar for numbers users type (NumberText), and PlayOptions' ranges, which the
// library checks itself so that an app embedding it gets the same refusals as the command.

@Suite("NumberText")
struct NumberTextTests {
    @Test("plain decimal is read", arguments: [
        ("0", 0.0), ("7", 7), ("007", 7), ("+5", 5), ("-5", -5), ("2.5", 2.5), ("-0.25", -0.25),
        ("600", 600), ("123456789012", 123_456_789_012), ("1.00000000001", 1.00000000001),
    ])
    func decimal(text: String, value: Double) {
        #expect(NumberText.decimal(text) == value, "'\(text)'")
    }

    @Test("anything else is not a number", arguments: [
        "", " ", "+", "-", ".", " 10", "10 ", "\t10", "10\n", "0x10", "0X1A", "1e3", "1E3", "1e-3", "inf", "-inf",
        "infinity", "nan", "NaN", "10.", ".5", "-.5", "1.2.3", "--1", "+-1", "1,5", "1_000", "５", "٣",
        "1234567890123", "999999999999999999999999", "0.0000000000001", "10s", "10dB",
    ])
    func notNumbers(text: String) {
        #expect(NumberText.decimal(text) == nil, "'\(text)'")
        #expect(NumberText.integer(text) == nil, "'\(text)'")
    }

    @Test("whole numbers", arguments: [("0", 0), ("60000", 60000), ("+200", 200), ("-5", -5), ("000123", 123),
                                       ("999999999999", 999_999_999_999)])
    func integer(text: String, value: Int) {
        #expect(NumberText.integer(text) == value)
    }

    @Test("a fraction is not a whole number", arguments: ["1.5", "200.0", "-0.0"])
    func fractions(text: String) {
        #expect(NumberText.integer(text) == nil)
        #expect(NumberText.decimal(text) != nil)
    }
}

@Suite("PlayOptions ranges")
struct PlayOptionsRangeTests {
    static func options(_ change: (inout PlayOptions) -> Void) -> PlayOptions {
        var options = PlayOptions()
        change(&options)
        return options
    }

    @Test("values at the ends of their ranges are accepted")
    func limits() throws {
        try PlayOptions().validate()
        try Self.options { $0.volume = Decibels(20) }.validate()
        try Self.options { $0.volume = Decibels(-200) }.validate()
        try Self.options { $0.duck = Decibels(-200); $0.attackMs = 60000; $0.releaseMs = 0 }.validate()
        try Self.options { $0.latencyMs = 1; $0.expireMs = 3_600_000; $0.preRollMs = 5000 }.validate()
        try Self.options { $0.wordsPerMinute = 80; $0.rewindMs = 60000 }.validate()
    }

    @Test("out of range is a usage error naming the field and the range", arguments: [
        (Self.options { $0.volume = Decibels(300) }, "volume"),
        (Self.options { $0.volume = Decibels(20.01) }, "volume"),
        (Self.options { $0.volume = Decibels(.infinity) }, "volume"),
        (Self.options { $0.volume = Decibels(.nan) }, "volume"),
        (Self.options { $0.volume = Decibels(-201) }, "volume"),
        (Self.options { $0.duck = Decibels(6) }, "duck"),
        (Self.options { $0.duck = Decibels(-1e300) }, "duck"),
        // Whatever the mode: the same value is refused by every front, in any mode.
        (Self.options { $0.duck = Decibels(-1e300); $0.duckMode = .none }, "duck"),
        (Self.options { $0.wordsPerMinute = 451 }, "rate"),
        (Self.options { $0.rewindMs = -1 }, "rewind-ms"),
        (Self.options { $0.attackMs = -1 }, "attack-ms"),
        (Self.options { $0.releaseMs = 60001 }, "release-ms"),
        (Self.options { $0.latencyMs = 0 }, "latency-msec"),
        (Self.options { $0.expireMs = -1 }, "expire-ms"),
        (Self.options { $0.preRollMs = Int.max }, "pre-roll-ms"),
    ])
    func outOfRange(options: PlayOptions, field: String) {
        let error = #expect(throws: DuckPromptError.self) { try options.validate() }
        #expect(error?.code == .usage)
        #expect(error?.exitCode == 64)
        #expect(error?.message.hasPrefix(field) == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("out of range") == true, "\(error?.message ?? "")")
    }

    @Test("+300dB is refused before a file is opened or a server contacted")
    func playRefuses() {
        var options = PlayOptions()
        options.volume = Decibels(300)
        // A missing file would be 66 and an unreachable server 69: the usage error comes first.
        let server = ServerOptions(server: "unix:/nonexistent/duckprompt-test", timeoutMs: 200)
        let error = #expect(throws: DuckPromptError.self) {
            try DuckPrompt.playBlocking(files: ["/nonexistent/x.wav"], options: options, server: server)
        }
        #expect(error?.code == .usage, "\(error?.message ?? "")")
        #expect(error?.message.contains("+300dB") == true, "\(error?.message ?? "")")
    }
}
