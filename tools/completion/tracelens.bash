# bash completion for tracelens: commands, then each command's flags, both
# read from the program's own --help (so they follow the installed version),
# and the values of --units.
_tracelens()
{
    local cur="${COMP_WORDS[COMP_CWORD]}" cmd="" i
    for ((i = 1; i < COMP_CWORD; i++)); do
        case "${COMP_WORDS[i]}" in
            --db) ((i++)) ;;
            -*) ;;
            *) cmd="${COMP_WORDS[i]}"; break ;;
        esac
    done
    if [[ -z "$cmd" && "$cur" != -* ]]; then
        local cmds
        cmds=$("${COMP_WORDS[0]}" --help 2>/dev/null | awk '/^Commands:/{on=1; next} on && /^  [a-z]/{print $1} on && /^$/{on=0}')
        COMPREPLY=($(compgen -W "$cmds" -- "$cur"))
        return
    fi
    if [[ "${COMP_WORDS[COMP_CWORD-1]}" == --units ]]; then
        COMPREPLY=($(compgen -W "ns us µs ms s" -- "$cur"))
        return
    fi
    if [[ "$cur" == -* ]]; then
        local flags
        if [[ -n "$cmd" ]]; then
            flags=$("${COMP_WORDS[0]}" "$cmd" --help 2>/dev/null | grep -o -- '--[A-Za-z0-9_-]*' | sort -u)
        else
            flags="--db --help --version"
        fi
        COMPREPLY=($(compgen -W "$flags" -- "$cur"))
        return
    fi
    COMPREPLY=($(compgen -f -- "$cur"))
}
complete -o filenames -F _tracelens tracelens
