/// Help texts, laid out OVERVIEW / USAGE / ARGUMENTS / OPTIONS as swift-argument-parser does.
enum Help {
    /// Each subcommand's help, in the order the man page gives them.
    static let subcommands: [(name: String, text: String)] = [
        ("play", play), ("say", say), ("devices", devices), ("route", route), ("restore", restore),
        ("serve", serve), ("speechd-module", speechdModule), ("lab", lab),
    ]

    static let common = """
      -s, --server SERVER     Sound server to connect to (libpulse server string, e.g.
                              unix:/run/user/1000/pulse/native). Default: $PULSE_SERVER,
                              then the user's default server.
      -n, --client-name NAME  Client name the server shows (default: duckprompt).
      --timeout TIME          Give up connecting after TIME: 5, 2.5s, 500ms; 1ms to 600s
                              (default 5s).
      -h, --help              Show this help.
    """

    /// How numbers are written, after the options of play and say.
    static let numbers = """

    Numbers are plain decimal: 200, -6.5, +3 (no spaces, exponents or hex); a value outside
    its range is a usage error (exit 64). Every option but --say, -v, --exit-with-parent,
    --no-service, --dry-run, --json, --keep-awake and the connection's takes its default
    from the config file (duckprompt-config(5): --attack-ms is attack_ms) and is a key of
    the D-Bus service's options, with the same range.
    """

    static let main = """
    OVERVIEW: Play a voice prompt on the device the user is listening with, ducking everything else.

    USAGE: duckprompt <subcommand> [options]

    SUBCOMMANDS:
      play FILE...            Route, duck, play FILE whole, restore every volume.
      say TEXT                The same with speech synthesized by libespeak-ng.
      devices                 List the sinks, their kind, and where a prompt would go.
      route                   Say which sink a prompt would go to, and why (no sound).
      restore                 Undo the duck of a prompt that died mid-prompt (kill -9, crash).
      serve                   Serve prompts on the D-Bus session bus (Docs/dbus.md).
      speechd-module [CONF]   A speech-dispatcher output module (sd_duckprompt runs it).
      lab -- COMMAND          Run COMMAND on a private headless server with emulated devices
                              and report what a listener heard (Docs/lab.md).

    OPTIONS:
      --version               Show duckprompt, libpulse and libsndfile versions.
      -h, --help              Show this help.

    See 'duckprompt <subcommand> --help', or 'duckprompt help <subcommand>'.

    EXIT STATUS:
      0                       Success.
      64                      Usage error: an unknown option, a value out of range.
      65                      Unreadable or unsupported audio, not a sink dump, or a journal
                              restore would not use.
      66                      A file missing, unreadable or not a regular file.
      69                      No server or no usable sink; the server died or stopped
                              answering mid-prompt (what was ducked stays journaled for the
                              next command or restore); for speech, no libespeak-ng.
      70                      Internal error.
      75                      Prompt dropped or interrupted (--priority, --expire-ms,
                              --on-busy drop, --during-call drop).
      78                      Bad config file.
      128+N                   Stopped by signal N (130 SIGINT, 143 SIGTERM, 129 SIGHUP).

    FILES:
      $XDG_CONFIG_HOME/duckprompt/config.json
                              The config file (duckprompt-config(5), Docs/config.md);
                              ~/.config/duckprompt/config.json when XDG_CONFIG_HOME is unset.
      $XDG_RUNTIME_DIR/duckprompt/
                              The prompt queue, the duck lock and the journal of the playing
                              prompt, which restore reads; serve.pid, written by a running
                              serve, by which play and say find it to hand it their prompt.

    ENVIRONMENT:
      PULSE_SERVER            The server, as for paplay (-s overrides it).
      PULSE_SINK              The sink, as for paplay (-d overrides it).
      DUCKPROMPT_DEVICE       A sink pattern that replaces the config file's prefer.
      DBUS_SESSION_BUS_ADDRESS
                              The session bus of serve, and of the MPRIS players a prompt
                              pauses.
      DUCKPROMPT_DEBUG        1 traces each duck's events and volume writes, and each look
                              devices --watch takes at the server, on standard error with
                              µs timestamps.
    """

