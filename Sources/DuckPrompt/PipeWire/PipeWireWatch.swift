import CPipeWireNodes
import Glibc

/// What the PipeWire node of a sink-input applied, one value per change, in order: the
/// channel volumes a user's `pactl set-sink-input-volume` set between two of the duck's ramp
/// writes, even when the next write overwrote it within a millisecond. pipewire-pulse answers
/// an info request with the state at that moment, so through libpulse alone such a change is
/// never seen (1-2 of 20 changes at random points of a ramp; Docs/design.md). A native
/// PipeWire client subscribed to the node's Props sees each one.
///
/// The only Swift caller of `CPipeWireNodes` (the C layer over libpipewire). Its PipeWire loop
/// has no thread of its own: libpulse's threaded mainloop polls the loop's file descriptor
/// (`pa_mainloop_api.io_new`) and dispatches it with the loop lock held, so every callback
/// and call runs under the one lock that guards the connection.
///
/// It also follows the default sink (`followDefaultSinkLocked`): the "default" metadata's
/// `default.audio.sink`, and reads it anew when asked (`startDefaultSinkReadLocked`). PipeWire
/// 0.3.65's metadata stops telling every earlier binding of changes once any client left while
/// its own bind was pending (module-metadata/metadata.c counts that bind as pending for ever):
/// from then on neither this follower nor pipewire-pulse's copy for a long-lived pulse client
/// hears of a new default, while a new binding still gets the current value. CI met it after
/// test runs that kill clients and servers; `Docs/design.md` says what each caller does.
///
/// A sink-input's node is named by its properties `object.id` and `object.serial`
/// (pipewire-pulse sets both); a node whose `object.serial` differs (another daemon than the
/// pulse server's, an id reused) is refused and reported lost.
final class PipeWireWatch: @unchecked Sendable {
    // @unchecked: every member is touched with the connection's loop lock held.
    private let handle: OpaquePointer
    private let mainloop: OpaquePointer
    private var io: MainloopIO?
    /// Where volumes and losses go: every inbox gets each (the sessions sharing a held
    /// connection each pick their own nodes). Lock held.
    var inboxes: [EventInbox] = []
    /// How many callers follow each node (`watchLocked` minus `unwatchLocked`). Lock held.
    private var watchers: [UInt32: Int] = [:]
    /// Set when the PipeWire connection failed: nothing is followed any more. Lock held.
    private(set) var failed = false
    /// The default sink's name as the metadata says (`.some(nil)`: none), nil until it is
    /// known. Lock held.
    private(set) var defaultSink: String??
    /// Told of each default sink change, on the loop thread. Lock held.
    private var defaultSinkListeners: [(String?) -> Void] = []
    /// The last read of the default sink (`startDefaultSinkReadLocked`). Lock held.
    private(set) var defaultSinkRead: DefaultSinkRead = .none

    /// Where a read of the default sink is.
    enum DefaultSinkRead: Equatable {
        /// None was asked for.
        case none
        /// Asked for; the answer has not come.
        case pending
        /// The metadata's `default.audio.sink` at the read (nil: it names none).
        case named(String?)
        /// The daemon has no "default" metadata (no WirePlumber), or the read failed.
        case unknown
    }

    /// Connects to the PipeWire daemon (`PIPEWIRE_REMOTE`, else `$XDG_RUNTIME_DIR/pipewire-0`)
    /// and hooks its loop into `connection`'s mainloop. Lock held.
    /// - Returns: nil when PipeWire cannot be reached (a PulseAudio system, another runtime
    ///   directory): the caller follows volumes through libpulse alone.
    /// libpipewire: `pw_context_connect`, `pw_core_get_registry`; libpulse: `io_new`.
    init?(mainloop: OpaquePointer) {
        var error: Int32 = 0
        guard let handle = dp_pw_connect(PipeWireWatch.onVolumes, PipeWireWatch.onLost, nil, &error) else {
            DebugTrace.write("pipewire: cannot connect (\(error))")
            return nil
        }
        self.handle = handle
        self.mainloop = mainloop
        dp_pw_set_userdata(handle, Unmanaged.passUnretained(self).toOpaque())
        io = MainloopIO(mainloop: mainloop, fd: dp_pw_fd(handle)) { [unowned self] in dispatchLocked() }
        dispatchLocked()
    }

    /// Unhooks and disconnects. Lock held.
    deinit {
        io?.stop()
        dp_pw_free(handle)
    }

    /// Starts following the node of `input` (nothing when it names none): its current volume
    /// arrives first, then each change, in every inbox's `nodeVolumes`. Lock held.
    /// - Returns: the node followed (its `object.id`), or nil: no node properties, or PipeWire
    ///   failed.
    func watchLocked(_ input: SinkInput) -> UInt32? {
        guard !failed, let node = input.properties["object.id"].flatMap({ UInt32($0) }) else { return nil }
        let serial = input.properties["object.serial"].flatMap { UInt64($0) } ?? 0
        if let count = watchers[node], dp_pw_refresh(handle, node) == 0 {
            // Followed already (the prompt this one interrupted): its values reach every
            // inbox; the current one is asked for again for the newcomer.
            watchers[node] = count + 1
        } else {
            guard dp_pw_watch(handle, node, serial) == 0 else { return nil }
            watchers[node] = 1
        }
        dispatchLocked()
        return node
    }

