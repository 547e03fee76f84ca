import DuckPromptTestSupport
import Foundation
import Testing
@testable import DuckPromptCLI
import DuckPrompt

// Hostile and odd values for every numeric option, and texts too long to say: each is a usage
// error (64) with one line naming the option or the limit, before a server is contacted (the
// server of every run is unreachable: contacting it would be 69, so 64 shows that no volume
// could have changed). Integration tests check the same on real servers.

@Suite("duckprompt option limits")
struct LimitsCLITests {
    /// Every numeric option, with a verb that takes it and a file or text to go with it.
    static let options: [(verb: String, option: String)] = [
        ("play", "--volume"), ("play", "--duck"), ("play", "--attack-ms"), ("play", "--release-ms"),
        ("play", "--latency-msec"), ("play", "--pre-roll-ms"), ("play", "--expire-ms"), ("play", "--timeout"),
        ("say", "--rate"), ("say", "--volume"), ("devices", "--timeout"), ("route", "--timeout"), ("restore", "--timeout"),
    ]

    /// Not numbers, for any option: white space, hex, exponents, overflow, inf, nan, other digits.
    static let notNumbers = [" 10", "10 ", "\t10", "0x10", "1e3", "999999999999999999999999", "nan", "inf", "-inf",
                             "", "１０", "10.", ".5", "1_0", "10\n"]

    /// How a message names the option: a prompt option by its name in the table, as the
    /// config file and the service do (`attack-ms`); the command's own as written (`--timeout`).
    static func named(_ option: String) -> String {
        PromptOption.named(String(option.dropFirst(2)))?.name ?? option
    }

    static func arguments(_ verb: String, _ option: String, _ value: String) -> [String] {
        switch verb {
        case "play": return [verb, option, value, "/nonexistent/x.wav"]
        case "say": return [verb, option, value, "Turn left"]
        default: return [verb, option, value]
        }
    }

    @Test("a value that is not a plain decimal number: 64, one line naming the option", arguments: options)
    func notNumber(verb: String, option: String) throws {
        for value in Self.notNumbers {
            let run = try Binary.run(Self.arguments(verb, option, value))
            expectError(run, status: 64)
            #expect(run.stderr.hasPrefix("duckprompt: \(Self.named(option)) "), "\(verb) \(option) '\(value)': \(run.stderr)")
        }
    }

    @Test("a number out of range: 64 naming the option and the range", arguments: [
        ("play", "--volume", "+300dB", "+300dB is out of range (-200dB to +20dB)"),
        ("play", "--volume", "+20.1dB", "+20dB"), ("play", "--volume", "300%", "+28.6dB is out of range"),
        ("play", "--volume", "-201dB", "-200dB"), ("play", "--volume", "999999999999dB", "+20dB"),
        ("play", "--duck", "-201dB", "(-200dB to 0dB)"), ("play", "--duck", "6dB", "+6dB is out of range (-200dB to 0dB)"),
        ("play", "--attack-ms", "60001", "0 to 60000"), ("play", "--attack-ms", "-1", "0 to 60000"),
        ("play", "--release-ms", "999999999999", "0 to 60000"),
        ("play", "--latency-msec", "0", "1 to 10000"), ("play", "--latency-msec", "10001ms", "1 to 10000"),
        ("play", "--pre-roll-ms", "5001", "0 to 5000"), ("play", "--expire-ms", "3600001", "0 to 3600000"),
        ("play", "--timeout", "601", "1ms to 600s"), ("play", "--timeout", "0.0001", "1ms to 600s"),
        ("play", "--timeout", "0ms", "1ms to 600s"), ("devices", "--timeout", "-1", "1ms to 600s"),
        ("say", "--rate", "79", "80 to 450"), ("say", "--rate", "451", "80 to 450"),
        ("say", "--rate", "175.0", "not a whole number of words per minute"),
    ])
    func outOfRange(verb: String, option: String, value: String, range: String) throws {
        let run = try Binary.run(Self.arguments(verb, option, value))
        expectError(run, status: 64)
        #expect(run.stderr.hasPrefix("duckprompt: \(Self.named(option)) "), "\(run.stderr)")
        #expect(run.stderr.contains(range), "\(run.stderr)")
    }

