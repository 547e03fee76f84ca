/// pactl's volume as it nearly always prints it, `front-left: 39218 /  60% / -13.31 dB,
/// front-right: …`, read on its ASCII bytes: what `DumpPatterns.rawVolume` finds in it (the
/// channel names and raw values), at a fraction of a regex's cost (a 10 MiB dump has 8 000 of
/// these lines). Anything it is not sure of (non-ASCII text, a channel name run into other
/// characters, a malformed field) is nil, and the caller uses the regex. Pure.
enum VolumeText {
    /// The raw values of every `NAME: RAW / PCT%` entry, in order; nil when the text is not
    /// plainly such entries separated by text without a `:`.
    static func rawValues(_ text: String) -> [UInt32]? {
        let bytes = Array(text.utf8)
        guard !bytes.contains(where: { $0 >= 0x80 }) else { return nil }
        func isLetter(_ b: UInt8) -> Bool { (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) }
        func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
        func isNameByte(_ b: UInt8) -> Bool { isLetter(b) || isDigit(b) || b == 0x2D }
        func isBlank(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 }
        var values: [UInt32] = []
        var index = 0
        while let colon = bytes[index...].firstIndex(of: 0x3A) {
            // The channel name: the run of name bytes before the colon, starting after a blank,
            // a comma or the start; a letter first (or digits only).
            var start = colon
            while start > index, isNameByte(bytes[start - 1]) { start -= 1 }
            guard start < colon, start == 0 || isBlank(bytes[start - 1]) || bytes[start - 1] == 0x2C else { return nil }
            let name = bytes[start..<colon]
            guard isLetter(name.first!) || name.allSatisfy(isDigit) else { return nil }
            var at = colon + 1
            while at < bytes.count, isBlank(bytes[at]) { at += 1 }
            let rawStart = at
            while at < bytes.count, isDigit(bytes[at]) { at += 1 }
            guard at > rawStart, let raw = UInt32(String(decoding: bytes[rawStart..<at], as: UTF8.self)) else { return nil }
            while at < bytes.count, isBlank(bytes[at]) { at += 1 }
            guard at < bytes.count, bytes[at] == 0x2F else { return nil }
            at += 1
            while at < bytes.count, isBlank(bytes[at]) { at += 1 }
            let percentStart = at
            while at < bytes.count, isDigit(bytes[at]) { at += 1 }
            guard at > percentStart else { return nil }
            if at + 1 < bytes.count, bytes[at] == 0x2E || bytes[at] == 0x2C, isDigit(bytes[at + 1]) {
                at += 1
                while at < bytes.count, isDigit(bytes[at]) { at += 1 }
            }
            while at < bytes.count, isBlank(bytes[at]) { at += 1 }
            guard at < bytes.count, bytes[at] == 0x25 else { return nil }
            values.append(raw)
            index = at + 1
        }
        return values.isEmpty ? nil : values
    }
}
