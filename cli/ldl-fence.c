/* ldl-fence -- a fenced write for shell jobs: ldl-run's companion (issue 19).

       ldl-fence pg    [options] --resource NAME FILE.sql
       ldl-fence redis [options] --resource NAME [--keys N] -- CMD [ARG...]

   ldl-run hands its job the lease's fencing token in LDL_FENCE. ldl-fence makes
   the resource itself refuse a write that carries a fence lower than one that
   has already written there (a holder paused past its lease, continued after
   its successor wrote), with the adapters' fence protocol:
     pg     BEGIN; ldl_pg_fence(resource, fence); the file; COMMIT -- one
            transaction: the check, the raised mark and the file's writes
            commit together or not at all. Stale: ROLLBACK, exit 77.
     redis  the adapter's fenced-write script: compare and raise the mark and
            run CMD atomically on the server; its reply is printed. Stale: CMD
            did not run, exit 77.
   The fence comes from $LDL_FENCE (what ldl-run exports); --fence N overrides.
   `ldl-fence --help` lists the options and exit codes; decision record
   docs/decisions/0704-ldl-fence.md says why it is built this way.

   One short-lived process, synchronous store calls: every store step is bounded
   by --store-timeout through a SIGALRM watchdog that ends the process (the
   connection closes with it, so PostgreSQL rolls the transaction back unless
   the unanswered step was the COMMIT itself: then the outcome is unknown, and
   stderr says so). Everything printed from outside (server texts, replies,
   names) is escaped: bytes outside printable ASCII appear as \xHH. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
/* a fenced command's reply may be up to 64 KiB (the adapter's default is 4 KiB) */
#define LDL_REDIS_REPLY_MAX (64 * 1024)
#define LDL_REDIS_IMPLEMENTATION
#include "adapters/lite_di_lock_redis.h"
#define LDL_PG_IMPLEMENTATION
#include "adapters/lite_di_lock_pg.h"
#include "adapters/lite_di_lock_view.h"   /* the fenced write through one desc (decision 0713) */
#include <pg_query.h>   /* PostgreSQL's parser, for the gate (libpg-query-dev) */

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define FENCE_VERSION LDL_VERSION /* the header's version: one source */

/* exit codes (also in --help, the README paragraph and decision 0704). None of
   them is one of ldl-run's own codes (1, 64's meaning aside, 69, 71, 75), so the
   status of an ldl-fence run as ldl-run's COMMAND passes through readable. */
#define EXIT_OK        0
#define EXIT_USAGE     64   /* bad option, argument or fence (sysexits EX_USAGE): nothing sent */
#define EXIT_DATAERR   65   /* the SQL file or the Redis command failed (EX_DATAERR): rolled back */
#define EXIT_NOINPUT   66   /* FILE.sql unreadable, too large, holds a NUL (EX_NOINPUT): nothing sent */
#define EXIT_STORE     69   /* store unreachable, refusing or failing (EX_UNAVAILABLE) */
#define EXIT_ENDED     70   /* the backstop: the file ended the fenced transaction after all (EX_SOFTWARE) */
#define EXIT_OSERR     71   /* system error (EX_OSERR) */
#define EXIT_STALE     77   /* stale fence: a higher fence has written; nothing written (EX_NOPERM) */
#define EXIT_TIMEOUT   124  /* no answer within the bound (timeout(1)'s code) */

#define CLI_NAME "ldl-fence"
#define CLI_WATCHDOG_EXIT EXIT_TIMEOUT
#include "cli/ldl_cli.h"   /* esc, say, usage_error, parse_*, the watchdog */

#define SQL_MAX (16u * 1024u * 1024u)   /* FILE.sql: at most 16 MiB */
#define ARG_MAX_BYTES (16u * 1024u * 1024u) /* the Redis command's arguments: 16 MiB in all */

static const char usage_text[] =
"usage: ldl-fence pg    [options] --resource NAME FILE.sql\n"
"       ldl-fence redis [options] --resource NAME [--keys N] -- CMD [ARG...]\n"
"\n"
"A fenced write for a job run by ldl-run: the resource refuses it when a higher\n"
"fencing token has already written there (this holder was paused past its lease\n"
"and a successor took over). The fence is $LDL_FENCE, which ldl-run exports to its\n"
"job; --fence N overrides it. One resource is guarded by ONE lock key: fences of\n"
"different keys are not comparable.\n"
"\n"
"ldl-fence pg: run FILE.sql in ONE PostgreSQL transaction: BEGIN; the fence check\n"
"(the adapter's ldl_pg_fence: equal or higher than the resource's mark passes and\n"
"raises it); the file; COMMIT. Stale, or the file fails: ROLLBACK, nothing of it\n"
"is visible. FILE.sql (- for stdin): at most 16 MiB, no NUL byte, sent as one\n"
"multi-statement query. Before anything is sent, PostgreSQL 15's own parser\n"
"(libpg_query) reads it: a statement that would end or nest the transaction\n"
"(BEGIN, START, COMMIT, END, ROLLBACK, ABORT, PREPARE TRANSACTION, COMMIT/ROLLBACK\n"
"PREPARED) is refused, and so is a file the parser cannot read; SAVEPOINT,\n"
"RELEASE and ROLLBACK TO are fine; a COMMIT inside CALL or DO is the server's\n"
"error (the block runs them atomically). The session must have\n"
"standard_conforming_strings on (client_encoding is set to UTF8). No COPY FROM\n"
"STDIN / TO STDOUT. Its query results are read one row at a time, not printed.\n"
"In it, current_setting('ldl.fence') and current_setting('ldl.resource') are\n"
"the fence and the resource (set local to the transaction).\n"
"  --conninfo CONNINFO    libpq conninfo or URI (default: libpq's environment,\n"
"                         PGHOST, PGPORT, PGDATABASE, ...); --pg is the same\n"
"  --table NAME           the fence table is NAME_fence (default ldl_lease, so\n"
"                         ldl_lease_fence; created if missing; docs/postgres.md)\n"
"  --timeout SECONDS      the server cancels a statement of FILE.sql that runs\n"
"                         longer (statement_timeout, local to the transaction); the\n"
"                         whole file is given up after SECONDS + --store-timeout\n"
"                         (default: no bound; decimals allowed)\n"
"  --unnamed              no named prepared statements (pgbouncer in transaction\n"
"                         pooling before 1.21)\n"
"\n"
"ldl-fence redis: run CMD ARG... through the adapter's fenced-write script: the\n"
"resource's mark is compared, raised and CMD run in one atomic script. The first\n"
"N ARGs are the keys CMD touches (--keys N; default 1, or 0 when CMD has no ARG;\n"
"declared to the script, which refuses one that is the mark's own name).\n"
"The reply is printed on stdout, one line per value:\n"
"  +TEXT  status    -TEXT  error (inside an array)    :N  integer\n"
"  $BYTES string    _      nil    *N  array of the N values on the next lines\n"
"TEXT and BYTES are escaped: printable ASCII as it is, every other byte and the\n"
"backslash as \\xHH, so one value is one line. A reply may hold up to 64 KiB and\n"
"arrays of up to 16 values (the adapter's bounds); at most 64 arguments.\n"
"  --redis HOST:PORT      Redis (numeric address or a name resolved once)\n"
"  --redis /PATH          Redis over a unix socket (any argument holding a '/')\n"
"  --prefix NAME          the adapter's key prefix (default ldl)\n"
"\n"
"Both:\n"
"  --resource NAME        what the write protects (required)\n"
"  --fence N              the fence (default $LDL_FENCE): 1..9223372036854775807,\n"
"                         decimal digits only; anything else exits 64, nothing sent\n"
"  --store-timeout SECONDS  bound on every store step: the name's resolution and\n"
"                         the connect, each statement of the protocol, the script\n"
"                         (default 2; decimals allowed)\n"
"  -v, --verbose          say on stderr what was done\n"
"  -h, --help             this text;  -V, --version  the version\n";

