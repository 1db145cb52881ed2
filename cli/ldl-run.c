/* ldl-run -- run a command under a fenced cluster lease (issue 16).

       ldl-run [options] KEY [--] COMMAND [ARGS...]

   Takes the lease KEY in a store (Redis, PostgreSQL, or an in-process
   MemoryStore), runs COMMAND in its own process group with LDL_KEY and
   LDL_FENCE in its environment, renews the lease from its own loop while the
   command runs, and releases it when the command (and every process left in
   its group, and every descendant that left the group) is gone. When no
   renew has succeeded and the lease's time left reaches --grace, the whole
   job gets SIGTERM, and SIGKILL at the lease's local deadline, before the
   store can free the key; ldl-run then exits with its own code.
   `ldl-run --help` lists the options and exit codes; decision record
   docs/decisions/0701-ldl-run.md says why it is built this way; 0702 the
   loss schedule, escalation and escapes, 0703 riding out a store restart
   and the bounded waits.

   `ldl-run --status [store] KEY` says who holds KEY (owner, fence, ms left)
   without taking it.

   Built on lite_di_lock.h and the non-blocking views of its adapters
   (ldl_redis_async, ldl_pg_async, ldl_memstore_async_store): ONE loop waits in
   poll() on the store's socket and a self-pipe fed by the signal handlers
   (SIGCHLD included), for at most ldl_lock_due_in_ms(). Nothing in the loop
   blocks on the store. POSIX; Linux adds PR_SET_CHILD_SUBREAPER, a /proc walk
   for the descendants that left the group, and PR_SET_PDEATHSIG. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#define LDL_REDIS_IMPLEMENTATION
#include "adapters/lite_di_lock_redis.h"
#define LDL_PG_IMPLEMENTATION
#include "adapters/lite_di_lock_pg.h"
#define LDL_SQLITE_IMPLEMENTATION
#include "adapters/lite_di_lock_sqlite.h"
#define LDL_ETCD_IMPLEMENTATION
#include "adapters/lite_di_lock_etcd.h"
#include "adapters/lite_di_lock_view.h"   /* one interface for every store (decision 0713) */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#define RUN_VERSION LDL_VERSION /* the header's version: one source */

/* exit codes (also in --help and the README section) */
#define EXIT_NOT_ACQUIRED 1     /* default of -E */
#define EXIT_USAGE        64    /* bad option or argument (sysexits EX_USAGE) */
#define EXIT_STORE        69    /* store unreachable or failing while acquiring (EX_UNAVAILABLE) */
#define EXIT_OSERR        71    /* fork, pipe, poll failed (EX_OSERR) */
#define EXIT_LOST         75    /* the lease was lost while the command ran (EX_TEMPFAIL) */
#define EXIT_DONE         79    /* --once-per: this period's run already happened (default of
                                   --done-exit-code; not a sysexits code, not 128+N) */
#define EXIT_NOEXEC       126   /* the command could not be executed */
#define EXIT_NOTFOUND     127   /* the command was not found */

#define RETRY_BASE_MS 100u      /* the library's retry schedule (full jitter): the n-th */
#define RETRY_CAP_MS  1000u     /* retry waits 1..min(1000, 100 * 2^n) ms */
#define RECONNECT_MS  100u      /* at most one store reconnect per 100 ms */
#define RIDE_OUT_MS   100u      /* a renew that met a store error is tried again after this */
#define GROUP_CHECK_MS 50       /* while only grandchildren are left */
#define KILL_LEAD_MS  100u      /* drift at least this (if it fits): the time for a SIGKILL
                                   sent at the local deadline to land before the store frees KEY */

#define CLI_NAME "ldl-run"
#define CLI_WATCHDOG_EXIT EXIT_STORE
#include "cli/ldl_cli.h"   /* esc, say, usage_error, parse_*, the watchdog */

/* "ldl-run: SIDE error: " (SIDE "store", "system"; NULL: no side) and fmt with a
   and b escaped, as say() does -- except that b (a server's text) keeps its lines:
   the first goes into fmt, each further one follows on its own line
   "ldl-run: | LINE", escaped per line, so libpq's LINE/caret pairs stay aligned */
static void sayx(const char *side, const char *fmt, const char *a, const char *b) {
    char ea[1024], eb[1024];
    const char *nl;
    size_t n;
    if (!b) b = "";
    while (*b == '\n') b++;
    nl = strchr(b, '\n');
    n = nl ? (size_t)(nl - b) : strlen(b);
    fprintf(stderr, CLI_NAME ": ");
    if (side) fprintf(stderr, "%s error: ", side);
    fprintf(stderr, fmt, esc(a, ea, sizeof ea), escn(b, n, eb, sizeof eb));
    fputc('\n', stderr);
    while (nl) {
        b = nl + 1;
        nl = strchr(b, '\n');
        n = nl ? (size_t)(nl - b) : strlen(b);
        if (!nl && n == 0) break;
        fprintf(stderr, CLI_NAME ": | %s\n", escn(b, n, eb, sizeof eb));
    }
}
#define STORE_ERR(fmt, a, b) sayx("store", fmt, a, b)
#define SYS_ERR(fmt, a, b)   sayx("system", fmt, a, b)

static const char usage_text[] =
"usage: ldl-run [options] KEY [--] COMMAND [ARGS...]\n"
"\n"
"Run COMMAND while holding the lease KEY in a shared store, so that one COMMAND\n"
"at a time runs cluster-wide (flock(1) for several hosts). COMMAND runs in its\n"
"own process group with LDL_KEY=KEY and LDL_FENCE=<fencing token> in its\n"
"environment; the token is >= 1 and rises with every grant of KEY: pass it to\n"
"the resources the command writes so they can refuse a stale holder.\n"
"\n"
"Store (exactly one):\n"
"  --redis HOST:PORT      Redis (numeric address or a name resolved once at start)\n"
"  --redis /PATH          Redis over a unix socket (any argument holding a '/')\n"
"  --prefix NAME          Redis key prefix (default ldl): keys {NAME:KEY}:lease/:fence\n"
"  --pg CONNINFO          PostgreSQL (libpq conninfo or URI; put connect_timeout in it)\n"
"  --table NAME           PostgreSQL or SQLite lease table (default ldl_lease, created\n"
"                         if missing)\n"
"  --sqlite PATH          a SQLite file shared by the processes of this host (created\n"
"                         if missing; WAL, synchronous=FULL; docs/sqlite.md)\n"
"  --etcd ENDPOINTS       etcd v3 members through the JSON gateway, comma-separated\n"
"                         http://HOST:PORT (numeric); key = PREFIX + KEY, --prefix\n"
"                         default ldl/ (docs/etcd.md)\n"
"  --memory               an in-process MemoryStore: every run is granted at once with\n"
"                         fence 1; nothing is shared between processes (for trying out)\n"
"\n"
"Lease:\n"
"  --ttl MS               lease time to live in ms (default 30000)\n"
"  --heartbeat MS         renew period in ms (default 0 = TTL/3; HEARTBEAT*2 <= TTL)\n"
"                         (validated by the library: a bad pair exits 64 and says why)\n"
"\n"
"Waiting (as flock(1)):\n"
"  (default)              wait until KEY is free, however long it takes\n"
"  -n, --nonblock         one attempt: if KEY is held, exit at once\n"
"  -w, --wait SECONDS     wait at most SECONDS (decimals allowed). Waiting is the\n"
"                         library's retry schedule: exponential backoff with full\n"
"                         jitter, the n-th retry after 1..min(1000, 100*2^n) ms\n"
"  -E, --conflict-exit-code CODE   exit code when KEY was not acquired (default 1)\n"
"\n"
"Identity:\n"
"  --owner NAME           stored with the lease (default ldl-run@HOST:PID); 1..63\n"
"                         bytes of printable ASCII. Not stored in a PostgreSQL table\n"
"                         created before v0.2 (docs/postgres.md says how to add it)\n"
"  --status               no COMMAND: print who holds KEY (owner, fence, ms left on\n"
"                         the store's clock) without taking it; exit 0 held, 1 free\n"
"\n"
"Running:\n"
"  --grace SECONDS        time between SIGTERM and SIGKILL (default 10; decimals\n"
"                         allowed). Must be < TTL - heartbeat - drift: a --grace that\n"
"                         does not fit exits 64 and says why; the default is cut to\n"
"                         half of that when it does not fit (-v says so)\n"
"  --store-timeout SECONDS  bound on every store wait with no deadline of its own:\n"
"                         the connect, each acquire attempt (-n included), the release\n"
"                         at the end, --status (default 2; decimals allowed)\n"
"  -v, --verbose          say on stderr when KEY is acquired, renewed, released\n"
"  -q, --quiet            say nothing when KEY is held elsewhere or the period's run is\n"
"                         done (the exit status still says it)\n"
"  -h, --help             this text;  -V, --version  the version\n";

/* C99 promises 4095 bytes per literal: three strings */
static const char usage_sched[] =
"\n"
"Scheduled jobs (cron on several hosts; decision 0710):\n"
"  --min-hold SECONDS     keep KEY, renewed, until at least SECONDS after the grant,\n"
"                         also when COMMAND ends sooner: a host whose schedule fires\n"
"                         inside that window is not acquired. ldl-run exits when the\n"
"                         hold ends (a signal ends the hold at once and releases)\n"
"  --detach-hold          exit with COMMAND's status as soon as it is done; a process\n"
"                         in the background (no terminal, output to /dev/null) keeps\n"
"                         the hold. For cron; not under systemd (it ends the unit's\n"
"                         processes when ldl-run exits, and with them the hold)\n"
"  --once-per SECONDS     a successful run (exit 0) records, fenced and under the lease,\n"
"                         that the run of this period is done; a later run in the same\n"
"                         period, on any host, exits --done-exit-code without running\n"
"                         COMMAND. Periods are floor(UTC seconds / SECONDS): 86400 =\n"
"                         UTC days. Redis, PostgreSQL, SQLite (not etcd, not --memory)\n"
"  --done-exit-code CODE  exit code when the period's run is done (default 79)\n"
"  --metrics FILE         write FILE (Prometheus text format, for node_exporter's\n"
"                         textfile collector) at the end: start, success, duration,\n"
"                         wait for KEY, fence, renew failures, exit status, by key.\n"
"                         Written to FILE.tmp.PID, then renamed over FILE\n";

static const char usage_more[] =
"\n"
"Signals: HUP, INT, QUIT, TERM, USR1 and USR2 sent to ldl-run are forwarded to\n"
"the job (COMMAND's process group and every descendant that left it); ldl-run\n"
"keeps renewing until the job is gone, then releases KEY. After HUP, INT, QUIT or\n"
"TERM a job still alive --grace later gets SIGKILL (USR1 and USR2 only pass on).\n"
"Processes left after COMMAND exits get SIGTERM, then SIGKILL after --grace,\n"
"before KEY is released: no part of the job outlives the lease. ldl-run is the\n"
"job's subreaper. If ldl-run is SIGKILLed, COMMAND gets SIGKILL too\n"
"(PR_SET_PDEATHSIG, Linux), but its own children run on unfenced.\n"
"\n"
"Loss: when no renew has succeeded and the lease's time left reaches --grace, the\n"
"job gets SIGTERM, and SIGKILL at the lease's local deadline (TTL - drift after\n"
"the last renew was sent). When the store answers \"not yours\" earlier, SIGTERM\n"
"comes at once and SIGKILL after --grace or at the deadline, whichever is first.\n"
"The store frees KEY at TTL after it saw that renew, so a job that dies on SIGKILL\n"
"never overlaps the next holder: no window is left. Not covered: a process in\n"
"uninterruptible sleep, work the job handed to a process that is not its\n"
"descendant (a daemon, at, systemd-run, another host), this host paused or its\n"
"clock slower than the store's by more than the drift (TTL/100 + 2 ms, at least\n"
"100 ms when it fits), and writes already on their way to a resource (LDL_FENCE\n"
"is what lets the resource refuse those).\n"
"A store error while COMMAND runs (a restart, a dropped link) is ridden out: the\n"
"renew is tried again every 100 ms on a new connection: an outage shorter than\n"
"TTL - drift - heartbeat - grace (9.7 s with the defaults) never ends the job,\n"
"if the store kept the lease (Redis: appendonly yes, appendfsync always).\n"
"\n"
"Exit status:\n"
"  COMMAND's own exit status; 128+N when it was killed by signal N\n"
"  1     KEY not acquired (-n, or -w expired; change it with -E); --status: KEY free\n"
"  64    usage: bad option, key, TTL, heartbeat or grace\n"
"  69    store error: unreachable, failing, or silent while acquiring KEY\n"
"  71    system error (fork, pipe, poll)\n"
"  75    the lease was lost (or its time left reached --grace with no renew)\n"
"        while COMMAND ran: the job was terminated (or, if it had already\n"
"        exited, its work may not have been exclusive)\n"
"  79    --once-per: this period's run is already done (change it with\n"
"        --done-exit-code); COMMAND did not run\n"
"  126   COMMAND could not be executed;  127  COMMAND was not found\n"
"Every failure of ldl-run itself prints one line \"ldl-run: usage: ...\",\n"
"\"ldl-run: store error: ...\" or \"ldl-run: system error: ...\" on stderr (a\n"
"server's own multi-line text follows on lines \"ldl-run: | ...\"); COMMAND's\n"
"own codes come with no such line.\n"
"  128+N signal N ended the wait for KEY or the connect (nothing ran)\n";

