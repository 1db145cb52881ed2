/* etcd_conformance.c -- the shared store conformance body (tests/store/conformance.h)
 * against a real single etcd member, through two ldl_etcd (two clients of one store):
 *   etcd_conformance sync    the synchronous ldl_store
 *   etcd_conformance async   the non-blocking view (two ldl_etcd_async, each driven
 *                            through a submit-then-pump shim), then many ldl_locks on one
 *                            view: grants, renews by the poll loop, release
 * then, on the same member: the owner and inspect, a dead member skipped, a frozen member
 * (SIGSTOP) answered within the call's bound (sync) and never stalling a pump (async),
 * the fence rising across a restart. Each part runs under its own time bound (etcdt_case):
 * a hang fails naming it.
 * Run through tests/store/with_etcd.sh. Last line: "N passed, N failed". */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include "tests/store/conformance.h"
#include "tests/store/etcd_common.h"

#define TTL_MS 8000u   /* etcd expires leases on a 500 ms tick: the body's 0.1 x ttl margin must cover it */

static etcdt_member M;

static void check_left_clean(const char *prefix)
{
    long keys = etcdt_count(M.url, prefix);
    ST_CHECK(keys == 0, "[%s] keys left under the prefix after the body: %ld", prefix, keys);
}

/* owner, inspect, bad arguments (sync) */
static void extras_sync(void)
{
    ldl_etcd e;
    ldl_etcd_config c;
    ldl_store s;
    ldl_store_ext x;
    ldl_holder h;
    int64_t t = 0, t2 = 0;
    char eps[200];
    int rc;
    etcdt_cfg(&c, M.url, "ext/");
    rc = ldl_etcd_init(&e, &c);            /* first: the why below reads what init wrote */
    ST_CHECK(rc == LDL_OK, "init: %s", ldl_etcd_why(&e));
    s = ldl_etcd_store(&e);
    x = ldl_etcd_ext(&e);
    rc = x.acquire_owned(x.ctx, "who", 3000, "node-7 pid 42", &t);
    ST_CHECK(rc == 1 && t >= 1, "owned acquire = %d token %lld (%s)", rc, (long long)t, ldl_etcd_why(&e));
    rc = x.inspect(x.ctx, "who", &h);
    ST_CHECK(rc == 1 && h.token == t && strcmp(h.owner, "node-7 pid 42") == 0 && h.ttl_left_ms >= 1000 &&
             h.ttl_left_ms <= 3000, "inspect = %d token %lld owner '%s' left %u", rc, (long long)h.token,
             h.owner, h.ttl_left_ms);
    rc = x.acquire_owned(x.ctx, "who", 3000, "bad\nowner", &t2);
    ST_CHECK(rc == LDL_EINVAL && t2 == 0, "owner with a control byte = %d", rc);
    ST_CHECK(s.release(s.ctx, "who", t) == 1, "release owned");
    rc = x.inspect(x.ctx, "who", &h);
    ST_CHECK(rc == 0 && h.token == 0 && h.owner[0] == '\0', "inspect after release = %d", rc);
    /* the key stored is exactly prefix + key */
    ST_CHECK(s.acquire(s.ctx, "exact", 3000, &t) == 1, "acquire exact");
    ST_CHECK(etcdt_count(M.url, "ext/exact") == 1 && etcdt_count(M.url, "ext/exac") == 1 &&
             etcdt_count(M.url, "ext/exactx") == 0, "the etcd key is prefix + key");
    /* renew with a ttl the lease does not cover: 0, the lease untouched */
    ST_CHECK(s.renew(s.ctx, "exact", t, 60000) == 0, "renew asking more than the lease's TTL = 0");
    ST_CHECK(s.renew(s.ctx, "exact", t, 3000) == 1, "renew within the TTL = 1");
    ST_CHECK(s.release(s.ctx, "exact", t) == 1, "release exact");
    ST_CHECK(etcdt_count(M.url, "ext/") == 0, "nothing left under ext/");
    /* bad arguments: EINVAL, nothing sent */
    t = 7;
    ST_CHECK(s.acquire(s.ctx, NULL, 3000, &t) == LDL_EINVAL && t == 0, "NULL key");
    ST_CHECK(s.acquire(s.ctx, "", 3000, &t) == LDL_EINVAL, "empty key");
    ST_CHECK(s.acquire(s.ctx, "k", 0, &t) == LDL_EINVAL, "ttl 0");
    ST_CHECK(s.renew(s.ctx, "k", 0, 3000) == LDL_EINVAL, "renew token 0");
    ST_CHECK(s.release(s.ctx, "k", -5) == LDL_EINVAL, "release token -5");
    ldl_etcd_close(&e);

    /* a dead member first in the list: skipped, the live one remembered */
    snprintf(eps, sizeof eps, "http://127.0.0.1:%d,%s", st_free_port(), M.url);
    etcdt_cfg(&c, eps, "ext/");
    ST_CHECK(ldl_etcd_init(&e, &c) == LDL_OK, "init two members");
    s = ldl_etcd_store(&e);
    rc = s.acquire(s.ctx, "dead-first", 3000, &t);
    ST_CHECK(rc == 1 && ldl_etcd_member(&e) == 1, "acquire with a dead first member = %d, member %d (%s)",
             rc, ldl_etcd_member(&e), ldl_etcd_why(&e));
    ST_CHECK(s.release(s.ctx, "dead-first", t) == 1, "release");
    ldl_etcd_close(&e);
    /* only dead members: a store error within the bound */
    snprintf(eps, sizeof eps, "http://127.0.0.1:%d,http://127.0.0.1:%d", st_free_port(), st_free_port());
    etcdt_cfg(&c, eps, "ext/");
    c.call_ms = 1000;
    ldl_etcd_init(&e, &c);
    s = ldl_etcd_store(&e);
    t = 5;
    rc = s.acquire(s.ctx, "nobody", 3000, &t);
    ST_CHECK(rc == LDL_ESTORE && t == 0, "no live member: acquire = %d token %lld", rc, (long long)t);
    ST_CHECK(s.renew(s.ctx, "nobody", 3, 3000) == LDL_ESTORE, "no live member: renew");
    ST_CHECK(s.release(s.ctx, "nobody", 3) == LDL_ESTORE, "no live member: release");
    ST_CHECK(strstr(ldl_etcd_why(&e), "transport") != NULL, "why names the transport: %s", ldl_etcd_why(&e));
    ldl_etcd_close(&e);
}

