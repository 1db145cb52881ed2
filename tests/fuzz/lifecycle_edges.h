/* lifecycle_edges.h - the fuzzers' transition oracle (issue 25; issue 36: the
   table is the header's). Every state change the lock makes goes through
   ldl__set_state, which runs LDL_ON_TRANSITION(lock, from, to) first; this
   header defines that hook to check each one against THE EDGES, the header's
   LDL__EDGES table beside LDL__GUARD (ldl__edge_ok reads it; LOST -> ACQUIRING
   only while the election competes), to count each edge taken, and to abort
   with the two state names otherwise. It restates no edge: the header's
   table is the one definition, and the diagram in the header's top comment
   (THE LIFECYCLE) its one prose reading.
   Include it after the declarations and before the implementation (the hook
   is a macro: it reads ldl__edge_ok and LDL__EDGE_COMPETING where the setter
   expands it). */
#ifndef LDL_TEST_LIFECYCLE_EDGES_H
#define LDL_TEST_LIFECYCLE_EDGES_H
#include <stdio.h>
#include <stdlib.h>

static unsigned long ldl_edges_seen[6][6];      /* how often each edge was taken */

static void ldl_edge_bad(int from, int to) {
    static const char *const n[6] = { "IDLE", "ACQUIRING", "HELD", "RELEASING", "RELEASED", "LOST" };
    fprintf(stderr, "lifecycle oracle: INVARIANT VIOLATED: transition %d -> %d (%s -> %s) is not an "
            "edge of THE EDGES (LDL__EDGES in lite_di_lock.h)\n", from, to,
            from >= 0 && from < 6 ? n[from] : "?", to >= 0 && to < 6 ? n[to] : "?");
    abort();
}

/* LDL_MODEL_TRACE: also record each step and validate the trace against the
   model (tests/model/trace_check.h; make test-model) */
#ifdef LDL_MODEL_TRACE
#include "../model/trace_check.h"
#else
#define LDL_TRACE_STEP(lock, from, to) ((void)0)
#endif

#define LDL_ON_TRANSITION(lock, from, to) do { \
    int f_ = (from), t_ = (to); \
    if (!ldl__edge_ok(f_, t_, LDL__EDGE_COMPETING(lock))) ldl_edge_bad(f_, t_); \
    LDL_TRACE_STEP(lock, f_, t_); \
    ldl_edges_seen[f_][t_]++; } while (0)
#endif
