/// The message of a dump that no reader could take: the formats read
/// (`SinkDumpReader.notADumpMessage`), the first line that none of them reads, so a user
/// sees where their paste went wrong (`…; line 3: 'Hello' is in none of them`), and which of
/// the formats the text is nearest and what it lacks to be read (`nearest`).
package enum DumpRefusal {
    /// Characters of a line quoted in the message, at most.
    static let excerptLength = 60

    /// The message for text or JSON, by its first character.
    static func message(for text: String) -> String {
        let trimmed = text.trimmingSpaces()
        return trimmed.hasPrefix("[") || trimmed.hasPrefix("{") ? message(forJSON: text) : message(forText: text)
    }

    /// Which format the text is nearest (`SinkDumpReader.detectFormat`, the format its shape
    /// says) and what it lacks for a sink to be read from it; for one line, the format whose
    /// block it starts (`Sink #0` alone is nearest `pactl list sinks`); empty for empty text and
    /// for one line that starts no block (a listing joined onto one line: its own reason says it).
    static func nearest(_ text: String) -> String {
        guard let format = SinkDumpReader.detectFormat(text) else { return "" }
        guard format == .oneLine else { return nearest(format) }
        guard let line = DumpLine.lines(of: text).first(where: { !$0.isFiller }),
              let started = blockFormat(of: line) else { return "" }
        return nearest(started)
    }

    /// The format whose block `line` starts, if any.
    private static func blockFormat(of line: DumpLine) -> SinkDumpFormat? {
        if line.blockHeader != nil { return .pactlText }
        if PacmdTextReader.header(line) != nil { return .pacmdText }
        if WpctlInspectReader.header(line) != nil { return .wpctlInspect }
        if PwCliReader.header(line) != nil { return .pwCli }
        return nil
    }

    /// The clause for one format.
    package static func nearest(_ format: SinkDumpFormat) -> String {
        let lacks: String
        switch format {
        case .pactlText:
            lacks = "`pactl list sinks`, and lacks a sink block: `Sink #N` with a `Name:` line, a port or a property"
        case .pacmdText:
            lacks = "`pacmd list-sinks`, and lacks an `index: N` block with a `name: <…>` line or a port"
        case .pactlJSON:
            lacks = "`pactl --format=json list sinks`, and lacks a whole object with a sink's `name`"
        case .pwDump:
            lacks = "`pw-dump`, and lacks a whole `PipeWire:Interface:Node` of class `Audio/Sink` "
                + "(or one cut before its class that shows a playback device)"
        case .pwCli:
            lacks = "`pw-cli ls Node` / `pw-cli info`, and lacks a Node: its header (`id: N`, or `ls`'s `id N, type …`) "
                + "with `media.class = \"Audio/Sink\"` and a `node.name` (or one cut before its class that shows a playback device)"
        case .wpctlInspect:
            lacks = "`wpctl inspect`, and lacks a node of class `Audio/Sink` (its `media.class` line)"
        case .oneLine:
            return ""
        }
        return "; it is nearest " + lacks
    }

    /// JSON: the line where it stops being JSON (`TruncatedJSON.scan`), or its first line when
    /// it is JSON but holds no sink.
    static func message(forJSON text: String) -> String {
        let bytes = Array(text.utf8)
        guard let offset = TruncatedJSON.scan(text).errorOffset else {
            return describe(lineOf: text, at: 0, reason: "is JSON, but holds no sink object") + nearest(text)
        }
        return describe(lineOf: text, at: min(offset, bytes.count), reason: offset >= bytes.count
                        ? "is where the JSON ends before it is whole" : "is where it stops being JSON") + nearest(text)
    }

    /// Text: a one-line paste of 20 words or more, which no reader took, is named as such (only
    /// English pactl and pacmd listings are put back into lines, `OneLineDump`); else the first
    /// line that is no block header, `key: value`, `key = "value"` or port line; when every
    /// line is one of them, the first line (which starts no sink).
    static func message(forText text: String) -> String {
        let lines = DumpLine.lines(of: text)
        let written = lines.filter { !$0.isFiller }
        if written.count == 1, let line = written.first, line.text.split(separator: " ").count >= 20 {
            return describe(line: lines.firstIndex { !$0.isFiller }! + 1, text: line.text, reason: oneLineReason)
        }
        if let index = lines.firstIndex(where: { !isRead($0) }) {
            return describe(line: index + 1, text: lines[index].text, reason: "is in none of them") + nearest(text)
        }
        guard let index = lines.firstIndex(where: { !$0.isFiller }) else {
            return SinkDumpReader.notADumpMessage + "; it is empty"
        }
        return describe(line: index + 1, text: lines[index].text, reason: "starts no sink") + nearest(text)
    }

    /// Why a listing joined onto one line was not read.
    static let oneLineReason = "is a listing joined onto one line (echo $(…)), which is read only from pactl "
        + "or pacmd in English: paste it as printed, with its lines, or run it under LC_ALL=C"

    /// Whether some reader takes the line.
    private static func isRead(_ line: DumpLine) -> Bool {
        line.isFiller || line.blockHeader != nil || PacmdTextReader.header(line) != nil
            || WpctlInspectReader.header(line) != nil || PwCliReader.header(line) != nil
            || line.keyValue != nil || line.property != nil || line.port != nil
            || line.text.hasPrefix("balance") || line.text.hasSuffix("available.")
    }

    /// The line holding byte `offset` of `text`, found in one pass over its bytes (a JSON dump
    /// may be one line of 200 KiB: no line parsing).
    private static func describe(lineOf text: String, at offset: Int, reason: String) -> String {
        let bytes = Array(text.utf8)
        // At the end of the text, the last line with something on it (not the empty line after
        // a final newline).
        var offset = min(offset, bytes.count)
        if offset == bytes.count {
            while offset > 0, [0x0A, 0x0D, 0x20, 0x09].contains(bytes[offset - 1]) { offset -= 1 }
        }
        var number = 1, start = 0
        for index in 0..<offset where bytes[index] == 0x0A {
            number += 1
            start = index + 1
        }
        let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
        let line = String(decoding: bytes[start..<end].prefix(excerptLength * 4), as: UTF8.self).trimmingSpaces()
        return describe(line: number, text: line, reason: reason)
    }

    private static func describe(line: Int, text: String, reason: String) -> String {
        let excerpt = text.count > excerptLength ? text.prefix(excerptLength) + "…" : text
        return SinkDumpReader.notADumpMessage + "; line \(line): '\(excerpt)' \(reason)"
    }
}
