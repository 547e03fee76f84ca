import DuckPromptTestSupport
import Foundation

/// A running speech-dispatcher 0.11 (`speech-dispatcher -s` as the user, a config dir of its own)
/// whose only module is duckprompt's, started through an `sd_duckprompt` wrapper as the package
/// installs it; stopped with the value. Used by SpeechDispatcherIntegrationTests (spd-say) and
/// NavitIntegrationTests (Navit's speech_dispatcher backend).
final class SpeechDispatcherServer {
    let scratch: Scratch
    let process: Background
    let socket: String

    /// `config` is added to speechd.conf after the module's lines (client sections, defaults);
    /// `logRequests` runs the server at log level 5, whose log has each client's message as it
    /// was queued (`requests`).
    /// - Throws: `TestFailure` when the server did not open its socket within 10 s.
    init(config: String = "", logRequests: Bool = false) throws {
        scratch = try Scratch()
        let conf = scratch.path("conf"), logs = scratch.path("logs")
        for dir in [conf, conf + "/modules", logs] {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        }
        // The wrapper as share/speech-dispatcher/sd_duckprompt is, naming the built binary.
        let wrapper = scratch.path("sd_duckprompt")
        try "#!/bin/sh\nexec '\(duckpromptBinary)' speechd-module \"$@\"\n".write(toFile: wrapper, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: wrapper)
        try """
        AddModule "duckprompt" "\(wrapper)" "duckprompt.conf"
        DefaultModule duckprompt
        \(config)

        """.write(toFile: conf + "/speechd.conf", atomically: true, encoding: .utf8)
        try "DuckpromptPriority message\nDuckpromptKeepDuckMs 300\n"
            .write(toFile: conf + "/modules/duckprompt.conf", atomically: true, encoding: .utf8)
        socket = scratch.path("speechd.sock")
        // The module's trace (DUCKPROMPT_DEBUG), its standard error, goes to LOGDIR/duckprompt.log.
        process = try Background(["speech-dispatcher", "-s", "-t", "0", "-C", conf, "-L", logs, "-P", scratch.path("pid"),
                                  "-c", "unix_socket", "-S", socket] + (logRequests ? ["-l", "5"] : []), environment: ["DUCKPROMPT_DEBUG": "1"],
                                 captureStderr: true)
        // Its log says when the module answered INIT and the socket is open.
        guard eventually(timeout: timeLimit(10), { FileManager.default.fileExists(atPath: self.socket) }) else {
            throw TestFailure("speech-dispatcher did not open \(socket): \(String(decoding: process.bytes, as: UTF8.self))")
        }
    }

    /// The environment that points libspeechd (spd-say, Navit's backend) at this server.
    var clientEnvironment: [String: String] { ["SPEECHD_ADDRESS": "unix_socket:\(socket)"] }

    /// What the module traced so far (the server sends a module's standard error to
    /// LOGDIR/NAME.log).
    var trace: String { (try? String(contentsOfFile: scratch.path("logs/duckprompt.log"), encoding: .utf8)) ?? "" }

    /// When the module traced a line containing `text` (µs since the epoch).
    func traced(_ text: String) -> Int? {
        trace.split(separator: "\n").first { $0.contains(text) }.flatMap(Self.stamp)
    }

    /// Every message the module was asked to speak, in order: its text and when the module got
    /// its `SPEAK` (µs since the epoch), from the trace's "message N: SPEAK \"TEXT\", voice …".
    var spoken: [(text: String, microseconds: Int)] {
        trace.split(separator: "\n").compactMap { line in
            guard let open = line.range(of: ": SPEAK \""), let close = line.range(of: "\", voice ", options: .backwards),
                  open.upperBound <= close.lowerBound, let stamp = Self.stamp(line) else { return nil }
            return (String(line[open.upperBound..<close.lowerBound]), stamp)
        }
    }

    /// Every message clients asked for, in order, as the server's log at level 5 has it ("Queueing
    /// message |TEXT| with priority N", written when a client's SPEAK is complete): its text, SSIP
    /// priority (1 important, 2 message, 3 text, 4 notification, 5 progress) and when (seconds
    /// since the epoch; the log's time is local, to the second, and its µs).
    var requests: [(text: String, priority: Int, seconds: Double)] {
        let log = (try? String(contentsOfFile: scratch.path("logs/speech-dispatcher.log"), encoding: .utf8)) ?? ""
        let format = DateFormatter()
        format.locale = Locale(identifier: "en_US_POSIX")
        format.dateFormat = "EEE MMM d HH:mm:ss yyyy"
        return log.split(separator: "\n").compactMap { line in
            // [Mon Dec  7 01:23:45 2026 : 524139] speechd:     Queueing message |Hello there| with priority 3
            guard line.hasPrefix("["), let open = line.range(of: "Queueing message |"),
                  let close = line.range(of: "| with priority ", options: .backwards), open.upperBound <= close.lowerBound,
                  let priority = Int(line[close.upperBound...]), let bracket = line.firstIndex(of: "]") else { return nil }
            let stamp = line[line.index(after: line.startIndex)..<bracket].split(separator: ":").map { $0 }
            guard stamp.count == 4, let micro = Double(stamp[3].trimmingCharacters(in: .whitespaces)),
                  let date = format.date(from: stamp[0...2].joined(separator: ":").split(separator: " ").joined(separator: " "))
            else { return nil }
            return (String(line[open.upperBound..<close.lowerBound]), priority, date.timeIntervalSince1970 + micro / 1e6)
        }
    }

    /// The µs stamp of a trace line: "duckprompt[debug] STAMP: …".
    private static func stamp(_ line: Substring) -> Int? {
        line.split(separator: " ").dropFirst().first.flatMap { Int($0.dropLast()) }
    }

    /// spd-say with the server's address; `-w` waits for the message's end.
    func say(_ args: String...) throws -> ProcessResult {
        try run(["spd-say"] + args, environment: clientEnvironment, check: false)
    }

    func sayInBackground(_ args: String...) throws -> Background {
        try Background(["spd-say"] + args, environment: clientEnvironment, captureStderr: true)
    }

    deinit { _ = process.stop() }
}