/* ------------------------------------------------------------------ clock */
static uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int verbose;

/* ------------------------------------------------------------------ signals */
static int sig_pipe[2] = { -1, -1 };
static const int fwd_sigs[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2 };
#define NFWD ((int)(sizeof fwd_sigs / sizeof fwd_sigs[0]))

/* 1 while the store is opened (connect, getaddrinfo, the adapter's synchronous
   init): nothing is held yet, so a signal ends the tool at once (128+N) rather than
   wait for a call that may never return */
static volatile sig_atomic_t in_setup;

static void on_signal(int sig) {
    int saved = errno;
    unsigned char b = (unsigned char)sig;
    ssize_t n;
    if (in_setup) _exit(128 + sig);
    n = write(sig_pipe[1], &b, 1);           /* full pipe: the byte is dropped; the
                                               loop also reaps on every wake-up */
    (void)n;
    errno = saved;
}

/* bound a synchronous phase to ms (0: disarm); past it the tool exits 69 saying what */
static void watchdog(uint64_t ms, const char *what) {
    if (ms)
        snprintf(watchdog_msg, sizeof watchdog_msg, "ldl-run: store error: no answer within %llu ms %s\n",
                 (unsigned long long)ms, what);
    watchdog_arm(ms);
}

static int set_flags(int fd) {
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) return -1;
    return fcntl(fd, F_SETFD, FD_CLOEXEC);
}

static int install_signals(void) {
    struct sigaction sa;
    int i;
    if (pipe(sig_pipe) != 0 || set_flags(sig_pipe[0]) != 0 || set_flags(sig_pipe[1]) != 0)
        return -1;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (i = 0; i < NFWD; i++)
        if (sigaction(fwd_sigs[i], &sa, NULL) != 0) return -1;
    sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    if (sigaction(SIGCHLD, &sa, NULL) != 0) return -1;
    sa.sa_handler = SIG_IGN;                 /* hiredis writes with plain write() */
    sa.sa_flags = 0;
    return sigaction(SIGPIPE, &sa, NULL);
}

/* ------------------------------------------------------------------ options */
struct driver;

typedef struct opts {
    const struct driver *drv;    /* the store (NULL: none given) */
    const char *store_arg;
    const char *prefix;
    const char *table;
    uint32_t ttl_ms, heartbeat_ms;
    int nonblock;
    int wait_set;
    uint64_t wait_ms;
    int conflict_code;
    uint64_t grace_ms;
    int grace_set;
    uint64_t io_ms;              /* --store-timeout */
    const char *key;
    const char *owner;           /* NULL: ldl-run@HOST:PID */
    int status;                  /* --status: inspect KEY, run nothing */
    int quiet;                   /* -q: no "held by" / "done" line */
    uint64_t min_hold_ms;        /* --min-hold (0: none) */
    int detach_hold;             /* --detach-hold */
    uint64_t once_per_s;         /* --once-per (0: none) */
    int done_code;               /* --done-exit-code */
    const char *metrics;         /* --metrics FILE */
    char **cmd;
} opts;

/* ------------------------------------------------------------------ stores */
/* Every store is driven through its adapter's ldl_view (adapters/lite_di_lock_view.h,
   decision 0713): the lock runs on view.async, inspection reads view.ext, the loop
   waits on view.ops->fds / timeout_ms and pumps, the --once-per mark is written with
   view.ops->fenced. What is a store's own is its row of the driver table below: how
   its view is built (for the run, for inspection, for the done-mark), and the few
   steps an adapter leaves to its caller -- how a dropped link is replaced, and how
   the done-mark's write is formed and finished. */
enum { FOR_RUN, FOR_INSPECT, FOR_MARK };

typedef struct cli_store {
    const struct driver *drv;
    ldl_view v;                  /* the one interface every step below uses */
    uint64_t io_ms;              /* --store-timeout */
    uint64_t last_reconnect;
    int ride_out;                /* 1 once KEY is held: a stalled or failed link is
                                    replaced, so that the lock's renew retries get through */
    struct cli_store *run;       /* FOR_MARK: the run's own store (SQLite writes through it) */
    /* what the drivers build the view on (each uses its own) */
    ldl_memstore ms;
    ldl_memstore_slot slots[2];
    redisContext *rc;
    ldl_redis rs;
    ldl_redis_async ra;
    ldl_redis_req rreqs[8];
    const char *conninfo;
    PGconn *pc;
    ldl_pg pg;
    ldl_pg_async pa;
    ldl_pg_req preqs[8];
    PGconn *pc_new;              /* a reconnect under way (PQconnectPoll driven by the loop) */
    int pc_poll;                 /* its last PostgresPollingStatusType */
    uint64_t pc_since;
    ldl_sqlite sq;
    ldl_etcd et;
    ldl_etcd_async eta;
    ldl_etcd_req ereqs[8];
} cli_store;

/* the --once-per write of one period, as the store forms it around view.ops->fenced */
typedef struct mark_write {
    ldl_fenced w;
    char res[LDL_KEY_MAX + 64], prev[LDL_KEY_MAX + 64];
    char mark[LDL_KEY_MAX + 128], done[LDL_KEY_MAX + 128], ttl[24];
    const char *argv[5];
    int keyidx[1];
} mark_write;

typedef struct driver {
    const char *opt;             /* its option ("--memory" takes no value) */
    const char *label;           /* in messages: "redis: ..." */
    int valued;                  /* the option takes a value */
    int shared;                  /* other processes see it: --status */
    int marks;                   /* the done-mark is written: --once-per */
    /* the view for purpose; 0 or an EXIT_* code (the reason printed) */
    int  (*open)(cli_store *s, const opts *o, int purpose);
    void (*pump)(cli_store *s);  /* the view's pump, and a dropped link replaced */
    int  (*fds)(cli_store *s, ldl_view_fd *out, int n);
    /* --once-per: 1 the mark of res exists, 0 not, -1 store error (printed) */
    int  (*mark_exists)(cli_store *s, const opts *o, const char *res);
    /* --once-per: the fenced write formed (0), or -1 (printed) */
    int  (*mark_form)(cli_store *s, const opts *o, mark_write *m);
    /* --once-per: after view.ops->fenced answered rc: 1 written, 0 stale, -1 error */
    int  (*mark_end)(cli_store *s, const opts *o, mark_write *m, int rc);
    void (*close)(cli_store *s); /* what the driver opened (idempotent) */
} driver;

static const char *store_why(const cli_store *s) {
    return s->v.ops ? s->v.ops->why(s->v.self) : "";
}

/* an adapter's init refused: EXIT_USAGE for a bad argument, else EXIT_STORE */
static int init_refused(int rc, const char *label, const char *why) {
    char fmt[64];
    snprintf(fmt, sizeof fmt, "%s%s: %%s%%s", rc == LDL_EINVAL ? "usage: " : "", label);
    sayx(rc == LDL_EINVAL ? NULL : "store", fmt, NULL, why);
    return rc == LDL_EINVAL ? EXIT_USAGE : EXIT_STORE;
}

/* the generic pieces a row may use */
static void pump_view(cli_store *s) { (void)s->v.ops->pump(s->v.self); }
static int fds_view(cli_store *s, ldl_view_fd *out, int n) { return s->v.ops->fds(s->v.self, out, n); }
static void close_view(cli_store *s) { if (s->v.ops) s->v.ops->close(s->v.self); }

/* ---- --memory */
static int memory_open(cli_store *s, const opts *o, int purpose) {
    ldl_clock zero;
    (void)o; (void)purpose;
    memset(&zero, 0, sizeof zero);
    if (ldl_memstore_init(&s->ms, s->slots, 2, zero) != LDL_OK) return EXIT_OSERR;
    return ldl_view_memstore(&s->v, &s->ms) == LDL_OK ? 0 : EXIT_OSERR;
}

/* ---- --sqlite PATH: the run opens (creating it), inspection only reads (a missing
   file is "no such store", a missing table "no such table"; nothing is made), the
   done-mark writes through the run's own connection */
static int sqlite_open(cli_store *s, const opts *o, int purpose) {
    int rc;
    if (purpose == FOR_MARK) return ldl_view_sqlite(&s->v, &s->run->sq) == LDL_OK ? 0 : EXIT_STORE;
    rc = ldl_sqlite_open(&s->sq, o->store_arg, o->table,
                         purpose == FOR_INSPECT ? LDL_SQLITE_INSPECT : LDL_SQLITE_CREATE);
    if (rc != LDL_OK) return init_refused(rc, "sqlite", ldl_sqlite_why(&s->sq));
    (void)ldl_view_sqlite(&s->v, &s->sq);
    /* the view's ext is the synchronous one (no submit_owned): the lock runs on
       the non-blocking face, whose owned acquire is in ldl_sqlite_async_ext */
    if (purpose == FOR_RUN) s->v.ext = ldl_sqlite_async_ext(&s->sq);
    return 0;
}

static void sqlite_close(cli_store *s) {
    if (!s->run) ldl_sqlite_close(&s->sq);   /* the done-mark's view is the run's */
}

/* ---- --etcd ENDPOINTS: every call bounded by --store-timeout; no I/O until the
   first request */
static int etcd_open(cli_store *s, const opts *o, int purpose) {
    ldl_etcd_config cfg;
    int rc;
    memset(&cfg, 0, sizeof cfg);
    cfg.endpoints = o->store_arg;
    cfg.prefix = o->prefix;
    cfg.call_ms = (uint32_t)(s->io_ms > 600000u ? 600000u : s->io_ms);
    cfg.attempt_ms = cfg.call_ms < LDL_ETCD_ATTEMPT_MS ? cfg.call_ms : LDL_ETCD_ATTEMPT_MS;
    rc = ldl_etcd_init(&s->et, &cfg);
    if (rc != LDL_OK) return init_refused(rc, "etcd", ldl_etcd_why(&s->et));
    if (purpose != FOR_RUN) return ldl_view_etcd(&s->v, &s->et) == LDL_OK ? 0 : EXIT_STORE;
    if (ldl_etcd_async_init(&s->eta, &s->et, s->ereqs, sizeof s->ereqs / sizeof s->ereqs[0]) != LDL_OK) {
        STORE_ERR("etcd: %s%s", NULL, ldl_etcd_async_why(&s->eta));
        return EXIT_STORE;
    }
    return ldl_view_etcd_async(&s->v, &s->eta) == LDL_OK ? 0 : EXIT_STORE;
}

static void etcd_close(cli_store *s) {
    ldl_etcd_async_close(&s->eta);
    ldl_etcd_close(&s->et);
}

/* ---- --redis HOST:PORT or /PATH. The run connects without blocking (the
   non-blocking view); inspection and the done-mark ask through a synchronous
   connection whose every call is bounded by --store-timeout. */
