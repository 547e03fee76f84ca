/* See pw_library.h: libpipewire opened on first use. */
#include "pw_library.h"

#include <dynamic_library.h>

DP_LIBRARY_DEFINE(dp_pw_library, dp_pw_calls, DP_PW_CALLS, "libpipewire-0.3.so.0", dp_pw_library_load,
                  dp_pw_library_error)
