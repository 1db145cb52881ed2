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
extern int t_failed_checks;     /* checks failed in the current test */
void t_fail(const char *file, int line, const char *expr);
void t_run(const char *name, void (*fn)(void));

#define CHECK(c) do { if (!(c)) t_fail(__FILE__, __LINE__, #c); } while (0)
#define CHECK_EQ(a, b) do { long long a_ = (long long)(a), b_ = (long long)(b); \
    if (a_ != b_) { char m_[256]; snprintf(m_, sizeof m_, "%s == %s (%lld != %lld)", #a, #b, a_, b_); \
    t_fail(__FILE__, __LINE__, m_); } } while (0)
#define CHECK_STR(a, b) do { const char *a_ = (a), *b_ = (b); \
    if (!a_ || !b_ || strcmp(a_, b_) != 0) { char m_[512]; snprintf(m_, sizeof m_, "%s == \"%s\" (got \"%s\")", #a, b_ ? b_ : "(null)", a_ ? a_ : "(null)"); \
    t_fail(__FILE__, __LINE__, m_); } } while (0)
#define RUN(fn) t_run(#fn, fn)

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

/* a desc with a fake clock, scripted store and fake container */
void desc_for(ldl_lock_desc *d, fake_container *fc, script_store *s, fake_clock *c, const char *key, uint32_t ttl);
extern int lost_calls;       /* on_lost counter */
extern int lost_last_reason;
void count_lost(void *user, int reason);

/* suites */
void suite_options(void);
void suite_whitelist(void);
void suite_lifecycle(void);
void suite_heartbeat(void);
void suite_run(void);
void suite_memstore(void);
void suite_container(void);
void suite_reentry(void);
void suite_misc(void);
void suite_async(void);     /* tests/core/async.c: the non-blocking contract */
void suite_gaps(void);      /* tests/core/gaps.c: classes an outside mutation run found unpinned */

#endif
