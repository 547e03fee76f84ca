import Glibc

extension Prompter {
    /// When `sources` played now would be heard, without playing them (the service's
    /// `Estimate` and `EstimateSay`): routed, its duck planned and the call policy applied as
    /// the prompt would be, from the prompter's copy of the server, the sinks' latencies read
    /// now. Nothing is queued, ducked or written.
    /// - Parameters:
    ///   - sources: the prompt's parts (their `duration`; a `SpeechSource` synthesized and
    ///     counted by `measuredDuration`).
    ///   - options: its options (route, duck, attack, pre-roll, `--during-call`).
    /// - Throws: `.usage` for options out of range; `.unavailable` when no sink is usable or
    ///   the server does not answer. libpulse: the mirror's lists (`ServerMirror`),
    ///   `pa_context_get_sink_info_list` for the latencies.
    public func estimate(_ sources: [any PromptSource], options: PlayOptions) throws -> PromptEstimate {
        try estimate(sources, options: options, startUs: nil)
    }

    /// `estimate(_:options:)` with the path's own start time (`PromptEstimate.startUs`) read
    /// once the server's sinks were read, before a text is synthesized to be counted; nil: this
    /// held prompter's (`PromptEstimate.heldStartUs(keptStream:asleep:onPipeWire:)`).
    package func estimate(_ sources: [any PromptSource], options: PlayOptions,
                          startUs ownStart: (() -> Int)?) throws -> PromptEstimate {
        try options.validate()
        let connection = try reconnect()
        try connection.waitUntilReady()
        // The sinks read now (`routingSnapshot`): a sink's latency follows its streams and its
        // state may change, with no event for the mirror (PulseAudio's null sink that was
        // never played to says its 2 s block until a stream asks for less).
        let (snapshot, info) = try connection.routingSnapshot()
        // A new stream takes longer to its first sample than the one kept from the last prompt.
        let sink = try DuckPrompt.route(snapshot, request: options.device, config: options.config).sink
        let kept = sources.first.map { first in
            keepsStream(PromptStream.Shape(sinkName: sink.name, rate: first.rate, channels: first.channels,
                                           format: first.sampleFormat, latencyMs: options.latencyMs))
        } ?? false
        let startUs = ownStart?() ?? PromptEstimate.heldStartUs(keptStream: kept, asleep: sink.state == .suspended || sink.state == .idle,
                                                                onPipeWire: info.serverName.contains("PipeWire"))
        return try DuckPrompt.estimate(sources, options: options, snapshot: snapshot, busCalls: calls.readings(),
                                       startUs: startUs)
    }
}

extension DuckPrompt {
    /// `duckprompt play --dry-run` in the command's own process: `sources` (opened by
    /// `sources(files:say:…)`, as `playBlocking(files:say:…)` opens them) routed, planned and the
    /// call policy applied on a one-shot connection, as that prompt would be now; nothing is
    /// queued, ducked or played. `startUs` is this process's age when the server's sinks were
    /// read (`ProcessAge`: its time from exec to its route), else `PromptEstimate.heldStartUs`.
    /// - Throws: what `playBlocking` throws before it plays: `.usage` (64: options out of range,
    ///   no source), `.unavailable` (69: no server, no usable sink).
    package static func estimateBlocking(_ sources: [any PromptSource], options: PlayOptions,
                                         server: ServerOptions) throws -> PromptEstimate {
        try options.validate()
        guard !sources.isEmpty else { throw DuckPromptError(.usage, "nothing to play: a prompt needs a file or a text") }
        let connection = try PulseConnection(server, waitingUntilReady: false)
        return try Prompter(server: server, connection: connection).estimate(sources, options: options) {
            ProcessAge.microseconds() ?? PromptEstimate.heldStartUs
        }
    }

    /// A source's length in seconds: a text's synthesized whole and its frames counted (the
    /// source is used up: an estimate's own), a file's from its header.
    static func measuredDuration(_ source: any PromptSource) -> Double {
        guard source is SpeechSource else { return source.duration }
        let chunk = 4096
        let buffer = UnsafeMutablePointer<Float>.allocate(capacity: chunk * source.channels)
        defer { buffer.deallocate() }
        var frames = 0
        while true {
            let n = source.read(into: buffer, frames: chunk)
            if n == 0 { break }
            frames += n
        }
        return Double(frames) / Double(source.rate)
    }

    /// The estimate of `sources` on `snapshot` (`Prompter.estimate`, `play --dry-run`).
    static func estimate(_ sources: [any PromptSource], options: PlayOptions, snapshot: Snapshot,
                         busCalls: [CallReading], startUs: Int) throws -> PromptEstimate {
        let route = try DuckPrompt.route(snapshot, request: options.device, config: options.config)
        let streams = CallStreams.find(sinkInputs: snapshot.sinkInputs, sourceOutputs: snapshot.sourceOutputs)
        let calls = CallStatus(readings: streams.readings + busCalls)
        let decision = CallDecision.decide(options.duringCall, state: calls.state, callDuck: options.callDuck)
        let played: [any PromptSource] = decision == .chime ? [CallChime()] : sources
        let plan = PromptPlan(options: options, inputs: snapshot.sinkInputs, route: route,
                              parts: PromptSequence.groups(played).count, excluding: [], pausing: [], playersPaused: 0,
                              pausesPlayer: false, handed: nil, call: decision, callStreams: streams.sinkInputs,
                              pid: getpid(), math: .libpulse)
        return PromptEstimate(plan: plan, route: route, options: options,
                              durationSeconds: played.reduce(0) { $0 + measuredDuration($1) }, startUs: startUs,
                              callState: calls.state, decision: decision)
    }
}
