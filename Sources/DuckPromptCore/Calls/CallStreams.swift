/// Which of the server's streams are a call: a sink-input or source-output whose `media.role`
/// is `phone` (PulseAudio's name, and what pipewire-pulse shows a pulse client's) or
/// `communication` (PipeWire's and WirePlumber's name for it); and every playback stream of a
/// client that records with such a role (a call app that tags only its microphone). Pure.
///
/// A call stream counts while it plays or records (not corked). A prompt's own stream (it has
/// `duckprompt.prompt`) never counts, whatever role a caller gave it.
package enum CallStreams {
    /// The `media.role` values of a call, compared without case.
    package static let roles: Set<String> = ["phone", "communication"]

    /// Whether `role` is a call's.
    package static func isCallRole(_ role: String?) -> Bool {
        guard let role else { return false }
        return roles.contains(role.lowercased())
    }

    /// What the server's streams say.
    package struct Found: Sendable, Equatable {
        /// One reading per playing or recording call stream, `active`.
        package var readings: [CallReading]
        /// The sink-inputs that carry a call, corked or not: never ducked, paused or corked.
        package var sinkInputs: Set<UInt32>
    }

    /// - Parameters:
    ///   - sinkInputs: every sink-input (`pa_context_get_sink_input_info_list`).
    ///   - sourceOutputs: every source-output (`pa_context_get_source_output_info_list`).
    package static func find(sinkInputs: [SinkInput], sourceOutputs: [SourceOutput]) -> Found {
        let prompt = "duckprompt.prompt"
        var readings: [CallReading] = []
        var calls: Set<UInt32> = []
        var recordingClients: Set<UInt32> = []
        for output in sourceOutputs where output.properties[prompt] == nil && isCallRole(output.mediaRole) {
            if let client = output.client { recordingClients.insert(client) }
            if !output.corked {
                readings.append(CallReading(source: .stream, state: .active,
                                            detail: describe("source-output", output.index, output.properties)))
            }
        }
        for input in sinkInputs where input.properties[prompt] == nil {
            let tagged = isCallRole(input.mediaRole)
            guard tagged || input.client.map(recordingClients.contains) == true else { continue }
            calls.insert(input.index)
            if tagged && !input.corked {
                readings.append(CallReading(source: .stream, state: .active,
                                            detail: describe("sink-input", input.index, input.properties)))
            }
        }
        return Found(readings: readings, sinkInputs: calls)
    }

    /// "sink-input 12 (Firefox, media.role=phone)".
    private static func describe(_ kind: String, _ index: UInt32, _ properties: [String: String]) -> String {
        let what = [properties["application.name"], properties["media.role"].map { "media.role=\($0)" }]
            .compactMap { $0 }
        return what.isEmpty ? "\(kind) \(index)" : "\(kind) \(index) (\(what.joined(separator: ", ")))"
    }
}
