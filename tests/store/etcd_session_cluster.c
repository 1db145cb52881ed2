/* tests/store/etcd_session_cluster.c -- sessions (issue 34, decision 1013) on a real 3-member
 * etcd cluster, through tests/store/with_etcd_cluster.sh's harness (its control script).
 *
 * V: one non-blocking view with a session (session_ms 4000) holding 100 locks, keys
 * "s<i>". C: a contender, another non-blocking view WITHOUT a session (a lease per lock,
 * ttl 10000), asking for the same 100 keys every 250 ms while it does not hold them. One
 * process, one monotonic clock, so every check is exact:
 *   exclusive  whenever C holds key i, V's lock i does not trust its lease
 *              (ldl_lock_valid_ms == 0), and the other way round
 *   fences     C's fence on key i is above V's last fence on it
 *
 *   etcd_session_cluster kill        (members on 127.0.0.1) the leader SIGKILLed while V's
 *                                    100 locks renew on one keepalive: V's keepalives move
 *                                    to the majority, no violation; every key held by
 *                                    someone at the end; the member restarted on its WAL
 *   etcd_session_cluster partition   (with_etcd_cluster.sh --netns) V attached only to the
 *                                    leader, C to the other two; the leader's peer cable
 *                                    pulled: every V lock lost, none trusted past the
 *                                    deadline it had at the cut, C takes all 100 keys with
 *                                    higher fences; healed, V's releases leave C's keys alone.
 *                                    Beside V a synchronous session client on the same member:
 *                                    its renews stop at the cut, lost by its deadline
 * Figures as "figure:" lines; last line "N passed, N failed". */
#define _POSIX_C_SOURCE 200809L
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include "tests/store/conformance.h"
#include "tests/store/etcd_common.h"
#include <sys/wait.h>

#define NL 100

static const char *g_ctl;
static conf__box BOX;
static ldl_etcd EV, EC;
static ldl_etcd_async V, C;
static ldl_etcd_req RV[2 * NL + 16], RC[2 * NL + 16];
static ldl_async_store SV, SC;
static ldl_lock LV[NL], LC[NL];
static char KEYS[NL][16];
static int64_t FV[NL];                  /* V's last fence per key */
static uint64_t NEXT_TRY[NL];
static long VIOL;
static int V_RETRY = 1;                 /* V asks again for a key it lost */
static ldl_etcd ES;                     /* partition: a synchronous session client beside V */
static ldl_lock LS;

static int ctl(const char *verb, int member)
{
    char cmd[600];
    int rc;
    if (member > 0) snprintf(cmd, sizeof cmd, "'%s' %s %d", g_ctl, verb, member);
    else snprintf(cmd, sizeof cmd, "'%s' %s", g_ctl, verb);
    rc = system(cmd);
    return (rc != -1 && WIFEXITED(rc)) ? WEXITSTATUS(rc) : -1;
}

static int leader(void)
{
    char cmd[600], line[32];
    FILE *p;
    long v = 0;
    snprintf(cmd, sizeof cmd, "'%s' wait-leader 30", g_ctl);
    p = popen(cmd, "r");
    if (!p) return 0;
    if (fgets(line, sizeof line, p)) v = atol(line);
    pclose(p);
    return v >= 1 && v <= 3 ? (int)v : 0;
}

static const char *endpoint(int member)
{
    char name[32];
    const char *v;
    snprintf(name, sizeof name, "LDL_ETCD_ENDPOINT_%d", member);
    v = getenv(name);
    return v ? v : "";
}

static int open_view(ldl_etcd *e, ldl_etcd_async *ea, ldl_etcd_req *reqs, ldl_async_store *as, const char *eps,
                     uint32_t session_ms)
{
    ldl_etcd_config c;
    etcdt_cfg(&c, eps, "sc/");
    c.attempt_ms = 500;
    c.call_ms = 2000;
    c.session_ms = session_ms;
    if (ldl_etcd_init(e, &c) != LDL_OK) return 0;
    if (ldl_etcd_async_init(ea, e, reqs, 2 * NL + 16) != LDL_OK) return 0;
    *as = ldl_etcd_async_store(ea);
    return 1;
}

