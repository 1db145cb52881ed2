#!/bin/sh
# check.sh - the header's own promises, each a check that fails loudly:
#   pure ASCII; compiles clean as C99/C11/C++11/C++17 with gcc and clang and
#   extra warnings; no heap reference (nm -u); no mutable global (no .data or
#   .bss symbol); LDL_STATIC, LDL_NO_DEFAULT_CLOCK, LDL_NO_ASYNC and LDL_KEY_MAX builds;
#   the built-in clock's #error when a system header hides clock_gettime; the
#   top comment's quick start compiles and runs as pasted; the Cortex-M4 footprint
#   ceilings; THE EDGES: README's diagram is the header's, the other copies
#   point to LDL__EDGES, LDL_ASSERT is on without NDEBUG and gone under it.
# Prints "N passed, N failed" last; exits non-zero on any failure.
set -u
H=lite_di_lock.h
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok()  { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "  FAIL $*"; }
W="-Wall -Wextra -Wpedantic -Werror"
XW="-Wconversion -Wsign-conversion -Wshadow -Wcast-qual -Wstrict-prototypes -Wmissing-prototypes -Wundef"

# 1. ASCII only
if LC_ALL=C grep -n '[^ -~	]' "$H" >/dev/null; then bad "non-ASCII or control byte in $H"; else ok; fi

printf '#define LITE_DI_LOCK_IMPLEMENTATION\n#include "lite_di_lock.h"\n' > "$T/impl.c"
cp "$T/impl.c" "$T/impl.cpp"

# 2. strict builds of the implementation
for c in "gcc -std=c99" "gcc -std=c11" "clang -std=c99" "clang -std=c11" "gcc -std=gnu99"; do
  if $c $W $XW -I. -c "$T/impl.c" -o "$T/o.o" 2>"$T/err"; then ok; else bad "$c: $(head -3 "$T/err")"; fi
done
for c in "g++ -std=c++11" "g++ -std=c++17" "clang++ -std=c++11" "clang++ -std=c++17"; do
  if $c $W -Wshadow -Wconversion -I. -c "$T/impl.cpp" -o "$T/o.o" 2>"$T/err"; then ok; else bad "$c: $(head -3 "$T/err")"; fi
done

# 3. no heap, no mutable global
gcc -std=c99 -O2 -I. -c "$T/impl.c" -o "$T/o.o"
if nm -u "$T/o.o" | grep -Eq '\b(malloc|calloc|realloc|free|aligned_alloc|posix_memalign)\b'; then
  bad "the implementation references the heap: $(nm -u "$T/o.o" | tr '\n' ' ')"; else ok; fi
if nm "$T/o.o" | grep -Eq ' [BbDdCGgSs] '; then
  bad "mutable global state: $(nm "$T/o.o" | grep -E ' [BbDdCGgSs] ' | tr '\n' ' ')"; else ok; fi
gcc -std=c99 -O0 -I. -c "$T/impl.c" -o "$T/o0.o"
if nm "$T/o0.o" | grep -Eq ' [BbDdCGgSs] '; then bad "mutable global state at -O0"; else ok; fi

# 4. configuration options
cat > "$T/static.c" <<'X'
#define LDL_STATIC
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
int main(void) { return ldl_strerror(LDL_OK)[0] == 'o' ? 0 : 1; }
X
if gcc -std=c99 $W -I. "$T/static.c" -o "$T/static" 2>"$T/err" && "$T/static"; then ok; else bad "LDL_STATIC: $(head -3 "$T/err")"; fi
if nm "$T/static" | grep -q ' T ldl_'; then bad "LDL_STATIC exported an ldl_ symbol"; else ok; fi

cat > "$T/noclock.c" <<'X'
#define LDL_NO_DEFAULT_CLOCK
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
static uint64_t ticks;
static uint64_t now(void *ctx) { (void)ctx; return ticks; }
static void *sc(void *s) { return s; }
static int va(void *s, const char *n, void *v) { (void)s; (void)n; (void)v; return 0; }
static int sd(void *s) { (void)s; return 0; }
int main(void) {
    ldl_lock l; ldl_lock_desc d = {0};
    d.container.scope = sc; d.container.value = va; d.container.shutdown = sd;
    d.key = "k"; d.ttl_ms = 100;
    if (ldl_lock_init(&l, &d) != LDL_EINVAL) return 1;      /* no clock: refused */
    d.clock.now_ms = now;
    if (ldl_lock_init(&l, &d) != LDL_OK) return 2;
    if (ldl_lock_acquire(&l) != 1) return 3;
    ticks = 1000;
    if (ldl_lock_poll(&l) != 0) return 4;                    /* the supplied clock drives it */
    return 0;
}
X
if gcc -std=c99 $W -I. "$T/noclock.c" -o "$T/noclock" 2>"$T/err" && "$T/noclock"; then ok; else bad "LDL_NO_DEFAULT_CLOCK: rc=$? $(head -3 "$T/err")"; fi
if nm -u "$T/noclock" 2>/dev/null | grep -q clock_gettime; then bad "LDL_NO_DEFAULT_CLOCK still links clock_gettime"; else ok; fi

