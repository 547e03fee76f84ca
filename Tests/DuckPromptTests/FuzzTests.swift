import Foundation
import Testing
@testable import DuckPrompt
@testable import DuckPromptCore

// Hostile and odd input (issue 13): every file reader fed mutations of real fixtures — bit
// flips, truncation, splices of other files, huge and odd numbers, deep nesting, invalid
// UTF-8 — from a seeded generator, so a run is the same every time and a failure names the
// case that reproduces it. The readers must not crash, hang or take long, and a journal that
// is refused must never lead to a volume write.
//
// Budget: the suite runs in about 4.4 s in a debug build and 11.3 s under ThreadSanitizer,
// which Scripts/test also runs in CI (each test checks its own time, see `fuzz`).

/// SplitMix64: small, fast, and the same sequence on every machine for a seed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Mutations of a seed text, as a fuzzer makes them.
enum Mutator {
    /// Numbers that break parsers and bounds.
    static let oddNumbers = ["99999999999999999999999999", "-1", "4294967295", "4294967296", "1e400", "-1e400",
                             "NaN", "-0", "18446744073709551616", "0x10", "2147483647", "655360", "1e-400", "0.0000001"]

    /// One mutation (or two, a quarter of the time) of `seed`, `others` giving splice material.
    static func mutate(_ seed: [UInt8], others: [[UInt8]], using rng: inout SeededGenerator) -> [UInt8] {
        var bytes = seed
        let rounds = Int.random(in: 0..<4, using: &rng) == 0 ? 2 : 1
        for _ in 0..<rounds { bytes = once(bytes, others: others, using: &rng) }
        return bytes
    }

    private static func position(_ bytes: [UInt8], _ rng: inout SeededGenerator) -> Int {
        bytes.isEmpty ? 0 : Int.random(in: 0...bytes.count, using: &rng)
    }

    private static func once(_ input: [UInt8], others: [[UInt8]], using rng: inout SeededGenerator) -> [UInt8] {
        var bytes = input
        switch Int.random(in: 0..<10, using: &rng) {
        case 0: // bit flips
            guard !bytes.isEmpty else { return bytes }
            for _ in 0..<Int.random(in: 1...8, using: &rng) {
                let i = Int.random(in: 0..<bytes.count, using: &rng)
                bytes[i] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &rng)
            }
        case 1: // truncation
            bytes = Array(bytes.prefix(position(bytes, &rng)))
        case 2: // splice: a piece of another file (or this one) put somewhere
            let donor = others.randomElement(using: &rng) ?? bytes
            guard !donor.isEmpty else { return bytes }
            let a = Int.random(in: 0..<donor.count, using: &rng)
            let b = min(donor.count, a + Int.random(in: 1...4096, using: &rng))
            let at = position(bytes, &rng)
            if Bool.random(using: &rng) {
                bytes.insert(contentsOf: donor[a..<b], at: at)
            } else {
                bytes.replaceSubrange(at..<min(bytes.count, at + (b - a)), with: donor[a..<b])
            }
        case 3: // a run of digits replaced by an odd number
            let digits = bytes.indices.filter { bytes[$0] >= 0x30 && bytes[$0] <= 0x39 }
            guard let start = digits.randomElement(using: &rng) else { return bytes }
            var end = start
            while end < bytes.count, bytes[end] >= 0x30 && bytes[end] <= 0x39 { end += 1 }
            bytes.replaceSubrange(start..<end, with: Array(oddNumbers.randomElement(using: &rng)!.utf8))
        case 4: // deep nesting
            let depth = [50, 511, 512, 600, 5000].randomElement(using: &rng)!
            let (open, close): (String, String) = Bool.random(using: &rng) ? ("[", "]") : ("{\"a\":", "}")
            let at = position(bytes, &rng)
            let inner = String(repeating: open, count: depth) + "1" + String(repeating: close, count: Bool.random(using: &rng) ? depth : depth / 2)
            bytes.insert(contentsOf: Array(inner.utf8), at: at)
        case 5: // a slice repeated
            guard !bytes.isEmpty else { return bytes }
            let a = Int.random(in: 0..<bytes.count, using: &rng)
            let b = min(bytes.count, a + Int.random(in: 1...512, using: &rng))
            let copies = Int.random(in: 2...40, using: &rng)
            bytes.insert(contentsOf: Array(repeating: Array(bytes[a..<b]), count: copies).joined(), at: b)
        case 6: // a slice deleted
            guard !bytes.isEmpty else { return bytes }
            let a = Int.random(in: 0..<bytes.count, using: &rng)
            bytes.removeSubrange(a..<min(bytes.count, a + Int.random(in: 1...256, using: &rng)))
        case 7: // invalid UTF-8, NUL, control bytes
            let junk: [[UInt8]] = [[0xFF], [0xC3], [0xED, 0xA0, 0x80], [0], [0x1B, 0x5B], [0xF4, 0x90, 0x80, 0x80], [0x0D]]
            for _ in 0..<Int.random(in: 1...4, using: &rng) {
                bytes.insert(contentsOf: junk.randomElement(using: &rng)!, at: position(bytes, &rng))
            }
        case 8: // a structural byte swapped for another
            let structural: [UInt8] = Array("{}[]\":,\n\t =#*<>".utf8)
            let spots = bytes.indices.filter { structural.contains(bytes[$0]) }
            guard let i = spots.randomElement(using: &rng) else { return bytes }
            bytes[i] = structural.randomElement(using: &rng)!
        default: // random bytes over a stretch
            guard !bytes.isEmpty else { return bytes }
            let a = Int.random(in: 0..<bytes.count, using: &rng)
            for i in a..<min(bytes.count, a + Int.random(in: 1...64, using: &rng)) {
                bytes[i] = UInt8.random(in: 0...255, using: &rng)
            }
        }
        return bytes
    }
}

