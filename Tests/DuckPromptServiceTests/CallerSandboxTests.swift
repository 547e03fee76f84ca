@testable import DuckPromptService
import Glibc
import Testing

/// `CallerSandbox.verdict`: which D-Bus callers count as sandboxed (Play by path refused).
@Suite struct CallerSandboxTests {
    typealias Facts = CallerSandbox.Facts
    static let host = "mnt:[4026531832]"

    static let rows: [(String, Facts?, Bool)] = [
        ("beside the service", Facts(flatpakInfo: false, appArmorLabel: nil, mountNamespace: host, ownMountNamespace: host), false),
        ("unconfined AppArmor", Facts(flatpakInfo: false, appArmorLabel: "unconfined", mountNamespace: host, ownMountNamespace: host), false),
        ("a Flatpak (its proxy's /.flatpak-info)", Facts(flatpakInfo: true, appArmorLabel: nil, mountNamespace: "mnt:[1]", ownMountNamespace: host), true),
        ("/.flatpak-info even in our namespace", Facts(flatpakInfo: true, appArmorLabel: nil, mountNamespace: host, ownMountNamespace: host), true),
        ("a Snap", Facts(flatpakInfo: false, appArmorLabel: "snap.maps.maps (enforce)", mountNamespace: host, ownMountNamespace: host), true),
        ("another mount namespace (bubblewrap)", Facts(flatpakInfo: false, appArmorLabel: nil, mountNamespace: "mnt:[4026532174]", ownMountNamespace: host), true),
        ("its namespace unreadable", Facts(flatpakInfo: false, appArmorLabel: nil, mountNamespace: nil, ownMountNamespace: host), true),
        ("no process to look at", nil, true),
    ]

    @Test("verdict", arguments: rows)
    func verdict(_ row: (String, Facts?, Bool)) {
        #expect((CallerSandbox.verdict(row.1) != nil) == row.2, "\(row.0)")
    }

    @Test("this test process is beside itself")
    func selfIsNotSandboxed() {
        #expect(CallerSandbox.verdict(CallerSandbox.facts(of: getpid())) == nil)
    }
}
