import FoundationEssentials
import Glibc

/// Pauses the MPRIS players of one prompt and resumes them after it: finds the players whose
/// streams play (by process id; a Flatpak app's by its app id, `FlatpakApp`), asks `SpokenWordPolicy` which to pause, pauses them at the
/// start of the attack and resumes them, rewound, when the duck is released. Used from the
/// prompt's own thread only (its `SessionBusClient` is not thread-safe).
///
/// Never fails a prompt: no session bus, or a player that does not answer within
/// `timeoutMs`, is one line in `warnings`, and its streams are ducked as any other.
///
/// D-Bus: `ListNames`, `GetNameOwner`, `GetConnectionUnixProcessID`; a player's
/// `Properties.GetAll`, `Properties.Get("Position")`, `Pause`, `Seek`, `Play`.
final class PlayerPauser {
    /// How long one call may take before the player (or the bus) counts as not answering.
    static let timeoutMs = 300

    /// Players to pause at the attack (decided, not yet paused), then paused.
    private(set) var toPause: [PausedPlayer] = []
    /// Players this prompt holds paused: its own, and those a handed-over duck kept paused.
    private(set) var paused: [PausedPlayer] = []
    /// Sink-inputs kept off the duck: paused and ignored players' streams.
    private(set) var excluded: Set<UInt32> = []
    /// Streams of the players that refused their `Pause` or did not answer (`pauseAll`): they
    /// play on, and are to be ducked (`DuckPlan.pauseRefused`).
    private(set) var refused: [UInt32] = []
    /// For `-v`: what was decided and done, one line each ("paused: …", "resumed: …").
    private(set) var notes: [String] = []
    /// For stderr whatever the verbosity: no session bus, a player that did not answer.
    private(set) var warnings: [String] = []

    /// The streams of the players paused (or to pause) for the prompt: off the duck while
    /// they stay paused (`DuckPlan.pausedStreams`).
    var pausedStreams: Set<UInt32> { Set((paused + toPause).flatMap(\.streams)) }

    private var bus: SessionBusClient?
    /// Where `bus` is borrowed from and given back to (a held prompter's); nil: a connection
    /// of its own.
    private let buses: SessionBusPool?

    /// Looks at the players whose process plays one of `inputs` (uncorked, with an
    /// `application.process.id`) and decides what to do with each. Contacts the session bus
    /// only when such a stream plays or `inherited` is not empty, and with `.noPause` only
    /// when a rule says to ignore a player.
    /// - Parameters:
    ///   - inherited: players a handed-over duck keeps paused (`DuckJournal.players`).
    ///   - buses: a held prompter's session-bus connections (nil: one of its own).
    init(inputs: [SinkInput], mode: PauseMode, rules: [PlayerRule], rewindMs: Int, inherited: [PausedPlayer],
         buses: SessionBusPool? = nil) {
        self.buses = buses
        paused = inherited
        excluded = Set(inherited.flatMap(\.streams))
        guard mode != .off, mode != .noPause || rules.contains(where: { $0.action == .ignore }) else { return }
        var byPID: [Int32: [SinkInput]] = [:]
        var byApp: [String: [SinkInput]] = [:]
        for input in inputs where !input.corked && !DuckPlan.isOwn(input) {
            // A Flatpak app's stream: its process id is one of its sandbox's, never matched.
            if let app = input.properties[FlatpakApp.streamKey], !app.isEmpty {
                byApp[app, default: []].append(input)
                continue
            }
            guard let text = input.properties["application.process.id"], let pid = Int32(text), pid > 0 else { continue }
            byPID[pid, default: []].append(input)
        }
        guard !byPID.isEmpty || !byApp.isEmpty || !inherited.isEmpty else { return }
        DebugTrace.write("players: \(byPID.count) playing process(es), \(byApp.count) Flatpak app(s), \(inherited.count) inherited; asking the session bus")
        defer { DebugTrace.write("players: \(toPause.count) to pause, \(excluded.count) stream(s) off the duck") }
        guard let bus = connect() else { return }
        guard !byPID.isEmpty || !byApp.isEmpty else { return }
        let names: [String]
        do {
            names = try bus.listNames(timeoutMs: Self.timeoutMs).filter { $0.hasPrefix(MPRISPlayer.busNamePrefix) }.sorted()
        } catch {
            warnings.append("players not paused: \(Self.describe(error)); their streams are ducked")
            return
        }
        for name in names {
            guard let pid = try? bus.processID(of: name, timeoutMs: Self.timeoutMs) else { continue }
            // Its own streams; or, for a player in a Flatpak sandbox, its app's (each app's
            // streams go to one player).
            var streams = byPID[pid]
            if streams == nil, !byApp.isEmpty, let app = FlatpakApp.appID(ofProcess: pid) {
                streams = byApp.removeValue(forKey: app)
            }
            guard let streams else { continue }
            let player: MPRISPlayer
            do {
                player = try read(name, pid: pid)
            } catch {
                warnings.append("player \(name) (pid \(pid)) not paused: \(Self.describe(error)); its stream is ducked")
                continue
            }
            let decision = SpokenWordPolicy.decide(player, applicationNames: streams.compactMap { $0.properties["application.name"] },
                                                   rules: rules, mode: mode)
            let indices = streams.map(\.index).sorted()
            switch decision.action {
            case .pause:
                toPause.append(PausedPlayer(player, pausedAt: Self.now(), rewindMs: rewindMs, streams: indices,
                                            reason: decision.reason))
                excluded.formUnion(indices)
            case .ignore:
                excluded.formUnion(indices)
                notes.append("left alone: \(player.label): \(decision.reason)")
            case .duck:
                notes.append("ducked, not paused: \(player.label): \(decision.reason)")
            }
        }
    }

