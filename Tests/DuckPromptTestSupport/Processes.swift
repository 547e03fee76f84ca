import Foundation

/// A finished child process.
package struct ProcessResult: CustomStringConvertible {
    /// Its exit status (`Process.terminationStatus`: the signal's number when a signal ended it).
    package var status: Int32
    package var stdout: String
    package var stderr: String
    /// Seconds from its start to its exit.
    package var seconds: Double
    /// Seconds from the signal `run(signal:)` sent to the exit; nil when none was sent.
    package var secondsAfterSignal: Double?
    /// Whether it outlived `run(limit:)` and was terminated.
    package var timedOut: Bool
    /// Whether it ended by exiting (not by a signal).
    package var exited: Bool

    package init(status: Int32, stdout: String, stderr: String, seconds: Double, secondsAfterSignal: Double? = nil,
                 timedOut: Bool = false, exited: Bool = true) {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
        self.seconds = seconds
        self.secondsAfterSignal = secondsAfterSignal
        self.timedOut = timedOut
        self.exited = exited
    }

    package var description: String { "exit \(status)\n--- stdout\n\(stdout)--- stderr\n\(stderr)---" }

    /// stderr's lines (without the final newline's empty tail).
    package var errorLines: [Substring] { stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast() }
}

/// What a child reads on standard input.
package enum ProcessInput {
    case null
    case file(FileHandle)
    case text(String)
}

/// Runs a program to the end and returns what it wrote: how the tests run a process to its end
/// (but for the two that need what it cannot give: a child's pid once it has exited, and a
/// standard error whose read end is closed). Standard output and error go to files (a grandchild that keeps them open does
/// not hold the caller); the exit is waited for on `Process.terminationHandler`, not polled.
/// - Parameters:
///   - arguments: the program (looked up on PATH through /usr/bin/env unless `executable` is
///     given) and its arguments.
///   - environment: variables set on top of this process's environment, or, with
///     `inheritEnvironment: false`, the whole environment.
///   - input: standard input (default /dev/null).
///   - directory: the working directory (default this process's).
///   - limit: seconds after which it gets SIGTERM, and SIGKILL 2 s later (`timedOut`); nil
///     waits as long as it runs.
///   - signal: a signal sent `after` seconds from the start, if it still runs.
///   - check: throw `TestFailure` when the exit status is not 0.
/// - Throws: `TestFailure` (check), or what `Process.run` throws when it cannot be started.
@discardableResult
package func run(_ arguments: [String], executable: URL? = nil, environment: [String: String] = [:],
                 inheritEnvironment: Bool = true, input: ProcessInput = .null, directory: URL? = nil,
                 limit: Double? = nil, signal: (number: Int32, after: Double)? = nil,
                 check: Bool = true) throws -> ProcessResult {
    let scratch = try Scratch()
    let process = Process()
    if let executable {
        process.executableURL = executable
        process.arguments = arguments
    } else {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
    }
    var env = inheritEnvironment ? ProcessInfo.processInfo.environment : [:]
    for (k, v) in environment { env[k] = v }
    process.environment = env
    if let directory { process.currentDirectoryURL = directory }
    let out = scratch.url.appendingPathComponent("stdout"), err = scratch.url.appendingPathComponent("stderr")
    try Data().write(to: out)
    try Data().write(to: err)
    let outHandle = try FileHandle(forWritingTo: out), errHandle = try FileHandle(forWritingTo: err)
    defer { try? outHandle.close(); try? errHandle.close() }
    process.standardOutput = outHandle
    process.standardError = errHandle
    switch input {
    case .null: process.standardInput = FileHandle.nullDevice
    case .file(let handle): process.standardInput = handle
    case .text(let text):
        let file = scratch.url.appendingPathComponent("stdin")
        try Data(text.utf8).write(to: file)
        process.standardInput = try FileHandle(forReadingFrom: file)
    }
    let ended = DispatchSemaphore(value: 0)
    process.terminationHandler = { _ in ended.signal() }
    let start = ContinuousClock.now
    try process.run()
    func waited(until deadline: ContinuousClock.Instant?) -> Bool {
        guard let deadline else { ended.wait(); return true }
        let left = max(0, seconds(deadline - .now))
        return ended.wait(timeout: .now() + left) == .success
    }
    var signalled: ContinuousClock.Instant? = nil
    let deadline = limit.map { start + .milliseconds(Int64($0 * 1000)) }
    var done = false
    if let signal {
        let at = start + .milliseconds(Int64(signal.after * 1000))
        done = waited(until: deadline.map { min($0, at) } ?? at)
        if !done && ContinuousClock.now >= at {
            kill(process.processIdentifier, signal.number)
            signalled = .now
        }
    }
    if !done { done = waited(until: deadline) }
    var timedOut = false
    if !done {
        timedOut = true
        process.terminate()
        // One that does not heed SIGTERM (blocked in open or read) gets SIGKILL.
        if !waited(until: .now + .seconds(2)) {
            kill(process.processIdentifier, SIGKILL)
            ended.wait()
        }
    }
    process.waitUntilExit()
    let end = ContinuousClock.now
    let result = ProcessResult(status: process.terminationStatus,
                               stdout: String(decoding: try Data(contentsOf: out), as: UTF8.self),
                               stderr: String(decoding: try Data(contentsOf: err), as: UTF8.self),
                               seconds: seconds(end - start), secondsAfterSignal: signalled.map { seconds(end - $0) },
                               timedOut: timedOut, exited: process.terminationReason == .exit)
    if check && result.status != 0 {
        throw TestFailure("\(arguments.joined(separator: " ")) exited \(result.status): \(result.stderr)")
    }
    return result
}

