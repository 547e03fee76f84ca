/* See include/node_volumes.h (dp_pw_follow_default_sink, dp_pw_read_default_sink): the default
 * sink, from the "default" metadata's "default.audio.sink". */
#include "pw_client.h"

#include <errno.h>
#include <string.h>

#include <pipewire/extensions/metadata.h>
#include <pipewire/impl-module.h>
#include <spa/utils/json.h>
#include <spa/utils/string.h>
/* Last: routes the libpipewire calls below through the table dlopen filled. */
#include "pw_library.h"

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

/* A read's binding: the metadata's current properties come with the bind. */
static int on_read_property(void *data, uint32_t subject, const char *key, const char *type, const char *value) {
    dp_pw *pw = data;
    (void)type;
    if (subject != PW_ID_CORE) return 0;
    if (key == NULL) pw->read_found = 0;
    else if (spa_streq(key, default_sink_key))
        pw->read_found = value != NULL && sink_name(value, pw->read_name, sizeof pw->read_name);
    return 0;
}

static const struct pw_metadata_events read_events = {
    PW_VERSION_METADATA_EVENTS,
    .property = on_read_property,
};

static void finish_read(dp_pw *pw, int res) {
    if (pw->reader != NULL) {
        spa_hook_remove(&pw->reader_listener);
        pw_proxy_destroy(pw->reader);
        pw->reader = NULL;
    }
    pw->read_seq = -1;
    pw->read_wanted = 0;
    pw->default_read(pw->userdata, res, res == 0 && pw->read_found ? pw->read_name : NULL);
}

/* Binds the metadata anew and syncs: the daemon answers the sync only after the bind is
 * complete (the client is busy until the metadata's owner answered its ping), so the binding
 * is destroyed after it, never while the daemon still counts it as pending. */
static void start_read(dp_pw *pw) {
    pw->read_wanted = 0;
    pw->read_found = 0;
    pw->reader = pw_registry_bind(pw->globals, pw->metadata_id, PW_TYPE_INTERFACE_Metadata, PW_VERSION_METADATA, 0);
    if (pw->reader == NULL) { finish_read(pw, errno > 0 ? -errno : -EIO); return; }
    pw_metadata_add_listener((struct pw_metadata *)pw->reader, &pw->reader_listener, &read_events, pw);
    pw->read_seq = pw_core_sync(pw->core, PW_ID_CORE, 0);
    if (pw->read_seq < 0) finish_read(pw, pw->read_seq);
}

static void on_global(void *data, uint32_t id, uint32_t permissions, const char *type, uint32_t version,
                      const struct spa_dict *props) {
    dp_pw *pw = data;
    (void)permissions; (void)version;
    if (pw->metadata_id != SPA_ID_INVALID || !spa_streq(type, PW_TYPE_INTERFACE_Metadata) || props == NULL) return;
    if (!spa_streq(spa_dict_lookup(props, PW_KEY_METADATA_NAME), "default")) return;
    pw->metadata_id = id;
    pw->metadata = pw_registry_bind(pw->globals, id, PW_TYPE_INTERFACE_Metadata, PW_VERSION_METADATA, 0);
    if (pw->metadata != NULL)
        pw_metadata_add_listener((struct pw_metadata *)pw->metadata, &pw->metadata_listener, &metadata_events, pw);
    if (pw->read_wanted) start_read(pw);
}

static void on_global_remove(void *data, uint32_t id) {
    dp_pw *pw = data;
    if (id != pw->metadata_id) return;
    pw->metadata_id = SPA_ID_INVALID;
    if (pw->metadata == NULL) return;
    spa_hook_remove(&pw->metadata_listener);
    pw_proxy_destroy(pw->metadata);
    pw->metadata = NULL;
}

static const struct pw_registry_events registry_events = {
    PW_VERSION_REGISTRY_EVENTS,
    .global = on_global,
    .global_remove = on_global_remove,
};

int dp_pw_follow_default_sink(dp_pw *pw, dp_pw_default_sink_cb changed, dp_pw_default_read_cb read) {
    if (pw->globals != NULL) return 0;
    /* The metadata interface's marshal (not loaded by dp_pw_connect, which needs only nodes). */
    if (pw->metadata_module == NULL &&
        (pw->metadata_module = pw_context_load_module(pw->context, "libpipewire-module-metadata", NULL, NULL)) == NULL)
        return -errno;
    pw->globals = pw_core_get_registry(pw->core, PW_VERSION_REGISTRY, 0);
    if (pw->globals == NULL) return -errno;
    pw->default_sink = changed;
    pw->default_read = read;
    pw_registry_add_listener(pw->globals, &pw->registry_listener, &registry_events, pw);
    /* Every global comes before this sync's done: then a missing metadata is known missing. */
    pw->globals_seq = pw_core_sync(pw->core, PW_ID_CORE, 0);
    return 0;
}

int dp_pw_read_default_sink(dp_pw *pw) {
    if (pw->globals == NULL) return -EINVAL;
    if (pw->read_seq >= 0 || pw->read_wanted) return 0;   /* one in flight: its answer serves */
    if (pw->metadata_id != SPA_ID_INVALID) start_read(pw);
    else if (pw->globals_seq < 0) finish_read(pw, -ENOENT);   /* listed, and no metadata */
    else pw->read_wanted = 1;
    return 0;
}

void dp_pw_default_sink_done(dp_pw *pw, int seq) {
    if (pw->globals_seq >= 0 && seq == pw->globals_seq) {
        pw->globals_seq = -1;
        if (pw->read_wanted && pw->metadata_id == SPA_ID_INVALID) finish_read(pw, -ENOENT);
    }
    if (pw->read_seq >= 0 && seq == pw->read_seq) finish_read(pw, pw->metadata_id == SPA_ID_INVALID ? -ENOENT : 0);
}

void dp_pw_default_sink_free(dp_pw *pw) {
    if (pw->reader != NULL) {
        spa_hook_remove(&pw->reader_listener);
        pw_proxy_destroy(pw->reader);
        pw->reader = NULL;
    }
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
