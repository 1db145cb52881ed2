/* tests/pkg/lifecycle.h -- the one lifecycle every packaging consumer runs
   (tests/pkg/run.sh builds them through pkg-config, CMake find_package, CMake
   add_subdirectory and a Meson subproject). Two locks on one key, each through
   its own store view: A acquires, B is refused, A renews and releases, B
   acquires with a higher fence and releases. Prints one line,
   "<what> ok version=<LDL_VERSION> fences=<a>,<b>", and answers 0; on any
   wrong answer prints FAIL lines and answers 1. Include after the headers. */
#include <stdio.h>
#include <string.h>

#define LDL_PKG_CHECK(cond) \
    do { if (!(cond)) { printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); fails++; } } while (0)

static int ldl_pkg_lifecycle(const char *what, const ldl_store *s1, const ldl_store *s2,
                             const char *key, ldl_clock clock)
{
    ldl_scope root, pool[2];
    ldl_lock a, b;
    ldl_lock_desc d;
    int64_t t1 = 0, t2 = 0;
    int fails = 0;
    char ver[32];

    /* the header agrees with itself: the string is the three numbers */
    snprintf(ver, sizeof ver, "%d.%d.%d", LDL_VERSION_MAJOR, LDL_VERSION_MINOR, LDL_VERSION_PATCH);
    LDL_PKG_CHECK(strcmp(ver, LDL_VERSION) == 0);

    LDL_PKG_CHECK(ldl_scope_init(&root, pool, 2) == LDL_OK);
    memset(&d, 0, sizeof d);
    d.container = ldl_scope_container(&root);
    d.key = key;
    d.ttl_ms = 10000;
    d.clock = clock;
    d.store = s1;
    if (ldl_lock_init(&a, &d) != LDL_OK) { printf("FAIL init A: %s\n", ldl_lock_why(&a)); return 1; }
    d.store = s2;
    if (ldl_lock_init(&b, &d) != LDL_OK) { printf("FAIL init B: %s\n", ldl_lock_why(&b)); return 1; }

    LDL_PKG_CHECK(ldl_lock_acquire(&a) == 1);
    t1 = ldl_lock_fencing_token(&a);
    LDL_PKG_CHECK(t1 >= 1);
    LDL_PKG_CHECK(ldl_lock_acquire(&b) == 0);       /* A holds it */
    LDL_PKG_CHECK(ldl_lock_tick(&a) == 1);          /* renew */
    LDL_PKG_CHECK(ldl_lock_release(&a) == 1);       /* the store acknowledged */
    LDL_PKG_CHECK(ldl_lock_acquire(&b) == 1);
    t2 = ldl_lock_fencing_token(&b);
    LDL_PKG_CHECK(t2 > t1);
    LDL_PKG_CHECK(ldl_lock_release(&b) == 1);
    ldl_lock_dispose(&a);
    ldl_lock_dispose(&b);
    LDL_PKG_CHECK(ldl_scope_shutdown(&root) == LDL_OK);
    if (fails) return 1;
    printf("%s ok version=%s fences=%lld,%lld\n", what, LDL_VERSION, (long long)t1, (long long)t2);
    return 0;
}
