#!/usr/bin/env bash
# tests/test_compile.sh - dpprof.h (and dpprof_tools.h beside it) compiles as C11 -pedantic, as C++17 and under nvcc, with and
# without the implementation, warning-free. run by make test.
set -u
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#include "dpprof.h"\nint main(void) { return dpprof_result_str(0)[0] == 0; }\n' >"$tmp/decl.c"
printf '#define DPPROF_IMPLEMENTATION\n#define DPPROF_ENGINE\n#include "dpprof.h"\n#define DPPROF_TOOLS_IMPLEMENTATION\n#include "dpprof_tools.h"\nint main(void) { return dpprof_result_str(0)[0] == 0; }\n' >"$tmp/impl.c"
# the profiler alone: DPPROF_IMPLEMENTATION and nothing else, no library (not even libm), no CUDA symbols
cat >"$tmp/prof.c" <<'C'
#define DPPROF_IMPLEMENTATION
#include "dpprof.h"
#include <stdio.h>
int main(void) {
    dpprof_prof p;
    void *x;
    dpprof_prof_init(&p, 0);
    dpprof_phase_begin(&p, DPPROF_PHASE_FORWARD, 0);
    x = dpprof_malloc(&p, 4096, DPPROF_CAT_ACTIVATIONS, DPPROF_MOD_MLP);
    dpprof_free(&p, x);
    dpprof_phase_end(&p);
    printf("%lld", (long long)p.peak_bytes);
    dpprof_prof_free(&p);
    return 0;
}
C
try() { # name, command...
    local name=$1; shift
    if out=$("$@" 2>&1); then echo "PASS $name"; else echo "FAIL $name: $(head -c 600 <<<"$out")"; fi
}
try "declarations as C11 -pedantic -Werror" gcc -std=c11 -Wall -Wextra -Werror -pedantic -I. -c "$tmp/decl.c" -o "$tmp/a.o"
try "implementation as C11 -pedantic -Werror" gcc -std=c11 -Wall -Wextra -Werror -pedantic -I. -c "$tmp/impl.c" -o "$tmp/b.o"
try "declarations as C++17 -Werror" g++ -std=c++17 -Wall -Wextra -Werror -I. -x c++ -c "$tmp/decl.c" -o "$tmp/c.o"
try "implementation as C++17 -Werror" g++ -std=c++17 -Wall -Wextra -Werror -I. -x c++ -c "$tmp/impl.c" -o "$tmp/d.o"
try "the profiler alone as C11, no define or library, -O0, links and runs" bash -c "gcc -std=c11 -O0 -Wall -Wextra -Werror -pedantic -I. '$tmp/prof.c' -o '$tmp/p1' && [ \"\$('$tmp/p1')\" = 4096 ]"
try "the profiler alone as C++17, no define or library, links and runs" bash -c "g++ -std=c++17 -O2 -Wall -Wextra -Werror -I. -x c++ '$tmp/prof.c' -o '$tmp/p2' && [ \"\$('$tmp/p2')\" = 4096 ]"
try "the profiler alone links with -Wl,--no-undefined and no libm (nm: no math or cuda symbol)" bash -c "gcc -std=c11 -O0 -I. '$tmp/prof.c' -o '$tmp/p3' -Wl,--no-undefined && ! nm -u '$tmp/p3' | grep -Eq ' (sqrt|exp|log|pow|floor|ceil|fmod|cuda|cublas)'"
if command -v mpicc >/dev/null; then # the engine with MPI (DPPROF_MPI), as C11 and as C++17
    mpiflags=$(mpicc --showme:compile | sed 's/-I/-isystem /g')
    try "implementation with DPPROF_MPI as C11 -pedantic -Werror" gcc -std=c11 -Wall -Wextra -Werror -pedantic -DDPPROF_MPI $mpiflags -I. -c "$tmp/impl.c" -o "$tmp/m1.o"
    try "implementation with DPPROF_MPI as C++17 -Werror" g++ -std=c++17 -Wall -Wextra -Werror -DDPPROF_MPI $mpiflags -I. -x c++ -c "$tmp/impl.c" -o "$tmp/m2.o"
else echo "SKIP no mpicc: the header with DPPROF_MPI was not compiled"; fi
try "implementation with clang -Werror" clang -std=c11 -Wall -Wextra -Werror -pedantic -I. -c "$tmp/impl.c" -o "$tmp/e.o"
NVCC=$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
if [ -n "$NVCC" ]; then
    cp "$tmp/decl.c" "$tmp/decl.cu"; cp "$tmp/impl.c" "$tmp/impl.cu"
    try "declarations under nvcc" "$NVCC" -std=c++17 -Xcompiler -Wall,-Wextra,-Werror -I. -c "$tmp/decl.cu" -o "$tmp/f.o"
    try "implementation under nvcc" "$NVCC" -std=c++17 -Xcompiler -Wall,-Wextra,-Werror -I. -c "$tmp/impl.cu" -o "$tmp/g.o"
else
    echo "SKIP nvcc not found: the nvcc compile checks did not run"
fi
# every public function a header declares is named in its manual (the comment before its include guard), as
# the shell expands {a,b}: a function added without a line in the manual fails here
unlisted() { # header guard
    local manual listed declared
    manual=$(awk -v g="#ifndef $2" '$0 == g {exit} {print}' "$1" | sed ':a;N;$!ba;s/,\n */,/g')
    listed=$(grep -oE 'dpprof_[a-z0-9_]*(\{[a-z0-9_,]*\}[a-z0-9_]*)*' <<<"$manual" | while read -r w; do eval "printf '%s\n' $w"; done | sort -u)
    declared=$(awk -v g="#endif /* $2 */" '$0 == g {exit} {print}' "$1" | grep -E '^(DPPROF_API|DPPROF__HDI)' | grep -oE '\bdpprof_[a-z0-9][a-z0-9_]*\(' | tr -d '(' | sort -u)
    comm -23 <(echo "$declared") <(echo "$listed") | tr '\n' ' '
}
for h in dpprof.h:DPPROF_H dpprof_tools.h:DPPROF_TOOLS_H; do
    missing=$(unlisted "${h%%:*}" "${h#*:}")
    if [ -z "$missing" ]; then echo "PASS ${h%%:*}: its manual names every public function it declares"
    else echo "FAIL ${h%%:*}: its manual does not name: $missing"; fi
done
