import Testing
@testable import DuckPrompt
@testable import DuckPromptCore

/// `PromptLimits` and the shared word checks of `PlayOptions` (PlayOptions+Words.swift):
/// tables, no server.
@Suite("Prompt limits and option words")
struct PromptLimitsTests {
    @Test("admit: up to 15 unfinished prompts a 16th is taken; at 16 and over refused, limit .promptsPerClient, naming the client",
          arguments: [(0, true), (1, true), (15, true), (16, false), (17, false), (1000, false)])
    func admit(unfinished: Int, taken: Bool) {
        do {
            try PromptLimits.admit(unfinished: unfinished, client: ":1.42")
            #expect(taken)
        } catch let error as DuckPromptError {
            #expect(!taken)
            #expect(error.limit == .promptsPerClient)
            #expect(error.message == ":1.42 has \(unfinished) prompts queued or playing, the most one client may have")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test("admit over every client: up to 63 unfinished a 64th is taken; at 64 and over refused, limit .promptsInTotal",
          arguments: [(0, true), (63, true), (64, false), (5000, false)])
    func admitInTotal(unfinished: Int, taken: Bool) {
        #expect(refusal { try PromptLimits.admit(unfinishedInTotal: unfinished) } == (taken ? nil : .promptsInTotal))
        #expect(taken || error { try PromptLimits.admit(unfinishedInTotal: unfinished) }
            == "the service has \(unfinished) prompts queued or playing, the most it takes from all clients together")
    }

    @Test("admit waiting calls: up to 63 of a client's calls waiting a 64th is taken; at 64 refused, limit .callsPerClient, naming the client",
          arguments: [(0, true), (63, true), (64, false), (99, false)])
    func admitWaiting(waiting: Int, taken: Bool) {
        #expect(refusal { try PromptLimits.admit(waitingCalls: waiting, client: ":1.7") } == (taken ? nil : .callsPerClient))
        #expect(taken || error { try PromptLimits.admit(waitingCalls: waiting, client: ":1.7") }
            == ":1.7 has \(waiting) calls still waiting for an answer, the most one client may have")
    }

    @Test("checkFileCount: up to 64 files taken; 65 and over refused, limit .files, naming the count",
          arguments: [(0, true), (1, true), (64, true), (65, false), (100_000, false)])
    func fileCount(count: Int, taken: Bool) {
        #expect(refusal { try PromptLimits.checkFileCount(count) } == (taken ? nil : .files))
        #expect(taken || error { try PromptLimits.checkFileCount(count) } == "\(count) files; a prompt plays at most 64")
    }

    @Test("checkDescriptors: taken while 48 or more of the limit are free; refused under that, limit .descriptors, Unavailable, naming both numbers",
          arguments: [(10, 1024, true), (976, 1024, true), (977, 1024, false), (1024, 1024, false), (30, 64, false)])
    func descriptors(open: Int, limit: Int, taken: Bool) {
        #expect(refusal { try PromptLimits.checkDescriptors(open: open, limit: limit) } == (taken ? nil : .descriptors))
        #expect(taken || error { try PromptLimits.checkDescriptors(open: open, limit: limit) }
            == "the service has \(open) of its \(limit) file descriptors open (RLIMIT_NOFILE); it keeps 48 free for the prompts it has")
    }

    /// The limit `body` throws for, nil when it does not throw.
    private func refusal(_ body: () throws -> Void) -> DuckPromptError.Limit? {
        do { try body(); return nil } catch let e as DuckPromptError { return e.limit } catch { return nil }
    }

    /// The message `body` throws, nil when it does not throw.
    private func error(_ body: () throws -> Void) -> String? {
        do { try body(); return nil } catch let e as DuckPromptError { return e.message } catch { return "\(error)" }
    }

    @Test("checkDuration: the parts' lengths add up; over 300 s refused with the length rounded up; an endless length named",
          arguments: [([], nil), ([0.05], nil), ([300.0], nil), ([150.0, 150.0], nil), ([300.001], "301 s"),
                      ([200.0, 100.5], "301 s"), ([3600.0], "3600 s"), ([Double.infinity], "without end")] as [([Double], String?)])
    func duration(parts: [Double], refused: String?) {
        do {
            try PromptLimits.checkDuration(parts)
            #expect(refused == nil)
        } catch let error as DuckPromptError {
            #expect(error.limit == .duration)
            #expect(error.message == "the prompt's audio lasts \(refused ?? "?"); a prompt lasts at most 300 s")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test("the text and input limits are marked as limits; other errors are not")
    func marked() throws {
        let text = String(repeating: "a", count: SpeechSource.maxTextLength + 1)
        #expect { try SpeechSource.checkLength([text]) } throws: { ($0 as? DuckPromptError)?.limit == .textLength }
        #expect { try SpeechSource.checkLength([String(repeating: "a", count: 3000), String(repeating: "b", count: 2001)]) }
            throws: { ($0 as? DuckPromptError)?.limit == .textLength }
        try SpeechSource.checkLength([String(repeating: "a", count: SpeechSource.maxTextLength)])
        #expect(DuckPromptError(.usage, "x").limit == nil)
    }

    @Test("A choice option takes each of its words; another word is refused listing the choices")
    func choices() throws {
        var options = PlayOptions()
        for priority in PromptPriority.allCases {
            try PromptOption.priority.apply(.word(priority.rawValue), to: &options)
            #expect(options.priority == priority)
        }
        for mode in DuckMode.allCases {
            try PromptOption.duckMode.apply(.word(mode.rawValue), to: &options)
            #expect(options.duckMode == mode)
        }
        for policy in BusyPolicy.allCases {
            try PromptOption.onBusy.apply(.word(policy.rawValue), to: &options)
            #expect(options.onBusy == policy)
        }
        let rows: [(String, PromptOption, String)] = [
            ("priority 'urgent' is not one of: important, message, text, notification, progress", .priority, "urgent"),
            ("duck-mode 'Duck' is not one of: duck, mute, pause, none", .duckMode, "Duck"),
            ("on-busy '' is not one of: wait, drop", .onBusy, ""),
        ]
        for (message, option, word) in rows {
            #expect { try option.apply(.word(word), to: &options) } throws: { ($0 as? DuckPromptError)?.message == message }
        }
    }

    @Test("duck: 0 dB down to -200 dB are taken; above 0 dB (a raise) or below -200 dB is out of range", arguments: [
        (0.0, true), (-20.0, true), (-200.0, true), (-500.0, false), (0.01, false), (6.0, false),
    ])
    func duckRange(dB: Double, taken: Bool) {
        var options = PlayOptions()
        options.duck = Decibels(dB)
        do {
            try options.validate()
            #expect(taken)
        } catch let error as DuckPromptError {
            #expect(!taken)
            #expect(error.message.hasPrefix("duck ") && error.message.hasSuffix(" is out of range (-200dB to 0dB)"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}