static void open_locks(void)
{
    int i;
    for (i = 0; i < NL; i++) {
        ldl_lock_desc d;
        snprintf(KEYS[i], sizeof KEYS[i], "s%d", i);
        memset(&d, 0, sizeof d);
        d.container = conf__container(&BOX);
        d.key = KEYS[i];
        d.ttl_ms = 4000;
        d.async_store = &SV;
        ldl_lock_init(&LV[i], &d);
        d.async_store = &SC;
        d.ttl_ms = 10000;      /* C: 10 s, so the heal and the health wait (blocking calls of this
                                  one thread) cannot outlast its trust window before it renews */
        ldl_lock_init(&LC[i], &d);
        FV[i] = 0;
        NEXT_TRY[i] = 0;
    }
}

static void close_all(void)
{
    int i;
    for (i = 0; i < NL; i++) { ldl_lock_dispose(&LV[i]); ldl_lock_dispose(&LC[i]); }
    ldl_etcd_async_close(&V);
    ldl_etcd_async_close(&C);
    ldl_etcd_close(&EV);
    ldl_etcd_close(&EC);
}

/* one round: pump both views, poll every lock, C retries, V retries when V_RETRY; check */
static void step(int c_tries)
{
    int i;
    uint64_t now = st_now_ms();
    ldl_etcd_async_pump(&V);
    ldl_etcd_async_pump(&C);
    for (i = 0; i < NL; i++) {
        int sv = ldl_lock_poll(&LV[i]), sc;
        if (sv == 1 && ldl_lock_fencing_token(&LV[i]) != FV[i]) FV[i] = ldl_lock_fencing_token(&LV[i]);
        if (ldl_lock_state(&LV[i]) == LDL_LOST) ldl_lock_release(&LV[i]);
        else if (V_RETRY && (ldl_lock_state(&LV[i]) == LDL_IDLE || ldl_lock_state(&LV[i]) == LDL_RELEASED) &&
                 !ldl_lock_held(&LC[i]))
            ldl_lock_acquire(&LV[i]);
        sc = ldl_lock_poll(&LC[i]);
        if (ldl_lock_state(&LC[i]) == LDL_LOST) ldl_lock_release(&LC[i]);
        else if (c_tries && (ldl_lock_state(&LC[i]) == LDL_IDLE || ldl_lock_state(&LC[i]) == LDL_RELEASED) &&
                 now >= NEXT_TRY[i]) {
            NEXT_TRY[i] = now + 250;
            if (ldl_lock_acquire(&LC[i]) == 1) sc = 1;
        }
        (void)sc;
        if (ldl_lock_held(&LC[i]) && ldl_lock_held(&LV[i]) && ldl_lock_valid_ms(&LV[i]) > 0 &&
            ldl_lock_valid_ms(&LC[i]) > 0) {
            VIOL++;
            printf("VIOLATION: key %s trusted by V (fence %lld) and C (fence %lld)\n", KEYS[i],
                   (long long)ldl_lock_fencing_token(&LV[i]), (long long)ldl_lock_fencing_token(&LC[i]));
        }
        if (ldl_lock_held(&LC[i]) && FV[i] && ldl_lock_fencing_token(&LC[i]) <= FV[i] &&
            ldl_lock_fencing_token(&LC[i]) != 0) {
            VIOL++;
            printf("VIOLATION: key %s: C's fence %lld not above V's %lld\n", KEYS[i],
                   (long long)ldl_lock_fencing_token(&LC[i]), (long long)FV[i]);
        }
    }
    ldl_etcd_async_wait(&V, 2);
}

static int count_held(ldl_lock *l)
{
    int i, n = 0;
    for (i = 0; i < NL; i++) n += ldl_lock_held(&l[i]);
    return n;
}

static int hold_all_v(uint32_t ms)
{
    uint64_t end = st_now_ms() + ms;
    while (st_now_ms() < end && count_held(LV) < NL) step(0);
    return count_held(LV) == NL;
}

