# fish completion for duckprompt
#
# The verbs; each verb's options as `duckprompt VERB --help` lists them; the values of
# --priority, --duck-mode, --on-busy, --during-call, --duck-exempt-role and of lab's --server and --device;
# files for FILE, --from and --report; the sinks of the running server for -d/--device (the
# NAME column of `duckprompt devices`, on the -s/--server given before it, and @DEFAULT_SINK@;
# nothing when no server answers within 1 s); after `lab --`, a command and its arguments.
#
# Install: copy to ~/.config/fish/completions/duckprompt.fish or to fish's
# vendor_completions.d (pkg-config --variable completionsdir fish).

# The verb (the second word) or nothing; "lab-command" after lab's '--'.
function __duckprompt_verb
    set -l tokens (commandline -opc)
    set -q tokens[2]; or return 1
    if test "$tokens[2]" = lab; and contains -- -- $tokens[3..-1]
        # (with two tokens, [3..-1] is the reversed range 3..2: the word lab, not '--')
        echo lab-command
    else
        printf '%s\n' $tokens[2]
    end
end

# True when the verb is one of the arguments.
function __duckprompt_verb_in
    set -l verb (__duckprompt_verb); or return 1
    contains -- $verb $argv
end

# True before the verb; with an argument, also right after it (a topic for help, -h, --help).
function __duckprompt_at_verb
    set -l tokens (commandline -opc)
    test (count $tokens) -eq 1; and return 0
    test (count $tokens) -eq 2; and contains -- $tokens[2] $argv
end

# The sinks `duckprompt devices` lists (on the -s/--server given earlier), each with its kind,
# then @DEFAULT_SINK@. The table's rows start with '*' (where a prompt would go) or a blank,
# two blanks and the index; the header's INDEX and the closing '* prompt goes to' do not.
function __duckprompt_sinks
    set -l tokens (commandline -opc)
    set -l command (string replace -r '^~' -- $HOME $tokens[1])
    set -l server
    # The options of play, say, devices and route that take their value in the next word.
    set -l valued -d --device --duck --duck-mode --rewind-ms --duck-exempt-role --attack-ms \
        --release-ms --volume --latency-msec --pre-roll-ms --priority --expire-ms --on-busy \
        --during-call --call-duck --property --say --voice --rate --keep-awake --from -n --client-name \
        --timeout
    set -l i 3
    while test $i -le (count $tokens)
        switch $tokens[$i]
            case -- --
                break
            case -s --server
                set i (math $i + 1)
                set -q tokens[$i]; and set server --server $tokens[$i]
            case $valued
                set i (math $i + 1)
            case '--server=*'
                set server --server (string replace -- --server= '' $tokens[$i])
            case '-s?*'
                set server --server (string sub -s 3 -- $tokens[$i])
        end
        set i (math $i + 1)
    end
    if command -q $command
        $command devices $server --timeout 1s 2>/dev/null </dev/null |
            awk '/^[* ]  [0-9-]/ { sub(/^\*/, " "); print $2 "\t" $3 }'
    end
    printf '%s\t%s\n' @DEFAULT_SINK@ "the server's default sink"
end

# After lab's '--': COMMAND, then its arguments as its own completion gives them.
function __duckprompt_lab_command
    set -l tokens (commandline -opc)
    set -l dashes (contains -i -- -- $tokens)
    set -e tokens[1..$dashes]
    complete -C (string join -- ' ' (string escape -- $tokens) (commandline -ct))
end

complete -c duckprompt -e

# No file names but for play's FILE (after lab's '--', the command's own completion).
complete -c duckprompt -n 'not __duckprompt_verb_in play lab-command' -f

