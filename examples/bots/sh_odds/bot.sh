#!/usr/bin/env bash
# A program bot in bash alone (builtins only: no jq, sed, awk or bc).
#
# Strategy, in integer arithmetic: each unseen die counts for a face with
# probability 1/6, or 1/3 for a non-ace face when aces are wild, so a bid's
# "surplus" is (expected count of the face) - (quantity), kept as six times
# that to stay in integers. Call dudo when the standing bid's surplus plus the
# best raise's surplus is negative (the bid is further below expectation than
# the best raise is above it); otherwise bid the face with the largest surplus
# (ties: the higher face) at its smallest legal quantity. Never calza.
set -u
ws='[[:space:]]*'
wild_ones=1

surplus() { # surplus6 QUANTITY FACE -> sets $s
    local q=$1 f=$2 mine=0 d w=1
    for d in "${dice[@]}"; do
        if (( d == f || (wild && f != 1 && d == 1) )); then mine=$((mine + 1)); fi
    done
    (( wild && f != 1 )) && w=2
    s=$(( 6 * mine + unseen * w - 6 * q ))
}

while IFS= read -r line; do
    if [[ $line =~ \"type\"$ws:$ws\"hello\" ]]; then
        echo '{"type": "ready", "name": "sh_odds", "version": "1.0"}'
    elif [[ $line =~ \"type\"$ws:$ws\"match_start\" ]]; then
        wild_ones=1
        [[ $line =~ \"wild_ones\"$ws:$ws(true|false) ]] && [[ ${BASH_REMATCH[1]} == false ]] && wild_ones=0
    elif [[ $line =~ \"type\"$ws:$ws\"turn\" ]]; then
        [[ $line =~ \"dice\"$ws:$ws\[([^]]*)\] ]] && IFS=', ' read -r -a dice <<< "${BASH_REMATCH[1]}"
        [[ $line =~ \"counts\"$ws:$ws\[([^]]*)\] ]] && IFS=', ' read -r -a counts <<< "${BASH_REMATCH[1]}"
        total=0
        for c in "${counts[@]}"; do total=$((total + c)); done
        unseen=$((total - ${#dice[@]}))
        wild=$wild_ones
        [[ $line =~ \"palifico\"$ws:$ws(true|false) ]] && [[ ${BASH_REMATCH[1]} == true ]] && wild=0
        best=-1000000 best_face=0 best_q=0
        if [[ $line =~ \"min_quantity\"$ws:$ws\{([^}]*)\} ]]; then
            rest=${BASH_REMATCH[1]}
            while [[ $rest =~ \"([1-6])\"$ws:$ws([0-9]+)(.*) ]]; do
                f=${BASH_REMATCH[1]} q=${BASH_REMATCH[2]} rest=${BASH_REMATCH[3]}
                surplus "$q" "$f"
                if (( s > best || (s == best && f > best_face) )); then best=$s best_face=$f best_q=$q; fi
            done
        fi
        dudo=0
        if [[ $line =~ \"dudo\"$ws:$ws(true) ]] \
            && [[ $line =~ \[$ws[0-9]+$ws,$ws([0-9]+)$ws,$ws([1-6])$ws\]$ws\]$ws,$ws\"legal\" ]]; then
            surplus "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}"
            (( best_face == 0 || s + best < 0 )) && dudo=1
        fi
        if (( dudo )); then
            echo '{"action": "dudo"}'
        else
            echo "{\"action\": \"bid\", \"quantity\": $best_q, \"face\": $best_face}"
        fi
    fi
done