    /// Pauses every player decided on (`Pause`), and reads where each stopped (`Position`).
    /// A player that refuses, or does not answer, is named in `warnings`, and its streams are
    /// in `refused`, to be ducked.
    func pauseAll() {
        guard let bus else { return }
        for var player in toPause {
            do {
                try bus.call(player.busName, MPRISPlayer.objectPath, MPRISPlayer.playerInterface, "Pause",
                             timeoutMs: Self.timeoutMs) { _ in }
                player.pausedAt = Self.now()
                if case .int64(let position)? = try? bus.property("Position", of: player.busName, path: MPRISPlayer.objectPath,
                                                                  interface: MPRISPlayer.playerInterface, timeoutMs: Self.timeoutMs) {
                    player.positionUs = position
                }
                paused.append(player)
                notes.append("paused: \(player.label)\(player.positionUs.map { " at " + SpokenWordPolicy.seconds($0) } ?? ""): \(player.reason)")
            } catch {
                refused += player.streams
                warnings.append("player \(player.label) not paused: \(Self.describe(error)); its stream is ducked")
            }
        }
        toPause = []
    }

    /// Resumes every player this prompt holds paused that is still as it was left
    /// (`SpokenWordPolicy.resume`): `Seek` back by its rewind, then `Play`. Called when the
    /// duck is released, and when the prompt ends without a release (a route that failed after
    /// a dead prompt's players were adopted); not when the duck is handed over (the next prompt
    /// resumes them). A player that does not answer is a line in `warnings`.
    func resumeAll() {
        let players = paused
        paused = []
        guard !players.isEmpty, let bus = bus ?? connect() else { return }
        let outcome = Self.resume(players, on: bus)
        notes += outcome.notes
        warnings += outcome.warnings
    }

    /// What a resume or an adoption found: lines for `-v` (what was done or left, and why), and
    /// for stderr whatever the verbosity (a player that did not answer).
    struct Lines {
        var notes: [String] = []
        var warnings: [String] = []
    }

    /// Resumes `players` as a recovery or a prompt does: one line each for what was done.
    /// - Parameter ageFrom: a recovery's clock (seconds since 1970): pauses older than
    ///   `PausedPlayer.staleAfterSeconds` are left; nil for the prompt's own players.
    static func resume(_ players: [PausedPlayer], on bus: SessionBusClient, ageFrom now: Double? = nil) -> Lines {
        var (found, lines) = resumable(players, on: bus, ageFrom: now)
        for (player, current, seekUs) in found {
            do {
                if seekUs != 0 {
                    try bus.call(player.busName, MPRISPlayer.objectPath, MPRISPlayer.playerInterface, "Seek",
                                 [.int64(seekUs)], timeoutMs: timeoutMs) { _ in }
                }
                try bus.call(player.busName, MPRISPlayer.objectPath, MPRISPlayer.playerInterface, "Play",
                             timeoutMs: timeoutMs) { _ in }
                let at = current?.positionUs.map { " at " + SpokenWordPolicy.seconds(max(0, $0 + seekUs)) } ?? ""
                lines.notes.append("resumed: \(player.label)\(at) (rewound \(SpokenWordPolicy.seconds(-seekUs)))")
            } catch {
                lines.warnings.append("could not resume \(player.label): \(Self.describe(error))")
            }
        }
        return lines
    }

