/// What an MPRIS player on the session bus says of itself, as read once (`PlayerPauser`):
/// the facts the spoken-word policy decides on and a resume checks. Pure value.
///
/// Source: the bus driver (`ListNames`, `GetNameOwner`, `GetConnectionUnixProcessID`) and the
/// player's object `/org/mpris/MediaPlayer2` (`Properties.GetAll` of
/// `org.mpris.MediaPlayer2` and `org.mpris.MediaPlayer2.Player`).
package struct MPRISPlayer: Sendable, Equatable {
    /// `PlaybackStatus`.
    package enum Status: String, Sendable, Equatable {
        case playing = "Playing", paused = "Paused", stopped = "Stopped"
    }

    /// Its well-known name, `org.mpris.MediaPlayer2.<player>[.<instance>]`.
    package var busName: String
    /// The unique name of the connection that owns it (`:1.42`): tells a player from the same
    /// player started again.
    package var uniqueName: String
    /// Its process id (`GetConnectionUnixProcessID`), matched against a sink-input's
    /// `application.process.id`.
    package var pid: Int32
    /// `Identity` (e.g. "mpv", "Podcasts"); empty when it gives none.
    package var identity: String = ""
    /// `DesktopEntry`, the desktop file's name without `.desktop` (e.g. "org.gnome.Podcasts").
    package var desktopEntry: String = ""
    /// `PlaybackStatus`; nil when it says something else.
    package var status: Status?
    /// `CanPause`, `CanPlay`, `CanSeek` (absent: false; `CanControl` false makes all false).
    package var canPause = false, canPlay = false, canSeek = false
    /// `Metadata` `mpris:trackid` (an object path) and `xesam:url`: the track, to tell whether
    /// the user moved to another one while the player was paused.
    package var trackID: String?, url: String?
    /// `Metadata` `xesam:genre`: a string list per the MPRIS spec; a player that sends one
    /// string (mpv-mpris does) gives a list of one.
    package var genres: [String] = []
    /// `Position`, µs from the start of the track; nil when it gives none.
    package var positionUs: Int64?

    package init(busName: String, uniqueName: String, pid: Int32) {
        self.busName = busName
        self.uniqueName = uniqueName
        self.pid = pid
    }

    /// The prefix of every MPRIS player's bus name.
    package static let busNamePrefix = "org.mpris.MediaPlayer2."
    /// The object every MPRIS player exports.
    package static let objectPath = "/org/mpris/MediaPlayer2"
    /// The root interface (`Identity`, `DesktopEntry`).
    package static let rootInterface = "org.mpris.MediaPlayer2"
    /// The playback interface (`PlaybackStatus`, `Metadata`, `Position`, `Pause`, `Play`, `Seek`).
    package static let playerInterface = "org.mpris.MediaPlayer2.Player"

    /// Takes what the two `GetAll` replies say.
    /// - Parameters:
    ///   - root: `org.mpris.MediaPlayer2`'s properties (empty when not read).
    ///   - player: `org.mpris.MediaPlayer2.Player`'s properties.
    package mutating func read(root: [String: BusValue], player: [String: BusValue]) {
        if case .string(let s)? = root["Identity"] { identity = s }
        if case .string(let s)? = root["DesktopEntry"] { desktopEntry = s }
        if case .string(let s)? = player["PlaybackStatus"] { status = Status(rawValue: s) }
        func flag(_ key: String) -> Bool {
            if case .bool(let b)? = player[key] { return b }
            return false
        }
        let control = player["CanControl"].map { $0 == .bool(true) } ?? true
        canPause = control && flag("CanPause")
        canPlay = control && flag("CanPlay")
        canSeek = control && flag("CanSeek")
        if case .int64(let p)? = player["Position"] { positionUs = p }
        if case .dictionary(let metadata)? = player["Metadata"] {
            if case .string(let s)? = metadata["mpris:trackid"] { trackID = s }
            if case .string(let s)? = metadata["xesam:url"] { url = s }
            switch metadata["xesam:genre"] {
            case .strings(let list)?: genres = list
            case .string(let one)?: genres = [one]
            default: genres = []
            }
        }
    }

    /// How messages name it: "org.mpris.MediaPlayer2.mpv (mpv, pid 4242)".
    package var label: String {
        let name = identity.isEmpty ? desktopEntry : identity
        return "\(busName) (\(name.isEmpty ? "" : name + ", ")pid \(pid))"
    }
}