    static let play = """
    OVERVIEW: Play a prompt on the routed sink while every other stream is ducked.

    USAGE: duckprompt play [options] FILE...

    ARGUMENTS:
      FILE                    Audio file libsndfile can read: WAV, FLAC, Ogg Vorbis/Opus,
                              MP3, AIFF, … ('-' reads standard input). Played in float32 at
                              its own rate and channels (1 to 8, 8 to 192 kHz). Several files
                              are one prompt under one duck: files of the same rate and
                              channels back to back without a gap. A truncated file is
                              refused (65). A FIFO or '-' is read to its end first.

    OPTIONS:
      -d, --device SINK       Play on SINK: a sink name, #INDEX or @DEFAULT_SINK@.
                              Default: $PULSE_SINK, else the routing rules (duckprompt route).
      --duck GAIN             Lower other streams by GAIN while the prompt plays, relative to
                              their own volume, per channel: -20dB (default), 50%, or a bare
                              number in dB (-20); from -200dB to 0dB (no duck). Streams
                              that start during the prompt are ducked too; a volume you
                              change meanwhile is kept.
      --duck-mode MODE        How other streams are treated: duck (default: lower by
                              --duck), mute (silence them, ramped), pause (pause every
                              MPRIS player that can pause, duck the rest) or none (leave
                              them alone, pause nothing).
      --no-pause              Duck spoken word too. By default a player on the session bus
                              (MPRIS) playing a podcast or an audiobook is paused for the
                              prompt, not ducked, and resumed after it, rewound (config:
                              players; see Docs/config.md). A player the config ignores
                              is still left alone.
      --rewind-ms MS          How far back a paused player resumes, 0 to 60000 (default
                              2000; config: rewind_ms), so the sentence cut is heard again.
      --duck-exempt-role ROLE Never duck streams with this media.role (repeatable; default:
                              phone). Giving it replaces the default; a call (phone or
                              communication) is never ducked whatever it says.
      --attack-ms MS          Ramp down over MS before the first prompt sample, 0 to 60000
                              (default 200).
      --release-ms MS         Ramp back over MS after the last sample was heard, 0 to 60000
                              (default 500).
      --volume GAIN           The prompt's level relative to the volume the server saved for
                              prompts (media.role=navigation: what you set in pavucontrol):
                              -6dB, 80%; +6dB raises it; from -200dB to +20dB. That saved
                              volume is left as it was, also when the prompt is killed.
                              Default: the saved volume. A saved volume of 0 or muted is
                              played as it is, never scaled, with a warning on stderr.
      --latency-msec MS       Prompt stream buffer (tlength) in ms, as paplay's, 1 to 10000;
                              default: 220 ms refilled 100 ms at a time (the sink runs at
                              10 ms).
      --pre-roll-ms MS        Silence before the prompt when the sink is asleep (suspended
                              or idle), so the device wakes first; overlaps the attack.
                              0 to 5000. Default by kind: Bluetooth 300, Bluetooth HFP 1000,
                              HDMI 1000, others 0 (config: pre_roll_ms).
      --priority PRIORITY     Place in the queue of prompts of every process, as in
                              speech-dispatcher (SSIP): important (never interrupted, goes
                              first, interrupts text, notification and progress), message
                              (default: interrupts text, notification and progress, else
                              waits its turn), text (a newer text replaces a waiting one),
                              notification (dropped if another prompt plays or waits),
                              progress (a newer one replaces a waiting one: the last is
                              spoken). A prompt interrupted, replaced or dropped exits 75;
                              an interrupted one fades out in 50 ms and hands its duck to
                              the next prompt, so other streams stay ducked in between.
      --expire-ms MS          Drop the prompt (exit 75) if it has not started within MS
                              (another prompt was playing, or a call under --during-call
                              defer): a stale prompt is worse than none.
                              0 to 3600000.
      --on-busy POLICY        When another prompt plays or waits: wait (default: prompts
                              play one after another) or drop (exit 75 at once).
      --during-call POLICY    While a call rings or is on (a media.role=phone stream, GNOME
                              Calls, ModemManager, oFono, a phone over Bluetooth): mix
                              (default: play under it, --call-duck lower), defer (wait for
                              its end, within --expire-ms), chime (a short earcon instead)
                              or drop (exit 75). The call's own stream is never ducked.
      --call-duck GAIN        Under --during-call mix, play the prompt GAIN below its own
                              level: -200dB to 0dB (default -10dB).
      --property KEY=VALUE    Set a stream property (repeatable), e.g. media.role=event.
      --say TEXT              Speak TEXT after the files, in the same prompt (repeatable);
                              --voice V and --rate WPM as for duckprompt say.
      --exit-with-parent      Stop as for SIGTERM (fade out, restore every volume, exit 143)
                              when the process that started this one exits, even by kill -9:
                              for wrappers (Navit's speech command, a speech-dispatcher
                              module), whose death would otherwise leave the music ducked
                              until the next duckprompt command.
      -v, --verbose           Print the route, the ducked streams and the paused players
                              on stderr.
      --no-service            Play the prompt in this process even when duckprompt serve
                              runs. By default a prompt of one file ('-' too) or one text
                              is handed to a duckprompt serve that owns its bus name on
                              the same session bus and sound server, which starts it
                              sooner: the same prompt, exit status and messages; Ctrl-C,
                              SIGTERM and SIGHUP cancel it, and it stops if this process
                              is killed. -s, -n, --timeout, -v, several files or texts,
                              --keep-awake with a sink from PULSE_SINK, DUCKPROMPT_DEBUG
                              and DUCKPROMPT_DEVICE play it here.
      --dry-run               Play nothing: print what the prompt would do now, one line:
                              its sink, the pre-roll (0 when the sink runs), the attack,
                              the device's latency, its length (a text synthesized and
                              measured) and the time to its first sample. Nothing is
                              queued, ducked or written. Exit 0, also when --during-call
                              drop would drop it; bad input exits as the prompt would (64,
                              65, 66, 69). When the prompt would be handed to duckprompt
                              serve, its Estimate answers (the path that would play it).
      --json                  With --dry-run: one JSON object instead (Docs/json.md),
                              every time in whole µs.
      --keep-awake SECONDS    Keep the prompt's sink from suspending for SECONDS, 1 to 3600,
                              from the prompt's start, so that the next prompt on a
                              Bluetooth or HDMI sink needs no pre-roll. The command stays
                              until then (run it in the background: duckprompt play
                              --keep-awake 60 turn.wav &); SIGINT or SIGTERM end it early.
                              The exit status is the prompt's.
    \(common)
    \(numbers)
    """