cat > "$T/keymax.c" <<'X'
#define LDL_KEY_MAX 16
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
typedef char key_is_16[sizeof(((ldl_lock *)0)->_key) == 16 ? 1 : -1];
int main(void) { return 0; }
X
if gcc -std=c99 $W -I. "$T/keymax.c" -o "$T/keymax" 2>"$T/err"; then ok; else bad "LDL_KEY_MAX=16: $(head -3 "$T/err")"; fi

# LDL_NO_ASYNC: the synchronous lifecycle works, an async_store is refused at init
# with a why that names the switch, and the async-only functions are not declared
cat > "$T/noasync.c" <<'X'
#define LDL_NO_ASYNC
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
static void *sc(void *s) { return s; }
static int va(void *s, const char *n, void *v) { (void)s; (void)n; (void)v; return 0; }
static int sd(void *s) { (void)s; return 0; }
static int aq(void *c, ldl_op *o, const char *k, uint32_t t) { (void)c; (void)o; (void)k; (void)t; return 0; }
static int rn(void *c, ldl_op *o, const char *k, int64_t x, uint32_t t) { (void)c; (void)o; (void)k; (void)x; (void)t; return 0; }
static int rl(void *c, ldl_op *o, const char *k, int64_t x) { (void)c; (void)o; (void)k; (void)x; return 0; }
static void cn(void *c, ldl_op *o) { (void)c; (void)o; }
int main(void) {
    ldl_lock l; ldl_lock_desc d = {0};
    ldl_async_store as = { aq, rn, rl, cn, 0 };
    const char *w;
    d.container.scope = sc; d.container.value = va; d.container.shutdown = sd;
    d.key = "k"; d.ttl_ms = 100;
    d.async_store = &as;
    if (ldl_lock_init(&l, &d) != LDL_EINVAL) return 1;
    for (w = ldl_lock_why(&l); *w && *w != 'N'; w++) {}
    if (*w != 'N') return 2;                                  /* names LDL_NO_ASYNC */
    d.async_store = 0;
    if (ldl_lock_init(&l, &d) != LDL_OK) return 3;
    if (ldl_lock_acquire(&l) != 1 || ldl_lock_poll(&l) != 1 || ldl_lock_pending(&l) != 0) return 4;
    if (ldl_lock_release(&l) != 1 || ldl_lock_answer(&l) != 1) return 5;
    return 0;
}
X
if gcc -std=c99 $W -I. "$T/noasync.c" -o "$T/noasync" 2>"$T/err" && "$T/noasync"; then ok; else bad "LDL_NO_ASYNC: rc=$? $(head -3 "$T/err")"; fi
printf '#define LDL_NO_ASYNC\n#include "lite_di_lock.h"\nvoid f(ldl_memstore *m);\nvoid f(ldl_memstore *m) { (void)ldl_memstore_async_store(m); }\n' > "$T/noasync2.c"
if gcc -std=c99 -Werror=implicit-function-declaration -I. -c "$T/noasync2.c" -o "$T/noasync2.o" 2>/dev/null; then
  bad "LDL_NO_ASYNC still declares ldl_memstore_async_store"; else ok; fi

# LDL_NO_ELECTION: the names only the election uses go with the switch
printf '#define LDL_NO_ELECTION\n#include "lite_di_lock.h"\nvoid f(ldl_memstore *m);\nvoid f(ldl_memstore *m) { (void)ldl_memstore_ext(m); }\n' > "$T/noel1.c"
if gcc -std=c99 -Werror=implicit-function-declaration -I. -c "$T/noel1.c" -o "$T/noel1.o" 2>/dev/null; then
  bad "LDL_NO_ELECTION still declares ldl_memstore_ext"; else ok; fi
