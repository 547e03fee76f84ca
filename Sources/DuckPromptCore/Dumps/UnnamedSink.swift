/// A sink a paste shows without its name: `pactl list sinks | grep` kept `Sink #0` and its
/// ports, a `pw-cli info` or `pw-dump` node was cut before its `node.name`. It can still be
/// classified from what it shows, so it is listed under a placeholder name that says what it
/// is, in parentheses (no PulseAudio or PipeWire sink name has any): `(unnamed Sink #0)`,
/// `(unnamed node 58)`. Pure.
package enum UnnamedSink {
    /// The placeholder for a sink known as `what` in its dump (`Sink #0`, `node 58`).
    package static func name(_ what: String) -> String { "(unnamed \(what))" }

    /// Whether a sink name is such a placeholder.
    package static func isPlaceholder(_ name: String) -> Bool {
        name.hasPrefix("(unnamed ") && name.hasSuffix(")")
    }

    /// What the listing says of a placeholder.
    package static func note(_ name: String) -> String {
        "\(name): the dump gives this sink no name; it is classified from what it shows (ports, properties)"
    }
}