/* ------------------------------------------------------------------ kill */
static void test_kill(void)
{
    const char *eps = getenv("LDL_ETCD_ENDPOINTS");
    uint64_t end, ka0;
    int lead, lead2, i, lost_v = 0, someone;
    etcdt_case("kill", 150);
    ST_CHECK(open_view(&EV, &V, RV, &SV, eps, 4000) && open_view(&EC, &C, RC, &SC, eps, 0), "kill: views");
    open_locks();
    ST_CHECK(hold_all_v(30000), "kill: V holds 100 keys on one session");
    end = st_now_ms() + 3000;
    while (st_now_ms() < end) step(1);
    ST_CHECK(count_held(LC) == 0 && VIOL == 0, "kill: C refused while V holds");
    lead = leader();
    ST_CHECK(lead > 0, "kill: a leader");
    ka0 = ldl_etcd_async_stats(&V)->keepalives;
    ST_CHECK(ctl("kill", lead) == 0, "kill: SIGKILL the leader m%d", lead);
    end = st_now_ms() + 8000;
    while (st_now_ms() < end) {
        int before = count_held(LV);
        step(1);
        if (count_held(LV) < before) lost_v += before - count_held(LV);
    }
    lead2 = leader();
    for (i = 0, someone = 0; i < NL; i++) someone += ldl_lock_held(&LV[i]) || ldl_lock_held(&LC[i]);
    printf("figure: session kill: leader m%d SIGKILLed, new leader m%d; over 8 s V's 100 session locks lost %d "
           "time(s), %d held by V and %d by C at the end, %llu keepalives, %ld violations\n", lead, lead2, lost_v,
           count_held(LV), count_held(LC), (unsigned long long)(ldl_etcd_async_stats(&V)->keepalives - ka0), VIOL);
    ST_CHECK(VIOL == 0, "kill: no two holders trusted at once, fences rise (%ld violations)", VIOL);
    ST_CHECK(someone == NL, "kill: every key held by someone 8 s after the kill (%d)", someone);
    ST_CHECK(ldl_etcd_async_stats(&V)->keepalives - ka0 >= 4, "kill: V kept renewing by keepalives through the kill");
    ST_CHECK(ctl("start", lead) == 0 && ctl("wait-healthy", 60) == 0, "kill: m%d restarted, healthy", lead);
    close_all();
    etcdt_case_end();
}

