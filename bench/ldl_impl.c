/* The implementation in its own translation unit, as an stb-style user builds
   it: the bench calls it through the ordinary extern functions, so the
   compiler cannot inline ldl_lock_poll() into the timing loop and fold it. */
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
