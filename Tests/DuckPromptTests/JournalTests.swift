import Foundation
import Testing
@testable import DuckPrompt
@testable import DuckPromptCore

// The crash-safety file layer: the duck journal (JSON, which streams are still at our level),
// its directory (atomic writes, modes, symbolic links, dead owners) and the runtime lock.
// Each test works in a runtime directory of its own under /tmp; none touches the real one.

/// A private `XDG_RUNTIME_DIR` (mode 0700), removed when the value goes away.
final class TempRuntime {
    let path: String

    init() throws {
        var template = Array("/tmp/duckprompt-test.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw POSIXError(.EIO) }
        path = String(cString: made)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    var journalDir: String { path + "/duckprompt" }

    /// The names in the journal directory, sorted.
    func files() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: journalDir)) ?? []).sorted()
    }
}

private func mode(_ path: String) throws -> mode_t {
    var st = stat()
    guard lstat(path, &st) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    return st.st_mode
}

private func makeFile(_ path: String, _ contents: Data) throws {
    guard FileManager.default.createFile(atPath: path, contents: contents) else { throw POSIXError(.EIO) }
}

private func names(_ dir: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
}

private func sampleJournal(pid: Int32, start: UInt64 = 4242, depth: Double = -20) -> DuckJournal {
    DuckJournal(pid: pid, processStart: start, server: "unix:/run/user/0/pulse/native",
                runtimeDir: "/run/user/0", serverName: "PulseAudio (on PipeWire 0.3.65)", depth: depth,
                streams: [.init(index: 12, original: ChannelVolumes([65536, 52000]),
                                key: RestoreKey(mediaRole: "music", applicationName: "mpv")),
                          .init(index: 40, original: ChannelVolumes([30000]),
                                key: RestoreKey(applicationName: "game", streamRestoreID: "sink-input-by-application-name:game"))],
                ended: [.init(key: RestoreKey(mediaRole: "video"), original: ChannelVolumes([65536, 65536]))],
                updated: Date(timeIntervalSince1970: 1_750_000_000.25))
}

/// Runs `/bin/true` and returns its pid once it has exited and been reaped: a dead pid.
func deadPid() throws -> Int32 {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/bin/true")
    try p.run()
    p.waitUntilExit()
    return p.processIdentifier
}

/// A child that takes `flock` on `file` (through an inherited descriptor, so the lock is the
/// child's own) and then sleeps; returns once the lock is held.
private func lockingChild(_ file: String, seconds: Int) throws -> Process {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/bin/sh")
    p.arguments = ["-c", "exec 9>>\"$1\" && /usr/bin/flock 9 && echo held && exec sleep \(seconds)", "sh", file]
    let out = Pipe()
    p.standardOutput = out
    try p.run()
    let line = String(decoding: out.fileHandleForReading.availableData, as: UTF8.self)
    guard line.hasPrefix("held") else {
        kill(p.processIdentifier, SIGKILL)
        throw DuckPromptError(.internal, "the flock child did not take the lock: '\(line)'")
    }
    return p
}

private func seconds(_ d: Duration) -> Double {
    Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
}

// MARK: - Journal (pure)

