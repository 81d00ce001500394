#!/bin/sh
# install.sh -- `make install` with DESTDIR and PREFIX puts the binary, the man page and the bash
# and zsh completions in their places, and each is what the binary's help and option table say.
#
#   sh tests/install.sh SOURCE_DIR BUILD_DIR
set -eu
src=$1
build=$(cd "$2" && pwd)
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

make -C "$src" install BUILD="$build" DESTDIR="$d/root" PREFIX=/opt/ddx >"$d/log" 2>&1 ||
    { cat "$d/log"; fail "make install failed"; }
p=$d/root/opt/ddx
[ -x "$p/bin/ddx" ] || fail "no executable bin/ddx under DESTDIR/PREFIX"
"$p/bin/ddx" --version >/dev/null || fail "the installed binary does not run"

man=$p/share/man/man1/ddx.1
grep -q '^\.TH DDX 1' "$man" || fail "ddx.1 is no man page"
# every command and every option of the help text is in the man page
for c in diagnose refs show lint eval; do
    grep -q "^\.SS ddx $c" "$man" || fail "ddx.1 lacks the command $c"
done
for o in strict quiet max-bytes output override kb; do
    sed 's/\\//g' "$man" | grep -q -- "--$o" || fail "ddx.1 lacks the option --$o"
done
if command -v groff >/dev/null; then
    groff -man -Tutf8 -ww -z "$man" 2>"$d/groff" || fail "groff rejects ddx.1"
    [ ! -s "$d/groff" ] || { cat "$d/groff"; fail "groff warns about ddx.1"; }
fi

bc=$p/share/bash-completion/completions/ddx
bash -c ". '$bc' && complete -p ddx" >/dev/null || fail "the bash completion does not register"
# the completion offers diagnose's options after 'ddx diagnose --st'
got=$(bash -c ". '$bc'; COMP_WORDS=(ddx diagnose --st); COMP_CWORD=2; _ddx; echo \"\${COMPREPLY[*]}\"")
[ "$got" = "--strict" ] || fail "bash completion of 'ddx diagnose --st' gave '$got'"
got=$(bash -c ". '$bc'; COMP_WORDS=(ddx refs --st); COMP_CWORD=2; _ddx; echo \"\${COMPREPLY[*]}\"")
[ -z "$got" ] || fail "bash completion of 'ddx refs --st' offers diagnose's '$got'"

zc=$p/share/zsh/site-functions/_ddx
head -1 "$zc" | grep -q '^#compdef ddx' || fail "_ddx is no zsh completion"
if command -v zsh >/dev/null; then
    zsh -n "$zc" || fail "zsh cannot parse _ddx"
fi

make -C "$src" uninstall BUILD="$build" DESTDIR="$d/root" PREFIX=/opt/ddx >/dev/null 2>&1
[ ! -e "$p/bin/ddx" ] && [ ! -e "$man" ] || fail "make uninstall left files"
echo "install: binary, man page, bash and zsh completions in place"
