import Testing
@testable import DuckPromptCore

/// `Handoff`: which `duckprompt play`/`say` hand their prompt to a running `duckprompt serve`,
/// and what the service's answers come to for the command. Tables.
@Suite("Handoff to the service")
struct HandoffTests {
    @Test("route: one file or one text goes to the service; --no-service, the connection's options, -v, DUCKPROMPT_DEBUG, DUCKPROMPT_DEVICE, --keep-awake with -d and several parts stay local",
          arguments: [
              (Set<String>(), ["a.wav"], 0, [String: String](), Handoff.Route.file("a.wav")),
              ([], ["-"], 0, [:], .file("-")),
              (["duck", "device", "exit-with-parent", "priority"], ["a.wav"], 0, [:], .file("a.wav")),
              ([], [], 1, [:], .text),
              (["say", "voice"], [], 1, [:], .text),
              (["no-service"], ["a.wav"], 0, [:], .local("--no-service")),
              (["server"], ["a.wav"], 0, [:], .local("--server is the command's own")),
              (["client-name"], [], 1, [:], .local("--client-name is the command's own")),
              (["timeout"], ["a.wav"], 0, [:], .local("--timeout is the command's own")),
              (["verbose"], ["a.wav"], 0, [:], .local("--verbose is the command's own")),
              ([], ["a.wav"], 0, ["DUCKPROMPT_DEBUG": ""], .local("DUCKPROMPT_DEBUG traces the command's own duck")),
              ([], ["a.wav"], 0, ["DUCKPROMPT_DEVICE": "usb"], .local("DUCKPROMPT_DEVICE is the command's own")),
              ([], ["a.wav"], 0, ["DUCKPROMPT_DEVICE": " "], .file("a.wav")),
              (["keep-awake", "duck"], ["a.wav"], 0, [:], .file("a.wav")),
              (["keep-awake", "dry-run", "json"], [], 1, [:], .text),
              (["keep-awake", "device"], ["a.wav"], 0, [:], .local("--keep-awake on the sink -d names is the command's own")),
              ([], ["a.wav", "b.wav"], 0, [:], .local("a prompt of several parts")),
              ([], ["a.wav"], 1, [:], .local("a prompt of several parts")),
              ([], [], 2, [:], .local("a prompt of several parts")),
          ] as [(Set<String>, [String], Int, [String: String], Handoff.Route)])
    func route(given: Set<String>, files: [String], texts: Int, environment: [String: String], expected: Handoff.Route) {
        #expect(Handoff.route(given: given, files: files, texts: texts, environment: environment) == expected)
    }

    static let prefix = "io.github.duckprompt.DuckPrompt1.Error."

    @Test("refused: the service's error codes are the command's exit statuses with its message; LimitsExceeded, AccessDenied and the bus's errors play locally; no answer is 69",
          arguments: [
              (prefix + "Usage", false, Handoff.Verdict.exit(64, ["m"])),
              (prefix + "UnsupportedData", false, .exit(65, ["m"])),
              (prefix + "NoInput", false, .exit(66, ["m"])),
              (prefix + "Unavailable", false, .exit(69, ["m"])),
              (prefix + "Internal", false, .exit(70, ["m"])),
              (prefix + "Dropped", false, .exit(75, ["m"])),
              (prefix + "Config", false, .exit(78, ["m"])),
              (prefix + "LimitsExceeded", false, .playLocally("duckprompt serve answered \(prefix)LimitsExceeded: m")),
              (prefix + "AccessDenied", false, .playLocally("duckprompt serve answered \(prefix)AccessDenied: m")),
              ("org.freedesktop.DBus.Error.ServiceUnknown", false, .playLocally("the bus answered org.freedesktop.DBus.Error.ServiceUnknown: m")),
              ("org.freedesktop.DBus.Error.UnknownMethod", false, .playLocally("the bus answered org.freedesktop.DBus.Error.UnknownMethod: m")),
              (nil, true, .exit(69, ["duckprompt serve did not answer: m"])),
          ] as [(String?, Bool, Handoff.Verdict)])
    func refused(name: String?, timedOut: Bool, expected: Handoff.Verdict) {
        #expect(Handoff.refused(name: name, message: "m", timedOut: timedOut) == expected)
    }

    @Test("finished: played is 0 with the warnings after the sink, the queue's outcomes 75, failed 69, cancelled 75 or (after the command's own signal) 128 + it",
          arguments: [
              ("played", "on speaker", Int32?.none, Handoff.Verdict.exit(0, [])),
              ("played", "on speaker; played muted (x)", nil, .exit(0, ["played muted (x)"])),
              ("played", "on speaker; a; b", nil, .exit(0, ["a", "b"])),
              ("played", "on a;b; c;; d; ", nil, .exit(0, ["c;", "d"])),
              ("interrupted", "m", nil, .exit(75, ["m"])),
              ("replaced", "m", nil, .exit(75, ["m"])),
              ("dropped", "m", nil, .exit(75, ["m"])),
              ("expired", "m", nil, .exit(75, ["m"])),
              ("failed", "m", nil, .exit(69, ["m"])),
              ("cancelled", "", 2, .exit(130, [])),
              ("cancelled", "", 15, .exit(143, [])),
              ("played", "on speaker", 2, .exit(0, [])),
              ("cancelled", "", nil, .exit(75, ["the prompt was cancelled by duckprompt serve (a Cancel from another client, or the service stopped)"])),
              ("odd", "m", nil, .exit(70, ["duckprompt serve ended the prompt with an unknown outcome 'odd': m"])),
          ] as [(String, String, Int32?, Handoff.Verdict)])
    func finished(outcome: String, message: String, signal: Int32?, expected: Handoff.Verdict) {
        #expect(Handoff.finished(outcome: outcome, message: message, signal: signal) == expected)
    }

    @Test("The match rules name the service's unique name, and its well-known name's owner changes")
    func matches() {
        #expect(Handoff.finishedMatch(owner: ":1.7") == "type='signal',sender=':1.7',path='/io/github/duckprompt/DuckPrompt1',"
                + "interface='io.github.duckprompt.DuckPrompt1',member='PromptFinished'")
        #expect(Handoff.ownerMatch.hasSuffix("member='NameOwnerChanged',arg0='io.github.duckprompt.DuckPrompt1'"))
    }
}
