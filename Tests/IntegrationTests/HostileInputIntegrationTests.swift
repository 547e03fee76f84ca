import DuckPromptTestSupport
import Foundation
import Testing

/// Hostile and odd input on a real server (issue 13): forged journals that name a playing
/// stream, oversized or odd files, and a journal directory full of links. Each run must give
/// its documented exit code and leave every volume, live and saved, as it was.
@Suite(.serialized)
struct HostileInputIntegrationTests {

    /// The journal directory duckprompt uses on this server.
    static var journalDir: String {
        (ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"] ?? "/nonexistent") + "/duckprompt"
    }

    /// A pid no process has: a child's, once it has exited.
    static func deadPid() throws -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/true")
        try p.run()
        p.waitUntilExit()
        return p.processIdentifier
    }

    /// A journal of a dead duckprompt on this server, as `JournalStore` writes one, naming
    /// one stream: what a forger writes by hand.
    static func forge(pid: Int32, index: Int, role: String, app: String, original: [Int], depth: String = "-200") -> String {
        let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"] ?? ""
        return """
            {"version": 1, "pid": \(pid), "processStart": 1, "runtimeDir": "\(runtime)", "serverName": "forged",
             "depth": \(depth), "updated": 0, "ended": [],
             "streams": [{"index": \(index), "original": {"values": \(original)},
                          "key": {"mediaRole": "\(role)", "applicationName": "\(app)"}}]}
            """
    }

