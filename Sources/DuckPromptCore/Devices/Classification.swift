/// What the classifier decided about one sink, and why.
package struct Classification: Sendable, Equatable, Codable {
    /// The kind of device behind the sink.
    package var kind: DeviceKind
    /// Whether the sink is an external output in the AVAudioSession sense: the kind is external
    /// (`DeviceKind.isExternalKind`) and the active port is not reported unplugged
    /// (`pa_sink_port_info.available` ≠ `PA_PORT_AVAILABLE_NO`). Always false for a virtual
    /// sink, even one that forwards to an external device (see `forwardsTo`).
    package var external: Bool
    /// The property, driver or port that decided, e.g. `bluetooth.protocol=a2dp_sink`,
    /// `device.bus=usb`, `active port analog-output-headphones (type headphones)`; for a
    /// forwarding virtual sink, followed by how it forwards
    /// (`node.virtual=true; forwards to 'bt' (bluetooth-a2dp) via node.link-group=…`).
    package var evidence: String
    /// For a virtual sink whose audio ends up on a device (a remap or filter sink's master, a
    /// combine sink's best slave, a PipeWire filter's or EasyEffects' output stream): that
    /// device's kind, after following chains of virtual sinks. Nil otherwise, and always nil
    /// from the single-sink `Classifier.classify(_:)`, which cannot see streams or other sinks.
    package var forwardsTo: DeviceKind?
    /// The name of the device sink `forwardsTo` describes (the end of the chain).
    package var forwardsToSink: String?

    package init(kind: DeviceKind, external: Bool, evidence: String,
                forwardsTo: DeviceKind? = nil, forwardsToSink: String? = nil) {
        self.kind = kind
        self.external = external
        self.evidence = evidence
        self.forwardsTo = forwardsTo
        self.forwardsToSink = forwardsToSink
    }
}
