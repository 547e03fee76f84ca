import Testing
@testable import DuckPrompt
@testable import DuckPromptCore

/// The duck bookkeeping as a state machine: events in, actions out, no server.
@Suite("DuckPlan events")
struct DuckPlanEventTests {
    static let t0 = ContinuousClock.now

    static func input(_ index: UInt32, _ values: [UInt32], app: String? = nil, role: String? = nil,
                      driver: String = "protocol-native.c", extra: [String: String] = [:]) -> SinkInput {
        var props = extra
        if let app { props["application.name"] = app }
        if let role { props["media.role"] = role }
        return SinkInput(index: index, sinkIndex: 0, volume: ChannelVolumes(values), properties: props,
                         driver: driver)
    }

    static func ducked(_ values: [UInt32], _ dB: Double = -20) -> ChannelVolumes {
        VolumeMath.scale(ChannelVolumes(values), by: dB)
    }

    static func volumes(_ actions: [DuckAction]) -> [UInt32: ChannelVolumes] {
        var result: [UInt32: ChannelVolumes] = [:]
        for case .setVolume(let index, let volume) in actions { result[index] = volume }
        return result
    }

    @Test("our own writes coming back are not taken for the user's")
    func ownWritesIgnored() {
        var plan = DuckPlan(inputs: [Self.input(1, [50000, 40000], app: "a")], depth: -20, math: .libpulse)
        var written: [ChannelVolumes] = []
        for step in Ramp(from: 0, to: -20, durationMs: 200).steps {
            written += Self.volumes(plan.apply(gain: step.gain)).values
        }
        // Events arrive late and out of step with the writes: each is one of ours.
        for volume in written {
            #expect(plan.changed(Self.input(1, volume.values, app: "a"), now: Self.t0 + .seconds(5)).isEmpty)
        }
        #expect(plan.entries[0].original == ChannelVolumes([50000, 40000]))
        #expect(Self.volumes(plan.release())[1] == ChannelVolumes([50000, 40000]))
    }

    @Test("the same write reported twice (merged events, two info answers) is still ours")
    func duplicateReportIgnored() {
        var plan = DuckPlan(inputs: [Self.input(1, [65536], app: "a")], depth: -20, math: .libpulse)
        let steps = Ramp(from: 0, to: -20, durationMs: 200).steps
        var written: [ChannelVolumes] = []
        for step in steps.prefix(5) { written += Self.volumes(plan.apply(gain: step.gain)).values }
        // Two info requests answered with the state after the third write, while two more
        // writes are in flight (measured on PulseAudio with 30 streams ducked).
        #expect(plan.changed(Self.input(1, written[2].values, app: "a"), now: Self.t0 + .seconds(5)).isEmpty)
        #expect(plan.changed(Self.input(1, written[2].values, app: "a"), now: Self.t0 + .seconds(5)).isEmpty)
        #expect(plan.entries[0].original == ChannelVolumes([65536]), "not taken for the user's")
        #expect(Self.volumes(plan.release())[1] == ChannelVolumes([65536]))
    }

    @Test("a user's change while ducked becomes the stream's own volume, divided by the duck")
    func userChangeKept() {
        var plan = DuckPlan(inputs: [Self.input(1, [60000, 60000], app: "a")], depth: -20, math: .libpulse)
        _ = plan.apply(gain: -20)
        let half = Self.ducked([60000, 60000]).values.map { $0 / 2 }
        #expect(plan.changed(Self.input(1, half, app: "a"), now: Self.t0 + .seconds(5)).isEmpty, "nothing is written back")
        let restored = try! #require(Self.volumes(plan.release())[1])
        #expect(zip(restored.values, [30000, 30000]).allSatisfy { abs(Int($0) - Int($1)) <= 2 }, "\(restored)")
    }

