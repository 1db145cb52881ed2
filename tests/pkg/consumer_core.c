/* tests/pkg/consumer_core.c -- a program using the core as installed or as a
   subproject: <lite_di_lock.h> from the include path the build system gives.
   Built with -DLDL_PKG_USE_LIB against the library target (which holds the
   implementation), without it as the header-only use. Store: MemoryStore. */
#ifndef LDL_PKG_USE_LIB
#define LITE_DI_LOCK_IMPLEMENTATION
#endif
#include <lite_di_lock.h>
#include "lifecycle.h"

static uint64_t fake_ms = 1000;
static uint64_t fake_now(void *ctx) { (void)ctx; return fake_ms; }

int main(void)
{
    ldl_memstore ms;
    ldl_memstore_slot slots[4];
    ldl_store store;
    ldl_clock clock;
    clock.now_ms = fake_now;
    clock.ctx = NULL;
    if (ldl_memstore_init(&ms, slots, 4, clock) != LDL_OK) { puts("FAIL memstore init"); return 1; }
    store = ldl_memstore_store(&ms);
#ifdef LDL_PKG_USE_LIB
    return ldl_pkg_lifecycle("core-lib", &store, &store, "pkg-core", clock);
#else
    return ldl_pkg_lifecycle("core", &store, &store, "pkg-core", clock);
#endif
}
