/* tests/store/redis_locks.h -- the lock plumbing of the issue 24 Redis suites: a frame
 * clock (tick() sets it), a do-nothing container, and lock_async(lk, as, key, ttl) for a
 * non-blocking lock on that clock. Include after tests/store/redis_server.h. Test code. */
#ifndef LDL_TESTS_STORE_REDIS_LOCKS_H
#define LDL_TESTS_STORE_REDIS_LOCKS_H

static uint64_t g_now;
static uint64_t frame_clock(void *ctx) { (void)ctx; return g_now; }
static ST__UNUSED void tick(void) { g_now = st_now_ms(); }
static int nop_value(void *s, const char *n, void *v) { (void)s; (void)n; (void)v; return 0; }
static int nop_shutdown(void *s) { (void)s; return 0; }
static int g_scope_token;
static void *nop_scope(void *self) { (void)self; return &g_scope_token; }

static ST__UNUSED int lock_async(ldl_lock *lk, const ldl_async_store *as, const char *key, uint32_t ttl)
{
    ldl_lock_desc d;
    memset(&d, 0, sizeof d);
    d.container.scope = nop_scope;
    d.container.value = nop_value;
    d.container.shutdown = nop_shutdown;
    d.key = key;
    d.ttl_ms = ttl;
    d.async_store = as;
    d.clock.now_ms = frame_clock;
    return ldl_lock_init(lk, &d);
}

#endif /* LDL_TESTS_STORE_REDIS_LOCKS_H */
