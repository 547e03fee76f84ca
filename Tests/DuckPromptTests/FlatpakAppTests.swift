import Glibc
import Testing
@testable import DuckPrompt
@testable import DuckPromptCore

/// `FlatpakApp.appID(fromInfo:)`: the app id in a `.flatpak-info` keyfile, as Flatpak writes it.
@Suite("Flatpak app ids")
struct FlatpakAppTests {
    @Test("The [Application] group's name; other groups' names, comments, spaces and a missing or empty name",
          arguments: [
            ("[Application]\nname=org.gnome.Podcasts\nruntime=runtime/org.gnome.Platform/x86_64/45\n", "org.gnome.Podcasts"),
            ("[Instance]\nname=other\ninstance-id=123\n\n[Application]\n# a comment\n  name = org.example.Maps  \n", "org.example.Maps"),
            ("[Instance]\nname=org.not.It\n", nil),
            ("[Application]\nruntime=x\n", nil),
            ("[Application]\nname=\n", nil),
            ("name=org.example.NoGroup\n", nil),
            ("[Application]\r\nname=org.example.Crlf\r\n", "org.example.Crlf"),
            ("", nil),
          ] as [(String, String?)])
    func appID(info: String, expected: String?) {
        #expect(FlatpakApp.appID(fromInfo: info) == expected)
    }

    @Test("A process on the host has no app id; no pid has none")
    func hostProcess() {
        #expect(FlatpakApp.appID(ofProcess: getpid()) == nil)
        #expect(FlatpakApp.appID(ofProcess: 0) == nil)
    }
}