@Suite("DuckJournal")
struct DuckJournalTests {
    @Test("round-trips through JSON, -infinity depth included", arguments: [-20, -.infinity, -0.5] as [Double])
    func roundTrip(depth: Double) throws {
        let journal = sampleJournal(pid: 1234, depth: depth)
        let data = try journal.encoded()
        let back = try DuckJournal.decoded(from: data)
        #expect(back == journal)
        #expect(back.depth == depth)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        if depth == -.infinity {
            #expect(object["depth"] as? String == "-inf")
        } else {
            #expect((object["depth"] as? NSNumber)?.doubleValue == depth)
        }
        #expect(String(decoding: data, as: UTF8.self).contains("\"server\" : \"unix:/run/user/0/pulse/native\""))
    }

    @Test("a plain JSONEncoder/JSONDecoder works too, with the current date")
    func plainCoders() throws {
        var journal = sampleJournal(pid: 7, depth: -.infinity)
        journal.updated = Date()
        let back = try JSONDecoder().decode(DuckJournal.self, from: JSONEncoder().encode(journal))
        #expect(back.depth == -.infinity)
        #expect(abs(back.updated.timeIntervalSince(journal.updated)) < 1e-5)
        #expect(back.streams == journal.streams && back.ended == journal.ended)
    }

    @Test("rejects other versions and garbled JSON")
    func rejects() throws {
        var newer = sampleJournal(pid: 1)
        newer.version = 2
        #expect(throws: DuckPromptError(.unsupportedData, "journal version 2, this duckprompt reads version 1")) {
            try DuckJournal.decoded(from: newer.encoded())
        }
        for bad in ["", "{", "[]", "{\"version\":1}", "{\"version\":1,\"pid\":1,\"processStart\":1,\"depth\":\"-20dB\",\"streams\":[],\"updated\":0}"] {
            #expect(throws: DuckPromptError.self) { try DuckJournal.decoded(from: Data(bad.utf8)) }
        }
    }

    @Test("record copies a plan's entries, ended streams and depth")
    func recordPlan() {
        let music = SinkInput(index: 3, sinkIndex: 0, volume: ChannelVolumes([65536, 65536]),
                              properties: ["media.role": "music", "application.name": "mpv"])
        let game = SinkInput(index: 5, sinkIndex: 0, volume: ChannelVolumes([40000]),
                             properties: ["application.name": "game"])
        var plan = DuckPlan(inputs: [music, game], depth: -20, math: .libpulse)
        _ = plan.apply(gain: -10)
        _ = plan.ended(index: 5)
        var journal = DuckJournal(pid: 1, processStart: 1, depth: 0)
        journal.record(plan, at: Date(timeIntervalSince1970: 5))
        #expect(journal.depth == -20)
        #expect(journal.streams == [.init(index: 3, original: ChannelVolumes([65536, 65536]), key: RestoreKey(music))])
        #expect(journal.ended == [.init(key: RestoreKey(game), original: ChannelVolumes([40000]))])
        #expect(journal.updated == Date(timeIntervalSince1970: 5))
    }

    @Test("process start time: field 22 of /proc/PID/stat")
    func processStart() throws {
        let line = "4242 (a) b (c)) S 1 4242 4242 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 987654 10000 200"
        #expect(ProcessLiveness.parseStart(stat: line) == 987654)
        #expect(ProcessLiveness.parseStart(stat: "1 (x) S 1 2") == nil)
        #expect(ProcessLiveness.parseState(stat: line) == "S")
        #expect(ProcessLiveness.parseState(stat: "7 (z) Z 1") == "Z")
        let own = try #require(ProcessLiveness.start(of: getpid()))
        #expect(own > 0)
        #expect(ProcessLiveness.start(of: try deadPid()) == nil)
        #expect(DuckJournal(pid: getpid(), processStart: own, depth: -20).ownerIsAlive)
        #expect(!DuckJournal(pid: getpid(), processStart: own + 1, depth: -20).ownerIsAlive)
    }

    @Test("an owner that is a zombie is dead (its lock is already free)")
    func zombieOwner() throws {
        // `sleep 0` exits, and its parent (the shell, now `sleep 2`) never reaps it.
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", "sleep 0 & echo $!; exec sleep 2"]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        defer { kill(p.processIdentifier, SIGKILL); p.waitUntilExit() }
        let line = String(decoding: out.fileHandleForReading.availableData, as: UTF8.self)
        let zombie = try #require(Int32(line.trimmingCharacters(in: .whitespacesAndNewlines)))
        var start: UInt64?
        for _ in 0..<200 {
            let stat = try String(contentsOfFile: "/proc/\(zombie)/stat", encoding: .utf8)
            if ProcessLiveness.parseState(stat: stat) == "Z" { start = ProcessLiveness.parseStart(stat: stat); break }
            usleep(5000)
        }
        let owner = DuckJournal(pid: zombie, processStart: try #require(start), depth: -20)
        #expect(!owner.ownerIsAlive)
    }

    // MARK: isDuckedByUs

    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var current: [UInt32]
        var original: [UInt32]
        var depth: Double
        var ducked: Bool
        var testDescription: String { name }
    }

    static func at(_ original: [UInt32], _ dB: Double) -> [UInt32] {
        VolumeMath.scale(ChannelVolumes(original), by: dB).values
    }

    static let n: UInt32 = 65536
    static let cases: [Case] = [
        Case(name: "stereo at the depth", current: at([n, n], -20), original: [n, n], depth: -20, ducked: true),
        Case(name: "mid-attack", current: at([n, n], -7.3), original: [n, n], depth: -20, ducked: true),
        Case(name: "first ramp step", current: at([n, n], -1), original: [n, n], depth: -20, ducked: true),
        Case(name: "just inside depth - 0.5", current: at([n, n], -20.4), original: [n, n], depth: -20, ducked: true),
        Case(name: "below depth - 0.5 (user lowered it)", current: at([n, n], -21), original: [n, n], depth: -20, ducked: false),
        Case(name: "user halved the ducked level", current: at([n, n], -26), original: [n, n], depth: -20, ducked: false),
        Case(name: "equal to the original", current: [n, 52000], original: [n, 52000], depth: -20, ducked: false),
        Case(name: "raised", current: at([n, n], 3), original: [n, n], depth: -20, ducked: false),
        Case(name: "gain of -0.02 dB is not ours", current: at([n, n], -0.02), original: [n, n], depth: -20, ducked: false),
        Case(name: "channels disagree (-20 / -10)", current: [at([n], -20)[0], at([n], -10)[0]], original: [n, n], depth: -20, ducked: false),
        Case(name: "channels 0.3 dB apart", current: [at([n], -20)[0], at([n], -20.3)[0]], original: [n, n], depth: -20, ducked: false),
        Case(name: "one channel off by one step", current: [at([n], -20)[0] + 1, at([n], -20)[0]], original: [n, n], depth: -20, ducked: true),
        Case(name: "unequal originals, one gain", current: at([n, 30000], -20), original: [n, 30000], depth: -20, ducked: true),
        Case(name: "unequal originals, balance changed", current: at([30000, n], -20), original: [n, 30000], depth: -20, ducked: false),
        Case(name: "small originals round", current: at([300, 200], -20).map { $0 + 1 }, original: [300, 200], depth: -20, ducked: true),
        Case(name: "5.1 at -12", current: at([n, n, 50000, 40000, n, n], -12), original: [n, n, 50000, 40000, n, n], depth: -12, ducked: true),
        Case(name: "mute: all channels 0", current: [0, 0], original: [n, 40000], depth: -.infinity, ducked: true),
        Case(name: "mute: mid-attack", current: at([n, 40000], -30), original: [n, 40000], depth: -.infinity, ducked: true),
        Case(name: "mute: one channel 0, one audible", current: [0, 20000], original: [n, n], depth: -.infinity, ducked: false),
        Case(name: "mute: untouched", current: [n, n], original: [n, n], depth: -.infinity, ducked: false),
        Case(name: "finite depth: all channels 0 is the user's mute", current: [0, 0], original: [n, n], depth: -20, ducked: false),
        Case(name: "muted original channel stays 0", current: [at([n], -20)[0], 0], original: [n, 0], depth: -20, ducked: true),
        Case(name: "muted original channel made audible", current: [at([n], -20)[0], 100], original: [n, 0], depth: -20, ducked: false),
        Case(name: "all-muted original", current: [0, 0], original: [0, 0], depth: -20, ducked: false),
        Case(name: "channel count changed", current: at([n], -20), original: [n, n], depth: -20, ducked: false),
        Case(name: "no channels", current: [], original: [], depth: -20, ducked: false),
        Case(name: "depth 0 ducks nothing", current: at([n, n], -20), original: [n, n], depth: 0, ducked: false),
        Case(name: "depth NaN ducks nothing", current: at([n, n], -20), original: [n, n], depth: .nan, ducked: false),
    ]

    @Test("isDuckedByUs", arguments: cases)
    func duckedByUs(_ c: Case) {
        #expect(DuckJournal.isDuckedByUs(current: ChannelVolumes(c.current), original: ChannelVolumes(c.original),
                                         depth: c.depth, math: .libpulse) == c.ducked)
    }

    @Test("restoreActions: ducked streams restored, user changes and reused indices left, gone streams repaired")
    func restoreActions() {
        let n = Self.n
        let music = RestoreKey(mediaRole: "music", applicationName: "mpv")
        let podcast = RestoreKey(applicationName: "podcast")
        let game = RestoreKey(applicationName: "game")
        let gone = RestoreKey(applicationName: "radio")
        let video = RestoreKey(mediaRole: "video")
        let journal = DuckJournal(pid: 1, processStart: 1, depth: -20, streams: [
            .init(index: 1, original: ChannelVolumes([n, n]), key: music),       // still ducked
            .init(index: 2, original: ChannelVolumes([n, n]), key: podcast),     // user changed it
            .init(index: 3, original: ChannelVolumes([n]), key: game),           // index reused
            .init(index: 4, original: ChannelVolumes([50000]), key: gone),       // ended after the crash
        ], ended: [
            .init(key: video, original: ChannelVolumes([n, n])),
            .init(key: RestoreKey(mediaRole: "music", applicationName: "other"), original: ChannelVolumes([n, n])),
        ])
        func input(_ index: UInt32, _ key: RestoreKey, _ volume: [UInt32]) -> SinkInput {
            var p: [String: String] = [:]
            p["media.role"] = key.mediaRole
            p["application.name"] = key.applicationName
            return SinkInput(index: index, sinkIndex: 0, volume: ChannelVolumes(volume), properties: p)
        }
        let live = [input(1, music, Self.at([n, n], -20)), input(2, podcast, [n / 3, n / 2]),
                    input(3, RestoreKey(applicationName: "new"), Self.at([n], -20))]
        #expect(journal.restoreActions(live: live, math: .libpulse) == [
            .setVolume(index: 1, volume: ChannelVolumes([n, n])),
            // The ended music stream shares its saved volume with the restored index 1: skipped.
            .repairSaved(key: video, volume: ChannelVolumes([n, n])),
            .repairSaved(key: game, volume: ChannelVolumes([n])),
            .repairSaved(key: gone, volume: ChannelVolumes([50000])),
        ])
    }
}