    @Test("values at the ends of the ranges are accepted (then there is no server: 69)", arguments: [
        ["--volume", "+20dB"], ["--volume", "-200dB"], ["--volume", "215%"], ["--volume", "+6 dB"], ["--duck", "-200dB"],
        ["--attack-ms", "60000"], ["--release-ms", "0ms"], ["--latency-msec", "1"], ["--latency-msec", "10000"],
        ["--pre-roll-ms", "5000"], ["--expire-ms", "3600000"], ["--timeout", "600"], ["--timeout", "1ms"],
        ["--timeout", "+0.5s"],
    ])
    func accepted(options: [String]) throws {
        let dir = try Scratch()
        let run = try Binary.run(["play"] + options + [try dir.wav()])
        expectError(run, status: 69)
    }

    @Test("--volume +300dB says what it would have been refused for, on one line")
    func volumeMessage() throws {
        let run = try Binary.run(["play", "--volume", "+300dB", "/nonexistent/x.wav"])
        expectError(run, status: 64)
        #expect(run.stderr == "duckprompt: volume +300dB is out of range (-200dB to +20dB)\n")
    }

    @Test("audio longer than 300 s is refused as by the service: 64 before a server is contacted")
    func tooLongAudio() throws {
        let dir = try Scratch()
        let path = dir.path("301s.wav")
        try DuckPromptTestSupport.run(["sox", "-n", "-r", "8000", "-c", "1", path, "synth", "301", "sine", "440"])
        let run = try Binary.run(["play", path])
        expectError(run, status: 64)
        #expect(run.stderr == "duckprompt: the prompt's audio lasts 301 s; a prompt lasts at most 300 s\n")
    }

    @Test("a value with a line break or an escape stays one line")
    func controlCharacters() throws {
        let run = try Binary.run(["play", "--volume", "-6dB\n\u{1B}[2J", "/nonexistent/x.wav"])
        expectError(run, status: 64)
        #expect(run.stderr.contains("'-6dB\\n\\u{1B}[2J'"), "\(run.stderr)")
    }
}

@Suite("duckprompt say text limit")
struct TextLimitCLITests {
    @Test("more than 5000 characters: 64 at once, naming the length and the limit", arguments: [
        ["say", String(repeating: "Turn left. ", count: 455)],                               // 5005, one argument
        ["say"] + Array(repeating: "left", count: 1001),                                   // words joined: 5004
        ["say", "--say", String(repeating: "a", count: 100_000), "Turn left"],              // 100 KB with --say
        ["play", "/nonexistent/x.wav", "--say", String(repeating: "é", count: 5001)],       // before the file (66)
    ])
    func tooLong(arguments: [String]) throws {
        let run = try Binary.run(arguments)
        expectError(run, status: 64)
        #expect(run.stderr.contains("characters long; a prompt says at most 5000"), "\(run.stderr)")
        #expect(run.seconds < timeLimit(1), "took \(run.seconds) s")
    }

    @Test("1 MB of text (as words) is refused in well under a second, without synthesizing")
    func megabyte() throws {
        // 1 MB of 63-letter words and spaces: 16384 arguments (within ARG_MAX's 2 MB).
        let run = try Binary.run(["say"] + Array(repeating: String(repeating: "a", count: 63), count: 16_384),
                                 environment: ["LD_DEBUG": "libs"])
        #expect(run.status == 64, "\(run.stderr.suffix(300))")
        #expect(run.stderr.contains("1048575 characters long"), "\(run.stderr.suffix(300))")
        #expect(!run.stderr.contains("libespeak-ng.so.1"), "libespeak-ng was loaded")
        #expect(run.seconds < timeLimit(1), "took \(run.seconds) s")
    }

    @Test("5000 characters are spoken (then there is no server: 69)")
    func atLimit() throws {
        let text = String(String(repeating: "Turn left. ", count: 455).prefix(5000))
        let run = try Binary.run(["say", text])
        expectError(run, status: 69)
    }
}
