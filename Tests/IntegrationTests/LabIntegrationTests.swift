import DuckPromptTestSupport
import Foundation
import Testing

/// `duckprompt lab` run from the tests: its own private server (the one the step runs on:
/// `--server $DUCKPROMPT_LAB_SERVER`), its report read as a user's test would.
@Suite(.serialized)
struct LabIntegrationTests {
    /// A lab run: its exit, standard error and the report (`--report FILE`), parsed.
    struct LabRun {
        var result: ProcessResult
        var report: [String: Any]

        var summary: [String: Any] { report["summary"] as? [String: Any] ?? [:] }
        var prompts: [[String: Any]] { summary["prompts"] as? [[String: Any]] ?? [] }
        var others: [[String: Any]] { summary["others"] as? [[String: Any]] ?? [] }
        var sinks: [[String: Any]] { report["sinks"] as? [[String: Any]] ?? [] }
        func sink(_ name: String) -> [String: Any]? { sinks.first { $0["name"] as? String == name } }
        var processes: [String: Int32] {
            (report["processes"] as? [String: Any] ?? [:]).compactMapValues { ($0 as? NSNumber)?.int32Value }
        }
    }

    static func lab(_ options: [String], _ command: [String]) throws -> LabRun {
        try TestServer.requireServer()
        let report = TestAudio.directory.appendingPathComponent("lab-\(UUID().uuidString).json").path
        let result = try run([duckpromptBinary, "lab", "--server", TestServer.kind, "--report", report] + options + ["--"] + command,
                             check: false)
        let data = FileManager.default.contents(atPath: report) ?? Data()
        let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return LabRun(result: result, report: json)
    }

    /// Every process the lab started has ended.
    static func nothingLeft(_ lab: LabRun) -> [String] {
        lab.processes.compactMap { name, pid in
            let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
            let state = stat.split(separator: ")").last?.split(separator: " ").first
            return stat.isEmpty || state == "Z" ? nil : "\(name) (pid \(pid)) still runs"
        }
    }

    @Test("duckprompt play with music: the prompt heard on the Bluetooth headset, the music 20 ± 1 dB down meanwhile and back to its exact volume")
    func promptWithMusic() throws {
        let prompt = try TestAudio.sine("lab-prompt.wav", hertz: 880, seconds: 1.5)
        let lab = try Self.lab(["--music"], [duckpromptBinary, "play", prompt])
        #expect(lab.result.status == 0, "\(lab.result.stderr)")
        #expect(lab.prompts.count == 1, "\(lab.summary) \(lab.result.stderr)")
        let heard = try #require(lab.prompts.first)
        #expect(heard["sink"] as? String == "bt_headset" && heard["heard"] as? Bool == true, "\(heard)")
        let start = try #require(heard["start"] as? Double), end = try #require(heard["end"] as? Double)
        #expect(end - start > 1.3 && end - start < 1.8, "heard \(start) to \(end)")
        let music = try #require(lab.others.first, "\(lab.summary)")
        #expect(music["role"] as? String == "lab-music" && music["sink"] as? String == "speaker")
        let volume = try #require(music["volume_change_db"] as? Double), level = try #require(music["level_change_db"] as? Double)
        #expect(abs(volume + 20) <= 1 && abs(level + 20) <= 1, "\(music)")
        #expect(music["restored"] as? Bool == true, "\(music)")
        // Nowhere else: the speaker carried the music alone, the headset nothing before the prompt.
        let headset = try #require(lab.sink("bt_headset"))
        #expect((headset["heard"] as? [[String: Any]])?.count == 1, "\(headset["heard"] ?? "")")
        #expect(headset["classified_kind"] as? String == "bluetooth-a2dp" && headset["emulated_kind"] as? String == "bluetooth-a2dp")
        #expect(lab.sink("speaker")?["classified_kind"] as? String == "speaker")
        #expect(lab.result.stderr.contains("heard on bt_headset's monitor"), "\(lab.result.stderr)")
        #expect(lab.result.stderr.contains("restored to exactly the volume it had"), "\(lab.result.stderr)")
        #expect(Self.nothingLeft(lab).isEmpty, "\(Self.nothingLeft(lab))")
    }

