/// What an ALSA sink's own names say it is (the classifier's rule 9): many cards say what an
/// output is only there, with a generic `analog-output` port or none. A Raspberry Pi's
/// `bcm2835 Headphones` and `vc4-hdmi` cards, a SoC codec's UCM device (`HiFi: HDMI1`), a
/// PipeWire split-port profile (`analog-stereo-headphones`, a description ending in
/// `Headphones`), a pro-audio profile (`pro-output-3` whose PCM is `HDMI 0`), a sink seen
/// only through `pw-cli ls Node` (`node.nick = "HDMI / DisplayPort 2 Output"`).
///
/// Names are read as words (split at anything not a letter or digit, lower-cased): `hdmi`,
/// `hdmi1`, `vc4hdmi0`, `displayport`, `dp` → hdmi; `headphone(s)`, `headset` → headphones;
/// `speaker(s)` → speaker; `line` followed by `out`, `lineout`, `spdif` (`S/PDIF`), `iec958`, `optical`,
/// `toslink` → line-out; `digital` → line-out when no other word of the name says a kind (an HDA
/// codec's S/PDIF PCM is `ALC892 Digital`; `Digital Stereo (HDMI)` is HDMI). A name that
/// names two kinds (`Speaker + Headphones`, a combined UCM port) decides nothing. Words such as
/// `analog`, `stereo`, `pch`, `hda` say nothing.
///
/// The sources, most particular first (the first that decides wins): the PCM and its profile
/// (`alsa.name`, `node.nick`, `device.profile.name`, `device.profile.description`), then the
/// card (`alsa.id`, `alsa.card_name`, `api.alsa.card.name`, `alsa.long_card_name`,
/// `api.alsa.card.longname`, `alsa.mixer_name`), then the description (`device.description`,
/// `node.description`, else the sink's `pa_sink_info.description`, pactl's `Description:`
/// line, which a dump cut short keeps: PipeWire names a split-port sink `Built-in Audio
/// Headphones`). A card has one name for all its outputs, so a card name is read after every
/// name of the PCM, and not at all when a PCM name says `analog`: an HDA card's mixer is named
/// for one codec on it and shown on every sink (`Intel PantherPoint HDMI` on an analog one).
/// Pure.
package enum ALSANames {
    /// Where a name comes from, for the evidence.
    enum Source: String {
        case pcm = "its ALSA PCM or profile name"
        case card = "its card's name"
        case description = "its description"
    }

    /// The PCM's and its profile's names, read first.
    static let pcmSources = ["alsa.name", "node.nick", "device.profile.name", "device.profile.description"]
    /// The card's names, read when no PCM name says `analog`.
    static let cardSources = [
        "alsa.id", "alsa.card_name", "api.alsa.card.name", "alsa.long_card_name", "api.alsa.card.longname", "alsa.mixer_name",
    ]
    /// The descriptions, read last.
    static let descriptionSources = ["device.description", "node.description"]

    /// The kind the first deciding name of `sink` says, with its key (a property, or
    /// `description` for `pa_sink_info.description`), value and source; nil when no name
    /// decides.
    static func kind(_ sink: Sink) -> (kind: DeviceKind, key: String, value: String, source: Source)? {
        for name in names(sink) {
            if let kind = kind(ofName: name.value) { return (kind, name.key, name.value, name.source) }
        }
        return nil
    }

    /// The names that were read and said nothing, `key=value` joined by `, ` (for an unknown
    /// sink's evidence); nil when it has none of them.
    static func silentNames(_ sink: Sink) -> String? {
        let found = names(sink).map { "\($0.key)=\($0.value)" }
        return found.isEmpty ? nil : found.joined(separator: ", ")
    }

    /// The sink's names in the order they are read.
    private static func names(_ sink: Sink) -> [(key: String, value: String, source: Source)] {
        func read(_ keys: [String], _ source: Source) -> [(key: String, value: String, source: Source)] {
            keys.compactMap { key in sink.properties[key].map { (key, $0, source) } }
        }
        var found = read(pcmSources, .pcm)
        if !found.contains(where: { saysAnalog($0.value) }) {
            found += read(cardSources, .card)
        }
        found += read(descriptionSources, .description)
        if sink.properties["device.description"] == nil, sink.properties["node.description"] == nil, !sink.description.isEmpty {
            found.append(("description", sink.description, .description))
        }
        return found
    }

    /// Whether a name has the word `analog` (`Analog Stereo`, `analog-stereo`, `ALC892 Analog`).
    private static func saysAnalog(_ name: String) -> Bool { read(name).saysAnalog }

    /// The one kind a name's words say; nil when they say none or more than one.
    static func kind(ofName name: String) -> DeviceKind? { read(name).kind }

    /// What a name's words say: the one kind (nil for none or several; `digital` alone is
    /// line-out) and whether one word is `analog`. One pass over the name's UTF-8 bytes, ASCII
    /// letters lower-cased; a byte of a multi-byte character counts as a letter. (This is the
    /// figure-6 path: every ALSA sink that no port decided comes here, several names each.)
    private static func read(_ name: String) -> (kind: DeviceKind?, saysAnalog: Bool) {
        var bytes = Array(name.utf8)
        for i in bytes.indices where bytes[i] >= 0x41 && bytes[i] <= 0x5A { bytes[i] |= 0x20 }
        var found: DeviceKind? = nil
        var several = false
        var digital = false
        var analog = false
        var previous: Range<Int>? = nil
        var index = 0
        func isWordByte(_ byte: UInt8) -> Bool {
            (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte >= 0x80
        }
        while index < bytes.count {
            guard isWordByte(bytes[index]) else { index += 1; continue }
            let start = index
            while index < bytes.count, isWordByte(bytes[index]) { index += 1 }
            let word = bytes[start..<index]
            // `line out`: the word before this one was `line`.
            let afterLine = previous.map { bytes[$0].elementsEqual("line".utf8) } ?? false
            previous = start..<index
            if word.elementsEqual("digital".utf8) { digital = true }
            if word.elementsEqual("analog".utf8) { analog = true }
            let kind: DeviceKind? = afterLine && word.elementsEqual("out".utf8) ? .lineOut : kind(ofWord: word)
            guard let kind else { continue }
            if let found, found != kind { several = true }
            found = kind
        }
        if several { return (nil, analog) }
        return (found ?? (digital ? .lineOut : nil), analog)
    }

    private static let wordKinds: [(word: [UInt8], kind: DeviceKind)] = [
        ("displayport", DeviceKind.hdmi), ("dp", .hdmi), ("headphone", .headphones), ("headphones", .headphones),
        ("headset", .headphones), ("speaker", .speaker), ("speakers", .speaker), ("lineout", .lineOut),
        ("spdif", .lineOut), ("pdif", .lineOut), ("iec958", .lineOut), ("optical", .lineOut), ("toslink", .lineOut),
    ].map { (Array($0.0.utf8), $0.1) }

    private static let hdmiBytes = Array("hdmi".utf8)

    /// The kind one lower-cased word says (`line out` is two words: see `read`).
    private static func kind(ofWord word: ArraySlice<UInt8>) -> DeviceKind? {
        if contains(word, hdmiBytes) { return .hdmi }
        // `dp1`, `dp2`: a DisplayPort output's UCM name.
        if word.count > 2, word.starts(with: "dp".utf8),
           word.dropFirst(2).allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) { return .hdmi }
        return wordKinds.first { word.elementsEqual($0.word) }?.kind
    }

    /// Whether `part` occurs in `word`.
    private static func contains(_ word: ArraySlice<UInt8>, _ part: [UInt8]) -> Bool {
        guard word.count >= part.count else { return false }
        var start = word.startIndex
        while start + part.count <= word.endIndex {
            if word[start..<start + part.count].elementsEqual(part) { return true }
            start += 1
        }
        return false
    }
}
