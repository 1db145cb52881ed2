/* sqlite_fence.c -- the fenced-write protocol on a SQLite resource (ldl_sqlite_fence),
 * holder identity (ldl_sqlite_ext: acquire_owned, inspect, through ldl_lock's desc.owner)
 * the token's upper bound and the non-blocking shape (ldl_sqlite_async_store). Last line: "N passed, N failed". */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include "tests/store/fenced.h"
#include "tests/store/sqlite_common.h"

static int64_t mark(sqlite3 *db, const char *res)
{
    return sqt_int(db, "SELECT fence FROM ldl_lease_fence WHERE resource = ?1", res);
}

/* BEGIN IMMEDIATE; fence; then COMMIT (commit != 0) or ROLLBACK; the fence's answer */
static int fence_tx(ldl_sqlite *sq, const char *res, int64_t f, int commit)
{
    int rc;
    sqt_exec(ldl_sqlite_db(sq), "BEGIN IMMEDIATE");
    rc = ldl_sqlite_fence(sq, res, f);
    sqt_exec(ldl_sqlite_db(sq), commit && rc == 1 ? "COMMIT" : "ROLLBACK");
    return rc;
}

static void test_protocol(ldl_sqlite *sq)
{
    sqlite3 *db = ldl_sqlite_db(sq);
    char big[1025], bin[8];
    int rc;
    /* outside a transaction: refused, nothing written */
    rc = ldl_sqlite_fence(sq, "r", 5);
    ST_CHECK(rc == LDL_ESTATE && strstr(ldl_sqlite_why(sq), "not inside a transaction"), "outside: %d (%s)", rc, ldl_sqlite_why(sq));
    ST_CHECK(mark(db, "r") == INT64_MIN, "no mark written outside a transaction");
    ST_CHECK(fence_tx(sq, "r", 5, 1) == 1 && mark(db, "r") == 5, "a first fence for a new resource passes");
    ST_CHECK(fence_tx(sq, "r", 5, 1) == 1 && mark(db, "r") == 5, "an equal fence passes");
    ST_CHECK(fence_tx(sq, "r", 4, 1) == 0 && mark(db, "r") == 5, "a lower fence fails; the mark stays");
    ST_CHECK(fence_tx(sq, "r", 6, 0) == 1 && mark(db, "r") == 5, "a rolled-back transaction leaves the mark");
    ST_CHECK(fence_tx(sq, "r", 6, 1) == 1 && mark(db, "r") == 6, "a higher fence passes and raises it");
    ST_CHECK(fence_tx(sq, "r", 5, 1) == 0, "then 5 is stale");
    ST_CHECK(fence_tx(sq, "other", 1, 1) == 1 && mark(db, "other") == 1 && mark(db, "r") == 6, "resources are independent");
    /* two fences in one transaction: 7 then 6 -- the second is stale inside it */
    sqt_exec(db, "BEGIN IMMEDIATE");
    ST_CHECK(ldl_sqlite_fence(sq, "r", 7) == 1 && ldl_sqlite_fence(sq, "r", 6) == 0 && ldl_sqlite_fence(sq, "r", 7) == 1,
             "7, 6, 7 in one transaction: yes, no, yes");
    sqt_exec(db, "COMMIT");
    ST_CHECK(mark(db, "r") == 7, "mark 7");
    /* bad input: nothing runs, the transaction stays as it was */
    sqt_exec(db, "BEGIN IMMEDIATE");
    ST_CHECK(ldl_sqlite_fence(sq, "r", 0) == LDL_EINVAL, "fence 0");
    ST_CHECK(ldl_sqlite_fence(sq, "r", -1) == LDL_EINVAL, "fence -1");
    ST_CHECK(ldl_sqlite_fence(sq, "r", INT64_MIN) == LDL_EINVAL, "fence INT64_MIN");
    ST_CHECK(ldl_sqlite_fence(sq, NULL, 3) == LDL_EINVAL && ldl_sqlite_fence(sq, "", 3) == LDL_EINVAL, "resource NULL / empty");
    {
        static char huge[LDL_SQLITE_RESOURCE_MAX + 1];
        memset(huge, 'h', LDL_SQLITE_RESOURCE_MAX);
        huge[LDL_SQLITE_RESOURCE_MAX] = '\0';
        ST_CHECK(ldl_sqlite_fence(sq, huge, 3) == LDL_EINVAL && strstr(ldl_sqlite_why(sq), "resource"), "resource too long");
    }
    ST_CHECK(!sqlite3_get_autocommit(db), "the transaction is still open after bad input");
    memset(big, 'x', 1024); big[1024] = '\0';
    bin[0] = '\x01'; bin[1] = '\xff'; bin[2] = '\''; bin[3] = '"'; bin[4] = ';'; bin[5] = '\x7f'; bin[6] = 'b'; bin[7] = '\0';
    ST_CHECK(ldl_sqlite_fence(sq, big, INT64_MAX) == 1, "a 1 KB resource, fence INT64_MAX");
    ST_CHECK(ldl_sqlite_fence(sq, bin, 9) == 1, "a NUL-free binary resource with quotes");
    ST_CHECK(ldl_sqlite_fence(sq, "it's \"q\"; DROP TABLE ldl_lease_fence;--", 3) == 1, "an injection-looking resource");
    sqt_exec(db, "COMMIT");
    ST_CHECK(mark(db, big) == INT64_MAX && mark(db, bin) == 9, "stored verbatim");
    ST_CHECK(fence_tx(sq, big, INT64_MAX, 1) == 1 && fence_tx(sq, big, INT64_MAX - 1, 1) == 0, "at INT64_MAX: equal passes, lower fails");
    ST_CHECK(sqt_int(db, "SELECT count(*) FROM ldl_lease_fence", NULL) == 5, "five resources");
}

