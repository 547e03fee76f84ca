/* See include/shim.h: libpulse opened on first use. */
#include "shim.h"

#include <dynamic_library.h>

DP_LIBRARY_DEFINE(dp_pulse, dp_pulse_calls, DP_PULSE_CALLS, "libpulse.so.0", dp_pulse_load, dp_pulse_error)
