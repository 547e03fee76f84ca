/* See include/node_volumes.h (dp_pw_follow_default_sink): the default sink, from the
 * "default" metadata's "default.audio.sink". */
#include "pw_client.h"

#include <errno.h>
#include <string.h>

#include <pipewire/extensions/metadata.h>
#include <pipewire/impl-module.h>
#include <spa/utils/json.h>
#include <spa/utils/string.h>

static const char default_sink_key[] = "default.audio.sink";

/* The node name in a {"name": "..."} value; 0 when there is none. */
static int sink_name(const char *value, char *name, int size) {
    struct spa_json it[2];
    char key[64];
    spa_json_init(&it[0], value, strlen(value));
    if (spa_json_enter_object(&it[0], &it[1]) <= 0) return 0;
    while (spa_json_get_string(&it[1], key, sizeof key) > 0) {
        if (spa_streq(key, "name")) return spa_json_get_string(&it[1], name, size) > 0;
        const char *skipped;
        if (spa_json_next(&it[1], &skipped) <= 0) return 0;
    }
    return 0;
}

static int on_property(void *data, uint32_t subject, const char *key, const char *type, const char *value) {
    dp_pw *pw = data;
    (void)type;
    if (subject != PW_ID_CORE) return 0;
    /* key NULL: every property of the subject was removed. */
    if (key != NULL && !spa_streq(key, default_sink_key)) return 0;
    char name[512];
    if (key != NULL && value != NULL && sink_name(value, name, sizeof name)) pw->default_sink(pw->userdata, name);
    else pw->default_sink(pw->userdata, NULL);
    return 0;
}

static const struct pw_metadata_events metadata_events = {
    PW_VERSION_METADATA_EVENTS,
    .property = on_property,
};

static void on_global(void *data, uint32_t id, uint32_t permissions, const char *type, uint32_t version,
                      const struct spa_dict *props) {
    dp_pw *pw = data;
    (void)permissions; (void)version;
    if (pw->metadata != NULL || !spa_streq(type, PW_TYPE_INTERFACE_Metadata) || props == NULL) return;
    if (!spa_streq(spa_dict_lookup(props, PW_KEY_METADATA_NAME), "default")) return;
    pw->metadata = pw_registry_bind(pw->globals, id, PW_TYPE_INTERFACE_Metadata, PW_VERSION_METADATA, 0);
    if (pw->metadata == NULL) return;
    pw_metadata_add_listener((struct pw_metadata *)pw->metadata, &pw->metadata_listener, &metadata_events, pw);
}

static void on_global_remove(void *data, uint32_t id) {
    dp_pw *pw = data;
    if (pw->metadata == NULL || pw_proxy_get_bound_id(pw->metadata) != id) return;
    spa_hook_remove(&pw->metadata_listener);
    pw_proxy_destroy(pw->metadata);
    pw->metadata = NULL;
}

static const struct pw_registry_events registry_events = {
    PW_VERSION_REGISTRY_EVENTS,
    .global = on_global,
    .global_remove = on_global_remove,
};

int dp_pw_follow_default_sink(dp_pw *pw, dp_pw_default_sink_cb changed) {
    if (pw->globals != NULL) return 0;
    /* The metadata interface's marshal (not loaded by dp_pw_connect, which needs only nodes). */
    if (pw->metadata_module == NULL &&
        (pw->metadata_module = pw_context_load_module(pw->context, "libpipewire-module-metadata", NULL, NULL)) == NULL)
        return -errno;
    pw->globals = pw_core_get_registry(pw->core, PW_VERSION_REGISTRY, 0);
    if (pw->globals == NULL) return -errno;
    pw->default_sink = changed;
    pw_registry_add_listener(pw->globals, &pw->registry_listener, &registry_events, pw);
    return 0;
}

void dp_pw_default_sink_free(dp_pw *pw) {
    if (pw->metadata != NULL) {
        spa_hook_remove(&pw->metadata_listener);
        pw_proxy_destroy(pw->metadata);
        pw->metadata = NULL;
    }
    if (pw->globals != NULL) {
        spa_hook_remove(&pw->registry_listener);
        pw_proxy_destroy((struct pw_proxy *)pw->globals);
        pw->globals = NULL;
    }
}
