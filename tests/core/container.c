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

/* ---- from the outside mutation run (issue 9): each test names the mutant
   of lite_di_lock.h it kills ("M: ..."). */
static void td_ev(void *arg) { ev((const char *)arg); }

/* M: ldl__streq answers equal for a prefix (`return *a == *b;` ->
      `return !*a || !*b;`), or compares only the shorter length
      (strncmp(a, b, min) in ldl__scope_own). */
static void prefix_names(const char *first, const char *second) {
    ldl_scope root, pool[2], *child;
    int x = 1, y = 2, z = 3;
    const char *fa = first, *sa = second;
    CHECK_EQ(ldl_scope_init(&root, pool, 2), LDL_OK);
    CHECK_EQ(ldl_scope_value(&root, first, &x), LDL_OK);
    CHECK_EQ(ldl_scope_value(&root, second, &y), LDL_OK);        /* not EEXIST */
    CHECK_EQ(ldl_scope_value(&root, first, &z), LDL_EEXIST);
    CHECK_EQ(ldl_scope_value(&root, second, &z), LDL_EEXIST);
    CHECK(ldl_scope_get(&root, first) == &x);
    CHECK(ldl_scope_get(&root, second) == &y);
    CHECK(ldl_scope_get(&root, "d") == NULL);
    CHECK(ldl_scope_get(&root, "db23") == NULL);
    /* a child binds one of the two: the other still comes from the root */
    child = ldl_scope_child(&root);
    CHECK(child != NULL);
    if (child) {
        CHECK_EQ(ldl_scope_value(child, first, &z), LDL_OK);
        CHECK(ldl_scope_get(child, first) == &z);
        CHECK(ldl_scope_get(child, second) == &y);
    }
    /* teardowns attach to their own name */
    CHECK_EQ(ldl_scope_on_teardown(&root, first, td_ev, (void *)fa), LDL_OK);
    CHECK_EQ(ldl_scope_on_teardown(&root, second, td_ev, (void *)sa), LDL_OK);   /* not EEXIST */
    ev_reset();
    CHECK_EQ(ldl_scope_shutdown(&root), LDL_OK);
    {   /* reverse registration order: second, then first */
        char want[32];
        snprintf(want, sizeof want, "%s;%s;", second, first);
        CHECK_STR(ev_log(), want);
    }
}

static void t_prefix_names_in_container(void) {
    prefix_names("db", "db2");
    prefix_names("db2", "db");
}

/* two locks bound under "db" and "db2": each resolves to its own lock and
   the container's shutdown disposes both
   M: as t_prefix_names_in_container (bind of "db2" after "db" answers
      LDL_EEXIST, or get("db2") finds the "db" lock). */
static void t_prefix_names_bind_lock(void) {
    fix f1, f2;
    ldl_scope root;
    ldl_container c;
    fix_setup(&f1, "k1", 0, 0);
    fix_setup(&f2, "k2", 0, 0);
    CHECK_EQ(ldl_scope_init(&root, NULL, 0), LDL_OK);
    c = ldl_scope_container(&root);
    CHECK_EQ(ldl_bind_lock(&c, "db", &f1.l), LDL_OK);
    CHECK_EQ(ldl_bind_lock(&c, "db2", &f2.l), LDL_OK);
    CHECK_EQ(ldl_bind_lock(&c, "db", &f2.l), LDL_EEXIST);
    CHECK_EQ(ldl_bind_lock(&c, "db2", &f1.l), LDL_EEXIST);
    CHECK(ldl_scope_get(&root, "db") == (void *)&f1.l);
    CHECK(ldl_scope_get(&root, "db2") == (void *)&f2.l);
    CHECK_EQ(ldl_lock_acquire(&f1.l), 1);
    CHECK_EQ(ldl_lock_acquire(&f2.l), 1);
    CHECK_EQ(ldl_scope_shutdown(&root), LDL_OK);
    CHECK_EQ(ldl_lock_reason(&f1.l), LDL_REASON_DISPOSED);
    CHECK_EQ(ldl_lock_reason(&f2.l), LDL_REASON_DISPOSED);
    CHECK_EQ(f1.s.release_calls, 1);
    CHECK_EQ(f2.s.release_calls, 1);
    CHECK_EQ(ldl_lock_acquire(&f1.l), LDL_ESTATE);
    CHECK_EQ(ldl_lock_acquire(&f2.l), LDL_ESTATE);
}

/* M: ldl_scope_get without `if (!s->_open) return NULL;` (a closed child
      still resolves its parent's bindings through the chain). */