    /// Music of a new app on a new default speaker at volume 50000; its app name and volume.
    static func music(_ rig: Rig, name: String, role: String = "music") throws -> (speaker: String, app: String, player: Background, volume: [Int]) {
        try TestServer.requireServer()
        let speaker = try rig.speaker()
        try Pactl.call("set-default-sink", speaker)
        let app = "\(name)-\(rig.tag)"
        let player = try rig.player(sink: speaker, app: app, role: role, volume: 50000)
        return (speaker, app, player, try #require(try Pactl.volume(ofApp: app)))
    }

    @Test("Forged journals naming a playing stream (1000 %, 1000 channels, mute, a gone stream at 1000 %): restore exits 65 naming each file, and no volume, live or saved, changes")
    func forgedJournals() throws {
        let rig = Rig()
        let role = "music\(rig.tag)"
        let (speaker, app, player, original) = try Self.music(rig, name: "forged", role: role)
        let index = try #require(try Pactl.index(ofApp: app))

        // On main before this change, `restore` set the first to 655360 on the live stream and
        // the last two into the role's saved volume (the next stream of the role started at
        // 1000 % or muted).
        let pids = try (0..<4).map { _ in try Self.deadPid() }
        let forgeries: [(name: String, json: String, reason: String)] = [
            ("1000 %", Self.forge(pid: pids[0], index: index, role: role, app: app, original: [655_360, 655_360]),
             "refused: stream #\(index): volume 655360 (1000 %) is above 99957 (153 %, +11 dB), the most a journal restores"),
            ("1000 channels", Self.forge(pid: pids[1], index: index, role: role, app: app,
                                         original: Array(repeating: 30000, count: 1000)),
             "refused: stream #\(index): 1000 channels (a stream has 1 to 32)"),
            ("mute a gone stream's role", Self.forge(pid: pids[2], index: 999_999, role: role, app: app, original: [0, 0], depth: "\"-inf\""),
             "refused: stream #999999: every channel's volume is 0: restoring it would mute the stream"),
            ("1000 % to a gone stream's role", Self.forge(pid: pids[3], index: 999_998, role: role, app: app, original: [655_360, 655_360]),
             "refused: stream #999998: volume 655360 (1000 %) is above 99957 (153 %, +11 dB), the most a journal restores"),
        ]
        var paths: [String] = []
        defer { for path in paths { try? FileManager.default.removeItem(atPath: path) } }
        for (forgery, pid) in zip(forgeries, pids) {
            let path = "\(Self.journalDir)/journal-\(pid).json"
            try FileManager.default.createDirectory(atPath: Self.journalDir, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
            try Data(forgery.json.utf8).write(to: URL(fileURLWithPath: path))
            paths.append(path)
        }

        let restore = try run([duckpromptBinary, "restore"], check: false)
        #expect(restore.status == 65, "\(restore.stderr)")
        #expect(restore.stdout.isEmpty, "\(restore.stdout)")
        let lines = restore.stderr.split(separator: "\n").map(String.init)
        for (forgery, path) in zip(forgeries, paths) {
            #expect(lines.contains("duckprompt: journal \(path): \(forgery.reason); removed"),
                    "\(forgery.name): \(restore.stderr)")
            #expect(!FileManager.default.fileExists(atPath: path), "\(forgery.name): the forged journal is still there")
        }
        #expect(lines.count == forgeries.count, "\(restore.stderr)")
        #expect(try Pactl.volume(ofApp: app) == original, "the live stream's volume changed")

        // The saved volume too: the next stream of the app and role starts where it was.
        player.stop()
        #expect(try eventually { try Pactl.volume(ofApp: app) == nil })
        try rig.player(sink: speaker, app: app, role: role, volume: nil)
        #expect(try Pactl.volume(ofApp: app) == original, "the role's saved volume changed")
    }

    @Test("A 50 MB config: play exits 78 naming it; devices --from /dev/zero exits 66; with music playing, its volume unchanged")
    func oddFiles() throws {
        let rig = Rig()
        let (_, app, _, original) = try Self.music(rig, name: "oddfiles")

        let home = FileManager.default.temporaryDirectory.appendingPathComponent("duckprompt-config-\(rig.tag)")
        defer { try? FileManager.default.removeItem(at: home) }
        let file = home.appendingPathComponent("duckprompt/config.json").path
        try FileManager.default.createDirectory(atPath: home.appendingPathComponent("duckprompt").path,
                                                withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: file, contents: nil)
        #expect(truncate(file, 50_000_000) == 0)
        let play = try run([duckpromptBinary, "play", try DuckIntegrationTests.prompt(seconds: 0.3)],
                           environment: ["XDG_CONFIG_HOME": home.path], check: false)
        #expect(play.status == 78, "\(play.stderr)")
        #expect(play.stderr == "duckprompt: \(file): is larger than 1 MiB: a config file is a few lines of JSON\n")
        #expect(play.seconds < timeLimit(2), "took \(play.seconds) s")
        #expect(try Pactl.volume(ofApp: app) == original)

        let zero = try run([duckpromptBinary, "devices", "--from", "/dev/zero"], check: false)
        #expect(zero.status == 66)
        #expect(zero.stderr == "duckprompt: /dev/zero: is not a regular file (a character device)\n")
        #expect(try Pactl.volume(ofApp: app) == original)
    }

    @Test("600 symbolic links in the journal directory: a prompt plays (exit 0) with one warning line, and the music comes back exact")
    func manyLinks() throws {
        let rig = Rig()
        let (_, app, _, original) = try Self.music(rig, name: "links")

        try FileManager.default.createDirectory(atPath: Self.journalDir, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let links = (1...600).map { "\(Self.journalDir)/journal-\(4_000_000 + $0).json" }
        defer { for link in links { try? FileManager.default.removeItem(atPath: link) } }
        for link in links { try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "/nonexistent") }

        let play = try run([duckpromptBinary, "play", try DuckIntegrationTests.prompt(seconds: 0.3)], check: false)
        #expect(play.status == 0, "\(play.stderr)")
        #expect(play.stderr == "duckprompt: journal \(Self.journalDir): 600 files (journal-4000001.json … journal-4000600.json): "
                + "is a symbolic link; not followed; all left in place\n")
        #expect(try Pactl.volume(ofApp: app) == original)
    }
}
