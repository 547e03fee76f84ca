import FoundationEssentials

/// The dump formats `SinkDumpReader` understands.
package enum SinkDumpFormat: String, Sendable, Equatable, CaseIterable {
    /// `pactl list sinks` (PulseAudio 1.1 to 17, pipewire-pulse), any language, with or
    /// without the `Sink #N` header lines.
    case pactlText = "pactl"
    /// `pacmd list-sinks` (PulseAudio only), `* index: N` marking the default sink.
    case pacmdText = "pacmd"
    /// `pactl --format=json list sinks` (PulseAudio 16+, pipewire-pulse), or a full
    /// `pactl --format=json list` whose `sinks` member is read.
    case pactlJSON = "pactl-json"
    /// `wpctl inspect <id>` of a PipeWire sink node (WirePlumber 0.4, 0.5; with `-r` its
    /// device's properties too): properties only, no ports or volume.
    case wpctlInspect = "wpctl-inspect"
    /// `pw-cli ls Node` (or `pw-cli ls`, `list-objects`) and `pw-cli info ID|all`: a node's
    /// properties (and state, from `info`), no ports or volume.
    case pwCli = "pw-cli"
    /// `echo $(pacmd list-sinks)` or `echo $(pactl list sinks)`: a listing on one line.
    case oneLine = "one-line"
    /// `pw-dump`: the JSON array of all PipeWire objects; its `Audio/Sink` nodes, their
    /// streams and the default sink are read (see `readSnapshot`). Also one object copied out
    /// of it, cut off or whole.
    case pwDump = "pw-dump"
}