/* ------------------------------------------------------------------ partition */
static void test_partition(void)
{
    char b_eps[600];
    uint64_t tp, end, dl_at_cut[NL], t_all_lost = 0, t_c_all = 0, dl_sync, t_sync_lost = 0;
    int lead, i, past = 0, renewed_after = 0, sync_renewed = 0;
    int64_t fv[NL];
    const char *nn = getenv("LDL_ETCD_NETNS");
    etcdt_case("partition", 200);
    if (!ST_CHECK(nn && strcmp(nn, "1") == 0, "partition: run through with_etcd_cluster.sh --netns")) return;
    lead = leader();
    if (!ST_CHECK(lead > 0, "partition: a leader")) return;
    snprintf(b_eps, sizeof b_eps, "%s,%s", endpoint(lead % 3 + 1), endpoint((lead + 1) % 3 + 1));
    ST_CHECK(open_view(&EV, &V, RV, &SV, endpoint(lead), 4000) && open_view(&EC, &C, RC, &SC, b_eps, 0),
             "partition: V on the leader m%d only, C on the other two", lead);
    open_locks();
    ST_CHECK(hold_all_v(30000), "partition: V holds 100 keys on one session");
    end = st_now_ms() + 2000;
    while (st_now_ms() < end) step(1);
    {
        /* the synchronous view's session beside V, on the same member: per call a
           keepalive and the quorum read */
        ldl_etcd_config c;
        ldl_store ss;
        ldl_lock_desc d;
        etcdt_cfg(&c, endpoint(lead), "sc/");
        c.attempt_ms = 500;
        c.call_ms = 2000;
        c.session_ms = 4000;
        ST_CHECK(ldl_etcd_init(&ES, &c) == LDL_OK, "partition: sync session client");
        ss = ldl_etcd_store(&ES);
        memset(&d, 0, sizeof d);
        d.container = conf__container(&BOX);
        d.key = "sync";
        d.ttl_ms = 4000;
        d.store = &ss;
        ldl_lock_init(&LS, &d);
        ST_CHECK(ldl_lock_acquire(&LS) == 1, "partition: the sync session lock acquired: %s", ldl_etcd_why(&ES));
    }
    V_RETRY = 0;
    for (i = 0; i < NL; i++) fv[i] = ldl_lock_fencing_token(&LV[i]);
    ST_CHECK(ctl("partition", lead) == 0, "partition: pull m%d's peer cable", lead);
    tp = st_now_ms();
    /* the deadline each lock may reach: a renew still waiting at the cut was submitted
       before it, so it may still extend the lock to at most now + ttl - drift */
    for (i = 0; i < NL; i++)
        dl_at_cut[i] = tp + (ldl_lock_pending(&LV[i]) ? 4000u - (4000u / 100u + 2u) : ldl_lock_valid_ms(&LV[i]));
    dl_sync = tp + ldl_lock_valid_ms(&LS);
    end = tp + 40000;
    while (st_now_ms() < end && (t_all_lost == 0 || t_c_all == 0)) {
        uint64_t now;
        int64_t before[NL];
        for (i = 0; i < NL; i++) before[i] = (int64_t)ldl_lock_valid_ms(&LV[i]);
        step(1);
        if (ldl_lock_held(&LS)) {             /* the sync lock renews (blocking) when due */
            uint32_t vb = ldl_lock_valid_ms(&LS);
            ldl_lock_poll(&LS);
            if (ldl_lock_held(&LS) && ldl_lock_valid_ms(&LS) > vb + 50 && st_now_ms() + ldl_lock_valid_ms(&LS) > dl_sync + 50)
                sync_renewed++;
            if (!ldl_lock_held(&LS) && !t_sync_lost) t_sync_lost = st_now_ms();
        }
        now = st_now_ms();
        for (i = 0; i < NL; i++) {
            if (now >= dl_at_cut[i] && ldl_lock_valid_ms(&LV[i]) > 0) past++;
            if (ldl_lock_held(&LV[i]) && (int64_t)ldl_lock_valid_ms(&LV[i]) > before[i] + 50 &&
                now + ldl_lock_valid_ms(&LV[i]) > dl_at_cut[i] + 50)
                renewed_after++;
        }
        if (!t_all_lost && count_held(LV) == 0) t_all_lost = now;
        if (!t_c_all && count_held(LC) == NL) t_c_all = now;
    }
    ST_CHECK(t_all_lost != 0, "partition: every V lock lost (%d still held)", count_held(LV));
    ST_CHECK(sync_renewed == 0 && t_sync_lost != 0 && t_sync_lost <= dl_sync,
             "partition: the sync session lock renewed no more after the cut (%d) and was lost by its deadline "
             "(%lld ms after the cut, deadline %lld)", sync_renewed, (long long)(t_sync_lost ? t_sync_lost - tp : 0),
             (long long)(dl_sync - tp));
    ST_CHECK(renewed_after == 0, "partition: no V renew succeeded after the cut (%d)", renewed_after);
    ST_CHECK(past == 0, "partition: no V lock trusted past its deadline at the cut (%d)", past);
    ST_CHECK(t_c_all != 0, "partition: C (majority side) took all 100 keys (%d)", count_held(LC));
    for (i = 0; i < NL; i++)
        if (ldl_lock_held(&LC[i]) && ldl_lock_fencing_token(&LC[i]) <= fv[i]) VIOL++;
    ST_CHECK(VIOL == 0, "partition: no two holders trusted at once, C's fences above V's (%ld violations)", VIOL);
    printf("figure: session partition: leader m%d cut off; V's 100 session locks all lost %lld ms after the cut "
           "(deadline at the cut: %lld ms); C held all 100 keys %lld ms after the cut; %ld violations\n", lead,
           (long long)(t_all_lost ? t_all_lost - tp : 0), (long long)(dl_at_cut[0] - tp),
           (long long)(t_c_all ? t_c_all - tp : 0), VIOL);
    ST_CHECK(ctl("heal", lead) == 0 && ctl("wait-healthy", 60) == 0, "partition: healed");
    /* V's locks are RELEASED (their owed releases ran against the cut-off member or after
       the heal); C's keys must still be C's */
    end = st_now_ms() + 5000;
    while (st_now_ms() < end) step(0);
    ST_CHECK(count_held(LC) == NL && VIOL == 0, "partition: after the heal C still holds all 100 keys (%d)",
             count_held(LC));
    ldl_lock_dispose(&LS);
    ldl_etcd_close(&ES);
    close_all();
    etcdt_case_end();
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "kill";
    st_ignore_sigpipe();
    setvbuf(stdout, NULL, _IOLBF, 0);
    g_ctl = getenv("LDL_ETCD_CTL");
    if (!g_ctl || !getenv("LDL_ETCD_ENDPOINT_3")) {
        fprintf(stderr, "etcd_session_cluster: run through tests/store/with_etcd_cluster.sh\n");
        printf("0 passed, 1 failed\n");
        return 1;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (strcmp(mode, "partition") == 0) test_partition();
    else test_kill();
    curl_global_cleanup();
    return st_report();
}
