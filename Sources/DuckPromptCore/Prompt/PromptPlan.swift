/// What a prompt will do once it is routed, decided before anything is written: the duck (its
/// depth and its streams), whether it is journaled, the stream's properties, the pre-roll, and
/// the lifecycle's routing. Pure: built from the options, the server's sink-inputs, the route,
/// the players paused for it and a handed-over duck; `PromptRun` carries it out.
package struct PromptPlan: Sendable, Equatable {
    /// From this many streams to duck, the prompt's stream is connected before the attack rather
    /// than during it (`PromptLifecycle.Routing.busy`).
    package static let busyDesktopStreams = 32

    /// The duck: depth in dB (0: none, -infinity: mute) and the streams it lowers, with a
    /// handed-over duck adopted.
    package var duck: DuckPlan
    /// Whether a journal is written before the first volume write or Pause: something will be
    /// ducked, paused or restored, or the prompt's own volume is set relative to a saved one.
    package var journals: Bool
    /// The prompt stream's properties: the caller's, with `media.role` `navigation` unless it
    /// gave one, and `duckprompt.prompt` the process id (the lab and `restore` tell prompts by it).
    package var properties: [String: String]
    /// Silence first, in ms, because the routed sink is asleep: the options' or the config's
    /// pre-roll for its kind (`PlayOptions.preRoll(for:)`); 0 when it runs, or when it played a
    /// handed-over prompt a moment ago (a pre-roll would leave a gap between the two).
    package var preRollMs: Int
    /// How much silence the first part starts with: the pre-roll, or the attack if that is
    /// longer (the device wakes during the attack; the first sample comes after both). 0 for
    /// no pre-roll.
    package var silenceMs: Int
    /// What `PromptLifecycle` is told when routed.
    package var routing: PromptLifecycle.Routing
    /// The prompt's own volume relative to the saved one, in dB: `--volume`, lowered by
    /// `--call-duck` when it plays under a call (`CallDecision.mix`); nil: the saved volume.
    package var promptGain: Decibels?

    /// The duck's depth for the options: 0 for `--duck-mode none`, -infinity for `mute`, else
    /// `--duck` (dB, at most 0), no deeper than a journal holds (`DuckJournal.deepestDepth`:
    /// below -200 dB a duck is inaudible already).
    package static func depth(for options: PlayOptions) -> Double {
        switch options.duckMode {
        case .none: 0
        case .mute: -.infinity
        case .duck, .pause: max(DuckJournal.deepestDepth, min(0, options.duck.value))
        }
    }

    /// - Parameters:
    ///   - options: the prompt's options.
    ///   - inputs: every sink-input on the server (`pa_context_get_sink_input_info_list`).
    ///   - route: where the prompt plays.
    ///   - parts: how many streams the prompt takes (`PromptSequence.groups`), >= 1.
    ///   - excluding: sink-inputs off the duck (the streams of players paused or left alone).
    ///   - pausing: the streams of players paused for the prompt (`DuckPlan.pausedStreams`).
    ///   - playersPaused: how many players are or will be paused for it (those inherited too).
    ///   - pausesPlayer: whether a player is still to be paused (that makes an attack too: the
    ///     prompt starts once it is paused).
    ///   - handed: the duck of a prompt this one interrupted, taken over so that nothing rises
    ///     in between; nil when none.
    ///   - call: what the prompt does about a call (`CallDecision.decide`): `.mix` lowers its
    ///     own volume.
    ///   - callStreams: the sink-inputs of a call (`CallStreams`): never ducked, whatever the
    ///     exempt roles.
    ///   - pid: this process's id, for `duckprompt.prompt`.
    ///   - math: libpulse's volume arithmetic (`VolumeArithmetic.libpulse`).
    package init(options: PlayOptions, inputs: [SinkInput], route: RouteDecision, parts: Int,
                 excluding: Set<UInt32>, pausing: Set<UInt32>, playersPaused: Int, pausesPlayer: Bool,
                 handed: DuckJournal?, call: CallDecision = .play, callStreams: Set<UInt32> = [],
                 pid: Int32, math: VolumeArithmetic) {
        var duck = DuckPlan(inputs: inputs, depth: Self.depth(for: options), exemptRoles: options.exemptRoles,
                            excluding: excluding.union(callStreams), pausing: pausing, math: math)
        if let handed { duck.adopt(handed, live: inputs) }
        self.duck = duck
        if case .mix(let under) = call {
            promptGain = Decibels((options.volume?.value ?? 0) + under.value)
        } else {
            promptGain = options.volume
        }
        journals = duck.depth < 0 || !duck.entries.isEmpty || !duck.ended.isEmpty || promptGain != nil
            || playersPaused > 0
        properties = options.properties
        properties["media.role"] = properties["media.role"] ?? "navigation"
        properties["duckprompt.prompt"] = "\(pid)"
        preRollMs = handed == nil ? options.preRoll(for: route) : 0
        silenceMs = preRollMs > 0 ? max(preRollMs, options.attackMs) : 0
        routing = PromptLifecycle.Routing(parts: parts, preRollMs: preRollMs,
                                          ducks: !duck.entries.isEmpty || pausesPlayer,
                                          busy: duck.entries.count >= Self.busyDesktopStreams,
                                          relativeVolume: promptGain != nil)
    }
}
