import Foundation
import Testing
@testable import DuckPrompt
@testable import DuckPromptCore

@Suite("Config")
struct ConfigTests {
    static let path = "/home/u/.config/duckprompt/config.json"

    static func parse(_ json: String) throws -> DuckPromptConfig {
        try DuckPromptConfig.parse(Data(json.utf8), path: path)
    }

    // MARK: Valid files

    @Test("every key, read and validated")
    func everyKey() throws {
        let config = try Self.parse("""
            {
              "prefer": ["WH-1000XM*", "alsa_output.usb-*"],
              "ranking": ["car", "headphones", "bluetooth-a2dp"],
              "never": ["hdmi", "alsa_output.*HDMI*"],
              "pre_roll_ms": {"bluetooth-a2dp": 300, "hdmi": 500.0},
              "duck_db": -18.5,
              "attack_ms": 150,
              "release_ms": 0
            }
            """)
        #expect(config.prefer == ["WH-1000XM*", "alsa_output.usb-*"])
        #expect(config.preferSource == .config)
        #expect(config.ranking == [.car, .headphones, .bluetoothA2DP, .usb, .lineOut, .bluetoothHFP, .hdmi],
                "kinds left out follow in the default order")
        #expect(config.hasCustomRanking)
        #expect(config.never == [.kind(.hdmi), .pattern("alsa_output.*HDMI*")])
        #expect(config.preRollMs == [.bluetoothA2DP: 300, .hdmi: 500])
        #expect(config.preRollMs(for: .bluetoothA2DP) == 300)
        #expect(config.preRollMs(for: .usb) == nil)
        #expect(config.duck == Decibels(-18.5))
        #expect(config.attackMs == 150)
        #expect(config.releaseMs == 0)
        #expect(config.path == Self.path)
    }

    @Test("an empty object is the defaults")
    func emptyObject() throws {
        let config = try Self.parse("{}")
        #expect(config == DuckPromptConfig(path: Self.path))
        #expect(config.ranking == DuckPromptConfig.defaultRanking)
        #expect(!config.hasCustomRanking)
        #expect(config.prefer.isEmpty && config.never.isEmpty && config.preRollMs.isEmpty)
        #expect(config.duck == nil && config.attackMs == nil && config.releaseMs == nil)
    }

    // MARK: Errors

    struct Bad: Sendable, CustomTestStringConvertible {
        var json: String
        var message: String
        var testDescription: String { json }
    }

    static let validKeys = "valid keys: prefer, ranking, never, device, duck_db, duck_mode, no_pause, rewind_ms, "
        + "duck_exempt_role, attack_ms, release_ms, volume_db, latency_msec, pre_roll_ms, priority, expire_ms, on_busy, "
        + "during_call, call_duck_db, properties, voice, rate, players"
    static let kinds = "kinds are car, bluetooth-a2dp, bluetooth-hfp, usb, line-out, hdmi, headphones, speaker, "
        + "network, virtual, unknown"

    static let badFiles: [Bad] = [
        // Unknown keys
        Bad(json: #"{"prefered": ["x"]}"#,
            message: "unknown key 'prefered' (did you mean 'prefer'?); \(validKeys)"),
        Bad(json: #"{"volume": 3}"#, message: "unknown key 'volume'; \(validKeys)"),
        Bad(json: #"{"preRollMs": {}}"#, message: "unknown key 'preRollMs'; \(validKeys)"),
        // Wrong types
        Bad(json: #"{"prefer": "WH-*"}"#,
            message: "'prefer' must be an array of sink name patterns ([\"…\"]), not a string"),
        Bad(json: #"{"prefer": [1]}"#, message: "'prefer' entry 1 must be a string, not a number"),
        Bad(json: #"{"prefer": [""]}"#,
            message: "'prefer' entry 1 is empty: give a sink name pattern such as \"WH-*\""),
        Bad(json: #"{"ranking": {"car": 1}}"#, message: "'ranking' must be an array of device kinds, not an object"),
        Bad(json: #"{"never": [true]}"#, message: "'never' entry 1 must be a string, not true"),
        Bad(json: #"{"pre_roll_ms": [300]}"#,
            message: "'pre_roll_ms' must be an object of device kind to milliseconds ({\"bluetooth-a2dp\": 300}) or a whole number of ms, not an array"),
        Bad(json: #"{"pre_roll_ms": {"hdmi": "300"}}"#,
            message: "'pre_roll_ms.hdmi' must be a whole number of ms (0…5000), not a string"),
        Bad(json: #"{"duck_db": "-20dB"}"#,
            message: "'duck_db' must be a number of dB between -200 and 0, not a string"),
        Bad(json: #"{"duck_db": true}"#,
            message: "'duck_db' must be a number of dB between -200 and 0, not true"),
        Bad(json: #"{"attack_ms": 1.5}"#, message: "'attack_ms' must be a whole number of ms, not 1.5"),
        Bad(json: #"{"release_ms": null}"#,
            message: "'release_ms' must be a whole number of ms (0…60000), not null"),
        // Bad values
        Bad(json: #"{"duck_db": 6}"#, message: "duck +6dB is out of range (-200dB to 0dB)"),
        Bad(json: #"{"duck_db": -201}"#, message: "duck -201dB is out of range (-200dB to 0dB)"),
        Bad(json: #"{"attack_ms": -1}"#, message: "attack-ms -1 ms is out of range (0 to 60000 ms)"),
        Bad(json: #"{"release_ms": 60001}"#, message: "release-ms 60001 ms is out of range (0 to 60000 ms)"),
        Bad(json: #"{"pre_roll_ms": {"hdmi": 5001}}"#, message: "'pre_roll_ms.hdmi': pre-roll-ms 5001 ms is out of range (0 to 5000 ms)"),
        // Bad kinds
        Bad(json: #"{"ranking": ["bluetooth"]}"#, message: "'ranking': 'bluetooth' is not a device kind; \(kinds)"),
        Bad(json: #"{"ranking": ["hdmii"]}"#,
            message: "'ranking': 'hdmii' is not a device kind (did you mean 'hdmi'?); \(kinds)"),
        Bad(json: #"{"ranking": ["speaker"]}"#,
            message: "'ranking': 'speaker' is not an external kind; the ranking orders only car, bluetooth-a2dp, "
                + "bluetooth-hfp, usb, line-out, hdmi, headphones"),
        Bad(json: #"{"ranking": ["usb", "usb"]}"#, message: "'ranking': 'usb' is listed twice"),
        Bad(json: #"{"pre_roll_ms": {"bt": 300}}"#, message: "'pre_roll_ms': 'bt' is not a device kind; \(kinds)"),
        Bad(json: #"{"never": ["hdmii"]}"#,
            message: "'never': 'hdmii' is not a device kind (did you mean 'hdmi'?); \(kinds); for a sink name write "
                + "a pattern such as \"*hdmii*\""),
        Bad(json: #"{"never": [" "]}"#,
            message: "'never' holds an empty entry: give a device kind or a sink name pattern"),
        // Not a config at all
        Bad(json: #"["prefer"]"#, message: "must hold one JSON object ({\"prefer\": [...], ...}), not an array"),
    ]

    @Test("bad files: .config (exit 78), the message names the file and the key", arguments: badFiles)
    func badFile(_ bad: Bad) {
        let error = #expect(throws: DuckPromptError.self) { try Self.parse(bad.json) }
        #expect(error?.code == .config)
        #expect(error?.exitCode == 78)
        #expect(error?.message == "\(Self.path): \(bad.message)")
    }

    @Test("text that is not JSON is a .config error naming the file")
    func notJSON() {
        let error = #expect(throws: DuckPromptError.self) { try Self.parse("{\"prefer\": [\"x\",]") }
        #expect(error?.code == .config)
        #expect(error?.message.hasPrefix("\(Self.path): not valid JSON (") == true, "\(error?.message ?? "")")
    }

    @Test("a never entry that is a sink name pattern, not a kind, is kept as a pattern")
    func neverPatterns() throws {
        let config = try Self.parse(#"{"never": ["combined", "alsa_output.pci-0000_01_00.1.hdmi-stereo", "WH-*", "speakers-in-the-attic"]}"#)
        #expect(config.never == [.pattern("combined"), .pattern("alsa_output.pci-0000_01_00.1.hdmi-stereo"),
                                 .pattern("WH-*"), .pattern("speakers-in-the-attic")])
    }

    // MARK: Loading

    /// A fresh temporary directory, removed by the caller.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("duckprompt-config-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test("load: XDG_CONFIG_HOME first, HOME/.config otherwise, a relative XDG_CONFIG_HOME ignored")
    func paths() {
        #expect(DuckPromptConfig.path(environment: ["XDG_CONFIG_HOME": "/x/cfg", "HOME": "/home/u"])
                == "/x/cfg/duckprompt/config.json")
        #expect(DuckPromptConfig.path(environment: ["XDG_CONFIG_HOME": "/x/cfg/", "HOME": "/home/u"])
                == "/x/cfg/duckprompt/config.json")
        #expect(DuckPromptConfig.path(environment: ["HOME": "/home/u"]) == "/home/u/.config/duckprompt/config.json")
        #expect(DuckPromptConfig.path(environment: ["XDG_CONFIG_HOME": "cfg", "HOME": "/home/u"])
                == "/home/u/.config/duckprompt/config.json")
        #expect(DuckPromptConfig.path(environment: [:]) == nil)
    }

    @Test("load: a missing file is the defaults; DUCKPROMPT_DEVICE still applies")
    func missingFile() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let environment = ["XDG_CONFIG_HOME": directory.path]
        #expect(try DuckPromptConfig.load(environment: environment) == DuckPromptConfig())
        let withDevice = try DuckPromptConfig.load(environment: environment.merging(["DUCKPROMPT_DEVICE": " WH-* "]) { $1 })
        #expect(withDevice.prefer == ["WH-*"])
        #expect(withDevice.preferSource == .environment)
        #expect(withDevice.path == nil)
    }

    @Test("load: the file under XDG_CONFIG_HOME, DUCKPROMPT_DEVICE replacing its prefer list, an empty one not")
    func fileAndEnvironment() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("duckprompt/config.json")
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(#"{"prefer": ["a*", "b*"], "never": ["hdmi"]}"#.utf8).write(to: file)

        let fromFile = try DuckPromptConfig.load(environment: ["XDG_CONFIG_HOME": directory.path, "DUCKPROMPT_DEVICE": ""])
        #expect(fromFile.prefer == ["a*", "b*"])
        #expect(fromFile.preferSource == .config)
        #expect(fromFile.never == [.kind(.hdmi)])
        #expect(fromFile.path == file.path)

        let overridden = try DuckPromptConfig.load(environment: ["XDG_CONFIG_HOME": directory.path,
                                                                 "DUCKPROMPT_DEVICE": "c*"])
        #expect(overridden.prefer == ["c*"])
        #expect(overridden.preferSource == .environment)
        #expect(overridden.never == [.kind(.hdmi)], "only prefer is overridden")
    }

    @Test("load: HOME/.config/duckprompt/config.json when XDG_CONFIG_HOME is unset; errors name that file")
    func homeFallback() throws {
        let home = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: home) }
        let file = home.appendingPathComponent(".config/duckprompt/config.json")
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(#"{"ranking": ["usb"], "colour": "blue"}"#.utf8).write(to: file)
        let error = #expect(throws: DuckPromptError.self) { try DuckPromptConfig.load(environment: ["HOME": home.path]) }
        #expect(error?.code == .config)
        #expect(error?.message == "\(file.path): unknown key 'colour'; \(Self.validKeys)")
    }

    @Test("load: a directory where the file should be is a .config error")
    func directoryInstead() throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("duckprompt/config.json")
        try FileManager.default.createDirectory(at: file, withIntermediateDirectories: true)
        let error = #expect(throws: DuckPromptError.self) {
            try DuckPromptConfig.load(environment: ["XDG_CONFIG_HOME": directory.path])
        }
        #expect(error?.code == .config)
        #expect(error?.message.hasPrefix(file.path) == true)
    }

    @Test("load: a file over 1 MiB, a FIFO or /dev/zero is a .config error naming it, read no further",
          arguments: ["large", "fifo", "zero"])
    func boundedRead(kind: String) throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("duckprompt/config.json")
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        switch kind {
        case "large": // 50 MB of invalid JSON took 15 s and 1.3 GB before it was refused
            #expect(FileManager.default.createFile(atPath: file.path, contents: nil))
            #expect(truncate(file.path, 50_000_000) == 0)
        case "fifo": #expect(mkfifo(file.path, 0o600) == 0)
        default: try FileManager.default.createSymbolicLink(atPath: file.path, withDestinationPath: "/dev/zero")
        }
        let clock = ContinuousClock()
        var error: DuckPromptError?
        let took = clock.measure {
            error = #expect(throws: DuckPromptError.self) {
                try DuckPromptConfig.load(environment: ["XDG_CONFIG_HOME": directory.path])
            }
        }
        #expect(error?.code == .config)
        let reason = kind == "large" ? "is larger than 1 MiB: a config file is a few lines of JSON"
            : kind == "fifo" ? "is not a regular file (a FIFO)" : "is not a regular file (a character device)"
        #expect(error?.message == "\(file.path): \(reason)")
        #expect(took < .seconds(1))
    }

    // MARK: Patterns

    @Test("glob patterns: * and ? and backslash, case-sensitive, whole string", arguments: [
        ("WH-*", "WH-1000XM5", true),
        ("WH-*", "wh-1000xm5", false),
        ("*HDMI*", "alsa_output.pci-0000_01_00.1.hdmi-stereo", false),
        ("*hdmi*", "alsa_output.pci-0000_01_00.1.hdmi-stereo", true),
        ("alsa_output.*HDMI*", "alsa_output.platform-HDMI.0", true),
        ("bt?", "bt1", true),
        ("bt?", "bt", false),
        ("bt?", "bt12", false),
        ("*", "", true),
        ("", "", true),
        ("", "x", false),
        ("a*b*c", "aXbYbZc", true),
        ("a*b*c", "aXbYbZ", false),
        ("\\*literal", "*literal", true),
        ("\\*literal", "xliteral", false),
        ("**x", "abcx", true),
        ("speaker", "speaker", true),
        ("speaker", "speakers", false),
    ])
    func glob(pattern: String, text: String, matches: Bool) {
        #expect(Glob.matches(pattern, text) == matches)
    }

    @Test("exclusions match kinds, names and descriptions")
    func exclusions() {
        let config = DuckPromptConfig(never: [.kind(.hdmi), .pattern("*Attic*")])
        let sink = Sink(name: "tunnel.attic", description: "Speakers in the Attic")
        #expect(config.exclusion(for: sink, kind: .network) == .pattern("*Attic*"))
        #expect(config.exclusion(for: Sink(name: "x"), kind: .hdmi) == .kind(.hdmi))
        #expect(config.exclusion(for: Sink(name: "x"), kind: .speaker) == nil)
    }

    @Test("DuckPromptError.config exits 78")
    func exitCode() {
        #expect(DuckPromptError(.config, "x").exitCode == 78)
        #expect(DuckPromptError(.unavailable, "x").exitCode == 69)
    }
}
