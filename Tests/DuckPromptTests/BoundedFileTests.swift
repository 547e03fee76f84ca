import Foundation
import Testing
@testable import DuckPrompt
@testable import DuckPromptCore

// The one bounded whole-file reader (dumps, config, journals): size limits, file kinds, pipes.

@Suite("BoundedFile")
struct BoundedFileTests {
    private func scratch() throws -> String {
        var template = Array("/tmp/duckprompt-bounded.XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw POSIXError(.EIO) }
        return String(cString: made)
    }

    private func failure(_ body: () throws(FileReadError) -> Data) -> FileReadError? {
        do { _ = try body(); return nil } catch { return error }
    }

    @Test("a regular file up to the limit is read whole; one byte more is refused before reading")
    func regularFile() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/f"
        let bytes = Data((0..<1000).map { UInt8($0 % 251) })
        try bytes.write(to: URL(fileURLWithPath: path))
        #expect(try BoundedFile.read(path: path, limit: 1000) == bytes)
        let error = failure { () throws(FileReadError) in try BoundedFile.read(path: path, limit: 999) }
        #expect(error == FileReadError(kind: .tooLarge, reason: "is larger than 999 bytes"))
        // A 100 GB sparse file is refused at once, by its size.
        #expect(truncate(path, 100 << 30) == 0)
        let clock = ContinuousClock()
        let took = clock.measure {
            #expect(failure { () throws(FileReadError) in try BoundedFile.read(path: path, limit: BoundedFile.dumpLimit) }?.reason
                    == "is larger than 16 MiB")
        }
        #expect(took < .milliseconds(100))
    }

    @Test("missing, a directory, /dev/zero, a FIFO: refused by kind, saying which")
    func kinds() throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(failure { () throws(FileReadError) in try BoundedFile.read(path: dir + "/none", limit: 10) }
                == FileReadError(kind: .missing, reason: "no such file"))
        #expect(failure { () throws(FileReadError) in try BoundedFile.read(path: dir, limit: 10) }
                == FileReadError(kind: .notRegularFile, reason: "is a directory"))
        #expect(failure { () throws(FileReadError) in try BoundedFile.read(path: "/dev/zero", limit: 10, accept: .regularFilesAndPipes) }
                == FileReadError(kind: .notRegularFile, reason: "is not a regular file (a character device)"))
        #expect(mkfifo(dir + "/fifo", 0o600) == 0)
        #expect(failure { () throws(FileReadError) in try BoundedFile.read(path: dir + "/fifo", limit: 10) }
                == FileReadError(kind: .notRegularFile, reason: "is not a regular file (a FIFO)"))
        // Standard input may be anything, but is still bounded: /dev/zero stops one byte past.
        let fd = open("/dev/zero", O_RDONLY)
        defer { close(fd) }
        #expect(failure { () throws(FileReadError) in try BoundedFile.read(descriptor: fd, limit: 100_000, accept: .anything) }
                == FileReadError(kind: .tooLarge, reason: "is larger than 100000 bytes"))
    }

    @Test("a pipe is read to its end, or refused one byte past the limit", arguments: [500, 5000])
    func pipe(size: Int) throws {
        var fds: [Int32] = [0, 0]
        #expect(Glibc.pipe(&fds) == 0)
        let writer = fds[1]
        let sent = Data(repeating: 0x41, count: size)
        let thread = Thread {
            sent.withUnsafeBytes { _ = write(writer, $0.baseAddress, $0.count) }
            close(writer)
        }
        thread.start()
        defer { close(fds[0]) }
        let result = Result { () throws(FileReadError) in try BoundedFile.read(descriptor: fds[0], limit: 1000, accept: .regularFilesAndPipes) }
        if size <= 1000 {
            #expect(try result.get() == sent)
        } else {
            #expect(throws: FileReadError(kind: .tooLarge, reason: "is larger than 1000 bytes")) { try result.get() }
        }
    }

    @Test("limits read as a user would: 16 MiB, 1 MiB, 512 KiB, 100 bytes")
    func describe() {
        #expect(BoundedFile.describe(bytes: BoundedFile.dumpLimit) == "16 MiB")
        #expect(BoundedFile.describe(bytes: BoundedFile.configLimit) == "1 MiB")
        #expect(BoundedFile.describe(bytes: 512 << 10) == "512 KiB")
        #expect(BoundedFile.describe(bytes: 100) == "100 bytes")
    }
}