printf '#define LDL_NO_ELECTION\n#include "lite_di_lock.h"\nint f(ldl_store_ext *x, ldl_holder *h);\nint f(ldl_store_ext *x, ldl_holder *h) { return ldl_store_inspect(x, "k", h); }\n' > "$T/noel2.c"
if gcc -std=c99 -Werror=implicit-function-declaration -I. -c "$T/noel2.c" -o "$T/noel2.o" 2>/dev/null; then
  bad "LDL_NO_ELECTION still declares ldl_store_inspect"; else ok; fi
# ... and a v0.2 desc written positionally (every member, zero election group) still compiles
cat > "$T/positional.c" <<'X'
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
static void *sc(void *s) { return s; }
static int va(void *s, const char *n, void *v) { (void)s; (void)n; (void)v; return 0; }
static int sd(void *s) { (void)s; return 0; }
int main(void) {
    ldl_lock l;
    ldl_lock_desc d = { { sc, va, sd, 0, 0, 0 }, "k", 100, 0, 0, 0, { 0, 0 }, { 0, 0, 0 }, 0, 0, 0, 0, 0,
                        { 0, 0, 0, 0, 0, 0 }, 0, 0, 0, 0, 0, 0 };
    if (ldl_lock_init(&l, &d) != LDL_OK) return 1;
    return ldl_lock_acquire(&l) == 1 ? 0 : 2;
}
X
for f in "" "-DLDL_NO_ELECTION"; do
  if gcc -std=c99 $W $f -I. "$T/positional.c" -o "$T/positional" 2>"$T/err" && "$T/positional"; then ok
  else bad "a positional v0.2 desc ($f): rc=$? $(head -3 "$T/err")"; fi
done

# 5. strict C99 with a system header first hides clock_gettime: an #error that
#    says what to define, never a silent wall-clock fallback
printf '#include <stdio.h>\n#define LITE_DI_LOCK_IMPLEMENTATION\n#include "lite_di_lock.h"\n' > "$T/late.c"
if gcc -std=c99 -I. -c "$T/late.c" -o "$T/late.o" 2>"$T/err"; then
  bad "strict C99 after <stdio.h> compiled (expected the clock #error)"
elif grep -q "LDL_NO_DEFAULT_CLOCK" "$T/err" && grep -q "_POSIX_C_SOURCE" "$T/err"; then ok
else bad "the clock #error does not say what to define: $(head -3 "$T/err")"; fi
# ... and the same file is fine once the user does what the message says
if gcc -std=c99 -D_POSIX_C_SOURCE=200112L $W -I. -c "$T/late.c" -o "$T/late.o" 2>"$T/err"; then ok; else bad "with _POSIX_C_SOURCE: $(head -3 "$T/err")"; fi

# ... and a strict C99 file that includes the declarations first, then the
#    implementation (the stb two-include pattern), builds: the header asks for
#    POSIX at its first include
printf '#include "lite_di_lock.h"\n#define LITE_DI_LOCK_IMPLEMENTATION\n#include "lite_di_lock.h"\n#include <stdio.h>\n' > "$T/twice.c"
if gcc -std=c99 $W -I. -c "$T/twice.c" -o "$T/twice.o" 2>"$T/err"; then ok; else bad "strict C99, declarations then implementation: $(head -3 "$T/err")"; fi

# -Os keeps the key hash's byte loop, -O2 reads whole groups: the same hash,
# so the same MemoryStore slots for the same keys (lengths 1..LDL_KEY_MAX-1)
cat > "$T/hash.c" <<'X'
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include <stdio.h>
static uint64_t now0(void *c) { (void)c; return 1; }
int main(void) {
    static ldl_memstore_slot sl[97];
    ldl_memstore ms; ldl_clock k; char key[LDL_KEY_MAX]; int64_t t; size_t n, i;
    k.now_ms = now0; k.ctx = 0;
    for (n = 1; n < LDL_KEY_MAX; n++) {
        ldl_memstore_init(&ms, sl, 97, k);
        for (i = 0; i < n; i++) key[i] = (char)('a' + (i * 7 + n) % 26);
        key[n] = 0;
        if (ldl_memstore_store(&ms).acquire(&ms, key, 10, &t) != 1) return 1;
        for (i = 0; i < 97; i++) if (sl[i]._token) printf("%u %u\n", (unsigned)n, (unsigned)i);
    }
    return 0;
}
X
if gcc -std=c99 -O2 $W -I. "$T/hash.c" -o "$T/hash2" 2>"$T/err" && gcc -std=c99 -Os $W -I. "$T/hash.c" -o "$T/hashs" 2>>"$T/err" &&
   "$T/hash2" > "$T/h2.txt" && "$T/hashs" > "$T/hs.txt" && cmp -s "$T/h2.txt" "$T/hs.txt" && [ -s "$T/h2.txt" ]; then ok