// MARK: - Journal directory

@Suite("JournalStore")
struct JournalStoreTests {
    @Test("creates $XDG_RUNTIME_DIR/duckprompt mode 0700; /tmp/duckprompt-<uid> without one")
    func createsDirectory() throws {
        let rt = try TempRuntime()
        let store = try JournalStore(runtimeDir: rt.path + "/")
        #expect(store.directory == rt.journalDir)
        let m = try mode(rt.journalDir)
        #expect(m & S_IFMT == S_IFDIR)
        #expect(m & 0o7777 == 0o700)
        #expect(RuntimeDirectory.path(runtimeDir: nil) == "/tmp/duckprompt-\(geteuid())")
        #expect(RuntimeDirectory.path(runtimeDir: "") == "/tmp/duckprompt-\(geteuid())")
        #expect(RuntimeDirectory.path(runtimeDir: "relative/dir") == "/tmp/duckprompt-\(geteuid())")
        // Opening it again accepts the existing directory.
        _ = try JournalStore(runtimeDir: rt.path)
    }

    @Test("write is atomic: mode 0600, no temporary file left, read back equal")
    func atomicWrite() throws {
        let rt = try TempRuntime()
        let store = try JournalStore(runtimeDir: rt.path, pid: 1234)
        var journal = sampleJournal(pid: 1234)
        try store.write(journal)
        journal.streams.removeLast()
        try store.write(journal)
        #expect(try names(rt.journalDir) == ["journal-1234.json"])
        #expect(try mode(store.path) & 0o7777 == 0o600)
        #expect(try mode(store.path) & S_IFMT == S_IFREG)
        #expect(try store.read() == journal)
        let onDisk = try DuckJournal.decoded(from: Data(contentsOf: URL(fileURLWithPath: store.path)))
        #expect(onDisk == journal)
        try store.remove()
        #expect(try names(rt.journalDir) == [])
        #expect(try store.read() == nil)
        try store.remove()    // nothing there: not an error
    }

