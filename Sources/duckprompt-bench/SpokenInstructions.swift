import DuckPrompt
import DuckPromptProbe
import Foundation

/// Figure 10: a navigation app's spoken instruction → its first sample heard on the monitor,
/// through duckprompt and through the app's own default audio output, in the same rounds:
/// Navit's `cmdline` speech (the command Navit runs for each instruction, as it runs it: one
/// argv, no shell) and speech-dispatcher (`spd-say`, as Navit's speech_dispatcher backend, Pure
/// Maps or a screen reader reach it) with the duckprompt module or with its own espeak-ng
/// module. Every path speaks the same text with libespeak-ng on `speaker`.
extension ServerBench {
    static let instruction = "In 200 metres, turn left"
    static let navitDuckprompt = "Navit cmdline: duckprompt say"
    static let navitEspeak = "Navit cmdline: espeak-ng"
    static let speechdDuckprompt = "spd-say: duckprompt module"
    static let speechdEspeak = "spd-say: espeak-ng module"
    static let spokenAnchor = "paplay of the same speech"

    func spokenInstructions() throws {
        // Every path plays where the recorder listens: duckprompt by -d, espeak-ng and
        // speech-dispatcher's own module through libpulse's PULSE_SINK (set for them alone:
        // the daemons and the commands started here inherit it).
        setenv("PULSE_SINK", sink, 1)
        defer { unsetenv("PULSE_SINK") }
        let wav = directory + "/instruction.wav"
        guard (try Child.run(["espeak-ng", "-w", wav, Self.instruction])).status == 0 else {
            throw BenchError("espeak-ng -w could not write the instruction's speech")
        }
        let own = try SpeechDispatcher(in: directory + "/speechd-espeak-ng", module: .espeakNG)
        defer { own.stop() }
        let ours = try SpeechDispatcher(in: directory + "/speechd-duckprompt", module: .duckprompt(duckprompt))
        defer { ours.stop() }
        let tools = [
            Tool(name: Self.navitDuckprompt, command: [duckprompt, "say", "--priority", "message", "--exit-with-parent",
                                                       "-d", sink, Self.instruction]),
            Tool(name: Self.navitEspeak, command: ["espeak-ng", Self.instruction]),
            Tool(name: Self.speechdDuckprompt, command: ours.say(Self.instruction)),
            Tool(name: Self.speechdEspeak, command: own.say(Self.instruction)),
            Tool(name: Self.spokenAnchor, command: ["paplay", "-d", sink, wav]),
        ]
        let recorder = try startRecorder()
        defer { recorder.stopRecording() }
        // Each path's first run loads what it loads (espeak-ng's data, a module's first
        // connection): not counted, as the other figures' warm-up.
        for tool in tools { _ = try? Child.run(tool.command) }
        // With music, duckprompt's paths duck it first (the 200 ms attack before the first
        // sample, as a listener needs); espeak-ng's paths speak over it.
        for scenario in [Self.idle, Self.music] {
            let music = scenario == Self.music ? try startMusic() : nil
            var start: Rounds = [:]
            try eachRun(of: tools, recorder: recorder) { tool, run in
                var s = Double.nan
                if run.status != 0 {
                    note("\(tool.name) exited \(run.status) (\(scenario)): \(run.stderr)")
                } else if let heard = recorder.heardPrompt(started: run.started, ended: run.exited) {
                    s = (Double(heard.first) - Double(run.started)) / 1e6
                } else {
                    note("\(tool.name): no speech found on \(sink).monitor in one run (\(scenario))")
                }
                start[tool.name, default: []].append(s)
                log("spoken \(scenario) \(tool.name): first sample \(format(s, "ms")) ms")
            }
            add(10, scenario, "ms", start, anchor: Self.spokenAnchor)
            music?.stopTones()
            pause(ms: 300)
        }
    }
}

/// A speech-dispatcher of the bench's own (`speech-dispatcher -s`, as a user runs it without
/// systemd) on a socket in `directory`, with one output module: its espeak-ng module (audio
/// through its own PulseAudio output) or duckprompt's (`duckprompt speechd-module`, behind an
/// `sd_duckprompt` in a module directory of its own).
final class SpeechDispatcher {
    enum Module {
        case espeakNG
        case duckprompt(String)
    }

    let socket: String
    private let daemon: Child

    init(in directory: String, module: Module) throws {
        let conf = directory + "/conf", modules = directory + "/modules", logs = directory + "/log"
        for dir in [conf + "/modules", modules, logs] {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        }
        socket = directory + "/speechd.sock"
        var lines = ["AudioOutputMethod \"pulse\"", "LogLevel 3"]
        switch module {
        case .espeakNG:
            lines += ["AddModule \"espeak-ng\" \"sd_espeak-ng\" \"espeak-ng.conf\"", "DefaultModule espeak-ng"]
            try FileManager.default.copyItem(atPath: "/etc/speech-dispatcher/modules/espeak-ng.conf",
                                             toPath: conf + "/modules/espeak-ng.conf")
            for name in ["sd_espeak-ng"] {
                try FileManager.default.createSymbolicLink(atPath: modules + "/" + name,
                                                           withDestinationPath: "/usr/lib/speech-dispatcher-modules/" + name)
            }
        case .duckprompt(let binary):
            lines += ["AddModule \"duckprompt\" \"sd_duckprompt\" \"duckprompt.conf\"", "DefaultModule duckprompt"]
            try "".write(toFile: conf + "/modules/duckprompt.conf", atomically: true, encoding: .utf8)
            let wrapper = modules + "/sd_duckprompt"
            try "#!/bin/sh\nexec '\(binary)' speechd-module \"$@\"\n".write(toFile: wrapper, atomically: true, encoding: .utf8)
            chmod(wrapper, 0o755)
        }
        try (lines.joined(separator: "\n") + "\n").write(toFile: conf + "/speechd.conf", atomically: true, encoding: .utf8)
        // A pid file of its own: with the default one, a second daemon finds the first running
        // and exits.
        daemon = try Child(["speech-dispatcher", "-s", "-t", "0", "-C", conf, "-m", modules, "-L", logs,
                            "-P", directory + "/speechd.pid", "-c", "unix_socket", "-S", socket])
        // Ready once its socket takes a connection (it creates it after loading the module).
        let deadline = monotonicNanoseconds() + 10_000_000_000
        while !Self.accepts(socket) {
            guard monotonicNanoseconds() < deadline else {
                throw BenchError("speech-dispatcher did not open \(socket) (its log: \(logs))")
            }
            pause(ms: 20)
        }
    }

    /// `spd-say -w TEXT` against this daemon: returns once the message was spoken (END).
    func say(_ text: String) -> [String] {
        ["env", "SPEECHD_ADDRESS=unix_socket:\(socket)", "spd-say", "-w", text]
    }

    func stop() {
        kill(daemon.pid, SIGTERM)
        _ = daemon.wait()
    }

    /// Whether a Unix socket at `path` accepts a connection now.
    static func accepts(_ path: String) -> Bool {
        let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8.prefix(107)) + [0]
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        } == 0
    }
}