static const char usage_more[] =
"\n"
"Exit status:\n"
"  0     written: the transaction committed / the command ran (reply on stdout)\n"
"  64    usage: bad option, argument, resource or fence; nothing was sent\n"
"  65    the SQL file was refused before anything was sent, or failed (rolled\n"
"        back: nothing of it is visible, the mark is unchanged), or the Redis\n"
"        command answered an error (printed on stderr; the mark is unchanged)\n"
"  66    FILE.sql cannot be read, is over 16 MiB or holds a NUL; nothing was sent\n"
"  69    store error: unreachable, refusing (its fence table or script), or failing\n"
"  70    the backstop: FILE.sql ended the fenced transaction although the gate\n"
"        passed it; what ran before that MAY HAVE COMMITTED WITHOUT THE FENCE\n"
"        (do not retry blindly; a gate bug: report it)\n"
"  71    system error\n"
"  77    stale: a higher fence has already written to the resource; rolled back /\n"
"        the command did not run; the resource keeps the newer data\n"
"  124   no answer within --store-timeout (or --timeout): the connection is\n"
"        closed; PostgreSQL rolls back, unless the COMMIT went unanswered (then,\n"
"        as for Redis, the outcome is unknown: stderr says which)\n"
"  128+N ended by signal N (the connection closes: PostgreSQL rolls back, unless\n"
"        the COMMIT was already sent)\n";

static int verbose;

/* bound the next synchronous step to ms (0: disarm); past it the process exits
   124 saying what went unanswered and what that means */
static void watchdog(uint64_t ms, const char *what, const char *outcome) {
    if (ms)
        snprintf(watchdog_msg, sizeof watchdog_msg, "ldl-fence: no answer within %llu ms %s: %s\n",
                 (unsigned long long)ms, what, outcome);
    watchdog_arm(ms);
}

/* ------------------------------------------------------------------ parsing */
/* a fence: decimal digits only, no sign, no space, no leading zero, 1..INT64_MAX.
   NULL when s is one; else why not */
static const char *parse_fence(const char *s, int64_t *out) {
    uint64_t v = 0;
    const char *p;
    if (!s) return "no fence: $LDL_FENCE is not set (run under ldl-run, or give --fence N)";
    if (!*s) return "empty";
    if (*s == '0') return "0 or a leading zero (a fence is >= 1)";
    for (p = s; *p; p++) {
        if (*p < '0' || *p > '9') return "not a decimal number (digits only, no sign or space)";
        if (v > (uint64_t)INT64_MAX / 10u ||
            v * 10u + (uint64_t)(*p - '0') > (uint64_t)INT64_MAX)
            return "above 9223372036854775807 (INT64_MAX)";
        v = v * 10u + (uint64_t)(*p - '0');
    }
    *out = (int64_t)v;
    return NULL;
}

enum { MODE_NONE, MODE_PG, MODE_REDIS };

typedef struct opts {
    int mode;
    const char *conninfo;        /* pg: NULL = libpq's environment */
    const char *table;           /* pg: NULL = the adapter's default */
    const char *redis;           /* redis: HOST:PORT or /PATH */
    const char *prefix;          /* redis: NULL = the adapter's default */
    const char *resource;
    const char *fence_arg;       /* --fence, else $LDL_FENCE */
    int64_t fence;
    uint32_t nkeys;              /* redis: --keys */
    int nkeys_set;
    int unnamed;                 /* pg: --unnamed (LDL_PG_UNNAMED) */
    uint64_t io_ms;              /* --store-timeout */
    uint64_t file_ms;            /* pg: --timeout (0: none) */
    const char *file;            /* pg: FILE.sql or - */
    char **cmd;                  /* redis: CMD ARG... */
    int ncmd;
} opts;

