import Foundation
import Testing
@testable import DuckPrompt
@testable import DuckPromptCore

/// Dumps as people paste them (issue 36): shapes of text, not kinds of hardware. Fixtures in
/// `Fixtures/sinks/` (see its PASTES.md for where each comes from).
@Suite("SinkDumpReader and Classifier: pastes whole or in pieces")
struct PastedShapeTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var path: String
        var format: SinkDumpFormat
        var name: String
        var index: UInt32?
        var kind: DeviceKind
        var external: Bool
        /// Words the evidence must hold.
        var evidence: String
        var testDescription: String { path }
    }

    static let cases: [Case] = [
        Case(path: "sinks/pw-cli-info-alc236-speaker-cut.txt", format: .pwCli,
             name: UnnamedSink.name("node 58"), index: nil, kind: .speaker, external: false,
             evidence: "device.profile.name=HiFi: Speaker: sink"),
        Case(path: "sinks/pw-dump-iec958-node-cut-mid-string.json", format: .pwDump,
             name: UnnamedSink.name("node 41"), index: 41, kind: .lineOut, external: true,
             evidence: "api.alsa.path=iec958:2"),
        Case(path: "sinks/pactl-grep-ports-lineout.txt", format: .pactlText,
             name: UnnamedSink.name("Sink #0"), index: 0, kind: .lineOut, external: false,
             evidence: "active port analog-output-lineout"),
        Case(path: "sinks/wpctl-inspect-xonar-dx-analog-stereo-no-ports.txt", format: .wpctlInspect,
             name: "alsa_output.pci-0000_08_04.0.analog-stereo", index: 56, kind: .lineOut, external: true,
             evidence: "device.profile.name=analog-stereo"),
    ]

    @Test("each shape is read and classified", arguments: cases)
    func readAndClassified(_ c: Case) throws {
        let text = try SinkFixture.text(c.path)
        #expect(SinkDumpReader.detectFormat(text) == c.format)
        let sink = try SinkFixture.sink(c.path)
        #expect(sink.name == c.name)
        #expect(sink.index == c.index)
        let classification = Classifier.classify(sink)
        #expect(classification.kind == c.kind, "\(classification.evidence)")
        #expect(classification.external == c.external)
        #expect(classification.evidence.contains(c.evidence), "\(classification.evidence)")
    }

    @Test("a sink the dump gives no name is listed under a placeholder, and the listing says so")
    func placeholderSaid() throws {
        let listing = DeviceListing(snapshot: try SinkDumpReader.readSnapshot(SinkFixture.text("sinks/pactl-grep-ports-lineout.txt")))
        #expect(UnnamedSink.isPlaceholder(listing.snapshot.sinks[0].name))
        #expect(listing.notes == ["(unnamed Sink #0): the dump gives this sink no name; it is classified from what it shows (ports, properties)"])
        let named = DeviceListing(snapshot: try SinkDumpReader.readSnapshot(SinkFixture.text("sinks/wpctl-inspect-xonar-dx-analog-stereo-no-ports.txt")))
        #expect(named.notes.isEmpty)
    }

    @Test("the analog guess says it is one, and why")
    func analogGuessEvidence() throws {
        let sink = try SinkFixture.sink("sinks/wpctl-inspect-xonar-dx-analog-stereo-no-ports.txt")
        let evidence = Classifier.classify(sink).evidence
        #expect(evidence.contains("guess"), "\(evidence)")
        #expect(evidence.contains("no port"), "\(evidence)")
        #expect(evidence.contains("device.form_factor"), "\(evidence)")
    }

    @Test("the pw-cli info paste without its type: line is read from its properties; without its id: line it is refused as pw-cli's")
    func pwCliHeaderLinesLost() throws {
        let text = try SinkFixture.text("sinks/pw-cli-info-alc236-speaker-cut.txt")
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let noType = lines.filter { !$0.contains("type: PipeWire:Interface:") }.joined(separator: "\n")
        #expect(SinkDumpReader.detectFormat(noType) == .pwCli)
        let sinks = try SinkDumpReader.read(noType)
        #expect(sinks.map(\.name) == [UnnamedSink.name("node 58")])
        #expect(Classifier.classify(try #require(sinks.first)).kind == .speaker)
        let noID = lines.filter { !$0.contains("id: 58") }.joined(separator: "\n")
        #expect(SinkDumpReader.detectFormat(noID) == .pwCli)
        let error = #expect(throws: DuckPromptError.self) { try SinkDumpReader.read(noID) }
        #expect(error?.message.contains("it is nearest `pw-cli ls Node` / `pw-cli info`, and lacks a Node: its header") == true,
                "\(String(describing: error?.message))")
    }

    @Test("a block with neither a name nor anything to classify by is still refused")
    func nothingToClassify() {
        #expect(throws: DuckPromptError.self) { try SinkDumpReader.read("Sink #0\n\tState: RUNNING\n") }
        #expect(throws: DuckPromptError.self) { try SinkDumpReader.read("\tid: 58\n\tpermissions: rwxm-\n\ttype: PipeWire:Interface:Node/3\n") }
    }
}