static int redis_connect_sync(cli_store *s, const opts *o, const char *pre) {
    struct timeval tv;
    tv.tv_sec = (time_t)(o->io_ms / 1000u);
    tv.tv_usec = (suseconds_t)(o->io_ms % 1000u) * 1000;
    if (strchr(o->store_arg, '/')) {
        s->rc = redisConnectUnixWithTimeout(o->store_arg, tv);
    } else {
        char host[128];
        int port = 0, r = parse_hostport(o->store_arg, host, sizeof host, &port);
        if (r == -1) return usage_error("usage: --redis: want HOST:PORT or a socket path, got ", o->store_arg);
        if (r == -2) { STORE_ERR("--redis: cannot resolve '%s'%s", o->store_arg, NULL); return EXIT_STORE; }
        s->rc = redisConnectWithTimeout(host, port, tv);
    }
    if (!s->rc || s->rc->err) {
        sayx("store", pre, NULL, s->rc ? s->rc->errstr : "out of memory");
        return EXIT_STORE;
    }
    (void)redisSetTimeout(s->rc, tv);
    return 0;
}

static int redis_open_sync(cli_store *s, const opts *o, int purpose) {
    int mark = purpose == FOR_MARK;
    int rc = redis_connect_sync(s, o, mark ? "--once-per: redis: %s%s" : "redis: %s%s");
    if (rc) return rc;
    if (ldl_redis_init(&s->rs, s->rc, o->prefix) != LDL_OK) {
        sayx(mark ? "store" : NULL, mark ? "--once-per: redis: %s%s" : "usage: redis: %s%s",
             NULL, ldl_redis_why(&s->rs));
        return mark ? EXIT_STORE : EXIT_USAGE;
    }
    return ldl_view_redis(&s->v, &s->rs) == LDL_OK ? 0 : EXIT_STORE;
}

static int redis_open(cli_store *s, const opts *o, int purpose) {
    if (purpose != FOR_RUN) return redis_open_sync(s, o, purpose);
    if (strchr(o->store_arg, '/')) {
        s->rc = redisConnectUnixNonBlock(o->store_arg);
    } else {
        char host[128];
        int port = 0, r = parse_hostport(o->store_arg, host, sizeof host, &port);
        if (r == -1) { say("usage: --redis: want HOST:PORT or a socket path, got '%s'%s", o->store_arg, NULL); return EXIT_USAGE; }
        if (r == -2) { STORE_ERR("--redis: cannot resolve '%s'%s", o->store_arg, NULL); return EXIT_STORE; }
        s->rc = redisConnectNonBlock(host, port);
    }
    if (!s->rc) { SYS_ERR("--redis: out of memory%s%s", NULL, NULL); return EXIT_OSERR; }
    if (s->rc->err) { STORE_ERR("redis: %s%s", NULL, s->rc->errstr); return EXIT_STORE; }
    if (ldl_redis_async_init(&s->ra, s->rc, o->prefix, s->rreqs, sizeof s->rreqs / sizeof s->rreqs[0])
            != LDL_OK) {
        int u = strstr(ldl_redis_async_why(&s->ra), "prefix") != NULL;
        sayx(u ? NULL : "store", u ? "usage: redis: %s%s" : "redis: %s%s", NULL, ldl_redis_async_why(&s->ra));
        return u ? EXIT_USAGE : EXIT_STORE;
    }
    return ldl_view_redis_async(&s->v, &s->ra) == LDL_OK ? 0 : EXIT_STORE;
}

static void redis_pump(cli_store *s) {
    uint64_t t = now_ms();
    /* a server that takes an answer past --store-timeout while KEY is held:
       drop the link, so the renew fails and the lock tries again on a new one */
    if (s->ride_out && ldl_redis_async_stalled_ms(&s->ra) >= s->io_ms)
        ldl_redis_async_fail(&s->ra, "no answer within --store-timeout: link dropped");
    if (s->v.ops->pump(s->v.self) < 0) {
        /* a reconnect now and then: a restarted server can still renew our lease
           (the lock's own deadline decides whether it is still ours) */
        if (t - s->last_reconnect >= RECONNECT_MS) {
            s->last_reconnect = t;
            (void)ldl_redis_async_reconnect(&s->ra);
        }
    }
}

static void redis_close(cli_store *s) {
    if (s->rc) { redisFree(s->rc); s->rc = NULL; }
}

/* the done-mark: the fence mark of the period's resource, "{R}:P:mark" */
static int redis_mark_exists(cli_store *s, const opts *o, const char *res) {
    char mark[LDL_KEY_MAX + 128];
    redisReply *rep;
    int out = -1;
    (void)o;
    if (!ldl_redis_fence_mark(&s->rs, res, mark, sizeof mark)) {
        STORE_ERR("--once-per: redis: no mark name for '%s'%s", res, NULL);
        return -1;
    }
    rep = (redisReply *)redisCommand(s->rc, "EXISTS %s", mark);
    if (rep && rep->type == REDIS_REPLY_INTEGER) out = rep->integer > 0;
    else STORE_ERR("--once-per: redis: %s%s", NULL, rep && rep->str ? rep->str : s->rc->errstr);
    if (rep) freeReplyObject(rep);
    return out;
}

/* the fenced write's command sets "{R}:P:done" with a TTL of 3 periods */
static int redis_mark_form(cli_store *s, const opts *o, mark_write *m) {
    size_t k = ldl_redis_fence_mark(&s->rs, m->res, m->mark, sizeof m->mark);
    if (!k || k < 4 || k + 1 > sizeof m->done) {
        STORE_ERR("--once-per: redis: no mark name for '%s'%s", m->res, NULL);
        return -1;
    }
    memcpy(m->done, m->mark, k - 4);
    memcpy(m->done + k - 4, "done", 5);      /* "{R}:P:mark" -> "{R}:P:done" */
    snprintf(m->ttl, sizeof m->ttl, "%llu", (unsigned long long)o->once_per_s * 3000u);
    m->argv[0] = "SET"; m->argv[1] = m->done; m->argv[2] = "1"; m->argv[3] = "PX"; m->argv[4] = m->ttl;
    m->keyidx[0] = 1;
    m->w.argc = 5; m->w.argv = m->argv; m->w.nkeys = 1; m->w.keyidx = m->keyidx;
    return 0;
}

static int redis_mark_end(cli_store *s, const opts *o, mark_write *m, int rc) {
    redisReply *rep;
    (void)o;
    if (rc != 1) return rc == 0 ? 0 : -1;
    rep = (redisReply *)redisCommand(s->rc, "PEXPIRE %s %s", m->mark, m->ttl);   /* the mark lives 3 periods */
    if (rep) freeReplyObject(rep);
    return 1;
}

/* ---- --pg CONNINFO */
static short pg_events(int st) {
    return (short)(st == PGRES_POLLING_READING ? POLLIN : POLLOUT);
}

/* a non-blocking PostgreSQL connect, waited for here (setup: signals end the tool)
   for at most ms; NULL with a message printed on failure */
static PGconn *pg_connect(const char *conninfo, uint64_t ms) {
    PGconn *c = PQconnectStart(conninfo);
    int st = PGRES_POLLING_WRITING;
    uint64_t end = now_ms() + ms;
    if (!c) { SYS_ERR("--pg: out of memory%s%s", NULL, NULL); return NULL; }
    while (PQstatus(c) != CONNECTION_BAD) {
        struct pollfd p;
        uint64_t t = now_ms();
        if (st == PGRES_POLLING_OK) return c;
        if (t >= end) {
            char n[24];
            snprintf(n, sizeof n, "%llu", (unsigned long long)ms);
            STORE_ERR("postgres: no answer within %s ms while connecting%s", n, NULL);
            PQfinish(c);
            return NULL;
        }
        p.fd = PQsocket(c); p.events = pg_events(st); p.revents = 0;
        if (poll(&p, 1, (int)(end - t)) > 0) st = (int)PQconnectPoll(c);
        if (st == PGRES_POLLING_FAILED) break;
    }
    STORE_ERR("postgres: %s%s", NULL, PQerrorMessage(c));
    PQfinish(c);
    return NULL;
}

/* "schema"."table" as the adapter quotes it, with suffix (e.g. _fence) inside the quotes */
static void pg_ident(const opts *o, const char *suffix, char *q, size_t cap) {
    const char *tn = o->table ? o->table : "ldl_lease";
    size_t k, j = 0, sl = strlen(suffix);
    q[j++] = '"';
    for (k = 0; tn[k] && j + sl + 4 < cap; k++) {
        if (tn[k] == '.') { q[j++] = '"'; q[j++] = '.'; q[j++] = '"'; }
        else if (tn[k] != '"') q[j++] = tn[k];
    }
    memcpy(q + j, suffix, sl);
    q[j + sl] = '"'; q[j + sl + 1] = 0;
}

/* inspection creates nothing: the table must exist (ldl_pg_init would create it);
   0 it does, else an exit code (printed) */
static int pg_table_exists(cli_store *s, const opts *o) {
    PGresult *res;
    const char *pv[1];
    char q[300];
    int found;
    pg_ident(o, "", q, sizeof q);
    pv[0] = q;
    res = PQexecParams(s->pc, "SELECT pg_catalog.to_regclass($1) IS NOT NULL", 1, NULL, pv, NULL, NULL, 0);
    found = res && PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1
            ? PQgetvalue(res, 0, 0)[0] == 't' : -1;
    if (found < 0) STORE_ERR("postgres: %s%s", NULL, PQerrorMessage(s->pc));
    PQclear(res);
    if (found == 0) STORE_ERR("postgres: no such table '%s' (nothing created)%s", o->table ? o->table : "ldl_lease", NULL);
    if (found <= 0) return EXIT_STORE;
    return 0;
}

static int pg_open(cli_store *s, const opts *o, int purpose) {
    int rc;
    s->conninfo = o->store_arg;
    s->pc = pg_connect(o->store_arg, o->io_ms);
    if (!s->pc) return EXIT_STORE;
    if (purpose == FOR_INSPECT && (rc = pg_table_exists(s, o)) != 0) return rc;
    rc = ldl_pg_init_ex(&s->pg, s->pc, o->table, purpose == FOR_MARK ? LDL_PG_FENCE : 0);
    if (rc != LDL_OK && purpose == FOR_MARK) {
        STORE_ERR("--once-per: postgres: %s%s", NULL, ldl_pg_why(&s->pg));
        return EXIT_STORE;
    }
    if (rc != LDL_OK) return init_refused(rc, "postgres", ldl_pg_why(&s->pg));
    if (purpose != FOR_RUN) return ldl_view_pg(&s->v, &s->pg) == LDL_OK ? 0 : EXIT_STORE;
    if (ldl_pg_async_init(&s->pa, &s->pg, s->preqs, sizeof s->preqs / sizeof s->preqs[0]) != LDL_OK) {
        STORE_ERR("postgres: %s%s", NULL, ldl_pg_why(&s->pg));
        return EXIT_STORE;
    }
    return ldl_view_pg_async(&s->v, &s->pa) == LDL_OK ? 0 : EXIT_STORE;
}

/* replace a failed link without blocking (decision 0703): PQconnectStart,
   PQconnectPoll from the loop, then the view's rebind; a connect not done within
   --store-timeout is dropped and started again */
static void pg_reconnect_step(cli_store *s, uint64_t t) {
    if (!s->pc_new) {
        if (t - s->last_reconnect < RECONNECT_MS) return;
        s->last_reconnect = t;
        s->pc_new = PQconnectStart(s->conninfo);
        s->pc_poll = PGRES_POLLING_WRITING;
        s->pc_since = t;
        if (!s->pc_new) return;
    }
    if (PQstatus(s->pc_new) != CONNECTION_BAD) {
        struct pollfd p;                     /* a step only when its socket is ready */
        p.fd = PQsocket(s->pc_new); p.events = pg_events(s->pc_poll); p.revents = 0;
        if (p.fd >= 0 && poll(&p, 1, 0) > 0) s->pc_poll = (int)PQconnectPoll(s->pc_new);
    }
    if (s->pc_poll == PGRES_POLLING_OK && PQstatus(s->pc_new) == CONNECTION_OK) {
        if (s->v.ops->rebind(s->v.self, s->pc_new) == LDL_OK) {
            if (s->pc) PQfinish(s->pc);
            s->pc = s->pc_new;
            s->pc_new = NULL;
            if (verbose) say("postgres: reconnected%s%s", NULL, NULL);
            return;
        }
    }
    if (s->pc_poll == PGRES_POLLING_FAILED || PQstatus(s->pc_new) == CONNECTION_BAD ||
        s->pc_poll == PGRES_POLLING_OK || t - s->pc_since >= s->io_ms) {
        PQfinish(s->pc_new);
        s->pc_new = NULL;
    }
}

