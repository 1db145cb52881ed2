/* sqlite_check.c DB RESOURCE FENCE -- the C adapter's view of a fence table that a
   recipe created and wrote: ldl_sqlite_init on DB (it accepts the fence table only
   if its CREATE text is the adapter's own), then BEGIN IMMEDIATE, ldl_sqlite_fence,
   ROLLBACK (nothing is kept). Prints "init N" and "fence N"; exit 0 when both ran. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#define LDL_SQLITE_IMPLEMENTATION
#include "adapters/lite_di_lock_sqlite.h"

int main(int argc, char **argv) {
    sqlite3 *db = NULL;
    static ldl_sqlite sq;
    int rc;
    if (argc != 4) { fprintf(stderr, "usage: sqlite_check DB RESOURCE FENCE\n"); return 2; }
    if (sqlite3_open(argv[1], &db) != SQLITE_OK) { fprintf(stderr, "open failed\n"); return 2; }
    rc = ldl_sqlite_init(&sq, db, NULL);
    printf("init %d\n", rc);
    if (rc != LDL_OK) { fprintf(stderr, "%s\n", ldl_sqlite_why(&sq)); sqlite3_close(db); return 1; }
    sqlite3_exec(db, "BEGIN IMMEDIATE", 0, 0, 0);
    rc = ldl_sqlite_fence(&sq, argv[2], (int64_t)strtoll(argv[3], NULL, 10));
    printf("fence %d\n", rc);
    sqlite3_exec(db, "ROLLBACK", 0, 0, 0);
    ldl_sqlite_close(&sq);
    sqlite3_close(db);
    return 0;
}