/// What happens to a dump between a terminal and an issue comment: lines lost or pasted twice,
/// a paste cut off, a byte changed (issue 17).
enum LineMutator {
    /// One to three line-level edits of `seed`.
    static func mutate(_ seed: [UInt8], using rng: inout SeededGenerator) -> [UInt8] {
        var lines = seed.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map(Array.init)
        for _ in 0..<Int.random(in: 1...3, using: &rng) {
            guard !lines.isEmpty else { break }
            let i = Int.random(in: 0..<lines.count, using: &rng)
            switch Int.random(in: 0..<5, using: &rng) {
            case 0: // a run of lines deleted
                lines.removeSubrange(i..<min(lines.count, i + Int.random(in: 1...8, using: &rng)))
            case 1: // a run of lines pasted twice
                let run = lines[i..<min(lines.count, i + Int.random(in: 1...8, using: &rng))]
                lines.insert(contentsOf: run, at: i)
            case 2: // cut off at a line, or within it
                lines.removeSubrange((i + 1)...)
                if Bool.random(using: &rng), !lines[i].isEmpty {
                    lines[i] = Array(lines[i].prefix(Int.random(in: 0..<lines[i].count, using: &rng)))
                }
            case 3: // a byte flipped in a line
                guard !lines[i].isEmpty else { continue }
                let at = Int.random(in: 0..<lines[i].count, using: &rng)
                lines[i][at] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &rng)
            default: // two lines swapped
                let j = Int.random(in: 0..<lines.count, using: &rng)
                lines.swapAt(i, j)
            }
        }
        return Array(lines.joined(separator: [UInt8(ascii: "\n")]))
    }
}