/* 0 ok, -1 after --help / --version, else an exit code */
static int parse_args(int argc, char **argv, opts *o) {
    int i = 1;
    const char *why;
    memset(o, 0, sizeof *o);
    o->io_ms = 2000;
    if (argc < 2) return usage_error("missing pg or redis", NULL);
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        fputs(usage_text, stdout); fputs(usage_more, stdout); return -1;
    }
    if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
        printf("ldl-fence %s (lite_di_lock %s)\n", FENCE_VERSION, LDL_VERSION);
        return -1;
    }
    if (!strcmp(argv[1], "pg")) o->mode = MODE_PG;
    else if (!strcmp(argv[1], "redis")) o->mode = MODE_REDIS;
    else return usage_error("the first argument is pg or redis, got ", argv[1]);
    for (i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (a[0] != '-' || a[1] == 0) break;                 /* FILE.sql, or - for stdin */
        if (!strcmp(a, "--")) { i++; break; }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) { fputs(usage_text, stdout); fputs(usage_more, stdout); return -1; }
        if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) { verbose = 1; continue; }
        if (o->mode == MODE_PG && !strcmp(a, "--unnamed")) { o->unnamed = 1; continue; }
        if (!v) return usage_error("option needs a value: ", a);
        if (!strcmp(a, "--resource")) {
            o->resource = v;
        } else if (!strcmp(a, "--fence")) {
            o->fence_arg = v;
        } else if (!strcmp(a, "--store-timeout")) {
            if (parse_seconds(v, &o->io_ms) || o->io_ms == 0)
                return usage_error("--store-timeout: want seconds > 0, got ", v);
        } else if (o->mode == MODE_PG && (!strcmp(a, "--conninfo") || !strcmp(a, "--pg"))) {
            o->conninfo = v;
        } else if (o->mode == MODE_PG && !strcmp(a, "--table")) {
            o->table = v;
        } else if (o->mode == MODE_PG && !strcmp(a, "--timeout")) {
            if (parse_seconds(v, &o->file_ms) || o->file_ms == 0)
                return usage_error("--timeout: want seconds > 0, got ", v);
        } else if (o->mode == MODE_REDIS && !strcmp(a, "--redis")) {
            o->redis = v;
        } else if (o->mode == MODE_REDIS && !strcmp(a, "--prefix")) {
            o->prefix = v;
        } else if (o->mode == MODE_REDIS && !strcmp(a, "--keys")) {
            if (parse_u32(v, &o->nkeys) || o->nkeys > 1000000u)
                return usage_error("--keys: want a count 0..1000000, got ", v);
            o->nkeys_set = 1;
        } else {
            return usage_error(o->mode == MODE_PG ? "unknown option for pg: " : "unknown option for redis: ", a);
        }
        i++;
    }
    if (!o->resource) return usage_error("missing --resource NAME", NULL);
    if (!o->resource[0]) return usage_error("--resource: empty", NULL);
    if (!o->fence_arg) o->fence_arg = getenv("LDL_FENCE");
    if ((why = parse_fence(o->fence_arg, &o->fence)) != NULL) {
        if (!o->fence_arg) return usage_error(why, NULL);
        say("bad fence '%s': %s", o->fence_arg, why);
        fprintf(stderr, "Try 'ldl-fence --help'.\n");
        return EXIT_USAGE;
    }
    if (o->mode == MODE_PG) {
        if (i >= argc) return usage_error("missing FILE.sql", NULL);
        o->file = argv[i++];
        if (i < argc) return usage_error("one FILE.sql only; extra argument: ", argv[i]);
    } else {
        if (!o->redis) return usage_error("no store: give --redis HOST:PORT or --redis /PATH", NULL);
        if (i >= argc) return usage_error("missing the command: -- CMD [ARG...]", NULL);
        o->cmd = argv + i;
        o->ncmd = argc - i;
        if (!o->nkeys_set) o->nkeys = o->ncmd > 1 ? 1u : 0u;   /* most writes name their key first */
        if ((uint32_t)(o->ncmd - 1) < o->nkeys)
            return usage_error("--keys is more than the command's arguments", NULL);
    }
    return 0;
}

/* ------------------------------------------------------------------ FILE.sql */
/* read path (- : stdin) into a NUL-terminated heap buffer of at most SQL_MAX
   bytes; refuse a NUL byte (libpq's query text ends at the first NUL: the rest
   would be dropped unseen). NULL with a message printed. */
static char *read_sql(const char *path, size_t *lenp) {
    int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0;
    size_t cap = 65536, len = 0;
    char *buf;
    struct stat st;
    if (fd < 0) { say("%s: %s", path, strerror(errno)); return NULL; }
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        say("%s: %s", path, "is a directory");
        if (fd) close(fd);
        return NULL;
    }
    buf = (char *)malloc(cap + 1);
    if (!buf) { say("out of memory%s%s", NULL, NULL); if (fd) close(fd); return NULL; }
    for (;;) {
        ssize_t k;
        if (len == cap) {
            char *nb;
            if (cap > SQL_MAX) break;
            cap = cap * 2u > SQL_MAX + 1u ? SQL_MAX + 1u : cap * 2u;
            nb = (char *)realloc(buf, cap + 1);
            if (!nb) { free(buf); say("out of memory%s%s", NULL, NULL); if (fd) close(fd); return NULL; }
            buf = nb;
        }
        k = read(fd, buf + len, cap - len);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            say("%s: %s", path, strerror(errno));
            free(buf); if (fd) close(fd); return NULL;
        }
        if (k == 0) break;
        len += (size_t)k;
    }
    if (fd) close(fd);
    if (len > SQL_MAX) {
        say("%s: more than 16 MiB%s", path, NULL);
        free(buf);
        return NULL;
    }
    if (memchr(buf, 0, len)) {
        say("%s: holds a NUL byte (not SQL text)%s", path, NULL);
        free(buf);
        return NULL;
    }
    buf[len] = 0;
    *lenp = len;
    return buf;
}

/* ------------------------------------------------------------------ the gate */
/* Whether FILE.sql could end the fenced transaction is judged by PostgreSQL's
   own parser (libpg_query: PostgreSQL 15's scanner and grammar, not a lexer of
   ours; decision 0705). Of the file's top-level statements, every transaction
   statement is refused except SAVEPOINT, RELEASE and ROLLBACK TO (they cannot
   reach past the fence check, which runs before any savepoint of the file).
   CALL and DO need no gate: inside a transaction block the server runs them
   atomically, so a COMMIT or ROLLBACK in a procedure or a DO body is a server
   error there, not an end of the block. The parser reads strings as the server
   does with standard_conforming_strings on and the text as UTF-8: run_pg makes
   the session match (client_encoding UTF8, and a session with
   standard_conforming_strings off is refused). */