    /// A dead prompt's players that the prompt about to play takes over, as a handed-over duck's
    /// (kept paused, resumed at its release): those `SpokenWordPolicy.resume` would resume now.
    /// Resuming them first would have the new prompt find them corked, then duck them as they
    /// start again.
    static func adoptable(_ players: [PausedPlayer], on bus: SessionBusClient, ageFrom now: Double) -> ([PausedPlayer], Lines) {
        let (found, lines) = resumable(players, on: bus, ageFrom: now)
        return (found.map(\.player), lines)
    }

    /// Each of `players` that `SpokenWordPolicy.resume` would resume now, with what its bus
    /// name shows and the seek (µs); a line for each of the others: left as it is (for `-v`),
    /// or not answering (a warning).
    private static func resumable(_ players: [PausedPlayer], on bus: SessionBusClient, ageFrom now: Double?)
        -> ([(player: PausedPlayer, current: MPRISPlayer?, seekUs: Int64)], Lines) {
        var found: [(player: PausedPlayer, current: MPRISPlayer?, seekUs: Int64)] = []
        var lines = Lines()
        for player in players {
            let current: MPRISPlayer?
            do {
                current = try look(at: player, on: bus)
            } catch {
                lines.warnings.append("could not resume \(player.label): \(Self.describe(error))")
                continue
            }
            switch SpokenWordPolicy.resume(player, now: current, ageSeconds: now.map { $0 - player.pausedAt }) {
            case .leave(let why): lines.notes.append("not resumed: \(player.label): \(why)")
            case .resume(let seekUs): found.append((player, current, seekUs))
            }
        }
        return (found, lines)
    }

    /// What a paused player's bus name shows now: nil when no one owns it.
    /// - Throws: `DuckPromptError(.unavailable)` when its owner does not answer `GetAll`.
    private static func look(at player: PausedPlayer, on bus: SessionBusClient) throws -> MPRISPlayer? {
        guard let owner = try? bus.owner(of: player.busName, timeoutMs: timeoutMs) else { return nil }
        var facts = MPRISPlayer(busName: player.busName, uniqueName: owner, pid: player.pid)
        facts.read(root: [:], player: try bus.properties(of: player.busName, path: MPRISPlayer.objectPath,
                                                         interface: MPRISPlayer.playerInterface, timeoutMs: timeoutMs))
        return facts
    }

    /// Reads a player's facts: its owner and both interfaces' properties.
    private func read(_ name: String, pid: Int32) throws -> MPRISPlayer {
        guard let bus else { preconditionFailure("connected first") }
        var player = MPRISPlayer(busName: name, uniqueName: try bus.owner(of: name, timeoutMs: Self.timeoutMs), pid: pid)
        let props = try bus.properties(of: name, path: MPRISPlayer.objectPath, interface: MPRISPlayer.playerInterface,
                                       timeoutMs: Self.timeoutMs)
        let root = (try? bus.properties(of: name, path: MPRISPlayer.objectPath, interface: MPRISPlayer.rootInterface,
                                        timeoutMs: Self.timeoutMs)) ?? [:]
        player.read(root: root, player: props)
        return player
    }

    deinit {
        if let bus { buses?.giveBack(bus) }
    }

    private func connect() -> SessionBusClient? {
        do {
            bus = try buses?.borrow() ?? SessionBusClient()
        } catch {
            warnings.append("players not paused: \(Self.describe(error)); their streams are ducked")
        }
        return bus
    }

    private static func describe(_ error: any Error) -> String {
        (error as? DuckPromptError)?.message ?? "\(error)"
    }

    /// Seconds since 1970 (`CLOCK_REALTIME`): a journal's clock, read by another process.
    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
