/* tests/check.h -- the one set of checks every test suite uses (core, edge,
   soak, the store build checks and the store conformance body).

   HOW TO USE
     One file:     #include "tests/check.h"           everything is static here
     Several files (the core suite): every file does
                   #define CHECK_SHARED
                   #include "tests/check.h"
                   and exactly one of them also #defines CHECK_IMPLEMENTATION.

     CHECK(c)               c must be true
     CHECK_EQ(a, b)         a == b, compared as long long; prints both values
     CHECK_STR(a, b)        strcmp(a, b) == 0; NULL never equals anything
     CHECK_MSG(c, fmt, ...) c must be true; the printf-style message says why
     Each answers 1 when it held, 0 when it failed (so `if (!CHECK(p)) return;`).

     RUN(fn)                runs `void fn(void)` as one test (define RUN before
                            the include to wrap it, as tests/core/harness.h does
                            with chk_begin / chk_end)
     chk_skip()             inside a test: the test is counted as skipped
     chk_note(fmt, ...)     a diagnostic line on stderr (in order with failures)
     chk_set_label(s)       a prefix for failure lines ("async"), or NULL
     chk_failed()           units failed so far
     return chk_report();   prints the last line "N passed, N failed" on stdout
                            and answers the exit code (0 only when none failed)

   WHAT IS COUNTED: a unit is one test run by RUN (it fails when any check
   inside it failed), or one check made outside any test (the store suites
   and build checks, which have no tests, count every check). Skipped tests
   are neither passed nor failed; chk_skipped() tells how many.

   Failures go to stderr as "FAIL [label] test: file:line: message" (stdout is
   flushed first, so the two streams stay in order when both go to one pipe). */
#ifndef LDL_TESTS_CHECK_H
#define LDL_TESTS_CHECK_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#  define CHK__UNUSED __attribute__((unused))
#  define CHK__PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#  define CHK__UNUSED
#  define CHK__PRINTF(f, a)
#endif

#ifdef CHECK_SHARED
#  define CHK__FN extern
#  define CHK__DATA extern
#else
#  define CHK__FN static CHK__UNUSED
#  define CHK__DATA static CHK__UNUSED
#  ifndef CHECK_IMPLEMENTATION
#    define CHECK_IMPLEMENTATION
#  endif
#endif

typedef struct chk_state {
    int passed, failed, skipped;   /* units (see above) */
    int in_test;                   /* inside RUN */
    int test_failed_checks;        /* checks failed in the current test */
    int test_skipped;
    int checks;                    /* every check made, held or not */
    const char *test;              /* the current test's name */
    const char *label;             /* failure-line prefix, or NULL */
} chk_state;

CHK__DATA chk_state chk;

CHK__FN int  chk_check(int ok, const char *file, int line, const char *fmt, ...) CHK__PRINTF(4, 5);
CHK__FN int  chk_eq(long long a, long long b, const char *as, const char *bs, const char *file, int line);
CHK__FN int  chk_str(const char *a, const char *b, const char *as, const char *file, int line);
CHK__FN void chk_note(const char *fmt, ...) CHK__PRINTF(1, 2);
CHK__FN void chk_begin(const char *name);
CHK__FN int  chk_end(void);          /* 1 passed, 0 failed, -1 skipped */
CHK__FN void chk_run(const char *name, void (*fn)(void));
CHK__FN void chk_skip(void);
CHK__FN void chk_set_label(const char *label);
CHK__FN int  chk_failed(void);
CHK__FN int  chk_skipped(void);
CHK__FN int  chk_report(void);

#define CHECK(c)            chk_check(!!(c), __FILE__, __LINE__, "CHECK(%s)", #c)
#define CHECK_MSG(c, ...)   chk_check(!!(c), __FILE__, __LINE__, __VA_ARGS__)
#define CHECK_EQ(a, b)      chk_eq((long long)(a), (long long)(b), #a, #b, __FILE__, __LINE__)
#define CHECK_STR(a, b)     chk_str((a), (b), #a, __FILE__, __LINE__)
#ifndef RUN
#  define RUN(fn)           chk_run(#fn, fn)
#endif

#ifdef CHECK_IMPLEMENTATION
#ifdef CHECK_SHARED
chk_state chk;
#endif

static void chk__head(const char *file, int line) {
    fflush(stdout);
    fprintf(stderr, "FAIL ");
    if (chk.label) fprintf(stderr, "[%s] ", chk.label);
    if (chk.in_test && chk.test) fprintf(stderr, "%s: ", chk.test);
    fprintf(stderr, "%s:%d: ", file, line);
}

static int chk__count(int ok) {
    chk.checks++;
    if (chk.in_test) { if (!ok) chk.test_failed_checks++; }
    else if (ok) chk.passed++;
    else chk.failed++;
    return ok;
}

CHK__FN int chk_check(int ok, const char *file, int line, const char *fmt, ...) {
    if (!ok) {
        va_list ap;
        chk__head(file, line);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fputc('\n', stderr);
        fflush(stderr);
    }
    return chk__count(ok);
}

CHK__FN int chk_eq(long long a, long long b, const char *as, const char *bs, const char *file, int line) {
    int ok = a == b;
    if (!ok) {
        chk__head(file, line);
        fprintf(stderr, "%s == %s (%lld != %lld)\n", as, bs, a, b);
        fflush(stderr);
    }
    return chk__count(ok);
}

CHK__FN int chk_str(const char *a, const char *b, const char *as, const char *file, int line) {
    int ok = a && b && strcmp(a, b) == 0;
    if (!ok) {
        chk__head(file, line);
        fprintf(stderr, "%s == \"%s\" (got \"%s\")\n", as, b ? b : "(null)", a ? a : "(null)");
        fflush(stderr);
    }
    return chk__count(ok);
}

CHK__FN void chk_note(const char *fmt, ...) {
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "    ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
}

CHK__FN void chk_begin(const char *name) {
    chk.in_test = 1;
    chk.test = name;
    chk.test_failed_checks = 0;
    chk.test_skipped = 0;
}

CHK__FN int chk_end(void) {
    int r;
    chk.in_test = 0;
    if (chk.test_failed_checks) {
        chk.failed++;
        fflush(stdout);
        fprintf(stderr, "not ok %s%s%s\n", chk.label ? chk.label : "", chk.label ? " " : "", chk.test);
        fflush(stderr);
        r = 0;
    } else if (chk.test_skipped) {
        chk.skipped++;
        r = -1;
    } else {
        chk.passed++;
        r = 1;
    }
    chk.test = NULL;
    return r;
}

CHK__FN void chk_run(const char *name, void (*fn)(void)) {
    chk_begin(name);
    fn();
    (void)chk_end();
}

CHK__FN void chk_skip(void) { chk.test_skipped = 1; }
CHK__FN void chk_set_label(const char *label) { chk.label = label; }
CHK__FN int chk_failed(void) { return chk.failed; }
CHK__FN int chk_skipped(void) { return chk.skipped; }

CHK__FN int chk_report(void) {
    fflush(stderr);
    printf("%d passed, %d failed\n", chk.passed, chk.failed);
    fflush(stdout);
    return chk.failed ? 1 : 0;
}
#endif /* CHECK_IMPLEMENTATION */

#endif /* LDL_TESTS_CHECK_H */
