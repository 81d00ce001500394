#!/bin/sh
# test.sh -- the tiny project's one test: 2 + 3 is 5.
[ "$(sh build/sum 2 3)" = 5 ] || { echo "FAIL: sum-adds 2 + 3 gave $(sh build/sum 2 3)"; exit 1; }
echo "ok"