static void pg_pump(cli_store *s) {
    if (s->pc_new) { pg_reconnect_step(s, now_ms()); return; }
    if (s->v.ops->pump(s->v.self) < 0 && s->ride_out) pg_reconnect_step(s, now_ms());
}

/* while a reconnect is under way, its socket is the one to wait on */
static int pg_fds(cli_store *s, ldl_view_fd *out, int n) {
    if (!s->pc_new) return s->v.ops->fds(s->v.self, out, n);
    if (n < 1 || PQsocket(s->pc_new) < 0) return 0;
    out[0].fd = PQsocket(s->pc_new);
    out[0].events = s->pc_poll == PGRES_POLLING_READING ? LDL_WANT_READ : LDL_WANT_WRITE;
    return 1;
}

static void pg_close(cli_store *s) {
    if (s->pc) { PQfinish(s->pc); s->pc = NULL; }
    if (s->pc_new) { PQfinish(s->pc_new); s->pc_new = NULL; }
}

static int pg_mark_exists(cli_store *s, const opts *o, const char *res) {
    char sql[400], q[300];
    const char *pv[1];
    PGresult *pr;
    int out = -1;
    pg_ident(o, "_fence", q, sizeof q);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM %s WHERE resource OPERATOR(pg_catalog.=) $1", q);
    pv[0] = res;
    pr = PQexecParams(s->pc, sql, 1, NULL, pv, NULL, NULL, 0);
    if (pr && PQresultStatus(pr) == PGRES_TUPLES_OK && PQntuples(pr) == 1)
        out = strcmp(PQgetvalue(pr, 0, 0), "0") != 0;
    else STORE_ERR("--once-per: postgres: %s%s", NULL, PQerrorMessage(s->pc));
    PQclear(pr);
    return out;
}

/* the fenced check runs inside the transaction the mark's other write shares */
static int pg_mark_form(cli_store *s, const opts *o, mark_write *m) {
    PGresult *pr = PQexec(s->pc, "BEGIN");
    int ok = pr && PQresultStatus(pr) == PGRES_COMMAND_OK;
    (void)o; (void)m;
    PQclear(pr);
    if (ok) return 0;
    STORE_ERR("--once-per: postgres: BEGIN: %s%s", NULL, PQerrorMessage(s->pc));
    pr = PQexec(s->pc, "ROLLBACK");
    PQclear(pr);
    return -1;
}

/* written: the marks of KEY's older periods go (all but this one and the last), and
   the transaction commits; else it rolls back */
static int pg_mark_end(cli_store *s, const opts *o, mark_write *m, int rc) {
    char sql[600], q[300], num[24];
    const char *pv[3];
    PGresult *pr;
    int ok = rc == 1;
    if (ok) {
        pg_ident(o, "_fence", q, sizeof q);
        snprintf(sql, sizeof sql, "DELETE FROM %s WHERE pg_catalog.left(resource, $1::pg_catalog.int4) "
                 "OPERATOR(pg_catalog.=) pg_catalog.left($2, $1::pg_catalog.int4) AND resource "
                 "OPERATOR(pg_catalog.<>) $2 AND resource OPERATOR(pg_catalog.<>) $3", q);
        snprintf(num, sizeof num, "%u", (unsigned)(strlen("ldl-run-once:") + strlen(o->key) + 1u));
        pv[0] = num; pv[1] = m->res; pv[2] = m->prev;
        pr = PQexecParams(s->pc, sql, 3, NULL, pv, NULL, NULL, 0);
        ok = pr && PQresultStatus(pr) == PGRES_COMMAND_OK;
        if (!ok) STORE_ERR("--once-per: postgres: %s%s", NULL, PQerrorMessage(s->pc));
        PQclear(pr);
    }
    if (ok) {
        pr = PQexec(s->pc, "COMMIT");
        ok = pr && PQresultStatus(pr) == PGRES_COMMAND_OK;
        if (!ok) STORE_ERR("--once-per: postgres: COMMIT: %s%s", NULL, PQerrorMessage(s->pc));
        PQclear(pr);
        return ok ? 1 : -1;
    }
    pr = PQexec(s->pc, "ROLLBACK");
    PQclear(pr);
    return rc == 0 ? 0 : -1;
}

/* ---- the SQLite done-mark, on the run's own connection */
static int sqlite_mark_exists(cli_store *s, const opts *o, const char *res) {
    sqlite3 *db = ldl_sqlite_db((ldl_sqlite *)s->v.self);
    sqlite3_stmt *st = NULL;
    char sql[200];
    int out = -1;
    snprintf(sql, sizeof sql, "SELECT count(*) FROM main.\"%s_fence\" WHERE resource = ?1",
             o->table ? o->table : "ldl_lease");
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_bind_text(st, 1, res, -1, SQLITE_STATIC) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        out = sqlite3_column_int(st, 0) > 0;
    else STORE_ERR("--once-per: sqlite: %s%s", NULL, sqlite3_errmsg(db));
    sqlite3_finalize(st);
    return out;
}

/* another process's transaction may hold the file: BEGIN IMMEDIATE is tried again
   for up to --store-timeout (the connection's own busy handling is the adapter's) */
static int sqlite_mark_form(cli_store *s, const opts *o, mark_write *m) {
    sqlite3 *db = ldl_sqlite_db((ldl_sqlite *)s->v.self);
    uint64_t until = now_ms() + o->io_ms;
    int brc;
    (void)m;
    while ((brc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL)) == SQLITE_BUSY && now_ms() < until) {
        struct timespec nap = { 0, 5000000 };
        (void)nanosleep(&nap, NULL);
    }
    if (brc == SQLITE_OK) return 0;
    STORE_ERR("--once-per: sqlite: %s%s", NULL, sqlite3_errmsg(db));
    return -1;
}

static int sqlite_mark_end(cli_store *s, const opts *o, mark_write *m, int rc) {
    sqlite3 *db = ldl_sqlite_db((ldl_sqlite *)s->v.self);
    sqlite3_stmt *st = NULL;
    char sql[300];
    int ok;
    if (rc == 1) {
        snprintf(sql, sizeof sql, "DELETE FROM main.\"%s_fence\" WHERE substr(resource, 1, ?1) = "
                 "substr(?2, 1, ?1) AND resource <> ?2 AND resource <> ?3", o->table ? o->table : "ldl_lease");
        ok = sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
             sqlite3_bind_int(st, 1, (int)(strlen("ldl-run-once:") + strlen(o->key) + 1u)) == SQLITE_OK &&
             sqlite3_bind_text(st, 2, m->res, -1, SQLITE_STATIC) == SQLITE_OK &&
             sqlite3_bind_text(st, 3, m->prev, -1, SQLITE_STATIC) == SQLITE_OK &&
             sqlite3_step(st) == SQLITE_DONE;
        sqlite3_finalize(st);
        if (ok && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK) return 1;
        STORE_ERR("--once-per: sqlite: %s%s", NULL, sqlite3_errmsg(db));
    }
    (void)sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return rc == 0 ? 0 : -1;
}

/* ---- the table: the only place that names a store */
static const driver drivers[] = {
    { "--memory", "memory",   0, 0, 0, memory_open, pump_view,  fds_view, NULL, NULL, NULL, close_view },
    { "--redis",  "redis",    1, 1, 1, redis_open,  redis_pump, fds_view, redis_mark_exists, redis_mark_form,
      redis_mark_end, redis_close },
    { "--pg",     "postgres", 1, 1, 1, pg_open,    pg_pump,    pg_fds,   pg_mark_exists, pg_mark_form,
      pg_mark_end, pg_close },
    { "--sqlite", "sqlite",   1, 1, 1, sqlite_open, pump_view,  fds_view, sqlite_mark_exists, sqlite_mark_form,
      sqlite_mark_end, sqlite_close },
    { "--etcd",   "etcd",     1, 1, 0, etcd_open,   pump_view,  fds_view, NULL, NULL, NULL, etcd_close },
};
#define NDRIVERS ((int)(sizeof drivers / sizeof drivers[0]))

static const driver *driver_for(const char *opt) {
    int i;
    for (i = 0; i < NDRIVERS; i++)
        if (!strcmp(opt, drivers[i].opt)) return &drivers[i];
    return NULL;
}

/* the store's view for purpose; 0 or an EXIT_* code (printed; s closed) */
static int store_open(cli_store *s, const opts *o, int purpose, cli_store *run) {
    int rc;
    memset(s, 0, sizeof *s);
    s->drv = o->drv;
    s->io_ms = o->io_ms;
    s->run = run;
    rc = s->drv->open(s, o, purpose);
    if (rc) s->drv->close(s);
    return rc;
}

static void store_close(cli_store *s) {
    if (s->drv) s->drv->close(s);
    s->drv = NULL;
}

/* the short-lived synchronous view beside the run's (inspection, the done-mark):
   one at a time, so one of them */
static cli_store side;

/* ------------------------------------------------------------------ loop state */
typedef struct run {
    cli_store st;
    ldl_lock lock;
    ldl_scope root, pool[1];
    pid_t child;                 /* 0: none yet or reaped */
    pid_t pgid;
    int child_status;
    int child_done;
    int signal_seen;             /* last terminating signal received (0: none) */
    int forwarded;
    /* the run's loop: kill_at (0: none) is when the job gets SIGKILL; it only ever
       moves earlier */
    int code, lost, doomed, killed, leftovers, in_hold, stopping, lost_in_hold;
    uint64_t kill_at, trust_end;
    /* issue 33: the hold, the period, the metrics */
    uint64_t grant_t, hold_end;  /* monotonic ms */
    int judged, judged_ok;       /* the lease judged when the job ended (ok: still held) */
    int detached, granted, child_started;
    uint64_t period;             /* --once-per: the period this run started in */
    uint32_t errs_at_grant;
    int64_t fence;               /* the grant's (the lock forgets it at the release) */
    double start_wall, grant_wall, spawn_wall, job_end_wall, end_wall, wait_s;
} run;

/* the signals in the self-pipe, as a bit set over fwd_sigs */
static unsigned drain_signals(void) {
    unsigned got = 0;
    int i, j;
    for (;;) {
        unsigned char buf[64];
        ssize_t k = read(sig_pipe[0], buf, sizeof buf);
        if (k <= 0) break;
        for (i = 0; i < (int)k; i++)
            for (j = 0; j < NFWD; j++)
                if (buf[i] == (unsigned char)fwd_sigs[j]) got |= 1u << j;
    }
    return got;
}

/* wait for the store's sockets (as its view names them), a signal, or timeout_ms --
   no longer than the view asks; then pump the store and drain the self-pipe.
   Returns the signals received, as a bit set over fwd_sigs. */
static unsigned wait_events(run *r, int timeout_ms) {
    struct pollfd p[1 + 16];
    ldl_view_fd f[16];
    int n, i;
    unsigned got;
    long cap = r->st.v.ops->timeout_ms(r->st.v.self);
    int k = r->st.drv->fds(&r->st, f, 16);
    p[0].fd = sig_pipe[0]; p[0].events = POLLIN; p[0].revents = 0;
    for (i = 0, n = 1; i < k; i++) {
        (void)fcntl(f[i].fd, F_SETFD, FD_CLOEXEC);   /* the command must not inherit it */
        if (!f[i].events) continue;          /* nothing wanted now: no wake-up on it */
        p[n].fd = f[i].fd;
        p[n].events = (short)(((f[i].events & LDL_WANT_READ) ? POLLIN : 0) |
                              ((f[i].events & LDL_WANT_WRITE) ? POLLOUT : 0));
        p[n].revents = 0;
        n++;
    }
    if (timeout_ms < 0) timeout_ms = 0;
    if (cap >= 0 && cap < (long)timeout_ms) timeout_ms = (int)cap;
    if (poll(p, (nfds_t)n, timeout_ms) < 0 && errno != EINTR) {
        SYS_ERR("poll: %s%s", strerror(errno), NULL);
        exit(EXIT_OSERR);
    }
    got = drain_signals();
    r->st.drv->pump(&r->st);
    return got;
}

static int clamp_ms(uint32_t v, int cap) {
    return v > (uint32_t)cap ? cap : (int)v;
}

/* ------------------------------------------------------------------ options */
#define ONE_STORE "usage: give exactly one of --redis, --pg, --sqlite, --etcd, --memory"

