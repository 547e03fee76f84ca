import FoundationEssentials
import Glibc

/// Whether a D-Bus caller is sandboxed: a Flatpak app (or anything behind an xdg-dbus-proxy
/// run as Flatpak runs it), a Snap, or any process in another mount namespace than the
/// service's. The service runs with the user's full rights; a sandboxed caller may play only
/// what it passes (`PlayFd`, `Say`), never a path the service would open for it, or it could
/// read, and probe, the host's files through the service (Docs/dbus.md, "Sandboxed callers").
///
/// The caller is the process the bus daemon names for the call's sender
/// (`GetConnectionUnixProcessID`, asked by the service's `CallWorker`); behind
/// xdg-dbus-proxy that is the proxy, which Flatpak runs inside the app's sandbox with the
/// app's `/.flatpak-info`, as xdg-desktop-portal relies on.
///
/// `verdict(_:)` is the pure rule (table-tested); `facts(of:)` reads `/proc`.
package enum CallerSandbox {
    /// What `/proc` says of the caller's process.
    package struct Facts: Equatable, Sendable {
        /// `/proc/PID/root/.flatpak-info` exists: its root is a Flatpak sandbox's.
        package var flatpakInfo: Bool
        /// Its AppArmor label (`/proc/PID/attr/current`, e.g. `snap.app.app (enforce)`), nil
        /// without AppArmor.
        package var appArmorLabel: String?
        /// Its mount namespace (`readlink /proc/PID/ns/mnt`, `mnt:[4026531832]`), nil unreadable.
        package var mountNamespace: String?
        /// The service's own (`/proc/self/ns/mnt`).
        package var ownMountNamespace: String?
    }

    /// Why a caller counts as sandboxed, or nil when it runs beside the service with the
    /// same view of the files. A caller whose process cannot be looked at (no pid from the bus,
    /// `/proc` unreadable) counts as sandboxed: the service cannot tell, so it does not lend
    /// its rights.
    package static func verdict(_ facts: Facts?) -> String? {
        guard let facts else { return "its process cannot be looked at" }
        if facts.flatpakInfo { return "it runs in a Flatpak sandbox" }
        if let label = facts.appArmorLabel, label.hasPrefix("snap.") { return "it is confined as a Snap" }
        guard let theirs = facts.mountNamespace, let ours = facts.ownMountNamespace else {
            return "its mount namespace cannot be read"
        }
        return theirs == ours ? nil : "it runs in another mount namespace"
    }

    /// Reads `Facts` for `pid` from `/proc`; nil for no pid or a process that is gone.
    package static func facts(of pid: pid_t?) -> Facts? {
        guard let pid, pid > 0 else { return nil }
        var st = stat()
        guard stat("/proc/\(pid)", &st) == 0 else { return nil }
        let flatpak = access("/proc/\(pid)/root/.flatpak-info", F_OK) == 0
        let label = (try? String(contentsOfFile: "/proc/\(pid)/attr/current", encoding: .utf8))
            .map { String($0.prefix { $0 != "\n" && $0 != "\0" }) }
        return Facts(flatpakInfo: flatpak, appArmorLabel: label, mountNamespace: link("/proc/\(pid)/ns/mnt"),
                     ownMountNamespace: link("/proc/self/ns/mnt"))
    }

    /// The target of a symbolic link, nil when it cannot be read. `readlink(2)`.
    private static func link(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 256)
        let n = readlink(path, &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        return String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
