#ifndef DUCKPROMPT_CPULSEAUDIO_SHIM_H
#define DUCKPROMPT_CPULSEAUDIO_SHIM_H
/* libpulse for Swift: its types and constants from the <pulse/...> headers, and its calls
 * through a table filled when the library is first needed (pulse_library.c): nothing links
 * libpulse, so a process that never talks to a sound server itself (a command that hands its
 * prompt to a running service, --help) does not load libpulse and the 10 libraries it pulls in
 * at exec. Sources/DuckPrompt/Pulse/PulseLibrary.swift is the table's one reader. No logic here. */
#include <pulse/pulseaudio.h>
#include <pulse/thread-mainloop.h>
#include <pulse/ext-stream-restore.h>

#include <dynamic_library.h>

/* Every libpulse call the library makes: one list, from which the table is made. */
#define DP_PULSE_CALLS(X) \
    X(pa_bytes_per_second) \
    X(pa_channel_map_init_extend) \
    X(pa_channel_position_to_string) \
    X(pa_context_connect) \
    X(pa_context_disconnect) \
    X(pa_context_errno) \
    X(pa_context_get_server) \
    X(pa_context_get_server_info) \
    X(pa_context_get_sink_info_by_index) \
    X(pa_context_get_sink_info_list) \
    X(pa_context_get_sink_input_info) \
    X(pa_context_get_sink_input_info_list) \
    X(pa_context_get_source_output_info) \
    X(pa_context_get_source_output_info_list) \
    X(pa_context_get_state) \
    X(pa_context_load_module) \
    X(pa_context_move_sink_input_by_name) \
    X(pa_context_new_with_proplist) \
    X(pa_context_rttime_new) \
    X(pa_context_rttime_restart) \
    X(pa_context_set_default_sink) \
    X(pa_context_set_sink_input_volume) \
    X(pa_context_set_state_callback) \
    X(pa_context_set_subscribe_callback) \
    X(pa_context_subscribe) \
    X(pa_context_suspend_sink_by_name) \
    X(pa_context_unref) \
    X(pa_cvolume_set) \
    X(pa_frame_size) \
    X(pa_get_library_version) \
    X(pa_operation_cancel) \
    X(pa_operation_get_state) \
    X(pa_operation_unref) \
    X(pa_proplist_free) \
    X(pa_proplist_gets) \
    X(pa_proplist_iterate) \
    X(pa_proplist_new) \
    X(pa_proplist_sets) \
    X(pa_rtclock_now) \
    X(pa_sample_spec_valid) \
    X(pa_stream_begin_write) \
    X(pa_stream_cancel_write) \
    X(pa_stream_connect_playback) \
    X(pa_stream_connect_record) \
    X(pa_stream_cork) \
    X(pa_stream_disconnect) \
    X(pa_stream_drain) \
    X(pa_stream_drop) \
    X(pa_stream_flush) \
    X(pa_stream_get_device_name) \
    X(pa_stream_get_index) \
    X(pa_stream_get_sample_spec) \
    X(pa_stream_get_state) \
    X(pa_stream_get_timing_info) \
    X(pa_stream_new_with_proplist) \
    X(pa_stream_peek) \
    X(pa_stream_proplist_update) \
    X(pa_stream_set_moved_callback) \
    X(pa_stream_set_read_callback) \
    X(pa_stream_set_state_callback) \
    X(pa_stream_set_write_callback) \
    X(pa_stream_unref) \
    X(pa_stream_update_timing_info) \
    X(pa_stream_writable_size) \
    X(pa_stream_write) \
    X(pa_strerror) \
    X(pa_sw_volume_divide) \
    X(pa_sw_volume_from_dB) \
    X(pa_sw_volume_from_linear) \
    X(pa_sw_volume_multiply) \
    X(pa_sw_volume_to_dB) \
    X(pa_threaded_mainloop_free) \
    X(pa_threaded_mainloop_get_api) \
    X(pa_threaded_mainloop_lock) \
    X(pa_threaded_mainloop_new) \
    X(pa_threaded_mainloop_signal) \
    X(pa_threaded_mainloop_start) \
    X(pa_threaded_mainloop_stop) \
    X(pa_threaded_mainloop_unlock) \
    X(pa_threaded_mainloop_wait) \
    X(pa_usec_to_bytes)

/* The table: a field for each call, of the same name and its header's type; dp_pulse_load() opens
 * libpulse.so.0 and fills it, once per process (thread-safe), or returns NULL when the library
 * cannot be opened or lacks a call, and dp_pulse_error() then says why (Sources/CDynamicLibrary). */
DP_LIBRARY_DECLARE(dp_pulse, DP_PULSE_CALLS, dp_pulse_load, dp_pulse_error)

static inline uint32_t dp_pa_invalid_index(void) { return PA_INVALID_INDEX; }
static inline int dp_pa_volume_is_valid(pa_volume_t v) { return PA_VOLUME_IS_VALID(v); }
static inline pa_volume_t dp_pa_volume_norm(void) { return PA_VOLUME_NORM; }
static inline pa_volume_t dp_pa_volume_muted(void) { return PA_VOLUME_MUTED; }
static inline pa_volume_t dp_pa_volume_max(void) { return PA_VOLUME_MAX; }
static inline size_t dp_pa_cvolume_snprint_max(void) { return PA_CVOLUME_SNPRINT_MAX; }
static inline int dp_pa_channels_max(void) { return PA_CHANNELS_MAX; }
/* PA_VOLUME_UI_MAX calls pa_sw_volume_from_dB: VolumeMath.uiMax makes that call through the table.
 * pa_proplist_setf is variadic; Swift formats the value itself and calls pa_proplist_sets. */
#endif
