import DuckPrompt
import DuckPromptProbe
import Foundation

/// A process's CPU time and context switches so far, read from /proc without waking it.
struct ProcessCounters {
    /// `utime + stime` of /proc/PID/stat (every thread, ended ones too), in clock ticks.
    var ticks: Int
    /// Per thread id: `voluntary_ctxt_switches + nonvoluntary_ctxt_switches` of
    /// /proc/PID/task/TID/status.
    var switches: [String: Int]
    /// Per thread id: its name, /proc/PID/task/TID/comm.
    var names: [String: String]

    /// Nil when the process is gone.
    init?(pid: pid_t) {
        guard let ticks = cpuTicks(ofProcess: "\(pid)"),
              let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else { return nil }
        self.ticks = ticks
        switches = [:]
        names = [:]
        for tid in tasks {
            names[tid] = (try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
            guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(tid)/status", encoding: .utf8) else { continue }
            var count = 0
            for line in status.split(separator: "\n")
            where line.hasPrefix("voluntary_ctxt_switches:") || line.hasPrefix("nonvoluntary_ctxt_switches:") {
                count += Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) ?? 0
            }
            switches[tid] = count
        }
    }

    /// What happened since `before`: CPU seconds, context switches of the threads alive now
    /// (a thread started since counts whole), and how many threads ended (their last switches
    /// are not seen: /proc keeps no count for a thread that is gone).
    func since(_ before: ProcessCounters) -> (cpuSeconds: Double, switches: Int, ended: Int) {
        let perSecond = Double(sysconf(Int32(_SC_CLK_TCK)))
        let switched = switches.reduce(0) { $0 + $1.value - (before.switches[$1.key] ?? 0) }
        let ended = before.switches.keys.filter { switches[$0] == nil }.count
        return (Double(ticks - before.ticks) / perSecond, switched, ended)
    }

    /// Context switches since `before`, per thread name (`comm`), of the threads that switched.
    func switchesByThreadName(since before: ProcessCounters) -> [String: Int] {
        var byName: [String: Int] = [:]
        for (tid, count) in switches where count != (before.switches[tid] ?? 0) {
            byName[names[tid] ?? tid, default: 0] += count - (before.switches[tid] ?? 0)
        }
        return byName
    }
}

/// Figure 8: what an idle prompter and an idle service cost, beside `duckprompt devices --watch`.
extension ServerBench {
    static let idleHeld = "held prompter, idle after one prompt"
    static let idleWatch = "duckprompt devices --watch"
    static let idleService = "duckprompt serve, idle after one Play"
    /// Figure 8's window, in s.
    static let idleSeconds = 60
    /// Figure 8's columns: context switches in a second with no server event in it or a second
    /// next to it, and the server events (from the second before the window on).
    static let unprompted = "context switches without a server event", serverEvents = "server events"
    /// Figure 8's memory columns: VmRSS at the window's end, VmHWM then (/proc/PID/status).
    static let endRSS = "RSS at the end", peakRSS = "peak RSS"

