/* async_loop.c - the non-blocking frame loop of the header's top doc, on a
   simulated network store: a MemoryStore behind a queue that answers each
   request LATENCY frames after it was submitted, pumped once per frame.
   Simulated time (16 ms frames), so the run is exact and instant.

   Timeline: the loop acquires and holds (renews go out without stopping a
   frame), then the "server" stalls for 90 frames: no frame waits, the lease
   is lost at its local deadline (LEASE_EXPIRED), the late answers are handed
   back when the server resumes, and the loop competes again and wins with a
   higher fence. Exits 0 only if all of that happened. */
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include <stdio.h>
#include <string.h>

#define LATENCY 3            /* frames from submit to answer */
#define QMAX 16

typedef struct req {
    ldl_op *op;              /* NULL once cancelled (the store owns the outcome) */
    int kind, live;
    char key[LDL_KEY_MAX];
    int64_t token;
    uint32_t ttl;
    unsigned due;            /* frame at which the server answers */
} req;

typedef struct net_store {
    ldl_memstore ms;         /* the "server" */
    ldl_memstore_slot slots[8];
    req q[QMAX];
    unsigned frame;
    int stalled;
    int late_handbacks;      /* cancelled acquires that turned out granted */
} net_store;

static int ns_submit(net_store *n, ldl_op *op, int kind, const char *key, int64_t token, uint32_t ttl) {
    int i;
    for (i = 0; i < QMAX; i++) {
        if (!n->q[i].live) {
            req *r = &n->q[i];
            r->op = op; r->kind = kind; r->live = 1; r->token = token; r->ttl = ttl;
            strncpy(r->key, key, LDL_KEY_MAX - 1); r->key[LDL_KEY_MAX - 1] = 0;
            r->due = n->frame + LATENCY;
            op->store_data = (uintptr_t)i;
            return LDL_OK;
        }
    }
    return -1;               /* queue full: nothing queued */
}
static int ns_acquire(void *c, ldl_op *op, const char *key, uint32_t ttl) {
    return ns_submit((net_store *)c, op, LDL_OP_ACQUIRE, key, 0, ttl);
}
static int ns_renew(void *c, ldl_op *op, const char *key, int64_t tok, uint32_t ttl) {
    return ns_submit((net_store *)c, op, LDL_OP_RENEW, key, tok, ttl);
}
static int ns_release(void *c, ldl_op *op, const char *key, int64_t tok) {
    return ns_submit((net_store *)c, op, LDL_OP_RELEASE, key, tok, 0);
}
static void ns_cancel(void *c, ldl_op *op) {
    net_store *n = (net_store *)c;
    req *r = &n->q[op->store_data];
    if (r->live && r->op == op) r->op = NULL;   /* the request still goes out */
}

/* the store's pump: the server answers what is due; never blocks */
static void ns_pump(net_store *n) {
    ldl_store s = ldl_memstore_store(&n->ms);
    int i;
    n->frame++;
    if (n->stalled) return;
    for (i = 0; i < QMAX; i++) {
        req *r = &n->q[i];
        int64_t tok = 0;
        int rc;
        if (!r->live || r->due > n->frame) continue;
        if (r->kind == LDL_OP_ACQUIRE) rc = s.acquire(s.ctx, r->key, r->ttl, &tok);
        else if (r->kind == LDL_OP_RENEW) rc = s.renew(s.ctx, r->key, r->token, r->ttl);
        else rc = s.release(s.ctx, r->key, r->token);
        r->live = 0;
        if (r->op) ldl_op_complete(r->op, rc, tok);
        else if (r->kind == LDL_OP_ACQUIRE && tok >= 1) {   /* the cancel rule */
            (void)s.release(s.ctx, r->key, tok);
            n->late_handbacks++;
        }
    }
}

typedef struct sim { uint64_t now; } sim;
static uint64_t sim_now(void *ctx) { return ((sim *)ctx)->now; }

static int lost_reason = -1;
static void on_lost(void *user, int reason) { (void)user; lost_reason = reason; }

int main(void) {
    static net_store n;      /* static: a few KB, zeroed */
    sim t = { 1000 };
    ldl_clock clk = { sim_now, NULL };
    ldl_async_store as;
    ldl_scope root;
    ldl_lock lock;
    ldl_lock_desc d;
    unsigned frame, held_frames = 0;
    int64_t first_fence = 0, fence = 0, renews = 0;
    int ok;

    clk.ctx = &t;
    ldl_memstore_init(&n.ms, n.slots, 8, clk);
    as.acquire = ns_acquire; as.renew = ns_renew; as.release = ns_release;
    as.cancel = ns_cancel; as.ctx = &n;
    ldl_scope_init(&root, NULL, 0);
    memset(&d, 0, sizeof d);
    d.container = ldl_scope_container(&root);
    d.key = "world-sim";
    d.ttl_ms = 600;                      /* heartbeat 200, drift 8, window 592 */
    d.clock = clk;
    d.async_store = &as;
    d.on_lost = on_lost;
    if (ldl_lock_init(&lock, &d) != LDL_OK) { printf("init: %s\n", ldl_lock_why(&lock)); return 1; }

    ldl_lock_acquire(&lock);             /* 1, 0, or LDL_EINPROGRESS */
    for (frame = 0; frame < 300; frame++) {
        t.now += 16;
        if (frame == 100) { n.stalled = 1; printf("frame %3u: server stalls\n", frame); }
        if (frame == 190) { n.stalled = 0; printf("frame %3u: server resumes\n", frame); }
        ns_pump(&n);
        if (ldl_lock_poll(&lock) == 1) {
            int64_t f = ldl_lock_fencing_token(&lock);
            if (f != fence) printf("frame %3u: HELD, fence %lld\n", frame, (long long)f);
            if (!first_fence) first_fence = f;
            fence = f;
            held_frames++;
            if (ldl_lock_pending(&lock)) renews++;
        } else if (!ldl_lock_pending(&lock)) {
            if (ldl_lock_state(&lock) == LDL_LOST) {
                printf("frame %3u: LOST (%s), releasing\n", frame, ldl_reason_name(ldl_lock_reason(&lock)));
                ldl_lock_release(&lock);
            } else {
                ldl_lock_acquire(&lock);  /* compete again */
            }
        }
    }
    ldl_lock_dispose(&lock);
    ok = first_fence >= 1 && fence > first_fence && lost_reason == LDL_REASON_LEASE_EXPIRED &&
         renews > 0 && held_frames > 150;
    printf("held %u of 300 frames; fences %lld -> %lld; lost once (%s); %d late grant(s) handed back by the store\n",
           held_frames, (long long)first_fence, (long long)fence, ldl_reason_name(lost_reason), n.late_handbacks);
    printf("%s\n", ok ? "OK: no frame waited; lost at the deadline; won again with a higher fence"
                      : "FAILED");
    return ok ? 0 : 1;
}
