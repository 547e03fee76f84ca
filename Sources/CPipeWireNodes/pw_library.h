/* libpipewire is opened with dlopen when the first PipeWire client is made (dp_pw_connect), not
 * linked (Sources/CDynamicLibrary): a process that never talks to PipeWire (any command on
 * PulseAudio, and a command that hands its prompt to a running service) does not load it and
 * its libraries at start, and duckprompt runs where libpipewire is not installed. The calls
 * this target makes are routed through the table below: include this header after every
 * PipeWire header. Private to this target. */
#ifndef DUCKPROMPT_PW_LIBRARY_H
#define DUCKPROMPT_PW_LIBRARY_H
#include <pipewire/pipewire.h>
#include <pipewire/impl-module.h>

#include <dynamic_library.h>

/* The libpipewire calls of node_volumes.c and default_sink.c (the rest of the API they use is
 * macros over interfaces and inline header functions): one list, from which the table is made. */
#define DP_PW_CALLS(X) \
    X(pw_init) \
    X(pw_log_set_level) \
    X(pw_loop_new) \
    X(pw_loop_destroy) \
    X(pw_properties_new) \
    X(pw_context_new) \
    X(pw_context_destroy) \
    X(pw_context_connect) \
    X(pw_context_load_module) \
    X(pw_core_disconnect) \
    X(pw_proxy_add_listener) \
    X(pw_proxy_add_object_listener) \
    X(pw_proxy_destroy)

/* The table (Sources/CDynamicLibrary): a field for each call, of the same name and its header's
 * type; dp_pw_library_load() opens libpipewire-0.3.so.0 and fills it, once per process
 * (thread-safe), or returns NULL when the library or one of the calls is not there, and
 * dp_pw_library_error() then says which (told on stderr when PIPEWIRE_DEBUG is set, by
 * dp_pw_connect). */
DP_LIBRARY_DECLARE(dp_pw_library, DP_PW_CALLS, dp_pw_library_load, dp_pw_library_error)
extern struct dp_pw_library dp_pw_calls;

/* Every call below goes through the table (a macro does not expand its own name again). */
#define pw_init (dp_pw_calls.pw_init)
#define pw_log_set_level (dp_pw_calls.pw_log_set_level)
#define pw_loop_new (dp_pw_calls.pw_loop_new)
#define pw_loop_destroy (dp_pw_calls.pw_loop_destroy)
#define pw_properties_new (dp_pw_calls.pw_properties_new)
#define pw_context_new (dp_pw_calls.pw_context_new)
#define pw_context_destroy (dp_pw_calls.pw_context_destroy)
#define pw_context_connect (dp_pw_calls.pw_context_connect)
#define pw_context_load_module (dp_pw_calls.pw_context_load_module)
#define pw_core_disconnect (dp_pw_calls.pw_core_disconnect)
#define pw_proxy_add_listener (dp_pw_calls.pw_proxy_add_listener)
#define pw_proxy_add_object_listener (dp_pw_calls.pw_proxy_add_object_listener)
#define pw_proxy_destroy (dp_pw_calls.pw_proxy_destroy)
#endif