static void t_closed_child_resolves_nothing(void) {
    ldl_scope root, pool[3], *a, *b;
    int x = 1, y = 2;
    CHECK_EQ(ldl_scope_init(&root, pool, 3), LDL_OK);
    CHECK_EQ(ldl_scope_value(&root, "db", &x), LDL_OK);
    a = ldl_scope_child(&root);
    CHECK(a != NULL);
    if (!a) return;
    b = ldl_scope_child(a);
    CHECK(b != NULL);
    if (!b) return;
    CHECK_EQ(ldl_scope_value(a, "own", &y), LDL_OK);
    CHECK(ldl_scope_get(b, "db") == &x);
    CHECK(ldl_scope_get(b, "own") == &y);
    CHECK_EQ(ldl_scope_shutdown(a), LDL_OK);
    CHECK(ldl_scope_get(a, "db") == NULL);        /* not even through the chain */
    CHECK(ldl_scope_get(a, "own") == NULL);
    CHECK(ldl_scope_get(b, "db") == NULL);        /* the grandchild closed with it */
    CHECK(ldl_scope_child(a) == NULL);
    CHECK_EQ(ldl_scope_value(a, "late", &y), LDL_EINVAL);
    CHECK(ldl_scope_get(&root, "db") == &x);      /* the parent is untouched */
}

/* the child scope a run() body saw resolves nothing once run returned */
static void *saved_scope;
static int save_scope_body(void *scope, void *user) {
    (void)user;
    saved_scope = scope;
    CHECK(ldl_scope_get((ldl_scope *)scope, "lock:fence") != NULL);
    return 0;
}
static void t_run_child_closed_after(void) {
    fix f;
    int x = 1;
    SYNC_ONLY("ldl_lock_run: LDL_EUNSUPPORTED with a non-blocking store");
    fix_setup(&f, "run", 0, 0);
    CHECK_EQ(ldl_scope_value(&f.fc.root, "cfg", &x), LDL_OK);
    saved_scope = NULL;
    CHECK_EQ(ldl_lock_run(&f.l, save_scope_body, NULL, NULL), LDL_OK);
    CHECK(saved_scope != NULL);
    if (!saved_scope) return;
    CHECK(ldl_scope_get((ldl_scope *)saved_scope, "lock:fence") == NULL);
    CHECK(ldl_scope_get((ldl_scope *)saved_scope, "lock:holder") == NULL);
    CHECK(ldl_scope_get((ldl_scope *)saved_scope, "cfg") == NULL);
    CHECK(ldl_scope_get(&f.fc.root, "cfg") == &x);
}

/* teardowns run children first: a parent's teardown sees its children
   already torn down
   M: ldl_scope_shutdown running its own teardowns before the children loop. */
static ldl_scope *td_root, *td_mid;
static size_t td_root_children = 99, td_mid_children = 99;
static void td_root_fn(void *arg) { td_root_children = ldl_scope_live_children(td_root); ev((const char *)arg); }
static void td_mid_fn(void *arg) { td_mid_children = ldl_scope_live_children(td_mid); ev((const char *)arg); }
static void t_teardown_children_first(void) {
    ldl_scope root, pool[4], *mid, *leaf, *side;
    CHECK_EQ(ldl_scope_init(&root, pool, 4), LDL_OK);
    td_root = &root;
    CHECK_EQ(ldl_scope_value(&root, "r1", NULL), LDL_OK);
    CHECK_EQ(ldl_scope_on_teardown(&root, "r1", td_root_fn, (void *)"r1"), LDL_OK);
    mid = ldl_scope_child(&root);
    side = ldl_scope_child(&root);
    CHECK(mid && side);
    if (!mid || !side) return;
    leaf = ldl_scope_child(mid);
    CHECK(leaf != NULL);
    if (!leaf) return;
    td_mid = mid;
    CHECK_EQ(ldl_scope_value(mid, "m", NULL), LDL_OK);
    CHECK_EQ(ldl_scope_on_teardown(mid, "m", td_mid_fn, (void *)"m"), LDL_OK);
    CHECK_EQ(ldl_scope_value(leaf, "l", NULL), LDL_OK);
    CHECK_EQ(ldl_scope_on_teardown(leaf, "l", td_ev, (void *)"l"), LDL_OK);
    CHECK_EQ(ldl_scope_value(side, "s", NULL), LDL_OK);
    CHECK_EQ(ldl_scope_on_teardown(side, "s", td_ev, (void *)"s"), LDL_OK);
    CHECK_EQ(ldl_scope_value(&root, "r2", NULL), LDL_OK);
    CHECK_EQ(ldl_scope_on_teardown(&root, "r2", td_ev, (void *)"r2"), LDL_OK);
    td_root_children = td_mid_children = 99;
    ev_reset();
    CHECK_EQ(ldl_scope_shutdown(&root), LDL_OK);
    CHECK_STR(ev_log(), "l;m;s;r2;r1;");
    CHECK_EQ(td_mid_children, 0);
    CHECK_EQ(td_root_children, 0);
    /* a child's shutdown alone runs its subtree, leaf first */
    CHECK_EQ(ldl_scope_init(&root, pool, 4), LDL_OK);
    mid = ldl_scope_child(&root);
    CHECK(mid != NULL);
    if (!mid) return;
    leaf = ldl_scope_child(mid);
    CHECK(leaf != NULL);
    if (!leaf) return;
    td_mid = mid;
    CHECK_EQ(ldl_scope_value(mid, "m", NULL), LDL_OK);
    CHECK_EQ(ldl_scope_on_teardown(mid, "m", td_mid_fn, (void *)"m"), LDL_OK);
    CHECK_EQ(ldl_scope_value(leaf, "l", NULL), LDL_OK);
    CHECK_EQ(ldl_scope_on_teardown(leaf, "l", td_ev, (void *)"l"), LDL_OK);
    td_mid_children = 99;
    ev_reset();
    CHECK_EQ(ldl_scope_shutdown(mid), LDL_OK);
    CHECK_STR(ev_log(), "l;m;");
    CHECK_EQ(td_mid_children, 0);
    CHECK_EQ(ldl_scope_live_children(&root), 0);
}

