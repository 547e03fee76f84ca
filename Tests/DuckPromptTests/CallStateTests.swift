import Testing
@testable import DuckPrompt
@testable import DuckPromptCore

/// Each source's state values as `CallStateMapping` reads them, every documented value once
/// (and one past the end): GNOME Calls' `CuiCallState` (libcall-ui `cui-call.h`, exported as
/// `org.gnome.Calls.Call.State` by `src/calls-dbus-manager.c`), ModemManager's `MMCallState`
/// (`ModemManager-enums.h`), the words of oFono's and PipeWire's `State` (PipeWire's
/// `spa/plugins/bluez5/README-Telephony.md`).
@Suite("CallStateMapping")
struct CallStateTests {
    @Test("GNOME Calls: CuiCallState", arguments: [
        (UInt32(0), CallState.none),   // UNKNOWN
        (1, .active),                  // ACTIVE
        (2, .held),                    // HELD
        (3, .active),                  // DIALING
        (4, .active),                  // ALERTING
        (5, .ringing),                 // INCOMING
        (6, .ringing),                 // WAITING
        (7, .none),                    // DISCONNECTED
        (8, .none),
    ])
    func gnomeCalls(value: UInt32, expected: CallState) {
        #expect(CallStateMapping.gnomeCalls(value) == expected)
    }

    @Test("ModemManager: MMCallState", arguments: [
        (Int32(0), CallState.none),    // UNKNOWN
        (1, .active),                  // DIALING
        (2, .active),                  // RINGING_OUT
        (3, .ringing),                 // RINGING_IN
        (4, .active),                  // ACTIVE
        (5, .held),                    // HELD
        (6, .ringing),                 // WAITING
        (7, .none),                    // TERMINATED
        (-1, .none),
    ])
    func modemManager(value: Int32, expected: CallState) {
        #expect(CallStateMapping.modemManager(value) == expected)
    }

    @Test("oFono and PipeWire Telephony: State words", arguments: [
        ("active", CallState.active),
        ("held", .held),
        ("dialing", .active),
        ("alerting", .active),
        ("incoming", .ringing),
        ("waiting", .ringing),
        ("disconnected", .none),
        ("", .none),
        ("Active", .none),
    ])
    func telephony(word: String, expected: CallState) {
        #expect(CallStateMapping.telephony(word) == expected)
    }

    @Test("the combined state is the highest call's, its cause the first such call")
    func status() {
        let held = CallReading(source: .ofono, state: .held, detail: "oFono call /ril_0/voicecall01")
        let ringing = CallReading(source: .modemManager, state: .ringing, detail: "ModemManager call /org/freedesktop/ModemManager1/Call/0")
        #expect(CallStatus().state == .none)
        #expect(CallStatus().cause == nil)
        #expect(CallStatus(readings: [held, ringing]).state == .ringing)
        #expect(CallStatus(readings: [held, ringing]).cause == ringing)
        #expect(CallStatus(readings: [held]).state == .held)
        #expect(!CallState.held.isOn && CallState.ringing.isOn && CallState.active.isOn && !CallState.none.isOn)
    }

    @Test("each D-Bus source's bus, name and match rules")
    func sources() {
        #expect(CallBusSource.allCases.map(\.source) == [.gnomeCalls, .pipewireTelephony, .modemManager, .ofono])
        #expect(CallBusSource.allCases.map(\.bus) == [.session, .session, .system, .system])
        #expect(CallBusSource.pipewireTelephony.name == "org.pipewire.Telephony")
        for source in CallBusSource.allCases {
            #expect(source.matchRules.allSatisfy { $0.hasPrefix("type='signal',sender='\(source.name)',") })
            #expect(source.nameOwnerRule.hasSuffix("arg0='\(source.name)'"))
        }
    }
}