    /// Starts `pactl subscribe` (`ServerEventLog`), the `devices --watch` command, once it has
    /// printed its first listing this executable's `hold` (`HoldCommand`), and once that says
    /// it is idle `duckprompt serve` (`startService`), through which the bench plays the blip
    /// (`Play` on the sink, the default duck) and waits for its `PromptFinished`; from then on
    /// the bench's bus connection stays open and sends nothing. Reads the three processes'
    /// counters (`ProcessCounters`) every second for `seconds`, and their memory at the end,
    /// then ends them (SIGTERM; the holder's standard input is closed too, so that it ends if
    /// this process dies). The targets: no context switch of the idle prompter, or of the idle
    /// service, in a second with no server event it subscribes to, in it or a second next to it
    /// (pactl's stamp and the process's wake-up on one event can fall either side of a
    /// second's end); the service's VmRSS under 20 MiB.
    /// - Throws: `BenchError` when a child cannot be started or does not get ready in 10 s, or
    ///   the service's prompt did not play.
    func idleCost(seconds: Int) throws {
        let events = try ServerEventLog()
        defer { events.stop() }
        let watchOut = try ChildPipe.make()
        let watcher = try Child([duckprompt, "devices", "--watch"], output: watchOut.write)
        close(watchOut.write)
        defer { close(watchOut.read) }
        var children = [watcher]
        var holdInput: ChildPipe?
        defer {
            if let holdInput { close(holdInput.write) }
            for child in children { kill(child.pid, SIGTERM) }
            for child in children { _ = child.wait() }
        }
        guard ChildPipe.readLine(watchOut.read, timeoutMs: 10_000) != nil else {
            throw BenchError("duckprompt devices --watch printed nothing in 10 s")
        }
        let input = try ChildPipe.make(), holdOut = try ChildPipe.make()
        holdInput = input
        let holder = try Child([executablePath(), "hold", "--file", blip, "--device", sink],
                               input: input.read, output: holdOut.write)
        children.append(holder)
        close(input.read)
        close(holdOut.write)
        defer { close(holdOut.read) }
        guard ChildPipe.readLine(holdOut.read, timeoutMs: 10_000) == HoldCommand.idleLine else {
            throw BenchError("the idle prompter (duckprompt-bench hold) did not get idle in 10 s")
        }
        let (server, client) = try startService()
        children.append(server)
        if let failure = playThroughService(client, options: ["device": .string(sink)]).failure {
            throw BenchError("the idle service's prompt: \(failure)")
        }
        let rows = [(Self.idleHeld, holder), (Self.idleWatch, watcher), (Self.idleService, server)]
        func counters() throws -> [ProcessCounters] {
            let now = rows.compactMap { ProcessCounters(pid: $0.1.pid) }
            guard now.count == rows.count else { throw BenchError("a child of figure 8 ended before the end of its window") }
            return now
        }
        let first = try counters()
        log("idle: \(seconds) s window begins (\(first.map { "\($0.switches.count) threads" }.joined(separator: ", ")))")
        // Per process, per second of the window, its switches: when they came.
        let began = monotonicNanoseconds()
        var previous = first, bySecond = [[Int: Int]](repeating: [:], count: rows.count)
        for second in 1...seconds {
            let due = began + UInt64(second) * 1_000_000_000, clock = monotonicNanoseconds()
            if due > clock { pause(ms: Int((due - clock) / 1_000_000)) }
            let now = try counters()
            for i in rows.indices {
                let switched = now[i].since(previous[i]).switches
                if switched != 0 { bySecond[i][second] = switched }
            }
            previous = now
        }
        let last = previous
        // The bench's bus connection stayed open, silent, through the window.
        withExtendedLifetime(client) {}
        // Seconds of the window in which the server told of something (1 = the first second,
        // 0 = the second before the window).
        let told = events.times.map { Int(((Double($0) - Double(began)) / 1e9).rounded(.down)) + 1 }
            .filter { (0...seconds).contains($0) }
        for (i, (row, child)) in rows.enumerated() {
            let d = last[i].since(first[i])
            let unprompted = bySecond[i].filter { second, _ in !told.contains { abs($0 - second) <= 1 } }
            let memory = [(Self.endRSS, "VmRSS:"), (Self.peakRSS, "VmHWM:")].compactMap { column, field in
                statusKiB(of: child.pid, field).map { (column, $0 / 1024) }
            }
            let values: [(String, String, Double)] = [("CPU s", "s", d.cpuSeconds), ("context switches", "count", Double(d.switches)),
                                                      ("wake-ups per s", "/s", Double(d.switches) / Double(seconds)),
                                                      (Self.unprompted, "count", Double(unprompted.values.reduce(0, +)))]
                + memory.map { ($0.0, "MiB", $0.1) }
            for (column, unit, value) in values {
                results.series.append(Series(figure: 8, row: row, column: column, unit: unit, values: [value]))
            }
            log("idle \(row): \(format(d.cpuSeconds, "s")) CPU s, \(d.switches) context switches, "
                + "\(last[i].switches.count) threads, \(d.ended) ended"
                + memory.map { ", \($0.0) \(format($0.1, "MiB")) MiB" }.joined())
            if d.ended > 0 {
                note("Figure 8: \(d.ended) \(d.ended == 1 ? "thread" : "threads") of `\(row)` ended in the window; "
                     + "\(d.ended == 1 ? "its" : "their") last context switches are not counted.")
            }
            guard child.pid != watcher.pid else { continue }
            let when = bySecond[i].sorted { $0.key < $1.key }.prefix(12)
                .map { "\($0.value) in second \($0.key)\(unprompted[$0.key] == nil ? "" : " (no event)")" }
            let threads = last[i].switchesByThreadName(since: first[i]).sorted { $0.key < $1.key }
                .map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            results.notes.append("Figure 8: `\(row)` had \(first[i].switches.count) threads; its context switches came "
                                 + (when.isEmpty ? "never" : when.joined(separator: ", ") + (bySecond[i].count > 12 ? " …" : "")
                                    + "; by thread (comm): " + threads) + ".")
        }
        results.series.append(Series(figure: 8, row: Self.idleHeld, column: Self.serverEvents, unit: "count",
                                     values: [Double(told.count)]))
        let eventSeconds = Set(told).sorted().map(String.init).joined(separator: ", ")
        results.notes.append("Figure 8: the server told of sinks, sink-inputs, cards or itself "
                             + (told.isEmpty ? "never" : "\(told.count) \(told.count == 1 ? "time" : "times"), in "
                                + "\(Set(told).count == 1 ? "second" : "seconds") \(eventSeconds)") + " (0: the second before).")
    }
}

