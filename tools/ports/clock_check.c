/* clock_check.c -- does the header's BUILT-IN clock work on this platform?
 *
 * The core suite drives almost everything with fake clocks, so on a port it
 * proves the logic, not the platform clock. This program uses only the
 * built-in clock (clock_gettime(CLOCK_MONOTONIC) on POSIX, QueryPerformance-
 * Counter on Windows) through the public API and checks that it advances in
 * milliseconds, never goes backwards, and expires MemoryStore leases. It
 * sleeps for real, so it holds under qemu-user and wine too.
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

    printf("clock: %d passed, %d failed\n", passed, failed);
    return failed != 0;
}
