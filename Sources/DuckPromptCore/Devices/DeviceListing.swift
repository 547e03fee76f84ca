import FoundationEssentials

/// A server's sinks, each classified, and where a prompt would go now.
public struct DeviceListing: Sendable {
    /// Sinks, sink-inputs and default sink as read from the server.
    package var snapshot: Snapshot
    /// One classification per sink, in `snapshot.sinks` order.
    package var classifications: [Classification]
    /// The routing decision, or nil when no sink is usable (`routeError` says why).
    public var route: RouteDecision?
    public var routeError: DuckPromptError?
    /// `pa_server_info.server_name` and `server_version`, e.g. `PulseAudio (on PipeWire 0.3.65)`.
    public var serverName: String
    public var serverVersion: String
    /// What was undone first for prompts that died mid-duck (one line each; usually empty).
    public var recoveryNotes: [String] = []
    /// Every call seen: the server's call streams (`CallStreams`, from `snapshot`) and the
    /// buses' calls given to `init`.
    package var calls: CallStatus
    /// Whether the user is on a call (`calls.state`): what `--during-call` follows.
    public var callState: CallState { calls.state }

    /// What the listing says of its sinks besides the table: one line per sink the dump gave
    /// no name (`UnnamedSink`), listed under a placeholder.
    package var notes: [String] {
        snapshot.sinks.map(\.name).filter(UnnamedSink.isPlaceholder).map(UnnamedSink.note)
    }

    /// Classifies and routes a snapshot (from a server or a dump), exactly as `play` would.
    /// `config` supplies the user's `prefer`, `ranking` and `never` (default: none); `busCalls`
    /// the calls of the session and system buses (`BusCalls`; none for a dump).
    package init(snapshot: Snapshot, request: DeviceRequest? = nil, config: DuckPromptConfig = DuckPromptConfig(),
                serverName: String = "", serverVersion: String = "", busCalls: [CallReading] = []) {
        self.snapshot = snapshot
        calls = CallStatus(readings: CallStreams.find(sinkInputs: snapshot.sinkInputs,
                                                      sourceOutputs: snapshot.sourceOutputs).readings + busCalls)
        classifications = Classifier.classify(snapshot, ranking: config.ranking)
        do {
            route = try Router.route(snapshot, classifications: classifications, request: request, config: config)
            routeError = nil
        } catch let error as DuckPromptError {
            route = nil
            routeError = error
        } catch {
            route = nil
            routeError = DuckPromptError(.internal, "\(error)")
        }
        self.serverName = serverName
        self.serverVersion = serverVersion
    }
}

/// One step of `DuckPrompt.watchDevices`: the server's sinks now, and what changed since the
/// previous step (empty for the first).
package struct DeviceUpdate: Sendable {
    package var listing: DeviceListing
    package var changes: [DeviceChange]

    package init(listing: DeviceListing, changes: [DeviceChange]) {
        self.listing = listing
        self.changes = changes
    }
}