/* a frozen member: the sync call ends within its bound; the pump never stalls */
static void frozen(void)
{
    enum { N = 20 };
    ldl_etcd e, ev;
    ldl_etcd_config c;
    ldl_store s;
    static ldl_etcd_req reqs[2 * N + 4];
    ldl_etcd_async ea;
    ldl_async_store as;
    ldl_lock locks[N];
    conf__box box[N];
    conf__lost lost[N];
    conf_env env;
    int64_t t = 0;
    uint64_t t0, worst = 0, end;
    int i, held = 0, rc;
    char key[32];

    etcdt_cfg(&c, M.url, "frozen/");
    c.attempt_ms = 300;
    c.call_ms = 800;
    ST_CHECK(ldl_etcd_init(&e, &c) == LDL_OK, "init");
    s = ldl_etcd_store(&e);
    /* the view's exchanges wait 2 s for the frozen member: a pump that waited for one
       would take that long; the bound below (1 s) catches it and tolerates a loaded machine */
    c.attempt_ms = 2000;
    c.call_ms = 3000;
    ST_CHECK(ldl_etcd_init(&ev, &c) == LDL_OK, "init (view)");
    ST_CHECK(ldl_etcd_async_init(&ea, &ev, reqs, sizeof reqs / sizeof reqs[0]) == LDL_OK, "async init");
    as = ldl_etcd_async_store(&ea);
    memset(&env, 0, sizeof env);
    env.name = "frozen";
    env.ttl_ms = 3000;
    for (i = 0; i < N; i++) {
        ldl_lock_desc d;
        memset(&d, 0, sizeof d);
        memset(&box[i], 0, sizeof box[i]);
        memset(&lost[i], 0, sizeof lost[i]);
        d.container = conf__container(&box[i]);
        snprintf(key, sizeof key, "f%d", i);
        d.key = key;
        d.ttl_ms = 3000;
        d.async_store = &as;
        d.on_lost = conf__on_lost;
        d.user = &lost[i];
        ST_CHECK(ldl_lock_init(&locks[i], &d) == LDL_OK, "lock init %d", i);
        ldl_lock_acquire(&locks[i]);
    }
    end = st_now_ms() + 5000;
    while (st_now_ms() < end) {
        ldl_etcd_async_wait(&ea, 5);
        ldl_etcd_async_pump(&ea);
        for (held = 0, i = 0; i < N; i++) held += ldl_lock_poll(&locks[i]) == 1;
        if (held == N) break;
    }
    ST_CHECK(held == N, "all %d locks held before the freeze: %d (%s)", N, held, ldl_etcd_async_why(&ea));

    kill(M.pid, SIGSTOP);
    t0 = st_now_ms();
    rc = s.acquire(s.ctx, "during", 3000, &t);
    t0 = st_now_ms() - t0;
    ST_CHECK(rc == LDL_ESTORE && t == 0, "acquire on a frozen member = %d", rc);
    ST_CHECK(t0 < 800 + 1500, "the sync call ended within its bound: %llu ms (call_ms 800)",
             (unsigned long long)t0);
    /* frames through the lease: every pump short, every lock lost by its own deadline */
    end = st_now_ms() + 4000;
    while (st_now_ms() < end) {
        uint64_t p0 = st_now_ms(), d;
        ldl_etcd_async_pump(&ea);
        d = st_now_ms() - p0;
        if (d > worst) worst = d;
        for (i = 0; i < N; i++) ldl_lock_poll(&locks[i]);
        st_sleep_ms(5);
    }
    for (held = 0, i = 0; i < N; i++) held += ldl_lock_held(&locks[i]);
    ST_CHECK(held == 0, "locks still trusting a frozen member's lease after 4 s (ttl 3 s): %d", held);
    ST_CHECK(worst < 1000, "the slowest pump while the member was frozen: %llu ms (must not wait for it)",
             (unsigned long long)worst);
    kill(M.pid, SIGCONT);
    for (i = 0; i < N; i++) ldl_lock_dispose(&locks[i]);
    end = st_now_ms() + 5000;
    while (ldl_etcd_async_stats(&ea)->live > 0 && st_now_ms() < end) { ldl_etcd_async_wait(&ea, 5); ldl_etcd_async_pump(&ea); }
    ST_CHECK(ldl_etcd_async_stats(&ea)->live == 0, "every request finished after the thaw");
    ldl_etcd_async_close(&ea);
    ldl_etcd_close(&ev);
    ldl_etcd_close(&e);
}

