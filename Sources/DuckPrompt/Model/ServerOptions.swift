import FoundationEssentials

/// Where and how to reach the sound server.
public struct ServerOptions: Sendable, Equatable {
    /// libpulse server string (`-s/--server`); nil uses `PULSE_SERVER`, then the default socket.
    public var server: String?
    /// The client's `application.name` (`-n/--client-name`).
    public var clientName: String
    /// How long, in ms, connecting and each answer of the server may take before it counts as
    /// gone (`--timeout`); default 5000. In milliseconds, as every time in `PlayOptions`.
    public var timeoutMs: Int

    public init(server: String? = nil, clientName: String = "duckprompt", timeoutMs: Int = 5000) {
        self.server = server
        self.clientName = clientName
        self.timeoutMs = timeoutMs
    }

    /// The server string libpulse is given: `server`, else `PULSE_SERVER` (as libpulse reads
    /// it), else "" (libpulse's default: the user's runtime socket). What `duckprompt serve`
    /// tells as its `Server` property, and what `duckprompt play` compares with its own before
    /// it hands a prompt over.
    package var named: String {
        if let server { return server }
        return Environment.value("PULSE_SERVER") ?? ""
    }
}