typedef struct gate {
    const char *bad;          /* the refused statement's name, or NULL */
    long at;                  /* its byte offset in the file */
    unsigned rollback_to;     /* ROLLBACK TO statements (their tag is ROLLBACK too) */
    char why[512];            /* the parser's error, when it cannot read the file */
} gate;

/* the kinds the server would let end or nest the block */
static const char *tx_kind_name(const char *k, size_t n) {
    static const char *const kinds[][2] = {
        { "TRANS_STMT_BEGIN", "BEGIN" }, { "TRANS_STMT_START", "START TRANSACTION" },
        { "TRANS_STMT_COMMIT", "COMMIT" }, { "TRANS_STMT_ROLLBACK", "ROLLBACK" },
        { "TRANS_STMT_PREPARE", "PREPARE TRANSACTION" },
        { "TRANS_STMT_COMMIT_PREPARED", "COMMIT PREPARED" },
        { "TRANS_STMT_ROLLBACK_PREPARED", "ROLLBACK PREPARED" },
    };
    size_t i;
    for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strlen(kinds[i][0]) == n && !memcmp(kinds[i][0], k, n)) return kinds[i][1];
    return "a transaction statement";   /* unknown kind: refused too */
}

/* 0: the file may run; 1: g->bad names the statement that is refused; -1: the
   parser cannot read the file (g->why). The parse tree (JSON) is walked for its
   top-level statements only: root {, "stmts" [, a RawStmt {, its "stmt" { (depth
   4) whose one key is the node's name. JSON strings are skipped whole, so a name
   or a kind inside a literal of the file is never read as one. */
static int sql_gate(const char *sql, gate *g) {
    PgQueryParseResult pr;
    const char *j, *p;
    int depth = 0, rc = 0;
    memset(g, 0, sizeof *g);
    pr = pg_query_parse(sql);
    if (pr.error) {
        snprintf(g->why, sizeof g->why, "%s (at byte %d)", pr.error->message ? pr.error->message : "error",
                 pr.error->cursorpos > 0 ? pr.error->cursorpos - 1 : 0);
        pg_query_free_parse_result(pr);
        pg_query_exit();
        return -1;
    }
    j = pr.parse_tree ? pr.parse_tree : "";
    for (p = j; *p && rc == 0; p++) {
        if (*p == '"') {
            for (p++; *p && *p != '"'; p++)
                if (*p == '\\' && p[1]) p++;
            if (!*p) break;
            continue;
        }
        if (*p == '}' || *p == ']') { depth--; continue; }
        if (*p != '{' && *p != '[') continue;
        depth++;
        if (*p == '{' && depth == 4 && p - j >= 7 && !memcmp(p - 7, "\"stmt\":", 7)) {
            static const char ts[] = "\"TransactionStmt\":{";
            static const char kd[] = "\"kind\":\"";
            const char *k, *ke, *loc;
            size_t kn;
            if (strncmp(p + 1, ts, sizeof ts - 1) != 0) continue;
            k = p + 1 + sizeof ts - 1;
            kn = 0;
            ke = k;
            if (!strncmp(k, kd, sizeof kd - 1)) {
                k += sizeof kd - 1;
                for (ke = k; *ke && *ke != '"'; ke++) {}
                kn = (size_t)(ke - k);
            }
            if ((kn == 20 && !memcmp(k, "TRANS_STMT_SAVEPOINT", 20)) ||
                (kn == 18 && !memcmp(k, "TRANS_STMT_RELEASE", 18)))
                continue;
            if (kn == 22 && !memcmp(k, "TRANS_STMT_ROLLBACK_TO", 22)) { g->rollback_to++; continue; }
            g->bad = kn ? tx_kind_name(k, kn) : "BEGIN";   /* the default kind is BEGIN */
            /* its offset: the RawStmt's "stmt_location" (absent: 0) */
            loc = strstr(ke, "\"stmt_location\":");
            g->at = 0;
            if (loc) {
                const char *next = strstr(ke, "{\"stmt\":");
                if (!next || loc < next) g->at = strtol(loc + 16, NULL, 10);
            }
            rc = 1;
        }
    }
    pg_query_free_parse_result(pr);
    pg_query_exit();
    return rc;
}

/* ------------------------------------------------------------------ the write */
/* One fenced write, whatever the store: the store's part forms it from the command
   line and opens the store's view (prepare), the view's fenced op runs it with the
   one desc (ldl_fenced), and the store's part finishes it (written): the file and
   the COMMIT for pg, the reply for redis. Decision 0713. */
typedef struct fenced_job {
    ldl_view v;                  /* the store's view: v.ops->fenced is the check */
    ldl_fenced w;                /* the one desc */
    char num[24];                /* the fence as text */
    /* pg */
    PGconn *c;
    ldl_pg pg;
    char *sql;
    size_t len;
    gate g;
    char txa[32];
    /* redis */
    redisContext *rc;
    ldl_redis rs;
    redisReply *reply;
} fenced_job;

typedef struct store_mode {
    const char *name;
    const char *check_step;      /* the watchdog's words for the fenced call */
    const char *check_outcome;
    const char *stale_tail;      /* after "stale fence N for resource 'R': ..." */
    /* judged, connected, the view attached, the write formed: 0, else an exit code */
    int  (*prepare)(const opts *o, fenced_job *f);
    /* after the fenced op answered rc (0 stale: said already): the exit code */
    int  (*written)(const opts *o, fenced_job *f, int rc);
    void (*close)(fenced_job *f);
} store_mode;

/* ------------------------------------------------------------------ pg */
/* notices (RAISE NOTICE in the file, ...) reach stderr escaped, never raw */
static void pg_notice(void *arg, const char *msg) {
    (void)arg;
    say("postgres: %s%s", msg, NULL);
}