    @Test("a PipeWire node's values, each in order: a user's change one of our writes overwrote is written again and kept; a stream not ducked is not taken up")
    func nodeValuesInOrder() {
        var plan = DuckPlan(inputs: [Self.input(1, [60000, 60000], app: "a")], depth: -20, math: .libpulse)
        let steps = Ramp(from: 0, to: -20, durationMs: 200).steps
        var written: [ChannelVolumes] = []
        for step in steps.prefix(6) { written += Self.volumes(plan.apply(gain: step.gain)).values }
        let user = ChannelVolumes([30000, 20000])
        // The node applied writes 0-2, then the user's change, then writes 3-5 over it.
        for volume in written.prefix(3) { #expect(plan.changed(index: 1, volume: volume).isEmpty) }
        #expect(plan.changed(index: 1, volume: user).isEmpty, "nothing written while writes are in flight")
        #expect(plan.changed(index: 1, volume: written[3]).count == 1, "the change is written again once ours overwrote it")
        let again = plan.entries[0].current
        #expect(again == user, "the user's exact value at the gain they set it")
        // Writes 4 and 5 overwrite the rewrite too: each coming back asks for one more.
        var rewrites = 1
        for volume in written.dropFirst(4) { rewrites += plan.changed(index: 1, volume: volume).count }
        #expect(rewrites == 3)
        for _ in 0..<rewrites { #expect(plan.changed(index: 1, volume: again).isEmpty) }
        #expect(plan.isSettled)
        #expect(plan.changed(index: 7, volume: user).isEmpty && plan.entries.count == 1, "a stream not ducked stays out")
        let restored = try! #require(Self.volumes(plan.release())[1])
        #expect(restored != ChannelVolumes([60000, 60000]) && restored.values[0] > 30000 && restored.values[1] > 20000,
                "\(restored)")
    }

    /// A user's change that the server applied between two of our ramp writes, in both
    /// directions: the info answers arrive in the order the server sent them.
    struct RaceCase: Sendable, CustomStringConvertible {
        var name: String
        /// The ramp (attack to -20 dB, or release from -20 dB).
        var from: Double, to: Double
        /// After which step the user's change lands; how many of our writes were in flight then
        /// (sent before we saw it) and come back after it.
        var step: Int, inFlight: Int
        var description: String { name }
    }

    static let races: [RaceCase] = [
        RaceCase(name: "release, change seen, no write in flight", from: -20, to: 0, step: 20, inFlight: 0),
        RaceCase(name: "release, one write lands after the change", from: -20, to: 0, step: 20, inFlight: 1),
        RaceCase(name: "release, three writes land after it", from: -20, to: 0, step: 30, inFlight: 3),
        RaceCase(name: "release, the last step lands after it", from: -20, to: 0, step: 48, inFlight: 1),
        RaceCase(name: "attack, one write lands after the change", from: 0, to: -20, step: 8, inFlight: 1),
        RaceCase(name: "attack, two writes land after it", from: 0, to: -20, step: 12, inFlight: 2),
    ]

    @Test("a user's change overtaken by our writes in flight is written again and kept, bit for bit", arguments: races)
    func userChangeOvertaken(_ race: RaceCase) throws {
        let original = ChannelVolumes([45000, 52000])
        let user = ChannelVolumes([30000, 20000])
        var plan = DuckPlan(inputs: [Self.input(1, original.values, app: "a")], depth: -20, math: .libpulse)
        _ = plan.apply(gain: race.from)
        let steps = Ramp(from: race.from, to: race.to, durationMs: race.from < race.to ? 500 : 200).steps
        var sent: [ChannelVolumes] = []
        var written: [ChannelVolumes] = []
        // Our writes up to the change come back before it.
        for step in steps.prefix(race.step) { sent += Self.volumes(plan.apply(gain: step.gain)).values }
        for volume in sent { _ = plan.changed(Self.input(1, volume.values, app: "a"), now: Self.t0 + .seconds(5)) }
        // `inFlight` more writes go out before we hear of the change; the server applies the
        // user's first, then ours.
        var late: [ChannelVolumes] = []
        for step in steps.dropFirst(race.step).prefix(race.inFlight) {
            late += Self.volumes(plan.apply(gain: step.gain)).values
        }
        let gainAtChange = plan.gain
        #expect(plan.changed(Self.input(1, user.values, app: "a"), now: Self.t0 + .seconds(5)).isEmpty,
                "the change itself writes nothing")
        for volume in late {
            written += Self.volumes(plan.changed(Self.input(1, volume.values, app: "a"), now: Self.t0 + .seconds(5))).values
        }
        if race.inFlight > 0 {
            // Written again: the user's level at the gain they set it at, or the own volume
            // derived from it at the gain the duck is at now.
            let again = try #require(written.last, "the overtaken change was not written again")
            let expected = plan.gain == gainAtChange ? user : VolumeMath.scale(VolumeMath.unscale(user, by: gainAtChange), by: plan.gain)
            #expect(again == expected)
            _ = plan.changed(Self.input(1, again.values, app: "a"), now: Self.t0 + .seconds(5))
        } else {
            #expect(written.isEmpty)
        }
        // The rest of the ramp, then the release: the own volume derived from the user's value.
        for step in steps.dropFirst(race.step + race.inFlight) { _ = plan.apply(gain: step.gain) }
        let final = try #require(Self.volumes(plan.release())[1] ?? plan.entries.first?.current)
        let own = gainAtChange == 0 ? user : VolumeMath.unscale(user, by: gainAtChange)
        #expect(plan.entries[0].original == own, "own volume \(plan.entries[0].original), expected \(own)")
        #expect(final == own || plan.entries[0].current == own, "ends at \(final), expected \(own)")
        #expect(final != original, "the user's change was lost")
    }