/* the fence rises across a restart of the member (the revision is in the WAL) */
static void restart(void)
{
    ldl_etcd e;
    ldl_etcd_config c;
    ldl_store s;
    int64_t t1 = 0, t2 = 0;
    etcdt_cfg(&c, M.url, "restart/");
    ldl_etcd_init(&e, &c);
    s = ldl_etcd_store(&e);
    ST_CHECK(s.acquire(s.ctx, "r", 3000, &t1) == 1, "acquire before the restart");
    ST_CHECK(s.release(s.ctx, "r", t1) == 1, "release before the restart");
    ST_CHECK(etcdt_restart(&M), "member restarted");
    ST_CHECK(s.acquire(s.ctx, "r", 3000, &t2) == 1 && t2 > t1, "after the restart: token %lld > %lld (%s)",
             (long long)t2, (long long)t1, ldl_etcd_why(&e));
    ST_CHECK(s.release(s.ctx, "r", t2) == 1, "release after the restart");
    ldl_etcd_close(&e);
}

/* user/password: the token flow (/v3/auth/authenticate, Authorization header), a wrong
   password, a user without rights on the prefix, no credentials, and a token made stale by
   a restart (simple tokens live in the member's memory): re-authenticated within the call.
   Runs last: auth stays enabled on the member. */
static int ectl(const char *args)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ETCDCTL_API=3 etcdctl --endpoints=%s %s >/dev/null 2>&1", M.url, args);
    return system(cmd);
}

