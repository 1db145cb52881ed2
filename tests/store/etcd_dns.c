/* etcd_dns.c -- every wait is bounded, name resolution included (issue 31): a member whose
 * name takes 10 s to resolve (LD_PRELOAD=etcd_slowdns.so, see there) costs a synchronous
 * call no more than its bound (call_ms 600), and never stalls a pump of the non-blocking
 * view: the request ends LDL_ESTORE within its bound, every pump stays short. Run without
 * the sanitizers (ASan must come first in the preload list). Each case has its own time
 * bound (etcdt_case). Last line: "N passed, N failed". */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include "tests/store/etcd_common.h"

int main(void)
{
    ldl_etcd e;
    ldl_etcd_config c;
    ldl_store s;
    int64_t t = 7;
    uint64_t t0, took;
    int rc;
    const char *pre = getenv("LD_PRELOAD");
    curl_global_init(CURL_GLOBAL_DEFAULT);
    ST_CHECK(pre && strstr(pre, "etcd_slowdns"), "run with LD_PRELOAD=.../etcd_slowdns.so (is: %s)", pre ? pre : "unset");
    etcdt_case("sync call, slow name", 15);
    etcdt_cfg(&c, "http://etcd1.slow.test:2379,http://etcd2.slow.test:2379", NULL);
    c.call_ms = 600;
    c.attempt_ms = 300;
    ST_CHECK(ldl_etcd_init(&e, &c) == LDL_OK, "init");
    s = ldl_etcd_store(&e);
    t0 = st_now_ms();
    rc = s.acquire(s.ctx, "dns", 3000, &t);
    took = st_now_ms() - t0;
    ST_CHECK(rc == LDL_ESTORE && t == 0, "[sync] acquire against names that do not resolve = %d (%s)", rc, ldl_etcd_why(&e));
    ST_CHECK(took < 600 + 900, "[sync] the call ended within its bound: %llu ms (call_ms 600)", (unsigned long long)took);
    ST_CHECK(strstr(ldl_etcd_why(&e), "transport") != NULL, "[sync] why names the transport: %s", ldl_etcd_why(&e));
    {
        static ldl_etcd_req rq[4];
        ldl_etcd_async ea;
        ldl_op op;
        uint64_t worst = 0, end;
        etcdt_case("async request, slow name", 15);
        ST_CHECK(ldl_etcd_async_init(&ea, &e, rq, 4) == LDL_OK, "async init");
        memset(&op, 0, sizeof op);
        op._phase = LDL__OP_FLYING;
        op._kind = LDL_OP_ACQUIRE;
        t0 = st_now_ms();
        ST_CHECK(ldl_etcd_async_store(&ea).acquire(&ea, &op, "dns", 3000) == LDL_OK, "submit");
        end = t0 + 5000;
        while (op._phase != LDL__OP_ANSWERED && st_now_ms() < end) {
            uint64_t p0 = st_now_ms(), d;
            ldl_etcd_async_pump(&ea);
            d = st_now_ms() - p0;
            if (d > worst) worst = d;
            st_sleep_ms(5);
        }
        took = st_now_ms() - t0;
        ST_CHECK(op._phase == LDL__OP_ANSWERED && op._rc == LDL_ESTORE && op._token == 0,
                 "[async] the request ended LDL_ESTORE (%s)", ldl_etcd_async_why(&ea));
        ST_CHECK(took < 600 + 1500, "[async] within its bound: %llu ms (call_ms 600)", (unsigned long long)took);
        ST_CHECK(worst < 200, "[async] no pump waited for the resolver: slowest %llu ms", (unsigned long long)worst);
        etcdt_case("close with resolver threads outstanding", 15);
        ldl_etcd_async_close(&ea);
    }
    ldl_etcd_close(&e);
    etcdt_case_end();
    curl_global_cleanup();
    return st_report();
}
