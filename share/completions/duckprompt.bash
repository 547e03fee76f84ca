# bash completion for duckprompt                                   -*- shell-script -*-
#
# The verbs; each verb's options as `duckprompt VERB --help` lists them; the values of
# --priority, --duck-mode, --on-busy, --during-call, --duck-exempt-role and of lab's --server and --device;
# files for FILE, --from and --report; the sinks of the running server for -d/--device (the
# NAME column of `duckprompt devices`, on the -s/--server given before it, and @DEFAULT_SINK@;
# nothing when no server answers within 1 s); after `lab --`, a command and its arguments.
#
# Install: copy to /usr/share/bash-completion/completions/duckprompt (or
# ~/.local/share/bash-completion/completions/duckprompt), or source it from ~/.bashrc. It uses
# bash-completion's helpers when they are loaded, and works without them.

# _duckprompt_sinks COMMAND [SERVER]: the sink names the server lists, one a line, then
# @DEFAULT_SINK@. The table's rows start with '*' (where a prompt would go) or a blank, two
# blanks and the index; the header's INDEX and the closing '* prompt goes to …' line do not.
_duckprompt_sinks()
{
    local -a given=()
    [[ -n ${2-} ]] && given=(--server "$2")
    "$1" devices "${given[@]}" --timeout 1s 2>/dev/null </dev/null |
        awk '/^[* ]  [0-9-]/ { sub(/^\*/, " "); print $2 }'
    printf '%s\n' '@DEFAULT_SINK@'
}

