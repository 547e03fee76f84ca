/// Whether the user is on a call: the one state the prompt's call policy (`--during-call`)
/// and the service's `CallState` property show, combined from every source (`CallStatus`).
/// Ordered by how much a prompt must give way: `active` > `ringing` > `held` > `none`.
public enum CallState: String, Sendable, CaseIterable, Comparable, Codable {
    /// No call.
    case none
    /// Every call is on hold: the user is not talking (a prompt plays as without a call, and
    /// the call's own stream is still never ducked).
    case held
    /// A call rings (incoming, or waiting beside another). WirePlumber's ModemManager module
    /// does not count it; duckprompt does: the ring tone and the user's answer must be heard.
    case ringing
    /// A call is on: talking, or dialling out and listening to the ring-back.
    case active

    /// Whether a prompt's call policy applies (`ringing` or `active`).
    public var isOn: Bool { self == .ringing || self == .active }

    public static func < (a: CallState, b: CallState) -> Bool { a.rank < b.rank }

    private var rank: Int {
        switch self {
        case .none: 0
        case .held: 1
        case .ringing: 2
        case .active: 3
        }
    }
}

/// Where a call was seen.
package enum CallSource: String, Sendable, CaseIterable, Codable {
    /// A sink-input or source-output whose `media.role` is `phone` or `communication`
    /// (`CallStreams`): any VoIP app, a phone's call audio played by the server.
    case stream
    /// GNOME Calls, session bus `org.gnome.Calls` (`org.gnome.Calls.Call.State`).
    case gnomeCalls = "gnome-calls"
    /// PipeWire's Bluetooth hands-free role, session bus `org.pipewire.Telephony`
    /// (`org.pipewire.Telephony.Call1.State`; PipeWire 1.4 and later, named
    /// `org.freedesktop.PipeWire.Telephony` only before its first release): a phone paired to
    /// this computer.
    case pipewireTelephony = "pipewire-telephony"
    /// ModemManager, system bus `org.freedesktop.ModemManager1` (`…ModemManager1.Call.State`).
    case modemManager = "modemmanager"
    /// oFono, system bus `org.ofono` (`org.ofono.VoiceCall`'s `State` property).
    case ofono
}

/// One call (or call stream) a source reports.
package struct CallReading: Sendable, Equatable, Codable {
    package var source: CallSource
    package var state: CallState
    /// What it is, for messages and `devices --json`: an object path, a stream's index and
    /// application ("sink-input 12 (Firefox)").
    package var detail: String

    package init(source: CallSource, state: CallState, detail: String) {
        self.source = source
        self.state = state
        self.detail = detail
    }
}

/// Every source's calls together.
package struct CallStatus: Sendable, Equatable {
    /// Each call seen, of every source (none: no call).
    package var readings: [CallReading]

    package init(readings: [CallReading] = []) { self.readings = readings }

    /// The state the policy follows: the highest of any call (`CallState`'s order).
    package var state: CallState { readings.map(\.state).max() ?? .none }

    /// The calls that make `state`, as a message names them ("ModemManager call
    /// /org/freedesktop/ModemManager1/Call/1").
    package var cause: CallReading? { readings.filter { $0.state == state }.first }
}

/// What each source's own state values mean as a `CallState`. Pure tables from the sources'
/// documentation (../shared/docs/FACTS.md, "Calls").
package enum CallStateMapping {
    /// GNOME Calls' `org.gnome.Calls.Call.State` (u, `CuiCallState`): 1 active, 2 held,
    /// 3 dialing, 4 alerting, 5 incoming, 6 waiting, 7 disconnected (0 unknown).
    package static func gnomeCalls(_ state: UInt32) -> CallState {
        switch state {
        case 1, 3, 4: .active
        case 2: .held
        case 5, 6: .ringing
        default: .none
        }
    }

    /// ModemManager's `org.freedesktop.ModemManager1.Call.State` (i, `MMCallState`): 0 unknown,
    /// 1 dialing, 2 ringing-out, 3 ringing-in, 4 active, 5 held, 6 waiting, 7 terminated.
    package static func modemManager(_ state: Int32) -> CallState {
        switch state {
        case 1, 2, 4: .active
        case 3, 6: .ringing
        case 5: .held
        default: .none
        }
    }

    /// The words oFono's `org.ofono.VoiceCall` `State` and PipeWire's
    /// `org.pipewire.Telephony.Call1.State` share: `active`, `held`, `dialing`,
    /// `alerting`, `incoming`, `waiting`, `disconnected`. An unknown word is no call.
    package static func telephony(_ state: String) -> CallState {
        switch state {
        case "active", "dialing", "alerting": .active
        case "held": .held
        case "incoming", "waiting": .ringing
        default: .none
        }
    }
}