/// Runs `body` for `count` mutations of `seeds`; fails with the case's number on a case over
/// 5 s, and when all take over 5 × `budget` seconds: a hang or a reader gone quadratic, never
/// noise. Speed is the bench's to measure (Scripts/bench, figure 6), not a test's: `budget` is
/// about 4 times what a debug build takes on a busy 2-core machine, and the tests' own load
/// (helpers building beside them) once took the config fuzz to 1.13 × it; 4 times more under
/// ThreadSanitizer, which measured 2.6 times slower here.
func fuzz(_ name: String, seeds: [[UInt8]], count: Int, seed: UInt64, budget: Double,
          _ body: (_ input: [UInt8], _ caseNumber: Int) throws -> Void) rethrows {
    var rng = SeededGenerator(seed: seed)
    let clock = ContinuousClock()
    let sanitized = ProcessInfo.processInfo.environment["DUCKPROMPT_TEST_SANITIZER"] != nil
    let scale = (sanitized ? 4.0 : 1.0) * 5
    var slowest = (Duration.zero, -1)
    let total = try clock.measure {
        for n in 0..<count {
            let input = Mutator.mutate(seeds[n % seeds.count], others: seeds, using: &rng)
            let took = try clock.measure { try body(input, n) }
            if took > slowest.0 { slowest = (took, n) }
        }
    }
    let seconds = Double(total.components.seconds) + Double(total.components.attoseconds) * 1e-18
    print("FUZZ \(name): \(count) cases \(seconds) s, slowest #\(slowest.1) \(slowest.0)")
    #expect(seconds < budget * scale, "\(name): \(count) cases took \(seconds) s (budget \(budget * scale) s); slowest case #\(slowest.1): \(slowest.0)")
    #expect(slowest.0 < .seconds(1 * scale), "\(name): case #\(slowest.1) (seed \(seed)) took \(slowest.0)")
}

@Suite("Fuzz: dumps, config, journals", .serialized)
struct FuzzTests {
    static let wpctl = """
        id 56, type PipeWire:Interface:Node
            alsa.card = "0"
          * device.api = "alsa"
            device.bus = "usb"
          * media.class = "Audio/Sink"
          * node.description = "USB Audio Analog Stereo"
          * node.name = "alsa_output.usb-Generic_USB_Audio-00.analog-stereo"
            object.serial = "58"
        """

