import DuckPromptTestSupport
import Foundation
import Testing

/// The dump readers fill the same model as the live client: `devices --json` from the server
/// and `devices --from` on that server's `pactl list sinks` text and JSON agree.
@Suite(.serialized)
struct RoundTripIntegrationTests {
    /// Fields a dump carries as well as the live server (the default sink is not in a
    /// `pactl list sinks` dump, so neither `default` nor `chosen` is compared).
    static let fields = ["index", "name", "description", "kind", "external", "state", "active_port",
                         "port_type", "available", "evidence", "volume", "properties"]

    static func sinks(_ json: String) throws -> [String: [String: Any]] {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        let sinks = try #require(object["sinks"] as? [[String: Any]])
        return Dictionary(uniqueKeysWithValues: sinks.map { ($0["name"] as? String ?? "", $0) })
    }

    @Test("devices --json live == devices --from pactl text == devices --from pactl JSON, field by field")
    func liveAndDumpsAgree() throws {
        try TestServer.requireServer()
        let rig = Rig()
        let speaker = try rig.speaker()
        let bt = try rig.bluetooth()
        // Fix the states, so that a suspend-on-idle timer cannot change one between the looks.
        for sink in [speaker, bt] { try Pactl.call("suspend-sink", sink, "1") }
        defer { for sink in [speaker, bt] { _ = try? Pactl.call("suspend-sink", sink, "0") } }

        let text = TestAudio.directory.appendingPathComponent("sinks-\(rig.tag).txt").path
        let json = TestAudio.directory.appendingPathComponent("sinks-\(rig.tag).json").path
        try run(["pactl", "list", "sinks"]).stdout.write(toFile: text, atomically: true, encoding: .utf8)
        try run(["pactl", "--format=json", "list", "sinks"]).stdout.write(toFile: json, atomically: true, encoding: .utf8)
        let live = try Self.sinks(try run([duckpromptBinary, "devices", "--json"]).stdout)
        let fromText = try Self.sinks(try run([duckpromptBinary, "devices", "--json", "--from", text]).stdout)
        let fromJSON = try Self.sinks(try run([duckpromptBinary, "devices", "--json", "--from", json]).stdout)

        for name in [speaker, bt] {
            let reference = try #require(live[name], "\(name) is missing from the live listing")
            #expect(reference["kind"] as? String == (name == bt ? "bluetooth-a2dp" : "speaker"))
            for (format, dump) in [("pactl text", fromText), ("pactl JSON", fromJSON)] {
                let other = try #require(dump[name], "\(name) is missing from the \(format) dump")
                for field in Self.fields {
                    let a = reference[field].map { "\($0)" } ?? "absent"
                    let b = other[field].map { "\($0)" } ?? "absent"
                    if field == "properties" {
                        let pa = reference[field] as? [String: String] ?? [:]
                        let pb = other[field] as? [String: String] ?? [:]
                        #expect(pa == pb, "\(name): properties differ between live and \(format): \(Set(pa.map { "\($0)=\($1)" }).symmetricDifference(Set(pb.map { "\($0)=\($1)" })))")
                    } else {
                        #expect(a == b, "\(name).\(field): live \(a), \(format) \(b)")
                    }
                }
            }
        }
    }
}
