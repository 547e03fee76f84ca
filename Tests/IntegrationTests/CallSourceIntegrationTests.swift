import DuckPrompt
import DuckPromptTestSupport
import Foundation
import Testing

/// The four D-Bus call sources followed by the library's `BusCallWatch` and read by `BusCalls`,
/// each source played by python3-dbusmock exporting the interface its project documents
/// (`CallBusSource` names them): GNOME Calls and PipeWire's telephony on the lab's session bus,
/// ModemManager and oFono (dbusmock's `ofono` template) on a private `dbus-daemon` standing in
/// for the system bus (`DBUS_SYSTEM_BUS_ADDRESS` points at it while the test runs). The watch
/// starts before each mock, so each source appears after it; each step waits for the watch's
/// `onChange`, and a source's end is seen on its NameOwnerChanged.
@Suite(.serialized)
struct CallSourceIntegrationTests {
    /// dbusmock's Python (the one Debian's python3-dbusmock is installed for, whatever
    /// `python3` is first on PATH).
    static let python = "/usr/bin/python3"

    /// A `dbus-daemon` of its own standing in for the system bus: `DBUS_SYSTEM_BUS_ADDRESS`
    /// names it until the value goes away (then the old value is back), and the daemon is
    /// SIGKILLed.
    final class SystemBus {
        let daemon: Background
        let address: String
        private let previous = ProcessInfo.processInfo.environment["DBUS_SYSTEM_BUS_ADDRESS"]

        /// - Parameter dataHome: the `XDG_DATA_HOME` whose dbus-1/services it activates from.
        init(dataHome: String? = nil) throws {
            daemon = try Background(["dbus-daemon", "--session", "--nofork", "--nopidfile", "--print-address"],
                                    environment: dataHome.map { ["XDG_DATA_HOME": $0] } ?? [:])
            guard daemon.waitForOutput(containing: "\n", timeout: timeLimit(5)),
                  let line = String(decoding: daemon.bytes, as: UTF8.self).split(separator: "\n").first else {
                throw TestFailure("dbus-daemon printed no address")
            }
            address = String(line)
            setenv("DBUS_SYSTEM_BUS_ADDRESS", address, 1)
        }

        deinit {
            if let previous { setenv("DBUS_SYSTEM_BUS_ADDRESS", previous, 1) } else { unsetenv("DBUS_SYSTEM_BUS_ADDRESS") }
            daemon.stop()
        }
    }

    /// A python3-dbusmock service on `bus` (nil: the session bus), owning its name once this
    /// returns (`gdbus wait`); SIGKILLed by `stop()` or at the end.
    final class Mock {
        let process: Background
        let name: String
        let busArguments: [String]

        init(_ arguments: [String], name: String, system: SystemBus?) throws {
            self.name = name
            busArguments = system.map { ["--address=\($0.address)"] } ?? ["--user"]
            process = try Background([CallSourceIntegrationTests.python, "-m", "dbusmock"] + arguments,
                                     environment: system.map { ["DBUS_SYSTEM_BUS_ADDRESS": $0.address] } ?? [:],
                                     captureStderr: true)
            let gdbusBus = system.map { ["--address", $0.address] } ?? ["--session"]
            let waited = try run(["gdbus", "wait"] + gdbusBus + ["--timeout", "\(Int(timeLimit(10)))", name], check: false)
            guard waited.status == 0 else {
                throw TestFailure("dbusmock did not take \(name): \(waited.stderr) \(String(decoding: process.bytes, as: UTF8.self))")
            }
        }

        /// `busctl call NAME PATH INTERFACE METHOD SIGNATURE ARGS…` on its bus.
        func call(_ path: String, _ interface: String, _ method: String, _ arguments: [String] = []) throws {
            try run(["busctl"] + busArguments + ["call", name, path, interface, method] + arguments)
        }

        /// dbusmock's own interface on `path`: `AddObject`, `UpdateProperties`, `EmitSignal`…
        func mock(_ path: String, _ method: String, _ arguments: [String]) throws {
            try call(path, "org.freedesktop.DBus.Mock", method, arguments)
        }

        func stop() { process.stop() }

        deinit { process.stop() }
    }

    /// What the watch's `onChange` was given, in order.
    final class Changes: @unchecked Sendable {
        private let condition = NSCondition()
        private var all: [[CallReading]] = []

