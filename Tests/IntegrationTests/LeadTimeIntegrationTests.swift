import DuckPrompt
import DuckPromptProbe
import DuckPromptTestSupport
import Foundation
import Testing

/// Issue 35's lead time against what a listener hears: `Estimate`'s `heard-us` counted from
/// the `Play` call made right after it, and `PromptTiming`'s `first_sample_us`, beside the
/// prompt's first sample as the sink's monitor recorded it, placed on CLOCK_MONOTONIC by the
/// recording's own timing answers (`Recording.time(ofFrame:)`, as the bench's figures place
/// theirs). On a sleeping headset (the pre-roll) and on a speaker playing music (the attack).
@Suite(.serialized)
struct LeadTimeIntegrationTests {
    /// How far an estimate, or `PromptTiming`, may be from the first sample heard, in ms.
    static let toleranceMs = 30.0
    /// How far `Estimate`'s `heard-us` may be under ThreadSanitizer: its `start-us` (6 ms on a
    /// kept stream) is a release build's handling of `Play`, which a TSan-built service takes
    /// several times longer over (45 ms late in one CI run); `PromptTiming`, read from the
    /// stream's own timing, keeps `toleranceMs`.
    static let heardToleranceMs =
        ProcessInfo.processInfo.environment["DUCKPROMPT_TEST_SANITIZER"] == nil ? toleranceMs : 100.0

    /// The test's own client of the service on the session bus: `Estimate` and `Play`, and
    /// the service's `PromptTiming` and `PromptFinished` as `dispatch` delivers them.
    final class Client {
        let bus: SessionBusClient
        var timings: [UInt64: (first: UInt64, end: UInt64)] = [:]
        var finished: [UInt64: String] = [:]
        static let name = ServiceIntegrationTests.name, path = ServiceIntegrationTests.path

        init() throws {
            bus = try SessionBusClient()
            try bus.subscribe(to: "PromptTiming", of: Self.name, from: Self.name, path: Self.path) { [unowned self] signal in
                guard let id = try? signal.readUInt64(), let first = try? signal.readUInt64(),
                      let end = try? signal.readUInt64() else { return }
                timings[id] = (first, end)
            }
            try bus.subscribe(to: "PromptFinished", of: Self.name, from: Self.name, path: Self.path) { [unowned self] signal in
                guard let id = try? signal.readUInt64(), let outcome = try? signal.readString() else { return }
                finished[id] = outcome
            }
        }

        /// `Estimate`'s times in µs, by key.
        func estimate(_ file: String, _ options: [String: BusValue]) throws -> [String: UInt64] {
            let answer = try bus.call(Self.name, Self.path, Self.name, "Estimate", [.strings([file]), .dictionary(options)],
                                      timeoutMs: 5000) { try $0.readOptions() }
            return answer.compactMapValues { if case .uint64(let us) = $0 { us } else { nil } }
        }

        /// `Play`; the prompt's id.
        func play(_ file: String, _ options: [String: BusValue]) throws -> UInt64 {
            try bus.call(Self.name, Self.path, Self.name, "Play", [.strings([file]), .dictionary(options)],
                         timeoutMs: 5000) { try $0.readUInt64() }
        }

        /// Waits for the prompt's `PromptFinished` (its `PromptTiming` came before it).
        func waitFinished(_ id: UInt64) throws -> String {
            _ = try bus.dispatch(for: .seconds(timeLimit(10))) { finished[id] != nil }
            guard let outcome = finished[id] else { throw TestFailure("no PromptFinished for \(id)") }
            return outcome
        }
    }

    /// What one prompt's lead times came to, in ms from the first sample heard (positive:
    /// said later than heard).
    struct Measured {
        /// `Play`'s call + `Estimate`'s `heard-us` (the first sample leaving the sink).
        var heard: Double
        /// `PromptTiming`'s `first_sample_us`.
        var timing: Double
    }

