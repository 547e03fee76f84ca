import DuckPrompt
import DuckPromptProbe
import DuckPromptTestSupport
import Foundation
import Testing

/// Navit (Debian's navit 0.5.6) speaking through duckprompt as Docs/examples/navit/ tells a
/// user to set it up: its `cmdline` speech runs `duckprompt say` for every instruction while
/// its demo vehicle drives a route on a small map, headless (null graphics on the glib event
/// loop, the internal GUI, the D-Bus binding: Docs/examples/navit/README.md). What Navit asked
/// for comes from a wrapper around the speech command; what a listener heard, and every volume
/// the server reported, from the lab's own `MonitorLevels` and `StreamLog` on one clock.
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

    /// The example's navit.xml with its speech command run through `wrapper` by the built
    /// duckprompt (`extra` added to its options), and the map at `map`.
    /// - Throws: `TestFailure` when the example no longer holds the lines changed.
    static func config(wrapper: String, extra: [String], map: String) throws -> String {
        var text = try String(contentsOf: examples.appendingPathComponent("navit.xml"), encoding: .utf8)
        let speech = "data=\"duckprompt say ", mapData = "data=\"streets.bin\""
        guard text.contains(speech), text.contains(mapData) else {
            throw TestFailure("Docs/examples/navit/navit.xml has no '\(speech)' or '\(mapData)'")
        }
        text = text.replacingOccurrences(of: speech, with: "data=\"\(wrapper) \(duckpromptBinary) say \(extra.map { $0 + " " }.joined())")
        return text.replacingOccurrences(of: mapData, with: "data=\"\(map)\"")
    }

    /// One instruction as the wrapper logged it: when Navit started the command and when it
    /// exited (seconds on the test's clock), what it said, and duckprompt's exit status.
    struct Instruction {
        var text: String
        var start: Double
        var end: Double?
        var status: Int32?
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

    @Test("Navit's demo vehicle drives three turns to the destination: every instruction is heard on the headset, the music ducked 20 dB and restored exactly for each")
    func demoDrive() throws {
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

        // The example's speech line, through a wrapper that logs what Navit asked for (the
        // last argument) and what duckprompt answered. --rate keeps the drive short.
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
        FileManager.default.createFile(atPath: log, contents: nil)
        let config = scratch.path("navit.xml")
        try Self.config(wrapper: wrapper, extra: ["--rate", "300"], map: scratch.path("streets.bin"))
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
                                   environment: ["NAVIT_USER_DATADIR": scratch.path("navit-home")],
                                   captureStderr: true)
        defer { navit.stop() }
        let name = "org.navit_project.navit"
        try run(["gdbus", "wait", "--session", "--timeout", "20", name], limit: 25)
        try run(["dbus-send", "--session", "--print-reply", "--dest=\(name)", "/org/navit_project/navit/default_navit",
                 "\(name).navit.set_destination", "string:geo: \(Self.destination)", "string:Delta Street"], limit: 10)
        let destinationSet = Double(monotonicNanoseconds() - zero) / 1e9
        func spoken() -> [Instruction] {
            Self.instructions((try? String(contentsOfFile: log, encoding: .utf8)) ?? "", epochAtZero: epochAtZero)
        }
        let arrived = eventually(timeout: timeLimit(60)) {
            spoken().last.map { $0.text.hasPrefix(Self.arrival) && $0.status != nil } ?? false
        }
        let instructions = spoken()
        print("[\(TestServer.kind)] Navit said: " + instructions.map { "\"\($0.text)\" \($0.status.map(String.init) ?? "-")" }
            .joined(separator: "; "))
        #expect(arrived, "Navit did not arrive: \(String(decoding: navit.bytes, as: UTF8.self).suffix(1000))")
        navit.stop()
        // The last restore is over once duckprompt exited; the log reads it from the server.
        #expect(try eventually { try Pactl.volume(ofApp: music) == original })
        levels.stop()
        streams.stop()
        let records = streams.streams(zero: zero)
        let timeline = try #require(levels.timelines(zero: zero).first { $0.sink == headset }?.timeline)

        // At least three turns announced as they are taken, and the arrival; every command exited 0.
        #expect(instructions.filter { $0.text.hasPrefix("Turn") && $0.text.contains(" now") }.count >= 3,
                "\(instructions.map(\.text))")
        #expect(instructions.allSatisfy { $0.status == 0 }, "\(instructions.map { ($0.text, $0.status) })")

        // One prompt stream on the headset a command, each heard on its monitor.
        let prompts = records.filter { $0.sink == headset }
        #expect(prompts.count == instructions.count, "\(prompts.count) streams on the headset for \(instructions.count) instructions")
        let heard = timeline.heardStretches
        var delays: [Double] = []
        for (instruction, prompt) in zip(instructions, prompts) {
            let end = (prompt.end ?? timeline.time(ofWindow: timeline.levels.count)) + 0.1
            let windows = heard.filter { $0.end > prompt.start && $0.start < end }
            let seconds = windows.reduce(0.0) { $0 + min($1.end, end) - max($1.start, prompt.start) }
            #expect(seconds >= 0.3, "\"\(instruction.text)\": heard \(seconds) s on the headset")
            if let first = windows.first { delays.append(max(first.start, prompt.start) - instruction.start) }
        }

        // The music: once ducked by 20 dB and back to exactly its volume for each instruction.
        let musicRecord = try #require(records.first { $0.properties["application.name"] == music })
        let originalDb = try #require(musicRecord.volumes.first { $0.value.volume.values.map(Int.init) == original })
            .value.decibels
        // Each duck: from the music's own volume down, to back at exactly that volume; its depth
        // is the deepest any channel went.
        var depths: [Double] = []
        var depth: Double? = nil
        for volume in musicRecord.volumes.drop(while: { $0.value.volume.values.map(Int.init) != original }) {
            if volume.value.volume.values.map(Int.init) == original {
                if let d = depth { depths.append(d) }
                depth = nil
            } else {
                let down = zip(volume.value.decibels, originalDb).map { $1 - $0 }.max() ?? 0
                depth = max(depth ?? down, down)
            }
        }
        print("[\(TestServer.kind)] \(instructions.count) instructions, \(prompts.count) streams on the headset; duck depths "
              + depths.map { String(format: "%.2f", $0) }.joined(separator: " ")
              + " dB; first heard window " + delays.map { String(format: "%.0f", $0 * 1000) }.joined(separator: " ")
              + " ms after Navit started the command; destination set \(String(format: "%.1f", destinationSet)) s after Navit was started, "
              + "arrival said \(String(format: "%.1f", (instructions.last?.end ?? 0) - destinationSet)) s after that")
        #expect(depth == nil, "the music was left ducked")
        #expect(depths.count == instructions.count, "\(depths.count) ducks for \(instructions.count) instructions")
        for (i, d) in depths.enumerated() {
            #expect(abs(d - 20) <= 0.1, "duck \(i + 1): \(d) dB")
        }
    }
}
