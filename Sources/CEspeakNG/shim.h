#ifndef DUCKPROMPT_CESPEAKNG_SHIM_H
#define DUCKPROMPT_CESPEAKNG_SHIM_H
/* libespeak-ng's types and constants for Swift: no logic here, and no link: the library is
   opened with dlopen when speech is first needed (DuckPrompt/Playback/EspeakLibrary.swift).
   espeak_ng.h includes speak_lib.h. */
#include <espeak-ng/espeak_ng.h>
#endif