    static let say = """
    OVERVIEW: Speak a prompt: synthesized with libespeak-ng in memory (a long text sentence by
    sentence while it plays), routed, ducked and played exactly like duckprompt play.

    USAGE: duckprompt say [options] TEXT...

    ARGUMENTS:
      TEXT                    What to say, e.g. "In 200 metres, turn left"; several are
                              joined with spaces. At most 5000 characters (Unicode code
                              points), with --say's texts: about 5 minutes of speech.
                              '-' alone reads the text from standard input (UTF-8, to its
                              end; a line break at the end is dropped), for wrappers that
                              would otherwise quote it through a shell.

    OPTIONS:
      --voice VOICE           An espeak-ng voice: en (default), en-us, de, fr-fr, …
                              (espeak-ng --voices lists them).
      --rate WPM              Words per minute, 80 to 450 (default 175).
    \(common)

    Every option of duckprompt play (--duck, -d, --volume, --during-call, --call-duck,
    --expire-ms, --exit-with-parent, …) applies.
    \(numbers)
    """

    static let devices = """
    OVERVIEW: List the sinks with their kind, and mark the one a prompt would go to.

    USAGE: duckprompt devices [--json] [--watch | --from FILE] [options]

    One line per sink: index, name, kind, external yes/no, state, active port. '*' marks the
    sink a prompt would go to, 'default' the server's default sink. While a call rings or is
    on (or held), a last line says so: 'call: active (…)' with each call seen. A sink a dump
    gives no name (pactl through grep, a node cut short) is listed as '(unnamed Sink #0)',
    and a 'note:' line says so.

    OPTIONS:
      --json                  Print JSON (see Docs/json.md).
      --watch                 Keep running: print a line each time a sink appears or goes
                              away, changes port or availability, the default sink, the
                              route or the call state changes, with the new routing
                              decision. Ctrl-C ends.
      --from FILE             Read sinks from a dump instead of a server: `pactl list sinks`,
                              `pacmd list-sinks`, `pactl --format=json list sinks`, `pw-dump`
                              (or one object of it), `pw-cli ls Node`, `pw-cli info` or
                              `wpctl inspect` output; pactl or pacmd also on one line
                              (`echo $(…)`); '-' reads standard input; at most 16 MiB.
      -d, --device SINK       Route as if SINK had been asked for.
    \(common)
    """

    static let restore = """
    OVERVIEW: Undo what prompts that died mid-duck left behind.

    USAGE: duckprompt restore [options]

    Every duckprompt command does this in passing; restore does it explicitly, waiting for a
    playing prompt first. Streams still at a level the dead prompt's duck wrote go back to their
    own volume; saved volumes it left ducked are repaired; the MPRIS players it paused (a podcast)
    are played again, if they are still paused as it left them and it paused them at most 120 s
    ago; its journal is removed.

    A journal is removed only once every volume it names was confirmed restored. When its
    server does not answer (it died, is restarting or is stopped), the journal is kept and
    restore exits 69: run it again once the server answers.

    A journal out of bounds (over 153 % or 32 channels, all channels 0, a depth or index no duck
    writes) is refused, never acted on, and named on stderr; restore then exits 65, as for any
    file of the journal directory it does not use (garbled, another version, a symbolic link).

    OPTIONS:
    \(common)
    """

