/* gaps.c - behaviour an outside mutation run found unpinned (issue 9). */
#include "harness.h"

void suite_gaps(void) {
}
