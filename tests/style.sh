#!/bin/sh
# style.sh -- the C sources follow .clang-format (clang-format 14, Debian 12).
#   tests/style.sh SOURCE_DIR
# Exit 77 (ctest: skipped) when clang-format is not installed; `make test` installs it.
set -u
root=${1:-.}
command -v clang-format >/dev/null 2>&1 || { echo "SKIP: clang-format is not installed"; exit 77; }
cd "$root" || exit 2
files=$(ls src/*.c src/*.h src/job/*.c src/job/*.h cli/*.c cli/*.h include/*.h tools/*.c tests/unit/*.c fuzz/*.c bench/*.c 2>/dev/null)
if ! clang-format --dry-run --Werror $files; then
    echo "style: run 'clang-format -i' on the files above (.clang-format is the style)" >&2
    exit 1
fi
