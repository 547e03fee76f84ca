import DuckPromptTestSupport
import Foundation
import Testing

/// The shell completions of share/completions, run in the real shells against the private
/// server: bash (with bash-completion's helpers loaded, and without them), fish
/// (`complete -C`), and zsh (its completion system in an interactive zsh on a pseudo-terminal,
/// zsh/zpty, recording what compadd adds). Each is asked what it offers for a command line:
/// the verbs, each verb's options (those its --help lists), option values, files, commands
/// after `lab --`, and for -d/--device the sinks the running server lists.
@Suite(.serialized)
struct CompletionIntegrationTests {
    enum Shell: String, CaseIterable, CustomTestStringConvertible {
        case bash, bashWithoutHelpers = "bash without bash-completion", fish, zsh
        var testDescription: String { rawValue }
    }

    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("share/completions").path

    static let verbs: Set = ["play", "say", "devices", "route", "restore", "serve", "lab", "speechd-module", "help"]

    /// One thing the shell offers: the word, and its description (fish and zsh; bash has none).
    struct Offer {
        var word: String
        var description: String
    }

    /// bash: COMP_WORDS as readline splits LINE (at blanks, and each run of COMP_WORDBREAKS' '='
    /// and ':' a word of its own), COMP_CWORD the last, then _duckprompt; COMPREPLY a line each.
    static let bashDriver = #"""
        helpers=$1 file=$2 dir=$3 line=$4
        if [[ $helpers == yes ]]; then
            source /usr/share/bash-completion/bash_completion || exit 3
        fi
        source "$file" || exit 3
        cd "$dir" || exit 3
        COMP_LINE=$line COMP_POINT=${#line} COMP_WORDS=()
        read -r -a tokens <<<"$line"
        for token in "${tokens[@]}"; do
            while [[ $token =~ ^([^=:]*)([=:]+)(.*)$ ]]; do
                [[ -n ${BASH_REMATCH[1]} ]] && COMP_WORDS+=("${BASH_REMATCH[1]}")
                COMP_WORDS+=("${BASH_REMATCH[2]}")
                token=${BASH_REMATCH[3]}
            done
            [[ -n $token ]] && COMP_WORDS+=("$token")
        done
        [[ $line == *' ' ]] && COMP_WORDS+=("")
        COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
        complete -p duckprompt >/dev/null || exit 4
        _duckprompt "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
        printf '%s\n' "${COMPREPLY[@]}"
        """#

    /// zsh: an interactive zsh on a pseudo-terminal (zsh/zpty) loads the completion system with
    /// share/completions first in $fpath, LINE is typed and then Tab. A compadd function records
    /// each word the completion adds, with its description, in $DP_OUT; `<done>` ends it.
    static let zshSetup = #"""
        PROMPT='' RPROMPT=''
        fpath=($DP_COMPDIR $fpath)
        autoload -U compinit && compinit -u -D
        zstyle ':completion:*' insert-tab false
        compadd() {
          # -O, -A and -D ask which words match: they add nothing.
          if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return; fi
          local -a __hits __dscr
          if (( $@[(I)-d] )); then
            local __d=${@[$(( ${@[(i)-d]} + 1 ))]}
            if [[ $__d == \(* ]]; then eval "__dscr=$__d"; else __dscr=("${(@P)__d}"); fi
          fi
          builtin compadd -A __hits -D __dscr "$@"
          local __i
          for (( __i = 1; __i <= $#__hits; __i++ )); do
            print -r -- "$__hits[__i]"$'\t'"${__dscr[__i]-}" >>$DP_OUT
          done
          builtin compadd "$@"
        }
        _dp_done() { print -r -- '<done>' >>$DP_OUT }
        comppostfuncs=(_dp_done)
        print -r -- '<ready>' >>$DP_OUT
        """#

    static let zshDriver = #"""
        zmodload zsh/zpty || exit 3
        export DP_COMPDIR=$1 DP_OUT=$(mktemp) TERM=xterm
        cd $2 || exit 3
        setup=$3 line=$4
        zpty dp zsh -f -i
        zpty -w dp ". ${(q)setup}"
        integer n
        for (( n = 0; n < 400; n++ )); do grep -qx '<ready>' $DP_OUT && break; sleep 0.05; done
        zpty -w -n dp "$line"$'\t'
        for (( n = 0; n < 400; n++ )); do grep -qx '<done>' $DP_OUT && break; sleep 0.05; done
        zpty -d dp
        if ! grep -qx '<done>' $DP_OUT; then
          print -u2 "no completion ran for '$line': $(<$DP_OUT)"; rm -f $DP_OUT; exit 2
        fi
        sed -e '/^<ready>$/d' -e '/^<done>$/,$d' $DP_OUT
        rm -f $DP_OUT
        """#

    static let scripts: URL = {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("duckprompt-completion-\(getpid())")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        for (name, text) in [("bash-driver", bashDriver), ("zsh-setup", zshSetup), ("zsh-driver", zshDriver)] {
            try? text.write(to: dir.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        atexit { try? FileManager.default.removeItem(at: CompletionIntegrationTests.scripts) }
        return dir
    }()

    /// The environment of the shells: the duckprompt just built first on PATH (the completions
    /// list sinks with the `duckprompt` the line names), and `extra`.
    static func environment(_ extra: [String: String]) -> [String: String] {
        var environment = extra
        let binary = duckpromptBinary
        if binary.contains("/") {
            let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
            environment["PATH"] = URL(fileURLWithPath: binary).deletingLastPathComponent().path + ":" + path
        }
        return environment
    }

    /// What `shell` offers when Tab is pressed at the end of `line`, typed in `directory`.
    static func complete(_ shell: Shell, _ line: String, in directory: String = "/",
                         environment extra: [String: String] = [:]) throws -> (offers: [Offer], stderr: String) {
        let environment = environment(extra)
        let result: ProcessResult
        switch shell {
        case .bash, .bashWithoutHelpers:
            result = try run(["bash", "--norc", "--noprofile", scripts.appendingPathComponent("bash-driver").path,
                              shell == .bash ? "yes" : "no", Self.directory + "/duckprompt.bash", directory, line],
                             environment: environment, check: false)
        case .fish:
            result = try run(["fish", "--no-config", "-c", "cd $argv[1]; and source $argv[2]; and complete -C $argv[3]",
                              directory, Self.directory + "/duckprompt.fish", line],
                             environment: environment, check: false)
        case .zsh:
            result = try run(["zsh", "-f", scripts.appendingPathComponent("zsh-driver").path, Self.directory, directory,
                              scripts.appendingPathComponent("zsh-setup").path, line],
                             environment: environment, check: false)
        }
        guard result.status == 0 else {
            throw TestFailure("\(shell.rawValue) completing '\(line)' exited \(result.status): \(result.stderr)")
        }
        let offers = result.stdout.split(separator: "\n", omittingEmptySubsequences: true).map { row in
            let parts = row.split(separator: "\t", maxSplits: 1, omittingEmptySubsequences: false)
            return Offer(word: String(parts[0]), description: parts.count > 1 ? String(parts[1]) : "")
        }
        return (offers, result.stderr)
    }

    static func words(_ shell: Shell, _ line: String, in directory: String = "/",
                      environment: [String: String] = [:]) throws -> Set<String> {
        Set(try complete(shell, line, in: directory, environment: environment).offers.map(\.word))
    }

    /// The options `duckprompt VERB --help` lists in its OPTIONS section: `-d, --device SINK`
    /// gives -d and --device.
    static func helpOptions(_ verb: String?) throws -> Set<String> {
        let help = try run([duckpromptBinary] + (verb.map { [$0] } ?? []) + ["--help"]).stdout
        var options: Set<String> = []
        var section = ""
        for line in help.split(separator: "\n", omittingEmptySubsequences: false) {
            if let first = line.first, first != " ", line.hasSuffix(":") {
                section = String(line)
            } else if section == "OPTIONS:", line.hasPrefix("  -") {
                let head = line.dropFirst(2).components(separatedBy: "  ")[0]
                for part in head.components(separatedBy: ", ") where part.hasPrefix("-") {
                    options.insert(String(part.split(separator: " ")[0]))
                }
            }
        }
        guard !options.isEmpty else { throw TestFailure("no OPTIONS in duckprompt \(verb ?? "") --help:\n\(help)") }
        return options
    }

    @Test("verbs at the top level, each described, and -h, --help, --version", arguments: Shell.allCases)
    func verbs(shell: Shell) throws {
        let offers = try Self.complete(shell, "duckprompt ").offers
        #expect(Set(offers.map(\.word)) == Self.verbs)
        if shell == .fish || shell == .zsh {
            #expect(offers.allSatisfy { !$0.description.isEmpty }, "a verb without its description: \(offers)")
        }
        #expect(try Self.words(shell, "duckprompt -") == Self.helpOptions(nil))
        #expect(try Self.words(shell, "duckprompt help ") == Self.verbs.subtracting(["help"]))
        #expect(try Self.words(shell, "duckprompt r") == ["route", "restore"])
    }

    @Test("each verb completes exactly the options its --help lists", arguments: Shell.allCases)
    func optionsPerVerb(shell: Shell) throws {
        // play's --say line names --voice and --rate, say's options, as play options too.
        let play = try Self.helpOptions("play").union(["--voice", "--rate"])
        var expected: [String: Set<String>] = ["play": play, "say": try Self.helpOptions("say").union(play)]
        for verb in ["devices", "route", "restore", "serve"] { expected[verb] = try Self.helpOptions(verb) }
        // lab also offers the '--' that ends its options.
        expected["lab"] = try Self.helpOptions("lab").union(["--"])
        for (verb, options) in expected.sorted(by: { $0.key < $1.key }) {
            let offered = try Self.words(shell, "duckprompt \(verb) -")
            #expect(offered == options,
                    "\(verb): missing \(options.subtracting(offered).sorted()), not in its --help \(offered.subtracting(options).sorted())")
        }
        #expect(try Self.words(shell, "duckprompt play --pri") == ["--priority"])
        #expect(try Self.words(shell, "duckprompt devices --w") == ["--watch"])
        #expect(try Self.words(shell, "duckprompt serve --ex") == ["--exit-idle"])
    }

    @Test("option values: --priority, --duck-mode, --on-busy, lab's --server and --device", arguments: Shell.allCases)
    func optionValues(shell: Shell) throws {
        #expect(try Self.words(shell, "duckprompt play --priority ") == ["important", "message", "text", "notification", "progress"])
        #expect(try Self.words(shell, "duckprompt say --priority n") == ["notification"])
        #expect(try Self.words(shell, "duckprompt play --duck-mode ") == ["duck", "mute", "pause", "none"])
        #expect(try Self.words(shell, "duckprompt say --duck-mode ") == ["duck", "mute", "pause", "none"])
        #expect(try Self.words(shell, "duckprompt play --on-busy ") == ["wait", "drop"])
        #expect(try Self.words(shell, "duckprompt lab --server ") == ["pipewire", "pulseaudio"])
        #expect(try Self.words(shell, "duckprompt lab --device ") == ["speaker", "headphones", "bluetooth-a2dp", "bluetooth",
                                                                       "bluetooth-hfp", "usb", "hdmi", "line-out", "car", "none"])
        // --option=value: fish offers the whole word, bash and zsh what follows the '='.
        let joined = try Self.words(shell, "duckprompt play --priority=te").map { $0.split(separator: "=").last.map(String.init) ?? $0 }
        #expect(joined == ["text"])
    }

    @Test("a value position offers no option: --duck, --volume, --timeout, -n, lab --timeout", arguments: Shell.allCases)
    func valuesAreNotOptions(shell: Shell) throws {
        for line in ["duckprompt play --duck ", "duckprompt say --volume ", "duckprompt devices --timeout ",
                     "duckprompt restore -n ", "duckprompt serve --exit-idle ", "duckprompt lab --timeout ",
                     "duckprompt play --say ", "duckprompt lab --default "] {
            #expect(try Self.words(shell, line) == [], "\(line)")
        }
        // Past options and their values, the next option's values.
        #expect(try Self.words(shell, "duckprompt play --priority text --expire-ms 100 --on-busy ") == ["wait", "drop"])
    }

    @Test("files for FILE, --from and --report; commands after lab --", arguments: Shell.allCases)
    func filesAndCommands(shell: Shell) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("duckprompt-completion-files-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data().write(to: dir.appendingPathComponent("turn-left.wav"))
        try Data().write(to: dir.appendingPathComponent("sinks.txt"))
        #expect(try Self.words(shell, "duckprompt play tu", in: dir.path) == ["turn-left.wav"])
        #expect(try Self.words(shell, "duckprompt play --volume -6dB -v tu", in: dir.path) == ["turn-left.wav"])
        #expect(try Self.words(shell, "duckprompt devices --from si", in: dir.path) == ["sinks.txt"])
        #expect(try Self.words(shell, "duckprompt route --from si", in: dir.path) == ["sinks.txt"])
        #expect(try Self.words(shell, "duckprompt lab --report si", in: dir.path) == ["sinks.txt"])
        // No file where TEXT or nothing goes.
        #expect(try Self.words(shell, "duckprompt say tu", in: dir.path) == [])
        #expect(try Self.words(shell, "duckprompt devices si", in: dir.path) == [])
        let command = try Self.words(shell, "duckprompt lab --server pulseaudio -- pact")
        #expect(command.contains("pactl"), "\(command)")
        // After the command, its arguments as its own completion gives them: a file for ls.
        #expect(try Self.words(shell, "duckprompt lab -- ls si", in: dir.path) == ["sinks.txt"])
    }

    @Test("-d/--device completes the running server's sinks and @DEFAULT_SINK@, on the -s/--server given",
          arguments: Shell.allCases)
    func sinks(shell: Shell) throws {
        try TestServer.requireServer()
        let rig = Rig()
        let speaker = try rig.speaker()
        let bt = try rig.bluetooth()
        let serverSinks = try Pactl.call("list", "short", "sinks").split(separator: "\n")
            .map { String($0.split(separator: "\t")[1]) }
        let all = Set(serverSinks + ["@DEFAULT_SINK@"])
        for line in ["duckprompt play -d ", "duckprompt say --device ", "duckprompt devices -d ", "duckprompt route --device "] {
            let offered = try Self.words(shell, line)
            #expect(offered.isSuperset(of: [speaker, bt, "@DEFAULT_SINK@"]), "\(line): \(offered.sorted())")
            #expect(offered.isSubset(of: all), "\(line) offers what is not a sink: \(offered.subtracting(all).sorted())")
        }
        #expect(try Self.words(shell, "duckprompt play --duck -12dB -d dp_bt_\(rig.tag.prefix(3))") == [bt])
        #expect(try Self.words(shell, "duckprompt route --device=dp_speaker_\(rig.tag)").map { $0.split(separator: "=").last.map(String.init) ?? $0 } == [speaker])

        // -s before -d: its server, not PULSE_SERVER's.
        let server = try #require(ProcessInfo.processInfo.environment["PULSE_SERVER"])
        let elsewhere = ["PULSE_SERVER": "unix:/nonexistent/duckprompt"]
        let viaOption = try Self.words(shell, "duckprompt play -s \(server) -d ", environment: elsewhere)
        #expect(viaOption.isSuperset(of: [speaker, bt]), "-s \(server): \(viaOption.sorted())")
        let viaLong = try Self.words(shell, "duckprompt devices --server=\(server) --device dp_", environment: elsewhere)
        #expect(viaLong.isSuperset(of: [speaker, bt]), "--server=\(server): \(viaLong.sorted())")
        #expect(try Self.words(shell, "duckprompt play -d ", environment: elsewhere) == ["@DEFAULT_SINK@"])
        // The word after --say is its text, not the -s option.
        let afterSay = try Self.words(shell, "duckprompt play --say -s -d ")
        #expect(afterSay.isSuperset(of: [speaker, bt]), "--say -s -d: \(afterSay.sorted())")

        // No server answers: @DEFAULT_SINK@ only, at once and quietly.
        let start = Date()
        let (offers, stderr) = try Self.complete(shell, "duckprompt play -s unix:/nonexistent/duckprompt -d ")
        #expect(offers.map(\.word) == ["@DEFAULT_SINK@"])
        #expect(Date().timeIntervalSince(start) < timeLimit(8))
        #expect(stderr.isEmpty, "\(stderr)")
    }
}
