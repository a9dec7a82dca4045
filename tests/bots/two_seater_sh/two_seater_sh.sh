#!/usr/bin/env bash
# Plays only two-player tables (its manifest says so). Seated at a larger table
# it exits at match_start, which a run records as a crash fault.
while IFS= read -r line; do
  if [[ $line =~ \"type\":\ ?\"hello\" ]]; then
    echo '{"type": "ready", "name": "two_seater_sh"}'
  elif [[ $line =~ \"type\":\ ?\"match_start\" ]]; then
    [[ $line =~ \"players\":\ ?([0-9]+) ]] && [[ ${BASH_REMATCH[1]} != 2 ]] && {
      echo "two_seater_sh: seated at a table of ${BASH_REMATCH[1]}" >&2; exit 3; }
  elif [[ $line =~ \"type\":\ ?\"turn\" ]]; then
    if [[ $line =~ \"dudo\":\ ?true ]]; then
      echo '{"action": "dudo"}'
    elif [[ $line =~ \"min_quantity\":\ ?\{\"([1-6])\":\ ?([0-9]+) ]]; then
      echo "{\"action\": \"bid\", \"quantity\": ${BASH_REMATCH[2]}, \"face\": ${BASH_REMATCH[1]}}"
    fi
  fi
done
