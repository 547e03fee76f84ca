/// What a prompt does while a call is on (`--during-call`, config `during_call`, D-Bus key
/// `during-call`). Whatever the policy, the call's own streams are never ducked, paused or
/// corked (`CallStreams`).
public enum DuringCallPolicy: String, Sendable, CaseIterable, Codable {
    /// Play it where it would go, its own volume lowered by `--call-duck` (default -10 dB), so
    /// that the caller's voice stays on top. The default, as Android Automotive does.
    case mix
    /// Wait until the call is over (or on hold), no longer than `--expire-ms` from the call.
    case `defer`
    /// A short earcon (`CallChime`) instead of the prompt: iOS's "short" prompt style.
    case chime
    /// Do not play it: exit 75, `Error.Dropped` / `PromptFinished` `dropped`.
    case drop
}

/// What one prompt does about the call state at its turn. Pure: `decide` is a table.
package enum CallDecision: Sendable, Equatable {
    /// No call on (none, or every call held): play as usual.
    case play
    /// Play under the call, the prompt's own volume lowered by this many dB (<= 0).
    case mix(Decibels)
    /// Wait for the call to end, then look again.
    case wait
    /// Play the earcon instead.
    case chime
    /// Drop the prompt.
    case drop

    /// - Parameters:
    ///   - policy: the prompt's `--during-call`.
    ///   - state: the call state now (`CallStatus.state`).
    ///   - callDuck: `--call-duck`, dB <= 0.
    package static func decide(_ policy: DuringCallPolicy, state: CallState, callDuck: Decibels) -> CallDecision {
        guard state.isOn else { return .play }
        switch policy {
        case .mix: return .mix(callDuck)
        case .defer: return .wait
        case .chime: return .chime
        case .drop: return .drop
        }
    }

    /// What the prompt's report and `PromptFinished` say it did, nil when it played as usual:
    /// "played under a call at -10 dB", "chime instead of speech during a call"; a deferred
    /// prompt says how long it waited (`deferredNote`).
    package var note: String? {
        switch self {
        case .play, .wait, .drop: nil
        case .mix(let gain): "played under a call at \(Self.tenths(gain.value)) dB"
        case .chime: "chime instead of speech during a call"
        }
    }

    /// "deferred 12.3 s for a call".
    package static func deferredNote(seconds: Double) -> String {
        "deferred \(tenths(seconds)) s for a call"
    }

    /// A number to a tenth, "-10", "12.3" (no trailing ".0").
    static func tenths(_ value: Double) -> String {
        guard value.isFinite else { return "\(value)" }
        let t = Int((value * 10).rounded())
        let sign = t < 0 ? "-" : ""
        return abs(t) % 10 == 0 ? "\(sign)\(abs(t) / 10)" : "\(sign)\(abs(t) / 10).\(abs(t) % 10)"
    }
}
