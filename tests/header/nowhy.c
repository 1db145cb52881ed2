/* nowhy.c -- LDL_NO_WHY_TEXT keeps every refusal's code (issue 35). Built twice by
 * tests/header/check.sh, with and without the switch: each bad desc below goes through
 * ldl_lock_init, and one line "CODE|WHY" is printed per case. The codes of the two builds
 * must be the same, line by line; with the switch, WHY is a check's short name. */
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include <stdio.h>
#include <string.h>

static void *sc(void *s) { return s; }
static int va(void *s, const char *n, void *v) { (void)s; (void)n; (void)v; return 0; }
static int sh(void *s) { (void)s; return 0; }
static int acq(void *c, const char *k, uint32_t t, int64_t *o) { (void)c; (void)k; (void)t; *o = 1; return 1; }
static uint64_t now0(void *c) { (void)c; return 0; }

static void base(ldl_lock_desc *d) {
    memset(d, 0, sizeof *d);
    d->container.scope = sc; d->container.value = va; d->container.shutdown = sh;
    d->key = "k";
    d->ttl_ms = 300;
    d->clock.now_ms = now0;
}

int main(void) {
    static ldl_lock l;
    ldl_lock_desc d;
    ldl_store half;
    char longkey[LDL_KEY_MAX + 1];
    int c;
    memset(longkey, 'a', sizeof longkey - 1); longkey[sizeof longkey - 1] = 0;
    memset(&half, 0, sizeof half); half.acquire = acq;
    for (c = 0; c < 13; c++) {
        int rc;
        base(&d);
        switch (c) {
        case 0: break;                                      /* valid */
        case 1: d.container.scope = NULL; break;
        case 2: d.key = NULL; break;
        case 3: d.key = ""; break;
        case 4: d.key = longkey; break;
        case 5: d.key = "a\nb"; break;
        case 6: d.ttl_ms = 0; break;
        case 7: d.ttl_ms = 2; break;                        /* heartbeat 0 */
        case 8: d.heartbeat_ms = 200; break;                /* heartbeat * 2 > ttl */
        case 9: d.drift_ms = 250; break;                    /* drift >= ttl - heartbeat */
        case 10: d.store = &half; break;                    /* renew, release missing */
        case 11: d.clock.now_ms = NULL; d.clock.ctx = &c; break;   /* ctx without now_ms */
        case 12: d.ttl_ms = 0; d.key = NULL; break;         /* the first check wins */
        }
        rc = ldl_lock_init(&l, &d);
        printf("%d|%s\n", rc, ldl_lock_why(&l));
        ldl_lock_dispose(&l);
    }
    return 0;
}