else bad "the key hash differs between -O2 and -Os: $(head -3 "$T/err")"; fi

# 6. the quick start in the top comment is a whole program: cut out as printed
#    (the lines between its ==== rule and "Or drive it yourself", 7 columns of
#    indent removed), it compiles clean as C99 with gcc and clang and runs to exit 0
awk '/^   QUICK START/ { q = 1; getline; next } /^   Or drive it yourself/ { q = 0 } q' "$H" \
  | sed 's/^       //' > "$T/quick.c"
if grep -q 'int main' "$T/quick.c" && gcc -std=c99 $W -I. "$T/quick.c" -o "$T/quick" 2>"$T/err" && "$T/quick" >/dev/null; then ok
else bad "the quick start does not compile and run as pasted: $(head -3 "$T/err")"; fi
if clang -std=c99 $W -I. "$T/quick.c" -o "$T/quickcl" 2>"$T/err"; then ok; else bad "the quick start with clang: $(head -3 "$T/err")"; fi

# 7. the small build (issue 25 item 5): Cortex-M4 -Os .text lock+MemoryStore
#    (bench/footprint.sh, row 5c) at most 7,870 B in the default build (7,826 B
#    measured, decision 0014; v0.2 was 7,964 B) and at most 4,190 B with
#    LDL_NO_ASYNC and LDL_NO_ELECTION (4,142 B measured; 4,252 B when the v0.3
#    restructure merged, decision 0012); and sizeof(ldl_lock) on Cortex-M4 (row
#    5d) at most 528 B by default and 400 B with both switches (issue 35's target;
#    704 B and 592 B before decision 0014)
if command -v arm-none-eabi-gcc >/dev/null 2>&1; then
  sh bench/footprint.sh . "$T/fp" > "$T/fp.txt" 2>&1
  fp() { grep -F "footprint cortex-m4 $1-Os: .text lock+MemoryStore / all" "$T/fp.txt" | cut -d'|' -f4 | awk '{print $1+0}'; }
  m4=$(fp ""); m4s=$(fp "-DLDL_NO_ASYNC -DLDL_NO_ELECTION ")
  if [ -n "$m4" ] && [ "$m4" -gt 0 ] && [ "$m4" -le 7870 ]; then ok; else bad "Cortex-M4 default .text ${m4:-?} B > 7870 B"; fi
  if [ -n "$m4s" ] && [ "$m4s" -gt 0 ] && [ "$m4s" -le 4190 ]; then ok; else bad "Cortex-M4 both switches .text ${m4s:-?} B > 4190 B"; fi
  sz() { grep -F "sizeof cortex-m4$1: ldl_lock / ldl_memstore_slot" "$T/fp.txt" | cut -d'|' -f4 | awk '{print $1+0}'; }
  s4=$(sz ""); s4s=$(sz " -DLDL_NO_ASYNC -DLDL_NO_ELECTION")
  if [ -n "$s4" ] && [ "$s4" -gt 0 ] && [ "$s4" -le 528 ]; then ok; else bad "Cortex-M4 default sizeof(ldl_lock) ${s4:-?} B > 528 B"; fi
  if [ -n "$s4s" ] && [ "$s4s" -gt 0 ] && [ "$s4s" -le 400 ]; then ok; else bad "Cortex-M4 both switches sizeof(ldl_lock) ${s4s:-?} B > 400 B"; fi
else bad "arm-none-eabi-gcc missing (make deps installs it): the footprint checks cannot run"; fi

# 8. THE EDGES (issue 36): one table in the header, one prose copy of the diagram
#    a. README's lifecycle diagram is the header's THE LIFECYCLE diagram, verbatim
#       (indentation aside): the header's is the one prose copy
awk '/^   THE LIFECYCLE$/ { h = 1; next } h && /^     [A-Za-z]/ { d = 1 } d && /^ *$/ { exit } d' "$H" \
  | sed 's/^     //' > "$T/diag_h.txt"
awk '/^## The lifecycle$/ { r = 1; next } r && /^```$/ { if (d) exit; d = 1; next } d' README.md \
  | sed 's/^  //' > "$T/diag_r.txt"
