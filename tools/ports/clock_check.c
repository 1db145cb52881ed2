/* clock_check.c -- does the header's BUILT-IN clock work on this platform?
 *
 * The core suite drives almost everything with fake clocks, so on a port it
 * proves the logic, not the platform clock. This program uses only the
 * built-in clock (clock_gettime(CLOCK_MONOTONIC) on POSIX, QueryPerformance-
 * Counter on Windows) through the public API and checks that it advances in
 * milliseconds, never goes backwards, and expires MemoryStore leases. It
 * sleeps for real, so it holds under qemu-user and wine too.
 * Then, with a caller clock, the same lifecycle at times past 2^32 ms (a
 * firmware's widened SysTick after 49.7 days) and far beyond, so a 32-bit
 * truncation of a time anywhere in the header shows on 32-bit targets.
 * Last line: "clock: N passed, N failed". Built by mk/ports.mk for every
 * hosted port; any C99 compiler:
 *   cc -std=c99 -I. tools/ports/clock_check.c -o clock_check && ./clock_check
 */
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"   /* first: under -std=c99 it asks for POSIX itself */

#include <stdio.h>
#if defined(_WIN32)
#include <windows.h>
static void sleep_ms(unsigned ms) { Sleep(ms); }
#else
#include <time.h>
static void sleep_ms(unsigned ms)
{
    struct timespec ts;
    ts.tv_sec = (time_t)(ms / 1000u);
    ts.tv_nsec = (long)(ms % 1000u) * 1000000L;
    while (nanosleep(&ts, &ts) != 0) { }
}
#endif

static int passed, failed;
#define CHECK(cond, ...) do { \
    if (cond) passed++; \
    else { failed++; printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
           printf(__VA_ARGS__); printf("\n"); } } while (0)

static void *cc_scope(void *self) { return self; }
static int cc_value(void *scope, const char *name, void *value)
{
    (void)scope; (void)name; (void)value;
    return 0;
}
static int cc_shutdown(void *scope) { (void)scope; return 0; }

static int init_lock(ldl_lock *l, const ldl_store *store, uint32_t ttl_ms)
{
    ldl_lock_desc d;
    unsigned char *p = (unsigned char *)&d;
    size_t i;
    for (i = 0; i < sizeof d; i++) p[i] = 0;   /* zero clock: the built-in one */
    d.container.scope = cc_scope;
    d.container.value = cc_value;
    d.container.shutdown = cc_shutdown;
    d.key = "clock-check";
    d.ttl_ms = ttl_ms;
    d.store = store;
    return ldl_lock_init(l, &d);
}

/* a caller clock the test moves by hand */
static uint64_t wide_now;
static uint64_t wide_clock(void *ctx) { (void)ctx; return wide_now; }

static void wide_times(uint64_t base)
{
    ldl_lock a, b;
    ldl_memstore ms;
    ldl_memstore_slot slots[2];
    ldl_clock clk;
    ldl_store st;
    ldl_lock_desc d;
    unsigned char *p = (unsigned char *)&d;
    size_t i;
    uint32_t v;
    unsigned long long b64 = (unsigned long long)base;

    wide_now = base;
    clk.now_ms = wide_clock;
    clk.ctx = NULL;
    CHECK(ldl_memstore_init(&ms, slots, 2, clk) == LDL_OK, "base %llu: memstore init", b64);
    st = ldl_memstore_store(&ms);
    for (i = 0; i < sizeof d; i++) p[i] = 0;
    d.container.scope = cc_scope;
    d.container.value = cc_value;
    d.container.shutdown = cc_shutdown;
    d.key = "wide";
    d.ttl_ms = 300;                            /* heartbeat 100, drift 5 */
    d.store = &st;
    d.clock = clk;
    CHECK(ldl_lock_init(&a, &d) == LDL_OK, "base %llu: init a", b64);
    CHECK(ldl_lock_init(&b, &d) == LDL_OK, "base %llu: init b", b64);
    CHECK(ldl_lock_acquire(&a) == 1, "base %llu: acquire", b64);
    v = ldl_lock_valid_ms(&a);
    CHECK(v == 295, "base %llu: valid_ms at grant = %lu (want 295)", b64, (unsigned long)v);
    wide_now += 60;                            /* crosses 2^32 when base = 2^32 - 50 */
    v = ldl_lock_valid_ms(&a);
    CHECK(v == 235, "base %llu: valid_ms 60 ms later = %lu (want 235)", b64, (unsigned long)v);
    CHECK(ldl_lock_due_in_ms(&a) == 40, "base %llu: due_in_ms = %lu (want 40)", b64,
          (unsigned long)ldl_lock_due_in_ms(&a));
    wide_now += 40;                            /* heartbeat due: poll renews */
    CHECK(ldl_lock_poll(&a) == 1, "base %llu: poll at the heartbeat", b64);
    v = ldl_lock_valid_ms(&a);
    CHECK(v == 295, "base %llu: valid_ms after the renewal = %lu (want 295)", b64, (unsigned long)v);
    CHECK(ldl_lock_acquire(&b) == 0, "base %llu: b refused while a holds", b64);
    wide_now += 295;                           /* exactly at the local deadline */
    CHECK(ldl_lock_poll(&a) == 0 && ldl_lock_reason(&a) == LDL_REASON_LEASE_EXPIRED,
          "base %llu: poll at the deadline: reason %s", b64, ldl_reason_name(ldl_lock_reason(&a)));
    wide_now += 5;                             /* the store's TTL is over too */
    CHECK(ldl_lock_acquire(&b) == 1 && ldl_lock_fencing_token(&b) == 2,
          "base %llu: b takes the expired key, token %lld", b64,
          (long long)ldl_lock_fencing_token(&b));
    ldl_lock_dispose(&a);
    ldl_lock_dispose(&b);
}

