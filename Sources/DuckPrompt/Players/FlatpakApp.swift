import FoundationEssentials
import Glibc

/// Ties a Flatpak app's MPRIS player to its streams by the app's id (`org.gnome.Podcasts`),
/// where the process ids cannot: inside its sandbox an app's `application.process.id` is a pid
/// of its own pid namespace, and its player is on the bus through xdg-dbus-proxy (the bus
/// daemon gives the proxy's pid). pipewire-pulse marks a Flatpak client's streams with the app
/// id (`pipewire.access.portal.app_id`, read from the client's `/.flatpak-info`); the player's
/// side is the `/.flatpak-info` in the root of its bus connection's process (Flatpak runs the
/// proxy with the app's). PulseAudio marks nothing: there a Flatpak player's streams are
/// ducked, not paused.
enum FlatpakApp {
    /// The sink-input property pipewire-pulse sets to a Flatpak client's app id.
    static let streamKey = "pipewire.access.portal.app_id"

    /// The app id in a `.flatpak-info` keyfile: the `name` key of its `[Application]` group;
    /// nil when there is none. Pure.
    static func appID(fromInfo text: String) -> String? {
        var group = ""
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingWhitespace()
            if line.hasPrefix("#") || line.isEmpty { continue }
            if line.hasPrefix("[") && line.hasSuffix("]") {
                group = String(line.dropFirst().dropLast())
                continue
            }
            guard group == "Application", let equals = line.firstIndex(of: "=") else { continue }
            if line[..<equals].trimmingWhitespace() == "name" {
                let value = String(line[line.index(after: equals)...].trimmingWhitespace())
                return value.isEmpty ? nil : value
            }
        }
        return nil
    }

    /// The app id of process `pid`: from `/proc/PID/root/.flatpak-info`, a regular file of at
    /// most 64 KiB (`BoundedFile`: judged by its size before a byte is read, so a sandbox
    /// cannot make us read a large one); nil for a process on the host, or one that cannot be
    /// looked at.
    static func appID(ofProcess pid: Int32) -> String? {
        guard pid > 0, let data = try? BoundedFile.read(path: "/proc/\(pid)/root/.flatpak-info", limit: 65536) else {
            return nil
        }
        return appID(fromInfo: String(decoding: data, as: UTF8.self))
    }
}
