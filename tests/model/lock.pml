/* lock.pml -- a model of lite_di_lock.h's lifecycle and its protocol, for Spin
   (issue 36; scope and abstractions: docs/decisions/0013-lifecycle-model.md).

   Parts:
     clients   N locks (Client processes): the six states of THE LIFECYCLE, one
               request slot (acquire / renew / release in flight, answered,
               applied), the cut (release/dispose while a store call is in
               flight: RELEASED at once, what the call grants goes back), hand-
               backs (refused grants, late grants, the cut's owed token),
               timeouts (ACQUIRING at start + TTL - DRIFT, RELEASING at start +
               TTL), the local deadline, on_lost, writes to the resource
     store     one key: holder, the lease's time left, the fence counter;
               restarts without the leases (no grant for TTL after one; the
               counter kept); a durable restart forgets nothing, so to the
               clients it is the requests in flight lost, which Net models
     resource  a mark: a write is accepted only with a token >= the mark
     time      discrete ticks of the store's clock. Times are kept as ages
               (ticks since a start read, capped where they stop mattering),
               so the state space is finite without a horizon: the check
               covers runs of any length. Each client clock follows the
               store's or falls behind, at most DRIFT ticks over any window
               the client relies on (the drift bound). Messages are delayed
               arbitrarily (any interleaving) and lost (any request, answer or
               hand-back may be dropped); clients pause (any interleaving).

   Every state change goes through SET(), which asserts the edge against the
   header's own table: edges.h is LDL__EDGES cut out of lite_di_lock.h by
   mk/model.mk, so the model and the code cannot disagree on an edge.

   Properties (assertions at the steps that can break them):
     P1 fences  the store's fences strictly rise per key
     P2 mark    the resource never accepts a write below its mark
     P3 trust   no two clients trust a lease at the same instant
     P4 back    a granted token is handed back at most once (lock side), and
                a hand-back never ends a successor's lease (store side)
     P5 lost    on_lost fires at most once per loss

   Mutants (-DMUT_...; each must produce a counterexample, make test-model):
     MUT_LATE_YES       a late grant is trusted (its window starts at the answer)  P3
     MUT_NO_DRIFT       the trust window is TTL, not TTL - DRIFT                   P3
     MUT_NO_WAIT        a store restarted without its leases grants at once        P3
     MUT_VOLATILE_FENCE the store does not persist the fence counter               P1
     MUT_MARK_LT        the resource takes token == mark - 1 (< for <=)           P2
     MUT_CUT_TWICE      the cut hands the held token back twice                    P4
     MUT_RELEASE_ANY    the store's release ignores the token                      P4
     MUT_LOST_TWICE     a loss does not cancel the renew in flight, and its no
                        fires on_lost again                                        P5
*/
#ifndef N
#define N 2                    /* clients: 2 or 3 */
#endif
#ifndef TTL
#define TTL 3
#endif
#ifndef DRIFT
#define DRIFT 1
#endif
#ifndef MAXF
#define MAXF 3                 /* fences the store may issue (bounds the state space) */
#endif
#ifndef RMAX
#define RMAX 1                 /* store restarts */
#endif

#ifdef MUT_NO_DRIFT
#define W TTL
#else
#define W (TTL - DRIFT)        /* the client trusts while its age < W */
#endif

/* the lock's states: the values of ldl_lock_state */
#define IDLE      0
#define ACQUIRING 1
#define HELD      2
#define RELEASING 3
#define RELEASED  4
#define LOST      5

/* THE EDGES: the header's table (generated edges.h) */
#include "edges.h"
#define EDGE_W_ALWAYS    1
#define EDGE_W_COMPETING 0     /* no campaign in the model */
#define EDGE_ROW(f, t, w) || (EF == f && ET == t && EDGE_W_##w)
#define EDGE_OK (0 LDL__EDGES(EDGE_ROW))

/* the request slot */
#define P_NONE     0
#define P_FLYING   1           /* sent; the store has not seen it */
#define P_ANSWERED 2           /* answered; the client has not applied it */
#define K_ACQ   1
#define K_RENEW 2
#define K_REL   3