/* one statement of the protocol (BEGIN, the txid, COMMIT, ROLLBACK): the result,
   or NULL with the error printed */
static PGresult *pg_step(PGconn *c, const char *sql, ExecStatusType want) {
    PGresult *r = PQexec(c, sql);
    if (!r || PQresultStatus(r) != want) {
        say("postgres: %s: %s", sql, r ? PQresultErrorMessage(r) : PQerrorMessage(c));
        if (r) PQclear(r);
        return NULL;
    }
    return r;
}

/* the backend's current transaction id as text, or ""; with fence (not NULL),
   also current_setting('ldl.fence') and ('ldl.resource') for the file, local to
   the transaction */
static void pg_txid(PGconn *c, const char *fence, const char *resource, const char *stmt_ms,
                    char *out, size_t cap) {
    static const char q1[] = "SELECT pg_catalog.txid_current()::pg_catalog.text";
    static const char q2[] = "SELECT pg_catalog.txid_current()::pg_catalog.text, "
        "pg_catalog.set_config('ldl.fence', $1, true), pg_catalog.set_config('ldl.resource', $2, true), "
        "pg_catalog.set_config('statement_timeout', "
        "COALESCE($3, pg_catalog.current_setting('statement_timeout')), true)";
    const char *vals[3];
    PGresult *r;
    vals[0] = fence; vals[1] = resource; vals[2] = stmt_ms;
    r = fence ? PQexecParams(c, q2, 3, NULL, vals, NULL, NULL, 0) : PQexec(c, q1);
    if (r && PQresultStatus(r) != PGRES_TUPLES_OK) {
        say("postgres: %s: %s", fence ? q2 : q1, PQresultErrorMessage(r));
        PQclear(r);
        r = NULL;
    }
    out[0] = 0;
    if (r && PQntuples(r) == 1 && PQnfields(r) >= 1 && !PQgetisnull(r, 0, 0))
        snprintf(out, cap, "%s", PQgetvalue(r, 0, 0));
    if (r) PQclear(r);
}

/* ROLLBACK, bounded; the connection is closed by the caller either way */
static void pg_rollback(PGconn *c, const opts *o) {
    PGresult *r;
    if (PQstatus(c) != CONNECTION_OK) return;
    watchdog(o->io_ms, "to ROLLBACK", "the connection is closed, so the server rolls back");
    r = PQexec(c, "ROLLBACK");
    watchdog(0, NULL, NULL);
    if (r) PQclear(r);
}

/* everything that can be judged before anything is sent: the resource, the file,
   the gate (PostgreSQL's parser reads the file). 0, else an exit code */
static int pg_judge(const opts *o, fenced_job *f) {
    char num[24];
    int rc;
    if (strlen(o->resource) >= LDL_PG_RESOURCE_MAX) {
        snprintf(num, sizeof num, "%d", LDL_PG_RESOURCE_MAX - 1);
        return usage_error("--resource: too long; bytes at most: ", num);
    }
    f->sql = read_sql(o->file, &f->len);
    if (!f->sql) return EXIT_NOINPUT;
    rc = sql_gate(f->sql, &f->g);
    if (rc < 0) {
        say("%s: PostgreSQL 15's parser cannot read it: %s: refused, nothing was sent", o->file, f->g.why);
        return EXIT_DATAERR;
    }
#ifndef LDL_FENCE_TEST_NO_GATE   /* a test build only: reaches the backstop (mk/fence_cli.mk) */
    if (rc > 0) {
        char at[32];
        snprintf(at, sizeof at, "%ld", f->g.at);
        say("%s: a statement that ends the transaction (%s): refused, nothing was sent "
            "(ldl-fence runs the file inside its own fenced transaction)", o->file, f->g.bad);
        say("(PostgreSQL's parser found it at byte %s of the file)%s", at, NULL);
        return EXIT_DATAERR;
    }
#endif
    return 0;
}

/* the session, UTF-8 and standard_conforming_strings on (as the gate read the
   file); 0, else an exit code */
static int pg_session(const opts *o, fenced_job *f) {
    /* client_encoding after dbname: it overrides a conninfo's own (the gate reads UTF-8) */
    static const char *const keys[] = { "dbname", "fallback_application_name", "client_encoding", NULL };
    const char *vals[4], *std, *enc;
    vals[0] = o->conninfo ? o->conninfo : "";
    vals[1] = "ldl-fence";
    vals[2] = "UTF8";
    vals[3] = NULL;
    watchdog(o->io_ms, "while connecting", "nothing was sent");
    f->c = PQconnectdbParams(keys, vals, 1);
    if (!f->c || PQstatus(f->c) != CONNECTION_OK) {
        watchdog(0, NULL, NULL);
        say("postgres: %s%s", f->c ? PQerrorMessage(f->c) : "out of memory", NULL);
        return EXIT_STORE;
    }
    (void)PQsetNoticeProcessor(f->c, pg_notice, NULL);
    /* the gate read the file as the server does with standard_conforming_strings
       on and UTF-8 text; a session that differs would read it otherwise ('a\''
       closes a string when off): refused, not guessed */
    std = PQparameterStatus(f->c, "standard_conforming_strings");
    enc = PQparameterStatus(f->c, "client_encoding");
    if (!std || strcmp(std, "on") != 0 || !enc || strcmp(enc, "UTF8") != 0) {
        watchdog(0, NULL, NULL);
        say("%s: the session has standard_conforming_strings %s", o->file, std ? std : "(unknown)");
        say("and client_encoding %s: the gate reads the file as PostgreSQL does with on and UTF8, "
            "so it is refused, nothing was sent (ALTER ROLE ... SET standard_conforming_strings = on)%s",
            enc ? enc : "(unknown)", NULL);
        return EXIT_DATAERR;
    }
    return 0;
}

/* pg's part before the check: judged, connected, the adapter's fence table
   checked, BEGIN; the write is the file, inside that transaction (argc 0) */
