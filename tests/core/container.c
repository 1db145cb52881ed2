/* container.c - the reference container and ldl_bind_lock. */
#include "harness.h"

static int order_n;
static char order[64];
static void td(void *arg) { order[order_n++] = *(const char *)arg; order[order_n] = 0; }
static int made;
static void *make_int(void *arg) { (void)arg; made++; return &made; }

static void t_scopes_and_chain(void) {
    ldl_scope root, pool[3], *a, *b;
    int x = 1, y = 2, z = 3;
    CHECK_EQ(ldl_scope_init(&root, pool, 3), LDL_OK);
    CHECK_EQ(ldl_scope_value(&root, "db", &x), LDL_OK);
    CHECK_EQ(ldl_scope_value(&root, "db", &y), LDL_EEXIST);     /* never a silent shadow */
    a = ldl_scope_child(&root);
    CHECK(a != NULL);
    CHECK_EQ(ldl_scope_live_children(&root), 1);
    CHECK(ldl_scope_get(a, "db") == &x);                        /* through the chain */
    CHECK_EQ(ldl_scope_value(a, "db", &y), LDL_OK);             /* a child may shadow its parent */
    CHECK(ldl_scope_get(a, "db") == &y);
    CHECK(ldl_scope_get(&root, "db") == &x);
    b = ldl_scope_child(a);
    CHECK(b != NULL);
    CHECK_EQ(ldl_scope_value(b, "z", &z), LDL_OK);
    CHECK(ldl_scope_get(b, "db") == &y);
    CHECK(ldl_scope_get(a, "z") == NULL);                       /* not upward */
    CHECK(ldl_scope_get(&root, "missing") == NULL);
    CHECK(ldl_scope_child(&root) != NULL);                      /* third pool entry */
    CHECK(ldl_scope_child(&root) == NULL);                      /* pool exhausted */
    CHECK_EQ(ldl_scope_shutdown(a), LDL_OK);                    /* takes b down too */
    CHECK_EQ(ldl_scope_live_children(&root), 1);
    CHECK_EQ(ldl_scope_shutdown(a), LDL_ESTATE);                /* once */
    CHECK(ldl_scope_child(&root) != NULL);                      /* storage reused */
    CHECK_EQ(ldl_scope_shutdown(&root), LDL_OK);
    CHECK_EQ(ldl_scope_live_children(&root), 0);
    CHECK(ldl_scope_child(&root) == NULL);                      /* closed */
    CHECK_EQ(ldl_scope_value(&root, "late", &x), LDL_EINVAL);
}

static void t_reverse_teardown_and_singleton(void) {
    ldl_scope root;
    static const char A = 'a', B = 'b', C = 'c';
    int *p1, *p2;
    CHECK_EQ(ldl_scope_init(&root, NULL, 0), LDL_OK);
    order_n = 0; order[0] = 0; made = 0;
    CHECK_EQ(ldl_scope_value(&root, "a", NULL), LDL_OK);
    CHECK_EQ(ldl_scope_on_teardown(&root, "a", td, (void *)&A), LDL_OK);
    CHECK_EQ(ldl_scope_singleton(&root, "b", make_int, NULL), LDL_OK);
    CHECK_EQ(ldl_scope_on_teardown(&root, "b", td, (void *)&B), LDL_OK);
    CHECK_EQ(ldl_scope_on_teardown(&root, "b", td, (void *)&B), LDL_EEXIST);
    CHECK_EQ(ldl_scope_value(&root, "c", NULL), LDL_OK);
    CHECK_EQ(ldl_scope_on_teardown(&root, "c", td, (void *)&C), LDL_OK);
    CHECK_EQ(ldl_scope_on_teardown(&root, "nope", td, (void *)&C), LDL_EINVAL);
    p1 = (int *)ldl_scope_get(&root, "b");
    p2 = (int *)ldl_scope_get(&root, "b");
    CHECK(p1 == p2);
    CHECK_EQ(*p1, 1);                                            /* made once */
    CHECK(ldl_scope_child(&root) == NULL);                       /* no pool */
    CHECK_EQ(ldl_scope_shutdown(&root), LDL_OK);
    CHECK_STR(order, "cba");
}

static void t_bindings_full(void) {
    ldl_scope root; int i; char names[LDL_SCOPE_BINDINGS + 1][4];
    ldl_scope_init(&root, NULL, 0);
    for (i = 0; i < LDL_SCOPE_BINDINGS; i++) {
        snprintf(names[i], 4, "n%d", i);
        CHECK_EQ(ldl_scope_value(&root, names[i], NULL), LDL_OK);
    }
    CHECK_EQ(ldl_scope_value(&root, "over", NULL), LDL_ENOSPC);
    CHECK_EQ(ldl_scope_value(&root, NULL, NULL), LDL_EINVAL);
    CHECK_EQ(ldl_scope_value(NULL, "x", NULL), LDL_EINVAL);
}