if [ -s "$T/diag_h.txt" ] && cmp -s "$T/diag_h.txt" "$T/diag_r.txt"; then ok
else bad "README's lifecycle diagram is not the header's: $(diff "$T/diag_h.txt" "$T/diag_r.txt" | head -4 | tr '\n' ' ')"; fi
#    b. the copies that used to restate the edges point to the table instead
if grep -q 'ldl__edge_ok' tests/fuzz/lifecycle_edges.h && ! grep -Eq '^[[:space:]]*(case|switch)\b' tests/fuzz/lifecycle_edges.h; then ok
else bad "tests/fuzz/lifecycle_edges.h restates the edges instead of reading LDL__EDGES"; fi
for f in docs/decisions/0011-one-guard-table-one-setter.md README.md; do
  if grep -q 'LDL__EDGES' "$f"; then ok; else bad "$f does not point to LDL__EDGES"; fi
done
if sed -n '/\[lifecycle\] the state setter/,/^static void ldl__set_state/p' "$H" | grep -q -- '-acquire->'; then
  bad "the setter's comment restates the machine"; else ok; fi
#    c. LDL_ASSERT: assert() in a hosted build without NDEBUG, nothing under NDEBUG
#       (the same code as with LDL_ASSERT defined away) or freestanding
gcc -std=c99 -O2 -I. -c "$T/impl.c" -o "$T/a_dbg.o"
gcc -std=c99 -O2 -DNDEBUG -I. -c "$T/impl.c" -o "$T/a_ndebug.o"
gcc -std=c99 -O2 '-DLDL_ASSERT(c)=((void)0)' -I. -c "$T/impl.c" -o "$T/a_off.o"
if nm -u "$T/a_dbg.o" | grep -q assert; then ok; else bad "LDL_ASSERT is not assert() in a hosted build without NDEBUG"; fi
if nm -u "$T/a_ndebug.o" | grep -q assert; then bad "LDL_ASSERT still asserts under NDEBUG"; else ok; fi
if [ "$(size -A "$T/a_ndebug.o" | awk '$1 == ".text" { print $2 }')" = "$(size -A "$T/a_off.o" | awk '$1 == ".text" { print $2 }')" ]; then ok
else bad "an NDEBUG build's .text differs from one with LDL_ASSERT defined away"; fi
if gcc -std=c99 -O2 $W -ffreestanding -nostdinc -isystem "$(gcc -print-file-name=include)" -DLDL_NO_DEFAULT_CLOCK \
     -DLITE_DI_LOCK_IMPLEMENTATION -x c -c "$H" -o "$T/a_free.o" 2>"$T/err" && ! nm -u "$T/a_free.o" | grep -q assert; then ok
else bad "a freestanding -nostdinc build pulls in assert: $(head -3 "$T/err")"; fi

# 13. LDL_NO_WHY_TEXT (issue 35): every refusal keeps its code; why becomes the check's name
if gcc -std=c99 $W -I. tests/header/nowhy.c -o "$T/nw_text" 2>"$T/err" &&
   gcc -std=c99 $W -DLDL_NO_WHY_TEXT -I. tests/header/nowhy.c -o "$T/nw_name" 2>>"$T/err"; then
  "$T/nw_text" >"$T/nw_text.out"; "$T/nw_name" >"$T/nw_name.out"
  if [ "$(wc -l <"$T/nw_text.out")" -ge 12 ] &&
     [ "$(cut -d'|' -f1 "$T/nw_text.out")" = "$(cut -d'|' -f1 "$T/nw_name.out")" ]; then ok
  else bad "LDL_NO_WHY_TEXT changed a refusal's code: $(paste -d'#' "$T/nw_text.out" "$T/nw_name.out" | tr '\n' ' ')"; fi
  if awk -F'|' 'NR > 1 && $1 != 0 && $2 !~ /^[a-z0-9_]+$/ { exit 1 }' "$T/nw_name.out" &&
     awk -F'|' 'NR > 1 && $1 != 0 && $2 !~ /: / { exit 1 }' "$T/nw_text.out"; then ok
  else bad "LDL_NO_WHY_TEXT: why is not the check's name (or the default not its sentence)"; fi
else bad "tests/header/nowhy.c does not build: $(head -3 "$T/err")"; fi
if g++ -std=c++11 -x c++ $W -DLDL_NO_WHY_TEXT -I. -c tests/header/nowhy.c -o "$T/nw_cxx.o" 2>"$T/err"; then ok
else bad "LDL_NO_WHY_TEXT as C++11: $(head -3 "$T/err")"; fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
