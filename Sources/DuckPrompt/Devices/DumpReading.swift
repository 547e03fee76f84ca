// The dump readers (DuckPromptCore's SinkDumpReader) with libpulse's volume arithmetic, which
// converts `pw-dump`'s linear volumes as pipewire-pulse does.
extension SinkDumpReader {
    /// Reads all sinks of a dump: `read(_:math:)` with libpulse's arithmetic.
    /// - Throws: `DuckPromptError(.unsupportedData)` when the text is in no known format or
    ///   holds no sink.
    package static func read(_ text: String) throws -> [Sink] {
        try read(text, math: .libpulse)
    }

    /// The sinks of a dump and its default sink: `readWithDefault(_:math:)` with libpulse's
    /// arithmetic.
    /// - Throws: as `read(_:)`.
    package static func readWithDefault(_ text: String) throws -> (sinks: [Sink], defaultSinkName: String?) {
        try readWithDefault(text, math: .libpulse)
    }

    /// Everything routing can use from a dump: `readSnapshot(_:math:)` with libpulse's
    /// arithmetic.
    /// - Throws: as `read(_:)`.
    package static func readSnapshot(_ text: String) throws -> Snapshot {
        try readSnapshot(text, math: .libpulse)
    }
}