static int pg_prepare(const opts *o, fenced_job *f) {
    PGresult *r;
    int rc = pg_judge(o, f);
    if (rc || (rc = pg_session(o, f)) != 0) return rc;
    /* the adapter's fence table: created when missing, then its checks (shape,
       owner, rights, triggers) */
    watchdog(o->io_ms, "while checking the fence table", "nothing was written");
    rc = ldl_pg_init_ex(&f->pg, f->c, o->table, LDL_PG_FENCE | (o->unnamed ? LDL_PG_UNNAMED : 0u));
    if (rc != LDL_OK) {
        watchdog(0, NULL, NULL);
        say("postgres: %s%s", ldl_pg_why(&f->pg), NULL);
        return rc == LDL_EINVAL ? EXIT_USAGE : EXIT_STORE;
    }
    watchdog(o->io_ms, "to BEGIN", "nothing was written");
    r = pg_step(f->c, "BEGIN", PGRES_COMMAND_OK);
    if (!r) { watchdog(0, NULL, NULL); return EXIT_STORE; }
    PQclear(r);
    watchdog(0, NULL, NULL);
    (void)ldl_view_pg(&f->v, &f->pg);
    return 0;
}

/* the backstop's first half: a command tag that says the block ended. ROLLBACK is
   also ROLLBACK TO's tag: only more of them than the gate counted ROLLBACK TO
   statements is an end. 1 ended (endtag set) */
static int pg_tag_ends(const char *tag, unsigned *rollbacks, const gate *g, char *endtag, size_t cap) {
    if (!strcmp(tag, "ROLLBACK")) (*rollbacks)++;
    if (!strcmp(tag, "COMMIT") || !strcmp(tag, "BEGIN") || !strcmp(tag, "START TRANSACTION") ||
        !strcmp(tag, "PREPARE TRANSACTION") || !strcmp(tag, "COMMIT PREPARED") ||
        !strcmp(tag, "ROLLBACK PREPARED") || (!strcmp(tag, "ROLLBACK") && *rollbacks > g->rollback_to)) {
        snprintf(endtag, cap, "%s", tag);
        return 1;
    }
    return 0;
}

/* what the file did: its first error, whether the server cancelled it, whether
   it ended the fenced block (and by which tag) */
typedef struct file_run {
    int failed, cancelled, ended;
    char *errtext;
    char endtag[64];
} file_run;

/* the file: one multi-statement query; every result is read (an error stops the
   server at that statement and aborts the transaction). 0, or an exit code */
static int pg_file(const opts *o, fenced_job *f, file_run *fr) {
    PGconn *c = f->c;
    PGresult *r;
    unsigned rollbacks = 0;
#ifdef LDL_FENCE_TEST_NO_GATE   /* test build: the tag check can be switched off, so that the
                                   block-state check behind it is reached on its own */
    const int notags = getenv("LDL_FENCE_TEST_NO_TAGS") != NULL;
#else
    const int notags = 0;
#endif
    size_t len = f->len;
    if (len > 0 && !PQsendQuery(c, f->sql)) {
        say("postgres: %s%s", PQerrorMessage(c), NULL);
        return EXIT_STORE;
    }
    /* rows come one at a time and are dropped at once: memory stays bounded
       whatever the file selects */
    if (len > 0) (void)PQsetSingleRowMode(c);
    while (len > 0 && (r = PQgetResult(c)) != NULL) {
        ExecStatusType st = PQresultStatus(r);
        if (st == PGRES_COMMAND_OK && !fr->ended && !notags)
            fr->ended = pg_tag_ends(PQcmdStatus(r), &rollbacks, &f->g, fr->endtag, sizeof fr->endtag);
        if (st == PGRES_COPY_IN || st == PGRES_COPY_OUT || st == PGRES_COPY_BOTH) {
            say("%s: COPY FROM STDIN / TO STDOUT is not supported: the connection is closed, "
                "so the server rolls back%s", o->file, NULL);
            if (fr->ended) say("but %s had ended the fenced transaction before (%s): what ran before that "
                               "may have COMMITTED WITHOUT THE FENCE", o->file, fr->endtag);
            PQclear(r);
            return fr->ended ? EXIT_ENDED : EXIT_DATAERR;
        }
        if (st == PGRES_FATAL_ERROR || st == PGRES_BAD_RESPONSE || st == PGRES_NONFATAL_ERROR) {
            if (!fr->failed) {
                const char *m = PQresultErrorMessage(r);
                const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
                fr->cancelled = state && !strcmp(state, "57014");   /* query_canceled */
                fr->errtext = (char *)malloc(strlen(m) + 1);
                if (fr->errtext) memcpy(fr->errtext, m, strlen(m) + 1);
            }
            fr->failed = 1;
        }
        PQclear(r);
    }
    return 0;
}

/* the file ended or failed: said, rolled back; the exit code (0: neither) */
static int pg_file_verdict(const opts *o, fenced_job *f, file_run *fr) {
    PGconn *c = f->c;
    int failed = fr->failed, ended = fr->ended;
    if (PQstatus(c) != CONNECTION_OK) {
        say("postgres: the connection failed while running %s: %s", o->file, PQerrorMessage(c));
        return EXIT_STORE;
    }
    /* the backstop's second half: a failed file leaves our block aborted
       (PQTRANS_INERROR); any other state means the block was ended */
    if (failed && PQtransactionStatus(c) != PQTRANS_INERROR && !ended) {
        ended = 1;
        snprintf(fr->endtag, sizeof fr->endtag, "%s", "(no open transaction block after the error)");
    }
    if (ended) {
        say("%s ended the fenced transaction (%s) although the gate passed it: what ran before that "
            "may have COMMITTED WITHOUT THE FENCE, what is still open is rolled back", o->file, fr->endtag);
        if (failed) say("%s then failed: %s", o->file, fr->errtext ? fr->errtext : "error");
        say("exit 70: do not retry blindly; check the resource (this is a gate bug: please report it)%s%s",
            NULL, NULL);
        pg_rollback(c, o);
        return EXIT_ENDED;
    }
    if (!failed) return 0;
    say("%s failed: %s", o->file, fr->errtext ? fr->errtext : "error");
    say("rolled back: nothing of %s is visible, the mark of '%s' is unchanged", o->file, o->resource);
    pg_rollback(c, o);
    if (fr->cancelled && o->file_ms) {
        say("(a statement ran past --timeout and the server cancelled it)%s%s", NULL, NULL);
        return EXIT_TIMEOUT;
    }
    return EXIT_DATAERR;
}