    @Test("a symbolic link as the directory is refused, naming it")
    func symlinkDirectory() throws {
        let rt = try TempRuntime()
        let elsewhere = rt.path + "/elsewhere"
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o700])
        try FileManager.default.createSymbolicLink(atPath: rt.journalDir, withDestinationPath: elsewhere)
        #expect(throws: DuckPromptError(.internal, "refusing the journal directory \(rt.journalDir): it is a symbolic link")) {
            try JournalStore(runtimeDir: rt.path)
        }
        #expect(try names(elsewhere) == [])
    }

    @Test("a file as the directory is refused")
    func fileAsDirectory() throws {
        let rt = try TempRuntime()
        try makeFile(rt.journalDir, Data())
        #expect(throws: DuckPromptError(.internal, "refusing the journal directory \(rt.journalDir): it is not a directory")) {
            try JournalStore(runtimeDir: rt.path)
        }
    }

    @Test("a group- or other-writable directory is refused", arguments: [0o770, 0o702, 0o777] as [mode_t])
    func writableDirectory(mode m: mode_t) throws {
        let rt = try TempRuntime()
        #expect(mkdir(rt.journalDir, 0o700) == 0 && chmod(rt.journalDir, m) == 0)
        let error = #expect(throws: DuckPromptError.self) { try JournalStore(runtimeDir: rt.path) }
        #expect(error?.code == .internal)
        #expect(error?.message.contains("\(rt.journalDir): group or others may write to it") == true)
    }

    @Test("a directory of another uid is refused", .enabled(if: geteuid() == 0, "chown needs root"))
    func otherOwner() throws {
        let rt = try TempRuntime()
        #expect(mkdir(rt.journalDir, 0o700) == 0 && chown(rt.journalDir, 65534, 65534) == 0)
        #expect(throws: DuckPromptError(.internal, "refusing the journal directory \(rt.journalDir): it belongs to uid 65534, not \(geteuid())")) {
            try JournalStore(runtimeDir: rt.path)
        }
    }

    @Test("a symbolic link at the journal's name is replaced, not followed")
    func symlinkAtJournalName() throws {
        let rt = try TempRuntime()
        let store = try JournalStore(runtimeDir: rt.path, pid: 1234)
        let victim = rt.path + "/victim"
        try makeFile(victim, Data("keep".utf8))
        try FileManager.default.createSymbolicLink(atPath: store.path, withDestinationPath: victim)
        try store.write(sampleJournal(pid: 1234))
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "keep")
        #expect(try mode(store.path) & S_IFMT == S_IFREG)
        #expect(try store.read() == sampleJournal(pid: 1234))
    }

    @Test("orphans: a dead owner's journal is found, a live owner's and our own are not")
    func orphans() throws {
        let rt = try TempRuntime()
        let dead = try deadPid()
        try JournalStore(runtimeDir: rt.path, pid: dead).write(sampleJournal(pid: dead, start: 99))

        // A live owner: a sleeping child, with its real start time.
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/sleep")
        child.arguments = ["60"]   // killed below; alive through the test, however slow
        try child.run()
        defer { kill(child.processIdentifier, SIGKILL); child.waitUntilExit() }
        let live = child.processIdentifier
        let liveStart = try #require(ProcessLiveness.start(of: live))
        try JournalStore(runtimeDir: rt.path, pid: live).write(sampleJournal(pid: live, start: liveStart))

        // A reused pid: our parent lives, but started at another time than the journal says.
        let parent = getppid()
        let parentStart = try #require(ProcessLiveness.start(of: parent))
        try JournalStore(runtimeDir: rt.path, pid: parent).write(sampleJournal(pid: parent, start: parentStart + 1))

        // Our own journal is skipped, whatever its start time.
        let store = try JournalStore(runtimeDir: rt.path)
        try store.write(sampleJournal(pid: getpid(), start: 1))

        var problems: [JournalProblem] = []
        let found = try store.orphans { problems.append($0) }
        #expect(Set(found.map(\.path)) == [rt.journalDir + "/journal-\(dead).json",
                                          rt.journalDir + "/journal-\(parent).json"])
        #expect(found.first { $0.journal.pid == dead }?.journal == sampleJournal(pid: dead, start: 99))
        #expect(problems == [])

        // Once restored, the caller removes them.
        for orphan in found { try store.remove(path: orphan.path) }
        #expect(try store.orphans().isEmpty)
        // Sorted as names() sorts them: as strings ("journal-100012" before "journal-99999").
        let left = try names(rt.journalDir)
        #expect(left == ["journal-\(getpid()).json", "journal-\(live).json"].sorted(), "left: \(left)")
        #expect(throws: DuckPromptError.self) { try store.remove(path: "/tmp/journal-1.json") }
    }

    @Test("orphans: garbled journals of dead pids are removed and reported; others are kept")
    func garbled() throws {
        let rt = try TempRuntime()
        let store = try JournalStore(runtimeDir: rt.path)
        let dir = rt.journalDir
        let dead = try deadPid()
        let dead2 = try deadPid()
        try makeFile("\(dir)/journal-\(dead).json", Data("{\"version\": 1, \"pi".utf8))
        // A garbled file whose pid lives (the name's pid is our parent): kept.
        try makeFile("\(dir)/journal-\(getppid()).json", Data("garbage".utf8))
        // A newer format of a dead owner: kept for the duckprompt that wrote it.
        var newer = sampleJournal(pid: dead2)
        newer.version = 2
        try makeFile("\(dir)/journal-\(dead2).json", try newer.encoded())
        // A temporary file of a dead writer: removed silently. Other names are ignored.
        try makeFile("\(dir)/.journal-\(dead).json.1f2e.tmp", Data("{".utf8))
        try makeFile("\(dir)/notes.txt", Data())

        var problems: [JournalProblem] = []
        #expect(try store.orphans { problems.append($0) }.isEmpty)
        #expect(problems.count == 3)
        let byPath = Dictionary(problems.map { ($0.path, $0) }, uniquingKeysWith: { a, _ in a })
        #expect(byPath["\(dir)/journal-\(dead).json"]?.removed == true)
        #expect(byPath["\(dir)/journal-\(getppid()).json"]?.removed == false)
        #expect(byPath["\(dir)/journal-\(dead2).json"]?.removed == false)
        #expect(byPath["\(dir)/journal-\(dead2).json"]?.reason == "journal version 2, this duckprompt reads version 1")
        #expect(try names(dir) == ["journal-\(dead2).json", "journal-\(getppid()).json", "notes.txt"].sorted())
    }

    @Test("orphans: a symbolic link at a journal name is not followed")
    func symlinkOrphan() throws {
        let rt = try TempRuntime()
        let store = try JournalStore(runtimeDir: rt.path)
        let dead = try deadPid()
        let outside = rt.path + "/outside.json"
        try sampleJournal(pid: dead).encoded().write(to: URL(fileURLWithPath: outside))
        let link = "\(rt.journalDir)/journal-\(dead).json"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: outside)
        var problems: [JournalProblem] = []
        #expect(try store.orphans { problems.append($0) }.isEmpty)
        #expect(problems == [JournalProblem(path: link, reason: "is a symbolic link; not followed", removed: false)])
        #expect(FileManager.default.fileExists(atPath: outside))
    }
}

