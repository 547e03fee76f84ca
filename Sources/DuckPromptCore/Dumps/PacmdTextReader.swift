/// `pacmd list-sinks` text (`src/pulsecore/cli-text.c`, never translated): a
/// `N sink(s) available.` line, then blocks that start with `index: N`, the default sink's with
/// `* index: N`. Names, drivers and the active port are wrapped in angle brackets; volumes may
/// use a decimal comma (`0,00 dB`); each port may be followed by its own `properties:` list,
/// which does not belong to the sink.
package enum PacmdTextReader {
    /// `index: 2` or `* index: 2`: the block header, and whether it marks the default sink.
    static func header(_ line: DumpLine) -> (index: UInt32, isDefault: Bool)? {
        // Most lines are not headers: a prefix test spares them the regex (format detection
        // asks every line of a dump).
        guard line.text.hasPrefix("index:") || line.text.hasPrefix("*") else { return nil }
        guard let match = line.text.wholeMatch(of: DumpPatterns.pacmdHeader),
              let index = UInt32(match.output.2) else { return nil }
        return (index, match.output.1 != nil)
    }

    static func read(_ text: String) -> (sinks: [Sink], defaultSinkName: String?) {
        read(lines: DumpLine.lines(of: text))
    }

    /// The same, from the dump's lines (`DumpLine.lines(of:)`), split once by the caller.
    static func read(lines: [DumpLine]) -> (sinks: [Sink], defaultSinkName: String?) {
        var sinks: [Sink] = []
        var defaultSinkName: String?
        var current: SinkBlockBuilder?

        func finish() {
            if let builder = current, let sink = builder.build() {
                sinks.append(sink)
                if builder.isDefault, defaultSinkName == nil { defaultSinkName = sink.name }
            }
            current = nil
        }

        for line in lines {
            if let header = header(line) {
                finish()
                current = SinkBlockBuilder(index: header.index, hasHeader: true,
                                           isDefault: header.isDefault)
                continue
            }
            _ = current?.feed(line)
        }
        finish()
        return (sinks, defaultSinkName)
    }
}