    @Test("a read sent just before our write shows the state before it: not a change, in both directions")
    func readBeforeWriteIsNotAChange() {
        var plan = DuckPlan(inputs: [Self.input(1, [45000, 52000], app: "a")], depth: -20, math: .libpulse)
        var previous = ChannelVolumes([45000, 52000])
        for step in Ramp(from: 0, to: -20, durationMs: 200).steps + Ramp(from: -20, to: 0, durationMs: 500).steps {
            let written = Self.volumes(plan.apply(gain: step.gain)).values
            // The read shows the state before the write, then the write comes back.
            #expect(plan.changed(Self.input(1, previous.values, app: "a"), now: Self.t0 + .seconds(5)).isEmpty)
            for volume in written {
                #expect(plan.changed(Self.input(1, volume.values, app: "a"), now: Self.t0 + .seconds(5)).isEmpty)
                previous = volume
            }
        }
        #expect(plan.entries[0].original == ChannelVolumes([45000, 52000]), "taken for a user's change")
        #expect(plan.entries[0].current == ChannelVolumes([45000, 52000]))
    }

    @Test("a user's change seen at the gain it is still at is kept exactly, not rescaled")
    func userChangeExactAtSameGain() {
        var plan = DuckPlan(inputs: [Self.input(1, [45000, 52000], app: "a")], depth: -20, math: .libpulse)
        _ = plan.apply(gain: -20)
        let inFlight = Self.volumes(plan.apply(gain: -20.0)).values   // nothing new: same gain
        #expect(inFlight.isEmpty)
        #expect(plan.changed(Self.input(1, [12345, 23456], app: "a"), now: Self.t0 + .seconds(5)).isEmpty)
        // A later step at the same gain (a handover adopting it) writes the user's value as is.
        #expect(Self.volumes(plan.apply(gain: -20))[1] == nil, "the user's exact level is not rewritten")
        #expect(plan.entries[0].current == ChannelVolumes([12345, 23456]))
    }

    @Test("a stream that appears during the duck is ducked at once and restored to its own volume")
    func newStreamDucked() {
        var plan = DuckPlan(inputs: [], depth: -20, math: .libpulse)
        _ = plan.apply(gain: -20)
        let actions = plan.appeared(Self.input(7, [45000, 45000], app: "late", role: "music"), now: Self.t0)
        #expect(Self.volumes(actions)[7] == Self.ducked([45000, 45000]))
        #expect(Self.volumes(plan.release())[7] == ChannelVolumes([45000, 45000]))
    }

    @Test("the server settling a new stream's volume right after it appears is not a user change")
    func settlingIsNotTheUser() {
        var plan = DuckPlan(inputs: [], depth: -20, math: .libpulse)
        _ = plan.apply(gain: -20)
        _ = plan.appeared(Self.input(7, [65536, 65536], app: "late"), now: Self.t0)
        // 20 ms later the session manager restores the saved 45000: that is its own volume.
        let actions = plan.changed(Self.input(7, [45000, 45000], app: "late"), now: Self.t0 + .milliseconds(20))
        #expect(Self.volumes(actions)[7] == Self.ducked([45000, 45000]))
        #expect(Self.volumes(plan.release())[7] == ChannelVolumes([45000, 45000]))
    }

