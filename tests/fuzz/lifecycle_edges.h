/* lifecycle_edges.h - the fuzzers' transition oracle (issue 25): every state
   change the lock makes goes through ldl__set_state, which runs
   LDL_ON_TRANSITION(lock, from, to) first; this header defines that hook
   to check that each one is an edge of THE
   LIFECYCLE diagram in the header's top comment, and aborts otherwise.
   Include it after the declarations and before the implementation.
   The edges, from -> to (the diagram's arrows, by state):
     IDLE       -> ACQUIRING (acquire, or a scheduled attempt), RELEASED (dispose, cut)
     ACQUIRING  -> HELD (grant), IDLE (no grant, refused, ACQUIRING timeout),
                   RELEASED (release, dispose, cut)
     HELD       -> LOST (a loss), RELEASING (release), RELEASED (dispose, cut,
                   a release answered inside its call)
     LOST       -> ACQUIRING (only while a campaign competes), RELEASING
                   (release of the owed lease), RELEASED (nothing owed, dispose, cut)
     RELEASING  -> RELEASED (the answer, the RELEASING timeout, dispose, cut)
     RELEASED   -> ACQUIRING (acquire), IDLE (init), RELEASED (dispose again) */
#ifndef LDL_TEST_LIFECYCLE_EDGES_H
#define LDL_TEST_LIFECYCLE_EDGES_H
#include <stdio.h>
#include <stdlib.h>

static unsigned long ldl_edges_seen[6][6];      /* how often each edge was taken */

static void ldl_edge_bad(int from, int to) {
    fprintf(stderr, "lifecycle oracle: INVARIANT VIOLATED: transition %d -> %d is not an edge of "
            "THE LIFECYCLE\n", from, to);
    abort();
}

/* 1 if from -> to is an edge; `competing`: the election competes (LOST -> ACQUIRING) */
static int ldl_edge_ok(int from, int to, int competing) {
    switch (from) {
    case 0: return to == 1 || to == 4;                       /* IDLE */
    case 1: return to == 2 || to == 0 || to == 4;            /* ACQUIRING */
    case 2: return to == 5 || to == 3 || to == 4;            /* HELD */
    case 5: return (to == 1 && competing) || to == 3 || to == 4;   /* LOST */
    case 3: return to == 4;                                  /* RELEASING */
    case 4: return to == 1 || to == 0 || to == 4;            /* RELEASED */
    default: return 0;
    }
}

#ifdef LDL_NO_ELECTION
#define LDL_EDGE_COMPETING(lock) 0
#else
#define LDL_EDGE_COMPETING(lock) ((lock)->_el.competing)
#endif
#define LDL_ON_TRANSITION(lock, from, to) do { \
    int f_ = (from), t_ = (to); \
    if (f_ < 0 || f_ > 5 || t_ < 0 || t_ > 5 || !ldl_edge_ok(f_, t_, LDL_EDGE_COMPETING(lock))) \
        ldl_edge_bad(f_, t_); \
    ldl_edges_seen[f_][t_]++; } while (0)
#endif
