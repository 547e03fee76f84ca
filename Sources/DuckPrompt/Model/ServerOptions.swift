import FoundationEssentials

/// Where and how to reach the sound server.
public struct ServerOptions: Sendable, Equatable {
    /// libpulse server string (`-s/--server`); nil uses `PULSE_SERVER`, then the default socket.
    public var server: String?
    /// The client's `application.name` (`-n/--client-name`).
    public var clientName: String
    /// How long connecting may take before giving up (`--timeout`), default 5 s.
    public var timeout: Duration

    public init(server: String? = nil, clientName: String = "duckprompt", timeout: Duration = .seconds(5)) {
        self.server = server
        self.clientName = clientName
        self.timeout = timeout
    }
}
