// The property keys the classifier's rules read: the families of keys found in one pass over a
// sink's properties, and each key looked up with its old and new spellings.
extension Classifier {
    /// The families of property keys the rules look for, found in one pass over a sink's keys
    /// (rather than a pass per rule).
    struct KeyFamilies {
        /// The first `api.bluez5.*` key, in sorted order (rule 1).
        var firstBlueZ5Key: String?
        /// The first key that marks a network sink (`tunnel.*`, `raop.*`, `rtp.*`, `roc.*`,
        /// `zeroconf.*`, `pulse.server.address*`), in sorted order (rule 3).
        var firstNetworkKey: String?
        /// The first `jack.*` key, in sorted order (rule 3b).
        var firstJACKKey: String?
        /// An `alsa.*` or `api.alsa.*` key (rules 5, 7 and 9).
        var hasALSAKey = false
        /// An `api.alsa.*` key.
        var hasAPIALSAKey = false
        /// A key that describes a device (rule 10): `device.api`, `device.bus`,
        /// `device.bus_path`, `device.form_factor` (either spelling), `device.string`,
        /// `sysfs.path`, `device.sysfs.path`, `udev.id`, `device.serial*`, or one under
        /// `alsa.`, `api.alsa.`, `api.bluez5.`, `bluez.`, `bluetooth.`, `device.vendor.`,
        /// `device.product.`.
        var hasDeviceKey = false
        /// `device.api` and `factory.name` as `value` gives them (read by several rules: once
        /// here rather than a dictionary lookup per rule).
        var deviceAPI: String?
        var factoryName: String?
        /// A form factor key, either spelling (rules 2, 8, 9b look it up only then).
        var hasFormFactorKey = false

        private static let deviceKeys: Set<String> = [
            "device.api", "device.bus", "device.bus_path", "device.bus-path", "device.form_factor",
            "device.form-factor", "device.string", "sysfs.path", "device.sysfs.path", "udev.id",
        ]
        private static let networkPrefixes = [
            "pulse.server.address", "raop.", "roc.", "rtp.", "sess.", "snapcast.", "tunnel.", "vban.", "zeroconf.",
        ]

        init(_ properties: [String: String]) {
            for (key, raw) in properties {
                // By the first letter, so that each key is compared only with the prefixes that
                // could match it; prefixes compared on the bytes.
                switch key.utf8.first {
                case UInt8(ascii: "a"):
                    if key.utf8.starts(with: "alsa.".utf8) {
                        hasALSAKey = true
                        hasDeviceKey = true
                    } else if key.utf8.starts(with: "api.alsa.".utf8) {
                        hasALSAKey = true
                        hasAPIALSAKey = true
                        hasDeviceKey = true
                    } else if key.utf8.starts(with: "api.bluez5.".utf8) {
                        firstBlueZ5Key = min(key, firstBlueZ5Key ?? key)
                        hasDeviceKey = true
                    }
                case UInt8(ascii: "b"):
                    if key.utf8.starts(with: "bluez.".utf8) || key.utf8.starts(with: "bluetooth.".utf8) { hasDeviceKey = true }
                case UInt8(ascii: "f"):
                    if key == "factory.name" { factoryName = Classifier.normalizedValue(raw) }
                case UInt8(ascii: "j"):
                    if key.utf8.starts(with: "jack.".utf8) { firstJACKKey = min(key, firstJACKKey ?? key) }
                case UInt8(ascii: "d"), UInt8(ascii: "u"):
                    if key == "device.api" {
                        deviceAPI = Classifier.normalizedValue(raw)
                    } else if key == "device.form_factor" || key == "device.form-factor" {
                        hasFormFactorKey = true
                    }
                    if !hasDeviceKey {
                        hasDeviceKey = Self.deviceKeys.contains(key) || key.utf8.starts(with: "device.vendor.".utf8)
                            || key.utf8.starts(with: "device.product.".utf8) || key.utf8.starts(with: "device.serial".utf8)
                    }
                case UInt8(ascii: "s"):
                    if !hasDeviceKey, Self.deviceKeys.contains(key) { hasDeviceKey = true }
                    if key.utf8.starts(with: "sess.".utf8) || key.utf8.starts(with: "snapcast.".utf8) {
                        firstNetworkKey = min(key, firstNetworkKey ?? key)
                    }
                case UInt8(ascii: "p"), UInt8(ascii: "r"), UInt8(ascii: "t"), UInt8(ascii: "v"), UInt8(ascii: "z"):
                    if Self.networkPrefixes.contains(where: { key.utf8.starts(with: $0.utf8) }) {
                        firstNetworkKey = min(key, firstNetworkKey ?? key)
                    }
                default:
                    break
                }
            }
        }
    }

    // MARK: Property access

    /// PipeWire's own spelling of keys pactl prints differently (pipewire-pulse renames them,
    /// `pw-dump` and `wpctl inspect` do not).
    private static let aliases: [String: String] = [
        "device.form_factor": "device.form-factor",
        "device.bus_path": "device.bus-path",
        "sysfs.path": "device.sysfs.path",
    ]

    /// The key actually present (the pactl spelling first, then PipeWire's) and its value,
    /// lower-cased and trimmed; nil when absent or empty.
    static func lookup(_ p: [String: String], _ key: String) -> (key: String, value: String)? {
        if let found = value(p, key) { return (key, found) }
        if let alias = aliases[key], let found = value(p, alias) { return (alias, found) }
        return nil
    }

    /// A property value, lower-cased and trimmed; nil when absent or empty.
    static func value(_ p: [String: String], _ key: String) -> String? {
        p[key].flatMap(normalizedValue)
    }

    /// A property value lower-cased and trimmed; nil when empty.
    static func normalizedValue(_ raw: String) -> String? {
        // Most values are already lower-case ASCII without blanks: no copy is made for them.
        if !raw.isEmpty, raw.utf8.allSatisfy(isLowercaseASCIIWithoutBlanks) { return raw }
        let trimmed = raw.trimmingSpaces().lowercased()
        return trimmed.isEmpty ? nil : trimmed
    }

    private static func isLowercaseASCIIWithoutBlanks(_ byte: UInt8) -> Bool {
        byte > 0x20 && byte < 0x7F && !(UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
    }
}