/// A duration in seconds.
package func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

/// A background process (a player, a prompt being watched), stopped on `stop()`.
package final class Background: @unchecked Sendable {
    package let process = Process()
    private let out = Pipe()
    private var data = Data()
    /// Whether its output ended (guarded by `condition`).
    private var outputEnded = false
    /// Guards `data` and `outputEnded`; broadcast on each chunk and at the end.
    private let condition = NSCondition()
    private let ended = DispatchSemaphore(value: 0)

    /// Starts `arguments` (PATH lookup through /usr/bin/env) with `environment` set on top of
    /// this process's.
    /// - Parameter captureStderr: collect standard error with standard output.
    /// - Throws: what `Process.run` throws when it cannot be started.
    package init(_ arguments: [String], environment: [String: String] = [:], captureStderr: Bool = false) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        process.environment = env
        process.standardOutput = out
        process.standardError = captureStderr ? out : FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        process.terminationHandler = { [ended] _ in ended.signal() }
        try process.run()
        let handle = out.fileHandleForReading
        Thread { [self] in
            while true {
                let chunk = handle.availableData
                condition.lock()
                if chunk.isEmpty { outputEnded = true } else { data.append(chunk) }
                condition.broadcast()
                condition.unlock()
                if chunk.isEmpty { break }
            }
        }.start()
    }

    /// What it wrote so far.
    package var bytes: Data { condition.withLock { data } }

    /// Waits until it has written more than `count` bytes in all, its output ended, or
    /// `deadline` passed: woken by each chunk it writes, not polled.
    /// - Returns: whether more than `count` bytes are there.
    package func waitForBytes(moreThan count: Int, until deadline: Date) -> Bool {
        condition.withLock {
            while data.count <= count && !outputEnded {
                if !condition.wait(until: deadline) { break }
            }
            return data.count > count
        }
    }

    /// Waits until what it wrote contains `text` (at most `timeout` s): a trace line
    /// (`DUCKPROMPT_DEBUG=1`), a state it reports. Looks again at each chunk it writes.
    /// - Returns: whether it did.
    package func waitForOutput(containing text: String, timeout: Double) -> Bool {
        waitForOutput(timeout: timeout) { $0.contains(text) }
    }

    /// Waits until what it wrote satisfies `condition` (at most `timeout` s): a sequence of
    /// events it reports. Looks again at each chunk it writes.
    /// - Returns: whether it did.
    package func waitForOutput(timeout: Double, where condition: (String) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let now = bytes
            if condition(String(decoding: now, as: UTF8.self)) { return true }
            guard waitForBytes(moreThan: now.count, until: deadline) else { return false }
        }
    }

    /// Waits for the process to end by itself (at most `timeout` s, then SIGKILL), and then for
    /// the end of its output (at most 2 s more: a child it left may hold the pipe), so that
    /// `bytes` holds all it wrote; returns its exit status, or nil when it had to be killed.
    package func wait(timeout: Double) -> Int32? {
        if ended.wait(timeout: .now() + timeout) == .timedOut {
            stop()
            return nil
        }
        ended.signal()   // for a later wait or stop
        process.waitUntilExit()
        // The reader thread may not have taken the last chunk yet (seen under ThreadSanitizer:
        // a client's last line missing although it exited 0).
        let deadline = Date().addingTimeInterval(2)
        condition.withLock {
            while !outputEnded {
                if !condition.wait(until: deadline) { break }
            }
        }
        return process.terminationStatus
    }

    /// Sends SIGKILL and waits for the end of its output. (Not SIGTERM: a child spawned from
    /// a dispatch worker thread inherits its blocked signal mask, and parec would never see it.)
    @discardableResult
    /// A second stop returns at once (a test that stopped a player, then its `Rig`).
    package func stop() -> Data {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        // The end of its output: at most 5 s (a child it left may hold the pipe).
        let deadline = Date().addingTimeInterval(5)
        condition.withLock {
            while !outputEnded {
                if !condition.wait(until: deadline) { break }
            }
        }
        return bytes
    }
}

/// A fresh temporary directory, removed when the value goes away.
package final class Scratch {
    package let url: URL

    /// - Throws: what `FileManager.createDirectory` throws.
    package init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("duckprompt-test-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }

    /// The path of `name` inside it.
    package func path(_ name: String) -> String { url.appendingPathComponent(name).path }
}
