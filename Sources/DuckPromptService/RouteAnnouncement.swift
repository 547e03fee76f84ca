/// When the service says `RouteChanged` (Docs/dbus.md): each listing of the route watch
/// (`RouteFollower`) goes through this value, which answers whether to say it.
///
/// The service owns its bus name before its watch has read the route; a listener may
/// subscribe and call `WatchRoute()` in that moment. So the service waits (briefly) for the
/// first listing before it serves a call (`startServing()`): the listings until then are the
/// route a listener's `Route()` sees, none is said, and only a later change is. When the first listing comes
/// only after the service began to serve (the server was down, stopped or slow), it is said:
/// a listener cannot have been told it, and the route it knew may be another.
struct RouteAnnouncement: Equatable {
    /// The sink of the last listing (`""`: no sink to route to); nil before the first.
    private(set) var last: String?
    /// The service answers calls: a first listing from now on is said.
    private(set) var serving = false

    /// The service begins to answer calls.
    mutating func startServing() { serving = true }

    /// A listing of the route watch whose route is `sink` (`""` for none).
    /// - Returns: true when `RouteChanged` is to say it.
    mutating func listed(_ sink: String) -> Bool {
        defer { last = sink }
        guard serving else { return false }
        guard let last else { return true }
        return sink != last
    }
}
