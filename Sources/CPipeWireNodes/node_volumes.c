/* See include/node_volumes.h. libpipewire's interface calls are macros over vtables, and SPA
 * pods are parsed with header-only inline functions: hence a C layer, kept to this file. */
#include "node_volumes.h"
#include "pw_client.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pipewire/impl-module.h>
#include <spa/param/audio/raw.h>
#include <spa/param/props.h>
#include <spa/pod/iter.h>
#include <spa/utils/result.h>
/* Last: routes the libpipewire calls below through the table dlopen filled. */
#include "pw_library.h"

static struct watched *find(dp_pw *pw, uint32_t id) {
    struct watched *w;
    spa_list_for_each(w, &pw->nodes, link) if (w->id == id) return w;
    return NULL;
}

static void drop(struct watched *w) {
    spa_list_remove(&w->link);
    spa_hook_remove(&w->node_listener);
    spa_hook_remove(&w->proxy_listener);
    pw_proxy_destroy(w->proxy);
    free(w);
}

/* Reports the node as lost once; its events are ignored from then on. The proxy is destroyed
 * later, not inside one of its own events. */
static void lose(struct watched *w, int res) {
    if (w->dead) return;
    w->dead = 1;
    w->pw->lost(w->pw->userdata, w->id, res);
}

static void on_node_info(void *data, const struct pw_node_info *info) {
    struct watched *w = data;
    if (w->dead || w->verified || info == NULL || info->props == NULL) return;
    const char *serial = spa_dict_lookup(info->props, PW_KEY_OBJECT_SERIAL);
    if (serial == NULL || strtoull(serial, NULL, 10) != w->serial) { lose(w, -ESTALE); return; }
    w->verified = 1;
}

static void on_node_param(void *data, int seq, uint32_t id, uint32_t index, uint32_t next,
                          const struct spa_pod *param) {
    struct watched *w = data;
    (void)seq; (void)index; (void)next;
    if (w->dead || !w->verified || id != SPA_PARAM_Props || param == NULL || !spa_pod_is_object(param)) return;
    const struct spa_pod_prop *prop;
    SPA_POD_OBJECT_FOREACH((const struct spa_pod_object *)param, prop) {
        if (prop->key != SPA_PROP_channelVolumes) continue;
        float linear[SPA_AUDIO_MAX_CHANNELS];
        uint32_t n = spa_pod_copy_array(&prop->value, SPA_TYPE_Float, linear, SPA_AUDIO_MAX_CHANNELS);
        if (n > 0) w->pw->volumes(w->pw->userdata, w->id, linear, n);
        return;
    }
}

static const struct pw_node_events node_events = {
    PW_VERSION_NODE_EVENTS,
    .info = on_node_info,
    .param = on_node_param,
};

static void on_proxy_removed(void *data) { lose(data, -ENOENT); }

static void on_proxy_error(void *data, int seq, int res, const char *message) {
    (void)seq; (void)message;
    lose(data, res < 0 ? res : -EIO);
}

static const struct pw_proxy_events proxy_events = {
    PW_VERSION_PROXY_EVENTS,
    .removed = on_proxy_removed,
    .error = on_proxy_error,
};

static void on_core_error(void *data, uint32_t id, int seq, int res, const char *message) {
    dp_pw *pw = data;
    (void)seq; (void)message;
    if (id != PW_ID_CORE || pw->failed) return;   /* a proxy's error: its own listener has it */
    pw->failed = 1;
    pw->lost(pw->userdata, SPA_ID_INVALID, res < 0 ? res : -EIO);
}

static void on_core_done(void *data, uint32_t id, int seq) {
    if (id == PW_ID_CORE) dp_pw_default_sink_done(data, seq);
}

static const struct pw_core_events core_events = {
    PW_VERSION_CORE_EVENTS,
    .done = on_core_done,
    .error = on_core_error,
};