/* a lock bound in the root is still held while a child's teardown runs */
static ldl_lock *td_lock;
static int td_lock_state = -1;
static void td_see_lock(void *arg) { (void)arg; td_lock_state = ldl_lock_state(td_lock); ev("child"); }
static void t_teardown_children_before_bound_lock(void) {
    fix f;
    ldl_scope root, pool[1], *child;
    ldl_container c;
    fix_setup(&f, "bound", 0, 0);
    CHECK_EQ(ldl_scope_init(&root, pool, 1), LDL_OK);
    c = ldl_scope_container(&root);
    CHECK_EQ(ldl_bind_lock(&c, "lock", &f.l), LDL_OK);
    child = ldl_scope_child(&root);
    CHECK(child != NULL);
    if (!child) return;
    CHECK_EQ(ldl_scope_value(child, "job", NULL), LDL_OK);
    CHECK_EQ(ldl_scope_on_teardown(child, "job", td_see_lock, NULL), LDL_OK);
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    td_lock = &f.l;
    td_lock_state = -1;
    ev_reset();
    CHECK_EQ(ldl_scope_shutdown(&root), LDL_OK);
    CHECK_EQ(td_lock_state, LDL_HELD);            /* the child went first */
    CHECK_STR(ev_log(), "child;release;");
    CHECK_EQ(ldl_lock_reason(&f.l), LDL_REASON_DISPOSED);
}

/* ldl_bind_lock with an empty name: LDL_EINVAL, nothing registered
   M: ldl_bind_lock without `!name[0]` (a permissive container registers
      the lock under ""; the reference one answers LDL_EEXIST). */
static int cc_singleton_calls, cc_teardown_calls;
static int cc_singleton(void *self, const char *name, void *(*factory)(void *arg), void *arg) {
    (void)self; (void)name; (void)factory; (void)arg;
    cc_singleton_calls++;
    return 0;
}
static int cc_teardown(void *self, const char *name, void (*fn)(void *arg), void *arg) {
    (void)self; (void)name; (void)fn; (void)arg;
    cc_teardown_calls++;
    return 0;
}
static void t_bind_lock_empty_name(void) {
    fix f;
    ldl_scope root;
    ldl_container c;
    fake_container fc;
    fix_setup(&f, "bind", 0, 0);
    c = fake_container_of(&fc);
    c.singleton_factory = cc_singleton;      /* accepts any name */
    c.on_teardown = cc_teardown;
    cc_singleton_calls = cc_teardown_calls = 0;
    CHECK_EQ(ldl_bind_lock(&c, "", &f.l), LDL_EINVAL);
    CHECK_EQ(ldl_bind_lock(&c, NULL, &f.l), LDL_EINVAL);
    CHECK_EQ(cc_singleton_calls, 0);
    CHECK_EQ(cc_teardown_calls, 0);
    CHECK_EQ(ldl_bind_lock(&c, "x", &f.l), LDL_OK);   /* the counters do count */
    CHECK_EQ(cc_singleton_calls, 1);
    CHECK_EQ(cc_teardown_calls, 1);
    /* the reference container: nothing under "", the lock survives shutdown */
    CHECK_EQ(ldl_scope_init(&root, NULL, 0), LDL_OK);
    c = ldl_scope_container(&root);
    CHECK_EQ(ldl_bind_lock(&c, "", &f.l), LDL_EINVAL);
    CHECK(ldl_scope_get(&root, "") == NULL);
    CHECK_EQ(ldl_lock_acquire(&f.l), 1);
    CHECK_EQ(ldl_scope_shutdown(&root), LDL_OK);
    CHECK_EQ(ldl_lock_state(&f.l), LDL_HELD);
    CHECK_EQ(f.s.release_calls, 0);
    CHECK_EQ(ldl_lock_release(&f.l), 1);
}

void suite_container(void) {
    RUN(t_scopes_and_chain);
    RUN(t_reverse_teardown_and_singleton);
    RUN(t_bindings_full);
    RUN(t_bind_lock_shutdown_disposes);
    RUN(t_bind_lock_codes);
    RUN(t_prefix_names_in_container);
    RUN(t_prefix_names_bind_lock);
    RUN(t_closed_child_resolves_nothing);
    RUN(t_run_child_closed_after);
    RUN(t_teardown_children_first);
    RUN(t_teardown_children_before_bound_lock);
    RUN(t_bind_lock_empty_name);
}
