/* async.c - the non-blocking store contract (SPEC "Non-blocking stores (v0.2)"). */
#include "harness.h"

void suite_async(void) {
}
