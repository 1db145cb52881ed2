/* pg_durability_build.c -- ldl_pg_check_durability (adapters/lite_di_lock_pg.h,
 * DURABILITY) compiles clean as C99 (gcc, clang), C++17 and with LDL_STATIC, and
 * answers without a server: LDL_EINVAL for a NULL or uninitialised ldl_pg, with a
 * why, and never writes past why_len. The answers from real server settings are
 * in tests/store/pg_durability.c. Last line: "N passed, N failed". */
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#define LDL_PG_IMPLEMENTATION
#include "adapters/lite_di_lock_pg.h"
#include "tests/check.h"

int main(void)
{
    ldl_pg p;
    char why[200], tiny[8];
    PGconn *dead = PQconnectdb("host=127.0.0.1 port=1 connect_timeout=1");

    CHECK(LDL_PG_SURVIVES_CRASH == 1 && LDL_PG_SURVIVES_FAILOVER == 2);
    memset(why, 'x', sizeof why);
    CHECK(ldl_pg_check_durability(NULL, why, sizeof why) == LDL_EINVAL && strstr(why, "not initialised"));
    CHECK(ldl_pg_init(&p, dead, NULL) == LDL_ESTORE);      /* failed init: no server */
    CHECK(ldl_pg_check_durability(&p, why, sizeof why) == LDL_EINVAL && strstr(why, "unknown"));
    CHECK(ldl_pg_check_durability(&p, NULL, 0) == LDL_EINVAL);
    CHECK(ldl_pg_check_durability(&p, NULL, 99) == LDL_EINVAL);
    memset(tiny, 'x', sizeof tiny);
    CHECK(ldl_pg_check_durability(&p, tiny, 4) == LDL_EINVAL && strlen(tiny) == 3 && tiny[4] == 'x');
    memset(tiny, 'x', sizeof tiny);
    CHECK(ldl_pg_check_durability(&p, tiny, 0) == LDL_EINVAL && tiny[0] == 'x');
    PQfinish(dead);
    return chk_report();
}