dp_pw *dp_pw_connect(dp_pw_volumes_cb volumes, dp_pw_lost_cb lost, void *userdata, int *error) {
    if (dp_pw_library_load() == NULL) {
        if (getenv("PIPEWIRE_DEBUG") != NULL) fprintf(stderr, "duckprompt: %s\n", dp_pw_library_error());
        *error = -ELIBACC;
        return NULL;
    }
    pw_init(NULL, NULL);
    dp_pw *pw = calloc(1, sizeof *pw);
    if (pw == NULL) { *error = -ENOMEM; return NULL; }
    spa_list_init(&pw->nodes);
    pw->volumes = volumes;
    pw->lost = lost;
    pw->userdata = userdata;
    pw->metadata_id = SPA_ID_INVALID;
    pw->globals_seq = -1;
    pw->read_seq = -1;
    pw->loop = pw_loop_new(NULL);
    if (pw->loop == NULL) goto fail;
    /* No client.conf ("null"): it would load client-node, client-device, adapter, metadata
     * and session-manager (1 MiB of RSS) for a client that needs only the native protocol to
     * bind nodes and read their params; no D-Bus support plugin either. */
    struct pw_properties *props = pw_properties_new(PW_KEY_CONFIG_NAME, "null",
                                                    "support.dbus", "false", NULL);
    if (props == NULL) goto fail;
    /* Without a config, libpipewire warns on stderr that no module came from it and that its
     * data thread cannot get realtime priority (module-rt is not loaded): neither matters to
     * this client, so warnings are silenced unless PIPEWIRE_DEBUG asks for them. */
    if (getenv("PIPEWIRE_DEBUG") == NULL) pw_log_set_level(SPA_LOG_LEVEL_ERROR);
    pw->context = pw_context_new(pw->loop, props, 0);
    if (pw->context == NULL) goto fail;
    if (pw_context_load_module(pw->context, "libpipewire-module-protocol-native", NULL, NULL) == NULL) goto fail;
    pw->core = pw_context_connect(pw->context, NULL, 0);
    if (pw->core == NULL) goto fail;
    pw_core_add_listener(pw->core, &pw->core_listener, &core_events, pw);
    pw->registry = pw_core_get_registry(pw->core, PW_VERSION_REGISTRY, 0);
    if (pw->registry == NULL) goto fail;
    return pw;
fail:
    *error = errno > 0 ? -errno : -EIO;
    dp_pw_free(pw);
    return NULL;
}

void dp_pw_set_userdata(dp_pw *pw, void *userdata) { pw->userdata = userdata; }

int dp_pw_fd(dp_pw *pw) { return pw_loop_get_fd(pw->loop); }

int dp_pw_dispatch(dp_pw *pw) {
    pw_loop_enter(pw->loop);
    int res = pw_loop_iterate(pw->loop, 0);
    pw_loop_leave(pw->loop);
    return res < 0 && res != -EINTR ? res : 0;
}

int dp_pw_watch(dp_pw *pw, uint32_t node, uint64_t serial) {
    struct watched *w = find(pw, node);
    if (w != NULL && !w->dead) return 0;
    if (w != NULL) drop(w);
    w = calloc(1, sizeof *w);
    if (w == NULL) return -ENOMEM;
    w->pw = pw;
    w->id = node;
    w->serial = serial;
    w->verified = serial == 0;
    w->proxy = pw_registry_bind(pw->registry, node, PW_TYPE_INTERFACE_Node, PW_VERSION_NODE, 0);
    if (w->proxy == NULL) { free(w); return -errno; }
    spa_list_append(&pw->nodes, &w->link);
    pw_proxy_add_listener(w->proxy, &w->proxy_listener, &proxy_events, w);
    pw_proxy_add_object_listener(w->proxy, &w->node_listener, &node_events, w);
    uint32_t ids[] = { SPA_PARAM_Props };
    pw_node_subscribe_params((struct pw_node *)w->proxy, ids, 1);
    return 0;
}

int dp_pw_refresh(dp_pw *pw, uint32_t node) {
    struct watched *w = find(pw, node);
    if (w == NULL || w->dead) return -ENOENT;
    pw_node_enum_params((struct pw_node *)w->proxy, 0, SPA_PARAM_Props, 0, 1, NULL);
    return 0;
}

void dp_pw_unwatch(dp_pw *pw, uint32_t node) {
    struct watched *w = find(pw, node);
    if (w != NULL) drop(w);
}

void dp_pw_free(dp_pw *pw) {
    if (pw == NULL) return;
    struct watched *w, *t;
    spa_list_for_each_safe(w, t, &pw->nodes, link) drop(w);
    dp_pw_default_sink_free(pw);
    if (pw->core != NULL) {
        spa_hook_remove(&pw->core_listener);
        pw_core_disconnect(pw->core);
    }
    if (pw->context != NULL) pw_context_destroy(pw->context);
    if (pw->loop != NULL) pw_loop_destroy(pw->loop);
    free(pw);
}
