/* tests/pkg/consumer_pg.c CONNINFO KEY -- the PostgreSQL adapter as installed
   or as a subproject: "lite_di_lock_pg.h" from the include path the build
   system gives (it pulls in <lite_di_lock.h> and <libpq-fe.h>). One lifecycle
   on a real server, two connections (one per lock). */
#ifndef LDL_PKG_USE_LIB
#define LITE_DI_LOCK_IMPLEMENTATION
#endif
#include <lite_di_lock.h>
#define LDL_PG_IMPLEMENTATION
#include "lite_di_lock_pg.h"
#include "lifecycle.h"

int main(int argc, char **argv)
{
    PGconn *c1, *c2;
    ldl_pg p1, p2;
    ldl_store s1, s2;
    ldl_clock clock = { 0 };    /* the built-in monotonic clock */
    int rc;
    if (argc != 3) { fprintf(stderr, "usage: %s CONNINFO KEY\n", argv[0]); return 2; }
    c1 = PQconnectdb(argv[1]);
    c2 = PQconnectdb(argv[1]);
    if (PQstatus(c1) != CONNECTION_OK || PQstatus(c2) != CONNECTION_OK) {
        printf("FAIL connect: %s", PQerrorMessage(PQstatus(c1) != CONNECTION_OK ? c1 : c2));
        return 1;
    }
    if (ldl_pg_init(&p1, c1, "ldl_pkg") != LDL_OK) { printf("FAIL init: %s\n", ldl_pg_why(&p1)); return 1; }
    if (ldl_pg_init(&p2, c2, "ldl_pkg") != LDL_OK) { printf("FAIL init: %s\n", ldl_pg_why(&p2)); return 1; }
    s1 = ldl_pg_store(&p1);
    s2 = ldl_pg_store(&p2);
    rc = ldl_pkg_lifecycle("pg", &s1, &s2, argv[2], clock);
    PQfinish(c1);
    PQfinish(c2);
    return rc;
}
