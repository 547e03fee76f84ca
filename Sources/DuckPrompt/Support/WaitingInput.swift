import FoundationEssentials
import Glibc

/// A descriptor that becomes readable once `signal()` was called (a self-pipe, `pipe`): a
/// `poll` on it and on an input is cut short from another thread (a signal's thread).
package final class WakePipe: @unchecked Sendable {
    private let ends: (read: Int32, write: Int32)

    /// - Returns: nil when no pipe can be made (`pipe` failed: out of descriptors).
    /// Both ends close on exec; the write end does not block (a full pipe is readable anyway).
    package init?() {
        guard let ends = try? POSIX.pipe() else { return nil }
        for fd in [ends.read, ends.write] { _ = try? POSIX.fcntl(fd, F_SETFD, FD_CLOEXEC) }
        _ = try? POSIX.fcntl(ends.write, F_SETFL, O_NONBLOCK)
        self.ends = ends
    }

    deinit {
        try? POSIX.close(ends.read)
        try? POSIX.close(ends.write)
    }

    /// The end to `poll` for `POLLIN`.
    package var descriptor: Int32 { ends.read }

    /// Makes `descriptor` readable (one byte, never read back: it stays readable).
    package func signal() {
        _ = withUnsafeBytes(of: UInt8(1)) { try? POSIX.write(ends.write, $0) }
    }
}

/// Input that may never end (a FIFO no one writes, a terminal, a pipe whose writer never
/// closes), read so that a cancellation stops the wait at once.
package enum WaitingInput {
    /// Reads `fd` to its end (a FIFO: until its last writer closes it), waiting with `poll`
    /// on it and on `wake`.
    /// - Parameters:
    ///   - label: names the input in messages (`standard input`, the path).
    ///   - wake: a descriptor that becomes readable to stop the wait (`WakePipe`); nil waits
    ///     for the input alone.
    ///   - limit: the most bytes kept; one more is an error.
    ///   - deadline: when an input that has not ended is given up (`.noInput`); nil: never.
    /// - Throws: `CancellationError` once `wake` is readable (before or during the wait);
    ///   `.noInput` (66) when `read` fails; `.unsupportedData` (65) past `limit` bytes.
    /// A FIFO that no writer opened yet reads as not ready (Linux reports `POLLHUP` only
    /// after a writer came and went), so the wait lasts until a writer writes or a
    /// cancellation comes. `O_NONBLOCK` is never set here: standard input's file status is
    /// shared with the shell.
    package static func readAll(_ fd: Int32, label: String, wake: Int32?, limit: Int,
                                deadline: ContinuousClock.Instant? = nil) throws -> [UInt8] {
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: wake ?? -1, events: Int16(POLLIN), revents: 0)]
        while true {
            fds[0].revents = 0
            fds[1].revents = 0
            if let deadline, deadline <= ContinuousClock.now {
                throw DuckPromptError(.noInput, "\(label): no end of the input in time (\(data.count) bytes read)")
            }
            let ready: Int32
            do throws(Errno) { ready = try POSIX.poll(&fds, until: deadline) } catch {
                throw DuckPromptError(.noInput, "\(label): \(error)")
            }
            if ready == 0 { continue }
            if fds[1].revents != 0 { throw CancellationError() }
            guard fds[0].revents != 0 else { continue }
            let n: Int
            switch chunk.withUnsafeMutableBytes({ bytes in Result { () throws(Errno) in try POSIX.read(fd, into: bytes) } }) {
            case .success(let count): n = count
            case .failure(.wouldBlock): continue
            case .failure(let err): throw DuckPromptError(.noInput, "\(label): \(err)")
            }
            if n == 0 { return data }
            guard data.count + n <= limit else {
                throw DuckPromptError(.unsupportedData,
                    "\(label): longer than \(limit >> 20) MiB, the most read from a pipe or device (give a file by name)",
                    limit: .inputBytes)
            }
            data.append(contentsOf: chunk[0..<n])
        }
    }
}

extension WaitingInput {
    /// Reads text to its end (`say -`: standard input), as `readAll` waits for it, and decodes
    /// it as UTF-8; one line break at the end is dropped (`echo` adds it).
    /// - Parameters:
    ///   - fd: the input; `label` names it in messages.
    ///   - wake: as for `readAll`: readable to stop the wait.
    ///   - maxCodePoints: the most Unicode code points a text may have; the read stops after
    ///     four bytes a code point (UTF-8's longest), so a longer input is refused without
    ///     being read whole.
    /// - Throws: `.usage` (64, `limit` `.textLength`) for a text over `maxCodePoints`, as
    ///   `SpeechSource.checkLength`; `.unsupportedData` (65) when it is not UTF-8 (the byte
    ///   offset named); `CancellationError`, `.noInput` as `readAll`.
    package static func readText(_ fd: Int32, label: String, wake: Int32?, maxCodePoints: Int) throws -> String {
        let bytes: [UInt8]
        do {
            bytes = try readAll(fd, label: label, wake: wake, limit: maxCodePoints * 4 + 2)
        } catch let error as DuckPromptError where error.limit == .inputBytes {
            throw DuckPromptError(.usage, "\(label): the text to say is longer than \(maxCodePoints) characters, "
                + "the most a prompt says (Unicode code points)", limit: .textLength)
        }
        var text = bytes[...]
        if text.last == UInt8(ascii: "\n") { text = text.dropLast() }
        if text.last == UInt8(ascii: "\r") { text = text.dropLast() }
        guard let decoded = String(validating: text, as: UTF8.self) else {
            let valid = Self.validUTF8Prefix(text)
            throw DuckPromptError(.unsupportedData, "\(label): not UTF-8 text (byte \(valid) is not)")
        }
        return decoded
    }

    /// How many bytes from the start of `bytes` are whole, valid UTF-8.
    private static func validUTF8Prefix(_ bytes: ArraySlice<UInt8>) -> Int {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        var offset = 0
        while case .scalarValue(let scalar) = decoder.decode(&iterator) {
            offset += UTF8.width(scalar)
        }
        return offset
    }
}