    @Test("a stream found at 0 (pipewire-pulse before the node's Props), new or already there, takes its first audible volume as its own, however late it comes: ducked from it, and back to it, never +20 dB",
          arguments: [(true, 20), (true, 900), (false, 900)])
    func silentUntilRead(appearedDuringPrompt: Bool, afterMs: Int) {
        let zero = Self.input(7, [0, 0], app: "late")
        var plan = DuckPlan(inputs: appearedDuringPrompt ? [] : [zero], depth: -20, math: .libpulse)
        let silentWrites = plan.apply(gain: -20) + (appearedDuringPrompt ? plan.appeared(zero, now: Self.t0) : [])
        #expect(Self.volumes(silentWrites)[7] == nil, "a 0 was scaled and written: \(silentWrites)")
        let actions = plan.changed(Self.input(7, [65536, 65536], app: "late"), now: Self.t0 + .milliseconds(afterMs))
        #expect(Self.volumes(actions)[7] == Self.ducked([65536, 65536]))
        // The server may still settle it right after (WirePlumber's restore): still not the user.
        let settled = plan.changed(Self.input(7, [45000, 45000], app: "late"), now: Self.t0 + .milliseconds(afterMs + 20))
        #expect(Self.volumes(settled)[7] == Self.ducked([45000, 45000]))
        #expect(Self.volumes(plan.release())[7] == ChannelVolumes([45000, 45000]))
    }

    @Test("a stream that ends while ducked has its saved volume repaired, unless a newer one of its key is restored")
    func endedStreamRepaired() {
        var plan = DuckPlan(inputs: [Self.input(1, [50000, 50000], app: "a"),
                                     Self.input(2, [42000, 42000], app: "b", role: "music")], depth: -20, math: .libpulse)
        _ = plan.apply(gain: -20)
        #expect(plan.ended(index: 1).isEmpty)
        #expect(plan.ended(index: 2).isEmpty)
        // Another music stream takes over the role key: restoring it repairs the role's entry.
        _ = plan.appeared(Self.input(3, [30000, 30000], app: "c", role: "music"), now: Self.t0)
        let release = plan.release()
        #expect(release.contains(.repairSaved(key: RestoreKey(applicationName: "a"), volume: ChannelVolumes([50000, 50000]))))
        #expect(!release.contains { if case .repairSaved(let key, _) = $0 { return key.mediaRole == "music" } else { return false } })
        #expect(Self.volumes(release)[3] == ChannelVolumes([30000, 30000]))
    }

    @Test("a stream that ends before it was ducked leaves nothing to repair")
    func endedUnduckedNoRepair() {
        var plan = DuckPlan(inputs: [Self.input(1, [50000, 50000], app: "a")], depth: -20, math: .libpulse)
        #expect(plan.ended(index: 1).isEmpty)
        #expect(plan.release().isEmpty)
    }

