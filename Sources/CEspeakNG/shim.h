#ifndef DUCKPROMPT_CESPEAKNG_SHIM_H
#define DUCKPROMPT_CESPEAKNG_SHIM_H
/* libespeak-ng for Swift: no logic here. espeak_ng.h includes speak_lib.h. */
#include <espeak-ng/espeak_ng.h>
#endif
