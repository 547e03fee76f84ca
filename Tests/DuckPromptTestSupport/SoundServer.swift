import Foundation

/// Which private server the tests run on: set by `duckprompt lab` (`DUCKPROMPT_LAB_SERVER`, as
/// `Scripts/test` runs them). Integration tests fail (never skip) when it is missing:
/// `Scripts/test` always provides it.
package enum TestServer {
    /// "pipewire", "pulseaudio", or "none".
    package static var kind: String {
        ProcessInfo.processInfo.environment["DUCKPROMPT_LAB_SERVER"] ?? "none"
    }

    /// - Throws: `TestFailure` naming the way to run the tests when no private server is there.
    package static func requireServer() throws {
        guard kind == "pipewire" || kind == "pulseaudio" else {
            throw TestFailure("integration tests need a private server: run them through Scripts/test (or "
                              + ".build/debug/duckprompt lab --device none --no-listen --no-service -- swift test --skip-build --no-parallel --filter IntegrationTests)")
        }
    }
}

/// `pactl` against the private server.
package enum Pactl {
    /// Runs `pactl ARGS`; its standard output.
    /// - Throws: `TestFailure` when pactl exits non-zero.
    @discardableResult
    package static func call(_ args: String...) throws -> String {
        try run(["pactl"] + args).stdout
    }

    /// Loads a null sink with properties; returns the module index. Values must not hold spaces.
    /// On PulseAudio, once the lab anchored its latency (its corked recording of the monitor,
    /// `duckprompt.lab.sink` NAME), the sink is suspended and resumed: made before its anchor,
    /// it had rendered 2 s ahead, and a first stream would start 2 s late (Docs/lab.md).
    /// - Throws: `TestFailure` when pactl refuses it.
    package static func loadNullSink(name: String, properties: [String: String]) throws -> String {
        let props = properties.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        var args = ["pactl", "load-module", "module-null-sink", "sink_name=\(name)"]
        if !props.isEmpty { args.append("sink_properties=\"\(props)\"") }
        let module = try run(args).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        if TestServer.kind == "pulseaudio" {
            let anchored = try eventually(timeout: 5) {
                let text = try run(["pactl", "--format=json", "list", "source-outputs"]).stdout
                let outputs = (try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]]) ?? []
                return outputs.contains { ($0["properties"] as? [String: Any])?["duckprompt.lab.sink"] as? String == name }
            }
            guard anchored else { throw TestFailure("the lab did not anchor \(name)'s latency within 5 s") }
            try call("suspend-sink", name, "1")
            try call("suspend-sink", name, "0")
        }
        return module
    }

    /// Unloads a module, ignoring failure (it may be gone with its server).
    package static func unload(_ module: String) { _ = try? run(["pactl", "unload-module", module], check: false) }

    /// Sink-inputs as `pactl --format=json list sink-inputs` reports them.
    /// - Throws: `TestFailure` when pactl fails; JSONSerialization's error for bad JSON.
    package static func sinkInputs() throws -> [[String: Any]] {
        let text = try run(["pactl", "--format=json", "list", "sink-inputs"]).stdout
        return (try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]]) ?? []
    }

    /// Raw per-channel volume values (pa_volume_t, 65536 = 100 %) of the sink-input whose
    /// `application.name` is `app`, in channel-map order; nil when there is none.
    package static func volume(ofApp app: String) throws -> [Int]? {
        for input in try sinkInputs() {
            let props = input["properties"] as? [String: Any] ?? [:]
            guard props["application.name"] as? String == app else { continue }
            let volume = input["volume"] as? [String: [String: Any]] ?? [:]
            let map = (input["channel_map"] as? String)?.split(separator: ",").map(String.init) ?? Array(volume.keys).sorted()
            return map.compactMap { volume[$0]?["value"] as? Int }
        }
        return nil
    }

    /// The index of the sink-input whose `application.name` is `app`; nil when there is none.
    package static func index(ofApp app: String) throws -> Int? {
        try sinkInputs().first {
            ($0["properties"] as? [String: Any])?["application.name"] as? String == app
        }?["index"] as? Int
    }

    /// The index of the sink named `name`; nil when there is none.
    /// - Throws: `TestFailure` when pactl fails; JSONSerialization's error for bad JSON.
    package static func sinkIndex(_ name: String) throws -> Int? {
        let text = try run(["pactl", "--format=json", "list", "sinks"]).stdout
        let sinks = (try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]]) ?? []
        return sinks.first { $0["name"] as? String == name }?["index"] as? Int
    }

    /// `pactl get-default-sink`.
    package static func defaultSink() throws -> String {
        try run(["pactl", "get-default-sink"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
