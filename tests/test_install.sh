#!/usr/bin/env bash
# test_install.sh — `cmake --install` into a temporary prefix gives a
# working installation with no environment variable: the program finds its
# data (the roofline of an H100 trace needs data/arch), the reference
# commands are links to it, the manual page and completions are in place,
# and the Python module imports from the prefix's site folder and reports.
# usage: test_install.sh BUILD_DIR
set -u
build=$(cd "$1" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

if ! cmake --install "$build" --prefix "$tmp/p" >"$tmp/install.log" 2>&1; then
    cat "$tmp/install.log"; echo "0 passed, 1 failed"; exit 1
fi
unset TRACELENS_DATADIR TRACELENS_DB
export HOME="$tmp/home"
"$build/tracegen" --size 1M -q -o "$tmp/h100.json" || { echo "tracegen failed"; exit 1; }

p="$tmp/p/bin/tracelens"
[ -x "$p" ] && ok || bad "no $p"
"$p" --db "$tmp/db" report "$tmp/h100.json" --csv-dir "$tmp/csvs" 2>"$tmp/err" >/dev/null || bad "report failed: $(cat "$tmp/err")"
grep -q "roofline for H100_SXM" "$tmp/err" && ok || bad "no roofline line: $(cat "$tmp/err")"
head -1 "$tmp/csvs/unified_perf_summary.csv" 2>/dev/null | grep -q "Pct Roofline_mean" && ok || bad "no roofline columns"
[ "$(readlink "$tmp/p/bin/TraceLens_generate_perf_report_pytorch")" = tracelens ] && ok || bad "no reference link"
"$tmp/p/bin/TraceLens_generate_perf_report_pytorch" --help >/dev/null 2>&1 && ok || bad "reference command"
[ -s "$tmp/p/share/man/man1/tracelens.1" ] && ok || bad "no manual page"
grep -q "COMMAND: INGEST" "$tmp/p/share/man/man1/tracelens.1" 2>/dev/null && ok || bad "manual lacks commands"
[ -s "$tmp/p/share/bash-completion/completions/tracelens" ] && ok || bad "no bash completion"
[ -s "$tmp/p/share/zsh/site-functions/_tracelens" ] && ok || bad "no zsh completion"
words=$(bash -c "source '$tmp/p/share/bash-completion/completions/tracelens'; COMP_WORDS=('$p' rep); COMP_CWORD=1; _tracelens; echo \${COMPREPLY[*]}")
[ "$words" = report ] && ok || bad "bash completion of 'rep' gave '$words'"
flags=$(bash -c "source '$tmp/p/share/bash-completion/completions/tracelens'; COMP_WORDS=('$p' report --short_k); COMP_CWORD=2; _tracelens; echo \${COMPREPLY[*]}")
case "$flags" in *--short_kernel_study*) ok ;; *) bad "bash completion of --short_k gave '$flags'" ;; esac

site=$(sed -n 's/^-- Python module: \(.*\)\/tracelens$/\1/p' "$tmp/install.log")
if [ -e "$build/libtracelens.so" ]; then
    out=$(cd "$tmp" && PYTHONPATH="$site" /usr/bin/python3 -c "
import tracelens, sys
s = tracelens.Store('$tmp/pydb')
ids = s.ingest('$tmp/h100.json')
sheets = s.report(ids[0])
ups = sheets['unified_perf_summary']
cols = list(ups.columns)
print(tracelens.__file__, 'Pct Roofline_mean' in cols, len(sheets))
" 2>&1)
    case "$out" in "$site"/tracelens/__init__.py\ True\ *) ok ;; *) bad "python from the prefix: $out" ;; esac
else
    echo "python module: skipped (no shared library in this build)"
fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
