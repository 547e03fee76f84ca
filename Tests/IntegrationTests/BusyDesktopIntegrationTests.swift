import DuckPrompt
import DuckPromptProbe
import DuckPromptTestSupport
import Foundation
import Testing

/// Many streams to duck at once: the duck must land on every one before the prompt is over,
/// not only be sent (pipewire-pulse applies 100 streams' writes tens of ms after they go out).
@Suite(.serialized)
struct BusyDesktopIntegrationTests {
    @Test("100 playing streams and a 50 ms prompt: all 100 are at -20 dB when it is heard, then back exactly")
    func hundredStreams() throws {
        try TestServer.requireServer()
        let rig = Rig()
        let speaker = try rig.speaker()
        try Pactl.call("set-default-sink", speaker)
        // 25 streams a sink: a PulseAudio sink mixes at most 32, and a stream beyond that
        // never plays.
        var sinks: [String] = []
        for i in 0..<4 {
            let name = "dp_load\(i)_\(rig.tag)"
            rig.modules.append(try Pactl.loadNullSink(name: name, properties: [:]))
            sinks.append(name)
        }
        let load = try BenchProbe(clientName: "dp-load-\(rig.tag)", timeout: .seconds(30))
        defer { load.stopTones() }
        let indices = Set(try load.playTones(count: 100, sinks: sinks, hertz: 0, amplitude: 0, latencyMs: 200,
                                             properties: ["application.name": "dp-load-\(rig.tag)",
                                                          "media.role": "music"]))
        func volumes() throws -> [UInt32: ChannelVolumes] {
            Dictionary(uniqueKeysWithValues: try load.sinkInputs().filter { indices.contains($0.index) }
                .map { ($0.index, $0.volume) })
        }
        let before = try volumes()
        #expect(before.count == 100)

        // The speaker's monitor, each chunk stamped as it arrives: when the prompt was heard.
        let recorder = try BenchProbe(clientName: "dp-rec-\(rig.tag)")
        try recorder.startRecording(monitorOf: speaker, fragmentMs: 5)
        defer { recorder.stopRecording() }
        // Poll every stream's volume, back to back, on a connection of its own, while the
        // prompt plays: when each poll was sent and how many streams it showed at -20 dB.
        let poller = try BenchProbe(clientName: "dp-poll-\(rig.tag)")
        let state = PollState()
        let thread = Thread {
            while !state.done {
                let sent = monotonicNanoseconds()
                guard let inputs = try? poller.sinkInputs() else { continue }
                let ducked = inputs.filter { input in
                    guard let base = before[input.index]?.values.first, let now = input.volume.values.first else {
                        return false
                    }
                    return VolumeMath.decibels(of: now) <= VolumeMath.decibels(of: base) - 20 + 0.05
                }.count
                state.record(sent: sent, ducked: ducked)
            }
        }
        thread.start()
        let blip = try TestAudio.sine("blip-50ms.wav", hertz: 1000, seconds: 0.05, gain: 0.5, channels: 1)
        let result = try run([duckpromptBinary, "play", "-d", speaker, blip], check: false)
        state.done = true
        #expect(result.status == 0, "duckprompt: \(result.stderr)")
        // Monitor data comes late: wait until the prompt is in the recording (or give up).
        _ = eventually(timeout: timeLimit(2)) {
            recorder.withRecording { samples, _, _ in samples.contains { abs($0) > 0.05 } }
        }
        // The first prompt sample's chunk arrived at `heard`: the prompt had started by then,
        // so the first poll sent after it must find every stream ducked.
        let heard: UInt64? = recorder.withRecording { samples, arrivals, _ in
            guard let first = samples.firstIndex(where: { abs($0) > 0.05 }) else { return nil }
            return arrivals.first { $0.frames > first }?.nanoseconds
        }
        let polls = state.polls
        let atStart = heard.flatMap { heard in polls.first { $0.sent >= heard }?.ducked }
        let most = polls.map(\.ducked).max() ?? 0
        print("[\(TestServer.kind)] 100 streams: \(atStart.map(String.init) ?? "-") at -20 dB in the first poll "
              + "after the prompt was heard, at most \(most) in one poll (\(polls.count) polls); "
              + "prompt took \(String(format: "%.2f", result.seconds)) s")
        #expect(heard != nil, "the prompt was not heard on \(speaker).monitor")
        #expect(most == 100, "the duck never landed on all 100 streams at once")
        // Under ThreadSanitizer the ramp's writes for 100 streams can take longer than the
        // 250 ms the prompt waits for them to come back (CI at 568a4fd: 0 in the first poll,
        // 100 later): when is not measured there, only that the duck lands.
        // A server so busy that the duck had not landed 250 ms after the attack is said on
        // stderr (CI at 3c8a36c, PipeWire, tsan-build alongside: 84 of 100, the 50 ms prompt
        // took 3.8 s): then only that the duck lands is checked.
        let late = result.stderr.contains("the server had not applied the duck to")
        #expect(atStart == 100 || late || ProcessInfo.processInfo.environment["DUCKPROMPT_TEST_SANITIZER"] != nil,
                "the prompt was heard with \(atStart.map(String.init) ?? "no poll") of 100 streams ducked, and duckprompt said nothing: \(result.stderr)")
        if late { print("[\(TestServer.kind)] the server was behind: \(result.stderr)") }
        let restored = try eventually(timeout: 3) { try volumes() == before }
        #expect(restored, "not every pa_cvolume came back exactly")
    }
}

/// The poller's findings, shared with the test's thread.
private final class PollState: @unchecked Sendable {
    private let lock = NSLock()
    private var _done = false
    private var _polls: [(sent: UInt64, ducked: Int)] = []
    var done: Bool {
        get { lock.withLock { _done } }
        set { lock.withLock { _done = newValue } }
    }
    /// Every answer: when its request was sent (`monotonicNanoseconds`), and how many streams
    /// it showed at the duck level.
    var polls: [(sent: UInt64, ducked: Int)] { lock.withLock { _polls } }
    func record(sent: UInt64, ducked: Int) { lock.withLock { _polls.append((sent, ducked)) } }
}
