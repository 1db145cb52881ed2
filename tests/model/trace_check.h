/* trace_check.h -- trace validation (issue 36 item 3): every state change of a
   lock, as LDL_ON_TRANSITION reports it with the lock's clock and fields, is
   recorded and checked to be a step of the model's transition relation
   (tests/model/lock.pml, the Client process) from the previous step's state.

   Included by tests/fuzz/lifecycle_edges.h when LDL_MODEL_TRACE is defined
   (make test-model builds the fuzz replays so and runs a few thousand inputs).
   A trace starts at init (RELEASED -> IDLE with the lock not yet live) and is
   one lock's run; a violation prints the trace's last steps and aborts.

   The model's steps and the guard each one carries, as the hook can see them:
     init      RELEASED -> IDLE (a new trace)
     acquire   IDLE | RELEASED -> ACQUIRING              (a start read: now)
     apply     ACQUIRING -> HELD   only if the grant's window is open:
                 start <= now < start + ttl - drift (a late yes is refused),
                 and its token > every token this trace accepted (fences rise)
               ACQUIRING -> IDLE   (a no, a refused yes, the ACQUIRING timeout)
     loss      HELD -> LOST
     release   HELD | LOST -> RELEASING, LOST -> RELEASED, RELEASING -> RELEASED
     cancel    ACQUIRING -> RELEASED; the cut: ACQUIRING | HELD | RELEASING -> RELEASED
     dispose   IDLE | ACQUIRING | HELD | LOST | RELEASING | RELEASED -> RELEASED
   plus the one edge the model leaves to the election layer (decision 0013):
     campaign  LOST -> ACQUIRING while the campaign competes
   Every step must also continue the trace: its `from` is the last step's `to`. */
#ifndef LDL_TEST_TRACE_CHECK_H
#define LDL_TEST_TRACE_CHECK_H
#include <stdio.h>
#include <stdlib.h>

#define TR_LOCKS 8
#define TR_KEEP  24
typedef struct {
    const void *lock;
    int st;                         /* the model's state after the last step */
    int64_t last;                   /* the highest token the trace accepted */
    unsigned long steps;
    struct { int from, to; uint64_t now, start; int64_t tok; } ring[TR_KEEP];
} tr_trace;
static tr_trace tr_tab[TR_LOCKS];
static unsigned long tr_traces, tr_steps;   /* totals, printed at exit */
static void tr_report(void) {
    printf("trace validation: %lu traces, %lu steps, each a step of the model\n", tr_traces, tr_steps);
}

static void tr_fail(tr_trace *t, const char *why) {
    static const char *const n[6] = { "IDLE", "ACQUIRING", "HELD", "RELEASING", "RELEASED", "LOST" };
    unsigned long k = t->steps > TR_KEEP ? t->steps - TR_KEEP : 0;
    fprintf(stderr, "trace validation: NOT A STEP OF THE MODEL at step %lu of this trace: %s\n",
            t->steps, why);
    for (; k < t->steps; k++) {
        int f = t->ring[k % TR_KEEP].from, to = t->ring[k % TR_KEEP].to;
        fprintf(stderr, "  step %lu: %s -> %s  now=%llu start=%llu token=%lld\n", k + 1,
                f >= 0 && f < 6 ? n[f] : "?", to >= 0 && to < 6 ? n[to] : "?",
                (unsigned long long)t->ring[k % TR_KEEP].now, (unsigned long long)t->ring[k % TR_KEEP].start,
                (long long)t->ring[k % TR_KEEP].tok);
    }
    abort();
}

/* one step: the lock's fields as ldl__set_state sees them (the new token and
   start are written before the change to HELD) */
static void tr_step(const void *lock, int live, int from, int to, uint64_t now, uint64_t start,
                    uint32_t window, int64_t tok, int competing) {
    tr_trace *t = NULL;
    int i, ok;
    for (i = 0; i < TR_LOCKS; i++) if (tr_tab[i].lock == lock) { t = &tr_tab[i]; break; }
    if (!live && from == LDL_RELEASED && to == LDL_IDLE) {          /* init: a new trace */
        if (!t) for (i = 0; i < TR_LOCKS; i++) if (!tr_tab[i].lock) { t = &tr_tab[i]; break; }
        if (!t) t = &tr_tab[(uintptr_t)lock / 8 % TR_LOCKS];         /* reuse a slot */
        t->lock = lock; t->st = LDL_RELEASED; t->last = 0; t->steps = 0;
        if (!tr_traces++) atexit(tr_report);
    }
    if (!t) return;                 /* a lock whose init this run did not see */
    t->ring[t->steps % TR_KEEP].from = from; t->ring[t->steps % TR_KEEP].to = to;
    t->ring[t->steps % TR_KEEP].now = now; t->ring[t->steps % TR_KEEP].start = start;
    t->ring[t->steps % TR_KEEP].tok = tok;
    t->steps++; tr_steps++;
    if (from != t->st) tr_fail(t, "it does not continue the trace (from != the last step's to)");
    switch (from * 8 + to) {
    case LDL_RELEASED * 8 + LDL_IDLE:       ok = !live; break;                     /* init */
    case LDL_IDLE * 8 + LDL_ACQUIRING:
    case LDL_RELEASED * 8 + LDL_ACQUIRING:  ok = live; break;                      /* acquire */
    case LDL_ACQUIRING * 8 + LDL_HELD:                                             /* apply a grant */
        if (!(now >= start && now - start < window)) tr_fail(t, "a grant trusted outside its window (a late yes)");
        if (!(tok > t->last)) tr_fail(t, "a grant whose token did not rise");
        t->last = tok; ok = 1; break;
    case LDL_ACQUIRING * 8 + LDL_IDLE:      ok = 1; break;                         /* no, refused, timeout */
    case LDL_HELD * 8 + LDL_LOST:           ok = 1; break;                         /* loss */
    case LDL_HELD * 8 + LDL_RELEASING:
    case LDL_LOST * 8 + LDL_RELEASING:
    case LDL_LOST * 8 + LDL_RELEASED:
    case LDL_RELEASING * 8 + LDL_RELEASED:  ok = 1; break;                         /* release */
    case LDL_ACQUIRING * 8 + LDL_RELEASED:
    case LDL_HELD * 8 + LDL_RELEASED:
    case LDL_IDLE * 8 + LDL_RELEASED:
    case LDL_RELEASED * 8 + LDL_RELEASED:   ok = 1; break;                         /* cancel, cut, dispose */
    case LDL_LOST * 8 + LDL_ACQUIRING:      ok = competing; break;                 /* campaign */
    default:                                ok = 0;
    }
    if (!ok) tr_fail(t, "no step of the model makes this change");
    t->st = to;
}

#define LDL_TRACE_STEP(lock, from, to) \
    tr_step((lock), !(lock)->_dead, (from), (to), (lock)->_clock.now_ms((lock)->_clock.ctx), (lock)->_start, \
            (lock)->_window, (lock)->_token, LDL__EDGE_COMPETING(lock))
#endif
