#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
