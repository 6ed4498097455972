# SPDX-License-Identifier: MIT
# bash completion of amdsmi(1); installed as bash-completion's completions/amdsmi.
#
# The function asks the CLI what may come next (the hidden entry point `amdsmi __complete
# WORD...`, cli/help.c) instead of carrying a copy of the verbs and options: the CLI's
# option table (cli/main.c) is the only list, so the completion offers exactly the options
# the verb typed so far accepts, and an installed script can never disagree with the
# installed binary. The CLI answers with words, and with two placeholders for what only the
# machine knows, read here from the CLI's CSV output (header names, amdsmi-1.schema.json):
#   @gpu  the -g selectors: indices, N.P partitions, PCI addresses and unique ids
#         (amdsmi list --csv: gpu, bdf, partition_count, unique_id)
#   @vf   the PCI addresses of the VFs (amdsmi sriov --csv: vf_bdf)
# ("--gpu=@gpu": each of them after "--gpu=").

# The values of the CSV columns named in $2... of the output of "$1 VERB --csv" ($1 is
# "amdsmi VERB"), one "v1 v2 ..." line per row. Cells are split at commas: none of these
# columns can hold one.
_amdsmi_csv() {
        local cmd=$1
        shift
        $cmd --csv 2>/dev/null | awk -F, -v want="$*" '
                NR == 1 { n = split(want, w, " "); for (i = 1; i <= NF; i++) col[$i] = i; next }
                { line = ""; for (i = 1; i <= n; i++) line = line (i > 1 ? " " : "") $(col[w[i]]); print line }'
}

# The -g values of the machine of amdsmi $1, each after the prefix $2.
_amdsmi_gpus() {
        local gpu bdf count uid p
        while read -r gpu bdf count uid; do
                [ -n "$gpu" ] || continue
                echo "$2$gpu"
                [ -n "$bdf" ] && echo "$2$bdf"
                [ -n "$uid" ] && echo "$2$uid"
                if [ "${count:-0}" -gt 1 ] 2>/dev/null; then
                        for ((p = 0; p < count; p++)); do
                                echo "$2$gpu.$p"
                        done
                fi
        done < <(_amdsmi_csv "$1 list" gpu bdf partition_count unique_id)
}

# The VF addresses of the machine of amdsmi $1, each after the prefix $2.
_amdsmi_vfs() {
        local vf
        while read -r vf; do
                [ -n "$vf" ] && echo "$2$vf"
        done < <(_amdsmi_csv "$1 sriov" vf_bdf) | sort -u
}

_amdsmi() {
        local cur cword prog line
        local -a words=() cands=()

        # the words up to the cursor, not split at ':' or '=' as readline's COMP_WORDS are
        # (which would cut PCI addresses apart)
        if declare -F _get_comp_words_by_ref >/dev/null; then
                _get_comp_words_by_ref -n := cur words cword
        else
                line=${COMP_LINE:0:COMP_POINT}
                read -ra words <<< "$line"
                [[ -z $line || $line == *[[:blank:]] ]] && words+=("")
                cword=$((${#words[@]} - 1))
                cur=${words[cword]}
        fi
        prog=${words[0]}

        while IFS= read -r line; do
                case $line in
                *@gpu) mapfile -t -O "${#cands[@]}" cands < <(_amdsmi_gpus "$prog" "${line%@gpu}") ;;
                *@vf) mapfile -t -O "${#cands[@]}" cands < <(_amdsmi_vfs "$prog" "${line%@vf}") ;;
                *) cands+=("$line") ;;
                esac
        done < <("$prog" __complete "${words[@]:1:cword}" 2>/dev/null)

        # what was typed is a prefix, of any case (the CLI takes "cpx" for CPX)
        COMPREPLY=()
        for line in "${cands[@]}"; do
                [[ ${line,,} == "${cur,,}"* ]] && COMPREPLY+=("$line")
        done
        # readline replaces only what follows the last word break (':' of a PCI address, '='
        # of --gpu=): drop what comes before it from the candidates
        line=$cur
        [[ $COMP_WORDBREAKS == *:* ]] && line=${line##*:}
        [[ $COMP_WORDBREAKS == *=* ]] && line=${line##*=}
        line=${cur%"$line"}
        [ -n "$line" ] && COMPREPLY=("${COMPREPLY[@]#"$line"}")
}

complete -F _amdsmi amdsmi
