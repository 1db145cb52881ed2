/* container.c - run() with the reference container and ldl_bind_lock().

   The program registers a "db" in the root scope, binds the lock so that
   shutting the container down disposes it, and runs a fenced critical
   section: the body gets a child scope holding "lock:fence" and
   "lock:holder", resolves "db" through the parent chain, and registers a
   scoped resource whose teardown runs BEFORE the lease is released. */
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include <stdio.h>

typedef struct db { int64_t last_fence; int rows; } db;

static void close_cursor(void *arg) {
    printf("  child scope shutdown: closing cursor %s (the lease is still held)\n", (const char *)arg);
}

static int migrate(void *scope, void *user) {
    ldl_scope *s = (ldl_scope *)scope;
    const int64_t *fence = (const int64_t *)ldl_scope_get(s, "lock:fence");
    ldl_lock *holder = (ldl_lock *)ldl_scope_get(s, "lock:holder");
    db *database = (db *)ldl_scope_get(s, "db");          /* from the parent */
    (void)user;
    printf("  body: fence %lld, holder held=%d, db found=%s\n", (long long)*fence,
           ldl_lock_held(holder), database ? "yes" : "no");
    if (!database || *fence <= database->last_fence) return 1;   /* the fencing check */
    database->last_fence = *fence;
    database->rows += 10;
    ldl_scope_value(s, "cursor", (void *)"c1");
    ldl_scope_on_teardown(s, "cursor", close_cursor, (void *)"c1");
    return 0;
}

int main(void) {
    ldl_scope root, pool[2];
    ldl_container c;
    ldl_lock lock;
    ldl_lock_desc d = {0};
    ldl_run_result r;
    db database = {0, 0};
    int rc, i;

    ldl_scope_init(&root, pool, 2);
    c = ldl_scope_container(&root);
    ldl_scope_value(&root, "db", &database);

    d.container = c;
    d.key = "migrations";
    d.ttl_ms = 60000;
    if (ldl_lock_init(&lock, &d) != LDL_OK) { printf("init: %s\n", ldl_lock_why(&lock)); return 1; }
    rc = ldl_bind_lock(&c, "lock", &lock);                 /* container shutdown disposes it */
    printf("bind_lock -> %s\n", ldl_strerror(rc));
    printf("bind_lock again -> %s\n", ldl_strerror(ldl_bind_lock(&c, "lock", &lock)));

    for (i = 0; i < 2; i++) {
        printf("run %d:\n", i + 1);
        rc = ldl_lock_run(&lock, migrate, NULL, &r);
        printf("  -> %s (body %d, shutdown %d, release %d, lost %d); live children %u\n",
               ldl_strerror(rc), r.body_rc, r.shutdown_rc, r.release_rc, r.lost_reason,
               (unsigned)ldl_scope_live_children(&root));
        if (rc != LDL_OK) return 1;
    }
    printf("db: %d rows, last fence %lld\n", database.rows, (long long)database.last_fence);

    ldl_lock_acquire(&lock);                               /* hold it, then shut everything down */
    printf("holding fence %lld; container shutdown...\n", (long long)ldl_lock_fencing_token(&lock));
    ldl_scope_shutdown(&root);
    printf("lock state %s, reason %s\n", ldl_state_name(ldl_lock_state(&lock)),
           ldl_reason_name(ldl_lock_reason(&lock)));
    return (ldl_lock_state(&lock) == LDL_RELEASED && database.last_fence == 2) ? 0 : 1;
}
