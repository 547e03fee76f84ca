/* sd-bus's vtable for io.github.duckprompt.DuckPrompt1: include/bus_object.h. */
#include "bus_object.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct dp_bus_object {
    sd_bus_slot *slot;
    char *version;
    char call_state[16];
    char *server;
    dp_bus_handler handler;
    void *userdata;
};

#define DISPATCH(name, method)                                                          \
    static int name(sd_bus_message *call, void *userdata, sd_bus_error *error) {       \
        struct dp_bus_object *o = userdata;                                             \
        return o->handler(method, call, o->userdata, error);                            \
    }
DISPATCH(on_play, DP_BUS_PLAY)
DISPATCH(on_play_fd, DP_BUS_PLAY_FD)
DISPATCH(on_say, DP_BUS_SAY)
DISPATCH(on_cancel, DP_BUS_CANCEL)
DISPATCH(on_route, DP_BUS_ROUTE)
DISPATCH(on_devices, DP_BUS_DEVICES)
DISPATCH(on_watch_route, DP_BUS_WATCH_ROUTE)
DISPATCH(on_keep_awake, DP_BUS_KEEP_AWAKE)
DISPATCH(on_estimate, DP_BUS_ESTIMATE)
DISPATCH(on_estimate_say, DP_BUS_ESTIMATE_SAY)

static int get_version(sd_bus *bus, const char *path, const char *interface, const char *property,
                       sd_bus_message *reply, void *userdata, sd_bus_error *error) {
    (void)bus; (void)path; (void)interface; (void)property; (void)error;
    struct dp_bus_object *o = userdata;
    return sd_bus_message_append_basic(reply, 's', o->version);
}

static int get_call_state(sd_bus *bus, const char *path, const char *interface, const char *property,
                          sd_bus_message *reply, void *userdata, sd_bus_error *error) {
    (void)bus; (void)path; (void)interface; (void)property; (void)error;
    struct dp_bus_object *o = userdata;
    return sd_bus_message_append_basic(reply, 's', o->call_state);
}

static int get_server(sd_bus *bus, const char *path, const char *interface, const char *property,
                      sd_bus_message *reply, void *userdata, sd_bus_error *error) {
    (void)bus; (void)path; (void)interface; (void)property; (void)error;
    struct dp_bus_object *o = userdata;
    return sd_bus_message_append_basic(reply, 's', o->server);
}

static const sd_bus_vtable vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_METHOD_WITH_ARGS("Play", SD_BUS_ARGS("as", files, "a{sv}", options), SD_BUS_RESULT("t", id),
                            on_play, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("PlayFd", SD_BUS_ARGS("h", fd, "a{sv}", options), SD_BUS_RESULT("t", id),
                            on_play_fd, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Say", SD_BUS_ARGS("s", text, "a{sv}", options), SD_BUS_RESULT("t", id),
                            on_say, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Cancel", SD_BUS_ARGS("t", id), SD_BUS_NO_RESULT,
                            on_cancel, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Route", SD_BUS_NO_ARGS,
                            SD_BUS_RESULT("s", sink, "s", kind, "s", rule, "s", reason),
                            on_route, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Devices", SD_BUS_NO_ARGS, SD_BUS_RESULT("aa{sv}", devices),
                            on_devices, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("WatchRoute", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT,
                            on_watch_route, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("KeepAwake", SD_BUS_ARGS("u", seconds), SD_BUS_NO_RESULT,
                            on_keep_awake, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("Estimate", SD_BUS_ARGS("as", files, "a{sv}", options), SD_BUS_RESULT("a{sv}", estimate),
                            on_estimate, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_METHOD_WITH_ARGS("EstimateSay", SD_BUS_ARGS("s", text, "a{sv}", options), SD_BUS_RESULT("a{sv}", estimate),
                            on_estimate_say, SD_BUS_VTABLE_UNPRIVILEGED),
    SD_BUS_SIGNAL_WITH_ARGS("PromptStarted", SD_BUS_ARGS("t", id, "s", sink, "s", kind, "u", pre_roll_ms), 0),
    SD_BUS_SIGNAL_WITH_ARGS("PromptTiming", SD_BUS_ARGS("t", id, "t", first_sample_us, "t", end_us), 0),
    SD_BUS_SIGNAL_WITH_ARGS("PromptFinished", SD_BUS_ARGS("t", id, "s", outcome, "s", message), 0),
    SD_BUS_SIGNAL_WITH_ARGS("RouteChanged", SD_BUS_ARGS("s", sink, "s", kind, "s", reason), 0),
    SD_BUS_PROPERTY("Version", "s", get_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
    SD_BUS_PROPERTY("CallState", "s", get_call_state, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
    SD_BUS_PROPERTY("Server", "s", get_server, 0, SD_BUS_VTABLE_PROPERTY_CONST),
    SD_BUS_VTABLE_END
};

int dp_bus_object_add(sd_bus *bus, const char *path, const char *interface, const char *version,
                      const char *server, dp_bus_handler handler, void *userdata, dp_bus_object **out) {
    struct dp_bus_object *o = calloc(1, sizeof *o);
    if (!o) return -ENOMEM;
    o->version = strdup(version);
    o->server = strdup(server);
    if (!o->version || !o->server) { free(o->version); free(o->server); free(o); return -ENOMEM; }
    strcpy(o->call_state, "none");
    o->handler = handler;
    o->userdata = userdata;
    int r = sd_bus_add_object_vtable(bus, &o->slot, path, interface, vtable, o);
    if (r < 0) { free(o->version); free(o->server); free(o); return r; }
    *out = o;
    return 0;
}

int dp_bus_object_set_call_state(dp_bus_object *object, sd_bus *bus, const char *path, const char *interface,
                                 const char *state) {
    if (strlen(state) >= sizeof object->call_state) return -EINVAL;
    if (strcmp(object->call_state, state) == 0) return 0;
    strcpy(object->call_state, state);
    return sd_bus_emit_properties_changed(bus, path, interface, "CallState", NULL);
}

void dp_bus_object_free(dp_bus_object *object) {
    if (!object) return;
    sd_bus_slot_unref(object->slot);
    free(object->version);
    free(object->server);
    free(object);
}