// MARK: - Runtime lock

@Suite("RuntimeLock")
struct RuntimeLockTests {
    @Test("tryAcquire: one holder at a time; release and deinit free it; file 0600 with the pid")
    func tryAcquire() throws {
        let rt = try TempRuntime()
        let directory = try RuntimeDirectory(runtimeDir: rt.path)
        let first = try #require(try RuntimeLock.tryAcquire(in: directory))
        #expect(first.isHeld)
        #expect(first.path == rt.journalDir + "/lock")
        #expect(try mode(first.path) & 0o7777 == 0o600)
        #expect(try String(contentsOfFile: first.path, encoding: .utf8) == "\(getpid())\n")
        #expect(try RuntimeLock.tryAcquire(in: directory) == nil)
        first.release()
        first.release()
        #expect(!first.isHeld)
        do {
            let second = try #require(try RuntimeLock.tryAcquire(in: directory))
            #expect(second.isHeld)
        }
        // `second` went away: its deinit released the lock.
        #expect(try RuntimeLock.tryAcquire(in: directory) != nil)
    }

    @Test("acquire waits while another process holds the lock")
    func waitsForOtherProcess() throws {
        let rt = try TempRuntime()
        let directory = try RuntimeDirectory(runtimeDir: rt.path)
        try #require(try RuntimeLock.tryAcquire(in: directory)).release()
        let child = try lockingChild(rt.journalDir + "/lock", seconds: 1)
        defer { child.waitUntilExit() }
        #expect(try RuntimeLock.tryAcquire(in: directory) == nil)
        let clock = ContinuousClock()
        var lock: RuntimeLock?
        let waited = try clock.measure {
            lock = try RuntimeLock.acquire(in: directory, timeout: .seconds(10)) { false }
        }
        #expect(lock?.isHeld == true)
        #expect(seconds(waited) > 0.7 && seconds(waited) < 3, "waited \(waited)")
    }

