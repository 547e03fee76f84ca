/// The four programs that tell of calls on D-Bus: where each one lives, how its calls are read,
/// and which signals announce a change. `BusCalls` reads them once, `BusCallWatch` follows
/// them. A source that is not running (no owner of its name) has no calls: every call is made
/// with auto-start off (ModemManager is activatable on a real system bus, and a prompt must not
/// start it), so the bus answers `ServiceUnknown` at once; any error (no answer within the
/// timeout, a reply of another shape) is no calls too, never an error that stops a prompt.
/// The interfaces, from each project's source (../shared/docs/FACTS.md, "Calls"):
/// - GNOME Calls (`src/calls-dbus-manager.c`, `src/dbus/org.gnome.Calls.Call.xml`): session
///   bus `org.gnome.Calls`, an ObjectManager at `/org/gnome/Calls`, calls at
///   `/org/gnome/Calls/Call/N` with `org.gnome.Calls.Call.State` (u, `CuiCallState`),
///   changes as PropertiesChanged and InterfacesAdded/Removed.
/// - PipeWire's Bluetooth telephony (`spa/plugins/bluez5/telephony.c`, PipeWire 1.4 and
///   later; renamed from `org.freedesktop.PipeWire.Telephony` before its first release):
///   session bus `org.pipewire.Telephony`, an ObjectManager at `/org/pipewire/Telephony`
///   whose objects are the audio gateways (`…/ag0`), each an ObjectManager of its calls
///   (`…/ag0/call0`, `org.pipewire.Telephony.Call1.State` s).
/// - ModemManager (`introspection/org.freedesktop.ModemManager1.*.xml`): system bus
///   `org.freedesktop.ModemManager1`, modems from the ObjectManager at
///   `/org/freedesktop/ModemManager1`, each modem's `org.freedesktop.ModemManager1.Modem.Voice`
///   `Calls` (ao), each call's `org.freedesktop.ModemManager1.Call.State` (i, `MMCallState`);
///   Voice's CallAdded/CallDeleted and the call's StateChanged announce changes.
/// - oFono (its `doc/voicecallmanager-api.txt`, python3-dbusmock's `ofono` template): system
///   bus `org.ofono`, `org.ofono.Manager.GetModems` at `/`, each modem's
///   `org.ofono.VoiceCallManager.GetCalls` (a(oa{sv}), `State` s); ModemAdded/Removed,
///   CallAdded/Removed and the call's PropertyChanged announce changes. (PipeWire can stand
///   in for oFono on the system bus, `bluez5.telephony.provide-ofono`: it answers a{oa{sv}},
///   read as well.)
package enum CallBusSource: CaseIterable, Sendable {
    case gnomeCalls, pipewireTelephony, modemManager, ofono

    /// The `CallSource` its readings name.
    package var source: CallSource {
        switch self {
        case .gnomeCalls: .gnomeCalls
        case .pipewireTelephony: .pipewireTelephony
        case .modemManager: .modemManager
        case .ofono: .ofono
        }
    }

    /// The bus it lives on.
    package var bus: BusKind {
        switch self {
        case .gnomeCalls, .pipewireTelephony: .session
        case .modemManager, .ofono: .system
        }
    }

    /// Its well-known bus name.
    package var name: String {
        switch self {
        case .gnomeCalls: "org.gnome.Calls"
        case .pipewireTelephony: "org.pipewire.Telephony"
        case .modemManager: "org.freedesktop.ModemManager1"
        case .ofono: "org.ofono"
        }
    }

    /// How its calls are named in a reading's `detail` ("ModemManager call /org/…/Call/0").
    private var label: String {
        switch self {
        case .gnomeCalls: "GNOME Calls"
        case .pipewireTelephony: "PipeWire Telephony"
        case .modemManager: "ModemManager"
        case .ofono: "oFono"
        }
    }

    /// The match rules of the signals that tell of a change in its calls (each is sent only
    /// by the name's owner), besides the bus's NameOwnerChanged for its name
    /// (`nameOwnerRule`).
    package var matchRules: [String] {
        let from = "type='signal',sender='\(name)'"
        let objectManager = "\(from),interface='org.freedesktop.DBus.ObjectManager'"
        func propertiesChanged(_ interface: String) -> String {
            "\(from),interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',arg0='\(interface)'"
        }
        switch self {
        case .gnomeCalls:
            return [objectManager, propertiesChanged(Self.gnomeCallInterface)]
        case .pipewireTelephony:
            return [objectManager, propertiesChanged(Self.pipewireCallInterface)]
        case .modemManager:
            return [objectManager,
                    "\(from),interface='\(Self.modemVoiceInterface)'",
                    "\(from),interface='\(Self.modemCallInterface)'",
                    propertiesChanged(Self.modemVoiceInterface),
                    propertiesChanged(Self.modemCallInterface)]
        case .ofono:
            return ["\(from),interface='org.ofono.Manager'",
                    "\(from),interface='org.ofono.VoiceCallManager'",
                    "\(from),interface='org.ofono.VoiceCall'",
                    "\(from),interface='org.ofono.Modem',member='PropertyChanged',arg0='Interfaces'"]
        }
    }

    /// The bus's NameOwnerChanged for its name: it appeared, went away or changed hands.
    package var nameOwnerRule: String {
        "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(name)'"
    }

    /// Its calls now, in object-path order, those in a state that is no call (disconnected,
    /// terminated, unknown) left out.
    /// - Parameter timeoutMs: the most each D-Bus call may take (a source reads with 1 to
    ///   1 + modems + calls of them).
    /// - Returns: none when the source is not running or does not answer as documented.
    package func read(on bus: SessionBusClient, timeoutMs: Int) -> [CallReading] {
        do {
            let calls: [(path: String, state: CallState)]
            switch self {
            case .gnomeCalls: calls = try readGnomeCalls(bus, timeoutMs)
            case .pipewireTelephony: calls = try readPipeWire(bus, timeoutMs)
            case .modemManager: calls = try readModemManager(bus, timeoutMs)
            case .ofono: calls = try readOfono(bus, timeoutMs)
            }
            return calls.filter { $0.state != .none }.sorted { $0.path < $1.path }.map {
                CallReading(source: source, state: $0.state, detail: "\(label) call \($0.path)")
            }
        } catch {
            return []
        }
    }

    private static let objectManagerInterface = "org.freedesktop.DBus.ObjectManager"
    private static let gnomeCallInterface = "org.gnome.Calls.Call"
    private static let pipewireGatewayInterface = "org.pipewire.Telephony.AudioGateway1"
    private static let pipewireCallInterface = "org.pipewire.Telephony.Call1"
    private static let modemVoiceInterface = "org.freedesktop.ModemManager1.Modem.Voice"
    private static let modemCallInterface = "org.freedesktop.ModemManager1.Call"

    /// `GetManagedObjects` of the ObjectManager at `path`, without starting the service.
    private func managedObjects(_ bus: SessionBusClient, _ path: String,
                                _ timeoutMs: Int) throws -> [String: [String: [String: BusValue]]] {
        try bus.call(name, path, Self.objectManagerInterface, "GetManagedObjects", timeoutMs: timeoutMs,
                     autoStart: false) { try $0.readManagedObjects() }
    }

    private func readGnomeCalls(_ bus: SessionBusClient, _ timeoutMs: Int) throws -> [(path: String, state: CallState)] {
        try managedObjects(bus, "/org/gnome/Calls", timeoutMs).compactMap { path, interfaces in
            guard case .uint32(let state)? = interfaces[Self.gnomeCallInterface]?["State"] else { return nil }
            return (path, CallStateMapping.gnomeCalls(state))
        }
    }

    private func readPipeWire(_ bus: SessionBusClient, _ timeoutMs: Int) throws -> [(path: String, state: CallState)] {
        let gateways = try managedObjects(bus, "/org/pipewire/Telephony", timeoutMs)
            .filter { $0.value[Self.pipewireGatewayInterface] != nil }.keys.sorted()
        return try gateways.flatMap { gateway in
            try managedObjects(bus, gateway, timeoutMs).compactMap { path, interfaces in
                guard case .string(let state)? = interfaces[Self.pipewireCallInterface]?["State"] else { return nil }
                return (path, CallStateMapping.telephony(state))
            }
        }
    }

    private func readModemManager(_ bus: SessionBusClient, _ timeoutMs: Int) throws -> [(path: String, state: CallState)] {
        let modems = try managedObjects(bus, "/org/freedesktop/ModemManager1", timeoutMs)
        let calls = modems.values.flatMap { interfaces -> [String] in
            guard case .strings(let calls)? = interfaces[Self.modemVoiceInterface]?["Calls"] else { return [] }
            return calls
        }
        return calls.compactMap { path in
            // A call deleted since the modem listed it is left out.
            let value = try? bus.property("State", of: name, path: path, interface: Self.modemCallInterface,
                                          timeoutMs: timeoutMs, autoStart: false)
            guard case .int32(let state)? = value else { return nil }
            return (path, CallStateMapping.modemManager(state))
        }
    }

    private func readOfono(_ bus: SessionBusClient, _ timeoutMs: Int) throws -> [(path: String, state: CallState)] {
        let modems = try bus.call(name, "/", "org.ofono.Manager", "GetModems", timeoutMs: timeoutMs,
                                  autoStart: false) { try $0.readObjectsWithProperties() }
        return modems.flatMap { modem -> [(path: String, state: CallState)] in
            // A modem whose interfaces are listed and lack the voice-call manager has no calls;
            // one that went away since it was listed neither.
            if case .strings(let interfaces)? = modem.properties["Interfaces"],
               !interfaces.contains("org.ofono.VoiceCallManager") { return [] }
            guard let calls = try? bus.call(name, modem.path, "org.ofono.VoiceCallManager", "GetCalls",
                                            timeoutMs: timeoutMs, autoStart: false, reading: { try $0.readObjectsWithProperties() })
            else { return [] }
            return calls.compactMap { call in
                guard case .string(let state)? = call.properties["State"] else { return nil }
                return (call.path, CallStateMapping.telephony(state))
            }
        }
    }
}
