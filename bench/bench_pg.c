/* bench_pg.c CONNINFO MODE OPS - lifecycles per second of one ldl_lock over
   the PostgreSQL adapter, one libpq connection (row 4 of `make bench`). */
#define LDL_PG_IMPLEMENTATION
#include "bench_store.h"
#include "adapters/lite_di_lock_pg.h"

int main(int argc, char **argv) {
    PGconn *c;
    ldl_pg p;
    ldl_store st;
    double rate;
    if (argc != 4) { fprintf(stderr, "usage: bench_pg CONNINFO acqrel|run OPS\n"); return 2; }
    c = PQconnectdb(argv[1]);
    if (PQstatus(c) != CONNECTION_OK) { fprintf(stderr, "bench_pg: connect: %s", PQerrorMessage(c)); return 1; }
    if (ldl_pg_init(&p, c, "ldl_lease") != LDL_OK) { fprintf(stderr, "bench_pg: init failed\n"); return 1; }
    st = ldl_pg_store(&p);
    rate = bs_lifecycles(&st, "bench-c", argv[2], atol(argv[3]));
    PQfinish(c);
    if (rate < 0) return 1;
    printf("%.1f\n", rate);
    return 0;
}