    @Test("a holder killed with SIGKILL frees the lock")
    func killedHolder() throws {
        let rt = try TempRuntime()
        let directory = try RuntimeDirectory(runtimeDir: rt.path)
        try #require(try RuntimeLock.tryAcquire(in: directory)).release()
        let child = try lockingChild(rt.journalDir + "/lock", seconds: 30)
        #expect(try RuntimeLock.tryAcquire(in: directory) == nil)
        kill(child.processIdentifier, SIGKILL)
        child.waitUntilExit()
        let clock = ContinuousClock()
        var lock: RuntimeLock?
        let waited = try clock.measure { lock = try RuntimeLock.acquire(in: directory, timeout: .seconds(5)) }
        #expect(lock?.isHeld == true)
        #expect(seconds(waited) < 1, "waited \(waited)")
    }

    @Test("acquire gives up after the timeout with .unavailable naming the holder")
    func timeout() throws {
        let rt = try TempRuntime()
        let directory = try RuntimeDirectory(runtimeDir: rt.path)
        let holder = try #require(try RuntimeLock.tryAcquire(in: directory))
        defer { holder.release() }
        let clock = ContinuousClock()
        let start = clock.now
        let error = #expect(throws: DuckPromptError.self) {
            try RuntimeLock.acquire(in: directory, timeout: .milliseconds(200))
        }
        let waited = seconds(start.duration(to: clock.now))
        #expect(error?.code == .unavailable)
        #expect(error?.message.hasPrefix("another duckprompt prompt is still playing (pid \(getpid()) holds \(rt.journalDir)/lock)") == true,
                "\(error?.message ?? "")")
        #expect(waited >= 0.19 && waited < 1.5, "waited \(waited) s")
        // Zero tries once.
        #expect(throws: DuckPromptError.self) { try RuntimeLock.acquire(in: directory, timeout: .zero) }
    }

    @Test("acquire stops with CancellationError when cancelled")
    func cancelled() throws {
        let rt = try TempRuntime()
        let directory = try RuntimeDirectory(runtimeDir: rt.path)
        let holder = try #require(try RuntimeLock.tryAcquire(in: directory))
        defer { holder.release() }
        let clock = ContinuousClock()
        let start = clock.now
        var polls = 0
        #expect(throws: CancellationError.self) {
            try RuntimeLock.acquire(in: directory, timeout: nil) {
                polls += 1
                return start.duration(to: clock.now) > .milliseconds(100)
            }
        }
        let waited = seconds(start.duration(to: clock.now))
        #expect(waited >= 0.1 && waited < 1, "waited \(waited) s")
        #expect(polls >= 2)
    }

    @Test("releasing the lock rings the queue's waiters; a look that found it taken rings no one")
    func releaseRings() throws {
        let rt = try TempRuntime()
        let directory = try RuntimeDirectory(runtimeDir: rt.path)
        let holder = try #require(try RuntimeLock.tryAcquire(in: directory))
        let bell = WaiterBell(in: directory)
        #expect(try RuntimeLock.tryAcquire(in: directory) == nil)
        #expect(bell.wait(until: .now) == false, "a failed look rang")
        holder.release()
        #expect(bell.wait(until: .now + .seconds(10)), "the release did not ring")
        holder.release()
        #expect(bell.wait(until: .now) == false, "a second release rang")
    }

    @Test("a symbolic link at the lock's name is refused")
    func symlinkLock() throws {
        let rt = try TempRuntime()
        let directory = try RuntimeDirectory(runtimeDir: rt.path)
        let target = rt.path + "/target"
        try FileManager.default.createSymbolicLink(atPath: rt.journalDir + "/lock", withDestinationPath: target)
        #expect(throws: DuckPromptError(.internal, "refusing the lock file \(rt.journalDir)/lock: it is a symbolic link")) {
            try RuntimeLock.tryAcquire(in: directory)
        }
        #expect(!FileManager.default.fileExists(atPath: target))
    }
}

