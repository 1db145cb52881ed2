/* tests/store/conf_memory.c -- the shared store conformance body (conformance.h) against
 * the header's MemoryStore, on an injected fake clock: "sleeping" advances the clock, so
 * the whole body runs in milliseconds of real time and its expiry checks are exact. */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include "tests/store/conformance.h"

typedef struct fake_clock { uint64_t now; } fake_clock;

static uint64_t fake_now(void *ctx) { return ((fake_clock *)ctx)->now; }
static void fake_sleep(void *ctx, uint32_t ms) { ((fake_clock *)ctx)->now += ms; }

int main(void)
{
    static ldl_memstore_slot slots[64];
    ldl_memstore ms;
    fake_clock fc;
    ldl_clock clock;
    conf_env e;

    fc.now = 1000000;   /* not zero: a store that treats 0 as "never" must still work */
    clock.now_ms = fake_now;
    clock.ctx = &fc;
    ST_CHECK(ldl_memstore_init(&ms, slots, sizeof slots / sizeof slots[0], clock) == LDL_OK,
             "%s", "memstore init");

    memset(&e, 0, sizeof e);
    e.name = "memory";
    e.a = ldl_memstore_store(&ms);
    e.b = ldl_memstore_store(&ms);
    e.ttl_ms = 300;
    e.sleep_ms = fake_sleep;
    e.ctx = &fc;
    e.clock = clock;
    e.tokens_per_key = 0;
    conf_run(&e);

    /* after the body every lease is released or expired */
    fc.now += 10 * e.ttl_ms;
    ST_CHECK(ldl_memstore_live(&ms) == 0, "memstore live %zu after the body",
             ldl_memstore_live(&ms));
    return st_report();
}