# duckprompt VERB
complete -c duckprompt -n __duckprompt_at_verb -a play -d 'Route, duck, play FILE whole, restore every volume'
complete -c duckprompt -n __duckprompt_at_verb -a say -d 'The same with speech synthesized by libespeak-ng'
complete -c duckprompt -n __duckprompt_at_verb -a devices -d 'List the sinks, their kind, and where a prompt would go'
complete -c duckprompt -n __duckprompt_at_verb -a route -d 'Say which sink a prompt would go to, and why (no sound)'
complete -c duckprompt -n __duckprompt_at_verb -a restore -d 'Undo the duck of a prompt that died mid-prompt'
complete -c duckprompt -n __duckprompt_at_verb -a serve -d 'Serve prompts on the D-Bus session bus'
complete -c duckprompt -n __duckprompt_at_verb -a speechd-module -d 'A speech-dispatcher output module (sd_duckprompt runs it)'
complete -c duckprompt -n __duckprompt_at_verb -a lab -d 'Run COMMAND on a private headless server with emulated devices'
complete -c duckprompt -n __duckprompt_at_verb -a help -d "Show a verb's help"
complete -c duckprompt -n __duckprompt_at_verb -l version -d 'Show duckprompt, libpulse and libsndfile versions'
complete -c duckprompt -n __duckprompt_at_verb -s h -l help -d 'Show this help'
# duckprompt help VERB (also -h VERB, --help VERB)
complete -c duckprompt -n '__duckprompt_at_verb help -h --help; and not __duckprompt_at_verb' \
    -a 'play say devices route restore serve speechd-module lab'

# Every verb that talks to a server.
set -l server_verbs '__duckprompt_verb_in play say devices route restore serve speechd-module'
complete -c duckprompt -n $server_verbs -s s -l server -x -d 'Sound server to connect to (libpulse server string)'
complete -c duckprompt -n $server_verbs -s n -l client-name -x -d 'Client name the server shows'
complete -c duckprompt -n $server_verbs -l timeout -x -d 'Give up connecting after TIME: 5, 2.5s, 500ms'
complete -c duckprompt -n '__duckprompt_verb_in play say devices route restore serve speechd-module lab' -s h -l help -d 'Show this help'

# play FILE..., say TEXT...
set -l playsay '__duckprompt_verb_in play say'
complete -c duckprompt -n $playsay -s d -l device -x -a '(__duckprompt_sinks)' -d 'Play on SINK: a sink name, #INDEX or @DEFAULT_SINK@'
complete -c duckprompt -n $playsay -l duck -x -d 'Lower other streams by GAIN: -20dB, 50%'
complete -c duckprompt -n $playsay -l duck-mode -x -d 'How other streams are treated' -a "
    duck\t'lower by --duck (default)'
    mute\t'silence them, ramped'
    pause\t'pause every MPRIS player that can pause, duck the rest'
    none\t'leave them alone, pause nothing'"
complete -c duckprompt -n $playsay -l no-pause -d 'Duck spoken word too: pause no podcast or audiobook'
complete -c duckprompt -n $playsay -l rewind-ms -x -d 'How far back a paused player resumes, 0 to 60000 ms'
complete -c duckprompt -n $playsay -l duck-exempt-role -x -d 'Never duck streams with this media.role (repeatable)' \
    -a 'phone video music game event animation production a11y test'
complete -c duckprompt -n $playsay -l attack-ms -x -d 'Ramp down over MS before the prompt, 0 to 60000'
complete -c duckprompt -n $playsay -l release-ms -x -d 'Ramp back over MS after the prompt, 0 to 60000'
complete -c duckprompt -n $playsay -l volume -x -d "The prompt's level relative to the saved prompt volume: -6dB, 80%"
complete -c duckprompt -n $playsay -l latency-msec -x -d 'Prompt stream buffer (tlength) in ms, 1 to 10000'
complete -c duckprompt -n $playsay -l pre-roll-ms -x -d 'Silence before the prompt when the sink is asleep, 0 to 5000'
complete -c duckprompt -n $playsay -l priority -x -d 'Place in the queue of prompts, as in speech-dispatcher' -a "
    important\t'never interrupted, goes first'
    message\t'default: interrupts text, notification and progress'
    text\t'a newer text replaces a waiting one'
    notification\t'dropped if another prompt plays or waits'
    progress\t'a newer one replaces a waiting one'"
complete -c duckprompt -n $playsay -l expire-ms -x -d 'Drop the prompt (exit 75) if it has not started within MS'
complete -c duckprompt -n $playsay -l on-busy -x -d 'When another prompt plays or waits' -a "
    wait\t'play one after another (default)'
    drop\t'exit 75 at once'"