    static let route = """
    OVERVIEW: Print the sink a prompt would go to, and the one-sentence reason. Plays nothing.

    USAGE: duckprompt route [--json] [--from FILE] [options]

    OPTIONS:
      --json                  Print JSON (see Docs/json.md): every sink, and the choice.
      --from FILE             Route the sinks of a dump (see duckprompt devices --help).
      -d, --device SINK       Route as if SINK had been asked for.
    \(common)
    """

    static let serve = """
    OVERVIEW: Serve prompts on the D-Bus session bus, as io.github.duckprompt.DuckPrompt1
    (Docs/dbus.md): Play, PlayFd, Say, Cancel, Route, Devices, WatchRoute, Estimate,
    EstimateSay, KeepAwake; the CallState, Server and Version properties; the PromptStarted,
    PromptTiming, PromptFinished and RouteChanged signals; one line per prompt on stderr.
    Runs in the foreground. SIGTERM: the playing prompt fades out, every volume is restored,
    exit 0.

    USAGE: duckprompt serve [--exit-idle SECONDS] [options]

    OPTIONS:
      --exit-idle SECONDS     Leave when nothing happened for that long (D-Bus activation
                              starts it again on the next call). Default: never.
    \(common)
    """

    static let speechdModule = """
    OVERVIEW: Speak speech-dispatcher's output-module protocol on standard input and output:
    each message is one prompt of speech synthesized by libespeak-ng, ducked and restored as
    say does, through one held prompter. speech-dispatcher starts it as sd_duckprompt
    (AddModule "duckprompt" "sd_duckprompt" "duckprompt.conf"); not for use by hand. A stopped
    message fades out in 50 ms; a message keeps its duck for the next one. Every message gets
    the priority of the config file (the protocol does not tell a module a message's priority).

    USAGE: duckprompt speechd-module [CONF] [options]

    ARGUMENTS:
      CONF                    The module's config file, as speech-dispatcher passes it:
                              DuckpromptPriority PRIORITY (default message) and
                              DuckpromptKeepDuckMs MS (how long a message, ended or stopped,
                              keeps the duck for the next one; default 300, 0 to 1000).

    OPTIONS:
    \(common)
    """

    static let lab = """
    OVERVIEW: Run COMMAND against a private, headless sound server with emulated devices,
    record every sink's monitor and every stream's volume, and report what a listener would
    have heard: where each prompt played, how loud, and how far other streams were ducked
    and whether they came back (Docs/lab.md). For CI; nothing of your own session is
    reachable from COMMAND or touched.

    USAGE: duckprompt lab [options] -- COMMAND [ARGS...]

    ARGUMENTS:
      COMMAND                 Run with PULSE_SERVER, PIPEWIRE_REMOTE, XDG_RUNTIME_DIR and
                              DBUS_SESSION_BUS_ADDRESS pointing at the lab; its standard
                              input, output and error are the lab's.

    OPTIONS:
      --server SERVER         pipewire (default: pipewire, wireplumber, pipewire-pulse) or
                              pulseaudio.
      --device KIND[=NAME]    Emulate a device (repeatable): a null sink carrying the
                              properties a real one has. KIND: speaker, headphones,
                              bluetooth-a2dp (or bluetooth), bluetooth-hfp, usb, hdmi,
                              line-out, car. Default: speaker and bluetooth-a2dp=bt_headset.
                              'none': no device (the server's own fallback sink only).
      --default NAME          The default sink (default: the first device).
      --music [SINK]          Play music on SINK (default: the default sink) from before
                              COMMAND to its end: a 220 Hz sine at -20 dBFS, media.role=music.
      --report FILE           Write the JSON report to FILE ('-': standard output).
      --timeout TIME          Stop COMMAND after TIME (90, 90s, 500ms, 10m; up to 24h): exit 124.
      --keep                  Keep the lab's directory (server logs) and say where.
      --no-listen             Record no monitor and log no stream: only the servers (idle
                              sinks then suspend, as on a desktop; a long test suite).
      --no-service            Do not make duckprompt serve activatable on the lab's bus (a
                              test suite that starts its own service).
      -h, --help              Show this help.

    At the end a summary goes to standard error: where each prompt was heard, the duck
    depth, restored or not. The server of the pulse protocol is started again 0.2 s after it
    dies, as systemd would (its pid: $DUCKPROMPT_LAB_DIR/pulse-server.pid). Everything the
    lab started is stopped by pid, also on Ctrl-C, SIGTERM and the timeout, and so is what
    COMMAND left running in its process group.

    Exit status: COMMAND's; 124 timeout; 127 COMMAND not found, 126 not executable; 64
    usage; 73 the --report file cannot be written (checked first); 69 a server cannot start
    (the missing Debian package is named); 128+N stopped by signal N.
    """
}
