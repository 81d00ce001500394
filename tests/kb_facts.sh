#!/bin/sh
# kb_facts.sh -- every fact a reference names (context, checks) is one ddx can produce: a name
# written in the sources (extractor rows, config key tables, derived facts), env.NAME from
# environment dumps, PKG.version for a package the version rows know, nccl.rank.R.* from NCCL's
# init lines. A condition on a fact nothing produces never fires; it is caught here.
#   tests/kb_facts.sh SOURCE_DIR
set -u
root=${1:-.}
cd "$root" || exit 2
# facts named on purpose although no log has shown them yet (the reference keeps the condition
# for when one does): name and why
allowed="ddp.static_graph"  # DDP's static_graph: no public log shows the setting
pkgs=$(sed -n '/^#define PKGS/,/numpy"/p' src/facts.c | tr -d '"\\\n ' | sed 's/#definePKGS//; s/\[-_\]/_/g; s/|/ /g')
bad=0
for name in $(grep -ho 'fact: [A-Za-z0-9_.{}-]*' references/*/*.md | cut -d' ' -f2 | sort -u); do
    grep -qF "\"$name\"" src/*.c src/job/*.c && continue
    case " $allowed " in *" $name "*) continue ;; esac
    case $name in
    env.*) continue ;;
    nccl.rank.*) continue ;;
    *.version)
        p=${name%.version}
        case " $pkgs " in *" $p "*) continue ;; esac ;;
    esac
    echo "reference fact '$name' is produced nowhere (src/*.c, src/job/*.c):" $(grep -l "fact: $name\$" references/*/*.md)
    bad=1
done
exit $bad
