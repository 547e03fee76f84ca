import DuckPromptTestSupport
import Foundation
import Testing

/// Bad input and absent servers: the documented exit code, a one-line message, no volume
/// changed.
@Suite(.serialized)
struct ErrorIntegrationTests {
    @Test("No server at the given address: exit 69 in under 6 s, naming the server")
    func noServer() throws {
        try TestServer.requireServer()
        let file = try TestAudio.sine("short.wav", hertz: 1000, seconds: 0.2)
        let result = try run([duckpromptBinary, "play", "-s", "unix:/nonexistent/duckprompt/native", file], check: false)
        #expect(result.status == 69)
        #expect(result.seconds < timeLimit(6))
        #expect(result.stderr.hasPrefix("duckprompt: "))
        #expect(result.stderr.contains("unix:/nonexistent/duckprompt/native"))
        #expect(result.stderr.split(separator: "\n").count == 1)
    }

    @Test("A server that accepts but never answers: exit 69 after the 5 s timeout, under 6 s")
    func silentServer() throws {
        try TestServer.requireServer()
        let listener = try SilentListener()
        defer { listener.close() }
        let file = try TestAudio.sine("short.wav", hertz: 1000, seconds: 0.2)
        let result = try run([duckpromptBinary, "play", "-s", "tcp:127.0.0.1:\(listener.port)", file], check: false)
        #expect(result.status == 69, "\(result.stderr)")
        #expect(result.seconds >= 4.5 && result.seconds < timeLimit(6), "took \(result.seconds) s")
        #expect(result.stderr.contains("127.0.0.1:\(listener.port)"))
    }

    @Test("Missing file (66) and a text file named .wav (65) change no volume")
    func badFiles() throws {
        let (rig, app, before) = try InputIntegrationTests.musicRig()
        defer { withExtendedLifetime(rig) {} }

        let missing = try run([duckpromptBinary, "play", "/nonexistent/turn-left.wav"], check: false)
        #expect(missing.status == 66)
        #expect(missing.stderr == "duckprompt: /nonexistent/turn-left.wav: no such file\n")

        let text = TestAudio.directory.appendingPathComponent("not-audio.wav").path
        try "In 200 metres, turn left.\n".write(toFile: text, atomically: true, encoding: .utf8)
        let bad = try run([duckpromptBinary, "play", text], check: false)
        #expect(bad.status == 65)
        #expect(bad.stderr.hasPrefix("duckprompt: \(text): "))
        #expect(bad.stderr.split(separator: "\n").count == 1)

        #expect(try Pactl.volume(ofApp: app) == before)
    }
}

/// A TCP socket on 127.0.0.1 that listens but never accepts or answers: the kernel completes
/// the handshake, so a client waits for a reply that never comes.
final class SilentListener {
    let fd: Int32
    let port: UInt16

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket() failed") }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 8) == 0 else { throw TestFailure("bind/listen failed") }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        self.fd = fd
        port = UInt16(bigEndian: addr.sin_port)
    }

    func close() { Glibc.close(fd) }
}