/* the backstop: still in the transaction the fence check ran in; then COMMIT */
static int pg_commit(const opts *o, fenced_job *f) {
    PGconn *c = f->c;
    PGresult *r;
    char txb[32];
    int code = EXIT_OK;
    watchdog(o->io_ms, "to the transaction id", "the connection is closed, so the server rolls back");
    txb[0] = 0;
    if (PQtransactionStatus(c) == PQTRANS_INTRANS) pg_txid(c, NULL, NULL, NULL, txb, sizeof txb);
    watchdog(0, NULL, NULL);
    if (strcmp(f->txa, txb) != 0) {
        say("%s ended the fenced transaction although the gate passed it (the transaction id changed): "
            "what ran before that may have COMMITTED WITHOUT THE FENCE, what is still open is rolled back%s",
            o->file, NULL);
        say("exit 70: do not retry blindly; check the resource (this is a gate bug: please report it)%s%s",
            NULL, NULL);
        pg_rollback(c, o);
        return EXIT_ENDED;
    }
    watchdog(o->io_ms, "to COMMIT", "the outcome is unknown (the COMMIT was sent)");
    r = PQexec(c, "COMMIT");
    watchdog(0, NULL, NULL);
    /* a COMMIT of an aborted transaction answers with the tag ROLLBACK */
    if (!r || PQresultStatus(r) != PGRES_COMMAND_OK || strcmp(PQcmdStatus(r), "COMMIT") != 0) {
        say("postgres: COMMIT failed: %s%s", r ? PQresultErrorMessage(r) : PQerrorMessage(c), NULL);
        code = PQstatus(c) == CONNECTION_OK ? EXIT_DATAERR : EXIT_STORE;
    } else if (verbose) {
        say("committed %s under fence %s", o->file, f->num);
    }
    if (r) PQclear(r);
    return code;
}

/* pg's part after the check: the fence and resource for the file, the file, the
   backstop, COMMIT */
static int pg_written(const opts *o, fenced_job *f, int rc) {
    char tmo[24];
    file_run fr;
    if (rc == 0) {
        pg_rollback(f->c, o);
        return EXIT_STALE;
    }
    if (rc != 1) {
        say("fence check refused: %s%s", f->v.ops->why(f->v.self), NULL);
        pg_rollback(f->c, o);
        return rc == LDL_EINVAL ? EXIT_USAGE : EXIT_STORE;
    }
    if (verbose) say("fence %s passed for resource '%s'", f->num, o->resource);
    watchdog(o->io_ms, "to the transaction id", "the connection is closed, so the server rolls back");
    if (o->file_ms) snprintf(tmo, sizeof tmo, "%llu", (unsigned long long)o->file_ms);
    pg_txid(f->c, f->num, o->resource, o->file_ms ? tmo : NULL, f->txa, sizeof f->txa);
    watchdog(0, NULL, NULL);
    if (!f->txa[0]) { pg_rollback(f->c, o); return EXIT_STORE; }
    /* --timeout: the server cancels each statement of the file at the bound
       (statement_timeout, local to the transaction); the watchdog is the backstop
       for a server that stops answering */
    if (o->file_ms) watchdog(o->file_ms + o->io_ms, "while running the SQL file (--timeout + --store-timeout)",
                             "the connection is closed, so the server rolls back");
    memset(&fr, 0, sizeof fr);
    rc = pg_file(o, f, &fr);
    watchdog(0, NULL, NULL);
    free(f->sql);
    f->sql = NULL;
    if (rc == 0) rc = pg_file_verdict(o, f, &fr);
    free(fr.errtext);
    return rc ? rc : pg_commit(o, f);
}

static void pg_close(fenced_job *f) {
    if (f->c) PQfinish(f->c);
    f->c = NULL;
    free(f->sql);
    f->sql = NULL;
}

static void put_escaped(FILE *f, const char *s, size_t len) {
    static const char hex[] = "0123456789abcdef";
    size_t i;
    for (i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c <= 0x7E && c != '\\') fputc(c, f);
        else { fputc('\\', f); fputc('x', f); fputc(hex[c >> 4], f); fputc(hex[c & 15], f); }
    }
}

/* the reply, one line per value (the format of --help) */
static void print_reply(FILE *f, const redisReply *r, int depth) {
    size_t i;
    if (depth > 64) { fputs("-ERR ldl-fence: reply nested too deep\n", f); return; }
    switch (r->type) {
    case REDIS_REPLY_STATUS: fputc('+', f); put_escaped(f, r->str, r->len); break;
    case REDIS_REPLY_ERROR:  fputc('-', f); put_escaped(f, r->str, r->len); break;
    case REDIS_REPLY_INTEGER: fprintf(f, ":%lld", (long long)r->integer); break;
    case REDIS_REPLY_STRING: fputc('$', f); put_escaped(f, r->str, r->len); break;
    case REDIS_REPLY_NIL: fputc('_', f); break;
    case REDIS_REPLY_ARRAY:
        fprintf(f, "*%lu\n", (unsigned long)r->elements);
        for (i = 0; i < r->elements; i++) print_reply(f, r->element[i], depth + 1);
        return;
    default:                  /* RESP3 types: not asked for (no HELLO 3 is sent) */
        fprintf(f, "-ERR ldl-fence: reply of type %d", r->type);
        break;
    }
    fputc('\n', f);
}


/* redis's part before the check: judged, connected, the adapter and its view; the
   write is CMD ARG... as given, its first --keys ARGs declared as keys */
