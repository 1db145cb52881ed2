/* harness.h - the core suite's tiny runner and its fakes.
   Every file in tests/core includes this; main.c lists the suites.
   Fakes: a settable clock, one-shot timers fired by hand, a scripted
   adversarial store that counts and logs every call, and a container whose
   hooks can be told to fail. An event log records the order of calls. */
#ifndef LDL_TEST_HARNESS_H
#define LDL_TEST_HARNESS_H

#include "lite_di_lock.h"
#include <stdio.h>
#include <string.h>
#include <limits.h>

/* ------------------------------------------------------------ runner */
/* tests/check.h gives CHECK, CHECK_EQ, CHECK_STR, CHECK_MSG; RUN goes
   through t_run, which resets the fakes' shared state around each test. */
#define RUN(fn) t_run(#fn, fn)
#define CHECK_SHARED
#include "tests/check.h"

void t_run(const char *name, void (*fn)(void));
#define t_failed_checks (chk.test_failed_checks)   /* checks failed in the current test */

/* ------------------------------------------------------------ the two passes
   main.c runs every suite twice: the "sync" pass, then the "async" pass. In
   the async pass every lock the fixtures make (fix_setup, desc_for,
   desc_use_script, desc_use_memstore) goes through a non-blocking view that
   answers inside each submit: ldl_memstore_async_store for a MemoryStore,
   script_async_of for the scripted store. SPEC: "every call behaves exactly
   as with the synchronous MemoryStore", so every test must pass in both,
   except what the SPEC itself rules out for a non-blocking store, marked so
   that `grep -n SYNC_ONLY tests/core` lists every exception:
     SYNC_ONLY("why");          first line of a test: skipped (and counted) in
                                the async pass
     if (SYNC_ONLY_MODE(tm)) continue;   in a loop over tm = 0 (manual mode),
                                1 (timer mode): timer mode is skipped (and
                                counted) in the async pass
     RUN_RC(rc)                 what ldl_lock_run answers: rc in the sync pass,
                                LDL_EUNSUPPORTED in the async pass (SPEC: run
                                with a non-blocking store answers it in every
                                situation; only a NULL lock comes first) */
extern int t_async;             /* 0: the sync pass, 1: the async pass */
void t_skip(const char *why);
int  t_skip_mode(int timer_mode);
#define SYNC_ONLY(why) do { if (t_async) { t_skip(why); return; } } while (0)
#define SYNC_ONLY_MODE(tm) t_skip_mode(tm)
#define RUN_RC(rc) (t_async ? LDL_EUNSUPPORTED : (rc))

/* ------------------------------------------------------------ event log */
void ev(const char *what);           /* append "what;" */
void ev_reset(void);
const char *ev_log(void);

/* ------------------------------------------------------------ fake clock */
typedef struct fake_clock { uint64_t now; } fake_clock;
uint64_t fake_now(void *ctx);
ldl_clock fake_clock_of(fake_clock *c);

/* ------------------------------------------------------------ fake timers */
#define FT_MAX 8
typedef struct fake_timers {
    int set_calls, clear_calls, fail_next;   /* fail_next: next set answers 0 */
    uint32_t last_delay;
    uintptr_t next;
    struct { uintptr_t h; void (*fire)(void *); void *arg; int live; } t[FT_MAX];
} fake_timers;
ldl_timers fake_timers_of(fake_timers *ft);
int fake_timers_armed(const fake_timers *ft);     /* live timers */
int fake_timers_fire(fake_timers *ft);            /* fire every live timer once; count */

