import DuckPromptTestSupport
import Foundation
import Testing

/// `KeepAwake(u seconds)` on the service, called as an app calls it (python3-gi, a caller that
/// stays on the bus): the route's sink, asleep before, runs; a prompt then needs no pre-roll;
/// the silence is never ducked and ends when its caller leaves the bus.
@Suite(.serialized)
struct KeepAwakeIntegrationTests {
    /// An app that asks for `seconds` of keep-awake, prints "kept" and stays on the bus until
    /// it is stopped.
    static let app = """
        import sys
        from gi.repository import Gio, GLib
        bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
        bus.call_sync("io.github.duckprompt.DuckPrompt1", "/io/github/duckprompt/DuckPrompt1",
                      "io.github.duckprompt.DuckPrompt1", "KeepAwake", GLib.Variant("(u)", (int(sys.argv[1]),)),
                      None, Gio.DBusCallFlags.NONE, 5000, None)
        print("kept", flush=True)
        GLib.MainLoop().run()
        """

    /// The state pactl shows for `sink` (`RUNNING`, `IDLE`, `SUSPENDED`).
    static func state(of sink: String) throws -> String? {
        let text = try run(["pactl", "list", "sinks"]).stdout
        let blocks = text.components(separatedBy: "\nSink #")
        guard let block = blocks.first(where: { $0.contains("Name: \(sink)\n") }),
              let line = block.split(separator: "\n").first(where: { $0.contains("State:") }) else { return nil }
        return line.split(separator: ":").last.map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// The raw volume of each channel of the keep-awake silence (pactl's `value`), nil when
    /// there is none.
    static func silenceVolume() throws -> [Int]? {
        guard let volume = try silences().first?["volume"] as? [String: Any] else { return nil }
        return volume.keys.sorted().compactMap { (volume[$0] as? [String: Any])?["value"] as? Int }
    }

    /// The sink-inputs carrying the keep-awake property.
    static func silences() throws -> [[String: Any]] {
        try Pactl.sinkInputs().filter { (($0["properties"] as? [String: Any])?["duckprompt.keep-awake"]) != nil }
    }

    @Test("KeepAwake: the asleep headset runs, a prompt on it has no pre-roll, the silence is not ducked, and it ends when the caller leaves the bus; also while its monitor is recorded (idle, not suspended: pipewire-pulse tells of no change to running then)",
          arguments: [false, true])
    func keepsAwake(monitorRecorded: Bool) throws {
        let rig = Rig()
        let speaker = try rig.speaker()
        let headset = try rig.bluetooth()
        try Pactl.call("set-default-sink", headset)
        _ = speaker
        // A level meter's recording of the headset's monitor (pavucontrol's, the lab's).
        let meter = monitorRecorded ? try Background(["parecord", "--raw", "--latency-msec=100", "-d", "\(headset).monitor", "/dev/null"]) : nil
        defer { meter?.stop() }
        if meter != nil {
            #expect(try eventually(timeout: timeLimit(5)) { try Self.state(of: headset) == "IDLE" || Self.state(of: headset) == "RUNNING" })
        }
        let service = try ServiceIntegrationTests.Service()
        defer { _ = service.stop() }
        if meter == nil {
            #expect(try Self.state(of: headset) != "RUNNING", "the headset runs before anything asked for it")
        }
        let caller = try Background(["/usr/bin/python3", "-c", Self.app, "30"], captureStderr: true)
        defer { caller.stop() }
        #expect(caller.waitForOutput(containing: "kept", timeout: timeLimit(5)), "\(String(decoding: caller.bytes, as: UTF8.self))")
        #expect(try eventually(timeout: timeLimit(5)) { try Self.state(of: headset) == "RUNNING" })
        let silence = try Self.silences()
        #expect(silence.count == 1)
        let before = try #require(try Self.silenceVolume())

        let prompt = try DuckIntegrationTests.prompt(seconds: 0.5)
        let id = try ServiceIntegrationTests.Service.id(try service.call("Play", "['\(prompt)']", "@a{sv} {}"))
        #expect(try service.finished(id) == "played")
        #expect(service.signals.contains("PromptStarted (uint64 \(id), '\(headset)', 'bluetooth-a2dp', uint32 0)"),
                "\(service.signals)")
        // The command's prompt too: no pre-roll, and nothing ducked (the silence is the only
        // other stream).
        let played = try run([duckpromptBinary, "play", "-v", prompt], check: false)
        #expect(played.status == 0 && played.stderr.contains("pre-roll 0 ms") && played.stderr.contains("ducked and restored: none"),
                "\(played.stderr)")
        #expect(try Self.silenceVolume() == before)

        caller.stop()
        #expect(try eventually(timeout: timeLimit(5)) { try Self.silences().isEmpty }, "the silence outlived its caller")
        #expect(service.stop() == 0)
    }

    @Test("KeepAwake out of range is Error.Usage; 0 ends it")
    func range() throws {
        _ = try Rig.defaultSpeaker()
        let service = try ServiceIntegrationTests.Service()
        defer { _ = service.stop() }
        let refused = try service.call("KeepAwake", "3601")
        #expect(refused.status != 0 && refused.stderr.contains("Error.Usage") && refused.stderr.contains("out of range"),
                "\(refused.stderr)")
        #expect(try Self.silences().isEmpty)
        #expect(try service.call("KeepAwake", "0").status == 0)
        #expect(service.stop() == 0)
    }
}
