#!/bin/sh
# build.sh -- "builds" the tiny project: checks sum.sh parses and copies it to build/.
sh -n sum.sh && mkdir -p build && cp sum.sh build/sum
