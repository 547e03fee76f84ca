import DuckPromptTestSupport
import Foundation
import Testing

/// `Estimate` and `EstimateSay` on the service, through gdbus as an app calls them: the
/// values a prompt would have, nothing played or ducked.
@Suite(.serialized)
struct EstimateIntegrationTests {
    /// The `uint64` of `key` in a gdbus `a{sv}` answer.
    static func micros(_ key: String, in answer: String) -> UInt64? {
        answer.firstMatch(of: try! Regex("'\(key)': <uint64 (\\d+)>")).flatMap { UInt64($0.output[1].substring ?? "") }
    }

    @Test("Estimate: a sleeping headset's pre-roll, a running speaker's attack under music, a text's measured length; nothing played or ducked")
    func estimates() throws {
        let rig = Rig()
        let speaker = try rig.speaker()
        let headset = try rig.bluetooth()
        try Pactl.call("set-default-sink", headset)
        let service = try ServiceIntegrationTests.Service()
        defer { _ = service.stop() }
        let prompt = try DuckIntegrationTests.prompt(seconds: 1.0)
        // The options Play takes, the service's own `stop-with-caller` too.
        let asleep = try service.call("Estimate", "['\(prompt)']", "{'stop-with-caller': <true>}").stdout
        #expect(asleep.contains("'sink': <'\(headset)'>"), "\(asleep)")
        #expect(Self.micros("pre-roll-us", in: asleep) == 300_000 && Self.micros("attack-us", in: asleep) == 0, "\(asleep)")
        #expect(Self.micros("duration-us", in: asleep) == 1_000_000)
        // The service's first prompt needs a new stream: 12 ms, on PipeWire to a sleeping sink 30.
        let cold = TestServer.kind == "pipewire" ? 30_000 : 12_000
        #expect(Self.micros("start-us", in: asleep) == UInt64(cold), "\(asleep)")
        #expect(Self.micros("first-sample-us", in: asleep) == UInt64(300_000 + cold), "\(asleep)")

        let app = "music-\(rig.tag)"
        try rig.player(sink: speaker, app: app, role: "music", volume: nil)
        let before = try #require(try Pactl.volume(ofApp: app))
        let running = try service.call("Estimate", "['\(prompt)']", "{'device': <'\(speaker)'>}").stdout
        #expect(Self.micros("pre-roll-us", in: running) == 0 && Self.micros("attack-us", in: running) == 200_000, "\(running)")
        #expect(Self.micros("first-sample-us", in: running) == 212_000, "\(running)")
        #expect(try Pactl.volume(ofApp: app) == before, "an estimate ducked the music")

        let text = try service.call("EstimateSay", "'In two hundred metres, turn left'", "{'device': <'\(speaker)'>}").stdout
        let spoken = try #require(Self.micros("duration-us", in: text), "\(text)")
        #expect(spoken > 1_000_000 && spoken < 4_000_000, "the text lasts \(spoken) µs")
        #expect(!service.signals.contains("PromptStarted"), "an estimate played: \(service.signals)")
        #expect(service.stop() == 0)
    }
}
