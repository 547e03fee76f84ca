/* See include/shim.h: libsndfile opened on first use. */
#include "shim.h"

#include <dynamic_library.h>

DP_LIBRARY_DEFINE(dp_sndfile, dp_sndfile_calls, DP_SNDFILE_CALLS, "libsndfile.so.1", dp_sndfile_load, dp_sndfile_error)
