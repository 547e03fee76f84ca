/// How other streams are lowered while a prompt plays.
public enum DuckMode: String, Sendable, Equatable, CaseIterable {
    /// Lower by the duck depth.
    case duck
    /// Leave every stream as it is.
    case none
}

/// The bookkeeping of one duck: which sink-inputs are lowered, what they were, and what to
/// set them to at a given gain. Pure: it computes volumes; `DuckSession` applies them.
///
/// Originals are the exact `pa_cvolume` values found; the ramp's last step sets them back
/// bit for bit. Volume math through libpulse (`VolumeMath.scale`).
public struct DuckPlan: Sendable, Equatable {
    /// A ducked stream: its index, and its volume as found (`pa_sink_input_info.volume`).
    public struct Entry: Sendable, Equatable {
        public var index: UInt32
        public var original: ChannelVolumes
    }

    /// Streams to lower, in index order.
    public private(set) var entries: [Entry]
    /// Full duck depth in dB (negative; 0 means no duck).
    public let depth: Double

    /// Selects the streams to duck in a snapshot.
    ///
    /// - Parameters:
    ///   - inputs: every sink-input on the server (`pa_context_get_sink_input_info_list`).
    ///   - depth: duck depth in dB, <= 0.
    ///   - exemptRoles: `media.role` values left alone (default `phone`).
    ///   - excluding: sink-input indices never touched (the prompt's own stream).
    /// Streams without a writable volume (`has_volume`, `volume_writable`) are skipped.
    public init(inputs: [SinkInput], depth: Double, exemptRoles: Set<String> = ["phone"],
                excluding: Set<UInt32> = []) {
        self.depth = depth
        guard depth < 0 else { entries = []; return }
        entries = inputs
            .filter { input in
                !excluding.contains(input.index) && input.hasVolume && input.volumeWritable
                    && !input.volume.values.isEmpty
                    && !(input.mediaRole.map(exemptRoles.contains) ?? false)
            }
            .sorted { $0.index < $1.index }
            .map { Entry(index: $0.index, original: $0.volume) }
    }

    /// The volume of every ducked stream at `gain` dB relative to its original; at 0 dB, the
    /// originals exactly.
    public func volumes(atGain gain: Double) -> [(index: UInt32, volume: ChannelVolumes)] {
        entries.map { ($0.index, VolumeMath.scale($0.original, by: gain)) }
    }

    /// Forgets a stream (it ended), so nothing is set on it any more.
    public mutating func remove(index: UInt32) {
        entries.removeAll { $0.index == index }
    }
}
