/* The D-Bus object of `duckprompt serve`: sd-bus's vtable for io.github.duckprompt.DuckPrompt1
 * (share/dbus-1/interfaces/io.github.duckprompt.DuckPrompt1.xml), whose SD_BUS_METHOD and
 * SD_BUS_PROPERTY entries are C macros Swift cannot expand. sd-bus checks each call's signature
 * against it (a wrong one is answered org.freedesktop.DBus.Error.InvalidArgs), answers
 * Introspect, Peer and Properties itself, and hands every method call to one handler.
 * DuckPromptService/Bus/BusConnection.swift is the only caller. */
#ifndef DUCKPROMPT_BUS_OBJECT_H
#define DUCKPROMPT_BUS_OBJECT_H

#include <systemd/sd-bus.h>

typedef enum {
    DP_BUS_PLAY,     /* Play(as files, a{sv} options) -> (t id) */
    DP_BUS_PLAY_FD,  /* PlayFd(h fd, a{sv} options) -> (t id) */
    DP_BUS_SAY,      /* Say(s text, a{sv} options) -> (t id) */
    DP_BUS_CANCEL,   /* Cancel(t id) */
    DP_BUS_ROUTE,    /* Route() -> (s sink, s kind, s rule, s reason) */
    DP_BUS_DEVICES,  /* Devices() -> (aa{sv} devices) */
    DP_BUS_WATCH_ROUTE, /* WatchRoute(): the caller listens for RouteChanged */
    DP_BUS_KEEP_AWAKE, /* KeepAwake(u seconds): the route's sink kept from suspending */
    DP_BUS_ESTIMATE, /* Estimate(as files, a{sv} options) -> (a{sv} estimate) */
    DP_BUS_ESTIMATE_SAY, /* EstimateSay(s text, a{sv} options) -> (a{sv} estimate) */
} dp_bus_method;

/* Called on the bus's thread for each method call, its arguments not yet read. Returns what
 * an sd-bus method handler returns: >= 0 once it replied (sd_bus_reply_method_return or
 * _error), or a negative errno with `error` set (sd-bus then replies with it). */
typedef int (*dp_bus_handler)(dp_bus_method method, sd_bus_message *call, void *userdata,
                              sd_bus_error *error);

typedef struct dp_bus_object dp_bus_object;

/* Adds the object at `path` with `interface` (sd_bus_add_object_vtable); `version` is the
 * Version property's value, `server` the Server property's (both copied). Returns 0 or a
 * negative errno. */
int dp_bus_object_add(sd_bus *bus, const char *path, const char *interface, const char *version,
                      const char *server, dp_bus_handler handler, void *userdata, dp_bus_object **out);

/* Sets the CallState property (`none`, `ringing`, `active`, `held`; "none" at first) and, when
 * it changed, sends org.freedesktop.DBus.Properties.PropertiesChanged with its new value
 * (sd_bus_emit_properties_changed). On the bus's thread. Returns 0 or a negative errno. */
int dp_bus_object_set_call_state(dp_bus_object *object, sd_bus *bus, const char *path, const char *interface,
                                 const char *state);

/* Removes the object and frees it. NULL is ignored. */
void dp_bus_object_free(dp_bus_object *object);

#endif
