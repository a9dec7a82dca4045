#!/bin/sh
read -r hello
head -c 20480 /dev/zero | tr '\0' '\n' >&2
head -c 65000 /dev/zero | tr '\0' ' '
printf '\n'
sleep 5