        func add(_ readings: [CallReading]) {
            condition.withLock { all.append(readings) }
            condition.broadcast()
        }

        /// Waits until the last change is `expected` (woken by each change, at most
        /// `timeLimit(5)` s); records a failure naming what came instead.
        func expectLast(_ expected: [CallReading], _ step: String, sourceLocation: SourceLocation = #_sourceLocation) {
            let deadline = Date().addingTimeInterval(timeLimit(5))
            let (arrived, seen) = condition.withLock { () -> (Bool, [[CallReading]]) in
                while all.last ?? [] != expected || all.isEmpty {
                    if !condition.wait(until: deadline) { return (false, all) }
                }
                return (true, all)
            }
            #expect(arrived, "\(step): expected \(expected.map(\.summary)), changes were \(seen.map { $0.map(\.summary) })",
                    sourceLocation: sourceLocation)
        }
    }

    /// ModemManager as dbusmock plays it: a modem with the Voice interface, and its calls as
    /// ModemManager reports them (the call object, the modem's `Calls`, `CallAdded` /
    /// `CallDeleted`).
    enum MM {
        static let paths = (root: "/org/freedesktop/ModemManager1", modem: "/org/freedesktop/ModemManager1/Modem/0",
                            call: "/org/freedesktop/ModemManager1/Call/0")
        static let interfaces = (voice: "org.freedesktop.ModemManager1.Modem.Voice", call: "org.freedesktop.ModemManager1.Call")

        static func addModem(_ mock: Mock) throws {
            try mock.mock(paths.root, "AddObject", ["ssa{sv}a(ssss)", paths.modem, interfaces.voice, "1", "Calls", "ao", "0", "0"])
            try mock.mock(paths.root, "EmitSignal", ["sssav", "org.freedesktop.DBus.ObjectManager", "InterfacesAdded", "oa{sa{sv}}",
                                                     "2", "o", paths.modem, "a{sa{sv}}", "1", interfaces.voice, "1", "Calls", "ao", "0"])
        }

        /// An incoming call, ringing (`MM_CALL_STATE_RINGING_IN`, 3).
        static func addIncomingCall(_ mock: Mock) throws {
            try mock.mock(paths.root, "AddObject", ["ssa{sv}a(ssss)", paths.call, interfaces.call, "3", "State", "i", "3",
                                                    "Direction", "i", "1", "Number", "s", "+15551234", "0"])
            try mock.mock(paths.modem, "UpdateProperties", ["sa{sv}", interfaces.voice, "1", "Calls", "ao", "1", paths.call])
            try mock.mock(paths.modem, "EmitSignal", ["sssav", interfaces.voice, "CallAdded", "o", "1", "o", paths.call])
        }

        static func deleteCall(_ mock: Mock) throws {
            try mock.mock(paths.modem, "UpdateProperties", ["sa{sv}", interfaces.voice, "1", "Calls", "ao", "0"])
            try mock.mock(paths.root, "RemoveObject", ["s", paths.call])
            try mock.mock(paths.modem, "EmitSignal", ["sssav", interfaces.voice, "CallDeleted", "o", "1", "o", paths.call])
        }
    }

    static func reading(_ source: CallSource, _ state: CallState, _ detail: String) -> CallReading {
        CallReading(source: source, state: state, detail: detail)
    }

    @Test("GNOME Calls (session bus, ObjectManager /org/gnome/Calls, org.gnome.Calls.Call.State u): incoming → active → held → removed, then a call and the app's end")
    func gnomeCalls() throws {
        let system = try SystemBus()
        defer { withExtendedLifetime(system) {} }
        let changes = Changes()
        let watch = try BusCallWatch { changes.add($0) }
        defer { watch.stop() }
        #expect(watch.readings == [])
        let mock = try Mock(["--session", "-m", "org.gnome.Calls", "/org/gnome/Calls", "org.gnome.Calls.Mock"],
                            name: "org.gnome.Calls", system: nil)
        let root = "/org/gnome/Calls", call = "/org/gnome/Calls/Call/1", interface = "org.gnome.Calls.Call"
        func state(_ value: Int) -> CallReading { Self.reading(.gnomeCalls, CallStateMapping.gnomeCalls(UInt32(value)), "GNOME Calls call \(call)") }
        try mock.mock(root, "AddObject", ["ssa{sv}a(ssss)", call, interface, "2", "State", "u", "5", "Inbound", "b", "true", "0"])
        try mock.mock(root, "EmitSignal", ["sssav", "org.freedesktop.DBus.ObjectManager", "InterfacesAdded", "oa{sa{sv}}",
                                           "2", "o", call, "a{sa{sv}}", "1", interface, "1", "State", "u", "5"])
        changes.expectLast([state(5)], "incoming (5)")
        #expect(state(5).state == .ringing)
        try mock.mock(call, "UpdateProperties", ["sa{sv}", interface, "1", "State", "u", "1"])
        changes.expectLast([state(1)], "active (1)")
        try mock.mock(call, "UpdateProperties", ["sa{sv}", interface, "1", "State", "u", "2"])
        changes.expectLast([state(2)], "held (2)")
        #expect(watch.readings == [state(2)])
        try mock.mock(root, "RemoveObject", ["s", call])
        try mock.mock(root, "EmitSignal", ["sssav", "org.freedesktop.DBus.ObjectManager", "InterfacesRemoved", "oas",
                                           "2", "o", call, "as", "1", interface])
        changes.expectLast([], "removed")
        try mock.mock(root, "AddObject", ["ssa{sv}a(ssss)", call, interface, "1", "State", "u", "3", "0"])
        try mock.mock(root, "EmitSignal", ["sssav", "org.freedesktop.DBus.ObjectManager", "InterfacesAdded", "oa{sa{sv}}",
                                           "2", "o", call, "a{sa{sv}}", "1", interface, "1", "State", "u", "3"])
        changes.expectLast([state(3)], "dialing (3)")
        mock.stop()
        changes.expectLast([], "GNOME Calls ended")
    }

    @Test("PipeWire Telephony (session bus, org.pipewire.Telephony, gateways' ObjectManagers, Call1.State s): incoming → active → held → removed")
    func pipewireTelephony() throws {
        let system = try SystemBus()
        defer { withExtendedLifetime(system) {} }
        let changes = Changes()
        let watch = try BusCallWatch { changes.add($0) }
        defer { watch.stop() }
        let mock = try Mock(["--session", "-m", "org.pipewire.Telephony", "/org/pipewire/Telephony", "org.pipewire.Telephony.Mock"],
                            name: "org.pipewire.Telephony", system: nil)
        let root = "/org/pipewire/Telephony", gateway = "/org/pipewire/Telephony/ag0", call = "/org/pipewire/Telephony/ag0/call0"
        let interface = "org.pipewire.Telephony.Call1"
        // The gateway, an ObjectManager of the calls under it (as telephony.c's ag_get_managed_objects).
        try mock.mock(root, "AddObject", ["ssa{sv}a(ssss)", gateway, "org.pipewire.Telephony.AudioGateway1",
                                          "1", "Address", "s", "00:11:22:33:44:55", "0"])
        try mock.mock(gateway, "AddMethod", ["sssss", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", "", "a{oa{sa{sv}}}",
                                             "ret = {dbus.ObjectPath(k): objects[k].props for k in objects.keys() if k.startswith('\(gateway)/')}"])
        try mock.mock(root, "EmitSignal", ["sssav", "org.freedesktop.DBus.ObjectManager", "InterfacesAdded", "oa{sa{sv}}",
                                           "2", "o", gateway, "a{sa{sv}}", "1", "org.pipewire.Telephony.AudioGateway1", "0"])
        func state(_ word: String) -> CallReading { Self.reading(.pipewireTelephony, CallStateMapping.telephony(word), "PipeWire Telephony call \(call)") }
        try mock.mock(root, "AddObject", ["ssa{sv}a(ssss)", call, interface, "2", "State", "s", "incoming",
                                          "LineIdentification", "s", "+15551234", "0"])
        try mock.mock(gateway, "EmitSignal", ["sssav", "org.freedesktop.DBus.ObjectManager", "InterfacesAdded", "oa{sa{sv}}",
                                              "2", "o", call, "a{sa{sv}}", "1", interface, "1", "State", "s", "incoming"])
        changes.expectLast([state("incoming")], "incoming")
        #expect(state("incoming").state == .ringing)
        try mock.mock(call, "UpdateProperties", ["sa{sv}", interface, "1", "State", "s", "active"])
        changes.expectLast([state("active")], "active")
        try mock.mock(call, "UpdateProperties", ["sa{sv}", interface, "1", "State", "s", "held"])
        changes.expectLast([state("held")], "held")
        try mock.mock(root, "RemoveObject", ["s", call])
        try mock.mock(gateway, "EmitSignal", ["sssav", "org.freedesktop.DBus.ObjectManager", "InterfacesRemoved", "oas",
                                              "2", "o", call, "as", "1", interface])
        changes.expectLast([], "removed")
        mock.stop()   // (alive until here: the call's end above was not the mock's)
    }

    @Test("ModemManager (system bus, Modem.Voice Calls ao, Call.State i): ringing-in → active → held → deleted")
    func modemManager() throws {
        let system = try SystemBus()
        defer { withExtendedLifetime(system) {} }
        let changes = Changes()
        let watch = try BusCallWatch { changes.add($0) }
        defer { watch.stop() }
        let mock = try Mock(["--system", "-m", "org.freedesktop.ModemManager1", "/org/freedesktop/ModemManager1", "org.freedesktop.ModemManager1"],
                            name: "org.freedesktop.ModemManager1", system: system)
        let call = MM.paths.call, interface = MM.interfaces.call
        try MM.addModem(mock)
        func state(_ value: Int32) -> CallReading { Self.reading(.modemManager, CallStateMapping.modemManager(value), "ModemManager call \(call)") }
        try MM.addIncomingCall(mock)
        changes.expectLast([state(3)], "ringing-in (3)")
        #expect(state(3).state == .ringing)
        for (old, new) in [(Int32(3), Int32(4)), (4, 5)] {
            try mock.mock(call, "UpdateProperties", ["sa{sv}", interface, "1", "State", "i", "\(new)"])
            try mock.mock(call, "EmitSignal", ["sssav", interface, "StateChanged", "iiu", "3", "i", "\(old)", "i", "\(new)", "u", "0"])
            changes.expectLast([state(new)], "\(old) → \(new)")
        }
        #expect(watch.readings.map(\.state) == [.held])
        try MM.deleteCall(mock)
        changes.expectLast([], "deleted")
        mock.stop()   // (alive until here: the call's end above was not the mock's)
    }

    @Test("oFono (system bus, dbusmock's ofono template: GetModems, GetCalls a(oa{sv}), State s): dialing → held → incoming → hung up, then a call and oFono's end; BusCalls.read sees what the watch sees")
    func ofono() throws {
        let system = try SystemBus()
        defer { withExtendedLifetime(system) {} }
        let changes = Changes()
        let watch = try BusCallWatch { changes.add($0) }
        defer { watch.stop() }
        let mock = try Mock(["--system", "-t", "ofono"], name: "org.ofono", system: system)
        let call = "/ril_0/voicecall01"
        func state(_ word: String) -> CallReading { Self.reading(.ofono, CallStateMapping.telephony(word), "oFono call \(call)") }
        try mock.call("/ril_0", "org.ofono.VoiceCallManager", "Dial", ["ss", "+15551234", "default"])
        changes.expectLast([state("dialing")], "dialing")
        #expect(state("dialing").state == .active)
        #expect(BusCalls.read() == [state("dialing")])
        for word in ["held", "incoming"] {
            // oFono tells of a call's change with its own PropertyChanged (not PropertiesChanged).
            try mock.mock(call, "UpdateProperties", ["sa{sv}", "org.ofono.VoiceCall", "1", "State", "s", word])
            try mock.mock(call, "EmitSignal", ["sssav", "org.ofono.VoiceCall", "PropertyChanged", "sv", "2", "s", "State", "v", "s", word])
            changes.expectLast([state(word)], word)
        }
        // The template's Hangup removes the call, but its CallRemoved, sent from the call's
        // object once that is off the bus, never leaves (python3-dbusmock 0.28.7): oFono's own,
        // from the modem's VoiceCallManager, is sent here.
        try mock.call(call, "org.ofono.VoiceCall", "Hangup")
        try mock.mock("/ril_0", "EmitSignal", ["sssav", "org.ofono.VoiceCallManager", "CallRemoved", "o", "1", "o", call])
        changes.expectLast([], "hung up")
        try mock.call("/ril_0", "org.ofono.VoiceCallManager", "Dial", ["ss", "+15551234", "default"])
        changes.expectLast([state("dialing")], "dialing again")
        mock.stop()
        changes.expectLast([], "oFono ended")
        #expect(BusCalls.read() == [])
    }

    @Test("With no source on either bus, BusCalls.read is [] in well under 100 ms, and with no system bus at all too; a watch starts and stops at once")
    func nothingThere() throws {
        func timed(_ label: String) -> [Double] {
            var times: [Double] = []
            for _ in 0..<10 {
                let start = ContinuousClock.now
                let calls = BusCalls.read()
                times.append(seconds(ContinuousClock.now - start) * 1000)
                #expect(calls == [], "\(label): \(calls)")
            }
            times.sort()
            print("BusCalls.read, \(label): median \(formatted(times[5])) ms, max \(formatted(times[9])) ms")
            return times
        }
        let limit = ProcessInfo.processInfo.environment["DUCKPROMPT_TEST_SANITIZER"] == nil ? 100.0 : 500.0
        do {
            let system = try SystemBus()
            let times = timed("nothing on either bus")
            #expect(times[5] < limit)
            let start = ContinuousClock.now
            let watch = try BusCallWatch { _ in }
            let started = seconds(ContinuousClock.now - start) * 1000
            #expect(watch.readings == [])
            let stopping = ContinuousClock.now
            watch.stop()
            let stopped = seconds(ContinuousClock.now - stopping) * 1000
            print("BusCallWatch: started (first reading) in \(formatted(started)) ms, stopped in \(formatted(stopped)) ms")
            #expect(started < limit && stopped < limit)
            withExtendedLifetime(system) {}
        }
        let previous = ProcessInfo.processInfo.environment["DBUS_SYSTEM_BUS_ADDRESS"]
        setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/nonexistent/duckprompt-no-system-bus", 1)
        defer { if let previous { setenv("DBUS_SYSTEM_BUS_ADDRESS", previous, 1) } else { unsetenv("DBUS_SYSTEM_BUS_ADDRESS") } }
        let times = timed("no system bus")
        #expect(times[5] < limit)
    }

    @Test("An activatable ModemManager and oFono (as on a real system bus) are never started: BusCalls.read and a watch read none of them, and their activation ran only for a plain busctl call")
    func noAutoStart() throws {
        let scratch = try Scratch()
        let services = scratch.path("dbus-1/services"), started = scratch.path("started")
        try FileManager.default.createDirectory(atPath: services, withIntermediateDirectories: true)
        let script = scratch.path("activate")
        try "#!/bin/sh\necho \"$1\" >> '\(started)'\n".write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        for name in ["org.freedesktop.ModemManager1", "org.ofono"] {
            try "[D-BUS Service]\nName=\(name)\nExec=\(script) \(name)\n"
                .write(toFile: "\(services)/\(name).service", atomically: true, encoding: .utf8)
        }
        let system = try SystemBus(dataHome: scratch.url.path)
        defer { withExtendedLifetime(system) {} }
        #expect(BusCalls.read() == [])
        let watch = try BusCallWatch { _ in }
        #expect(watch.readings == [])
        watch.stop()
        #expect(!FileManager.default.fileExists(atPath: started), "activated: \((try? String(contentsOfFile: started, encoding: .utf8)) ?? "")")
        // The same bus starts it for a call that allows it, so the check above could see a
        // start. (The script takes no name: the call gets no answer, and dbus-daemon does
        // not answer for the exited child either; busctl gives up after 0.5 s.)
        let plain = try run(["busctl", "--address=\(system.address)", "--timeout=0.5", "call", "org.ofono", "/",
                             "org.ofono.Manager", "GetModems"], check: false)
        #expect(plain.status != 0)
        #expect(eventually(timeout: timeLimit(5)) { (try? String(contentsOfFile: started, encoding: .utf8)) == "org.ofono\n" })
    }

    private func formatted(_ milliseconds: Double) -> String { String(format: "%.1f", milliseconds) }
}

extension CallReading {
    /// "ringing GNOME Calls call /org/gnome/Calls/Call/1", for failure messages.
    var summary: String { "\(state.rawValue) \(detail)" }
}
