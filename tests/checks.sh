# checks.sh — sourced by the bash script tests with the build folder as
# its argument: $B, the programs $TL and $GEN in it, a scratch folder $tmp
# removed on exit, ok / bad to count and print each check, and finish
# NAME to print "NAME: N passed, M failed" and return the status.
set -u
B=$1
TL=$B/tracelens
GEN=$B/tracegen
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0; failed=0
ok() { passed=$((passed+1)); echo "ok   $*"; }
bad() { failed=$((failed+1)); echo "FAIL $*"; }
finish() { echo "$1: $passed passed, $failed failed"; [ "$failed" = 0 ]; }
