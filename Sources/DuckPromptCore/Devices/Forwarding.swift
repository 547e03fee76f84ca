extension Classifier {
    /// How many virtual sinks a chain may pass through before the classifier stops following
    /// it (a loop, or a configuration nobody builds on purpose).
    package static let maxForwardingDepth = 8

    /// Classifies every sink of a snapshot, and follows each virtual sink to the device its audio
    /// ends up on (`Classification.forwardsTo`, `forwardsToSink`).
    ///
    /// A virtual sink forwards to another sink through:
    /// - `device.master_device` (PulseAudio remap, LADSPA, echo-cancel, equalizer and virtual
    ///   sinks): the sink of that name;
    /// - a stream of its own module (`SinkInput.ownerModule == Sink.ownerModule`: the slaves of a
    ///   PulseAudio `module-combine-sink`, the output of a remap or echo-cancel sink; on
    ///   pipewire-pulse, any module it loaded) playing on another sink;
    /// - a stream in its PipeWire `node.link-group` (filter-chain, loopback, remap, combine and
    ///   `pw-loopback` pairs) playing on another sink;
    /// - a stream of the application that made the sink (equal `application.id`, e.g.
    ///   EasyEffects: `easyeffects_sink` and its output stream, both
    ///   `com.github.wwmm.easyeffects`) playing on another sink.
    ///
    /// The sink such a stream plays on is `SinkInput.sinkIndex`; when no sink has that index
    /// (a dump without links), the sink its `target.object` or `node.target` names (a name or a
    /// serial). Chains (virtual → virtual → device) are followed up to `maxForwardingDepth`
    /// sinks. When a sink forwards to several devices (a combine sink), the best is reported:
    /// external outputs that are not unplugged first, in `ranking` order, then the built-in
    /// speaker, other devices, network sinks; ties go to the lowest index.
    ///
    /// - Parameters:
    ///   - snapshot: the sinks and sink-inputs; the default sink is not used.
    ///   - ranking: the external rank order (`DuckPromptConfig.ranking`).
    /// - Returns: one classification per sink, in `snapshot.sinks` order; the same as
    ///   `classify(_ sink:)` except for the forwarding fields and evidence of virtual sinks.
    ///
    /// Pure; safe from any thread. Reads `pa_sink_info.proplist` and `owner_module`, and
    /// `pa_sink_input_info.sink`, `owner_module` and `proplist`.
    package static func classify(_ snapshot: Snapshot,
                                ranking: [DeviceKind] = DuckPromptConfig.defaultRanking) -> [Classification] {
        let sinks = snapshot.sinks
        let base = sinks.map { classify($0) }
        let positions = SinkPositions(sinks)
        let hops = sinks.indices.map { index in
            base[index].kind == .virtual ? directTargets(of: index, in: snapshot, positions: positions) : []
        }

        /// Devices reachable from `index`, each with the path (hop descriptions) to it.
        func devices(from index: Int, depth: Int, visited: Set<Int>) -> [(sink: Int, path: [String])] {
            guard depth < maxForwardingDepth else { return [] }
            var found: [(sink: Int, path: [String])] = []
            for hop in hops[index] where !visited.contains(hop.target) {
                if base[hop.target].kind != .virtual {
                    found.append((hop.target, [hop.via]))
                } else {
                    let step = "\(hop.via) to '\(sinks[hop.target].name)'"
                    for further in devices(from: hop.target, depth: depth + 1, visited: visited.union([hop.target])) {
                        found.append((further.sink, [step] + further.path))
                    }
                }
            }
            return found
        }

        return sinks.indices.map { index in
            var classification = base[index]
            guard classification.kind == .virtual else { return classification }
            let reachable = devices(from: index, depth: 0, visited: [index])
            guard let best = reachable.min(by: { lhs, rhs in
                let (l, r) = (forwardOrder(base[lhs.sink], ranking: ranking), forwardOrder(base[rhs.sink], ranking: ranking))
                if l != r { return l < r }
                return sinkOrder(sinks[lhs.sink], sinks[rhs.sink])
            }) else { return classification }
            let target = sinks[best.sink]
            let kind = base[best.sink].kind
            classification.forwardsTo = kind
            classification.forwardsToSink = target.name
            classification.evidence += "; forwards to '\(target.name)' (\(kind.rawValue)) via "
                + best.path.joined(separator: ", then ")
            return classification
        }
    }

    /// One step of forwarding: the sink the audio goes to next, and how we know.
    private struct Hop {
        var target: Int
        var via: String
    }

    /// Where each sink stands in a snapshot, by name and by index (the first sink when two
    /// share one), so that following a link does not scan every sink.
    private struct SinkPositions {
        var byName: [String: Int] = [:]
        var byIndex: [UInt32: Int] = [:]

        init(_ sinks: [Sink]) {
            byName.reserveCapacity(sinks.count)
            byIndex.reserveCapacity(sinks.count)
            for position in sinks.indices.reversed() {
                byName[sinks[position].name] = position
                if let index = sinks[position].index { byIndex[index] = position }
            }
        }
    }

    /// Where a virtual sink's audio goes next, in snapshot order, without duplicates.
    private static func directTargets(of index: Int, in snapshot: Snapshot, positions: SinkPositions) -> [Hop] {
        let sinks = snapshot.sinks
        let sink = sinks[index]
        var hops: [Hop] = []
        func add(_ target: Int?, _ via: String) {
            guard let target, target != index, !hops.contains(where: { $0.target == target }) else { return }
            hops.append(Hop(target: target, via: via))
        }

        if let master = sink.properties["device.master_device"], !master.isEmpty {
            add(positions.byName[master], "device.master_device=\(master)")
        }
        let linkGroup = nonEmpty(sink.properties["node.link-group"])
        let applicationID = nonEmpty(sink.properties["application.id"])
        for input in snapshot.sinkInputs {
            let via: String
            if let module = sink.ownerModule, input.ownerModule == module {
                // PulseAudio names the module's source file as the driver; pipewire-pulse says
                // only `PipeWire`, which tells nothing.
                via = "stream #\(input.index) of its module \(module)"
                    + (input.driver.hasSuffix(".c") ? " (\(input.driver))" : "")
            } else if let linkGroup, nonEmpty(input.properties["node.link-group"]) == linkGroup {
                via = "stream #\(input.index) in its node.link-group=\(linkGroup)"
            } else if let applicationID, nonEmpty(input.properties["application.id"]) == applicationID {
                let name = input.properties["media.name"] ?? input.name
                via = "stream #\(input.index)\(name.isEmpty ? "" : " '\(name)'") of its application.id=\(applicationID)"
            } else {
                continue
            }
            add(sinkPlayed(by: input, positions: positions), via)
        }
        return hops
    }

    /// The sink a stream plays on: by `sinkIndex`, else the one its `target.object` or
    /// `node.target` names (by name, or by index when it is a number).
    private static func sinkPlayed(by input: SinkInput, positions: SinkPositions) -> Int? {
        if let found = positions.byIndex[input.sinkIndex] { return found }
        for key in ["target.object", "node.target"] {
            guard let target = nonEmpty(input.properties[key]) else { continue }
            if let found = positions.byName[target] { return found }
            if let number = UInt32(target), let found = positions.byIndex[number] { return found }
        }
        return nil
    }

    /// Sort key for the devices a sink forwards to, lower first: usable external outputs by
    /// rank, then unplugged ones, then the speaker, other devices, network sinks.
    private static func forwardOrder(_ classification: Classification, ranking: [DeviceKind]) -> Int {
        let kind = classification.kind
        if kind.isExternalKind {
            let rank = ranking.firstIndex(of: kind) ?? ranking.count
            return classification.external ? rank : 100 + rank
        }
        switch kind {
        case .speaker: return 200
        case .unknown: return 201
        case .network: return 202
        default: return 203
        }
    }

    /// Lowest index first (sinks without one last), then name.
    static func sinkOrder(_ lhs: Sink, _ rhs: Sink) -> Bool {
        switch (lhs.index, rhs.index) {
        case let (l?, r?) where l != r: l < r
        case (_?, nil): true
        case (nil, _?): false
        default: lhs.name < rhs.name
        }
    }

    private static func nonEmpty(_ value: String?) -> String? {
        guard let value, !value.trimmingSpaces().isEmpty else { return nil }
        return value
    }
}