static void auth_check(void)
{
    ldl_etcd e;
    ldl_etcd_config c;
    ldl_store s;
    ldl_store_ext x;
    ldl_holder h;
    int64_t t = 0, t2 = 0;
    int rc;
    ST_CHECK(ectl("user add root:rootpw") == 0 && ectl("user add app:apppw") == 0 &&
             ectl("user add other:otherpw") == 0 && ectl("role add lockers") == 0 &&
             ectl("role add others") == 0 &&
             ectl("role grant-permission lockers readwrite --prefix=true auth/") == 0 &&
             ectl("role grant-permission others readwrite --prefix=true elsewhere/") == 0 &&
             ectl("user grant-role app lockers") == 0 && ectl("user grant-role other others") == 0 &&
             ectl("auth enable") == 0, "etcdctl: users, roles, auth enable");
    etcdt_cfg(&c, M.url, "auth/");
    c.user = "app";
    c.password = "apppw";
    ldl_etcd_init(&e, &c);
    s = ldl_etcd_store(&e);
    x = ldl_etcd_ext(&e);
    rc = x.acquire_owned(x.ctx, "a", 3000, "authed", &t);
    ST_CHECK(rc == 1 && t >= 1, "auth: acquire as app = %d (%s)", rc, ldl_etcd_why(&e));
    ST_CHECK(s.renew(s.ctx, "a", t, 3000) == 1, "auth: renew as app (%s)", ldl_etcd_why(&e));
    rc = x.inspect(x.ctx, "a", &h);
    ST_CHECK(rc == 1 && h.token == t && strcmp(h.owner, "authed") == 0, "auth: inspect as app = %d", rc);
    {   /* the non-blocking view with the same credentials */
        static ldl_etcd_req rq[4];
        ldl_etcd_async ea;
        etcdt_shim sh;
        ldl_store as;
        int arc = ldl_etcd_async_init(&ea, &e, rq, 4);   /* before its why is read */
        ST_CHECK(arc == LDL_OK, "auth: async init (%s)", ldl_etcd_async_why(&ea));
        sh.ea = &ea;
        sh.max_ms = 10000;
        as = etcdt_shim_store(&sh);
        rc = as.acquire(as.ctx, "b", 3000, &t2);
        ST_CHECK(rc == 1 && t2 > t, "auth: async acquire = %d (%s)", rc, ldl_etcd_async_why(&ea));
        ST_CHECK(as.renew(as.ctx, "b", t2, 3000) == 1, "auth: async renew");
        ST_CHECK(as.release(as.ctx, "b", t2) == 1, "auth: async release");
        ldl_etcd_async_close(&ea);
    }
    /* a restart forgets the simple token: the next call authenticates again by itself */
    ST_CHECK(etcdt_restart(&M), "auth: member restarted");
    rc = s.release(s.ctx, "a", t);
    ST_CHECK(rc == 1, "auth: release after the restart (stale token) = %d (%s)", rc, ldl_etcd_why(&e));
    ldl_etcd_close(&e);

    c.password = "wrong";
    ldl_etcd_init(&e, &c);
    s = ldl_etcd_store(&e);
    t = 9;
    rc = s.acquire(s.ctx, "a", 3000, &t);
    ST_CHECK(rc == LDL_ESTORE && t == 0 && strstr(ldl_etcd_why(&e), "authentication failed"),
             "auth: wrong password = %d (%s)", rc, ldl_etcd_why(&e));
    ldl_etcd_close(&e);

    c.user = "other";
    c.password = "otherpw";
    ldl_etcd_init(&e, &c);
    s = ldl_etcd_store(&e);
    t = 9;
    rc = s.acquire(s.ctx, "a", 3000, &t);
    ST_CHECK(rc == LDL_ESTORE && t == 0, "auth: a user without rights on the prefix = %d (%s)", rc, ldl_etcd_why(&e));
    ldl_etcd_close(&e);

    c.user = NULL;
    c.password = NULL;
    ldl_etcd_init(&e, &c);
    s = ldl_etcd_store(&e);
    t = 9;
    rc = s.acquire(s.ctx, "a", 3000, &t);
    ST_CHECK(rc == LDL_ESTORE && t == 0, "auth: no credentials = %d (%s)", rc, ldl_etcd_why(&e));
    ldl_etcd_close(&e);
}