typedef client {
    byte st;                   /* the lock's state */
    byte age;                  /* HELD: client ticks since the trusted start (capped at W) */
    byte lagw;                 /* HELD: ticks the client clock fell behind since then */
    byte rage;                 /* client ticks since the request's start read (capped at TTL) */
    byte lagr;                 /* ticks it fell behind since then */
    byte tok;                  /* the held token */
    byte owed;                 /* LOST: the token the next release hands back */
    byte rk; byte rp;          /* the slot: kind, phase */
    byte rtok;                 /* the token the request carries */
    bit  rcut;                 /* cut, cancelled or timed out: no longer the state's */
    bit  ayes; byte atok;      /* the answer */
    byte hb;                   /* a hand-back in flight (its token, 0 = none) */
    byte wr;                   /* a write in flight to the resource (its token) */
    bit  onl;                  /* ghost: on_lost fired for this loss (LOST only) */
}

client c[N];
byte s_holder;                 /* client index + 1; 0 = none */
byte s_tok;
byte s_left;                   /* store ticks the lease has left (0 = expired: no holder) */
byte s_fence;                  /* the fence counter */
byte s_wait;                   /* ticks before the next grant (after a restart without leases) */
byte s_restarts;
byte r_mark;                   /* the resource's mark */
byte g_issued;                 /* ghost: the highest fence ever issued */
byte g_back[MAXF + 1];         /* ghost: hand-backs per token */
byte EF; byte ET;              /* the edge SET() checks */
byte g_h0; byte g_t0; bit g_live;   /* store_release's scratch (reset after use) */

#define TRUSTS(i) (c[i].st == HELD && c[i].age < W)
/* P3: trust begins only where a grant or a renew is applied: checked there */
#if N == 2
#define MUTEX_OK (!(TRUSTS(0) && TRUSTS(1)))
#else
#define MUTEX_OK (!(TRUSTS(0) && TRUSTS(1)) && !(TRUSTS(0) && TRUSTS(2)) && !(TRUSTS(1) && TRUSTS(2)))
#endif

/* the request's age runs while a request is in flight or the state waits on one */
#define RACTIVE(i) (c[i].rp != P_NONE || c[i].st == ACQUIRING || c[i].st == RELEASING)

/* the one state setter: every change must be a row of LDL__EDGES */
#define SET(i, s) EF = c[i].st; ET = s; assert(EDGE_OK); c[i].st = s; EF = 0; ET = 0

/* what no longer matters is zeroed (fewer distinct states) */
#define CANON(i) \
    if :: c[i].st != LOST -> c[i].onl = 0 :: else -> skip fi; \
    if :: c[i].st != HELD -> c[i].age = 0; c[i].lagw = 0 :: else -> skip fi; \
    if :: !RACTIVE(i) -> c[i].rage = 0; c[i].lagr = 0 :: else -> skip fi

#define CLEAR_SLOT(i) c[i].rp = P_NONE; c[i].rk = 0; c[i].rtok = 0; c[i].rcut = 0; \
    c[i].ayes = 0; c[i].atok = 0

/* a new request in the slot: its start read now */
#define SUBMIT(i, k, t) c[i].rk = k; c[i].rp = P_FLYING; c[i].rcut = 0; \
    c[i].rtok = t; c[i].rage = 0; c[i].lagr = 0

#define BACK(t) g_back[t]++; assert(g_back[t] <= 1)              /* P4 */
/* hand a token back (fire and forget; one in flight at a time: a second one while
   the first is on its way is dropped, which the model allows anyway: a loss) */
#define HANDBACK(i, t) \
    BACK(t); \
    if \
    :: c[i].hb == 0 -> c[i].hb = t \
    :: else -> skip \
    fi

#ifdef MUT_LOST_TWICE
#define LOSE_CANCEL(i) skip
#else
#define LOSE_CANCEL(i) if :: c[i].rp != P_NONE -> c[i].rcut = 1 :: else -> skip fi
#endif

#define ON_LOST(i) assert(!c[i].onl); c[i].onl = 1               /* P5 */
/* THE loss: LOST first, the token owed, the renew in flight cancelled, on_lost once */
#define LOSE(i) \
    c[i].owed = c[i].tok; c[i].tok = 0; SET(i, LOST); \
    c[i].onl = 0; ON_LOST(i); \
    LOSE_CANCEL(i)

