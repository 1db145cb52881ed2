/* etcd_build.c -- the etcd adapter compiles clean as C99 and C11 (gcc, clang), as C++17,
 * with LDL_STATIC and with LDL_NO_ASYNC, and answers bad arguments before any I/O (an
 * endpoint that nothing listens on is never contacted by these checks). No server needed.
 * Last line: "N passed, N failed". */
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#define LDL_ETCD_IMPLEMENTATION
#include "adapters/lite_di_lock_etcd.h"
#include "tests/check.h"

int main(void)
{
    ldl_etcd e;
    ldl_etcd_config c;
    ldl_store s;
    ldl_store_ext x;
    ldl_holder h;
    int64_t t = 9;

    memset(&c, 0, sizeof c);
    CHECK(ldl_etcd_init(&e, &c) == LDL_EINVAL && ldl_etcd_why(&e)[0] != '\0');
    CHECK(ldl_etcd_init(NULL, &c) == LDL_EINVAL);
    s = ldl_etcd_store(&e);
    CHECK(s.acquire && s.renew && s.release && s.ctx == &e);
    CHECK(s.acquire(s.ctx, "k", 1000, &t) == LDL_EINVAL && t == 0);   /* failed init */
    x = ldl_etcd_ext(&e);
    CHECK(!x.acquire_owned && !x.inspect && !x.ctx);
    c.endpoints = "http://127.0.0.1:9";
    CHECK(ldl_etcd_init(&e, &c) == LDL_OK && ldl_etcd_member(&e) == 0);
    s = ldl_etcd_store(&e);
    x = ldl_etcd_ext(&e);
    CHECK(x.acquire_owned && x.inspect && !x.submit_owned);
    t = 9;
    CHECK(s.acquire(s.ctx, NULL, 1000, &t) == LDL_EINVAL && t == 0);
    CHECK(s.acquire(s.ctx, "k", 1000, NULL) == LDL_EINVAL);
    CHECK(s.acquire(s.ctx, "k", 0, &t) == LDL_EINVAL);
    CHECK(s.renew(s.ctx, "k", 0, 1000) == LDL_EINVAL);
    CHECK(s.release(s.ctx, "", 5) == LDL_EINVAL);
    CHECK(x.acquire_owned(x.ctx, "k", 1000, "", &t) == LDL_EINVAL);
    CHECK(x.inspect(x.ctx, NULL, &h) == LDL_EINVAL);
    CHECK(ldl_etcd_why(NULL)[0] != '\0');
    {   /* the fenced write: bad arguments answered before any I/O */
        ldl_etcd_write w;
        memset(&w, 0, sizeof w);
        CHECK(ldl_etcd_fenced(&e, NULL) == LDL_EINVAL);
        CHECK(ldl_etcd_fenced(NULL, &w) == LDL_EINVAL);
        w.key = "k";
        w.target = "t";
        CHECK(ldl_etcd_fenced(&e, &w) == LDL_EINVAL && ldl_etcd_why(&e)[0] != '\0');   /* fence 0 */
        w.fence = 3;
        w.value_len = 4;                 /* a length without bytes */
        CHECK(ldl_etcd_fenced(&e, &w) == LDL_EINVAL);
        w.value_len = (size_t)LDL_ETCD_WRITE_MAX + 1u;
        w.value = "x";
        CHECK(ldl_etcd_fenced(&e, &w) == LDL_EINVAL);
    }
    {   /* bodies at the documented maxima fit: init takes a 63-byte prefix, refuses 64 */
        char p63[64], p64[65];
        ldl_etcd e2;
        memset(p63, 'p', sizeof p63 - 1);
        p63[sizeof p63 - 1] = '\0';
        memset(p64, 'p', sizeof p64 - 1);
        p64[sizeof p64 - 1] = '\0';
        c.prefix = p63;
        CHECK(ldl_etcd_init(&e2, &c) == LDL_OK);
        ldl_etcd_close(&e2);
        c.prefix = p64;
        CHECK(ldl_etcd_init(&e2, &c) == LDL_EINVAL && ldl_etcd_why(&e2)[0] != '\0');
        c.prefix = NULL;
    }
#ifndef LDL_NO_ASYNC
    {
        static ldl_etcd_req reqs[2];
        ldl_etcd_async ea;
        ldl_async_store as;
        ldl_op op;
        CHECK(ldl_etcd_async_init(&ea, NULL, reqs, 2) == LDL_EINVAL);
        CHECK(ldl_etcd_async_init(&ea, &e, NULL, 2) == LDL_EINVAL);
        CHECK(ldl_etcd_async_init(&ea, &e, reqs, 2) == LDL_OK);
        as = ldl_etcd_async_store(&ea);
        memset(&op, 0, sizeof op);
        CHECK(as.acquire(as.ctx, &op, "", 1000) == LDL_EINVAL);
        CHECK(as.acquire(as.ctx, NULL, "k", 1000) == LDL_EINVAL);
        CHECK(as.renew(as.ctx, &op, "k", 0, 1000) == LDL_EINVAL);
        CHECK(ldl_etcd_async_stats(&ea)->submitted == 0);
        CHECK(ldl_etcd_async_stats(NULL) == NULL && ldl_etcd_async_why(NULL)[0] != '\0');
        CHECK(ldl_etcd_async_rebind(&ea, NULL) == LDL_EINVAL);
        CHECK(ldl_etcd_async_drop(&ea) == 0);
        CHECK(ldl_etcd_async_timeout_ms(&ea) == -1);
        ldl_etcd_async_close(&ea);
        ldl_etcd_async_close(&ea);     /* idempotent */
    }
#endif
    ldl_etcd_close(&e);
    ldl_etcd_close(&e);               /* idempotent */
    ldl_etcd_close(NULL);
    curl_global_cleanup();
    return chk_report();
}
