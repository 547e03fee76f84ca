#ifndef DUCKPROMPT_CSNDFILE_SHIM_H
#define DUCKPROMPT_CSNDFILE_SHIM_H
/* libsndfile for Swift: no logic here. */
#include <sndfile.h>
#endif
