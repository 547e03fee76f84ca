import DuckPrompt
import DuckPromptProbe
import DuckPromptTestSupport
import Foundation
import Testing

/// Navit (Debian's navit 0.5.6) speaking through duckprompt as Docs/examples/navit/ tells a
/// user to set it up: its `cmdline` speech runs `duckprompt say` for every instruction while
/// its demo vehicle drives a route on a small map, headless (null graphics on the glib event
/// loop, the internal GUI, the D-Bus binding: Docs/examples/navit/README.md); and the same drive
/// with its `speech_dispatcher` backend, through real speech-dispatcher whose only module is
/// duckprompt's (`SpeechDispatcherServer`). What Navit asked for comes from a wrapper around the
/// speech command (cmdline), or from the module's trace of each `SPEAK` (speech_dispatcher); what a
/// listener heard, and every volume the server reported, from the lab's own `MonitorLevels` and
/// `StreamLog` on one clock.
@Suite(.serialized)
struct NavitIntegrationTests {
    /// Docs/examples/navit: navit.xml (headless Navit, its speech line) and streets.osm (four
    /// streets, three turns between the demo vehicle's start and the destination).
    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Docs/examples/navit")

    /// The destination the example's README sets, on Delta Street (lon lat).
    static let destination = "13.4035 52.5003"

    /// Navit's last instruction on a route (navigation.c: "You have reached your destination %s"
    /// with the distance "now").
    static let arrival = "You have reached your destination now"

    /// Navit's speech backends: `cmdline` runs `duckprompt say` for each instruction and waits
    /// for it; `speech_dispatcher` hands each to speech-dispatcher (libspeechd, `spd_open("navit",
    /// "main", …)`, priority `message`) and goes on.
    enum Backend: String, CaseIterable, Sendable, CustomStringConvertible {
        case cmdline, speechDispatcher = "speech_dispatcher"
        var description: String { rawValue }
    }

    /// The example's navit.xml with the map at `map` and, for `cmdline`, its speech command run
    /// through `wrapper` by the built duckprompt (`extra` added to its options); for
    /// `speech_dispatcher`, its `<speech>` line replaced by the one Docs/examples/navit/README.md
    /// gives for that backend.
    /// - Throws: `TestFailure` when the example no longer holds the lines changed.
    static func config(_ backend: Backend, wrapper: String, extra: [String], map: String) throws -> String {
        var text = try String(contentsOf: examples.appendingPathComponent("navit.xml"), encoding: .utf8)
        let speech = "data=\"duckprompt say ", mapData = "data=\"streets.bin\""
        guard text.contains(speech), text.contains(mapData),
              let line = text.range(of: "<speech type=\"cmdline\"[^>]*/>", options: .regularExpression) else {
            throw TestFailure("Docs/examples/navit/navit.xml has no '\(speech)', '\(mapData)' or cmdline <speech> line")
        }
        switch backend {
        case .cmdline:
            text = text.replacingOccurrences(of: speech, with: "data=\"\(wrapper) \(duckpromptBinary) say \(extra.map { $0 + " " }.joined())")
        case .speechDispatcher:
            let readme = try String(contentsOf: examples.appendingPathComponent("README.md"), encoding: .utf8)
            guard let sdLine = readme.range(of: "<speech type=\"speech_dispatcher\"[^>]*/>", options: .regularExpression) else {
                throw TestFailure("Docs/examples/navit/README.md gives no <speech type=\"speech_dispatcher\" …/> line")
            }
            text.replaceSubrange(line, with: readme[sdLine])
        }
        return text.replacingOccurrences(of: mapData, with: "data=\"\(map)\"")
    }

    /// One instruction as the wrapper logged it: when Navit started the command and when it
    /// exited (seconds on the test's clock), what it said, and duckprompt's exit status; or, for
    /// speech_dispatcher, when speech-dispatcher queued it (`start`) and when the module got its
    /// `SPEAK` (`spoken`), no status.
    struct Instruction {
        var text: String
        var start: Double
        var end: Double?
        var status: Int32?
        var spoken: Double?
    }

