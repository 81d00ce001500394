#!/bin/sh
# coverage_doc.sh -- docs/coverage.md is what tools/source_strings.py writes from the committed
# data (data/source-strings/*.tsv), so the page never drifts from the data.
#   tests/coverage_doc.sh SOURCE_DIR
# Exit 77 (ctest: skipped) when python3 is not installed; `make test` installs it.
set -u
root=${1:-.}
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is not installed"; exit 77; }
cd "$root" || exit 2
python3 tools/source_strings.py doc --check
