import Foundation

/// Emulated devices and players on a private server (null sinks with a real device's
/// properties, paplay streams), unloaded and stopped when the rig goes away.
package final class Rig {
    /// The music's frequency in Hz: three whole periods in each 10 ms window.
    package static let musicHz = 300

    package var modules: [String] = []
    /// A random tag in every name the rig makes, so that tests do not see each other's sinks.
    package let tag = String(UInt32.random(in: 0..<UInt32.max), radix: 36)
    package var players: [Background] = []

    package init() {}

    /// The private server checked for, a rig, and its built-in speaker as the default sink:
    /// where most tests play.
    /// - Throws: `TestFailure` without a private server or when pactl fails.
    package static func defaultSpeaker() throws -> (rig: Rig, speaker: String) {
        try TestServer.requireServer()
        let rig = Rig()
        let speaker = try rig.speaker()
        try Pactl.call("set-default-sink", speaker)
        return (rig, speaker)
    }

    /// A built-in speaker (an ALSA PCI internal sink); its name.
    package func speaker() throws -> String {
        try nullSink("speaker", [
            "device.description": "Built-in-Speaker", "device.api": "alsa", "device.bus": "pci",
            "device.form_factor": "internal", "device.class": "sound"])
    }

    /// A Bluetooth A2DP headset; its name.
    package func bluetooth() throws -> String {
        try nullSink("bt", [
            "device.description": "BT-Headset", "device.api": "bluez5", "device.bus": "bluetooth",
            "api.bluez5.profile": "a2dp-sink", "device.form_factor": "headset"])
    }

    /// A null sink with no device properties (a virtual sink); its name.
    package func bareNullSink() throws -> String { try nullSink("null", [:]) }

    /// A null sink of the rig's own (no device properties), made on the first call, whose volume
    /// an event watch sets back and forth to see how far the server's events have come
    /// (`VolumeEvents`); its name and index.
    /// - Throws: `TestFailure` when pactl fails.
    package func probeSink() throws -> (name: String, index: Int) {
        if let probe { return probe }
        let name = try nullSink("probe", [:])
        guard let index = try Pactl.sinkIndex(name) else { throw TestFailure("no sink \(name) after loading it") }
        probe = (name, index)
        return (name, index)
    }
    private var probe: (name: String, index: Int)?

    /// A null sink `dp_KIND_TAG` with `properties`, unloaded with the rig; its name.
    private func nullSink(_ kind: String, _ properties: [String: String]) throws -> String {
        let name = "dp_\(kind)_\(tag)"
        modules.append(try Pactl.loadNullSink(name: name, properties: properties))
        return name
    }

    /// Starts music (a 60 s sine, media.role music) on a sink at a volume ("70%", as pactl
    /// takes it); returns once the stream is there.
    /// - Throws: `TestFailure` when it does not start within 5 s.
    package func music(on sink: String, app: String, volume: String = "70%", hertz: Int = musicHz) throws {
        let file = try TestAudio.sine("music-\(hertz).wav", hertz: hertz, seconds: 60, gain: 0.3)
        let player = try Background(["paplay", "--latency-msec=100", "-d", sink, "--client-name=\(app)",
                                     "--property=application.name=\(app)", "--property=media.role=music", file])
        players.append(player)
        guard try eventually({ try Pactl.volume(ofApp: app) != nil }) else {
            throw TestFailure("music '\(app)' did not start")
        }
        guard let index = try Pactl.index(ofApp: app) else { throw TestFailure("music '\(app)' is gone") }
        try Pactl.call("set-sink-input-volume", "\(index)", volume)
    }

    /// Starts a player (paplay of a `seconds` sine at `hertz`, `channels`) on `sink` as `app`
    /// with `media.role` `role` (none when nil), and sets its raw volume (pa_volume_t) when
    /// given; returns once the stream is there at that volume.
    /// - Throws: `TestFailure` when it does not start or the volume does not take within 5 s.
    @discardableResult
    package func player(sink: String, app: String, role: String?, volume: Int?, channels: Int = 2,
                        hertz: Int = 300, seconds: Double = 60) throws -> Background {
        let file = try TestAudio.sine("tone-\(hertz)-\(channels)ch.wav", hertz: hertz, seconds: seconds,
                                      gain: 0.3, channels: channels)
        var args = ["paplay", "--latency-msec=100", "-d", sink, "--client-name=\(app)",
                    "--property=application.name=\(app)"]
        if let role { args.append("--property=media.role=\(role)") }
        let player = try Background(args + [file])
        players.append(player)
        guard try eventually({ try Pactl.volume(ofApp: app) != nil }) else { throw TestFailure("\(app) did not start") }
        if let volume {
            guard let index = try Pactl.index(ofApp: app) else { throw TestFailure("\(app) is gone") }
            try Pactl.call("set-sink-input-volume", "\(index)", "\(volume)")
            guard try eventually({ try Pactl.volume(ofApp: app)?.allSatisfy { $0 == volume } == true }) else {
                throw TestFailure("\(app): volume \(volume) did not take")
            }
        }
        return player
    }

    deinit {
        for p in players { p.stop() }
        for m in modules.reversed() { Pactl.unload(m) }
    }
}