    /// Reads the wrapper's log: "start EPOCH TEXT" and "end EPOCH STATUS" lines, in order;
    /// epoch seconds moved to the test's clock by `epochAtZero`.
    static func instructions(_ log: String, epochAtZero: Double) -> [Instruction] {
        var result: [Instruction] = []
        for line in log.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count >= 2, let epoch = Double(parts[1]) else { continue }
            let time = epoch - epochAtZero
            if parts[0] == "start" {
                let text = parts.count > 2 ? parts[2].trimmingCharacters(in: .whitespaces) : ""
                result.append(Instruction(text: text, start: time))
            } else if parts[0] == "end", !result.isEmpty, parts.count > 2 {
                result[result.count - 1].end = time
                result[result.count - 1].status = Int32(parts[2])
            }
        }
        return result
    }

    @Test("Navit's demo vehicle drives three turns to the destination: every instruction is heard on the headset, the music ducked 20 dB under it and restored exactly",
          arguments: Backend.allCases)
    func demoDrive(backend: Backend) throws {
        try TestServer.requireServer()
        let rig = Rig()
        let speaker = try rig.speaker()
        let headset = try rig.bluetooth()
        try Pactl.call("set-default-sink", speaker)
        let music = "music-\(rig.tag)"
        try rig.music(on: speaker, app: music)
        let original = try #require(try Pactl.volume(ofApp: music))

        let scratch = try Scratch()
        try FileManager.default.copyItem(at: Self.examples.appendingPathComponent("streets.osm"),
                                         to: scratch.url.appendingPathComponent("streets.osm"))
        // maptool leaves its temporary files in the working directory when it fails.
        let maptool = try run(["maptool", "streets.bin"],
                              input: .file(try FileHandle(forReadingFrom: scratch.url.appendingPathComponent("streets.osm"))),
                              directory: scratch.url, limit: 30, check: false)
        #expect(maptool.status == 0, "\(maptool.stderr.suffix(500))")
        let mapSize = (try FileManager.default.attributesOfItem(atPath: scratch.path("streets.bin"))[.size] as? Int) ?? 0
        #expect(mapSize > 200, "maptool wrote an empty map: \(maptool.stdout.suffix(500))")

        // cmdline: the example's speech line, through a wrapper that logs what Navit asked for
        // (the last argument) and what duckprompt answered. --rate keeps the drive short.
        let log = scratch.path("spoken.log")
        let wrapper = scratch.path("logged")
        try """
            #!/bin/sh
            for text; do :; done
            printf 'start %s %s\\n' "$(date +%s.%N)" "$text" >>'\(log)'
            "$@"
            status=$?
            printf 'end %s %s\\n' "$(date +%s.%N)" "$status" >>'\(log)'
            exit $status

            """.write(toFile: wrapper, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: wrapper)
        #expect(FileManager.default.createFile(atPath: log, contents: nil))
        // speech_dispatcher: the README's client section, and the rate of --rate 300 (the
        // module maps 0…100 to 175…450 words a minute; Navit sets none).
        let speechd = backend == .speechDispatcher
            ? try SpeechDispatcherServer(config: "DefaultRate 45\nBeginClient \"*:navit:*\"\nDefaultModule duckprompt\nEndClient",
                                         logRequests: true)
            : nil
        let config = scratch.path("navit.xml")
        try Self.config(backend, wrapper: wrapper, extra: ["--rate", "300"], map: scratch.path("streets.bin"))
            .write(toFile: config, atomically: true, encoding: .utf8)

        // What a listener hears on the headset, and every volume the server reports (StreamLog:
        // pa_context_subscribe, what pactl subscribe shows), on one clock.
        let zero = monotonicNanoseconds()
        let epochAtZero = Date().timeIntervalSince1970
        let streams = try StreamLog(server: nil) { _ in }
        let levels = try MonitorLevels(server: nil)
        try levels.record(headset)
        if TestServer.kind == "pulseaudio" {
            // As the lab does (Lab.swift): a PulseAudio null sink renders its first block at
            // its largest latency, 2 s, before any stream asks for less, so that the first
            // prompt was heard 2 s late; resumed, it runs at the latency the recording asks for.
            try Pactl.call("suspend-sink", headset, "1")
            try Pactl.call("suspend-sink", headset, "0")
        }

        let navit = try Background(["navit", "-c", config],
                                   environment: ["NAVIT_USER_DATADIR": scratch.path("navit-home")]
                                       .merging(speechd?.clientEnvironment ?? [:]) { $1 },
                                   captureStderr: true)
        defer { navit.stop() }
        let name = "org.navit_project.navit"
        try run(["gdbus", "wait", "--session", "--timeout", "20", name], limit: 25)
        try run(["dbus-send", "--session", "--print-reply", "--dest=\(name)", "/org/navit_project/navit/default_navit",
                 "\(name).navit.set_destination", "string:geo: \(Self.destination)", "string:Delta Street"], limit: 10)
        let destinationSet = Double(monotonicNanoseconds() - zero) / 1e9
        // speech_dispatcher: what Navit asked for is what speech-dispatcher queued (its log).
        func spoken() -> [Instruction] {
            if let speechd {
                return speechd.requests.map {
                    Instruction(text: $0.text.trimmingCharacters(in: .whitespaces), start: $0.seconds - epochAtZero)
                }
            }
            return Self.instructions((try? String(contentsOfFile: log, encoding: .utf8)) ?? "", epochAtZero: epochAtZero)
        }
        let arrived = eventually(timeout: timeLimit(60)) {
            spoken().last.map { $0.text.hasPrefix(Self.arrival) && (speechd != nil || $0.status != nil) } ?? false
        }
        var instructions = spoken()
        print("[\(TestServer.kind) \(backend)] Navit said: " + instructions.map { "\"\($0.text)\" \($0.status.map(String.init) ?? "-")" }
            .joined(separator: "; "))
        #expect(arrived, "Navit did not arrive: \(String(decoding: navit.bytes, as: UTF8.self).suffix(1000))")
        // The last restore is over once the music is back at its volume (as the server reports
        // it) after the arrival began: its command started (cmdline), the module got its SPEAK
        // (speech_dispatcher: seconds after Navit asked, behind the messages queued before it).
        let musicRecord = { streams.streams(zero: zero).first { $0.properties["application.name"] == music } }
        func arrivalBegan() -> Double? {
            guard let speechd else { return instructions.last?.start }
            return speechd.spoken.last.flatMap { $0.text.hasPrefix(Self.arrival) ? Double($0.microseconds) / 1e6 - epochAtZero : nil }
        }
        let restored = eventually(timeout: timeLimit(15)) {
            guard let began = arrivalBegan(), let last = musicRecord()?.volumes.last else { return false }
            return last.time > began && last.value.volume.values.map(Int.init) == original
        }
        #expect(restored, "the music was not restored after the arrival")
        navit.stop()
        levels.stop()
        streams.stop()
        let records = streams.streams(zero: zero)
        let timeline = try #require(levels.timelines(zero: zero).first { $0.sink == headset }?.timeline)

        // At least three turns announced as they are taken, and the arrival.
        #expect(instructions.filter { $0.text.hasPrefix("Turn") && $0.text.contains(" now") }.count >= 3,
                "\(instructions.map(\.text))")

        // Each instruction's span: its command's run (cmdline); from the module's SPEAK to the
        // next one's, which speech-dispatcher sends once this one ended (speech_dispatcher), the
        // last to the music's restore.
        let prompts = records.filter { $0.sink == headset }
        if let speechd {
            // Every request at Navit's priority (message), each passed on to the module, none stopped.
            #expect(speechd.requests.allSatisfy { $0.priority == 2 }, "\(speechd.requests.map { ($0.text, $0.priority) })")
            let speaks = speechd.spoken
            #expect(speaks.map { $0.text.trimmingCharacters(in: .whitespaces) } == instructions.map(\.text),
                    "the module got \(speaks.map(\.text)) for \(instructions.map(\.text))")
            #expect(!speechd.trace.contains(" stopped"), "speech-dispatcher stopped an instruction: \(speechd.trace.suffix(1000))")
            let end = musicRecord()?.volumes.last?.time ?? 0
            for (i, speak) in zip(instructions.indices, speaks) {
                instructions[i].spoken = Double(speak.microseconds) / 1e6 - epochAtZero
                instructions[i].end = i + 1 < speaks.count ? Double(speaks[i + 1].microseconds) / 1e6 - epochAtZero : end
            }
        } else {
            // Every command exited 0; one prompt stream on the headset a command.
            #expect(instructions.allSatisfy { $0.status == 0 }, "\(instructions.map { ($0.text, $0.status) })")
            #expect(prompts.count == instructions.count, "\(prompts.count) streams on the headset for \(instructions.count) instructions")
        }
        // Each heard on the headset's monitor within its span.
        let heard = timeline.heardStretches
        var firstHeard: [Double?] = []
        for instruction in instructions {
            let start = instruction.spoken ?? instruction.start, end = (instruction.end ?? timeline.time(ofWindow: timeline.levels.count)) + 0.1
            let windows = heard.filter { $0.end > start && $0.start < end }
            let seconds = windows.reduce(0.0) { $0 + min($1.end, end) - max($1.start, start) }
            #expect(seconds >= 0.3, "\"\(instruction.text)\": heard \(seconds) s on the headset")
            firstHeard.append(windows.first.map { max($0.start, start) })
        }

        // The music. A duck runs from the music's own volume down to back at exactly that
        // volume; its depth is the deepest any channel went. cmdline: one duck a command.
        // speech_dispatcher: the module keeps a duck 300 ms (DuckpromptKeepDuckMs) for the next
        // message, so instructions in a row may share one: at most one duck an instruction, and
        // the music ducked when each is first heard.
        let musicVolumes = try #require(records.first { $0.properties["application.name"] == music }).volumes
        let originalDb = try #require(musicVolumes.first { $0.value.volume.values.map(Int.init) == original }).value.decibels
        var depths: [Double] = []
        var depth: Double? = nil
        for volume in musicVolumes.drop(while: { $0.value.volume.values.map(Int.init) != original }) {
            if volume.value.volume.values.map(Int.init) == original {
                if let d = depth { depths.append(d) }
                depth = nil
            } else {
                let down = zip(volume.value.decibels, originalDb).map { $1 - $0 }.max() ?? 0
                depth = max(depth ?? down, down)
            }
        }
        func ms(_ seconds: [Double]) -> String { seconds.map { String(format: "%.0f", $0 * 1000) }.joined(separator: " ") }
        let delays = zip(instructions, firstHeard).compactMap { i, t in t.map { $0 - i.start } }
        let origin = speechd == nil ? "Navit started the command"
            : "speech-dispatcher queued Navit's message (to the module's SPEAK: "
                + ms(instructions.compactMap { i in i.spoken.map { $0 - i.start } }) + " ms)"
        print("[\(TestServer.kind) \(backend)] \(instructions.count) instructions, \(prompts.count) streams on the headset; duck depths "
              + depths.map { String(format: "%.2f", $0) }.joined(separator: " ")
              + " dB; first heard window " + ms(delays) + " ms after " + origin + "; destination set "
              + "\(String(format: "%.1f", destinationSet)) s after Navit was started, last instruction over "
              + "\(String(format: "%.1f", (instructions.last?.end ?? 0) - destinationSet)) s after that")
        #expect(depth == nil, "the music was left ducked")
        if speechd == nil {
            #expect(depths.count == instructions.count, "\(depths.count) ducks for \(instructions.count) instructions")
        } else {
            #expect((1...instructions.count).contains(depths.count), "\(depths.count) ducks for \(instructions.count) instructions")
        }
        for (i, d) in depths.enumerated() {
            #expect(abs(d - 20) <= 0.1, "duck \(i + 1): \(d) dB")
        }
        // No instruction unducked: the music down when each is first heard, and never back at its
        // volume while one is heard (but in its last 200 ms: the monitor's lag behind the volume).
        let restores = musicVolumes.filter { $0.value.volume.values.map(Int.init) == original }.map(\.time)
        for (instruction, time) in zip(instructions, firstHeard) {
            guard let time, let volume = musicVolumes.last(where: { $0.time <= time }) else { continue }
            #expect(volume.value.volume.values.map(Int.init) != original, "\"\(instruction.text)\" heard with the music not ducked")
        }
        for stretch in heard {
            let inside = restores.filter { $0 > stretch.start && $0 < stretch.end - 0.2 }
            #expect(inside.isEmpty, "the music back at its volume at \(inside) s while speech was heard \(stretch.start)-\(stretch.end) s")
        }
    }
}