# _duckprompt_reply [-p PREFIX] WORD...: COMPREPLY = the WORDs that start with $cur (after
# PREFIX), quoted where they hold characters the shell would take. Not compgen -W, which
# would expand a sink name such as $(…). A word the line holds up to a ':' is completed
# after the colon, as readline sees it when ':' breaks words.
_duckprompt_reply()
{
    local prefix="" word quoted
    if [[ $1 == -p ]]; then prefix=$2; shift 2; fi
    local match=${cur#"$prefix"}
    COMPREPLY=()
    for word; do
        [[ $word == "$match"* ]] || continue
        quoted=$word
        [[ $word == *[^A-Za-z0-9._:@#/+=,%-]* ]] && printf -v quoted '%q' "$word"
        COMPREPLY+=("$prefix$quoted")
    done
    if [[ $cur == *:* && $COMP_WORDBREAKS == *:* ]]; then
        local colon=${cur%"${cur##*:}"} i
        for i in "${!COMPREPLY[@]}"; do COMPREPLY[i]=${COMPREPLY[i]#"$colon"}; done
    fi
}

_duckprompt_files()
{
    if declare -F _filedir >/dev/null; then
        _filedir
    else
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
    fi
}

# Without bash-completion: the words of the line up to the cursor, split at blanks (quotes
# are not parsed), and a --option=value word split as _init_completion -s splits it.
_duckprompt_line_words()
{
    local line=${COMP_LINE:0:COMP_POINT}
    read -r -a words <<<"$line"
    [[ ${#words[@]} -eq 0 || $line == *[[:blank:]] ]] && words+=("")
    cword=$((${#words[@]} - 1))
    cur=${words[cword]}
    prev=""
    ((cword > 0)) && prev=${words[cword - 1]}
    if [[ $cur == --?*=* ]]; then
        prev=${cur%%=*} cur=${cur#*=} split=true
    fi
}

_duckprompt()
{
    local cur prev words cword split=false
    if declare -F _init_completion >/dev/null; then
        _init_completion -s -n : || return
    else
        _duckprompt_line_words
    fi

    local -a verbs=(play say devices route restore serve speechd-module lab help)
    local -a common=(-s --server -n --client-name --timeout -h --help)
    local common_valued="-s --server -n --client-name --timeout"
    if ((cword == 1)); then
        if [[ $cur == -* ]]; then
            _duckprompt_reply -h --help --version
        else
            _duckprompt_reply "${verbs[@]}"
        fi
        return
    fi

    # The verb's options, and those of them that take a value.
    local verb=${words[1]} valued
    local -a opts
    case $verb in
        play | say)
            opts=(-d --device --duck --duck-mode --no-pause --rewind-ms --duck-exempt-role
                --attack-ms --release-ms --volume --latency-msec --pre-roll-ms --priority
                --expire-ms --on-busy --during-call --call-duck --property --say --voice --rate
                --exit-with-parent -v --verbose --no-service --dry-run --json --keep-awake
                "${common[@]}")
            valued="-d --device --duck --duck-mode --rewind-ms --duck-exempt-role --attack-ms
                    --release-ms --volume --latency-msec --pre-roll-ms --priority --expire-ms
                    --on-busy --during-call --call-duck --property --say --voice --rate --keep-awake
                    $common_valued"
            ;;
        devices)
            opts=(--json --watch --from -d --device "${common[@]}")
            valued="--from -d --device $common_valued"
            ;;
        route)
            opts=(--json --from -d --device "${common[@]}")
            valued="--from -d --device $common_valued"
            ;;
        restore)
            opts=("${common[@]}") valued=$common_valued
            ;;
        serve)
            opts=(--exit-idle "${common[@]}") valued="--exit-idle $common_valued"
            ;;
        speechd-module)
            opts=("${common[@]}") valued=$common_valued
            ;;
        lab)
            opts=(--server --device --default --music --report --timeout --keep --no-listen
                --no-service -h --help --)
            valued="--server --device --default --report --timeout"
            ;;
        help | -h | --help)
            ((cword == 2)) && _duckprompt_reply "${verbs[@]:0:${#verbs[@]}-1}"
            return
            ;;
        *) return ;;
    esac
    valued=" ${valued//[[:space:]]/ } "

    # The words before the current one: which option awaits its value, the server given,
    # where '--' ended the options.
    local i word want="" server="" ended=""
    for ((i = 2; i < cword; i++)); do
        word=${words[i]}
        if [[ $want ]]; then
            [[ $want == -s || $want == --server ]] && server=$word
            want=""
        elif [[ -z $ended ]]; then
            case $word in
                --) ended=$i ;;
                --music) [[ $verb == lab && $((i + 1)) -lt $cword && ${words[i + 1]} != -* ]] && ((i++)) ;;
                --server=*) server=${word#--server=} ;;
                -s?*) server=${word#-s} ;;
                -*) [[ $valued == *" $word "* ]] && want=$word ;;
            esac
        fi
    done
    [[ $verb == lab ]] && server=""
    if [[ $split == true && $valued == *" $prev "* ]]; then
        want=$prev
    fi

    if [[ $ended ]]; then
        if [[ $verb == play ]]; then
            _duckprompt_files
        elif [[ $verb == lab ]]; then
            # COMMAND, then its arguments as its own completion gives them. _command_offset
            # counts COMP_WORDS, where ':' and '=' may split words: the same '--' there.
            if declare -F _command_offset >/dev/null; then
                local n=0 j
                for ((i = 2; i <= ended; i++)); do [[ ${words[i]} == -- ]] && ((n++)); done
                for ((j = 2; j < COMP_CWORD; j++)); do
                    [[ ${COMP_WORDS[j]} == -- ]] && ((--n == 0)) && break
                done
                _command_offset $((j + 1))
            elif ((cword == ended + 1)); then
                mapfile -t COMPREPLY < <(compgen -c -- "$cur")
            else
                _duckprompt_files
            fi
        fi
        return
    fi

    if [[ $want ]]; then
        case $want in
            --priority) _duckprompt_reply important message text notification progress ;;
            --duck-mode) _duckprompt_reply duck mute pause none ;;
            --on-busy) _duckprompt_reply wait drop ;;
            --during-call) _duckprompt_reply mix defer chime drop ;;
            --duck-exempt-role)
                _duckprompt_reply phone video music game event animation production a11y test
                ;;
            -d | --device)
                if [[ $verb == lab ]]; then
                    [[ $cur == *=* ]] ||
                        _duckprompt_reply speaker headphones bluetooth-a2dp bluetooth \
                            bluetooth-hfp usb hdmi line-out car none
                else
                    local -a sinks
                    mapfile -t sinks < <(_duckprompt_sinks "${words[0]/#\~/$HOME}" "$server")
                    _duckprompt_reply "${sinks[@]}"
                fi
                ;;
            --server) [[ $verb == lab ]] && _duckprompt_reply pipewire pulseaudio ;;
            --from | --report) _duckprompt_files ;;
        esac
        return
    fi

    case $cur in
        -d?*)
            if [[ $valued == *" -d "* ]]; then
                local -a sinks
                mapfile -t sinks < <(_duckprompt_sinks "${words[0]/#\~/$HOME}" "$server")
                _duckprompt_reply -p -d "${sinks[@]}"
            fi
            ;;
        -*)
            _duckprompt_reply "${opts[@]}"
            ;;
        *)
            case $verb in
                play) _duckprompt_files ;;
                say) ;;
                *) _duckprompt_reply "${opts[@]}" ;;
            esac
            ;;
    esac
} &&
    complete -F _duckprompt duckprompt

# ex: filetype=sh
