import Testing
@testable import DuckPromptCore

/// speech-dispatcher's output-module protocol as a state machine: the server's lines and the
/// driver's reports in, the lines written and the action out (as PromptLifecycleTests drives
/// PromptLifecycle). The exchanges are speech-dispatcher 0.11.4's, recorded from a logging
/// module under `spd-say` (SET's ten parameters, SSML with a sentence mark).
@Suite("SpeechdModuleProtocol")
struct SpeechdModuleProtocolTests {
    typealias P = SpeechdModuleProtocol

    /// One step: a server line (or a driver report), the lines written, the action.
    enum Input: Sendable, CustomStringConvertible {
        case line(String)
        case spoken(Int, accepted: Bool)
        case began(Int)
        case ended(Int)
        case endOfInput
        var description: String {
            switch self {
            case .line(let l): "line \(l.debugDescription)"
            case .spoken(let n, let a): "spoken(\(n), \(a))"
            case .began(let n): "began(\(n))"
            case .ended(let n): "ended(\(n))"
            case .endOfInput: "end of input"
            }
        }
    }

    struct Row: Sendable, CustomStringConvertible {
        var name: String
        var steps: [(Input, [String], P.Action?)]
        var description: String { name }
    }

    /// speech-dispatcher's start: INIT, AUDIO (the server's own audio refused, then its output
    /// method accepted), LOGLEVEL, LIST VOICES.
    static let start: [(Input, [String], P.Action?)] = [
        (.line("INIT"), ["299-greeting", "299 OK LOADED SUCCESSFULLY"], nil),
        (.line("AUDIO"), ["207 OK RECEIVING AUDIO SETTINGS"], nil),
        (.line("audio_output_method=server"), [], nil),
        (.line("."), ["300-duckprompt plays through its own stream, not the server's", "300 MODULE ERROR"], nil),
        (.line("AUDIO"), ["207 OK RECEIVING AUDIO SETTINGS"], nil),
        (.line("audio_output_method=pulse"), [], nil),
        (.line("audio_pulse_device=default"), [], nil),
        (.line("audio_pulse_min_length=100"), [], nil),
        (.line("."), ["203 OK AUDIO INITIALIZED"], nil),
        (.line("LOGLEVEL"), ["207 OK RECEIVING LOGLEVEL SETTINGS"], nil),
        (.line("log_level=3"), [], nil),
        (.line("."), ["203 OK LOGLEVEL SET"], nil),
        (.line("LIST VOICES"), ["304 CANT LIST VOICES"], nil),
    ]

    /// The SET block spd-say's messages come with (rate given).
    static func set(rate: Int = 0, language: String = "c") -> [(Input, [String], P.Action?)] {
        [(.line("SET"), ["203 OK RECEIVING SETTINGS"], nil)]
            + ["pitch=0", "pitch_range=0", "rate=\(rate)", "volume=0", "punctuation_mode=none", "spelling_mode=off",
               "cap_let_recogn=none", "voice=male1", "language=\(language)", "synthesis_voice=NULL"]
                .map { (.line($0), [], nil) }
            + [(.line("."), ["203 OK SETTINGS RECEIVED"], nil)]
    }

    static func settings(rate: Int = 0, language: String? = "c") -> SpeechdSettings {
        var s = SpeechdSettings()
        s.rate = rate
        s.language = language
        return s
    }

    static func speak(_ n: Int, _ ssml: String, text: String, rate: Int = 0) -> [(Input, [String], P.Action?)] {
        [(.line("SPEAK"), ["202 OK RECEIVING MESSAGE"], nil),
         (.line(ssml), [], nil),
         (.line("."), [], .speak(P.Message(number: n, kind: .speak, text: text, settings: settings(rate: rate)))),
         (.spoken(n, accepted: true), ["200 OK SPEAKING"], nil)]
    }

