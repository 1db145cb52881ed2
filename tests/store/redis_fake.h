/* tests/store/redis_fake.h -- start tests/store/redis_fake_node.py (a hostile RESP node) for
 * one scenario: rf_start(&f, "mode", "arg" or NULL) answers 0 once it listens on f.port
 * (127.0.0.1, a free port; its pid in $LDL_TEST_DIR so the with_redis*.sh trap is the
 * backstop); rf_stop(&f). Include after tests/store/redis_server.h. Test code, not shipped. */
#ifndef LDL_TESTS_STORE_REDIS_FAKE_H
#define LDL_TESTS_STORE_REDIS_FAKE_H

typedef struct rf_node { int port; pid_t pid; char dir[256], pidfile[300], log[300]; } rf_node;

static ST__UNUSED int rf_start(rf_node *f, const char *mode, const char *arg)
{
    char port[16], *argv[6];
    int attempt;
    memset(f, 0, sizeof *f);
    if (st_tmpdir(f->dir, sizeof f->dir, "fake") != 0) return -1;
    snprintf(f->pidfile, sizeof f->pidfile, "%s.pid", f->dir);
    snprintf(f->log, sizeof f->log, "%s/fake.log", f->dir);
    for (attempt = 0; attempt < 5; attempt++) {
        f->port = st_free_port();
        snprintf(port, sizeof port, "%d", f->port);
        argv[0] = (char *)"python3";
        argv[1] = (char *)"tests/store/redis_fake_node.py";
        argv[2] = port;
        argv[3] = (char *)mode;
        argv[4] = (char *)(arg ? arg : "");
        argv[5] = NULL;
        f->pid = st_spawn(argv, f->log, f->pidfile);
        if (f->pid > 0 && st_wait_port(f->port, 10000)) return 0;
        if (f->pid > 0) st_stop(f->pid, SIGKILL, 2000);
    }
    fprintf(stderr, "rf_start: the fake node did not start, see %s\n", f->log);
    return -1;
}

static ST__UNUSED void rf_stop(rf_node *f)
{
    if (f->pid > 0) st_stop(f->pid, SIGKILL, 2000);
    f->pid = 0;
    remove(f->pidfile);
}

#endif /* LDL_TESTS_STORE_REDIS_FAKE_H */