/* many locks on one view: grant, renew through poll, release; every token distinct */
static void many_locks(ldl_etcd *e)
{
    enum { N = 200 };
    static ldl_etcd_req reqs[2 * N + 8];
    static ldl_lock locks[N];
    static conf__box box[N];
    static conf__lost lost[N];
    static int64_t tok[N];
    static char keys[N][16];
    ldl_etcd_async ea;
    ldl_async_store as;
    uint64_t end;
    int i, j, held = 0, released = 0, dup = 0;
    ST_CHECK(ldl_etcd_async_init(&ea, e, reqs, sizeof reqs / sizeof reqs[0]) == LDL_OK, "async init (many)");
    as = ldl_etcd_async_store(&ea);
    for (i = 0; i < N; i++) {
        ldl_lock_desc d;
        memset(&d, 0, sizeof d);
        d.container = conf__container(&box[i]);
        snprintf(keys[i], sizeof keys[i], "m%d", i);
        d.key = keys[i];
        d.ttl_ms = 6000;
        d.heartbeat_ms = 1000;
        d.async_store = &as;
        d.on_lost = conf__on_lost;
        d.user = &lost[i];
        ldl_lock_init(&locks[i], &d);
        ldl_lock_acquire(&locks[i]);
    }
    end = st_now_ms() + 15000;
    while (st_now_ms() < end) {
        ldl_etcd_async_wait(&ea, 5);
        ldl_etcd_async_pump(&ea);
        for (held = 0, i = 0; i < N; i++) {
            int st = ldl_lock_poll(&locks[i]);
            if (st == 0) ldl_lock_acquire(&locks[i]);   /* timed out on a loaded machine: again */
            held += st == 1;
        }
        if (held == N) break;
    }
    ST_CHECK(held == N, "many: %d of %d held (%s)", held, N, ldl_etcd_async_why(&ea));
    for (i = 0; i < N; i++) tok[i] = ldl_lock_fencing_token(&locks[i]);
    for (i = 0; i < N; i++) for (j = i + 1; j < N; j++) dup += tok[i] == tok[j];
    ST_CHECK(dup == 0, "many: %d duplicate fences", dup);
    /* 7 s of frames, past the 6 s TTL: only renews keep them, nobody lost */
    end = st_now_ms() + 7000;
    while (st_now_ms() < end) {
        ldl_etcd_async_wait(&ea, 5);
        ldl_etcd_async_pump(&ea);
        for (i = 0; i < N; i++) ldl_lock_poll(&locks[i]);
    }
    for (held = 0, i = 0; i < N; i++) held += ldl_lock_held(&locks[i]) && lost[i].calls == 0;
    ST_CHECK(held == N, "many: still held after 7 s (ttl 6 s) of heartbeats: %d (%s)", held, ldl_etcd_async_why(&ea));
    ST_CHECK(ldl_etcd_async_stats(&ea)->submitted >= (uint64_t)N * 5, "many: renews were sent (about six per lock) (%llu submitted)",
             (unsigned long long)ldl_etcd_async_stats(&ea)->submitted);
    for (i = 0; i < N; i++) ldl_lock_release(&locks[i]);
    end = st_now_ms() + 10000;
    while (st_now_ms() < end) {
        ldl_etcd_async_wait(&ea, 5);
        ldl_etcd_async_pump(&ea);
        for (released = 0, i = 0; i < N; i++) {
            if (ldl_lock_state(&locks[i]) == LDL_RELEASING) ldl_lock_release(&locks[i]);
            released += ldl_lock_state(&locks[i]) == LDL_RELEASED && ldl_lock_answer(&locks[i]) == 1;
        }
        if (released == N) break;
    }
    if (released != N) {
        int hist[4] = { 0, 0, 0, 0 };
        for (i = 0; i < N; i++) {
            int a = ldl_lock_answer(&locks[i]);
            hist[a == 1 ? 0 : a == 0 ? 1 : a == LDL_ESTORE ? 2 : 3]++;
        }
        fprintf(stderr, "many: release answers 1:%d 0:%d ESTORE:%d other:%d; why [%s]; failovers %llu\n",
                hist[0], hist[1], hist[2], hist[3], ldl_etcd_async_why(&ea),
                (unsigned long long)ldl_etcd_async_stats(&ea)->failovers);
    }
    ST_CHECK(released == N, "many: %d of %d released with 1", released, N);
    ST_CHECK(etcdt_count(M.url, "many/") == 0, "many: no key left");
    for (i = 0; i < N; i++) ldl_lock_dispose(&locks[i]);
    ldl_etcd_async_close(&ea);
}