static void t_bind_lock_shutdown_disposes(void) {
    ldl_scope root, pool[2];
    ldl_container c;
    ldl_lock lock;
    ldl_lock_desc d;
    ldl_memstore ms; ldl_memstore_slot slots[4];
    fake_clock clk = {0};
    ldl_scope_init(&root, pool, 2);
    c = ldl_scope_container(&root);
    ldl_memstore_init(&ms, slots, 4, fake_clock_of(&clk));
    memset(&d, 0, sizeof d);
    d.container = c; d.key = "bound"; d.ttl_ms = 1000; d.clock = fake_clock_of(&clk);
    desc_use_memstore(&d, &ms);
    d.on_lost = count_lost;
    CHECK_EQ(ldl_lock_init(&lock, &d), LDL_OK);
    CHECK_EQ(ldl_bind_lock(&c, "lock", &lock), LDL_OK);
    CHECK(ldl_scope_get(&root, "lock") == &lock);               /* the factory yields the lock */
    CHECK_EQ(ldl_bind_lock(&c, "lock", &lock), LDL_EEXIST);
    CHECK_EQ(ldl_lock_acquire(&lock), 1);
    CHECK_EQ(ldl_memstore_live(&ms), 1);
    CHECK_EQ(ldl_scope_shutdown(&root), LDL_OK);
    CHECK_EQ(ldl_lock_state(&lock), LDL_RELEASED);
    CHECK_EQ(ldl_lock_reason(&lock), LDL_REASON_DISPOSED);
    CHECK_EQ(ldl_memstore_live(&ms), 0);                          /* lease released */
    CHECK_EQ(ldl_lock_acquire(&lock), LDL_ESTATE);                /* disposed */
    CHECK_EQ(lost_calls, 0);
}

typedef struct hook_counts { int singleton, teardown, singleton_rc, teardown_rc; } hook_counts;
static hook_counts hc;
static int h_singleton(void *self, const char *n, void *(*f)(void *), void *a) { (void)self; (void)n; (void)f; (void)a; hc.singleton++; return hc.singleton_rc; }
static int h_teardown(void *self, const char *n, void (*f)(void *), void *a) { (void)self; (void)n; (void)f; (void)a; hc.teardown++; return hc.teardown_rc; }
static void *h_scope(void *self) { return self; }
static int h_value(void *s, const char *n, void *v) { (void)s; (void)n; (void)v; return 0; }
static int h_shutdown(void *s) { (void)s; return 0; }

static void t_bind_lock_codes(void) {
    ldl_container c; ldl_lock lock; ldl_lock_desc d; fake_container fc;
    desc_for(&d, &fc, NULL, NULL, "k", 300);
    ldl_lock_init(&lock, &d);
    memset(&c, 0, sizeof c);
    c.scope = h_scope; c.value = h_value; c.shutdown = h_shutdown;
    memset(&hc, 0, sizeof hc);
    CHECK_EQ(ldl_bind_lock(&c, "lock", &lock), LDL_EUNSUPPORTED);   /* no hooks: nothing registered */
    c.singleton_factory = h_singleton;
    CHECK_EQ(ldl_bind_lock(&c, "lock", &lock), LDL_EUNSUPPORTED);   /* one hook only */
    CHECK_EQ(hc.singleton, 0);
    c.on_teardown = h_teardown;
    hc.singleton_rc = 1;
    CHECK_EQ(ldl_bind_lock(&c, "lock", &lock), LDL_EEXIST);
    CHECK_EQ(hc.teardown, 0);                                      /* nothing else registered */
    hc.singleton_rc = 0; hc.teardown_rc = -1;
    CHECK_EQ(ldl_bind_lock(&c, "lock", &lock), LDL_EUNSUPPORTED);
    hc.teardown_rc = 0;
    CHECK_EQ(ldl_bind_lock(&c, "lock", &lock), LDL_OK);
    CHECK_EQ(ldl_bind_lock(NULL, "lock", &lock), LDL_EINVAL);
    CHECK_EQ(ldl_bind_lock(&c, NULL, &lock), LDL_EINVAL);
    CHECK_EQ(ldl_bind_lock(&c, "lock", NULL), LDL_EINVAL);
    ldl_lock_dispose(&lock);
}

void suite_container(void) {
    RUN(t_scopes_and_chain);
    RUN(t_reverse_teardown_and_singleton);
    RUN(t_bindings_full);
    RUN(t_bind_lock_shutdown_disposes);
    RUN(t_bind_lock_codes);
}