    /// One prompt through the service: estimated, played at once, and its first 1 kHz sample
    /// found on `recorder`'s recording (a step above 0.02 sustained over half a period, 24
    /// frames: the music's are below it, and a duck's volume step is one frame). Prints the
    /// numbers for the CI log.
    static func measure(_ scenario: String, client: Client, file: String, options: [String: BusValue],
                        estimate: [String: UInt64], recorder: () throws -> MonitorRecorder) throws
        -> (Measured, MonitorRecorder) {
        let called = monotonicNanoseconds()
        let id = try client.play(file, options)
        let listening = try recorder()
        #expect(try client.waitFinished(id) == "played")
        let heard = try #require(listening.recording(past: monotonicNanoseconds()).prompt(after: called, sustained: 24),
                                 "\(scenario): the prompt is not on the monitor")
        let first = try #require(estimate["first-sample-us"]), heardUs = try #require(estimate["heard-us"])
        let timing = try #require(client.timings[id], "\(scenario): no PromptTiming for \(id)")
        let (callUs, heardAt) = (Double(called) / 1000, Double(heard.first) / 1000)
        func ms(_ us: Double) -> String { String(format: "%+.1f ms", us / 1000) }
        let measured = Measured(heard: (callUs + Double(heardUs) - heardAt) / 1000, timing: (Double(timing.first) - heardAt) / 1000)
        print("[\(TestServer.kind)] lead time, \(scenario): first sample heard \(ms(heardAt - callUs)) after Play"
              + " (the recording's timing moved it \(heard.correctionMs.map { String(format: "%.1f", $0) } ?? "—") ms);"
              + " Estimate: start-us \(estimate["start-us"] ?? 0), first-sample-us \(first) (\(ms(callUs + Double(first) - heardAt))),"
              + " heard-us \(heardUs) (\(ms(callUs + Double(heardUs) - heardAt))); PromptTiming first_sample_us \(ms(Double(timing.first) - heardAt)),"
              + " end − first \(ms(Double(timing.end) - Double(timing.first)))")
        #expect(timing.end - timing.first == estimate["duration-us"], "\(scenario): PromptTiming's end is not first + duration")
        return (measured, listening)
    }

    @Test("Estimate's heard-us (from the Play call) and PromptTiming's first_sample_us are within 30 ms of the first sample heard: a sleeping headset's pre-roll, a running speaker's attack")
    func leadTime() throws {
        let rig = Rig()
        let speaker = try rig.speaker()
        let headset = try rig.bluetooth()
        let service = try ServiceIntegrationTests.Service(environment: ["DUCKPROMPT_DEBUG": "1"])
        defer { _ = service.stop() }
        let client = try Client()
        let prompt = try DuckIntegrationTests.prompt(seconds: 0.5)

        // The service as it runs in a car, warm: a first prompt on the headset leaves its
        // stream kept ready (a new stream to a sleeping PipeWire sink took 17 to 71 ms on this
        // shared machine, too wide to test against: `PromptEstimate.heldStartUs`).
        let onHeadset: [String: BusValue] = ["device": .string(headset)]
        let blip = try TestAudio.sine("lead-warm-up.wav", hertz: 1000, seconds: 0.05, gain: 0.5, channels: 1)
        #expect(try client.waitFinished(try client.play(blip, onHeadset)) == "played")
        // A headset the server suspended and woke again: idle, asleep to a prompt's plan,
        // until the recorder (a user of its monitor) wakes it; started once the service has
        // routed the prompt, during the pre-roll's silence.
        try Pactl.call("suspend-sink", headset, "1")
        try Pactl.call("suspend-sink", headset, "0")
        var asleep: [String: UInt64] = [:]
        #expect(try eventually(timeout: timeLimit(5)) {
            asleep = try client.estimate(prompt, onHeadset)
            return asleep["pre-roll-us"] == 300_000
        }, "the headset is not asleep to the service: \(asleep)")
        #expect(asleep["start-us"] == 6000, "no stream kept for the headset: \(asleep)")
        let opened = { String(decoding: service.process.bytes, as: UTF8.self).components(separatedBy: "prompt: openStream").count }
        let before = opened()
        let (idle, headsetRecorder) = try Self.measure("idle headset, pre-roll", client: client, file: prompt,
                                                       options: onHeadset, estimate: asleep) {
            #expect(eventually(timeout: timeLimit(5)) { opened() > before }, "the service did not open the prompt's stream")
            return try MonitorRecorder(sink: headset)
        }
        _ = headsetRecorder.stop()

        let app = "music-\(rig.tag)"
        // Mono at 200 Hz: its sample-to-sample steps stay below the prompt's onset detector's
        // (`Recording.blip`), which stereo at 300 Hz, summed on the monitor, would pass.
        try rig.player(sink: speaker, app: app, role: "music", volume: nil, channels: 1, hertz: 200)
        let recorder = try MonitorRecorder(sink: speaker)
        try recorder.waitForAudio(seconds: 0.3)
        let onSpeaker: [String: BusValue] = ["device": .string(speaker)]
        let running = try client.estimate(prompt, onSpeaker)
        #expect(running["pre-roll-us"] == 0 && running["attack-us"] == 200_000, "\(running)")
        let (ducking, _) = try Self.measure("running speaker, attack", client: client, file: prompt, options: onSpeaker,
                                            estimate: running) { recorder }
        _ = recorder.stop()

        for (scenario, result) in [("idle headset", idle), ("running speaker", ducking)] {
            #expect(abs(result.heard) <= Self.heardToleranceMs, "\(scenario): Estimate's heard-us off by \(result.heard) ms")
            #expect(abs(result.timing) <= Self.toleranceMs, "\(scenario): PromptTiming off by \(result.timing) ms")
        }
        // Each prompt's PromptTiming after its PromptStarted, as a gdbus monitor saw them.
        #expect(eventually(timeout: timeLimit(2)) { service.signals.components(separatedBy: "PromptTiming").count == 4 })
        let order = service.signals.split(separator: "\n").compactMap { line in
            ["PromptStarted", "PromptTiming"].first { line.contains($0) }
        }
        #expect(order == Array(repeating: ["PromptStarted", "PromptTiming"], count: 3).flatMap { $0 }, "\(service.signals)")
        #expect(service.stop() == 0)
    }
}