int main(int argc, char **argv)
{
    int async = argc > 1 && strcmp(argv[1], "async") == 0;
    const char *prefix = async ? "conf-async/" : "conf-sync/";
    ldl_etcd ea_, eb_;
    ldl_etcd_config c;
    conf_env env;
    int rc;

    st_ignore_sigpipe();
    curl_global_init(CURL_GLOBAL_DEFAULT);
    etcdt_case("start etcd", 60);
    if (!etcdt_start(&M, async ? "conf-async" : "conf-sync")) { ST_CHECK(0, "start etcd"); return st_report(); }
    etcdt_cfg(&c, M.url, prefix);
    rc = ldl_etcd_init(&ea_, &c);
    ST_CHECK(rc == LDL_OK, "init a = %d (%s)", rc, ldl_etcd_why(&ea_));
    rc = ldl_etcd_init(&eb_, &c);
    ST_CHECK(rc == LDL_OK, "init b = %d (%s)", rc, ldl_etcd_why(&eb_));
    if (st_failed()) return st_report();

    memset(&env, 0, sizeof env);
    env.ttl_ms = TTL_MS;
    env.sleep_ms = conf_real_sleep;
    env.tokens_per_key = 1;
    if (!async) {
        env.name = "etcd";
        env.a = ldl_etcd_store(&ea_);
        env.b = ldl_etcd_store(&eb_);
        etcdt_case("the conformance body, sync", 300);
        conf_run(&env);
        if (st_failed()) fprintf(stderr, "last adapter errors: a=[%s] b=[%s]\n", ldl_etcd_why(&ea_), ldl_etcd_why(&eb_));
        check_left_clean(prefix);
        etcdt_case("owner, inspect, bad arguments, dead members", 60);
        extras_sync();
        etcdt_case("the fence across a restart", 90);
        restart();
    } else {
        static ldl_etcd_req ra[8], rb[8];
        ldl_etcd_async va, vb;
        etcdt_shim sa, sb;
        int arc = ldl_etcd_async_init(&va, &ea_, ra, 8);  /* before its why is read */
        ST_CHECK(arc == LDL_OK, "async init a (%s)", ldl_etcd_async_why(&va));
        ST_CHECK(ldl_etcd_async_init(&vb, &eb_, rb, 8) == LDL_OK, "async init b");
        sa.ea = &va; sa.max_ms = 10000; sb.ea = &vb; sb.max_ms = 10000;
        env.name = "etcd-async";
        env.a = etcdt_shim_store(&sa);
        env.b = etcdt_shim_store(&sb);
        etcdt_case("the conformance body, non-blocking", 300);
        conf_run(&env);
        if (st_failed()) fprintf(stderr, "last adapter errors: a=[%s] b=[%s]\n", ldl_etcd_async_why(&va), ldl_etcd_async_why(&vb));
        ST_CHECK(ldl_etcd_async_stats(&va)->live == 0 && ldl_etcd_async_stats(&vb)->live == 0, "nothing left in flight");
        ST_CHECK(ldl_etcd_async_stats(&va)->failed == 0, "no request failed: %llu",
                 (unsigned long long)ldl_etcd_async_stats(&va)->failed);
        ldl_etcd_async_close(&va);
        ldl_etcd_async_close(&vb);
        check_left_clean(prefix);
        {
            ldl_etcd em;
            etcdt_cfg(&c, M.url, "many/");
            c.attempt_ms = 1500;       /* a loaded 2-core machine: fsyncs queue behind 200 writes */
            c.call_ms = 5000;
            ldl_etcd_init(&em, &c);
            etcdt_case("200 locks on one view", 120);
            many_locks(&em);
            ldl_etcd_close(&em);
        }
        etcdt_case("a frozen member", 90);
        frozen();
    }
    {
        /* a grant sent to the frozen member may be served after the thaw: its lease runs out */
        uint64_t end = st_now_ms() + 8000;
        long leases = etcdt_leases(M.url);
        while (leases != 0 && st_now_ms() < end) { st_sleep_ms(200); leases = etcdt_leases(M.url); }
        ST_CHECK(leases == 0, "leases left in etcd at the end: %ld", leases);
    }
    etcdt_case("leases left at the end, auth", 120);
    if (!async) auth_check();
    etcdt_case_end();
    ldl_etcd_close(&ea_);
    ldl_etcd_close(&eb_);
    etcdt_stop(&M);
    curl_global_cleanup();
    return st_report();
}
