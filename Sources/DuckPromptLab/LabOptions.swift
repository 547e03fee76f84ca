import DuckPrompt

/// What `duckprompt lab` was asked to do (Docs/lab.md). Pure: the CLI parses the command line
/// into it, `validated()` checks it before anything starts.
package struct LabOptions: Sendable, Equatable {
    /// Which server to run (`--server`, default PipeWire).
    package var server: LabServerKind = .pipewire
    /// The devices to emulate (`--device`), in order; empty: `EmulatedDevice.defaults`.
    package var devices: [EmulatedDevice] = []
    /// `--device none`: no device at all (the server's own fallback sink only).
    package var noDevices = false
    /// `--no-listen`: neither record the monitors nor log the streams: the lab only provides
    /// the servers (sinks then suspend when idle, as on a desktop).
    package var listens = true
    /// `--no-service`: `duckprompt serve` is not activatable on the lab's bus (a test suite
    /// that starts its own service, which must take the bus name).
    package var offersService = true
    /// The default sink (`--default`); nil: the first device.
    package var defaultSink: String?
    /// Where the lab's music plays (`--music [SINK]`); nil: no music.
    package var music: Music?
    /// Where the JSON report goes (`--report FILE`, `-` for standard output); nil: nowhere.
    package var report: String?
    /// How long COMMAND may run, in ms (`--timeout`); nil: no limit.
    package var timeoutMs: Int?
    /// Keep the lab's directory (logs, configuration) after the run (`--keep`).
    package var keep = false
    /// The command and its arguments, after `--`.
    package var command: [String] = []

    package enum Music: Sendable, Equatable {
        /// On the default sink.
        case defaultSink
        /// On the sink of that name.
        case sink(String)
    }

    package init() {}

    /// The devices the lab makes: those asked for, else the defaults (none for `--device none`).
    package var emulated: [EmulatedDevice] { noDevices ? [] : devices.isEmpty ? EmulatedDevice.defaults : devices }

    /// The sink that is made the default; nil with no device.
    package var defaultSinkName: String? { defaultSink ?? emulated.first?.name }

    /// The sink the music plays on, nil for none.
    package var musicSink: String? {
        switch music {
        case nil: nil
        case .defaultSink: defaultSinkName
        case .sink(let name): name
        }
    }

    /// Checks what can be checked before starting anything.
    /// - Throws: `.usage` naming the problem: no command, a device name used twice or not a
    ///   valid sink name, `--default` or `--music` naming a sink the lab does not make,
    ///   `--device none` with other devices, `--music` with no device or with `--no-listen`.
    package func validated() throws -> LabOptions {
        guard !command.isEmpty else { throw DuckPromptError(.usage, "lab needs a command after -- (see duckprompt lab --help)") }
        if noDevices && !devices.isEmpty {
            throw DuckPromptError(.usage, "--device none goes alone: \(devices.map(\.name).joined(separator: ", ")) given too")
        }
        if music != nil && noDevices { throw DuckPromptError(.usage, "--music needs a device to play on (--device none was given)") }
        if music != nil && !listens { throw DuckPromptError(.usage, "--music is for listening: it goes without --no-listen") }
        var seen: Set<String> = []
        for device in emulated {
            guard Self.isSinkName(device.name) else {
                throw DuckPromptError(.usage, "--device '\(device.kind.rawValue)=\(device.name)': a sink name is letters, "
                                      + "digits, '_', '-' and '.', up to 64")
            }
            guard seen.insert(device.name).inserted else {
                throw DuckPromptError(.usage, "--device: two devices are named '\(device.name)'")
            }
        }
        if let defaultSink, !seen.contains(defaultSink) {
            throw DuckPromptError(.usage, "--default '\(defaultSink)' is not one of the lab's devices (\(emulated.map(\.name).joined(separator: ", ")))")
        }
        if case .sink(let name) = music, !seen.contains(name) {
            throw DuckPromptError(.usage, "--music '\(name)' is not one of the lab's devices (\(emulated.map(\.name).joined(separator: ", ")))")
        }
        return self
    }

    /// Parses `--device KIND[=NAME]`: a kind of `EmulatedDevice.kinds` (`bluetooth` is taken
    /// for `bluetooth-a2dp`), the name defaulting to `EmulatedDevice.defaultName(for:)`; nil
    /// for `none`.
    /// - Throws: `.usage` naming the kinds.
    package static func device(_ text: String) throws -> EmulatedDevice? {
        if text == "none" { return nil }
        let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        let word = parts[0].lowercased()
        guard let kind = word == "bluetooth" ? .bluetoothA2DP : DeviceKind(rawValue: word),
              EmulatedDevice.kinds.contains(kind) else {
            throw DuckPromptError(.usage, "--device '\(text)': the kind is one of "
                                  + EmulatedDevice.kinds.map(\.rawValue).joined(separator: ", ") + " (bluetooth: bluetooth-a2dp), or none")
        }
        let name = parts.count > 1 ? String(parts[1]) : EmulatedDevice.defaultName(for: kind)
        return EmulatedDevice(kind: kind, name: name)
    }

    /// A name `module-null-sink` takes as it is on both servers.
    static func isSinkName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64 && name.utf8.allSatisfy { byte in
            (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_")
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
        }
    }
}
