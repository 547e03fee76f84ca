/// Words and value shapes shared by the text dump readers: the key names pactl and pacmd print
/// (English, French, German), and the recognisers that work without them (property lines, port
/// lines, volumes). Key names are compared after `DumpVocabulary.normalizedKey(_:)`.
package enum DumpVocabulary {
    /// The sink fields a `key: value` line can carry.
    enum Field: Sendable {
        case state, name, description, driver, channelMap, ownerModule, mute, volume, flags
        case properties, ports, activePort, formats, index
    }

    /// Key (lower-cased, single-spaced, no trailing colon) → field. pactl keys are translated
    /// by gettext (`src/utils/pactl.c` format strings, `po/fr.po`, `po/de.po` of PulseAudio 16);
    /// pacmd keys (`src/pulsecore/cli-text.c`) never are.
    static let fieldsByKey: [String: Field] = [
        // pactl, English (PulseAudio 1.1 … 17, pipewire-pulse)
        "state": .state, "name": .name, "description": .description, "driver": .driver,
        "channel map": .channelMap, "owner module": .ownerModule, "mute": .mute,
        "volume": .volume, "flags": .flags, "properties": .properties, "ports": .ports,
        "active port": .activePort, "formats": .formats,
        // pacmd list-sinks
        "index": .index, "muted": .mute, "module": .ownerModule,
        // French (PulseAudio fr.po; the colon is preceded by a no-break space)
        "état": .state, "etat": .state, "nom": .name, "pilote": .driver,
        "plan des canaux": .channelMap, "module du propriétaire": .ownerModule,
        "module propriétaire": .ownerModule, "sourdine": .mute, "marqueurs": .flags,
        "drapeaux": .flags, "propriétés": .properties, "port actif": .activePort,
        // German (PulseAudio de.po; older releases said "Zustand")
        "status": .state, "zustand": .state, "beschreibung": .description, "treiber": .driver,
        "kanalzuordnung": .channelMap, "kanal-zuordnung": .channelMap,
        "besitzer-modul": .ownerModule, "besitzermodul": .ownerModule, "owner-modul": .ownerModule,
        "stumm": .mute, "lautstärke": .volume, "markierungen": .flags,
        "eigenschaften": .properties, "aktiver port": .activePort, "formate": .formats,
        // German `de` up to PulseAudio 9.0 and `de_CH` to 17.0 translate "\tPorts:\n" as
        // "\tProfile:\n" and "\tActive Port: %s\n" as "\tAktive Profile: %s\n" (a translation
        // bug: those are the words of a card's profiles); in a sink block they are its ports.
        "profile": .ports, "aktive profile": .activePort,
        // Chinese (zh_CN.po, zh_TW.po), Japanese (ja.po), Korean (ko.po) of PulseAudio 17: the
        // CJK translations end keys with a full-width colon (`状态：`), made `:` by `DumpLine`.
        "状态": .state, "名称": .name, "描述": .description, "驱动程序": .driver,
        "声道映射": .channelMap, "所有者模块": .ownerModule, "静音": .mute, "音量": .volume,
        "标记": .flags, "属性": .properties, "端口": .ports, "连接端口": .ports,
        "活动端口": .activePort, "格式": .formats,
        "狀態": .state, "名稱": .name, "驅動程式": .driver, "聲道映射表": .channelMap,
        "擁有者模組": .ownerModule, "靜音": .mute, "旗標": .flags, "屬性": .properties,
        "連接埠": .ports, "使用中連接埠": .activePort,
        "状態": .state, "名前": .name, "説明": .description, "ドライバー": .driver,
        "チャンネルマップ": .channelMap, "所有者モジュール": .ownerModule, "ミュート": .mute,
        "ボリューム": .volume, "フラグ": .flags, "プロパティー": .properties, "ポート": .ports,
        "活動中ポート": .activePort, "形式": .formats,
        "상태": .state, "이름": .name, "설명": .description, "드라이버": .driver,
        "채널 맵": .channelMap, "소유자 모듈": .ownerModule, "무음": .mute, "음량": .volume,
        "플래그": .flags, "속성": .properties, "포트": .ports, "활성 포트": .activePort,
        "형식": .formats,
    ]

    /// Header words of a `pactl list sinks` block, `<word> #<index>` (`Sink #3`), in the
    /// languages PulseAudio ships. Other `<word> #<index>` headers (`Source #1`, `Sink Input #7`,
    /// `Card #0` in a full `pactl list`) start blocks that are skipped.
    static let sinkHeaderWords: Set<String> = [
        "sink", "destination", "ziel", "destino", "nielu", "slivnik", "muara", "afvoer", "sluk",
        "mottagare", "alıcı", "cíl", "δέκτης", "rinktuvas", "прыёмнік", "аудиоприёмник",
        "приймач даних", "nyelő", "odpływ", "シンク", "싱크", "信宿",
    ]

    /// Lower-cases a key, turns no-break spaces into spaces and collapses runs of spaces.
    static func normalizedKey(_ key: Substring) -> String {
        // Already normal (ASCII, no capital, single spaces between words): as it is.
        var normal = true, afterSpace = true
        for byte in key.utf8 {
            if byte >= 0x80 || (byte >= 0x41 && byte <= 0x5A) || (byte == 0x20 && afterSpace) { normal = false; break }
            afterSpace = byte == 0x20
        }
        if normal, !afterSpace { return String(key) }
        if key.isASCII {
            // Lower-cased, blanks between words made one: on the bytes.
            var bytes: [UInt8] = []
            bytes.reserveCapacity(key.utf8.count)
            var pendingSpace = false
            for byte in key.utf8 {
                if byte == 0x20 {
                    pendingSpace = !bytes.isEmpty
                    continue
                }
                if pendingSpace { bytes.append(0x20); pendingSpace = false }
                bytes.append(byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte)
            }
            return String(decoding: bytes, as: UTF8.self)
        }
        return key.lowercased().split(whereSeparator: { $0 == " " }).joined(separator: " ")
    }

    /// Sink state from the word pactl or pacmd prints (`pa_sink_state_t`; pactl prints the
    /// untranslated `state_table` words `RUNNING`, `IDLE`, `SUSPENDED`).
    static func state(_ word: String) -> SinkState? {
        switch word.trimmingSpaces().uppercased() {
        case "RUNNING": .running
        case "IDLE": .idle
        case "SUSPENDED": .suspended
        default: nil
        }
    }

    /// Mute from `yes`/`no` in English, French or German (`pa_yes_no_localised`).
    static func bool(_ word: String) -> Bool? {
        switch word.trimmingSpaces().lowercased() {
        case "yes", "oui", "ja", "true", "1", "是", "はい", "예": true
        case "no", "non", "nein", "false", "0", "否", "いいえ", "아니요": false
        default: nil
        }
    }

    /// Port type from the word pactl prints after `type:` (`get_device_port_type` in pactl.c,
    /// translated by gettext), e.g. `Speaker`, `Haut-parleur`, `Kopfhörer`, `Unknown-23`.
    static func portType(_ word: String) -> PortType {
        let lower = word.trimmingSpaces().lowercased()
        if let type = PortType(rawValue: lower) { return type }
        switch lower {
        case "haut-parleur", "haut-parleurs", "lautsprecher": return .speaker
        case "casque audio", "kopfhörer", "écouteurs": return .headphones
        case "casque": return .headset
        case "mikro", "micro", "microphone", "mikrofon": return .mic
        case "hörer", "combiné": return .handset
        case "ohrhörer", "écouteur": return .earpiece
        case "tragbar": return .portable
        case "mains-libres", "freisprecheinrichtung": return .handsfree
        case "voiture", "auto": return .car
        case "téléphone", "telefon": return .phone
        case "netzwerk", "réseau": return .network
        case "vidéo": return .video
        case "analogique": return .analog
        case "ligne": return .line
        // zh_TW.po, ko.po, ja.po, zh_CN.po of PulseAudio 17 (`Speaker`, `Headphones`).
        case "喇叭", "扬声器", "스피커", "スピーカー": return .speaker
        case "頭戴式耳機", "模拟耳机", "헤드폰", "アナログヘッドフォン": return .headphones
        default: return .unknown
        }
    }

    /// Port availability from a word or phrase of a port line or JSON: `available`,
    /// `not available`, `availability unknown` (pactl), `available: yes|no|unknown` (pacmd),
    /// and their French, German, Chinese (zh_TW) and Korean forms. Nil when the text says nothing about availability.
    static func availability(_ phrase: String) -> PortAvailability? {
        let lower = DumpVocabulary.normalizedKey(Substring(phrase))
        switch lower {
        case "available", "available: yes", "verfügbar", "verfügbar: ja", "disponible",
             "disponible : oui", "disponible: oui", "可用", "사용 가능":
            return .yes
        case "not available", "available: no", "nicht verfügbar", "verfügbar: nein",
             "non disponible", "indisponible", "disponible : non", "disponible: non", "無法使用",
             "사용할 수 없음":
            return .no
        case "availability unknown", "available: unknown", "verfügbarkeit unbekannt",
             "verfügbar: unbekannt", "disponibilité inconnue", "disponible : inconnu",
             "disponible: inconnu", "可用性未知", "가용성을 알 수 없음":
            return .unknown
        default:
            return nil
        }
    }

    /// Flag names pactl and pacmd print (`pa_sink_flags_t`).
    static let flagNames: Set<String> = [
        "HARDWARE", "NETWORK", "HW_MUTE_CTRL", "HW_VOLUME_CTRL", "DECIBEL_VOLUME", "LATENCY",
        "DYNAMIC_LATENCY", "SET_FORMATS", "FLAT_VOLUME", "SHARE_VOLUME_WITH_MASTER",
        "DEFERRED_VOLUME",
    ]

    /// Channel position names (`pa_channel_position_to_string`), in libpulse's order; used to
    /// recognise a channel map line and to order JSON volumes when no channel map is given.
    static let channelPositions: [String] = {
        var names = ["mono", "front-left", "front-right", "front-center", "rear-center",
                     "rear-left", "rear-right", "lfe", "front-left-of-center",
                     "front-right-of-center", "side-left", "side-right"]
        names += (0..<32).map { "aux\($0)" }
        names += ["top-center", "top-front-left", "top-front-right", "top-front-center",
                  "top-rear-left", "top-rear-right", "top-rear-center"]
        return names
    }()

    /// Parses a volume as pactl or pacmd prints it (`pa_cvolume_snprint_verbose`):
    /// `front-left: 39218 /  60% / -13.38 dB,   front-right: …` (raw `pa_volume_t` per channel),
    /// or the PulseAudio 1.1 form `0:  60% 1:  60%` (percent only, converted with
    /// `v = round(pct / 100 × 65536)`, PA_VOLUME_NORM = 65536 at 100 %).
    /// - Returns: one `pa_volume_t` per channel, or nil when the text holds no channel volume.
    static func volume(_ text: String) -> ChannelVolumes? {
        // Both patterns need a `%`.
        guard text.utf8.contains(0x25) else { return nil }
        if let values = VolumeText.rawValues(text) { return ChannelVolumes(values) }
        let raw = text.matches(of: DumpPatterns.rawVolume)
        if !raw.isEmpty {
            let values = raw.compactMap { UInt32($0.output.2) }
            return values.count == raw.count ? ChannelVolumes(values) : nil
        }
        let percent = text.matches(of: DumpPatterns.percentVolume)
        guard !percent.isEmpty else { return nil }
        var values: [UInt32] = []
        for match in percent {
            guard let pct = Double(match.output.2.replacing(",", with: "."))
            else { return nil }
            values.append(volumeFromPercent(pct))
        }
        return ChannelVolumes(values)
    }

    /// `pa_volume_t` for a percentage as pactl prints it: `round(pct / 100 × 65536)`, clamped to
    /// `PA_VOLUME_MAX` (UInt32.max / 2).
    static func volumeFromPercent(_ percent: Double) -> UInt32 {
        let value = (percent / 100 * 65536).rounded()
        return UInt32(min(max(value, 0), Double(UInt32.max / 2)))
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces, tabs, newlines and no-break spaces.
    /// ASCII blanks at either end are dropped byte by byte; a non-ASCII byte at an end (a
    /// no-break space, U+2028) is left to `Character.isWhitespace`.
    package func trimmingSpaces() -> String {
        let whole = Substring(self)
        let utf8 = whole.utf8
        var start = utf8.startIndex, end = utf8.endIndex
        var slow = false
        while start < end {
            let byte = utf8[start]
            if byte == 0x20 || (byte >= 0x09 && byte <= 0x0D) {
                start = utf8.index(after: start)
            } else {
                slow = byte >= 0x80
                break
            }
        }
        while !slow, start < end {
            let before = utf8.index(before: end)
            let byte = utf8[before]
            if byte == 0x20 || (byte >= 0x09 && byte <= 0x0D) {
                end = before
            } else {
                slow = byte >= 0x80
                break
            }
        }
        if !slow { return String(whole[start..<end]) }
        var scalars = whole
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }
}
