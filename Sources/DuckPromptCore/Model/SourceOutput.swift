/// A recording stream, as `pa_source_output_info` reports it: what the call rules need
/// (`CallStreams`) — a phone app records while it plays.
package struct SourceOutput: Sendable, Equatable, Codable {
    /// Server-side index (`pa_source_output_info.index`).
    package var index: UInt32
    /// The client's index (`pa_source_output_info.client`), nil for a module's stream
    /// (`PA_INVALID_INDEX`).
    package var client: UInt32?
    /// Paused (`pa_source_output_info.corked`).
    package var corked: Bool
    /// Properties (`pa_source_output_info.proplist`): `media.role`, `application.name` …
    package var properties: [String: String]

    package init(index: UInt32, client: UInt32? = nil, corked: Bool = false, properties: [String: String] = [:]) {
        self.index = index
        self.client = client
        self.corked = corked
        self.properties = properties
    }

    /// `media.role`, if the stream has one.
    package var mediaRole: String? { properties["media.role"] }
}