/* two connections, two transactions with fences 5 and 6 in either order */
static void test_two_writers(const char *path)
{
    ldl_sqlite a = {0}, b = {0};
    int64_t m;
    ST_CHECK(ldl_sqlite_open(&a, path, NULL, 0) == LDL_OK && ldl_sqlite_open(&b, path, NULL, 0) == LDL_OK, "open a, b");
    /* 5 then 6: both pass; 6 then 5: 5 is stale */
    ST_CHECK(fence_tx(&a, "two", 5, 1) == 1 && fence_tx(&b, "two", 6, 1) == 1, "5 then 6: both pass");
    ST_CHECK(fence_tx(&a, "two2", 6, 1) == 1 && fence_tx(&b, "two2", 5, 1) == 0, "6 then 5: 5 is stale");
    /* while a's transaction with 7 is open, b cannot even begin its own: one writer */
    sqt_exec(ldl_sqlite_db(&a), "BEGIN IMMEDIATE");
    ST_CHECK(ldl_sqlite_fence(&a, "two", 7) == 1, "a: 7 inside its transaction");
    ST_CHECK(sqlite3_exec(ldl_sqlite_db(&b), "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_BUSY, "b waits for a's transaction");
    sqt_exec(ldl_sqlite_db(&a), "ROLLBACK");
    m = mark(ldl_sqlite_db(&b), "two");
    ST_CHECK(m == 6, "a's rollback left 6 (%lld)", (long long)m);
    ST_CHECK(fence_tx(&b, "two", 6, 1) == 1, "b: 6 still passes");
    ldl_sqlite_close(&a);
    ldl_sqlite_close(&b);
}

static void test_owner(ldl_sqlite *sq)
{
    int irc;
    ldl_store s = ldl_sqlite_store(sq);
    ldl_store_ext x = ldl_sqlite_ext(sq);
    ldl_holder h;
    int64_t t = 0, t2 = 0;
    int rc;
    char long_owner[LDL_OWNER_MAX + 1];
    ST_CHECK(x.acquire_owned && x.inspect && x.ctx == sq && !x.submit_owned, "ext methods");
    ST_CHECK(ldl_store_inspect(&x, "own", &h) == 0 && h.token == 0 && h.owner[0] == '\0', "free: no row");
    rc = x.acquire_owned(x.ctx, "own", 5000, "worker-7@host-a", &t);
    ST_CHECK(rc == 1 && t == 1, "acquire_owned = %d token %lld", rc, (long long)t);
    rc = ldl_store_inspect(&x, "own", &h);
    ST_CHECK(rc == 1 && h.token == t && strcmp(h.owner, "worker-7@host-a") == 0 && h.ttl_left_ms > 0 && h.ttl_left_ms <= 5000,
             "inspect: %d token %lld owner '%s' left %u", rc, (long long)h.token, h.owner, h.ttl_left_ms);
    ST_CHECK(s.release(s.ctx, "own", t) == 1, "release");
    ST_CHECK(ldl_store_inspect(&x, "own", &h) == 0 && h.owner[0] == '\0', "free after release");
    /* a plain grant writes no owner: the previous holder's is gone */
    ST_CHECK(s.acquire(s.ctx, "own", 5000, &t2) == 1 && t2 == 2, "plain acquire");
    ST_CHECK(ldl_store_inspect(&x, "own", &h) == 1 && h.token == 2 && h.owner[0] == '\0', "no stale owner after a plain grant");
    ST_CHECK(s.release(s.ctx, "own", t2) == 1, "release");
    /* bad owners: refused before anything runs */
    memset(long_owner, 'o', LDL_OWNER_MAX); long_owner[LDL_OWNER_MAX] = '\0';
    ST_CHECK(x.acquire_owned(x.ctx, "own", 5000, "bad\nowner", &t) == LDL_EINVAL && t == 0, "control byte");
    ST_CHECK(x.acquire_owned(x.ctx, "own", 5000, "caf\xc3\xa9", &t) == LDL_EINVAL, "non-ASCII");
    ST_CHECK(x.acquire_owned(x.ctx, "own", 5000, long_owner, &t) == LDL_EINVAL, "too long");
    ST_CHECK(x.acquire_owned(x.ctx, "own", 5000, "", &t) == LDL_EINVAL, "empty");
    ST_CHECK(sqt_int(ldl_sqlite_db(sq), "SELECT token FROM ldl_lease WHERE key = 'own'", NULL) == 2, "nothing granted by them");
    ST_CHECK(ldl_store_inspect(&x, "bad\x01key", &h) == LDL_EINVAL, "inspect refuses a control byte in the key");
    /* a row of the wrong shape is never a made-up holder */
    ST_CHECK(sqt_exec(ldl_sqlite_db(sq), "INSERT INTO ldl_lease VALUES ('weird', 3, 9223372036854775000, 'x', "
                      "CAST(x'01' AS TEXT))"), "a row with a control byte as owner");
    ST_CHECK(ldl_store_inspect(&x, "weird", &h) == LDL_ESTORE && h.token == 0, "inspect: LDL_ESTORE");
    /* through ldl_lock: desc.owner with the extension */
    {
        ldl_scope root, pool[2];
        ldl_lock l;
        ldl_lock_desc d;
        memset(&d, 0, sizeof d);
        ldl_scope_init(&root, pool, 2);
        d.container = ldl_scope_container(&root);
        d.key = "owned-lock";
        d.ttl_ms = 5000;
        d.store = &s;
        d.owner = "ldl-lock@here";
        d.store_ext = &x;
        /* init into irc first: ST_CHECK's other arguments (ldl_lock_why) read the lock,
           and the order a call evaluates its arguments in is unspecified */
        irc = ldl_lock_init(&l, &d);
        ST_CHECK(irc == LDL_OK, "lock with owner: %s", ldl_lock_why(&l));
        ST_CHECK(ldl_lock_acquire(&l) == 1, "acquire");
        ST_CHECK(ldl_store_inspect(&x, "owned-lock", &h) == 1 && strcmp(h.owner, "ldl-lock@here") == 0 &&
                 h.token == ldl_lock_fencing_token(&l), "the lock's owner is stored");
        ldl_lock_dispose(&l);
        ST_CHECK(ldl_store_inspect(&x, "owned-lock", &h) == 0, "free after dispose");
    }
}

static void test_token_bound(ldl_sqlite *sq)
{
    ldl_store s = ldl_sqlite_store(sq);
    int64_t t = 0;
    int rc;
    ST_CHECK(sqt_exec(ldl_sqlite_db(sq), "INSERT INTO ldl_lease (key, token, expires_ms, boot) VALUES "
                      "('max', 9223372036854775807, -1, 'x')"), "a row at INT64_MAX");
    rc = s.acquire(s.ctx, "max", 1000, &t);
    ST_CHECK(rc == LDL_ESTORE && t == 0, "no token after INT64_MAX: %d %lld (%s)", rc, (long long)t, ldl_sqlite_why(sq));
    ST_CHECK(sqt_int(ldl_sqlite_db(sq), "SELECT token FROM ldl_lease WHERE key = 'max'", NULL) == INT64_MAX &&
             sqt_int(ldl_sqlite_db(sq), "SELECT typeof(token) = 'integer' FROM ldl_lease WHERE key = 'max'", NULL) == 1,
             "the row is unchanged");
    ST_CHECK(sqlite3_get_autocommit(ldl_sqlite_db(sq)), "no transaction left open");
    rc = s.acquire(s.ctx, "after-max", 1000, &t);
    ST_CHECK(rc == 1 && t == 1, "the store still works: %d", rc);
    ST_CHECK(s.release(s.ctx, "after-max", t) == 1, "release");
}

/* the non-blocking shape: a lock on ldl_sqlite_async_store answers inside each call */
static void test_async_view(ldl_sqlite *sq)
{
    int irc;
    ldl_async_store as = ldl_sqlite_async_store(sq);
    ldl_store_ext x = ldl_sqlite_async_ext(sq);
    ldl_store s = ldl_sqlite_store(sq);
    ldl_scope root, pool[2];
    ldl_lock l;
    ldl_lock_desc d;
    ldl_holder h;
    int64_t f, t = 0;
    ST_CHECK(as.acquire && as.renew && as.release && as.cancel && as.ctx == sq, "async view methods");
    ST_CHECK(x.submit_owned && x.inspect && x.acquire_owned, "async ext methods");
    memset(&d, 0, sizeof d);
    ldl_scope_init(&root, pool, 2);
    d.container = ldl_scope_container(&root);
    d.key = "async-key";
    d.ttl_ms = 5000;
    d.async_store = &as;
    d.owner = "async@here";
    d.store_ext = &x;
    irc = ldl_lock_init(&l, &d);
    ST_CHECK(irc == LDL_OK, "init: %s", ldl_lock_why(&l));
    ST_CHECK(ldl_lock_acquire(&l) == 1 && !ldl_lock_pending(&l), "acquire answers at once");
    f = ldl_lock_fencing_token(&l);
    ST_CHECK(ldl_store_inspect(&x, "async-key", &h) == 1 && h.token == f && strcmp(h.owner, "async@here") == 0,
             "the owner is stored through submit_owned");
    ST_CHECK(s.acquire(s.ctx, "async-key", 1000, &t) == 0, "held for the synchronous view too");
    ST_CHECK(ldl_lock_tick(&l) == 1, "renew");
    ST_CHECK(ldl_lock_release(&l) == 1 && ldl_lock_state(&l) == LDL_RELEASED, "release answers at once");
    ST_CHECK(s.acquire(s.ctx, "async-key", 1000, &t) == 1 && t == f + 1, "free after it, next token %lld", (long long)t);
    ST_CHECK(s.release(s.ctx, "async-key", t) == 1, "release");
    ldl_lock_dispose(&l);
    as = ldl_sqlite_async_store(NULL);
    ST_CHECK(!as.acquire && !as.ctx, "NULL: an empty view");
}

int main(int argc, char **argv)
{
    char path[600];
    ldl_sqlite sq = {0};
    st_ignore_sigpipe();
    sqt_setup(argc, argv, "ldl-sqlite-fence");
    sqt_path(path, sizeof path, "fence.db");
    ST_CHECK(ldl_sqlite_open(&sq, path, NULL, LDL_SQLITE_CREATE) == LDL_OK, "open: %s", ldl_sqlite_why(&sq));
    if (st_failed()) return st_report();
    st_case("protocol", SQT_CASE_S); test_protocol(&sq);
    st_case("two_writers", SQT_CASE_S); test_two_writers(path);
    st_case("owner", SQT_CASE_S); test_owner(&sq);
    st_case("token_bound", SQT_CASE_S); test_token_bound(&sq);
    st_case("async_view", SQT_CASE_S); test_async_view(&sq);
    st_case("", 0);
    ldl_sqlite_close(&sq);
    sqt_cleanup();
    return st_report();
}
