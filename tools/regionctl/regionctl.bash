# bash completion for regionctl: its commands, each command's flags and the
# values of --durability and --slot-layout, files where a path goes, and
# the region names of the store already on the line where a region goes
# (NAME, --region NAME, --set NAME=FILE). Commands, flags and which
# positionals a command takes are read from regionctl's own --help, so this
# file cannot fall behind the tool.

_regionctl_regions() {
  # The regions of store $1, one per line, from `regionctl stat --json`.
  "${_regionctl_bin}" stat "$1" --json 2>/dev/null |
    sed -n 's/^      "name": "\(.*\)",\{0,1\}$/\1/p'
}

_regionctl() {
  local _regionctl_bin=${COMP_WORDS[0]}
  local cur=${COMP_WORDS[COMP_CWORD]}
  local prev=${COMP_WORDS[COMP_CWORD-1]}
  COMPREPLY=()
  local IFS=$'\n'

  if ((COMP_CWORD == 1)); then
    local commands
    commands=$("${_regionctl_bin}" --help 2>/dev/null |
      awk '/^Subcommands:/ { on = 1; next } on && /^$/ { exit } on && /^  [a-z]/ { print $1 }')
    COMPREPLY=($(compgen -W "${commands}"$'\n'"--help"$'\n'"--version" -- "${cur}"))
    return
  fi

  local command=${COMP_WORDS[1]} help
  help=$("${_regionctl_bin}" "${command}" --help 2>/dev/null) || return

  # Options that take a value: "  --flag VALUE ..." in the help.
  local valued
  valued=$(printf '%s\n' "${help}" | sed -n 's/^ *\(-[a-z],\)\{0,1\}\(--[a-z0-9-]*\) [A-Z].*/\2/p')

  # The store on the line: the first positional after the command.
  local store="" i word positionals=0
  for ((i = 2; i < COMP_CWORD; i++)); do
    word=${COMP_WORDS[i]}
    if [[ ${word} == -* ]]; then
      if [[ ${word} != *=* ]] && printf '%s\n' "${valued}" | grep -qx -- "${word}"; then
        ((i++))
      fi
      continue
    fi
    ((positionals++))
    ((positionals == 1)) && store=${word}
  done

  case ${prev} in
    --durability)
      COMPREPLY=($(compgen -W $'none\nasync\nsync\npwrite-fdatasync' -- "${cur}"))
      return ;;
    --slot-layout)
      COMPREPLY=($(compgen -W $'auto\ncompact\naligned' -- "${cur}"))
      return ;;
    --region)
      [[ -n ${store} ]] && COMPREPLY=($(compgen -W "$(_regionctl_regions "${store}")" -- "${cur}"))
      return ;;
    --set)
      if [[ -n ${store} && ${cur} != *=* ]]; then
        COMPREPLY=($(compgen -W "$(_regionctl_regions "${store}" | sed 's/$/=/')" -- "${cur}"))
        compopt -o nospace 2>/dev/null
      elif [[ ${cur} == *=* ]]; then
        COMPREPLY=($(compgen -f -- "${cur#*=}" | sed "s/^/${cur%%=*}=/"))
      fi
      return ;;
  esac
  if printf '%s\n' "${valued}" | grep -qx -- "${prev}"; then
    COMPREPLY=($(compgen -f -- "${cur}"))  # FILE, SIZE, DIR...: files are the useful guess
    return
  fi

  if [[ ${cur} == -* ]]; then
    COMPREPLY=($(compgen -W "$(printf '%s\n' "${help}" | grep -oE -- '(^|[ ,])--?[a-zA-Z][a-zA-Z0-9-]*' |
      sed 's/^[ ,]//' | sort -u)" -- "${cur}"))
    return
  fi

  # Positionals, named by the command's "Usage:" line (PATH, NAME, DEST...).
  local usage
  usage=$(printf '%s\n' "${help}" | sed -n 's/^Usage: [^ ]* [^ ]* \[OPTIONS\] *//p' | tr -d '[]')
  local -a names
  IFS=' ' read -r -a names <<<"${usage}"
  local name=${names[positionals]:-}
  if [[ ${name} == NAME && -n ${store} ]]; then
    COMPREPLY=($(compgen -W "$(_regionctl_regions "${store}")" -- "${cur}"))
  else
    COMPREPLY=($(compgen -f -- "${cur}"))
  fi
}
complete -F _regionctl regionctl