/* an option without a value; 1 taken, 0 not this kind, -1 help/version printed,
   else an exit code */
static int parse_flag(const char *a, opts *o) {
    const driver *dv = driver_for(a);
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) { fputs(usage_text, stdout); fputs(usage_sched, stdout); fputs(usage_more, stdout); return -1; }
    if (!strcmp(a, "-V") || !strcmp(a, "--version")) {
        printf("ldl-run %s (lite_di_lock %s)\n", RUN_VERSION, LDL_VERSION);
        return -1;
    }
    if (!strcmp(a, "-n") || !strcmp(a, "--nonblock")) o->nonblock = 1;
    else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) verbose = 1;
    else if (!strcmp(a, "--status")) o->status = 1;
    else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) o->quiet = 1;
    else if (!strcmp(a, "--detach-hold")) o->detach_hold = 1;
    else if (dv && !dv->valued) {             /* --memory */
        if (o->drv) return usage_error(ONE_STORE, NULL);
        o->drv = dv;
    } else return 0;
    return 1;
}

/* the numbers; 1 taken, 0 not one of them, else an exit code */
static int parse_number(const char *a, const char *v, opts *o) {
    uint32_t c;
    uint64_t ms;
    if (!strcmp(a, "--ttl")) {
        if (parse_u32(v, &o->ttl_ms)) return usage_error("usage: --ttl: want milliseconds, got ", v);
    } else if (!strcmp(a, "--heartbeat")) {
        if (parse_u32(v, &o->heartbeat_ms)) return usage_error("usage: --heartbeat: want milliseconds, got ", v);
    } else if (!strcmp(a, "-w") || !strcmp(a, "--wait") || !strcmp(a, "--timeout")) {
        if (parse_seconds(v, &o->wait_ms)) return usage_error("usage: -w: want seconds, got ", v);
        o->wait_set = 1;
    } else if (!strcmp(a, "-E") || !strcmp(a, "--conflict-exit-code")) {
        if (parse_u32(v, &c) || c > 255) return usage_error("usage: -E: want 0..255, got ", v);
        o->conflict_code = (int)c;
    } else if (!strcmp(a, "--grace")) {
        if (parse_seconds(v, &o->grace_ms)) return usage_error("usage: --grace: want seconds, got ", v);
        o->grace_set = 1;
    } else if (!strcmp(a, "--min-hold")) {
        if (parse_seconds(v, &o->min_hold_ms)) return usage_error("usage: --min-hold: want seconds, got ", v);
    } else if (!strcmp(a, "--once-per")) {
        if (parse_seconds(v, &ms) || ms < 1000u || ms % 1000u)
            return usage_error("usage: --once-per: want whole seconds >= 1, got ", v);
        o->once_per_s = ms / 1000u;
    } else if (!strcmp(a, "--done-exit-code")) {
        if (parse_u32(v, &c) || c > 255) return usage_error("usage: --done-exit-code: want 0..255, got ", v);
        o->done_code = (int)c;
    } else if (!strcmp(a, "--store-timeout")) {
        if (parse_seconds(v, &o->io_ms) || o->io_ms == 0)
            return usage_error("usage: --store-timeout: want seconds > 0, got ", v);
    } else return 0;
    return 1;
}

/* an option with a value v; 1 taken, else an exit code */
static int parse_valued(const char *a, const char *v, opts *o) {
    const driver *dv = driver_for(a);
    int rc;
    if (dv && dv->valued) {
        if (o->drv) return usage_error(ONE_STORE, NULL);
        o->drv = dv;
        o->store_arg = v;
    } else if (!strcmp(a, "--prefix")) {
        o->prefix = v;
    } else if (!strcmp(a, "--table")) {
        o->table = v;
    } else if (!strcmp(a, "--owner")) {
        o->owner = v;
    } else if (!strcmp(a, "--metrics")) {
        if (!*v) return usage_error("usage: --metrics: want a file name", NULL);
        o->metrics = v;
    } else if ((rc = parse_number(a, v, o)) != 1) {
        return rc ? rc : usage_error("usage: unknown option: ", a);
    }
    return 1;
}

/* after the options: KEY, COMMAND and how they fit together; 0 or an exit code */
static int parse_rest(int argc, char **argv, int i, opts *o) {
    if (i >= argc) return usage_error(o->status ? "usage: missing KEY" : "usage: missing KEY and COMMAND", NULL);
    o->key = argv[i++];
    if (o->status) {
        if (i < argc) return usage_error("usage: --status takes KEY and no COMMAND", NULL);
        if (!o->drv) return usage_error("usage: no store: give --redis or --pg", NULL);
        if (!o->drv->shared) return usage_error("usage: --status needs a shared store (--redis or --pg)", NULL);
        return 0;
    }
    if (i < argc && !strcmp(argv[i], "--")) i++;
    if (i >= argc) return usage_error("usage: missing COMMAND after KEY", NULL);
    o->cmd = argv + i;
    if (!o->drv) return usage_error("usage: no store: give --redis, --pg or --memory", NULL);
    if (o->nonblock && o->wait_set) return usage_error("usage: -n and -w exclude each other", NULL);
    if (o->detach_hold && !o->min_hold_ms) return usage_error("usage: --detach-hold needs --min-hold", NULL);
    if (o->once_per_s && !o->drv->marks)
        return usage_error("usage: --once-per needs a store with fenced writes (--redis, --pg, --sqlite)", NULL);
    return 0;
}

/* 0 ok, else an exit code (help/version answer -1 after printing) */
static int parse_args(int argc, char **argv, opts *o) {
    int i, rc;
    memset(o, 0, sizeof *o);
    o->ttl_ms = 30000;
    o->conflict_code = EXIT_NOT_ACQUIRED;
    o->grace_ms = 10000;
    o->io_ms = 2000;
    o->done_code = EXIT_DONE;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (a[0] != '-' || a[1] == 0) break;               /* KEY */
        if (!strcmp(a, "--")) { i++; break; }
        if ((rc = parse_flag(a, o)) == 1) continue;
        if (rc) return rc;
        if (!v) return usage_error("usage: option needs a value: ", a);
        if ((rc = parse_valued(a, v, o)) != 1) return rc;
        i++;
    }
    return parse_rest(argc, argv, i, o);
}

/* ------------------------------------------------------------------ acquire */
static void tell_loser(run *r, const opts *o);

/* a signal while acquiring: give up, nothing ran */
static int acquire_signalled(run *r, unsigned sigs, int *code) {
    int j;
    for (j = 0; j < NFWD; j++) if (sigs & (1u << j)) r->signal_seen = fwd_sigs[j];
    ldl_lock_dispose(&r->lock);
    *code = 128 + r->signal_seen;
    return 0;
}

/* 1 held; else 0 with an exit code in *code (> 1, or the -E code, which may be 0 or 1).
   The waiting is the library's retry schedule (desc.retry, set in main): ldl_lock_poll
   makes each attempt when it is due, and the lock's counters tell a busy KEY
   (contention) from a failing store (store_errors), so no error text is compared. */
static int acquire_loop(run *r, const opts *o, int *code) {
    const ldl_counters *c = ldl_lock_counters(&r->lock);
    uint32_t errs = c->store_errors;
    uint64_t t0 = now_ms(), abound = 0, attempt_t0 = 0;
    int rc = ldl_lock_acquire(&r->lock);
    for (;;) {
        uint64_t t;
        int tmo;
        unsigned sigs;
        if (rc == 1) return 1;
        if (c->store_errors != errs) {
            STORE_ERR("while acquiring: %s%s", NULL, store_why(&r->st)[0] ? store_why(&r->st) : "no answer");
            *code = EXIT_STORE;
            return 0;
        }
        t = now_ms();
        if (rc == LDL_EINPROGRESS) {
            /* an attempt in flight may wait for its answer --store-timeout, at most
               TTL/2 (the lock's own timeout, TTL - drift, comes later), cut to the -w
               deadline but never below 1 s or --store-timeout if less (a slow answer
               is not a silent store) */
            if (!abound) {
                attempt_t0 = t;
                abound = t + (o->io_ms < o->ttl_ms / 2u ? o->io_ms : o->ttl_ms / 2u);
                if (o->wait_set) {
                    uint64_t wend = t0 + o->wait_ms, floor1 = t + (o->io_ms < 1000u ? o->io_ms : 1000u);
                    if (wend < floor1) wend = floor1;
                    if (wend < abound) abound = wend;
                }
            }
            if (t >= abound) {
                char ms[24];
                (void)ldl_lock_release(&r->lock);    /* cancels; the adapter hands back a late grant */
                snprintf(ms, sizeof ms, "%llu", (unsigned long long)(abound - attempt_t0));
                STORE_ERR("while acquiring: no answer within %s ms%s", ms, NULL);
                *code = EXIT_STORE;
                return 0;
            }
        } else {
            abound = 0;
            if (!ldl_lock_retrying(&r->lock)) {      /* -n, or the -w budget is spent */
                if (!o->quiet) tell_loser(r, o);
                *code = o->conflict_code;
                return 0;
            }
        }
        tmo = clamp_ms(ldl_lock_due_in_ms(&r->lock), 1000);
        if (abound && (uint64_t)tmo > abound - t) tmo = (int)(abound - t);
        sigs = wait_events(r, tmo);
        if (sigs) return acquire_signalled(r, sigs, code);
        rc = ldl_lock_poll(&r->lock);
    }
}

/* the library's verdict on a lock described by d, with a MemoryStore standing in for
   the store (nothing connects): NULL when it would init, else its why */
static const char *probe(const ldl_lock_desc *desc) {
    static char why[256];
    ldl_lock_desc d = *desc;
    ldl_memstore_slot s1[1];
    ldl_memstore m;
    ldl_clock zero;
    ldl_async_store as;
    ldl_store_ext ext;
    ldl_lock l;
    ldl_scope root, pool[1];
    memset(&zero, 0, sizeof zero);
    ldl_memstore_init(&m, s1, 1, zero);
    if (!d.container.scope) {
        ldl_scope_init(&root, pool, 1);
        d.container = ldl_scope_container(&root);
    }
    as = ldl_memstore_async_store(&m);
    ext = ldl_memstore_ext(&m);
    d.async_store = &as;
    d.store_ext = &ext;
    if (ldl_lock_init(&l, &d) == LDL_OK) { ldl_lock_dispose(&l); return NULL; }
    snprintf(why, sizeof why, "%s", ldl_lock_why(&l));
    return why[0] ? why : "refused by the library";
}


/* --status and the loser's line: who holds KEY, asked through the store's
   synchronous view (FOR_INSPECT); the whole of it bounded by the watchdog (2 x
   --store-timeout: the connect, then the one question). Creates nothing (issue
   31): a SQLite file or a lease table that does not exist is "no such store" /
   "no such table", not made. 1 held (*h filled), 0 free, else an exit code
   (the reason printed, "ldl-run: store error: ..."). */
static int ask_holder(const opts *o, ldl_holder *h) {
    cli_store *s = &side;
    const char *why;
    int rc;
    watchdog(2u * o->io_ms, "asking who holds the key");
    rc = store_open(s, o, FOR_INSPECT, NULL);
    if (rc) { watchdog(0, NULL); return rc; }
    rc = ldl_store_inspect(&s->v.ext, o->key, h);
    watchdog(0, NULL);
    if (rc != 1 && rc != 0) {
        why = store_why(s);
        if (rc == LDL_EINVAL) say("usage: status of '%s': %s", o->key, why[0] ? why : "refused");
        else STORE_ERR("status of '%s': %s", o->key, why[0] ? why : "the store refused the question");
    }
    store_close(s);
    if (rc == 1 || rc == 0) return rc;
    return rc == LDL_EINVAL ? EXIT_USAGE : EXIT_STORE;
}

/* "held by OWNER, fence F, N ms left" (escaped) into buf */
static const char *holder_text(const ldl_holder *h, char *buf, size_t n) {
    char eo[4 * LDL_OWNER_MAX + 8];
    snprintf(buf, n, "held by %s, fence %lld, %lu ms left",
             h->owner[0] ? esc(h->owner, eo, sizeof eo) : "(no owner recorded)",
             (long long)h->token, (unsigned long)h->ttl_left_ms);
    return buf;
}