/// The server events a held prompter subscribes to (sink, sink-input, card, server), as
/// `pactl subscribe` prints them, each stamped with `monotonicNanoseconds()` on arrival: what
/// may wake an idle prompter that has no timer of its own (a sink suspended when idle for 5 s:
/// PulseAudio's module-suspend-on-idle, WirePlumber's suspend-node).
final class ServerEventLog: @unchecked Sendable {
    private let child: Child
    private let output: ChildPipe
    private let lock = NSLock()
    private var stamps: [UInt64] = []
    private let done = DispatchSemaphore(value: 0)

    /// Starts `pactl subscribe` and a thread that reads its lines.
    /// - Throws: `BenchError` when pactl cannot be started.
    init() throws {
        output = try ChildPipe.make()
        child = try Child(["pactl", "subscribe"], output: output.write)
        close(output.write)
        Thread { [self] in
            while let line = ChildPipe.readLine(output.read, timeoutMs: Int(Int32.max)) {
                guard [" on sink #", " on sink-input #", " on card #", " on server"].contains(where: line.contains) else { continue }
                let now = monotonicNanoseconds()
                lock.withLock { stamps.append(now) }
            }
            done.signal()
        }.start()
    }

    /// When each event arrived, in monotonic ns.
    var times: [UInt64] { lock.withLock { stamps } }

    /// Ends pactl and the reading thread.
    func stop() {
        kill(child.pid, SIGTERM)
        _ = child.wait()
        done.wait()
        close(output.read)
    }
}

/// A pipe whose two ends are closed on exec (`pipe`, `FD_CLOEXEC`): a child gets one end
/// through `Child`'s `input` or `output`, and no other child inherits either.
struct ChildPipe {
    var read: Int32, write: Int32

    static func make() throws -> ChildPipe {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw BenchError("pipe: \(String(cString: strerror(errno)))") }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return ChildPipe(read: fds[0], write: fds[1])
    }

    /// The first line `fd` delivers within `timeoutMs` (without its newline); nil at the end,
    /// an error or the timeout (`poll`, then `read` a byte at a time).
    static func readLine(_ fd: Int32, timeoutMs: Int) -> String? {
        let deadline = ContinuousClock.now + .milliseconds(timeoutMs)
        var line: [UInt8] = []
        while true {
            var ready = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
            guard let rc = try? POSIX.poll(&ready, until: deadline), rc > 0 else { return nil }
            var byte: UInt8 = 0
            guard (try? withUnsafeMutableBytes(of: &byte) { try POSIX.read(fd, into: $0) }) == 1 else { return nil }
            if byte == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
    }
}

/// This executable's path (/proc/self/exe), to start it again as a child.
func executablePath() -> String {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    return n > 0 ? String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : CommandLine.arguments[0]
}