    @Test("A podcast in mpv beside duckprompt play: the one prompt is duckprompt's; the podcast is another stream, paused all through it, its volume untouched")
    func podcastBesidePrompt() throws {
        let podcast = try SpokenWordIntegrationTests.track(genre: "Podcast", hertz: 440)
        let prompt = try TestAudio.sine("lab-prompt.wav", hertz: 880, seconds: 1.5)
        // mpv (with mpv-mpris) on the lab's bus; the prompt once its MPRIS name is there, it
        // says Playing and its stream is uncorked; after the prompt, until its stream is
        // uncorked again (resumed). Each looked at again at each sink-input event that
        // `pactl subscribe` shows (once it shows a client of ours come and go), at most 10 s
        // apart: exit 70 when one does not come (and play's status when it fails).
        let script = #"""
            fifo=$(mktemp -u) && mkfifo "$fifo" || exit 70
            pactl subscribe > "$fifo" & events=$!
            exec 3< "$fifo"
            rm "$fifo"
            for _ in $(seq 20); do pactl info > /dev/null; read -r -t 0.25 line <&3 && break; done
            [ -n "${line:-}" ] || { echo "pactl subscribe showed nothing" >&2; exit 70; }
            next_stream_event() {
                while read -r -t 10 line <&3; do
                    case $line in *"on sink-input #"*) return 0;; esac
                done
                return 1
            }
            uncorked() { LC_ALL=C pactl list sink-inputs | grep -q 'Corked: no'; }
            playing() {
                gdbus call --session -d org.mpris.MediaPlayer2.mpv -o /org/mpris/MediaPlayer2 \
                    -m org.freedesktop.DBus.Properties.Get org.mpris.MediaPlayer2.Player PlaybackStatus | grep -q Playing
            }
            mpv --no-video --ao=pulse --no-terminal --really-quiet --idle=no "$1" & player=$!
            trap 'kill $player $events 2> /dev/null' EXIT
            gdbus wait --session --timeout 10 org.mpris.MediaPlayer2.mpv || { echo "mpv: no MPRIS name" >&2; exit 70; }
            until playing && uncorked; do next_stream_event || { echo "mpv did not play" >&2; exit 70; }; done
            "$2" play "$3" || exit
            until uncorked; do next_stream_event || { echo "mpv was not resumed" >&2; exit 70; }; done
            """#
        let lab = try Self.lab([], ["bash", "-c", script, "bash", podcast, duckpromptBinary, prompt])
        #expect(lab.result.status == 0, "\(lab.result.stderr)")
        #expect(lab.prompts.count == 1, "\(lab.summary) \(lab.result.stderr)")
        let heard = try #require(lab.prompts.first)
        #expect(heard["heard"] as? Bool == true, "\(heard)")
        let player = try #require(lab.others.first, "\(lab.summary) \(lab.result.stderr)")
        #expect(lab.others.count == 1, "\(lab.others)")
        #expect(player["role"] as? String == "other" && player["paused"] as? Bool == true, "\(player)")
        #expect(player["volume_change_db"] as? Double == 0 && player["restored"] as? Bool == true, "\(player)")
        #expect(lab.result.stderr.contains("(stream #\(player["stream"] ?? ""), mpv) under prompt #\(heard["stream"] ?? ""): paused (its stream corked) all through the prompt"),
                "\(lab.result.stderr)")
        #expect(Self.nothingLeft(lab).isEmpty, "\(Self.nothingLeft(lab))")
    }

    @Test("paplay of a tone on a named sink: heard there and nowhere else; every emulated kind is classified as itself")
    func paplayOnNamedSink() throws {
        let tone = try TestAudio.sine("lab-tone.wav", hertz: 440, seconds: 0.5)
        let devices = ["speaker", "headphones", "bluetooth-hfp", "usb", "hdmi=tv", "line-out", "car"]
        let lab = try Self.lab(devices.flatMap { ["--device", $0] }, ["paplay", "-d", "tv", tone])
        #expect(lab.result.status == 0, "\(lab.result.stderr)")
        let prompt = try #require(lab.prompts.first, "\(lab.summary)")
        #expect(lab.prompts.count == 1 && prompt["sink"] as? String == "tv" && prompt["heard"] as? Bool == true, "\(prompt)")
        for sink in lab.sinks {
            let heard = sink["heard"] as? [[String: Any]] ?? []
            #expect(heard.count == (sink["name"] as? String == "tv" ? 1 : 0), "\(sink["name"] ?? "") \(heard)")
            #expect(sink["classified_kind"] as? String == sink["emulated_kind"] as? String, "\(sink["name"] ?? "")")
        }
        #expect(lab.sinks.count == devices.count, "\(lab.sinks.map { $0["name"] ?? "" })")
        #expect(lab.sink("speaker")?["is_default"] as? Bool == true)
    }

    @Test("The default sink changed back and forth, then paplay on the speaker: heard on the speaker alone (each recorder stays on its own monitor)")
    func recordersStayOnTheirSinks() throws {
        let tone = try TestAudio.sine("lab-tone.wav", hertz: 440, seconds: 0.5)
        let lab = try Self.lab([], ["bash", "-c", "pactl set-default-sink bt_headset && pactl set-default-sink speaker && paplay -d speaker \"$1\"",
                                    "bash", tone])
        #expect(lab.result.status == 0, "\(lab.result.stderr)")
        // (PulseAudio moved bt_headset's recorder to the speaker's monitor with the default:
        // the headset "heard" the tone too.)
        #expect((lab.sink("speaker")?["heard"] as? [[String: Any]])?.count == 1, "\(lab.sinks)")
        #expect((lab.sink("bt_headset")?["heard"] as? [[String: Any]])?.isEmpty == true, "\(lab.sink("bt_headset") ?? [:])")
    }

    @Test("gdbus Play ×3 on the lab's bus: the service is activated, its three fire-and-forget prompts (played on its one held stream) heard whole, one entry each, the duck handed over, then it leaves")
    func serviceOnTheLabBus() throws {
        let prompts = try (1...3).map { try TestAudio.sine("lab-service-\($0).wav", hertz: 660, seconds: 0.6) }
        let calls = prompts.map { prompt in
            "gdbus call --session --dest io.github.duckprompt.DuckPrompt1 --object-path /io/github/duckprompt/DuckPrompt1 "
                + "--method io.github.duckprompt.DuckPrompt1.Play \"['\(prompt)']\" '{}'"
        }
        let lab = try Self.lab(["--music"], ["sh", "-c", calls.joined(separator: " && ")])
        #expect(lab.result.status == 0 && lab.result.stdout.contains("(uint64 3,)"), "\(lab.result.stdout) \(lab.result.stderr)")
        // One entry a prompt, each heard whole on its own: the service plays them on one stream,
        // uncorked for each and renamed (media.name) after each one's file.
        #expect(lab.prompts.count == 3, "\(lab.summary) \(lab.result.stderr)")
        for (heard, prompt) in zip(lab.prompts, prompts) {
            #expect(heard["sink"] as? String == "bt_headset" && heard["heard"] as? Bool == true, "\(heard)")
            let start = try #require(heard["start"] as? Double), end = try #require(heard["end"] as? Double)
            #expect(end - start > 0.5 && end - start < 0.9, "heard \(start) to \(end): the lab waited for the service")
            #expect(heard["media_name"] as? String == URL(fileURLWithPath: prompt).lastPathComponent, "\(heard)")
        }
        // The music: 20 dB down under each, measured against before the first (the duck was
        // handed from prompt to prompt), restored after the last.
        #expect(lab.others.count == 3, "\(lab.summary)")
        for (i, music) in lab.others.enumerated() {
            #expect(abs((music["volume_change_db"] as? Double ?? 0) + 20) <= 1, "\(music)")
            #expect(abs((music["level_change_db"] as? Double ?? 0) + 20) <= 1 && music["restored"] as? Bool == true, "\(music)")
            #expect(music["baseline_entry"] as? Int == 0 && music["handed_over"] as? Bool == (i > 0), "\(music)")
        }
        // Checked by pid (nothingLeft), not by name: the other server's lab may run its own.
        #expect(lab.processes["service"] != nil, "the activated service in the report: \(lab.processes)")
        #expect(Self.nothingLeft(lab).isEmpty, "\(Self.nothingLeft(lab))")
    }

    @Test("COMMAND's exit status comes back; what it left running in the background is stopped (checked by pid)")
    func exitStatus() throws {
        let pidFile = TestAudio.directory.appendingPathComponent("lab-left-\(UUID().uuidString).pid").path
        let lab = try Self.lab([], ["sh", "-c", "test -n \"$PULSE_SERVER\" && pactl info >/dev/null "
                                     + "&& { sleep 1000 & echo $! > \(pidFile); exit 3; }"])
        #expect(lab.result.status == 3, "\(lab.result.stderr)")
        #expect(lab.report["exit_status"] as? Int == 3)
        let sleeper = try #require(Int32((try String(contentsOfFile: pidFile, encoding: .utf8)).trimmingCharacters(in: .whitespacesAndNewlines)))
        let state = (try? String(contentsOfFile: "/proc/\(sleeper)/stat", encoding: .utf8)) ?? ""
        #expect(state.isEmpty || state.contains(") Z"), "the command's background job \(sleeper) still runs: \(state)")
        #expect(lab.result.stderr.contains("lab: stopping what sh left running: pid \(sleeper)"), "\(lab.result.stderr)")
        #expect(Self.nothingLeft(lab).isEmpty, "\(Self.nothingLeft(lab))")
    }

    @Test("a hung COMMAND is stopped at --timeout: exit 124, and nothing the lab started runs on (checked by pid)")
    func timeout() throws {
        let pidFile = TestAudio.directory.appendingPathComponent("lab-hung-\(UUID().uuidString).pid").path
        let lab = try Self.lab(["--timeout", "2"], ["sh", "-c", "sleep 1000 & echo $! > \(pidFile); wait"])
        #expect(lab.result.status == 124, "\(lab.result.stderr)")
        #expect(lab.result.seconds < timeLimit(15), "took \(lab.result.seconds) s")
        #expect(lab.report["timed_out"] as? Bool == true)
        let sleeper = try #require(Int32((try String(contentsOfFile: pidFile, encoding: .utf8)).trimmingCharacters(in: .whitespacesAndNewlines)))
        let state = (try? String(contentsOfFile: "/proc/\(sleeper)/stat", encoding: .utf8)) ?? ""
        #expect(state.isEmpty || state.contains(") Z"), "the command's child \(sleeper) still runs: \(state)")
        #expect(lab.processes.count >= 3, "\(lab.processes)")
        #expect(Self.nothingLeft(lab).isEmpty, "\(Self.nothingLeft(lab))")
    }

    @Test("SIGTERM and SIGINT to the lab: COMMAND and everything else stopped (checked by pid), exit 128+N", arguments: [SIGTERM, SIGINT])
    func signalled(signal: Int32) throws {
        try TestServer.requireServer()
        let report = TestAudio.directory.appendingPathComponent("lab-signal-\(UUID().uuidString).json").path
        let lab = try Background([duckpromptBinary, "lab", "--server", TestServer.kind, "--report", report, "--",
                                  "sleep", "1000"], captureStderr: true)
        #expect(lab.waitForOutput(containing: "lab: running sleep", timeout: timeLimit(15)),
                "\(String(decoding: lab.bytes, as: UTF8.self))")
        kill(lab.process.processIdentifier, signal)
        let status = lab.wait(timeout: timeLimit(10))
        #expect(status == 128 + signal, "\(String(decoding: lab.bytes, as: UTF8.self))")
        let json = (try? JSONSerialization.jsonObject(with: FileManager.default.contents(atPath: report) ?? Data())) as? [String: Any] ?? [:]
        let run = LabRun(result: ProcessResult(status: status ?? -1, stdout: "", stderr: "", seconds: 0), report: json)
        #expect(run.processes["command"] != nil && run.processes.count >= 3, "\(json.keys)")
        #expect(Self.nothingLeft(run).isEmpty, "\(Self.nothingLeft(run))")
    }
}