    static let rows: [Row] = [
        Row(name: "a message of two sentences is one message; begin, end", steps: start + set()
            + speak(1, "<speak>Hello there.<mark name=\"__spd_0\"/> Second &amp; last.</speak>",
                    text: "Hello there. Second & last.") + [
                (.began(1), ["701 BEGIN"], nil),
                (.began(1), [], nil),
                (.ended(1), ["702 END"], nil),
                (.line("QUIT"), ["210 OK QUIT"], .quit),
            ]),
        Row(name: "STOP: the stop, 703 once faded (once), the next one speaks; the stopped one's late finish says nothing",
            steps: start + set() + speak(1, "<speak>Long text</speak>", text: "Long text") + [
                (.began(1), ["701 BEGIN"], nil),
                (.line("STOP"), [], .stop(number: 1)),
                (.began(1), [], nil),
                (.line("STOP"), [], nil),
                (.ended(1), ["703 STOP"], nil),
            ] + set(rate: 50) + speak(2, "<speak>Important</speak>", text: "Important", rate: 50) + [
                (.ended(1), [], nil),
                (.began(2), ["701 BEGIN"], nil),
                (.ended(2), ["702 END"], nil),
                (.ended(2), [], nil),
            ]),
        Row(name: "STOP while idle, and PAUSE: no reply; PAUSE of a message reports 704", steps: start + [
            (.line("STOP"), [], nil),
        ] + set() + speak(1, "<speak>x</speak>", text: "x") + [
            (.line("PAUSE"), [], .stop(number: 1)),
            (.ended(1), ["704 PAUSE"], nil),
            (.ended(1), [], nil),
        ]),
        Row(name: "a message that could not be queued: 301, idle again", steps: start + set() + [
            (.line("SPEAK"), ["202 OK RECEIVING MESSAGE"], nil),
            (.line("hi"), [], nil),
            (.line("."), [], .speak(P.Message(number: 1, kind: .speak, text: "hi", settings: settings()))),
            (.spoken(1, accepted: false), ["301 ERROR CANT SPEAK"], nil),
            (.line("STOP"), [], nil),
        ]),
        Row(name: "a message that ended without beginning (failed, dropped): 702 END", steps: start + set()
            + speak(1, "<speak>x</speak>", text: "x") + [(.ended(1), ["702 END"], nil)]),
        Row(name: "text lines: the escaped dot taken off, lines joined; empty text 301", steps: start + [
            (.line("SPEAK"), ["202 OK RECEIVING MESSAGE"], nil),
            (.line("<speak>one"), [], nil),
            (.line("..two</speak>"), [], nil),
            (.line("."), [], .speak(P.Message(number: 1, kind: .speak, text: "one\n.two", settings: SpeechdSettings()))),
            (.line("SPEAK"), ["202 OK RECEIVING MESSAGE"], nil),
            (.line("."), ["301 ERROR CANT SPEAK"], nil),
        ]),
        Row(name: "CHAR space, KEY words, SOUND_ICON empty; two lines of a KEY: 305", steps: start + [
            (.line("CHAR"), ["202 OK RECEIVING MESSAGE"], nil),
            (.line("space"), [], nil),
            (.line("."), [], .speak(P.Message(number: 1, kind: .char, text: " ", settings: SpeechdSettings()))),
            (.line("KEY"), ["202 OK RECEIVING MESSAGE"], nil),
            (.line("shift_kp-enter"), [], nil),
            (.line("."), [], .speak(P.Message(number: 2, kind: .key, text: "shift kp enter", settings: SpeechdSettings()))),
            (.line("SOUND_ICON"), ["202 OK RECEIVING MESSAGE"], nil),
            (.line("bell"), [], nil),
            (.line("."), [], .speak(P.Message(number: 3, kind: .soundIcon, text: "", settings: SpeechdSettings()))),
            (.line("KEY"), ["202 OK RECEIVING MESSAGE"], nil),
            (.line("a"), [], nil),
            (.line("b"), [], nil),
            (.line("."), ["305 DATA MORE THAN ONE LINE"], nil),
        ]),
        Row(name: "bad SET lines: 302 (no =), 303 (rate out of range), the settings unchanged", steps: start + [
            (.line("SET"), ["203 OK RECEIVING SETTINGS"], nil),
            (.line("rate"), [], nil),
            (.line("."), ["302 ERROR BAD SYNTAX"], nil),
            (.line("SET"), ["203 OK RECEIVING SETTINGS"], nil),
            (.line("language=de"), [], nil),
            (.line("rate=101"), [], nil),
            (.line("."), ["303 ERROR INVALID PARAMETER OR VALUE"], nil),
            (.line("SET"), ["203 OK RECEIVING SETTINGS"], nil),
            (.line("some_future_parameter=1"), [], nil),
            (.line("."), ["203 OK SETTINGS RECEIVED"], nil),
        ]),
        Row(name: "unknown command 300; DEBUG ON/OFF", steps: start + [
            (.line("FROB"), ["300 ERR UNKNOWN COMMAND"], nil),
            (.line("DEBUG ON /tmp/x"), ["200 OK DEBUGGING ON"], nil),
            (.line("DEBUG OFF"), ["200 OK DEBUGGING OFF"], nil),
            (.line("DEBUG"), ["302 ERROR BAD SYNTAX"], nil),
        ]),
        Row(name: "a first line other than INIT: quit; end of input: quit", steps: [
            (.line("SPEAK"), [], .quit),
        ]),
        Row(name: "end of input while speaking: quit", steps: start + set() + speak(1, "<speak>x</speak>", text: "x") + [
            (.endOfInput, [], .quit),
        ]),
    ]