    /// Stops following a node, once every caller that asked for it has. Lock held.
    func unwatchLocked(node: UInt32) {
        guard let count = watchers[node] else { return }
        if count > 1 {
            watchers[node] = count - 1
        } else {
            watchers[node] = nil
            dp_pw_unwatch(handle, node)
        }
    }

    /// Follows the default sink from now on: `changed` is called, lock held on the loop
    /// thread, with its name once the metadata is bound, then on each change. Once the
    /// PipeWire connection failed, nothing more comes (`failed`).
    /// libpipewire: `pw_registry` globals, `pw_metadata` properties.
    func followDefaultSinkLocked(_ changed: @escaping (String?) -> Void) {
        guard !failed else { return }
        defaultSinkListeners.append(changed)
        if let known = defaultSink { changed(known) }
        guard defaultSinkListeners.count == 1 else { return }
        if dp_pw_follow_default_sink(handle, PipeWireWatch.onDefaultSink, PipeWireWatch.onDefaultSinkRead) < 0 { return }
        dispatchLocked()
    }

    /// Starts reading the default sink as the metadata says now, with a binding of its own
    /// (see the type's note: a long-lived binding may no longer hear of changes), following it
    /// too on the first call. `defaultSinkRead` is `.pending` until the answer, which comes on
    /// the loop thread with a `pa_threaded_mainloop_signal`: one round trip to the daemon and
    /// its ping of the metadata's owner (WirePlumber). A read in flight serves a second call.
    /// Lock held.
    /// - Returns: false when PipeWire failed or the registry cannot be listened to.
    /// libpipewire: `pw_registry_bind` of the "default" metadata, `pw_core_sync`.
    func startDefaultSinkReadLocked() -> Bool {
        guard !failed else { return false }
        if defaultSinkListeners.isEmpty { followDefaultSinkLocked { _ in } }
        if defaultSinkRead != .pending {
            defaultSinkRead = .pending
            guard dp_pw_read_default_sink(handle) == 0 else {
                defaultSinkRead = .unknown
                return false
            }
        }
        dispatchLocked()
        return !failed
    }

    /// Runs the PipeWire loop's ready work (its callbacks fill the inbox). Lock held.
    private func dispatchLocked() {
        guard !failed else { return }
        if dp_pw_dispatch(handle) < 0 { lostLocked(node: UInt32.max, res: -EIO) }
    }

    fileprivate func volumesLocked(node: UInt32, linear: UnsafeBufferPointer<Float>) {
        // pipewire-pulse's own conversion, libpulse's function: round(cbrt(linear) × PA_VOLUME_NORM).
        let volume = ChannelVolumes(linear.map { VolumeMath.volume(fromLinear: Double($0)) })
        for inbox in inboxes { inbox.nodeVolumes.append((node, volume)) }
        MainloopIO.signal(mainloop)
    }

    fileprivate func lostLocked(node: UInt32, res: Int32) {
        DebugTrace.write("pipewire: lost node \(node) (\(res))")
        if node == UInt32.max {
            failed = true
            if defaultSinkRead == .pending { defaultSinkRead = .unknown }
            // Its descriptor would stay readable (hung up): no more polling. libpulse allows
            // an io event to be freed from its own callback.
            io?.stop()
        }
        for inbox in inboxes { inbox.lostNodes.append(node) }
        MainloopIO.signal(mainloop)
    }

    private static let onVolumes: dp_pw_volumes_cb = { userdata, node, linear, channels in
        let watch = Unmanaged<PipeWireWatch>.fromOpaque(userdata!).takeUnretainedValue()
        watch.volumesLocked(node: node, linear: UnsafeBufferPointer(start: linear, count: Int(channels)))
    }

    private static let onDefaultSink: dp_pw_default_sink_cb = { userdata, name in
        let watch = Unmanaged<PipeWireWatch>.fromOpaque(userdata!).takeUnretainedValue()
        let sink = name.map { String(cString: $0) }
        DebugTrace.write("pipewire: the default sink is \(sink ?? "none")")
        watch.defaultSink = .some(sink)
        for listener in watch.defaultSinkListeners { listener(sink) }
        MainloopIO.signal(watch.mainloop)
    }

    private static let onDefaultSinkRead: dp_pw_default_read_cb = { userdata, res, name in
        let watch = Unmanaged<PipeWireWatch>.fromOpaque(userdata!).takeUnretainedValue()
        let sink = name.map { String(cString: $0) }
        DebugTrace.write("pipewire: read the default sink anew: \(res == 0 ? sink ?? "none" : "unknown (\(res))")")
        watch.defaultSinkRead = res == 0 ? .named(sink) : .unknown
        MainloopIO.signal(watch.mainloop)
    }

    private static let onLost: dp_pw_lost_cb = { userdata, node, res in
        let watch = Unmanaged<PipeWireWatch>.fromOpaque(userdata!).takeUnretainedValue()
        watch.lostLocked(node: node, res: res)
    }
}