    @Test("a replacement stream that starts at the ducked saved volume takes the old one's own volume")
    func replacementNotDuckedTwice() {
        var plan = DuckPlan(inputs: [Self.input(1, [47000, 47000], app: "p", role: "music")], depth: -20, math: .libpulse)
        _ = plan.apply(gain: -20)
        _ = plan.ended(index: 1)
        // The server starts the next track at the volume it saved: the ducked one.
        let start = Self.ducked([47000, 47000])
        let actions = plan.appeared(Self.input(2, start.values, app: "p", role: "music"), now: Self.t0)
        #expect(Self.volumes(actions)[2] == nil, "already at the ducked level: nothing to write")
        #expect(plan.entries.first { $0.index == 2 }?.original == ChannelVolumes([47000, 47000]))
        let release = plan.release()
        #expect(Self.volumes(release)[2] == ChannelVolumes([47000, 47000]))
        #expect(!release.contains { if case .repairSaved = $0 { return true } else { return false } },
                "the new stream's restore repairs the role's saved volume")
    }

    /// A paused player's stream: what its infos show (corked or playing), in order, and
    /// whether it ends up ducked.
    struct PausedRow: Sendable, CustomStringConvertible {
        var corkedAtStart: Bool
        var refused = false
        var infos: [Bool]
        var ducked: Bool
        var description: String {
            "\(corkedAtStart ? "corked" : "playing") at start\(refused ? ", Pause refused" : ""), infos corked \(infos) -> \(ducked ? "ducked" : "left")"
        }
    }

    static let pausedRows: [PausedRow] = [
        // The Pause has not reached the stream yet: still playing, not the user.
        PausedRow(corkedAtStart: false, infos: [false], ducked: false),
        PausedRow(corkedAtStart: false, infos: [false, false], ducked: false),
        PausedRow(corkedAtStart: false, infos: [true], ducked: false),
        PausedRow(corkedAtStart: false, infos: [false, true, true], ducked: false),
        // Corked, then playing: the user pressed Play.
        PausedRow(corkedAtStart: false, infos: [true, false], ducked: true),
        PausedRow(corkedAtStart: false, infos: [false, true, false], ducked: true),
        // Once in the duck it stays there, corked again or not.
        PausedRow(corkedAtStart: false, infos: [true, false, true], ducked: true),
        // A handed-over player's stream is corked from the start.
        PausedRow(corkedAtStart: true, infos: [false], ducked: true),
        PausedRow(corkedAtStart: true, infos: [true], ducked: false),
        // A player that refused its Pause plays on: ducked at its next info.
        PausedRow(corkedAtStart: false, refused: true, infos: [false], ducked: true),
        PausedRow(corkedAtStart: false, refused: true, infos: [], ducked: false),
    ]

    @Test("a paused player's stream stays off the duck until seen corked and then playing (the user's Play), or its Pause is refused",
          arguments: pausedRows)
    func pausedStream(_ row: PausedRow) {
        let music = Self.input(1, [50000, 50000], app: "music")
        // The server's volume of the podcast's stream: its own, until one of our writes.
        var onServer = ChannelVolumes([40000, 40000])
        func podcast(corked: Bool) -> SinkInput {
            SinkInput(index: 4, sinkIndex: 0, volume: onServer, corked: corked,
                      properties: ["application.name": "podcast"], driver: "protocol-native.c")
        }
        var plan = DuckPlan(inputs: [music, podcast(corked: row.corkedAtStart)], depth: -20, pausing: [4], math: .libpulse)
        #expect(plan.entries.map(\.index) == [1])
        _ = plan.apply(gain: -20)
        if row.refused { plan.pauseRefused(streams: [4]) }
        var written: [ChannelVolumes] = []
        for corked in row.infos {
            if let volume = Self.volumes(plan.appeared(podcast(corked: corked), now: Self.t0))[4] {
                written.append(volume)
                onServer = volume
                // Our write comes back.
                _ = plan.changed(index: 4, volume: volume, now: Self.t0)
            }
        }
        #expect(plan.entries.contains { $0.index == 4 } == row.ducked)
        #expect(written == (row.ducked ? [Self.ducked([40000, 40000])] : []), "written \(written)")
        #expect((plan.pausedStreams[4] == nil) == row.ducked)
        // Back to its own volume at the release when it was ducked; never written otherwise.
        #expect(Self.volumes(plan.release())[4] == (row.ducked ? ChannelVolumes([40000, 40000]) : nil))
    }

    @Test("a handed-over duck that holds a paused player's stream (played by the user in the last prompt) is taken over")
    func adoptPlayedPausedStream() {
        let podcast = SinkInput(index: 4, sinkIndex: 0, volume: Self.ducked([40000, 40000]),
                                properties: ["application.name": "podcast"], driver: "protocol-native.c")
        var journal = DuckJournal(pid: 1, processStart: 1, depth: -20)
        journal.streams = [.init(index: 4, original: ChannelVolumes([40000, 40000]), key: RestoreKey(podcast))]
        journal.gain = -20
        var plan = DuckPlan(inputs: [podcast], depth: -20, pausing: [4], math: .libpulse)
        #expect(plan.entries.isEmpty && plan.pausedStreams[4] == .pausing)
        plan.adopt(journal, live: [podcast])
        #expect(plan.entries.map(\.index) == [4] && plan.pausedStreams.isEmpty && !plan.excluded.contains(4))
        #expect(Self.volumes(plan.release())[4] == ChannelVolumes([40000, 40000]))
    }

    @Test("plumbing, exempt roles, prompts and repairs are never ducked", arguments: [
        input(1, [65536], driver: "module-loopback.c"),
        input(2, [65536], driver: "module-combine-sink.c"),
        input(3, [65536], extra: ["node.link-group": "filter-chain-12"]),
        input(4, [65536], extra: ["application.id": "com.github.wwmm.easyeffects"]),
        input(5, [65536], role: "phone"),
    ])
    func leftAlone(_ input: SinkInput) {
        var plan = DuckPlan(inputs: [input], depth: -20, math: .libpulse)
        #expect(plan.entries.isEmpty)
        _ = plan.apply(gain: -20)
        #expect(plan.appeared(input, now: Self.t0).isEmpty)
    }

    @Test("mute mode: every channel at 0, and back exactly")
    func muteMode() {
        var plan = DuckPlan(inputs: [Self.input(1, [40000, 30000, 20000])], depth: -.infinity, math: .libpulse)
        let muted = Self.volumes(plan.apply(gain: -.infinity))[1]
        #expect(muted == ChannelVolumes([0, 0, 0]))
        #expect(Self.volumes(plan.release())[1] == ChannelVolumes([40000, 30000, 20000]))
    }
}