int main(void)
{
    ldl_lock a, b;
    ldl_memstore ms;
    ldl_memstore_slot slots[2];
    ldl_clock zero;
    ldl_store st;
    uint32_t v0, v1, prev, now;
    long i, backwards = 0;

    /* 1. the lease's remaining time shrinks by the real time slept, in ms */
    CHECK(init_lock(&a, NULL, 60000) == LDL_OK, "init: %s", ldl_lock_why(&a));
    CHECK(ldl_lock_acquire(&a) == 1, "acquire");
    v0 = ldl_lock_valid_ms(&a);
    sleep_ms(300);
    v1 = ldl_lock_valid_ms(&a);
    CHECK(v0 > 0 && v0 <= 60000, "valid_ms right after acquire = %lu", (unsigned long)v0);
    CHECK(v0 >= v1 && v0 - v1 >= 250 && v0 - v1 <= 5000,
          "slept 300 ms, valid_ms went %lu -> %lu", (unsigned long)v0, (unsigned long)v1);

    /* 2. never backwards: 200000 reads, each <= the one before */
    prev = ldl_lock_valid_ms(&a);
    for (i = 0; i < 200000; i++) {
        now = ldl_lock_valid_ms(&a);
        if (now > prev) backwards++;
        prev = now;
    }
    CHECK(backwards == 0, "valid_ms grew %ld times in 200000 reads", backwards);
    CHECK(ldl_lock_release(&a) == 1, "release");
    ldl_lock_dispose(&a);

    /* 3. a MemoryStore on the built-in clock expires a lease after its TTL */
    zero.now_ms = NULL;
    zero.ctx = NULL;
    CHECK(ldl_memstore_init(&ms, slots, 2, zero) == LDL_OK, "memstore init");
    st = ldl_memstore_store(&ms);
    CHECK(init_lock(&a, &st, 200) == LDL_OK, "init a: %s", ldl_lock_why(&a));
    CHECK(init_lock(&b, &st, 200) == LDL_OK, "init b: %s", ldl_lock_why(&b));
    CHECK(ldl_lock_acquire(&a) == 1, "a acquires");
    CHECK(ldl_lock_acquire(&b) == 0, "b is refused while a holds");
    sleep_ms(400);                              /* nobody polls a: its lease runs out */
    CHECK(ldl_memstore_live(&ms) == 0, "live leases after the TTL = %lu",
          (unsigned long)ldl_memstore_live(&ms));
    CHECK(ldl_lock_poll(&a) == 0 && ldl_lock_reason(&a) == LDL_REASON_LEASE_EXPIRED,
          "a's poll after the TTL: state %s, reason %s",
          ldl_state_name(ldl_lock_state(&a)), ldl_reason_name(ldl_lock_reason(&a)));
    CHECK(ldl_lock_acquire(&b) == 1, "b takes the expired key");
    CHECK(ldl_lock_fencing_token(&b) == 2, "b's token = %ld", (long)ldl_lock_fencing_token(&b));
    ldl_lock_dispose(&a);
    ldl_lock_dispose(&b);

    /* 4. caller clocks past 32 bits */
    wide_times(((uint64_t)1 << 32) - 50);
    wide_times((uint64_t)1 << 40);
    wide_times((uint64_t)1 << 62);

    printf("clock: %d passed, %d failed\n", passed, failed);
    return failed != 0;
}
