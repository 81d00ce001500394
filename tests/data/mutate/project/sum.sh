#!/bin/sh
# sum.sh -- the tiny program of the mutate/script test: prints A + B, and "big" when the sum
# is over 10 (a branch no test looks at, so a mutation there survives).
a=$1
b=$2
s=$((a + b))
if [ "$s" -gt 10 ]; then
    echo "$s big"
else
    echo "$s"
fi
