# tests/lib.bash - what the shell tests share: a scratch directory removed on exit, and one line
# per check (PASS/FAIL, counted by tests/run.sh). source it from the repository root.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; }
check() { local name=$1; shift; if "$@"; then pass "$name"; else fail "$name"; fi; }