/* ------------------------------------------------------------ scripted store */
typedef struct script_store script_store;
typedef void (*store_hook)(script_store *s);
struct script_store {
    int acquire_rc;          /* what acquire answers */
    int write_token;         /* 1: write acquire_token through token_out */
    int64_t acquire_token;
    int auto_token;          /* 1: acquire_token++ after each grant written */
    int renew_rc, release_rc;
    int acquire_calls, renew_calls, release_calls;
    int64_t released[32];    /* tokens passed to release, in order */
    int64_t renewed[32];
    char last_key[LDL_KEY_MAX];
    uint32_t last_ttl;
    store_hook on_acquire, on_renew, on_release;   /* run inside the call */
    ldl_lock *lock;          /* for re-entry from hooks */
    int reentry_rc;          /* what a hook's re-entrant call answered */
    int hook_once;           /* hooks fire once, then clear themselves */
    fake_clock *clock;       /* optional: advance by call_ms inside each call */
    uint64_t call_ms;
};
void script_init(script_store *s);
ldl_store script_of(script_store *s);
/* the non-blocking view of the scripted store: each submit runs the scripted
   synchronous method (hooks re-enter from inside the submit, as in sync) and
   answers inside the call with ldl_op_complete; a cancel that arrives while
   that method runs (a re-entrant dispose) makes it hand back a granted token
   itself, as the SPEC's cancel rule asks */
#ifndef LDL_NO_ASYNC
ldl_async_store script_async_of(script_store *s);
#endif

/* ------------------------------------------------------------ fake container */
typedef struct fake_container {
    ldl_scope root, pool[4];
    int fail_scope, fail_value_at;   /* fail_value_at: the Nth value() call fails (1-based) */
    int shutdown_rc;                 /* what shutdown answers (after doing it) */
    int scope_calls, value_calls, shutdown_calls;
    int no_hooks;
} fake_container;
ldl_container fake_container_of(fake_container *fc);

/* a lock on the fakes: ttl 300 (heartbeat 100, drift 5, trusted window 295),
   the clock at `now`, timer mode when `timers`; the store can re-enter it */
typedef struct fix {
    ldl_lock l; ldl_lock_desc d; fake_container fc; script_store s; fake_clock c; fake_timers ft;
} fix;
void fix_setup(fix *f, const char *key, int timers, uint64_t now);
int nop_body(void *scope, void *user);     /* a body that does nothing and answers 0 */

/* a desc with a fake clock, scripted store and fake container (the store goes
   through desc_use_script; s NULL: no store, i.e. the built-in one) */
void desc_for(ldl_lock_desc *d, fake_container *fc, script_store *s, fake_clock *c, const char *key, uint32_t ttl);
/* point d at a store the way the current pass wants: d->store in the sync
   pass, d->async_store (the non-blocking view) in the async pass; the other
   field is cleared. The store structs live in a rotating buffer (init copies
   them). */
void desc_use_script(ldl_lock_desc *d, script_store *s);
void desc_use_memstore(ldl_lock_desc *d, ldl_memstore *ms);
extern int lost_calls;       /* on_lost counter */
extern int lost_last_reason;
void count_lost(void *user, int reason);

/* suites */
/* ------------------------------------------------------------ a MemoryStore on a fake clock
   (memstore.c, options.c): 64 caller slots; gacq/gren/grel call its store
   with ttl 100; gslot_of is white-box (the slot holding key k, or -1) */
typedef struct gms {
    ldl_memstore ms; ldl_memstore_slot slots[64]; fake_clock c; ldl_store st;
} gms;
void gms_init(gms *g, size_t n);
int  gacq(gms *g, const char *k, int64_t *tok);
int  gren(gms *g, const char *k, int64_t tok);
int  grel(gms *g, const char *k, int64_t tok);
int  gslot_of(const gms *g, const char *k);

void suite_options(void);
void suite_whitelist(void);
void suite_lifecycle(void);
void suite_heartbeat(void);
void suite_run(void);
void suite_memstore(void);
void suite_container(void);
void suite_reentry(void);
void suite_misc(void);
/* tests/core/async_*.c: the non-blocking contract, by behaviour (none
   with LDL_NO_ASYNC) */
void suite_async_acquire(void);
void suite_async_renew(void);
void suite_async_release(void);
void suite_async_dispose(void);
void suite_async_slot(void);
void suite_async_reentry(void);
void suite_async_memstore(void);
void suite_async_walk(void);
void suite_election(void);  /* tests/core/election.c: retry, ride-out, campaign, events, owner */

#endif