static int show_status(const opts *o) {
    ldl_holder h;
    ldl_lock_desc kd;
    const char *why;
    int rc;
    char ek[4 * LDL_KEY_MAX + 8], line[4 * LDL_OWNER_MAX + 96];
    memset(&kd, 0, sizeof kd);           /* the key is the library's to judge, first */
    kd.key = o->key;
    kd.ttl_ms = 1000;
    if ((why = probe(&kd)) != NULL) {
        say("usage: --status: bad KEY '%s': %s", o->key, why);
        return EXIT_USAGE;
    }
    rc = ask_holder(o, &h);
    if (rc == 1) printf("%s: %s\n", esc(o->key, ek, sizeof ek), holder_text(&h, line, sizeof line));
    else if (rc == 0) printf("%s: free\n", esc(o->key, ek, sizeof ek));
    return rc == 1 ? 0 : rc == 0 ? EXIT_NOT_ACQUIRED : rc;
}

/* the loser's line (issue 33): who holds KEY, as --status says it; through the
   store's own inspect when its view has one (SQLite, etcd), else a synchronous
   connection of the same store */
static void tell_loser(run *r, const opts *o) {
    ldl_holder h;
    int rc;
    char line[4 * LDL_OWNER_MAX + 96];
    memset(&h, 0, sizeof h);
    if (r->st.v.ext.inspect) rc = ldl_store_inspect(&r->st.v.ext, o->key, &h);
    else rc = ask_holder(o, &h);
    if (rc == 1) {
        char ek[4 * LDL_KEY_MAX + 8];
        fprintf(stderr, CLI_NAME ": not acquired: '%s' is %s\n", esc(o->key, ek, sizeof ek),
                holder_text(&h, line, sizeof line));
    }
    else if (rc == 0) say("not acquired: '%s' was held elsewhere (free again now)%s", o->key, NULL);
    else say("not acquired: '%s' is held elsewhere (by whom: no answer)%s", o->key, NULL);
}

/* ------------------------------------------------------------------ child */
static pid_t spawn(char **cmd, const sigset_t *oldmask) {
    pid_t parent = getpid(), pid = fork();
    if (pid == 0) {
        struct sigaction sa;
        int i;
        setpgid(0, 0);
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = SIG_DFL;
        sigemptyset(&sa.sa_mask);
        for (i = 0; i < NFWD; i++) sigaction(fwd_sigs[i], &sa, NULL);
        sigaction(SIGCHLD, &sa, NULL);
        sigaction(SIGPIPE, &sa, NULL);
        sigaction(SIGALRM, &sa, NULL);
#ifdef __linux__
        /* ldl-run SIGKILLed: nothing renews the lease any more, so the command goes
           too. Set, then check the parent: it may have died before the prctl. */
        (void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        if (getppid() != parent) _exit(128 + SIGKILL);
#else
        (void)parent;
#endif
        sigprocmask(SIG_SETMASK, oldmask, NULL);
        execvp(cmd[0], cmd);
        i = errno;
        say("%s: %s", cmd[0], strerror(i));
        _exit(i == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC);
    }
    if (pid > 0) setpgid(pid, pid);          /* both sides: no race with a quick kill */
    return pid;
}

/* reap the child (and, as a subreaper, any orphan of the job) */
static void reap(run *r) {
    for (;;) {
        int st;
        pid_t p = waitpid(-1, &st, WNOHANG);
        if (p <= 0) break;
        if (p == r->child) { r->child_status = st; r->child_done = 1; }
    }
}

/* The job's processes outside its group (setsid, setpgid): every descendant of this
   process whose process group is not pgid, found by a walk of /proc (Linux;
   elsewhere none). sig > 0 is sent to each. Answers how many. As the subreaper this
   process inherits every orphan of the job, so a descendant stays a descendant until
   it is reaped; a zombie counts until then (it comes to us, and reap() takes it). */
static int strays(pid_t pgid, int sig) {
    int n = 0;
#ifdef __linux__
    enum { CAP = 4096 };
    static pid_t pid[CAP], ppid[CAP], pgrp[CAP];
    static unsigned char mine[CAP];
    int k = 0, i, grew;
    pid_t self = getpid();
    DIR *dir = opendir("/proc");
    struct dirent *e;
    if (!dir) return 0;
    while ((e = readdir(dir)) != NULL && k < CAP) {
        char path[300], buf[512], *p;
        FILE *f;
        size_t len;
        long a, b;
        if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        if (!(f = fopen(path, "r"))) continue;
        len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = 0;
        p = strrchr(buf, ')');               /* the name may hold spaces and ')' */
        if (!p || p[1] != ' ' || !p[2] || p[2] == 'X') continue;
        if (sscanf(p + 4, "%ld %ld", &a, &b) != 2) continue;
        pid[k] = (pid_t)atol(e->d_name); ppid[k] = (pid_t)a; pgrp[k] = (pid_t)b;
        mine[k] = ppid[k] == self;
        k++;
    }
    closedir(dir);
    do {                                     /* close over parent -> child */
        grew = 0;
        for (i = 0; i < k; i++) {
            int j;
            if (mine[i]) continue;
            for (j = 0; j < k; j++)
                if (mine[j] && pid[j] == ppid[i]) { mine[i] = 1; grew = 1; break; }
        }
    } while (grew);
    for (i = 0; i < k; i++) {
        if (!mine[i] || pgrp[i] == pgid) continue;
        if (sig > 0) (void)kill(pid[i], sig);
        n++;
    }
#else
    (void)pgid; (void)sig;
#endif
    return n;
}

/* sig to the whole job: its group, and its descendants that left the group */
static void signal_job(const run *r, int sig) {
    (void)kill(-r->pgid, sig);
    (void)strays(r->pgid, sig);
}

/* anything of the job left: a process in the group (a zombie the subreaper has not
   reaped yet counts until the next reap) or a live descendant outside it */
static int job_alive(const run *r) {
    if (kill(-r->pgid, 0) == 0 || errno == EPERM) return 1;
    return strays(r->pgid, 0) > 0;
}

static int child_code(int st) {
    if (WIFEXITED(st)) return WEXITSTATUS(st);
    if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
    return EXIT_OSERR;
}

/* ------------------------------------------------------------------ scheduled jobs */
static double wall_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* the store said "not yours" (a release, a renew): who has KEY now. Through the
   view's own inspect when it has one, else a synchronous connection. */
static void say_taken(run *r, const opts *o, const char *what) {
    ldl_holder h;
    int rc;
    char ek[4 * LDL_KEY_MAX + 8], line[4 * LDL_OWNER_MAX + 96];
    memset(&h, 0, sizeof h);
    if (r->st.v.ext.inspect) rc = ldl_store_inspect(&r->st.v.ext, o->key, &h);
    else rc = ask_holder(o, &h);
    esc(o->key, ek, sizeof ek);
    if (rc == 1 && h.token != ldl_lock_fencing_token(&r->lock))
        fprintf(stderr, CLI_NAME ": %s '%s': taken over by another holder: %s\n", what, ek,
                holder_text(&h, line, sizeof line));
    else if (rc == 0)
        fprintf(stderr, CLI_NAME ": %s '%s': the store says it is no longer ours: it lapsed "
                "(free now)\n", what, ek);
    else
        fprintf(stderr, CLI_NAME ": %s '%s': the store says it is no longer ours (taken over "
                "by another holder, or lapsed)\n", what, ek);
}

/* the job is gone: judge the lease once more (a lease whose deadline passed as the
   command ended is lost: its work may not have been exclusive) and set the exit
   code. 1: the run is over; 0: the --min-hold starts (r->hold_end set). */
static int job_ended(run *r, const opts *o, int *code, int *lost, int doomed, int stopping) {
    uint64_t t = now_ms();
    char num[24];
    r->judged = 1;
    r->job_end_wall = wall_s();
    if (*lost || doomed) {
        *code = EXIT_LOST;
        if (verbose) say("command ended after the loss%s%s", NULL, NULL);
        return 1;
    }
    *code = child_code(r->child_status);
    /* not HELD any more is lost too: ldl_lock_valid_ms (loop_watch) ends a lease whose
       deadline passed without r->lost, and may be the first to see it after a stop */
    if (ldl_lock_state(&r->lock) != LDL_HELD || ldl_lock_poll(&r->lock) != 1) {
        say("lease '%s' expired as the command ended: its work may not have been exclusive%s",
            o->key, NULL);
        *code = EXIT_LOST;
        *lost = 1;
        return 1;
    }
    r->judged_ok = 1;
    if (!o->min_hold_ms || stopping || ldl_lock_state(&r->lock) != LDL_HELD ||
        t >= r->grant_t + o->min_hold_ms)
        return 1;
    r->hold_end = r->grant_t + o->min_hold_ms;
    if (verbose) {
        snprintf(num, sizeof num, "%llu", (unsigned long long)(r->hold_end - t));
        say("command done; '%s' is held %s ms more (--min-hold)", o->key, num);
    }
    return 0;
}

static void write_metrics(run *r, const opts *o, int code);

/* --detach-hold: the caller gets COMMAND's status now; a child of this process,
   in its own session with no terminal and its output on /dev/null (cron waits for
   the output pipe to close), keeps renewing until the hold ends */
static void detach(run *r, const opts *o, int code) {
    pid_t pid;
    int fd;
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid < 0) {
        SYS_ERR("fork (--detach-hold): %s: the hold stays in the foreground%s", strerror(errno), NULL);
        return;
    }
    if (pid > 0) {                           /* the store's link is the child's now */
        r->end_wall = wall_s();
        if (o->metrics) write_metrics(r, o, code);
        _exit(code);
    }
    r->detached = 1;
    (void)setsid();
    fd = open("/dev/null", O_RDWR);
    if (fd >= 0) {
        (void)dup2(fd, 0); (void)dup2(fd, 1); (void)dup2(fd, 2);
        if (fd > 2) close(fd);
    }
    verbose = 0;
}

/* ---- --once-per: the done-mark (decision 0711). The period is
   floor(UTC seconds / SECONDS). The mark of period N of KEY is the fence mark of
   the resource "ldl-run-once:KEY:N", written through the store view's fenced write
   (view.ops->fenced, one desc for every store) with the lease's fence while the
   lease is held: Redis the fenced-write script (its command sets "{R}:P:done"
   with a TTL of 3 periods; the mark gets the same TTL), PostgreSQL and SQLite the
   check inside a transaction that also deletes the marks of KEY's periods before
   N - 1. A stale holder (a lower fence than one that wrote the mark) writes
   nothing. The check: does the mark exist. */
static uint64_t period_now(const opts *o) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec / o->once_per_s;
}

static void once_resource(const opts *o, uint64_t period, char *buf, size_t n) {
    snprintf(buf, n, "ldl-run-once:%s:%llu", o->key, (unsigned long long)period);
}

/* the fenced write of period's mark: 1 written, 0 stale (a higher fence wrote
   it), -1 store error (printed) */
static int done_mark_put(run *r, const opts *o, cli_store *m, uint64_t period) {
    static mark_write mw;
    int64_t fence = ldl_lock_fencing_token(&r->lock);
    int rc;
    memset(&mw, 0, sizeof mw);
    once_resource(o, period, mw.res, sizeof mw.res);
    once_resource(o, period ? period - 1u : 0u, mw.prev, sizeof mw.prev);
    mw.w.resource = mw.res;
    mw.w.fence = fence;
    if (m->drv->mark_form(m, o, &mw) != 0) return -1;
    rc = m->v.ops->fenced(m->v.self, &mw.w);
    if (rc != 0 && rc != 1) STORE_ERR("--once-per: %s: %s", m->drv->label, store_why(m));
    return m->drv->mark_end(m, o, &mw, rc);
}

/* after the grant: is this period's run done? 1 yes (say so), 0 no, -1 store error */
static int done_mark_ask(run *r, const opts *o) {
    cli_store *m = &side;
    int rc;
    char num[24], res[LDL_KEY_MAX + 64];
    watchdog(2u * o->io_ms, "asking whether the period's run is done");
    r->period = period_now(o);
    once_resource(o, r->period, res, sizeof res);
    rc = store_open(m, o, FOR_MARK, &r->st) == 0 ? m->drv->mark_exists(m, o, res) : -1;
    store_close(m);
    watchdog(0, NULL);
    if (rc == 1 && !o->quiet) {
        snprintf(num, sizeof num, "%llu", (unsigned long long)r->period);
        say("'%s': the run of period %s (--once-per) is done already: COMMAND not run", o->key, num);
    }
    return rc;
}