proctype Client(byte i) {
    do
    /* acquire: IDLE or RELEASED, the slot free */
    :: atomic { (c[i].st == IDLE || c[i].st == RELEASED) && c[i].rp == P_NONE ->
           SET(i, ACQUIRING); SUBMIT(i, K_ACQ, 0); CANON(i) }
    /* the heartbeat: HELD, the slot free */
    :: atomic { c[i].st == HELD && c[i].rp == P_NONE -> SUBMIT(i, K_RENEW, c[i].tok) }
    /* apply an answer */
    :: atomic { c[i].rp == P_ANSWERED ->
           if
           :: c[i].rcut ->                       /* not the state's: a grant goes back */
               if
               :: c[i].rk == K_ACQ && c[i].ayes -> HANDBACK(i, c[i].atok)
               :: else -> skip
               fi
           :: !c[i].rcut && c[i].rk == K_ACQ ->  /* state ACQUIRING */
               if
               :: c[i].ayes && c[i].rage < W ->
                   c[i].tok = c[i].atok;
                   c[i].age = c[i].rage; c[i].lagw = c[i].lagr; SET(i, HELD);
                   assert(MUTEX_OK)                      /* P3 */
#ifdef MUT_LATE_YES
               :: c[i].ayes && c[i].rage >= W ->
                   c[i].tok = c[i].atok;
                   c[i].age = 0; c[i].lagw = 0; SET(i, HELD);
                   assert(MUTEX_OK)
#else
               :: c[i].ayes && c[i].rage >= W ->
                   SET(i, IDLE); HANDBACK(i, c[i].atok)   /* refused: late */
#endif
               :: !c[i].ayes -> SET(i, IDLE)
               fi
           :: !c[i].rcut && c[i].rk == K_RENEW && c[i].st != HELD ->   /* only a mutant: */
#ifdef MUT_LOST_TWICE
               if :: !c[i].ayes && c[i].st == LOST -> ON_LOST(i) :: else -> skip fi
#else
               skip                               /* a loss cancels its renew */
#endif
           :: !c[i].rcut && c[i].rk == K_RENEW && c[i].st == HELD ->
               if
               :: c[i].ayes && c[i].rage < W ->
                   c[i].age = c[i].rage; c[i].lagw = c[i].lagr;
                   assert(MUTEX_OK)                      /* P3 */
               :: else -> LOSE(i)                /* a no, or a late yes */
               fi
           :: !c[i].rcut && c[i].rk == K_REL ->  /* state RELEASING */
               SET(i, RELEASED)
           fi;
           CLEAR_SLOT(i); CANON(i) }
    /* the local deadline (poll, tick, valid_ms) */
    :: atomic { c[i].st == HELD && c[i].age >= W -> LOSE(i); CANON(i) }
    /* release */
    :: atomic { c[i].st == HELD && (c[i].rp == P_NONE || c[i].rk == K_RENEW) ->
           BACK(c[i].tok); SUBMIT(i, K_REL, c[i].tok); c[i].tok = 0;   /* a renew in flight: dropped */
           SET(i, RELEASING); CANON(i) }
    :: atomic { c[i].st == LOST && c[i].owed != 0 && (c[i].rp == P_NONE || c[i].rk == K_RENEW) ->
           BACK(c[i].owed); SUBMIT(i, K_REL, c[i].owed); c[i].owed = 0;
           SET(i, RELEASING); CANON(i) }
    :: atomic { c[i].st == LOST && c[i].owed == 0 -> SET(i, RELEASED); CANON(i) }
    :: atomic { c[i].st == ACQUIRING -> SET(i, RELEASED);    /* the acquire is cancelled */
           if :: c[i].rp != P_NONE -> c[i].rcut = 1 :: else -> skip fi; CANON(i) }
    /* the cut: release/dispose while this lock's store call is in flight */
    :: atomic { c[i].rp == P_FLYING && !c[i].rcut &&
                (c[i].st == ACQUIRING || c[i].st == HELD || c[i].st == RELEASING) ->
           if
           :: c[i].st == HELD -> HANDBACK(i, c[i].tok);   /* settle: once */
#ifdef MUT_CUT_TWICE
               HANDBACK(i, c[i].tok);
#endif
               c[i].tok = 0
           :: else -> skip
           fi;
           SET(i, RELEASED); c[i].rcut = 1; CANON(i) }
    /* the ACQUIRING and RELEASING timeouts */
    :: atomic { c[i].st == ACQUIRING && c[i].rage >= W ->
           SET(i, IDLE); if :: c[i].rp != P_NONE -> c[i].rcut = 1 :: else -> skip fi; CANON(i) }
    :: atomic { c[i].st == RELEASING && c[i].rage >= TTL ->
           SET(i, RELEASED); if :: c[i].rp != P_NONE -> c[i].rcut = 1 :: else -> skip fi; CANON(i) }
#ifndef NOWRITE
    /* protected work: a write with the fence, only while the lease is trusted */
    :: atomic { TRUSTS(i) && c[i].wr == 0 -> c[i].wr = c[i].tok }
#endif
    od
}

