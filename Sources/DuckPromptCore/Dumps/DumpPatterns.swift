/// The regular expressions of the dump readers and the classifier, compiled once: a regex
/// literal in a function body is parsed and compiled again on every call, which made reading
/// a 10 MB dump take seconds.
///
/// `Regex` is not `Sendable`: it compiles its program lazily, on first use. Each pattern here
/// is used once inside its `static let` initializer (which Swift runs exactly once, thread-safely),
/// so every later use from any thread only reads the compiled program.
package enum DumpPatterns {
    private static func compiled<Output>(_ regex: Regex<Output>) -> Regex<Output> {
        _ = "".wholeMatch(of: regex)
        return regex
    }

    /// `Sink #3`, `Destination #3`, `Аудиоприёмник №3`: header word and index.
    nonisolated(unsafe) static let numberedHeader = compiled(/(.+?)\s*(?:#|№|č\.|Nr\.)\s*(\d+)/)
    /// `3. odpływ`: index and header word.
    nonisolated(unsafe) static let indexFirstHeader = compiled(/(\d+)\.\s+(\S.*)/)
    /// A number at the end of a port field (`priority: 100`).
    nonisolated(unsafe) static let trailingNumber = compiled(/(\d+)\s*$/)
    /// A port field that is a word and a number (`prioridad 100`, `Priorität: 100`).
    nonisolated(unsafe) static let wordAndNumber = compiled(/[^\d:]+[:.]?\s*\d+/)
    /// pacmd's `index: 3`, `* index: 3` (the default sink).
    nonisolated(unsafe) static let pacmdHeader = compiled(/(\*\s*)?index:\s*(\d+)/)
    /// wpctl inspect's `id 42, type PipeWire:Interface:Node`.
    nonisolated(unsafe) static let wpctlHeader = compiled(/id\s+(\d+),\s*type\s+(\S+)/)
    /// A pw-dump object's type.
    nonisolated(unsafe) static let pwDumpType = compiled(/"type"\s*:\s*"PipeWire:Interface:/)
    /// `front-left: 39218 /  60% / -13.31 dB`: channel and raw volume.
    nonisolated(unsafe) static let rawVolume = compiled(/([A-Za-z][A-Za-z0-9\-]*|\d+):\s*(\d+)\s*\/\s*\d+(?:[.,]\d+)?\s*%/)
    /// `front-left: 60%`: channel and percentage.
    nonisolated(unsafe) static let percentVolume = compiled(/([A-Za-z][A-Za-z0-9\-]*|\d+):\s*(\d+(?:[.,]\d+)?)\s*%/)
    /// A USB vendor:product id in a bus path (`usb1d6b:0002`).
    nonisolated(unsafe) static let usbID = compiled(/usb[0-9a-f]{4}:[0-9a-f]{4}/)
}
