#!/bin/sh
# install-deps.sh -- install the Debian packages ddx needs to build and test.
#
# jq reads JSON in the test scripts; git lets the floors test compare with the previous commit.
# Idempotent: asks dpkg which packages are missing and installs only those,
# through sudo when not root. Used by `make demo` and `make test`.
# DDX_WITH_TORCH=1 (what `make test` sets) adds the test-only set: Debian's CPU PyTorch for the
# live scenario tests (tests/scenarios, tests/watch), Slurm and munge for the test that starts a
# single-node Slurm (tests/slurm), clang-format for the style test, and headless Chromium with
# its WebDriver and Selenium for the browser tests (tests/browser).
# libmicrohttpd and md4c build ddx-web, which serves `ddx serve` and writes `ddx site`.
set -eu

pkgs="build-essential g++ cmake pkg-config libvectorscan-dev libpcre2-dev libyaml-dev \
libjansson-dev zlib1g-dev libzstd-dev liblzma-dev libbz2-dev liblz4-dev nettle-dev libarchive-dev \
libsqlite3-dev libcmocka-dev libmicrohttpd-dev libmd4c-dev libmd4c-html0-dev ripgrep hyperfine jq git"
if [ "${DDX_WITH_TORCH:-0}" = 1 ]; then
    pkgs="$pkgs python3 python3-torch clang-format munge slurmctld slurmd slurm-client \
chromium chromium-driver python3-selenium"
fi
# DDX_WITH_FUZZ=1 (make fuzz): clang with libFuzzer and the sanitizers.
if [ "${DDX_WITH_FUZZ:-0}" = 1 ]; then
    pkgs="$pkgs clang"
fi

missing=""
for p in $pkgs; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
    sudo=""
elif command -v sudo >/dev/null 2>&1; then
    sudo="sudo"
else
    echo "install-deps: missing packages:$missing; run as root or install sudo" >&2
    exit 1
fi
echo "install-deps: installing$missing" >&2
$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
# shellcheck disable=SC2086
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >&2