// MARK: - Bounds (issue 13: a forged journal)

@Suite("Journal bounds")
struct JournalBoundsTests {
    /// A forged journal: `sampleJournal` with one thing changed, and the reason it is refused.
    struct Forgery: CustomTestStringConvertible, Sendable {
        var name: String
        var change: @Sendable (inout DuckJournal) -> Void
        var reason: String
        var testDescription: String { name }
    }

    static let ui = VolumeMath.uiMax
    static let forgeries: [Forgery] = [
        Forgery(name: "1000 %", change: { $0.streams[0].original = ChannelVolumes([655_360, 655_360]) },
                reason: "refused: stream #12: volume 655360 (1000 %) is above \(ui) (153 %, +11 dB), the most a journal restores"),
        Forgery(name: "PA_VOLUME_MAX", change: { $0.ended[0].original = ChannelVolumes([UInt32.max / 2, 1]) },
                reason: "refused: ended stream 1: volume 2147483647 (3276800 %) is above \(ui) (153 %, +11 dB), the most a journal restores"),
        Forgery(name: "1000 channels", change: { $0.streams[1].original = ChannelVolumes(Array(repeating: 30000, count: 1000)) },
                reason: "refused: stream #40: 1000 channels (a stream has 1 to 32)"),
        Forgery(name: "no channel", change: { $0.streams[1].original = ChannelVolumes([]) },
                reason: "refused: stream #40: 0 channels (a stream has 1 to 32)"),
        Forgery(name: "mute", change: { $0.streams[0].original = ChannelVolumes([0, 0]) },
                reason: "refused: stream #12: every channel's volume is 0: restoring it would mute the stream"),
        Forgery(name: "depth +10 dB", change: { $0.depth = 10 },
                reason: "refused: depth 10.0 dB (a duck is -inf for mute, else -200 to 0 dB)"),
        Forgery(name: "depth -300 dB", change: { $0.depth = -300 },
                reason: "refused: depth -300.0 dB (a duck is -inf for mute, else -200 to 0 dB)"),
        Forgery(name: "depth NaN", change: { $0.depth = .nan },
                reason: "refused: depth nan dB (a duck is -inf for mute, else -200 to 0 dB)"),
        Forgery(name: "gain below the depth", change: { $0.gain = -40 },
                reason: "refused: gain -40.0 dB is not between the depth (-20.0 dB) and 0 dB"),
        Forgery(name: "gain NaN", change: { $0.gain = .nan },
                reason: "refused: gain nan dB is not between the depth (-20.0 dB) and 0 dB"),
        Forgery(name: "PA_INVALID_INDEX", change: { $0.streams[0].index = UInt32.max },
                reason: "refused: a stream's index is PA_INVALID_INDEX (4294967295)"),
        Forgery(name: "one index twice", change: { $0.streams[1].index = 12 },
                reason: "refused: stream #12 is listed twice"),
        Forgery(name: "an ended stream without a key", change: { $0.ended[0].key = RestoreKey() },
                reason: "refused: ended stream 1 has no restore key"),
        Forgery(name: "a key with NUL", change: { $0.streams[0].key.applicationName = "mpv\u{0}evil" },
                reason: "refused: stream #12: restore key: holds a NUL character"),
        Forgery(name: "a 2000-byte key", change: { $0.ended[0].key.mediaRole = String(repeating: "m", count: 2000) },
                reason: "refused: ended stream 1: restore key: 2000 bytes (at most 1024)"),
        Forgery(name: "a 5000-byte server", change: { $0.server = String(repeating: "s", count: 5000) },
                reason: "refused: server: 5000 bytes (at most 1024)"),
    ]

    @Test("a forged journal is refused by decoded(from:), saying what is out of bounds", arguments: forgeries)
    func refused(_ forgery: Forgery) throws {
        var journal = sampleJournal(pid: 1234)
        forgery.change(&journal)
        let data = try journal.encoded()   // encoded as is: a forger does not go through bounded()
        let error = #expect(throws: DuckPromptError.self) { try DuckJournal.decoded(from: data) }
        #expect(error?.code == .unsupportedData)
        #expect(error?.message == forgery.reason)
        // What the store writes is always within bounds, and reads back.
        #expect(throws: Never.self) { try DuckJournal.decoded(from: try journal.bounded().encoded()) }
    }