    @Test("exchanges", arguments: rows)
    func exchange(_ row: Row) {
        var p = P(greeting: "greeting")
        for (i, (input, lines, action)) in row.steps.enumerated() {
            let out: P.Output = switch input {
            case .line(let l): p.receive(l)
            case .spoken(let n, let a): p.spoken(n, accepted: a)
            case .began(let n): p.began(n)
            case .ended(let n): p.ended(n)
            case .endOfInput: p.endOfInput()
            }
            #expect(out.lines == lines, "step \(i) (\(input)): lines")
            #expect(out.action == action, "step \(i) (\(input)): action")
        }
    }

    @Test("INIT refused: 399 with the reason on one line")
    func initFailure() {
        #expect(P.initFailure("no server\nat all") == ["399-no server at all", "399 ERR CANT INIT MODULE"])
    }

    @Test("rate -100…100 to words per minute; language to an espeak-ng voice", arguments: [
        (-100, 80), (-50, 128), (0, 175), (50, 312), (100, 450),
    ])
    func rate(_ rate: Int, _ wpm: Int) {
        var s = SpeechdSettings()
        let taken = s.set("rate", "\(rate)")
        #expect(taken)
        #expect(s.wordsPerMinute == wpm)
    }

    @Test("languages", arguments: [
        ("c", nil), ("C", nil), ("POSIX", nil), ("NULL", nil), ("en", "en"), ("en-US", "en-us"),
        ("pt_BR", "pt-br"), ("de_DE.UTF-8", "de-de"), ("sr@latin", "sr"),
    ] as [(String, String?)])
    func language(_ language: String, _ voice: String?) {
        var s = SpeechdSettings()
        let taken = s.set("language", language)
        #expect(taken)
        #expect(s.espeakVoice == voice)
        _ = s.set("synthesis_voice", "en-gb")
        #expect(s.espeakVoice == "en-gb", "a synthesis voice by name goes first")
    }

    @Test("SSML to text: tags out, entities read, breaks as spaces")
    func ssml() {
        #expect(SpeechdText.plain(fromSSML: "<speak>A &lt;b&gt; &quot;c&quot; &apos;d&apos; &#65;&#x42;</speak>") == "A <b> \"c\" 'd' AB")
        #expect(SpeechdText.plain(fromSSML: "<speak>one<break time=\"1s\"/>two</speak>") == "one two")
        #expect(SpeechdText.plain(fromSSML: "a & b < c") == "a & b < c", "a bare & or < is kept")
        #expect(SpeechdText.plain(fromSSML: "&unknown; x") == "&unknown; x")
    }

    @Test("config file: priority, keep time, comments, quotes, other settings ignored")
    func config() throws {
        let c = try SpeechdModuleConfig(parsing: """
            # a comment
            DuckpromptPriority "important"   # trailing comment
            duckpromptkeepduckms 150
            GenericExecuteSynth "not ours"

            """, path: "x.conf")
        #expect(c.priority == .important)
        #expect(c.keepDuckMs == 150)
        #expect(try SpeechdModuleConfig(parsing: "", path: "x") == SpeechdModuleConfig())
    }

    @Test("config file errors name the file, the line and the problem (78)", arguments: [
        ("DuckpromptPriority urgent", "x.conf:1: DuckpromptPriority must be important, message, text, notification or progress, not 'urgent'"),
        ("\nDuckpromptKeepDuckMs 2000", "x.conf:2: DuckpromptKeepDuckMs must be a whole number of ms from 0 to 1000, not '2000'"),
        ("DuckpromptVoice en", "x.conf:1: unknown setting 'DuckpromptVoice' (DuckpromptPriority, DuckpromptKeepDuckMs)"),
    ])
    func configErrors(_ text: String, _ message: String) {
        do {
            _ = try SpeechdModuleConfig(parsing: text, path: "x.conf")
            Issue.record("accepted \(text)")
        } catch let error as DuckPromptError {
            #expect(error.code == .config)
            #expect(error.message == message)
        } catch { Issue.record("\(error)") }
    }
}