/* release(key, t) from client i: only the holder's own token frees it */
inline store_release(i, t) {
    g_h0 = s_holder; g_t0 = s_tok; g_live = (s_holder != 0);
#ifdef MUT_RELEASE_ANY
    s_holder = 0;
#else
    if
    :: s_holder == i + 1 && s_tok == t -> s_holder = 0
    :: else -> skip
    fi;
#endif
    assert(!(g_live && g_t0 != t && s_holder != g_h0));            /* P4: no successor's lease ends */
    if :: s_holder == 0 -> s_tok = 0; s_left = 0 :: else -> skip fi;
    g_h0 = 0; g_t0 = 0; g_live = 0
}

/* the store answers client i's request */
inline store_serve(i) {
    c[i].rp = P_ANSWERED; c[i].ayes = 0; c[i].atok = 0;
    if
    :: c[i].rk == K_ACQ ->
        if
        :: s_holder == 0 && s_wait == 0 && s_fence < MAXF ->
            s_fence++;
            assert(s_fence > g_issued);                             /* P1 */
            g_issued = s_fence;
            s_holder = i + 1; s_tok = s_fence; s_left = TTL;
            c[i].ayes = 1; c[i].atok = s_fence
        :: else -> skip
        fi
    :: c[i].rk == K_RENEW ->
        if
        :: s_holder == i + 1 && s_tok == c[i].rtok -> s_left = TTL; c[i].ayes = 1
        :: else -> skip
        fi
    :: c[i].rk == K_REL -> store_release(i, c[i].rtok); c[i].ayes = (s_holder != i + 1)
    fi
}

/* the network, the store and the resource as client i sees them */
proctype Net(byte i) {
    do
    /* the store serves the request, or it is lost on the way there or back */
    :: atomic { c[i].rp == P_FLYING -> store_serve(i) }
    :: atomic { c[i].rp != P_NONE -> CLEAR_SLOT(i); CANON(i) }
    /* a hand-back arrives, or is lost */
    :: atomic { c[i].hb != 0 -> store_release(i, c[i].hb); c[i].hb = 0 }
    :: atomic { c[i].hb != 0 -> c[i].hb = 0 }
    /* the resource takes a write (or refuses it) */
    :: atomic { c[i].wr != 0 ->
           if
#ifdef MUT_MARK_LT
           :: c[i].wr + 1 >= r_mark ->
#else
           :: c[i].wr >= r_mark ->
#endif
               assert(c[i].wr >= r_mark);                            /* P2 */
               r_mark = c[i].wr
           :: else -> skip
           fi;
           c[i].wr = 0 }
    od
}

/* one tick for client i: its clock follows the store's, or falls behind within
   the drift bound over every window it relies on */
inline client_tick(i) {
    if
    :: if :: c[i].st == HELD && c[i].age < W -> c[i].age++ :: else -> skip fi;
       if :: RACTIVE(i) && c[i].rage < TTL -> c[i].rage++ :: else -> skip fi
    :: (c[i].st == HELD || RACTIVE(i)) &&
       (c[i].st != HELD || c[i].lagw < DRIFT) && (!RACTIVE(i) || c[i].lagr < DRIFT) ->
       if :: c[i].st == HELD -> c[i].lagw++ :: else -> skip fi;
       if :: RACTIVE(i) -> c[i].lagr++ :: else -> skip fi
    fi
}

/* time and store restarts */
proctype Env() {
    do
    :: atomic {
           if :: s_left > 0 -> s_left-- :: else -> skip fi;
           if :: s_left == 0 -> s_holder = 0; s_tok = 0 :: else -> skip fi;   /* expired */
           if :: s_wait > 0 -> s_wait-- :: else -> skip fi;
           client_tick(0); client_tick(1)
#if N > 2
           ; client_tick(2)
#endif
       }
    /* a store restart without its leases */
    :: atomic { s_restarts < RMAX -> s_restarts++; s_holder = 0; s_tok = 0; s_left = 0;
#ifdef MUT_VOLATILE_FENCE
           s_fence = 0;
#endif
#ifdef MUT_NO_WAIT
           s_wait = 0
#else
           s_wait = TTL
#endif
       }
    od
}

init {
    atomic {
        run Client(0); run Net(0); run Client(1); run Net(1);
#if N > 2
        run Client(2); run Net(2);
#endif
        run Env()
    }
}
