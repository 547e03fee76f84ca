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
enum ALSANames {
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
    private static func saysAnalog(_ name: String) -> Bool {
        name.lowercased().split { !($0.isLetter || $0.isNumber) }.contains("analog")
    }

    /// The one kind a name's words say; nil when they say none or more than one.
    static func kind(ofName name: String) -> DeviceKind? {
        let words = name.lowercased().split { !($0.isLetter || $0.isNumber) }
        var found: DeviceKind? = nil
        for (i, word) in words.enumerated() {
            let next = i + 1 < words.count ? words[i + 1] : nil
            guard let kind = kind(ofWord: word, next: next) else { continue }
            if let found, found != kind { return nil }
            found = kind
        }
        return found ?? (words.contains("digital") ? .lineOut : nil)
    }

    /// The kind one word says (`next`: the word after it, for `line out`).
    private static func kind(ofWord word: Substring, next: Substring?) -> DeviceKind? {
        if word.contains("hdmi") || word == "displayport" || word == "dp" { return .hdmi }
        // `dp1`, `dp2`: a DisplayPort output's UCM name.
        if word.hasPrefix("dp"), word.count > 2, word.dropFirst(2).allSatisfy(\.isNumber) { return .hdmi }
        switch word {
        case "headphone", "headphones", "headset": return .headphones
        case "speaker", "speakers": return .speaker
        case "lineout", "spdif", "pdif", "iec958", "optical", "toslink": return .lineOut
        case "line" where next == "out": return .lineOut
        default: return nil
        }
    }
}