/* after a run that exited 0: record the period as done (the period the run
   started in). A failure is said (store error) and leaves the exit code alone. */
static void done_mark_write(run *r, const opts *o) {
    cli_store *m = &side;
    int rc;
    char num[24];
    watchdog(2u * o->io_ms, "recording the period's run");
    rc = store_open(m, o, FOR_MARK, &r->st) == 0 ? done_mark_put(r, o, m, r->period) : -1;
    store_close(m);
    watchdog(0, NULL);
    snprintf(num, sizeof num, "%llu", (unsigned long long)r->period);
    if (rc == 1 && verbose) say("'%s': the run of period %s is recorded as done", o->key, num);
    if (rc == 0) say("'%s': the run of period %s is not recorded: a higher fence wrote the mark "
                     "(this holder was overtaken)", o->key, num);
    if (rc < 0) STORE_ERR("'%s': the run of period %s is not recorded as done: another host may run it again",
                          o->key, num);
}

/* ---- --metrics FILE: Prometheus text format 0.0.4, written to FILE.tmp.PID and
   renamed over FILE. Label values: \ " and newline escaped as the format asks;
   bytes that are not UTF-8 as the text \xHH (the format is UTF-8). */
static void metrics_label(const char *s, char *out, size_t cap) {
    static const char hex[] = "0123456789abcdef";
    size_t n = 0;
    const unsigned char *p = (const unsigned char *)s;
    while (*p && n + 8 < cap) {
        unsigned c = *p;
        size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        size_t k;
        int valid = len > 0;
        for (k = 1; valid && k < len; k++) if ((p[k] & 0xC0) != 0x80) valid = 0;
        if (valid && len == 2 && c < 0xC2) valid = 0;                 /* overlong */
        if (valid && len == 3 && ((c == 0xE0 && p[1] < 0xA0) || (c == 0xED && p[1] > 0x9F))) valid = 0;
        if (valid && len == 4 && ((c == 0xF0 && p[1] < 0x90) || c > 0xF4 || (c == 0xF4 && p[1] > 0x8F))) valid = 0;
        if (!valid) {
            out[n++] = '\\'; out[n++] = '\\'; out[n++] = 'x';
            out[n++] = hex[c >> 4]; out[n++] = hex[c & 15];
            p++;
        } else if (c == '\\' || c == '"') {
            out[n++] = '\\'; out[n++] = (char)c; p++;
        } else if (c == '\n') {
            out[n++] = '\\'; out[n++] = 'n'; p++;
        } else {
            for (k = 0; k < len; k++) out[n++] = (char)p[k];
            p += len;
        }
    }
    out[n] = 0;
}

static void write_metrics(run *r, const opts *o, int code) {
    char lab[4 * LDL_KEY_MAX + 16], tmp[4096], prefix[4 * LDL_KEY_MAX + 96];
    double last_ok = 0;
    FILE *f;
    int fd, ok;
    const ldl_counters *c = ldl_lock_counters(&r->lock);
    uint32_t renew_fail = r->granted ? c->store_errors - r->errs_at_grant : 0;
    metrics_label(o->key, lab, sizeof lab);
    /* last success carries over from the file as it was (a failed run keeps it) */
    snprintf(prefix, sizeof prefix, "ldl_run_last_success_timestamp_seconds{key=\"%s\"} ", lab);
    if ((f = fopen(o->metrics, "r")) != NULL) {
        static char line[8192];
        while (fgets(line, sizeof line, f))
            if (!strncmp(line, prefix, strlen(prefix))) last_ok = strtod(line + strlen(prefix), NULL);
        fclose(f);
    }
    if (code == 0 && r->child_started) last_ok = r->end_wall;
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", o->metrics, (long)getpid()) >= (int)sizeof tmp) {
        SYS_ERR("--metrics: file name too long%s%s", NULL, NULL);
        return;
    }
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || !(f = fdopen(fd, "w"))) {
        SYS_ERR("--metrics: %s: %s", tmp, strerror(errno));
        if (fd >= 0) close(fd);
        return;
    }
#define GAUGE(name, help) fprintf(f, "# HELP " name " " help "\n# TYPE " name " gauge\n")
    GAUGE("ldl_run_last_start_timestamp_seconds", "When ldl-run last started for this key (Unix time).");
    fprintf(f, "ldl_run_last_start_timestamp_seconds{key=\"%s\"} %.3f\n", lab, r->start_wall);
    GAUGE("ldl_run_last_success_timestamp_seconds", "When a run of COMMAND last ended with exit 0 (Unix time; 0: never seen).");
    fprintf(f, "ldl_run_last_success_timestamp_seconds{key=\"%s\"} %.3f\n", lab, last_ok);
    GAUGE("ldl_run_duration_seconds", "How long COMMAND ran in the last run (0: it did not run).");
    fprintf(f, "ldl_run_duration_seconds{key=\"%s\"} %.3f\n", lab,
            r->child_started && r->job_end_wall > r->spawn_wall ? r->job_end_wall - r->spawn_wall : 0.0);
    GAUGE("ldl_run_lease_wait_seconds", "How long the last run waited for the lease (until granted or given up).");
    fprintf(f, "ldl_run_lease_wait_seconds{key=\"%s\"} %.3f\n", lab, r->wait_s);
    GAUGE("ldl_run_held_seconds", "How long the last run held the lease (grant to release; with --detach-hold until the exit).");
    fprintf(f, "ldl_run_held_seconds{key=\"%s\"} %.3f\n", lab,
            r->granted && r->end_wall > r->grant_wall ? r->end_wall - r->grant_wall : 0.0);
    GAUGE("ldl_run_fence", "The fencing token of the last run's lease (0: not acquired).");
    fprintf(f, "ldl_run_fence{key=\"%s\"} %lld\n", lab, (long long)r->fence);
    GAUGE("ldl_run_renew_failures", "Store errors met while the last run held the lease (renews ridden out, a release).");
    fprintf(f, "ldl_run_renew_failures{key=\"%s\"} %lu\n", lab, (unsigned long)renew_fail);
    GAUGE("ldl_run_exit_status", "ldl-run's exit status of the last run (COMMAND's, or ldl-run's own: see --help).");
    fprintf(f, "ldl_run_exit_status{key=\"%s\"} %d\n", lab, code);
#undef GAUGE
    ok = fflush(f) == 0 && fsync(fd) == 0;
    ok = (fclose(f) == 0) && ok;
    if (!ok || rename(tmp, o->metrics) != 0) {
        SYS_ERR("--metrics: %s: %s", o->metrics, strerror(errno));
        (void)unlink(tmp);
    }
}


/* ------------------------------------------------------------------ main */
static int escalates(int sig) {              /* decision 0702: these end the job */
    return sig == SIGHUP || sig == SIGINT || sig == SIGQUIT || sig == SIGTERM;
}

static void set_kill(uint64_t *kill_at, uint64_t t) {
    if (!*kill_at || t < *kill_at) *kill_at = t;
}

static void store_pump(cli_store *s) {
    s->drv->pump(s);
}

/* who we are, stored with the lease: --owner, else ldl-run@HOST:PID */
static const char *owner_name(const opts *o) {
    static char me[LDL_OWNER_MAX];
    char host[48];
    int i;
    if (o->owner) return o->owner;
    if (gethostname(host, sizeof host) != 0) host[0] = 0;
    host[sizeof host - 1] = 0;
    snprintf(me, sizeof me, "ldl-run@%s:%ld", host[0] ? host : "?", (long)getpid());
    for (i = 0; me[i]; i++) if ((unsigned char)me[i] < 0x20 || (unsigned char)me[i] > 0x7E) me[i] = '?';
    return me;
}

/* the loss schedule must fit: TERM when the time left reaches --grace, which must
   come after the renew that is due (ttl - heartbeat - drift) -- decision 0702.
   0, or EXIT_USAGE (said) */
static int grace_fits(opts *o, uint32_t hb, uint32_t drift) {
    char num[24], num2[24];
    uint64_t room = (uint64_t)o->ttl_ms - hb - drift;
    if (o->grace_ms < room) return 0;
    snprintf(num, sizeof num, "%llu", (unsigned long long)o->grace_ms);
    snprintf(num2, sizeof num2, "%llu", (unsigned long long)room);
    if (o->grace_set) {
        say("usage: --grace %s ms does not fit this lease: it must be < ttl - heartbeat - drift = %s ms "
            "(SIGTERM comes --grace before the lease's deadline, after the renew that is due)", num, num2);
        return EXIT_USAGE;
    }
    o->grace_ms = room / 2u;
    if (verbose) {
        snprintf(num, sizeof num, "%llu", (unsigned long long)o->grace_ms);
        say("the default --grace (10 s) does not fit this lease (ttl - heartbeat - drift = %s ms): %s ms", num2, num);
    }
    return 0;
}

/* the lock first: a bad key, TTL or heartbeat is a usage error, before any
   connect. 0, or EXIT_USAGE (said) */
static int lock_desc(run *r, opts *o, ldl_lock_desc *d) {
    uint32_t hb;
    const char *why;
    memset(d, 0, sizeof *d);
    ldl_scope_init(&r->root, r->pool, 1);
    d->container = ldl_scope_container(&r->root);
    d->key = o->key;
    d->ttl_ms = o->ttl_ms;
    d->heartbeat_ms = o->heartbeat_ms;
    hb = o->heartbeat_ms ? o->heartbeat_ms : o->ttl_ms / 3u;       /* the library's default */
    /* drift: the library's TTL/100 + 2, raised to KILL_LEAD_MS when that still fits
       (a third of ttl - heartbeat at most): the SIGKILL sent at the local deadline
       then has that long to land before the store frees KEY */
    d->drift_ms = o->ttl_ms / 100u + 2u;
    if (d->drift_ms < KILL_LEAD_MS && o->ttl_ms > hb && KILL_LEAD_MS < (o->ttl_ms - hb) / 3u)
        d->drift_ms = KILL_LEAD_MS;
    if (!o->nonblock && !(o->wait_set && o->wait_ms == 0)) {   /* wait: the library's schedule */
        d->retry.base_ms = RETRY_BASE_MS;
        d->retry.cap_ms = RETRY_CAP_MS;
        d->retry.give_up_ms = o->wait_set ? (o->wait_ms > UINT32_MAX ? UINT32_MAX : (uint32_t)o->wait_ms) : 0;
    }
    d->owner = o->owner = owner_name(o);
    if ((why = probe(d)) != NULL) { say("usage: bad option: %s%s", why, NULL); return EXIT_USAGE; }
    /* riding out a store error: the renew is tried again every RIDE_OUT_MS while the
       lease is trusted (decision 0703) */
    d->ride_out_ms = RIDE_OUT_MS < o->ttl_ms - d->drift_ms - 1u ? RIDE_OUT_MS : 1u;
    return grace_fits(o, hb, d->drift_ms);
}

/* the store's view for the run, then the lock on it; 0 or an exit code (said) */
static int lock_open(run *r, const opts *o, ldl_lock_desc *d) {
    int rc;
    watchdog(2u * o->io_ms, "while connecting");
    rc = store_open(&r->st, o, FOR_RUN, NULL);
    watchdog(0, NULL);
    in_setup = 0;
    if (rc) return rc;
    d->async_store = &r->st.v.async;
    d->store_ext = &r->st.v.ext;
    if (!r->st.v.ext.submit_owned) {         /* a PostgreSQL table from before v0.2 */
        if (verbose) say("this store keeps no owner: '%s' is not stored%s", d->owner, NULL);
        d->owner = NULL;
        d->store_ext = NULL;
    }
    if (ldl_lock_init(&r->lock, d) != LDL_OK) {
        say("usage: bad option: %s%s", ldl_lock_why(&r->lock), NULL);
        store_close(&r->st);
        return EXIT_USAGE;
    }
    return 0;
}

/* KEY held: the grant's figures; --once-per asks whether the period's run is done.
   1 go on; 0 not (r->code set, which may be 0: --done-exit-code 0) */
