import DuckPrompt
import DuckPromptService
import Testing

/// `ServiceOptions.parse`: the `a{sv}` a D-Bus caller gives, as the command's long options.
@Suite struct ServiceOptionsTests {
    static let defaults = PlayOptions()

    struct Accepted: Sendable, CustomTestStringConvertible {
        var options: [String: BusValue]
        var check: @Sendable (ServiceOptions) -> Bool
        var testDescription: String { options.keys.sorted().joined(separator: ",") }
    }

    static let accepted: [Accepted] = [
        Accepted(options: [:]) { $0.play.priority == .message && $0.play.duck == Decibels(-20) && $0.voice == nil },
        Accepted(options: ["priority": .string("important")]) { $0.play.priority == .important },
        Accepted(options: ["duck": .double(-12.5)]) { $0.play.duck == Decibels(-12.5) },
        Accepted(options: ["duck": .double(0)]) { $0.play.duck == Decibels(0) },
        Accepted(options: ["duck-mode": .string("mute")]) { $0.play.duckMode == .mute },
        Accepted(options: ["attack-ms": .uint32(50), "release-ms": .uint32(900)]) {
            $0.play.attackMs == 50 && $0.play.releaseMs == 900
        },
        Accepted(options: ["volume": .double(-6)]) { $0.play.volume == Decibels(-6) },
        Accepted(options: ["device": .string("#3")]) { $0.play.device == .index(3) },
        Accepted(options: ["device": .string("@DEFAULT_SINK@")]) { $0.play.device == .defaultSink },
        Accepted(options: ["expire-ms": .uint32(2000)]) { $0.play.expireMs == 2000 },
        Accepted(options: ["on-busy": .string("drop")]) { $0.play.onBusy == .drop },
        Accepted(options: ["pre-roll-ms": .uint32(300)]) { $0.play.preRollMs == 300 },
        Accepted(options: ["voice": .string("de"), "rate": .uint32(200)]) { $0.voice == "de" && $0.wordsPerMinute == 200 },
        Accepted(options: ["properties": .stringMap(["media.name": "turn left"])]) {
            $0.play.properties["media.name"] == "turn left"
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
        (["duck": .double(6)], "would raise other streams"),
        (["duck": .double(-500)], "duck -500"),
        (["duck": .double(.nan)], "duck"),
        (["volume": .double(30)], "volume (relative to the saved prompt volume) +30"),
        (["attack-ms": .uint32(70_000)], "attack 70000 ms is out of range"),
        (["pre-roll-ms": .uint32(9000)], "pre-roll 9000 ms is out of range"),
        (["rate": .uint32(5)], "rate 5 is out of range"),
        (["device": .string("")], "device needs a sink name"),
        (["properties": .stringMap(["": "x"])], "a property needs a name"),
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

    @Test("D-Bus error names: io.github.duckprompt.DuckPrompt1.Error.<Code>")
    func errorNames() {
        let names = [DuckPromptError.Code.noInput, .unsupportedData, .usage, .unavailable, .dropped, .internal, .config]
            .map(DuckPromptService.errorName(for:))
        #expect(names == ["NoInput", "UnsupportedData", "Usage", "Unavailable", "Dropped", "Internal", "Config"]
            .map { "io.github.duckprompt.DuckPrompt1.Error.\($0)" })
    }
}