/// Reads sinks from text a user pasted or saved: `pactl list sinks`, `pacmd list-sinks`,
/// `pactl --format=json list sinks`, `pw-dump`, or `wpctl inspect` of a sink node.
///
/// The reader is pure (no server, no libpulse) and tolerant: dumps pasted without the
/// `Sink #N` header, indented with tabs or spaces, cut short (`...`), or printed in French or
/// German are read. It recognises structure (indentation, `key = "value"` property lines, the
/// shape of port lines) rather than only English key names, because property keys, port names
/// and the active port are never translated.
///
/// Pure; safe from any thread. The formats are those printed by `get_sink_info_callback` in
/// PulseAudio's `src/utils/pactl.c` (text and JSON), `pa_sink_list_to_string` in
/// `src/pulsecore/cli-text.c` (pacmd), PipeWire's `src/tools/pw-dump.c` and WirePlumber's
/// `wpctl inspect`.
package enum SinkDumpReader {
    /// The message every "not a sink dump" error carries; the caller puts the file name in front.
    static let notADumpMessage = "is not a sink dump: " + formatsRead
    /// The formats read, for messages.
    package static let formatsRead = "duckprompt reads `pactl list sinks`, "
        + "`pacmd list-sinks`, `pactl --format=json list sinks`, `pw-dump`, `pw-cli ls Node`, "
        + "`pw-cli info` and `wpctl inspect` output"

    /// Reads all sinks of a dump.
    /// - Parameter text: the whole dump.
    /// - Returns: the sinks in dump order.
    /// - Throws: `DuckPromptError` `.unsupportedData` when the text is in no known format or
    ///   holds no sink.
    ///   - math: libpulse's volume arithmetic (`VolumeArithmetic.libpulse`), for `pw-dump`'s
    ///     linear volumes.
    package static func read(_ text: String, math: VolumeArithmetic) throws -> [Sink] {
        try readWithDefault(text, math: math).sinks
    }

    /// Reads all sinks of a dump and the default sink, when the dump says which it is.
    /// - Parameter text: the whole dump.
    /// - Returns: the sinks in dump order, and the default sink's name: `pacmd list-sinks`
    ///   says it (`* index: N`), `pw-dump` too (the `default` metadata); nil for the other
    ///   formats.
    /// - Throws: `DuckPromptError` `.unsupportedData` when the text is in no known format or
    ///   holds no sink.
    package static func readWithDefault(_ text: String, math: VolumeArithmetic) throws -> (sinks: [Sink], defaultSinkName: String?) {
        let snapshot = try readSnapshot(text, math: math)
        return (snapshot.sinks, snapshot.defaultSinkName)
    }

    /// Reads everything routing can use from a dump: the sinks, the default sink when the dump
    /// says it, and the sink-inputs when it holds them (`pw-dump`: its `Stream/Output/Audio`
    /// nodes; a full `pactl --format=json list`: its `sink_inputs`). The sink-inputs let
    /// `Classifier.classify(_ snapshot:ranking:)` see where a filter such as EasyEffects sends
    /// its audio, and the router see which sinks play.
    /// - Parameter text: the whole dump.
    /// - Returns: a snapshot; `sinkInputs` empty and `defaultSinkName` nil where the format
    ///   does not carry them.
    /// - Throws: `DuckPromptError` `.unsupportedData` when the text is in no known format or
    ///   holds no sink, or no sink with a name (`no sinks found: …`).
    package static func readSnapshot(_ text: String, math: VolumeArithmetic) throws -> Snapshot {
        let (format, detectedLines) = detect(text)
        let lines = { detectedLines ?? DumpLine.lines(of: text) }
        if format == .oneLine {
            let lines = OneLineDump.lines(text)
            if detectFormat(lines) != .oneLine, let snapshot = try? readSnapshot(lines, math: math) { return snapshot }
            throw DuckPromptError(.unsupportedData, DumpRefusal.message(for: text))
        }
        let snapshot: Snapshot
        switch format {
        case .pwDump:
            snapshot = try PwDumpReader.read(text, math: math)
        case .pactlJSON:
            let list = try PactlJSONReader.readList(text)
            snapshot = Snapshot(sinks: list.sinks, sinkInputs: list.sinkInputs)
        case .pacmdText:
            let result = PacmdTextReader.read(lines: lines())
            snapshot = Snapshot(sinks: result.sinks, defaultSinkName: result.defaultSinkName)
        case .wpctlInspect:
            snapshot = Snapshot(sinks: WpctlInspectReader.read(lines: lines()))
        case .pwCli:
            snapshot = Snapshot(sinks: PwCliReader.read(lines: lines()))
        case .pactlText, .oneLine:
            snapshot = Snapshot(sinks: PactlTextReader.read(lines: lines()))
        case nil:
            throw DuckPromptError(.unsupportedData, notADumpMessage + "; it is empty")
        }
        guard !snapshot.sinks.isEmpty else {
            throw DuckPromptError(.unsupportedData, DumpRefusal.message(for: text))
        }
        // Text that merely looks like a block (random bytes with a `key: value` line) gives
        // sinks with neither a name nor a port (a port gets a placeholder name): nothing to
        // classify or route to.
        guard snapshot.sinks.contains(where: { !$0.name.isEmpty }) else {
            throw DuckPromptError(.unsupportedData, "no sinks found (no sink block in it has a name or a port): " + formatsRead
                                  + DumpRefusal.nearest(format ?? .pactlText))
        }
        return snapshot
    }

    /// Which format a dump is in, judged from its shape: JSON (an array or an object) that
    /// names `PipeWire:Interface:…` types is `pw-dump`, other JSON by its first character, a
    /// single line holding pactl's or pacmd's keys is one-line, pacmd by its `index: N` lines,
    /// pw-cli by its `id 41, type …/3` or `id: 41` + `type: …` lines, wpctl by its
    /// `id N, type PipeWire:Interface:…` line, pactl text otherwise. Nil for empty text. The format says nothing about whether sinks can be read.
    /// - Parameter text: the whole dump.
    package static func detectFormat(_ text: String) -> SinkDumpFormat? {
        detect(text).format
    }

    /// The format, and the text's lines when judging it split them (every text format), for
    /// the reader: a 10 MiB dump is split once.
    private static func detect(_ text: String) -> (format: SinkDumpFormat?, lines: [DumpLine]?) {
        let trimmed = text.trimmingSpaces()
        guard !trimmed.isEmpty else { return (nil, nil) }
        if PwDumpReader.looksLikePwDump(trimmed) { return (.pwDump, nil) }
        if trimmed.hasPrefix("[") || trimmed.hasPrefix("{") { return (.pactlJSON, nil) }
        if OneLineDump.looksLikeOneLine(trimmed) { return (.oneLine, nil) }
        let lines = DumpLine.lines(of: text)
        if lines.contains(where: { PacmdTextReader.header($0) != nil }) { return (.pacmdText, lines) }
        if PwCliReader.looksLikePwCli(lines) { return (.pwCli, lines) }
        if lines.contains(where: { WpctlInspectReader.header($0) != nil }) { return (.wpctlInspect, lines) }
        return (.pactlText, lines)
    }
}

/// `pactl list sinks` text: blocks that start with `Sink #N` (or its translation), or one or
/// more blocks pasted without that header. Blocks of other objects (`Source #N`,
/// `Sink Input #N` in a full `pactl list`) are skipped.
package enum PactlTextReader {
    static func read(_ text: String) -> [Sink] {
        read(lines: DumpLine.lines(of: text))
    }

    /// The same, from the dump's lines (`DumpLine.lines(of:)`), split once by the caller.
    static func read(lines: [DumpLine]) -> [Sink] {
        var sinks: [Sink] = []
        var current: SinkBlockBuilder?
        var skipping = false

        func finish() {
            if let sink = current?.build() { sinks.append(sink) }
            current = nil
        }

        for line in lines {
            if let header = line.blockHeader {
                finish()
                if DumpVocabulary.sinkHeaderWords.contains(header.word) {
                    current = SinkBlockBuilder(index: header.index, hasHeader: true)
                    skipping = false
                } else {
                    skipping = true
                }
                continue
            }
            if skipping || line.isFiller { continue }
            if current == nil { current = SinkBlockBuilder(hasHeader: false) }
            if current?.feed(line) == false {
                finish()
                current = SinkBlockBuilder(hasHeader: false)
                _ = current?.feed(line)
            }
        }
        finish()
        return sinks
    }
}
