import DuckPrompt
import DuckPromptService
import DuckPromptTestSupport
import Foundation
import Testing
@testable import DuckPromptCLI

// The table of a prompt's options (PromptOption) against its three fronts and everything that
// lists them: one bad value per option gets the same message from the command's parser, the
// config file's and the D-Bus service's; the help, the completions, the introspection XML and
// Docs/ name exactly the table's options, with its types and ranges.

@Suite("Options from one table")
struct OptionTableTests {
    /// One bad value of an option, as each front writes it, and the message all three give.
    struct Bad: Sendable {
        var words: [String]
        var json: String
        var bus: BusValue
        var message: String
    }

    /// For each option, by long name: a value out of its range, else one malformed for it.
    static let bad: [String: Bad] = [
        "device": Bad(words: [""], json: #""""#, bus: .string(""),
                      message: "device needs a sink name, #INDEX or @DEFAULT_SINK@"),
        "duck": Bad(words: ["6dB"], json: "6", bus: .double(6), message: "duck +6dB is out of range (-200dB to 0dB)"),
        "duck-mode": Bad(words: ["loud"], json: #""loud""#, bus: .string("loud"),
                         message: "duck-mode 'loud' is not one of: duck, mute, pause, none"),
        "rewind-ms": Bad(words: ["60001"], json: "60001", bus: .uint32(60001),
                         message: "rewind-ms 60001 ms is out of range (0 to 60000 ms)"),
        "duck-exempt-role": Bad(words: ["phone", ""], json: #"["phone", ""]"#, bus: .strings(["phone", ""]),
                                message: "duck-exempt-role needs a media.role, e.g. phone"),
        "attack-ms": Bad(words: ["70000"], json: "70000", bus: .uint32(70000),
                         message: "attack-ms 70000 ms is out of range (0 to 60000 ms)"),
        "release-ms": Bad(words: ["60001ms"], json: "60001", bus: .uint32(60001),
                          message: "release-ms 60001 ms is out of range (0 to 60000 ms)"),
        "volume": Bad(words: ["+30dB"], json: "30", bus: .double(30),
                      message: "volume +30dB is out of range (-200dB to +20dB)"),
        "latency-msec": Bad(words: ["0"], json: "0", bus: .uint32(0),
                            message: "latency-msec 0 ms is out of range (1 to 10000 ms)"),
        "pre-roll-ms": Bad(words: ["5001"], json: "5001", bus: .uint32(5001),
                           message: "pre-roll-ms 5001 ms is out of range (0 to 5000 ms)"),
        "priority": Bad(words: ["urgent"], json: #""urgent""#, bus: .string("urgent"),
                        message: "priority 'urgent' is not one of: important, message, text, notification, progress"),
        "expire-ms": Bad(words: ["3600001"], json: "3600001", bus: .uint32(3_600_001),
                         message: "expire-ms 3600001 ms is out of range (0 to 3600000 ms)"),
        "on-busy": Bad(words: ["queue"], json: #""queue""#, bus: .string("queue"),
                       message: "on-busy 'queue' is not one of: wait, drop"),
        "during-call": Bad(words: ["ignore"], json: #""ignore""#, bus: .string("ignore"),
                           message: "during-call 'ignore' is not one of: mix, defer, chime, drop"),
        "call-duck": Bad(words: ["+3dB"], json: "3", bus: .double(3), message: "call-duck +3dB is out of range (-200dB to 0dB)"),
        "property": Bad(words: ["=event"], json: #"{"": "event"}"#, bus: .stringMap(["": "event"]),
                        message: "property needs a name: KEY=VALUE"),
        "voice": Bad(words: [" "], json: #"" ""#, bus: .string(" "), message: "voice needs an espeak-ng voice, e.g. en"),
        "rate": Bad(words: ["451"], json: "451", bus: .uint32(451),
                    message: "rate 451 is out of range (80 to 450 words per minute)"),
    ]

    /// Options every value of which is good: a flag is given or not.
    static let noBadValue: Set<String> = ["no-pause"]

    /// The message a front's parser gives, or nil when it took the value.
    static func message(_ body: () throws -> Void) -> String? {
        do { try body() } catch let error as DuckPromptError { return error.message } catch {
            return "not a DuckPromptError: \(error)"
        }
        return nil
    }

    /// `duckprompt play --NAME WORD… x.wav`, as the command reads it (`PlayCommand`), then
    /// checked as `DuckPrompt.playBlocking` checks it.
    static func commandMessage(_ option: PromptOption, _ words: [String]) -> String? {
        message {
            let arguments = words.flatMap { ["--\(option.name)", $0] } + ["x.wav"]
            let given = try PlayCommand.scanner.scan(arguments, verb: "play")
            try PlayCommand.options(given, over: PlayOptions()).validate()
        }
    }

    static let configPath = "/home/u/.config/duckprompt/config.json"

    /// A config file holding the key (`DuckPromptConfig.parse`).
    static func configMessage(_ option: PromptOption, _ json: String) -> String? {
        message { _ = try DuckPromptConfig.parse(Data(#"{"\#(option.configKey)": \#(json)}"#.utf8), path: configPath) }
    }

    /// A D-Bus call's `a{sv}` holding the key (`ServiceOptions.parse`).
    static func busMessage(_ option: PromptOption, _ value: BusValue) -> String? {
        message { _ = try ServiceOptions.parse([option.busKey: value], defaults: PlayOptions()) }
    }

    @Test("A bad value of every option gets the same message from the command, the config file and D-Bus",
          arguments: PromptOption.all)
    func sameMessage(_ option: PromptOption) throws {
        guard let bad = Self.bad[option.name] else {
            #expect(Self.noBadValue.contains(option.name), "\(option.name): give it a bad value in OptionTableTests.bad")
            #expect(option.kind == .flag)
            return
        }
        let command = Self.commandMessage(option, bad.words)
        let config = Self.configMessage(option, bad.json)
        let bus = Self.busMessage(option, bad.bus)
        #expect(command == bad.message, "the command")
        #expect(config == "\(Self.configPath): \(bad.message)", "the config file")
        #expect(bus == bad.message, "D-Bus")
    }

    @Test("A good value is taken by every front and sets the same field")
    func sameOptions() throws {
        let words = ["--duck", "-12dB", "--duck-mode", "mute", "--no-pause", "--rewind-ms", "100", "--duck-exempt-role", "a11y",
                     "--attack-ms", "50", "--release-ms", "900", "--volume", "-6", "--latency-msec", "40", "--pre-roll-ms", "300",
                     "--priority", "text", "--expire-ms", "2000", "--on-busy", "drop", "--property", "media.role=event",
                     "--voice", "de", "--rate", "200", "--device", "#3", "--during-call", "chime", "--call-duck", "-6dB",
                     "x.wav"]
        let json = #"""
            {"duck_db": -12, "duck_mode": "mute", "no_pause": true, "rewind_ms": 100, "duck_exempt_role": ["a11y"],
             "attack_ms": 50, "release_ms": 900, "volume_db": -6, "latency_msec": 40, "pre_roll_ms": 300,
             "priority": "text", "expire_ms": 2000, "on_busy": "drop", "properties": {"media.role": "event"},
             "voice": "de", "rate": 200, "device": "#3", "during_call": "chime", "call_duck_db": -6}
            """#
        let bus: [String: BusValue] = [
            "duck": .double(-12), "duck-mode": .string("mute"), "no-pause": .bool(true), "rewind-ms": .uint32(100),
            "duck-exempt-role": .strings(["a11y"]), "attack-ms": .uint32(50), "release-ms": .uint32(900),
            "volume": .double(-6), "latency-msec": .uint32(40), "pre-roll-ms": .uint32(300), "priority": .string("text"),
            "expire-ms": .uint32(2000), "on-busy": .string("drop"), "properties": .stringMap(["media.role": "event"]),
            "voice": .string("de"), "rate": .uint32(200), "device": .string("#3"),
            "during-call": .string("chime"), "call-duck": .double(-6),
        ]
        #expect(Set(bus.keys) == Set(PromptOption.all.map(\.busKey)), "every option once")
        let command = try PlayCommand.options(try PlayCommand.scanner.scan(words, verb: "play"), over: PlayOptions())
        let config = PlayOptions(config: try DuckPromptConfig.parse(Data(json.utf8), path: Self.configPath))
        let service = try ServiceOptions.parse(bus, defaults: PlayOptions())
        for options in [command, config, service] {
            #expect(options.duck == Decibels(-12) && options.duckMode == .mute && !options.pausePlayers)
            #expect(options.rewindMs == 100 && options.exemptRoles == ["a11y"] && options.attackMs == 50)
            #expect(options.releaseMs == 900 && options.volume == Decibels(-6) && options.latencyMs == 40)
            #expect(options.preRollMs == 300 && options.priority == .text && options.expireMs == 2000)
            #expect(options.onBusy == .drop && options.properties == ["media.role": "event"])
            #expect(options.voice == "de" && options.wordsPerMinute == 200 && options.device == .index(3))
            #expect(options.duringCall == .chime && options.callDuck == Decibels(-6))
        }
    }

    // MARK: - What lists the options

    /// `--name` and `-x` of every option in the table.
    static var tableNames: Set<String> {
        Set(PromptOption.all.flatMap { option in ["--\(option.name)"] + (option.short.map { ["-\($0)"] } ?? []) })
    }

    /// The command's own options of play and say, which are not a prompt's (`PromptOption`'s
    /// comment says why), and the connection's.
    static let playOwn: Set<String> = ["--say", "--exit-with-parent", "-v", "--verbose", "--no-service", "--dry-run", "--json",
                                       "--keep-awake"]
    static let common: Set<String> = ["-s", "--server", "-n", "--client-name", "--timeout", "-h", "--help"]

    @Test("play and say --help list exactly the table's options, each with its value, range and default")
    func help() throws {
        let listed = helpOptions(Help.play).union(helpOptions(Help.say))
        #expect(listed.subtracting(Self.playOwn).subtracting(Self.common) == Self.tableNames)
        let entries = (HelpText(Help.play).blocks + HelpText(Help.say).blocks).compactMap { block -> (String, String)? in
            guard case .entry(let term, let description) = block else { return nil }
            return (term, description)
        }
        for option in PromptOption.all {
            let entry = entries.first { HelpText.optionNames(in: $0.0).contains("--\(option.name)") }
            guard let (term, description) = entry else {
                Issue.record("--\(option.name) has no entry in play's or say's help")
                continue
            }
            if let valueName = option.valueName { #expect(term.hasSuffix(" \(valueName)"), "\(term)") }
            #expect(description.hasPrefix(option.help), "--\(option.name) starts with \"\(option.help)\": \(description)")
            let shown: String? = switch option.kind {
            case .milliseconds(let range), .wordsPerMinute(let range): "\(range.lowerBound) to \(range.upperBound)"
            case .gain(let range): "\(Self.dB(range.lowerBound)) to \(Self.dB(range.upperBound))"
            case .choice(let words): words.joined(separator: "|")
            default: nil
            }
            if case .choice(let words) = option.kind {
                for word in words { #expect(description.contains(word), "--\(option.name): \(word)") }
            } else if let shown {
                #expect(description.contains(shown), "--\(option.name) says \(shown): \(description)")
            }
            if !option.defaultValue.isEmpty, option.kind != .flag {
                #expect(description.contains(option.defaultValue) && description.contains("default"),
                        "--\(option.name) says its default \(option.defaultValue): \(description)")
            }
        }
    }

    static func dB(_ value: Double) -> String { value > 0 ? "+\(Decibels(value))" : "\(Decibels(value))" }

    /// Every `--word` and `-x` of a piece of shell.
    static func options(in text: Substring) -> Set<String> {
        Set(text.matches(of: /(?:^|[\s("'{,*])(--?[a-zA-Z][a-zA-Z0-9-]*)/).map { String($0.output.1) })
    }

    /// The text from the first line holding `start` to the next line holding `end` after it.
    static func block(_ text: String, from start: String, to end: String) throws -> Substring {
        let from = try #require(text.range(of: start))
        let to = try #require(text[from.upperBound...].range(of: end))
        return text[from.lowerBound..<to.lowerBound]
    }

    @Test("The bash, zsh and fish completions offer exactly the table's options for play and say")
    func completions() throws {
        let valued = Set(PromptOption.all.filter { $0.kind != .flag }.flatMap { option in
            ["--\(option.name)"] + (option.short.map { ["-\($0)"] } ?? [])
        })
        let expected = Self.tableNames.union(Self.playOwn)

        let bash = try repositoryFile("share/completions/duckprompt.bash")
        let bashPlay = try Self.block(bash, from: "play | say)", to: ";;")
        let bashOptions = try Self.block(String(bashPlay), from: "opts=(", to: "valued=")
        #expect(Self.options(in: bashOptions) == expected, "bash opts")
        let bashValued = try Self.block(String(bashPlay), from: "valued=", to: "$common_valued")
        #expect(Self.options(in: bashValued) == valued.union(["--say", "--keep-awake"]), "bash valued")

        let zsh = try repositoryFile("share/completions/_duckprompt")
        let zshPlay = try Self.block(zsh, from: "  play=(", to: "\n  )")
        let zshOptions = Set(Self.options(in: zshPlay).map { $0.hasSuffix("+") ? String($0.dropLast()) : $0 })
        #expect(zshOptions == expected, "zsh play=(…)")
        let zshValued = Self.options(in: try Self.block(zsh, from: "  valued=(", to: ")\n"))
        #expect(valued.union(["--say", "--keep-awake"]).isSubset(of: zshValued), "zsh valued")

        let fish = try repositoryFile("share/completions/duckprompt.fish")
        var fishOptions = Set<String>()
        for line in fish.split(separator: "\n") where line.hasPrefix("complete -c duckprompt -n $playsay ") {
            for match in line.matches(of: /\s-([ls]) ([a-zA-Z][a-zA-Z0-9-]*)/) {
                fishOptions.insert(match.output.1 == "l" ? "--\(match.output.2)" : "-\(match.output.2)")
            }
        }
        #expect(fishOptions == expected, "fish $playsay")
        let fishValued = Self.options(in: try Self.block(fish, from: "set -l valued", to: "set -l i"))
        #expect(valued.union(["--say", "--keep-awake"]).isSubset(of: fishValued), "fish valued")
        for (name, file) in [("bash", bash), ("zsh", zsh), ("fish", fish)] {
            for option in PromptOption.all {
                guard case .choice(let words) = option.kind else { continue }
                for word in words { #expect(file.contains(word), "\(name): --\(option.name) \(word)") }
            }
        }
    }

    /// The `key type` lines of the options comment in the introspection XML.
    @Test("The introspection XML lists exactly the table's D-Bus keys, with their types")
    func introspectionXML() throws {
        let xml = try repositoryFile("share/dbus-1/interfaces/io.github.duckprompt.DuckPrompt1.xml")
        let comment = try Self.block(xml, from: "The options of Play, PlayFd, Say, Estimate and EstimateSay", to: "-->")
        var listed: [String: String] = [:]
        for match in comment.matches(of: /\n\s+([a-z-]+)\s+([a-z{}]+)\s*(?=\n)/) {
            listed[String(match.output.1)] = String(match.output.2)
        }
        // The prompt options' keys, and the service's own (`Handoff.stopWithCaller`).
        let table = Dictionary(uniqueKeysWithValues: PromptOption.all.map { ($0.busKey, $0.busType) })
            .merging([Handoff.stopWithCaller: "b"]) { a, _ in a }
        #expect(listed == table)
    }

    @Test("Docs/dbus.md's options table has exactly the table's keys, with their types")
    func dbusDoc() throws {
        let doc = try repositoryFile("Docs/dbus.md")
        let section = try Self.block(doc, from: "## Options", to: "## Signals")
        var listed: [String: String] = [:]
        for line in section.split(separator: "\n") where line.hasPrefix("| `") {
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            let type = cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            for key in cells[0].matches(of: /`([^`]+)`/) { listed[String(key.output.1)] = type }
        }
        // The prompt options' keys, and the service's own (`Handoff.stopWithCaller`).
        let table = Dictionary(uniqueKeysWithValues: PromptOption.all.map { ($0.busKey, $0.busType) })
            .merging([Handoff.stopWithCaller: "b"]) { a, _ in a }
        #expect(listed == table)
    }

    @Test("Docs/config.md describes exactly the keys the config file takes, every option's among them")
    func configDoc() throws {
        let doc = try repositoryFile("Docs/config.md")
        var listed = Set<String>()
        for line in doc.split(separator: "\n") where line.hasPrefix("- `") {
            let head = line.prefix { $0 != "(" }
            for key in head.matches(of: /`([a-z_]+)`/) { listed.insert(String(key.output.1)) }
        }
        #expect(listed == Set(DuckPromptConfig.validKeys))
        #expect(Set(PromptOption.all.map(\.configKey)).isSubset(of: Set(DuckPromptConfig.validKeys)))
    }
}
