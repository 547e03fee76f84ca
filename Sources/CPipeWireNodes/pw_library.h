/* libpipewire is opened with dlopen when the first PipeWire client is made (dp_pw_connect), not
 * linked: a process that never talks to PipeWire (any command on PulseAudio, and a command
 * that hands its prompt to a running service) does not load it and its libraries at start, and
 * duckprompt runs where libpipewire is not installed. The calls this target makes are routed
 * through the table below: include this header after every PipeWire header. Private to this
 * target. */
#ifndef DUCKPROMPT_PW_LIBRARY_H
#define DUCKPROMPT_PW_LIBRARY_H
#include <pipewire/pipewire.h>
#include <pipewire/impl-module.h>

/* The libpipewire calls of node_volumes.c and default_sink.c (the rest of the API they use is
 * macros over interfaces and inline header functions). */
struct dp_pw_library {
    __typeof__(pw_init) *init;
    __typeof__(pw_log_set_level) *log_set_level;
    __typeof__(pw_loop_new) *loop_new;
    __typeof__(pw_loop_destroy) *loop_destroy;
    __typeof__(pw_properties_new) *properties_new;
    __typeof__(pw_context_new) *context_new;
    __typeof__(pw_context_destroy) *context_destroy;
    __typeof__(pw_context_connect) *context_connect;
    __typeof__(pw_context_load_module) *context_load_module;
    __typeof__(pw_core_disconnect) *core_disconnect;
    __typeof__(pw_proxy_add_listener) *proxy_add_listener;
    __typeof__(pw_proxy_add_object_listener) *proxy_add_object_listener;
    __typeof__(pw_proxy_destroy) *proxy_destroy;
};

/* Filled by dp_pw_library_load. */
extern struct dp_pw_library dp_pw_lib;

/* Opens libpipewire-0.3.so.0 (dlopen, RTLD_NOW | RTLD_LOCAL) and looks each call up (dlsym),
 * once per process; thread-safe. Returns 0, or -ELIBACC when the library or one of the calls
 * is not there (dlerror() says which, on stderr when PIPEWIRE_DEBUG is set). */
int dp_pw_library_load(void);

#define pw_init (dp_pw_lib.init)
#define pw_log_set_level (dp_pw_lib.log_set_level)
#define pw_loop_new (dp_pw_lib.loop_new)
#define pw_loop_destroy (dp_pw_lib.loop_destroy)
#define pw_properties_new (dp_pw_lib.properties_new)
#define pw_context_new (dp_pw_lib.context_new)
#define pw_context_destroy (dp_pw_lib.context_destroy)
#define pw_context_connect (dp_pw_lib.context_connect)
#define pw_context_load_module (dp_pw_lib.context_load_module)
#define pw_core_disconnect (dp_pw_lib.core_disconnect)
#define pw_proxy_add_listener (dp_pw_lib.proxy_add_listener)
#define pw_proxy_add_object_listener (dp_pw_lib.proxy_add_object_listener)
#define pw_proxy_destroy (dp_pw_lib.proxy_destroy)
#endif
