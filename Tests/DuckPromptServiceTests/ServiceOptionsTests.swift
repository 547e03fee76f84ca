import DuckPrompt
import DuckPromptService
import Testing

/// `ServiceOptions.parse`: the `a{sv}` a D-Bus caller gives, as the command's long options.
@Suite struct ServiceOptionsTests {
    static let defaults = PlayOptions()

    struct Accepted: Sendable, CustomTestStringConvertible {
        var options: [String: BusValue]
        var check: @Sendable (PlayOptions) -> Bool
        var testDescription: String { options.keys.sorted().joined(separator: ",") }
    }

    static let accepted: [Accepted] = [
        Accepted(options: [:]) { $0.priority == .message && $0.duck == Decibels(-20) && $0.voice == nil },
        Accepted(options: ["priority": .string("important")]) { $0.priority == .important },
        Accepted(options: ["duck": .double(-12.5)]) { $0.duck == Decibels(-12.5) },
        Accepted(options: ["duck": .double(0)]) { $0.duck == Decibels(0) },
        Accepted(options: ["duck-mode": .string("mute")]) { $0.duckMode == .mute },
        Accepted(options: ["attack-ms": .uint32(50), "release-ms": .uint32(900)]) {
            $0.attackMs == 50 && $0.releaseMs == 900
        },
        Accepted(options: ["volume": .double(-6)]) { $0.volume == Decibels(-6) },
        Accepted(options: ["device": .string("#3")]) { $0.device == .index(3) },
        Accepted(options: ["device": .string("@DEFAULT_SINK@")]) { $0.device == .defaultSink },
        Accepted(options: ["expire-ms": .uint32(2000)]) { $0.expireMs == 2000 },
        Accepted(options: ["on-busy": .string("drop")]) { $0.onBusy == .drop },
        Accepted(options: ["pre-roll-ms": .uint32(300)]) { $0.preRollMs == 300 },
        Accepted(options: ["voice": .string("de"), "rate": .uint32(200)]) { $0.voice == "de" && $0.wordsPerMinute == 200 },
        Accepted(options: ["duck-exempt-role": .strings(["phone", "a11y"])]) { $0.exemptRoles == ["phone", "a11y"] },
        Accepted(options: ["latency-msec": .uint32(40)]) { $0.latencyMs == 40 },
        Accepted(options: ["no-pause": .bool(true)]) { !$0.pausePlayers },
        Accepted(options: ["properties": .stringMap(["media.name": "turn left"])]) {
            $0.properties["media.name"] == "turn left"
        },
    ]

    @Test("Each option key with its type sets the field the command's long option sets", arguments: accepted)
    func accepts(_ row: Accepted) throws {
        let parsed = try ServiceOptions.parse(row.options, defaults: Self.defaults)
        #expect(row.check(parsed))
    }

    static let refused: [(options: [String: BusValue], mentions: String)] = [
        (["loudness": .double(1)], "unknown option 'loudness'"),
        (["duck": .string("-20dB")], "option 'duck' takes a value of type d, not s"),
        (["attack-ms": .int32(50)], "option 'attack-ms' takes a value of type u, not i"),
        (["priority": .string("urgent")], "priority 'urgent' is not one of: "),
        (["duck-mode": .string("loud")], "duck-mode 'loud' is not one of"),
        (["on-busy": .string("queue")], "on-busy 'queue' is not one of"),
        (["duck": .double(6)], "duck +6dB is out of range (-200dB to 0dB)"),
        (["duck": .double(-500)], "duck -500dB is out of range"),
        (["duck": .double(.nan)], "duck"),
        (["volume": .double(30)], "volume +30dB is out of range (-200dB to +20dB)"),
        (["volume": .double(20.04)], "volume +20.04dB is out of range"),
        (["volume": .double(-200.26)], "volume -200.3dB is out of range"),
        (["attack-ms": .uint32(70_000)], "attack-ms 70000 ms is out of range (0 to 60000 ms)"),
        (["pre-roll-ms": .uint32(9000)], "pre-roll-ms 9000 ms is out of range"),
        (["latency-msec": .uint32(0)], "latency-msec 0 ms is out of range (1 to 10000 ms)"),
        (["rate": .uint32(5)], "rate 5 is out of range (80 to 450 words per minute)"),
        (["device": .string("")], "device needs a sink name"),
        (["duck-exempt-role": .strings([""])], "duck-exempt-role needs a media.role"),
        (["duck-exempt-role": .string("phone")], "option 'duck-exempt-role' takes a value of type as, not s"),
        (["properties": .stringMap(["": "x"])], "property needs a name"),
    ]

    @Test("An unknown key, a wrong type, a word not among the choices or a number out of range is a Usage error naming it",
          arguments: refused)
    func refuses(_ options: [String: BusValue], mentions: String) {
        #expect {
            try ServiceOptions.parse(options, defaults: Self.defaults)
        } throws: { error in
            guard let error = error as? DuckPromptError else { return false }
            return error.code == .usage && error.message.contains(mentions)
        }
    }

    @Test("stop-with-caller, the service's own key: taken out before the prompt options are read, a boolean only; unknown keys' message lists it")
    func stopWithCaller() throws {
        let (left, stops) = try ServiceOptions.splitStopWithCaller(["stop-with-caller": .bool(true), "duck": .double(0)])
        #expect(stops && left == ["duck": .double(0)])
        #expect(try ServiceOptions.splitStopWithCaller(["duck": .double(0)]).stops == false)
        #expect(try ServiceOptions.splitStopWithCaller(["stop-with-caller": .bool(false)]).stops == false)
        #expect {
            try ServiceOptions.splitStopWithCaller(["stop-with-caller": .uint32(1)])
        } throws: { error in
            (error as? DuckPromptError)?.message == "option 'stop-with-caller' takes a value of type b, not u"
        }
        #expect {
            try ServiceOptions.parse(["loudness": .double(1)], defaults: Self.defaults)
        } throws: { error in
            (error as? DuckPromptError)?.message.contains("stop-with-caller") == true
        }
    }

    @Test("D-Bus error names: io.github.duckprompt.DuckPrompt1.Error.<Code>")
    func errorNames() {
        let names = [DuckPromptError.Code.noInput, .unsupportedData, .usage, .unavailable, .dropped, .internal, .config]
            .map(DuckPromptService.errorName(for:))
        #expect(names == ["NoInput", "UnsupportedData", "Usage", "Unavailable", "Dropped", "Internal", "Config"]
            .map { "io.github.duckprompt.DuckPrompt1.Error.\($0)" })
    }
}