    @Test("real journals pass: the sample, mute, a handover at its depth, 153 %, 32 channels, depth 0 with a prompt slot")
    func realJournals() throws {
        var journals = [sampleJournal(pid: 1), sampleJournal(pid: 1, depth: -.infinity), sampleJournal(pid: 1, depth: -200)]
        var handover = sampleJournal(pid: 1)
        handover.gain = -20
        journals.append(handover)
        var loud = sampleJournal(pid: 1)
        loud.streams[0].original = ChannelVolumes(Array(repeating: VolumeMath.uiMax, count: 32))
        journals.append(loud)
        var slotOnly = sampleJournal(pid: 1, depth: 0)
        slotOnly.streams = []
        slotOnly.ended = [.init(key: RestoreKey(mediaRole: "navigation"), original: ChannelVolumes([1]))]
        journals.append(slotOnly)
        for journal in journals {
            #expect(throws: Never.self) { try journal.validate() }
            #expect(try DuckJournal.decoded(from: try journal.encoded()) == journal)
        }
    }

    @Test("the store writes an original above 153 % as 153 %, and leaves out what cannot be restored")
    func writtenWithinBounds() throws {
        let rt = try TempRuntime()
        let store = try JournalStore(runtimeDir: rt.path, pid: getpid())
        var journal = try DuckJournal.forCurrentProcess(plan: DuckPlan(inputs: [], depth: -20, math: .libpulse), server: nil, serverName: "x")
        journal.streams = [.init(index: 3, original: ChannelVolumes([196_608, 50000]), key: RestoreKey(mediaRole: "music")),
                           .init(index: 4, original: ChannelVolumes([0]), key: RestoreKey(mediaRole: "music"))]
        journal.ended = [.init(key: RestoreKey(), original: ChannelVolumes([30000]))]
        try store.write(journal)
        let back = try #require(try store.read())
        #expect(back.streams == [.init(index: 3, original: ChannelVolumes([VolumeMath.uiMax, 50000]), key: RestoreKey(mediaRole: "music"))])
        #expect(back.ended.isEmpty)
        try store.remove()
    }

    @Test("restoreActions repairs no saved volume for a stream without a key")
    func noKeyNoRepair() {
        let journal = DuckJournal(pid: 5, processStart: 1, depth: -20,
                                  streams: [.init(index: 9, original: ChannelVolumes([40000]))])
        #expect(journal.restoreActions(live: [], math: .libpulse).isEmpty)
    }

    @Test("orphans: a forged journal of a dead pid is refused, reported naming the file, removed, never returned; restore writes nothing")
    func forgedOrphan() throws {
        let rt = try TempRuntime()
        let store = try JournalStore(runtimeDir: rt.path)
        let dead = try deadPid()
        var forged = sampleJournal(pid: dead)
        forged.streams[0].original = ChannelVolumes(Array(repeating: 655_360, count: 2))
        let path = "\(rt.journalDir)/journal-\(dead).json"
        try makeFile(path, try forged.encoded())
        var handover = sampleJournal(pid: dead)
        handover.depth = .nan
        try makeFile("\(rt.journalDir)/handover.json", try handover.encoded())
        #expect(store.takeHandover() == nil)

        var problems: [JournalProblem] = []
        #expect(try store.orphans { problems.append($0) }.isEmpty)
        #expect(problems == [
            JournalProblem(path: "\(rt.journalDir)/handover.json",
                           reason: "refused: depth nan dB (a duck is -inf for mute, else -200 to 0 dB)", removed: true),
            JournalProblem(path: path, reason: "refused: stream #12: volume 655360 (1000 %) is above \(VolumeMath.uiMax) (153 %, +11 dB), the most a journal restores", removed: true),
        ])
        #expect(problems[1].description.hasPrefix("\(path): refused: stream #12"))
        #expect(rt.files() == [])
    }

    @Test("orphans: 600 symbolic links at journal names are one problem, not 600; a single one is itself")
    func manyLinks() throws {
        let rt = try TempRuntime()
        let store = try JournalStore(runtimeDir: rt.path)
        for n in 1...600 {
            try FileManager.default.createSymbolicLink(atPath: "\(rt.journalDir)/journal-\(4_000_000 + n).json",
                                                       withDestinationPath: "/nonexistent")
        }
        var problems: [JournalProblem] = []
        #expect(try store.orphans { problems.append($0) }.isEmpty)
        #expect(problems == [JournalProblem(path: rt.journalDir,
                                            reason: "600 files (journal-4000001.json … journal-4000600.json): is a symbolic link; not followed",
                                            removed: false, count: 600)])
        #expect(problems[0].description == "\(rt.journalDir): 600 files (journal-4000001.json … journal-4000600.json): is a symbolic link; not followed; all left in place")
        #expect(rt.files().count == 600)
    }
}
