#ifndef DUCKPROMPT_CPULSEAUDIO_SHIM_H
#define DUCKPROMPT_CPULSEAUDIO_SHIM_H
/* libpulse for Swift: static inline stand-ins for macros Swift cannot import. No logic here. */
#include <pulse/pulseaudio.h>
#include <pulse/thread-mainloop.h>
#include <pulse/ext-stream-restore.h>

static inline uint32_t dp_pa_invalid_index(void) { return PA_INVALID_INDEX; }
static inline int dp_pa_volume_is_valid(pa_volume_t v) { return PA_VOLUME_IS_VALID(v); }
static inline pa_volume_t dp_pa_volume_norm(void) { return PA_VOLUME_NORM; }
static inline pa_volume_t dp_pa_volume_muted(void) { return PA_VOLUME_MUTED; }
static inline pa_volume_t dp_pa_volume_max(void) { return PA_VOLUME_MAX; }
static inline pa_volume_t dp_pa_volume_ui_max(void) { return PA_VOLUME_UI_MAX; }
static inline size_t dp_pa_cvolume_snprint_max(void) { return PA_CVOLUME_SNPRINT_MAX; }
static inline int dp_pa_channels_max(void) { return PA_CHANNELS_MAX; }
/* pa_proplist_setf is variadic; Swift formats the value itself and calls pa_proplist_sets. */
#endif
