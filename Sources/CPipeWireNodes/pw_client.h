/* The PipeWire client behind include/node_volumes.h, shared by its two C files: node_volumes.c
 * (a node's volumes) and default_sink.c (the default sink). Private to this target. */
#ifndef DUCKPROMPT_PW_CLIENT_H
#define DUCKPROMPT_PW_CLIENT_H
#include "node_volumes.h"

#include <pipewire/pipewire.h>

struct watched {
    struct spa_list link;
    dp_pw *pw;
    uint32_t id;
    uint64_t serial;
    int verified;           /* object.serial checked (or not asked for) */
    int dead;               /* reported lost: freed by dp_pw_unwatch, dp_pw_watch or dp_pw_free */
    struct pw_proxy *proxy;
    struct spa_hook node_listener;
    struct spa_hook proxy_listener;
};

struct dp_pw {
    struct pw_loop *loop;
    struct pw_context *context;
    struct pw_core *core;
    struct pw_registry *registry;
    struct spa_hook core_listener;
    struct spa_list nodes;
    dp_pw_volumes_cb volumes;
    dp_pw_lost_cb lost;
    void *userdata;
    int failed;
    /* The default sink (default_sink.c): a registry of its own (a new registry lists every
     * global again), its listener, the "default" metadata. */
    dp_pw_default_sink_cb default_sink;
    struct pw_impl_module *metadata_module;
    struct pw_registry *globals;
    struct spa_hook registry_listener;
    struct pw_proxy *metadata;
    struct spa_hook metadata_listener;
    uint32_t metadata_id;       /* the "default" metadata's global id, SPA_ID_INVALID until listed */
    int globals_seq;            /* the core sync after the registry's first listing, -1 once
                                 * it returned (with `globals` set: every global was listed) */
    /* A read of the default sink (dp_pw_read_default_sink): a binding of its own, the core
     * sync that ends it, what it found. */
    dp_pw_default_read_cb default_read;
    int read_wanted;            /* asked for before the metadata was listed */
    int read_seq;               /* the sync in flight, -1 when none */
    struct pw_proxy *reader;
    struct spa_hook reader_listener;
    int read_found;             /* default.audio.sink came: 1 named, 0 not (yet) */
    char read_name[512];
};

/* A core "done" event (node_volumes.c's core listener): ends a default sink read whose sync it
 * answers. */
void dp_pw_default_sink_done(dp_pw *pw, int seq);

/* Releases the default sink's metadata proxy and registry listener (dp_pw_free). */
void dp_pw_default_sink_free(dp_pw *pw);
#endif