static int granted(run *r, const opts *o) {
    int rc;
    r->grant_t = now_ms();
    r->grant_wall = wall_s();
    r->granted = 1;
    r->fence = ldl_lock_fencing_token(&r->lock);
    r->errs_at_grant = ldl_lock_counters(&r->lock)->store_errors;
    r->st.ride_out = 1;
    if (verbose) {
        char num[24];
        snprintf(num, sizeof num, "%lld", (long long)r->fence);
        say("acquired '%s' with fence %s", o->key, num);
    }
    if (!o->once_per_s) return 1;            /* under the lease: is this period's run done? */
    rc = done_mark_ask(r, o);
    if (rc == 0) return 1;
    r->code = rc == 1 ? o->done_code : EXIT_STORE;
    r->judged = 1;
    return 0;
}

/* COMMAND started in its own group, with LDL_KEY and LDL_FENCE; 0, or the exit code */
static int start_job(run *r, const opts *o) {
    sigset_t block, oldmask;
    char fence[24];
    int i;
    snprintf(fence, sizeof fence, "%lld", (long long)ldl_lock_fencing_token(&r->lock));
    /* overwrite: an LDL_KEY / LDL_FENCE from the caller's environment must not reach
       the command */
    if (setenv("LDL_KEY", o->key, 1) != 0 || setenv("LDL_FENCE", fence, 1) != 0) {
        SYS_ERR("setenv: %s%s", strerror(errno), NULL);
        return EXIT_OSERR;
    }
#ifdef __linux__
    /* orphans of the job come back to us: we reap them, and the /proc walk finds
       every descendant that left the group */
    (void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
#endif
    sigemptyset(&block);
    for (i = 0; i < NFWD; i++) sigaddset(&block, fwd_sigs[i]);
    sigaddset(&block, SIGCHLD);
    sigprocmask(SIG_BLOCK, &block, &oldmask);      /* no handler runs in the child */
    r->spawn_wall = wall_s();
    r->child = spawn(o->cmd, &oldmask);
    sigprocmask(SIG_SETMASK, &oldmask, NULL);
    if (r->child < 0) {
        SYS_ERR("fork: %s%s", strerror(errno), NULL);
        return EXIT_OSERR;
    }
    r->pgid = r->child;
    r->child_started = 1;
    return 0;
}

/* the store's own why after a loss line, when it has one */
static void say_store_why(const run *r) {
    if (store_why(&r->st)[0]) sayx(NULL, "store: %s%s", NULL, store_why(&r->st));
}

/* the job is gone (1: the run is over) or it is time to act on the lease's time
   left: the leftovers, the early end of a hold, the doom, the SIGKILL. *tp, *leftp:
   now and the lease's time left. 1: leave the loop. */
static int loop_watch(run *r, const opts *o, uint64_t *tp, uint64_t *leftp) {
    uint64_t t, left = 0;
    char num[24];
    reap(r);
    if (!r->in_hold && r->child_done && !job_alive(r)) {
        int over = job_ended(r, o, &r->code, &r->lost, r->doomed, r->stopping);
        /* --once-per: a successful run records its period now, fenced, under the
           lease -- before any hold, so that a hold cut short or detached cannot lose it */
        if (o->once_per_s && r->code == 0 && r->judged_ok) done_mark_write(r, o);
        if (over) return 1;
        r->in_hold = 1;
        if (o->detach_hold) detach(r, o, r->code);
    }
    *tp = t = now_ms();
    if (r->in_hold && (r->stopping || t >= r->hold_end)) return 1;
    if (ldl_lock_state(&r->lock) == LDL_HELD) {
        left = ldl_lock_valid_ms(&r->lock);
        if (ldl_lock_state(&r->lock) == LDL_HELD) r->trust_end = t + left;
    }
    *leftp = left;
    if (!r->in_hold && r->child_done && !r->leftovers && !r->killed) {
        /* the command is gone but the job is not: it ends with the command */
        if (verbose) say("command exited; terminating what is left of the job%s%s", NULL, NULL);
        signal_job(r, SIGTERM);
        r->leftovers = 1;
        set_kill(&r->kill_at, t + o->grace_ms);
    }
    if (r->in_hold && ldl_lock_state(&r->lock) == LDL_HELD && left <= o->grace_ms) {
        /* nothing of the job is left to end: the hold just ends early */
        snprintf(num, sizeof num, "%llu", (unsigned long long)left);
        say("the hold of '%s' ends early: no renew succeeded, %s ms left", o->key, num);
        say_store_why(r);
        return 1;
    }
    if (!r->in_hold && !r->lost && !r->doomed && ldl_lock_state(&r->lock) == LDL_HELD && left <= o->grace_ms) {
        /* no renew has succeeded for long enough that only --grace is left */
        r->doomed = 1;
        snprintf(num, sizeof num, "%llu", (unsigned long long)left);
        say("lease '%s': no renew succeeded, %s ms left: SIGTERM to the job, SIGKILL at the "
            "lease's deadline", o->key, num);
        say_store_why(r);
        signal_job(r, SIGTERM);
        set_kill(&r->kill_at, r->trust_end);
    }
    if (!r->in_hold && r->kill_at && t >= r->kill_at) {
        reap(r);
        if (!r->child_done || job_alive(r)) {
            if (!r->killed) say("grace period over: SIGKILL to the job%s%s", NULL, NULL);
            signal_job(r, SIGKILL);          /* again at every turn: a fork may race it */
        }
        r->killed = 1;
    }
    return 0;
}

/* how long the loop may wait at t, with left ms of the lease */
static int loop_timeout(run *r, const opts *o, uint64_t t, uint64_t left) {
    int timeout = clamp_ms(ldl_lock_due_in_ms(&r->lock), 1000);
    if (r->in_hold) {
        if (r->hold_end - t < (uint64_t)timeout) timeout = (int)(r->hold_end - t);
    } else {
        if (r->child_done || r->killed) timeout = timeout < GROUP_CHECK_MS ? timeout : GROUP_CHECK_MS;
        if (r->kill_at && !r->killed) {
            if (t >= r->kill_at) timeout = 0;
            else if (r->kill_at - t < (uint64_t)timeout) timeout = (int)(r->kill_at - t);
        }
    }
    if (!r->lost && !r->doomed && left > o->grace_ms && left - o->grace_ms < (uint64_t)timeout)
        timeout = (int)(left - o->grace_ms);
    return timeout;
}

/* the signals received: forwarded to the job, or ending the hold. 0 go on, 1 back
   to the top (the job ended), 2 leave the loop */
static int loop_signals(run *r, const opts *o, unsigned sigs) {
    int i;
    /* the job ended: the lease is judged once more, at the top (job_ended: an
       ldl-run that was stopped past the deadline must not pass the command's 0
       on), before any poll here could read the same expiry as a loss of a running
       job. A HUP/INT/QUIT/TERM that came with the end still cancels the hold. */
    reap(r);
    if (!r->in_hold && r->child_done && !job_alive(r)) {
        for (i = 0; i < NFWD; i++)
            if ((sigs & (1u << i)) && escalates(fwd_sigs[i])) r->stopping = 1;
        return 1;
    }
    for (i = 0; i < NFWD; i++) {
        if (!(sigs & (1u << i))) continue;
        /* HUP INT QUIT TERM end the hold at once (release), or, while the job
           runs, also cancel the hold to come */
        if (escalates(fwd_sigs[i])) {
            if (r->in_hold && verbose) say("signal %s: the hold ends now%s", strsignal(fwd_sigs[i]), NULL);
            r->stopping = 1;
        }
        if (r->in_hold) continue;            /* nothing of the job is left to signal */
        if (verbose) say("forwarding signal %s%s", strsignal(fwd_sigs[i]), NULL);
        signal_job(r, fwd_sigs[i]);
        r->forwarded = 1;
        /* a job that ignores the signal that was to end it gets SIGKILL */
        if (escalates(fwd_sigs[i])) set_kill(&r->kill_at, now_ms() + o->grace_ms);
    }
    return r->in_hold && r->stopping ? 2 : 0;
}

/* the lease polled: renewed, or lost (the job terminated; a hold just ends).
   1: leave the loop */
static int loop_poll(run *r, const opts *o) {
    uint64_t t;
    int pr;
    if (r->lost) return 0;
    pr = ldl_lock_poll(&r->lock);
    if (pr != 1 && r->in_hold) {
        say("the hold of '%s' ends early: lease lost (%s)", o->key,
            ldl_reason_name(ldl_lock_reason(&r->lock)));
        if (ldl_lock_reason(&r->lock) == LDL_REASON_HEARTBEAT_FAILED) say_taken(r, o, "the hold of");
        else say_store_why(r);
        r->lost_in_hold = 1;
        return 1;
    }
    if (pr != 1) {
        r->lost = 1;
        say("lease '%s' lost (%s): terminating the job", o->key,
            ldl_reason_name(ldl_lock_reason(&r->lock)));
        if (ldl_lock_reason(&r->lock) == LDL_REASON_HEARTBEAT_FAILED) say_taken(r, o, "lease");
        else say_store_why(r);
        reap(r);
        if (!r->child_done || job_alive(r)) {
            if (!r->doomed) signal_job(r, SIGTERM);
            t = now_ms();
            set_kill(&r->kill_at, t + o->grace_ms < r->trust_end ? t + o->grace_ms : r->trust_end);
        }
    }
    return 0;
}

/* the run: renew, forward signals, watch the child and then the rest of the job;
   then, with --min-hold, keep the lease until the hold ends (decision 0710) */
static void run_job(run *r, const opts *o) {
    for (;;) {
        uint64_t t = 0, left = 0;
        int s;
        if (loop_watch(r, o, &t, &left)) break;
        s = loop_signals(r, o, wait_events(r, loop_timeout(r, o, t, left)));
        if (s == 1) continue;
        if (s == 2 || loop_poll(r, o)) break;
    }
}

/* bounded: a store that does not answer the release within --store-timeout is left
   to lapse the lease at its TTL */
static void release_lease(run *r, const opts *o) {
    int rr, was_held = ldl_lock_state(&r->lock) == LDL_HELD;
    uint64_t rel_end = now_ms() + o->io_ms;
    if (!was_held && ldl_lock_state(&r->lock) != LDL_LOST) return;
    rr = ldl_lock_release(&r->lock);
    while (rr == LDL_EINPROGRESS && now_ms() < rel_end) {
        int tmo = clamp_ms(ldl_lock_due_in_ms(&r->lock), 1000);
        uint64_t t = now_ms();
        if ((uint64_t)tmo > rel_end - t) tmo = (int)(rel_end - t);
        (void)wait_events(r, tmo);
        rr = ldl_lock_release(&r->lock);
    }
    if (rr == 0 && was_held && !r->lost && !r->lost_in_hold) {
        say_taken(r, o, "release of");       /* the store said "not yours" */
    } else if (verbose || (rr != 1 && !r->lost && !r->lost_in_hold)) {
        say(rr == 1 ? "released '%s'%s" : "release of '%s' not confirmed: it lapses at its TTL%s",
            o->key, NULL);
    }
}

/* the end of every run that reached the store: the metrics, the store closed after
   a few pumps (a hand-back, a release going out) */
static int finish(run *r, const opts *o, int pumps) {
    int i;
    r->end_wall = wall_s();
    if (o->metrics && !r->detached) write_metrics(r, o, r->code);
    ldl_lock_dispose(&r->lock);
    for (i = 0; i < pumps; i++) store_pump(&r->st);
    store_close(&r->st);
    return r->code;
}

int main(int argc, char **argv) {
    static run r;
    opts o;
    ldl_lock_desc d;
    int rc;

    rc = parse_args(argc, argv, &o);
    if (rc == -1) return 0;
    if (rc) return rc;
    if (o.status) return show_status(&o);
    r.start_wall = wall_s();

    in_setup = 1;                            /* until the store is open: a signal ends us */
    if (install_signals() != 0) { SYS_ERR("signals: %s%s", strerror(errno), NULL); return EXIT_OSERR; }
    if ((rc = lock_desc(&r, &o, &d)) != 0) return rc;
    if ((rc = lock_open(&r, &o, &d)) != 0) return rc;
    {
        uint64_t t0 = now_ms();
        rc = acquire_loop(&r, &o, &r.code);
        r.wait_s = (double)(now_ms() - t0) / 1000.0;
    }
    if (rc != 1) return finish(&r, &o, 5);   /* let a hand-back go out */
    if (granted(&r, &o) && (r.code = start_job(&r, &o)) == 0) run_job(&r, &o);
    release_lease(&r, &o);
    return finish(&r, &o, 3);
}
