/* tests/store/etcd_case.h -- a time bound per test case for the etcd suites (issue 37:
 * "a suite must fail on its own, within its own time bound, whatever the code under test
 * does"). Include after tests/store/fenced.h (it reads fenced.h's counters).
 *
 *   etcdt_case(name, secs)  arm: if the case still runs after secs seconds, SIGALRM
 *                    prints "CASE <name> HUNG past N s" and "P passed, F failed (case
 *                    <name> hung)" as the last line, and ends the program with exit 1.
 *                    A second call re-arms for the next case.
 *   etcdt_case_end() disarm.
 */
#ifndef LDL_TESTS_STORE_ETCD_CASE_H
#define LDL_TESTS_STORE_ETCD_CASE_H

#include <signal.h>
#include <unistd.h>

static char etcdt__case_name[128];
static unsigned etcdt__case_secs;

/* the program ends here: snprintf in a handler is tolerable for test code that _exits */
static void etcdt__case_alarm(int sig)
{
    char msg[400];
    int n;
    ssize_t w;
    (void)sig;
    n = snprintf(msg, sizeof msg, "\nCASE %s HUNG past %u s (the per-case bound)\n%d passed, %d failed (case %s hung)\n",
                 etcdt__case_name, etcdt__case_secs, st__passed, st__failed + 1, etcdt__case_name);
    if (n < 0) n = 0;
    if ((size_t)n >= sizeof msg) n = (int)sizeof msg - 1;
    fflush(stdout);                   /* the checks printed so far, then the summary line */
    w = write(1, msg, (size_t)n);
    (void)w;
    _exit(1);
}

static ST__UNUSED void etcdt_case(const char *name, unsigned secs)
{
    struct sigaction sa;
    fflush(stdout);
    fflush(stderr);
    snprintf(etcdt__case_name, sizeof etcdt__case_name, "%s", name);
    etcdt__case_secs = secs;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = etcdt__case_alarm;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    alarm(secs);
}

static ST__UNUSED void etcdt_case_end(void) { alarm(0); }

#endif /* LDL_TESTS_STORE_ETCD_CASE_H */