complete -c duckprompt -n $playsay -l during-call -x -d 'While a call rings or is on' -a "
    mix\t'play under the call, --call-duck lower (default)'
    defer\t'wait for the call to end, within --expire-ms'
    chime\t'a short earcon instead of the prompt'
    drop\t'exit 75'"
complete -c duckprompt -n $playsay -l call-duck -x -d 'Under --during-call mix, the prompt GAIN lower (-10dB)'
complete -c duckprompt -n $playsay -l property -x -d 'Set a stream property KEY=VALUE (repeatable)'
complete -c duckprompt -n $playsay -l say -x -d 'Speak TEXT after the files (repeatable)'
complete -c duckprompt -n $playsay -l voice -x -d 'An espeak-ng voice: en, en-us, de, fr-fr, …'
complete -c duckprompt -n $playsay -l rate -x -d 'Words per minute, 80 to 450'
complete -c duckprompt -n $playsay -l exit-with-parent -d 'Stop, fade and restore when the parent process exits'
complete -c duckprompt -n $playsay -s v -l verbose -d 'Print the route, the ducked streams and the paused players'
complete -c duckprompt -n $playsay -l no-service -d 'Play in this process, not through a running duckprompt serve'
complete -c duckprompt -n $playsay -l dry-run -d 'Play nothing: print what the prompt would do now'
complete -c duckprompt -n $playsay -l json -d 'With --dry-run: one JSON object (Docs/json.md)'
complete -c duckprompt -n $playsay -l keep-awake -x -d "Keep the prompt's sink awake SECONDS from its start, 1 to 3600"

# devices, route
complete -c duckprompt -n '__duckprompt_verb_in devices route' -l json -d 'Print JSON (Docs/json.md)'
complete -c duckprompt -n '__duckprompt_verb_in devices' -l watch -d 'Keep running: a line per change of sinks or route'
complete -c duckprompt -n '__duckprompt_verb_in devices route' -l from -r -F -d 'Read sinks from a dump instead of a server'
complete -c duckprompt -n '__duckprompt_verb_in devices route' -s d -l device -x -a '(__duckprompt_sinks)' -d 'Route as if SINK had been asked for'

# serve
complete -c duckprompt -n '__duckprompt_verb_in serve' -l exit-idle -x -d 'Leave when nothing happened for SECONDS'

# lab [options] -- COMMAND [ARGS...]
set -l lab '__duckprompt_verb_in lab'
complete -c duckprompt -n $lab -l server -x -d 'The private server' -a "
    pipewire\t'pipewire, wireplumber, pipewire-pulse (default)'
    pulseaudio\t'PulseAudio'"
complete -c duckprompt -n $lab -l device -x -d 'Emulate a device KIND[=NAME] (repeatable)' -a "
    speaker\t'built-in speaker'
    headphones\t'headphones'
    bluetooth-a2dp\t'Bluetooth A2DP headset'
    bluetooth\t'the same as bluetooth-a2dp'
    bluetooth-hfp\t'Bluetooth HFP headset'
    usb\t'USB sound card'
    hdmi\t'HDMI output'
    line-out\t'line out'
    car\t'car audio'
    none\t'no device: the server\'s own fallback sink only'"
complete -c duckprompt -n $lab -l default -x -d 'The default sink (default: the first device)'
complete -c duckprompt -n $lab -l music -d 'Play music on SINK (default: the default sink)'
complete -c duckprompt -n $lab -l report -r -F -d "Write the JSON report to FILE ('-': standard output)"
complete -c duckprompt -n $lab -l timeout -x -d 'Stop COMMAND after TIME: 90, 90s, 500ms, 10m; up to 24h'
complete -c duckprompt -n $lab -l keep -d "Keep the lab's directory (server logs) and say where"
complete -c duckprompt -n $lab -l no-listen -d 'Record no monitor and log no stream'
complete -c duckprompt -n $lab -l no-service -d 'Do not make duckprompt serve activatable on the bus'
complete -c duckprompt -n $lab -a -- -d 'COMMAND follows'
complete -c duckprompt -n '__duckprompt_verb_in lab-command' -x -a '(__duckprompt_lab_command)'
