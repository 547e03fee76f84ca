/// Collects the lines of one sink block of a `pactl list sinks` or `pacmd list-sinks` dump and
/// builds a `Sink` from them.
///
/// Keys are looked up in `DumpVocabulary.fieldsByKey` (English, French, German, pacmd); where a
/// key is not known (another language, another release), the structure decides: property lines
/// (`key = "value"`) are properties wherever they appear, port lines are recognised by shape in
/// any section that follows an unknown empty-valued key, a state word (`RUNNING`) is the state,
/// a `front-left: 39218 / 60% …` value is the volume, a value naming one of the ports is the
/// active port, a value ending in `.monitor` names the monitor source. Port properties (pacmd
/// prints them under each port) are not sink properties and are dropped.
package struct SinkBlockBuilder {
    /// Index from the block header (`Sink #3`, pacmd `index: 3`); nil for a headerless block.
    var index: UInt32?
    /// Whether the block started with a header. A headerless block ends where a field seen
    /// already (name, state, driver) shows up again: that line starts the next sink.
    var hasHeader: Bool
    /// pacmd marks the default sink with `* index: N`.
    var isDefault = false

    private var name: String?
    private var description: String?
    private var driver: String?
    private var state: SinkState?
    private var volume: ChannelVolumes?
    private var channelMap: [String]?
    private var mute: Bool?
    private var flags: Set<String>?
    private var ownerModule: UInt32?
    private var ports: [Port] = []
    private var activePortName: String?
    private var properties: [String: String] = [:]
    private var monitorName: String?
    private var section = Section.none

    private enum Section {
        case none
        /// After `Ports:`: port lines, each possibly followed by a pacmd `properties:` list.
        case ports(indent: Int)
        /// Inside a pacmd port's `properties:` list.
        case portProperties(indent: Int, portsIndent: Int)
        /// After `Formats:`: format lines, ignored.
        case formats(indent: Int)
        /// After an empty-valued key this reader does not know: port lines are taken by shape.
        case unknown(indent: Int)
    }

    init(index: UInt32? = nil, hasHeader: Bool, isDefault: Bool = false) {
        self.index = index
        self.hasHeader = hasHeader
        self.isDefault = isDefault
    }

    /// Feeds one line of the block.
    /// - Returns: false when the line belongs to the next sink of a headerless dump (the caller
    ///   builds this block and feeds the line to a new one); true when it was taken or ignored.
    mutating func feed(_ line: DumpLine) -> Bool {
        if line.isFiller { return true }

        switch section {
        case .portProperties(let indent, let portsIndent):
            if line.indent > indent { return true }
            section = .ports(indent: portsIndent)
        case .formats(let indent):
            if line.indent > indent { return true }
            section = .none
        default:
            break
        }
        switch section {
        case .ports(let indent), .unknown(let indent):
            if let port = line.port {
                ports.append(port)
                section = .ports(indent: indent)
                return true
            }
            if !ports.isEmpty, line.indent > indent, let (key, value) = line.keyValue,
               value.isEmpty, DumpVocabulary.fieldsByKey[key] == .properties {
                section = .portProperties(indent: line.indent, portsIndent: indent)
                return true
            }
            section = .none
        default:
            break
        }

        if let (key, value) = line.property {
            properties[key] = value
            return true
        }
        guard let (key, value) = line.keyValue else { return true }
        let field = DumpVocabulary.fieldsByKey[key]
        if value.isEmpty {
            switch field {
            case .ports: section = .ports(indent: line.indent)
            case .formats: section = .formats(indent: line.indent)
            case nil: section = .unknown(indent: line.indent)
            default: break
            }
            return true
        }
        switch field {
        case .state:
            if !hasHeader, state != nil { return false }
            state = DumpVocabulary.state(value) ?? .unknown
        case .name:
            if !hasHeader, name != nil { return false }
            name = Self.unwrapped(value)
        case .description:
            description = value
        case .driver:
            if !hasHeader, driver != nil { return false }
            driver = Self.unwrapped(value)
        case .channelMap:
            channelMap = value.split(separator: ",").map { $0.trimmingSpaces() }
        case .ownerModule:
            ownerModule = Self.index(value)
        case .mute:
            mute = DumpVocabulary.bool(value)
        case .volume:
            volume = DumpVocabulary.volume(value)
        case .flags:
            flags = Set(value.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init))
        case .activePort:
            activePortName = Self.unwrapped(value)
        case .index, .properties, .ports, .formats:
            break
        case nil:
            takeByShape(value)
        }
        return true
    }

    /// A value under a key this reader does not know: keep it when its shape says what it is.
    private mutating func takeByShape(_ value: String) {
        let unwrapped = Self.unwrapped(value)
        if activePortName == nil, ports.contains(where: { $0.name == unwrapped }) {
            activePortName = unwrapped
        } else if state == nil, let found = DumpVocabulary.state(value) {
            state = found
        } else if volume == nil, let found = DumpVocabulary.volume(value) {
            volume = found
        } else if monitorName == nil, unwrapped.hasSuffix(".monitor"), !unwrapped.contains(" ") {
            monitorName = unwrapped
        } else if driver == nil, !unwrapped.contains(" "),
                  unwrapped.hasSuffix(".c") || unwrapped == "PipeWire" {
            driver = unwrapped
        } else if flags == nil {
            let words = value.split(separator: " ").map(String.init)
            if !words.isEmpty, words.allSatisfy(DumpVocabulary.flagNames.contains) {
                flags = Set(words)
                return
            }
            takeChannelMapByShape(value)
        } else {
            takeChannelMapByShape(value)
        }
    }

    private mutating func takeChannelMapByShape(_ value: String) {
        guard channelMap == nil else { return }
        let positions = value.split(separator: ",").map { $0.trimmingSpaces() }
        if !positions.isEmpty, positions.allSatisfy(DumpVocabulary.channelPositions.contains) {
            channelMap = positions
        }
    }

    /// The sink, or nil when the block shows no sign of being one (no header, no name, no
    /// driver). The name falls back to `node.name`, then to the monitor source without
    /// `.monitor`; the description to `device.description` (pacmd prints no description).
    ///
    /// A block under a header that shows no name but something to classify by (a port, an
    /// active port, a property: `pactl list sinks | grep` keeps `Sink #0`, `Ports:` and the
    /// port lines) is named `UnnamedSink.name("Sink #0")`.
    func build() -> Sink? {
        guard hasHeader || name != nil || driver != nil else { return nil }
        var resolvedName = name
            ?? properties["node.name"]
            ?? monitorName.map { String($0.dropLast(".monitor".count)) }
            ?? ""
        if resolvedName.isEmpty, hasHeader, !ports.isEmpty || activePortName != nil || !properties.isEmpty {
            resolvedName = UnnamedSink.name(index.map { "Sink #\($0)" } ?? "sink")
        }
        return Sink(index: index,
                    name: resolvedName,
                    description: description ?? properties["device.description"] ?? "",
                    driver: driver ?? "",
                    state: state ?? .unknown,
                    volume: volume ?? ChannelVolumes([]),
                    channelMap: channelMap ?? [],
                    mute: mute ?? false,
                    flags: flags ?? [],
                    ports: ports,
                    activePortName: activePortName,
                    properties: properties,
                    ownerModule: ownerModule)
    }

    /// pacmd wraps names in angle brackets: `<alsa_output.pci-0000_00_14.2.analog-stereo>`.
    static func unwrapped(_ value: String) -> String {
        if value.count >= 2, value.hasPrefix("<"), value.hasSuffix(">") {
            return String(value.dropFirst().dropLast())
        }
        return value
    }

    /// An index or module number; `PA_INVALID_INDEX` (4294967295) and `n/a` read as nil.
    static func index(_ value: String) -> UInt32? {
        guard let number = UInt32(value.trimmingSpaces()), number != UInt32.max else { return nil }
        return number
    }
}