    /// The dump fixtures under 12 KiB (with wpctl text), fed many times, and the larger ones
    /// (16 to 228 KiB), fed a few times: in a debug build the readers take about 1 ms per
    /// 10 KiB each.
    static func dumpSeeds() throws -> (small: [[UInt8]], large: [[UInt8]]) {
        let root = try SinkFixture.url("sinks").deletingLastPathComponent()
        var small: [[UInt8]] = [Array(wpctl.utf8)]
        var large: [[UInt8]] = []
        for dir in ["sinks", "sinks-localised", "sinks-json", "pw-dump", "forwarding", "formats"] {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(dir).path).sorted() else {
                continue
            }
            for name in names where name.hasSuffix(".txt") || name.hasSuffix(".json") {
                let bytes = Array(try Data(contentsOf: root.appendingPathComponent(dir).appendingPathComponent(name)))
                if bytes.count > 12_000 { large.append(bytes) } else { small.append(bytes) }
            }
        }
        try #require(small.count >= 20 && large.count >= 3, "fixtures missing: \(small.count) small, \(large.count) large")
        return (small, large)
    }

    /// The five format readers; case n runs reader n % 5.
    static func formatReader(_ n: Int, _ text: String) {
        switch n % 5 {
        case 0: _ = PactlTextReader.read(text)
        case 1: _ = PacmdTextReader.read(text)
        case 2: _ = WpctlInspectReader.read(text)
        case 3: _ = try? PactlJSONReader.readList(text)
        default: _ = try? PwDumpReader.read(text, math: .libpulse)
        }
    }

    /// One format reader (in turn), then the dispatcher (which runs the reader of the format
    /// it detects): none may crash; the dispatcher either throws `.unsupportedData` or returns
    /// at least one sink with a name, which classifies and routes.
    static func readAll(_ bytes: [UInt8], case n: Int) {
        let text = String(decoding: bytes, as: UTF8.self)
        formatReader(n, text)
        do {
            let snapshot = try SinkDumpReader.readSnapshot(text)
            #expect(snapshot.sinks.contains { !$0.name.isEmpty }, "case \(n)")
            _ = DeviceListing(snapshot: snapshot, request: nil, config: DuckPromptConfig())
        } catch let error as DuckPromptError {
            #expect(error.code == .unsupportedData, "case \(n)")
        } catch {
            Issue.record("case \(n): readSnapshot threw \(error)")
        }
    }

    @Test("every fixture dump, 3000 times: lines deleted, pasted twice, swapped, cut off, bytes flipped; each read ends in sinks or exit 65, none slow")
    func pastedDumps() throws {
        let seeds = try Self.dumpSeeds()
        var rng = SeededGenerator(seed: 0x17_01)
        let clock = ContinuousClock()
        var slowest = (Duration.zero, -1)
        let sanitized = ProcessInfo.processInfo.environment["DUCKPROMPT_TEST_SANITIZER"] != nil
        let total = clock.measure {
            for n in 0..<3000 {
                // Every small fixture in turn; every 20th case one of the large ones (16 to
                // 228 KiB), which take 10 to 100 times as long to read.
                let seed = n % 20 == 19 ? seeds.large[(n / 20) % seeds.large.count] : seeds.small[n % seeds.small.count]
                let input = LineMutator.mutate(seed, using: &rng)
                let took = clock.measure { Self.readAll(input, case: n) }
                if took > slowest.0 { slowest = (took, n) }
            }
        }
        print("FUZZ pasted dumps: 3000 cases \(total), slowest #\(slowest.1) \(slowest.0)")
        #expect(slowest.0 < .seconds(sanitized ? 4 : 1), "case #\(slowest.1) took \(slowest.0)")
        #expect(total < .seconds(sanitized ? 160 : 40), "3000 cases took \(total)")
    }

    @Test("dump readers (pactl text, pacmd, pactl JSON, pw-dump, wpctl): 800 mutated fixtures, no crash, no slow case")
    func dumps() throws {
        let seeds = try Self.dumpSeeds()
        fuzz("dumps", seeds: seeds.small, count: 800, seed: 0x13_05, budget: 8) { input, n in Self.readAll(input, case: n) }
        fuzz("large dumps", seeds: seeds.large, count: 10, seed: 0x13_06, budget: 3) { input, n in Self.readAll(input, case: n) }
    }

    static let configSeeds: [String] = [
        """
        {
          "prefer": ["WH-1000XM*", "alsa_output.usb-*"],
          "ranking": ["car", "headphones", "bluetooth-a2dp", "usb", "line-out", "bluetooth-hfp", "hdmi"],
          "never": ["hdmi", "alsa_output.*HDMI*"],
          "pre_roll_ms": {"bluetooth-a2dp": 300, "hdmi": 500},
          "duck_db": -20,
          "attack_ms": 200,
          "release_ms": 500
        }
        """,
        #"{"duck_db": -200, "attack_ms": 0, "release_ms": 60000, "never": ["*\\*"]}"#,
        #"{"prefer": ["a?b", "x*"], "pre_roll_ms": {"car": 5000, "usb": 0}}"#,
        "{}",
    ]

    @Test("config parser: 1000 mutated configs, each valid or a .config error naming the file")
    func config() throws {
        let seeds = Self.configSeeds.map { Array($0.utf8) }
        fuzz("config", seeds: seeds, count: 1000, seed: 0x13_0C, budget: 4) { input, n in
            do {
                let config = try DuckPromptConfig.parse(Data(input), path: "/fuzz/config.json")
                if let duck = config.duck { #expect(duck.value >= -200 && duck.value <= 0, "case \(n)") }
                #expect(config.preRollMs.values.allSatisfy { (0...5000).contains($0) }, "case \(n)")
            } catch let error as DuckPromptError {
                #expect(error.code == .config && error.message.hasPrefix("/fuzz/config.json: "), "case \(n): \(error)")
                #expect(!error.message.contains("\n"), "case \(n): a message of more than one line")
            } catch {
                Issue.record("case \(n): parse threw \(error)")
            }
        }
    }

    /// Real journals: a duck, a mute, a handover with its gain, a prompt slot, many streams.
    static func journalSeeds() throws -> [[UInt8]] {
        let n = VolumeMath.norm
        let music = RestoreKey(mediaRole: "music", applicationName: "mpv")
        var duck = DuckJournal(pid: 4321, processStart: 99, server: nil, runtimeDir: "/run/user/1000",
                               serverName: "PulseAudio (on PipeWire 0.3.65)", depth: -20,
                               streams: [.init(index: 12, original: ChannelVolumes([n, 52000]), key: music),
                                         .init(index: 40, original: ChannelVolumes([30000]),
                                               key: RestoreKey(applicationName: "game", streamRestoreID: "sink-input-by-application-name:game"))],
                               ended: [.init(key: RestoreKey(mediaRole: "video"), original: ChannelVolumes([n, n]))],
                               updated: Date(timeIntervalSince1970: 1_750_000_000))
        var mute = duck
        mute.depth = -.infinity
        var handover = duck
        handover.gain = -7.5
        duck.ended.append(.init(key: RestoreKey(mediaRole: "navigation"), original: ChannelVolumes([n])))
        var many = duck
        many.streams = (0..<40).map { .init(index: UInt32(100 + $0), original: ChannelVolumes(Array(repeating: UInt32(20000 + $0 * 100), count: 1 + $0 % 8)),
                                             key: RestoreKey(mediaRole: "music\($0)")) }
        return try [duck, mute, handover, many].map { Array(try $0.encoded()) }
    }

    /// A seed journal with one field set to a value a forger would write: too many or no
    /// channels, a volume above 153 % or all 0, a depth or gain out of range, PA_INVALID_INDEX,
    /// a stream listed twice, an ended stream without a key, a key with NUL or 2000 bytes.
    /// Some stay in bounds (a quiet volume, a plausible depth), so both outcomes occur.
    static func forge(_ seed: [UInt8], using rng: inout SeededGenerator) throws -> [UInt8] {
        var j = try DuckJournal.decoded(from: Data(seed))
        let s = Int.random(in: 0..<j.streams.count, using: &rng)
        let odd: [UInt32] = [0, 1, 65536, VolumeMath.uiMax, VolumeMath.uiMax + 1, 655_360, UInt32.max / 2, UInt32.max]
        switch Int.random(in: 0..<9, using: &rng) {
        case 0: j.streams[s].original = ChannelVolumes(Array(repeating: 40000, count: [0, 1, 32, 33, 1000].randomElement(using: &rng)!))
        case 1: j.streams[s].original.values[0] = odd.randomElement(using: &rng)!
        case 2: j.streams[s].original = ChannelVolumes(Array(repeating: 0, count: j.streams[s].original.values.count))
        case 3: j.depth = [-300, -200, -199.9, 0, 0.1, 20, .nan, .infinity, -.infinity].randomElement(using: &rng)!
        case 4: j.gain = [-300, -20, -10, 0, 1, .nan, .infinity, -.infinity].randomElement(using: &rng)!
        case 5: j.streams[s].index = [UInt32.max, 0, j.streams[(s + 1) % j.streams.count].index].randomElement(using: &rng)!
        case 6: j.ended.append(.init(key: RestoreKey(), original: ChannelVolumes([30000])))
        case 7: j.streams[s].key.applicationName = ["a\u{0}b", String(repeating: "x", count: 2000), "ok"].randomElement(using: &rng)!
        default: j.ended.append(.init(key: RestoreKey(mediaRole: "music"), original: ChannelVolumes([odd.randomElement(using: &rng)!, 30000])))
        }
        let bytes = Array(try j.encoded())
        return Int.random(in: 0..<4, using: &rng) == 0 ? Mutator.mutate(bytes, others: [], using: &rng) : bytes
    }

    /// Live streams for a journal: each of its streams at a ducked level, and some strangers.
    static func live(for journal: DuckJournal) -> [SinkInput] {
        var inputs: [SinkInput] = []
        for stream in journal.streams.prefix(64) {
            var p: [String: String] = [:]
            p["media.role"] = stream.key.mediaRole
            p["application.name"] = stream.key.applicationName
            p["application.id"] = stream.key.applicationID
            p["module-stream-restore.id"] = stream.key.streamRestoreID
            let depth = journal.depth.isFinite ? journal.depth : -.infinity
            inputs.append(SinkInput(index: stream.index, sinkIndex: 0,
                                    volume: VolumeMath.scale(stream.original, by: max(depth, -60)), properties: p))
        }
        inputs.append(SinkInput(index: 7, sinkIndex: 0, volume: ChannelVolumes([30000, 30000]), properties: ["media.role": "music"]))
        return inputs
    }

    /// What recovery would write for `journal`: only bounded volumes, only to a live stream of
    /// the same index, key and channel count.
    static func checkActions(_ journal: DuckJournal, case n: Int) {
        let live = Self.live(for: journal)
        for action in journal.restoreActions(live: live, math: .libpulse) {
            switch action {
            case .setVolume(let index, let volume):
                let input = live.first { $0.index == index }
                #expect(input != nil && RestoreKey(input!) == journal.streams.first { $0.index == index }?.key, "case \(n)")
                #expect(input?.volume.values.count == volume.values.count, "case \(n)")
                #expect(DuckJournal.problem(original: volume, key: RestoreKey()) == nil, "case \(n): writes \(volume)")
            case .repairSaved(let key, let volume):
                #expect(key != RestoreKey(), "case \(n)")
                #expect(DuckJournal.problem(original: volume, key: key) == nil, "case \(n): repairs \(volume)")
            }
        }
    }

    @Test("journal decoder: 1000 mutated and forged journals; each is refused or within bounds, and only then acted on")
    func journals() throws {
        let seeds = try Self.journalSeeds()
        var accepted = 0, refused = 0, outOfBounds = 0
        var rng = SeededGenerator(seed: 0x13_F0)
        fuzz("journals", seeds: seeds, count: 1000, seed: 0x13_05_1, budget: 5) { mutated, n in
            // Half the cases are byte mutations, half forged values.
            let input = n % 2 == 0 ? mutated : (try? Self.forge(seeds[n % seeds.count], using: &rng)) ?? mutated
            do {
                let journal = try DuckJournal.decoded(from: Data(input))
                accepted += 1
                #expect(throws: Never.self, "case \(n)") { try journal.validate() }
                Self.checkActions(journal, case: n)
            } catch let error as DuckPromptError {
                refused += 1
                if error.message.hasPrefix("refused: ") { outOfBounds += 1 }
                #expect(error.code == .unsupportedData, "case \(n)")
            } catch {
                Issue.record("case \(n): decoded threw \(error)")
            }
        }
        // Every outcome is exercised (a mutator that broke everything would test nothing):
        // the counts with these seeds are printed.
        print("FUZZ accepted \(accepted), refused \(refused), \(outOfBounds) by the bounds")
        #expect(accepted > 40 && refused > 300 && outOfBounds > 100, "accepted \(accepted), refused \(refused), \(outOfBounds) by the bounds")
    }

    @Test("journal files: 150 mutated journals of a dead pid through JournalStore.orphans; a refused one is never returned")
    func journalFiles() throws {
        let rt = try TempRuntime()
        let store = try JournalStore(runtimeDir: rt.path)
        // A pid above any pid_max (2^22): no process has it, and the bytes are the same every run.
        let dead: Int32 = 2_000_000_000
        let seeds = try Self.journalSeeds().map { seed -> [UInt8] in
            var j = try DuckJournal.decoded(from: Data(seed))
            j.pid = dead
            return Array(try j.encoded())
        }
        let path = "\(rt.journalDir)/journal-\(dead).json"
        fuzz("journal files", seeds: seeds, count: 150, seed: 0x13_05_2, budget: 2) { input, n in
            _ = FileManager.default.createFile(atPath: path, contents: Data(input))
            var problems: [JournalProblem] = []
            let found = (try? store.orphans { problems.append($0) }) ?? []
            let decodes = (try? DuckJournal.decoded(from: Data(input))) != nil
            if let (foundPath, journal) = found.first {
                #expect(decodes && foundPath == path && problems.isEmpty, "case \(n)")
                #expect(throws: Never.self, "case \(n)") { try journal.validate() }
                Self.checkActions(journal, case: n)
            } else {
                // Refused (or a pid the mutation changed): reported, naming the file; never returned.
                #expect(problems.count == 1 && problems.first?.path == path, "case \(n): \(problems)")
            }
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    @Test("bounded(): any journal, however wild, is written within validate()'s bounds")
    func boundedAlwaysValid() throws {
        var rng = SeededGenerator(seed: 0x13_B0)
        let volumes: [UInt32] = [0, 1, 30000, VolumeMath.norm, VolumeMath.uiMax, VolumeMath.uiMax + 1, 655_360, UInt32.max / 2, UInt32.max]
        let depths: [Double] = [0, -20, -200, -200.5, -1000, -.infinity, .infinity, .nan, 3]
        let strings = ["", "music", String(repeating: "x", count: 2000), "a\u{0}b"]
        for n in 0..<500 {
            func volume() -> ChannelVolumes {
                ChannelVolumes((0..<[0, 1, 2, 32, 33, 1000].randomElement(using: &rng)!).map { _ in volumes.randomElement(using: &rng)! })
            }
            func key() -> RestoreKey {
                RestoreKey(mediaRole: Bool.random(using: &rng) ? strings.randomElement(using: &rng) : nil,
                           applicationName: Bool.random(using: &rng) ? strings.randomElement(using: &rng) : nil)
            }
            var journal = DuckJournal(pid: 77, processStart: 1, server: strings.randomElement(using: &rng),
                                      serverName: strings.randomElement(using: &rng)!, depth: depths.randomElement(using: &rng)!,
                                      streams: (0..<Int.random(in: 0...6, using: &rng)).map { _ in
                                          .init(index: [0, 5, 5, UInt32.max].randomElement(using: &rng)!, original: volume(), key: key()) },
                                      ended: (0..<Int.random(in: 0...3, using: &rng)).map { _ in .init(key: key(), original: volume()) })
            journal.gain = Bool.random(using: &rng) ? depths.randomElement(using: &rng) : nil
            let written = journal.bounded()
            #expect(throws: Never.self, "case \(n)") { try written.validate() }
            let back = try DuckJournal.decoded(from: try written.encoded())
            #expect(back.streams == written.streams && back.ended == written.ended, "case \(n)")
        }
    }
}

/// Mutated audio files through `AudioSource`: libsndfile's parsers and our own (the MP3
/// Xing/Info/VBRI and ID3v2 headers, libsndfile's log for truncation, the FLAC end check).
@Suite("Fuzz: audio files", .serialized)
struct AudioFuzzTests {
    @Test("audio reader: 1000 mutated WAV, AIFF, AU, CAF, FLAC, Ogg, Opus and MP3 files; each opens and reads to its end, or is refused with 65 or 66")
    func audioFiles() throws {
        let files = try TruncatedFileTests.Files()
        // 0.25 s of mono 8 kHz: small seeds, so that each case reads its whole file.
        let source = files.path("short.wav")
        try files.tool(["sox", "-n", "-r", "8000", "-c", "1", "-b", "16", source, "synth", "0.25", "sine", "440"])
        var seeds: [[UInt8]] = []
        for format in ["wav", "aiff", "au", "caf", "flac", "ogg", "opus", "mp3"] {
            let target = files.path("seed.\(format)")
            switch format {
            case "mp3": try files.tool(["lame", "--quiet", "--add-id3v2", source, target])
            case "opus": try files.tool(["opusenc", "--quiet", source, target])
            default: try files.tool(["sox", source, target])
            }
            seeds.append(Array(try Data(contentsOf: URL(fileURLWithPath: target))))
        }
        let formats = ["wav", "aiff", "au", "caf", "flac", "ogg", "opus", "mp3"]
        var opened = 0, refused = 0
        try fuzz("audio", seeds: seeds, count: 1000, seed: 0x13_A0, budget: 10) { input, n in
            // The extension of the seed it came from: libsndfile looks at the content, not the name.
            let path = files.path("case-\(n % 4).\(formats[n % formats.count])")
            try Data(input).write(to: URL(fileURLWithPath: path))
            do {
                let audio = try AudioSource(path: path)
                var buffer = [Float](repeating: 0, count: 1024 * max(1, audio.channels))
                var total: Int64 = 0
                while true {
                    let got = buffer.withUnsafeMutableBufferPointer { audio.read(into: $0.baseAddress!, frames: 1024) }
                    if got == 0 { break }
                    total += Int64(got)
                    #expect(total <= max(audio.frames, 0) + 1_000_000, "case \(n): reads on past its length")
                    if total > max(audio.frames, 0) + 1_000_000 { break }
                }
                opened += 1
            } catch let error as DuckPromptError {
                #expect(error.code == .unsupportedData || error.code == .noInput, "case \(n): \(error.code) \(error.message)")
                #expect(error.message.hasPrefix(path), "case \(n): the message does not name the file: \(error.message)")
                refused += 1
            }
        }
        print("FUZZ audio: \(opened) opened and read, \(refused) refused")
        #expect(opened > 0 && refused > 0, "the mutations were all of one kind: \(opened) opened, \(refused) refused")
    }
}
