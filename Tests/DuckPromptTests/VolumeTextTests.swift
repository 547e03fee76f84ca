import Testing
@testable import DuckPromptCore

/// `VolumeText` reads what `DumpPatterns.rawVolume` finds, or declines (nil) and leaves it to
/// the regex: it never reads a value the regex would not.
@Suite struct VolumeTextTests {
    static func byRegex(_ text: String) -> [UInt32]? {
        let found = text.matches(of: DumpPatterns.rawVolume)
        let values = found.compactMap { UInt32($0.output.2) }
        return found.isEmpty || values.count != found.count ? nil : values
    }

    @Test("the fast reading equals the regex's wherever it reads", arguments: [
        "front-left: 39218 /  60% / -13.31 dB,   front-right: 39218 /  60% / -13.31 dB",
        "front-left: 38010 /  58% / -14,19 dB,   front-right: 38010 /  58% / -14,19 dB",
        "mono: 65536 / 100% / 0.00 dB",
        "0: 65536 / 100% / 0.00 dB, 1: 65536 / 100%",
        "aux0: 1 / 0% / -inf dB, aux1: 2 / 0% / -inf dB",
        "front-left: 60%",
        "front-left: 65536 / 100.5% / 0.00 dB",
        "front-left: 65536 / 100.% / 0.00 dB",
        "x/front-left: 65536 / 100%",
        "5front-left: 65536 / 100%",
        "front-left:65536/100%",
        "front-left: 99999999999 / 100%",
        "avant gauche : 65536 / 100 % / 0,00 dB",
        "links vorne: 65536 / 100 % / 0,00 dB,   rechts vorne: 65536 / 100 % / 0,00 dB",
        "front-left: 65536 / 100%front-right: 1 / 0%",
        "",
        "balance 0.00",
    ])
    func sameAsRegex(_ text: String) {
        if let fast = VolumeText.rawValues(text) {
            #expect(fast == Self.byRegex(text), "\(text)")
        }
        #expect(DumpVocabulary.volume(text) == (Self.byRegex(text).map(ChannelVolumes.init) ?? DumpVocabulary.volume(text)))
    }

    @Test("pactl's usual line is read without the regex")
    func usualLine() {
        #expect(VolumeText.rawValues("front-left: 39218 /  60% / -13.31 dB,   front-right: 39218 /  60% / -13.31 dB") == [39218, 39218])
    }
}