static int redis_prepare(const opts *o, fenced_job *f) {
    char host[128], num[24];
    int port = 0, i;
    struct timeval tv;
    size_t total = 0;
    for (i = 0; i < o->ncmd; i++) {
        total += strlen(o->cmd[i]);
        if (total > ARG_MAX_BYTES) return usage_error("the command's arguments are over 16 MiB", NULL);
    }
    if (o->ncmd > LDL_REDIS_FENCE_ARGS) {
        snprintf(num, sizeof num, "%d", LDL_REDIS_FENCE_ARGS);
        return usage_error("too many command arguments; at most (the command's name included) ", num);
    }
    if (strlen(o->resource) >= LDL_REDIS_FENCE_NAME_MAX) {
        snprintf(num, sizeof num, "%d", LDL_REDIS_FENCE_NAME_MAX - 1);
        return usage_error("--resource: too long; bytes at most: ", num);
    }
    /* the name's resolution is a wait like the connect: inside the same bound */
    watchdog(o->io_ms, "while resolving the name and connecting", "nothing was sent");
    if (!strchr(o->redis, '/')) {
        int r = parse_hostport(o->redis, host, sizeof host, &port);
        if (r != 0) watchdog(0, NULL, NULL);
        if (r == -1) return usage_error("--redis: want HOST:PORT or a socket path, got ", o->redis);
        if (r == -2) { say("--redis: cannot resolve '%s'%s", o->redis, NULL); return EXIT_STORE; }
    }
    f->rc = strchr(o->redis, '/') ? redisConnectUnix(o->redis) : redisConnect(host, port);
    watchdog(0, NULL, NULL);
    if (!f->rc || f->rc->err) {
        say("redis: %s%s", f->rc ? f->rc->errstr : "out of memory", NULL);
        return EXIT_STORE;
    }
    /* the adapter's own bound on the call comes a second after the watchdog's: a
       silent server is the watchdog's (124), not a link error (69) */
    tv.tv_sec = (time_t)((o->io_ms + 1000u) / 1000u);
    tv.tv_usec = (suseconds_t)((o->io_ms + 1000u) % 1000u) * 1000;
    (void)redisSetTimeout(f->rc, tv);
    if (ldl_redis_init(&f->rs, f->rc, o->prefix) != LDL_OK) {
        say("redis: %s%s", ldl_redis_why(&f->rs), NULL);
        return EXIT_USAGE;
    }
    (void)ldl_view_redis(&f->v, &f->rs);
    f->w.argc = o->ncmd;
    f->w.argv = (const char **)o->cmd;
    f->w.nkeys = (int)o->nkeys, f->w.keyidx = NULL;   /* the first nkeys ARGs */
    f->w.reply = (void **)&f->reply;
    return 0;
}

/* redis's part after the script: the reply printed, or what failed */
static int redis_written(const opts *o, fenced_job *f, int rc) {
    const ldl_redis_error *e = ldl_redis_last_error(&f->rs);
    if (rc == 0) return EXIT_STALE;
    if (rc == 1) {
        if (f->reply) print_reply(stdout, f->reply, 0);
        if (fflush(stdout) == 0 && !ferror(stdout)) {
            if (verbose) say("fence %s passed for resource '%s': the command ran", f->num, o->resource);
            return EXIT_OK;
        }
        say("stdout: %s%s", strerror(errno), NULL);
        return EXIT_STORE;
    }
    if (e && e->kind == LDL_REDIS_ERR_COMMAND) {
        if (f->reply && f->reply->type == REDIS_REPLY_ERROR)
            say("the command failed: %s%s", f->reply->str, NULL);
        else
            say("the command failed: %s%s", f->v.ops->why(f->v.self), NULL);
        say("the mark of '%s' did not move%s", o->resource, NULL);
        return EXIT_DATAERR;
    }
    if (rc == LDL_EINVAL) {
        say("refused, nothing sent: %s%s", f->v.ops->why(f->v.self), NULL);
        return EXIT_USAGE;
    }
    say("redis: %s%s", f->v.ops->why(f->v.self), NULL);
    if (e && (e->kind == LDL_REDIS_ERR_IO || e->kind == LDL_REDIS_ERR_PROTOCOL))
        say("the link failed after the script was sent: the outcome is unknown%s%s", NULL, NULL);
    return EXIT_STORE;
}

static void redis_close(fenced_job *f) {
    if (f->reply) freeReplyObject(f->reply);
    f->reply = NULL;
    if (f->rc) redisFree(f->rc);
    f->rc = NULL;
}

/* ------------------------------------------------------------------ the one path */
static const store_mode modes[] = {
    { "pg", "to the fence check", "the connection is closed, so the server rolls back", "rolled back",
      pg_prepare, pg_written, pg_close },
    { "redis", "to the fenced-write script", "the outcome is unknown (the script was sent)",
      "the command did not run", redis_prepare, redis_written, redis_close },
};

static int fenced_write(const opts *o) {
    static fenced_job f;
    const store_mode *m = &modes[o->mode - MODE_PG];
    int rc;
    memset(&f, 0, sizeof f);
    snprintf(f.num, sizeof f.num, "%lld", (long long)o->fence);
    f.w.resource = o->resource;
    f.w.fence = o->fence;
    rc = m->prepare(o, &f);
    if (rc == 0) {
        watchdog(o->io_ms, m->check_step, m->check_outcome);
        rc = f.v.ops->fenced(f.v.self, &f.w);
        watchdog(0, NULL, NULL);
        if (rc == 0) {
            char fmt[128];
            snprintf(fmt, sizeof fmt, "stale fence %%s for resource '%%s': a higher fence has written; %s",
                     m->stale_tail);
            say(fmt, f.num, o->resource);
        }
        rc = m->written(o, &f, rc);
    }
    m->close(&f);
    return rc;
}

/* ------------------------------------------------------------------ main */
int main(int argc, char **argv) {
    opts o;
    struct sigaction sa;
    int rc = parse_args(argc, argv, &o);
    if (rc == -1) return 0;
    if (rc) return rc;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_IGN;                 /* hiredis and libpq write with plain write() */
    sigemptyset(&sa.sa_mask);
    (void)sigaction(SIGPIPE, &sa, NULL);
    return fenced_write(&o);
}
