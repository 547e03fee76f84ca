#ifndef DUCKPROMPT_NODE_VOLUMES_H
#define DUCKPROMPT_NODE_VOLUMES_H
/*
 * The one C layer over libpipewire: follows the channel volumes of chosen PipeWire nodes, each
 * value the server applies, in order. pipewire-pulse shows a pulse client only the state at the
 * moment it answers an info request, so two volume writes a millisecond apart look like one;
 * a node's Props subscription (pw_node_subscribe_params(SPA_PARAM_Props)) reports each.
 *
 * Not thread-safe: every call, and every callback, runs under the caller's one lock (the
 * libpulse threaded mainloop's). The PipeWire loop has no thread of its own: the caller polls
 * dp_pw_fd() and calls dp_pw_dispatch() when it is readable.
 */
#include <stdint.h>

typedef struct dp_pw dp_pw;

/* A node's Props carried channel volumes: `linear` holds `channels` linear factors
 * (SPA_PROP_channelVolumes, the cube of a pa_volume_t / PA_VOLUME_NORM). */
typedef void (*dp_pw_volumes_cb)(void *userdata, uint32_t node, const float *linear, uint32_t channels);
/* A watched node can no longer be followed: gone (`res` -ENOENT), a different object than the
 * one asked for (its object.serial differs: -ESTALE), or an error the server sent. With `node`
 * UINT32_MAX (SPA_ID_INVALID), the connection itself failed: nothing is followed any more. */
typedef void (*dp_pw_lost_cb)(void *userdata, uint32_t node, int res);
/* The default sink changed: `name` is its node.name (a pulse sink's name), NULL when there is
 * none. From the "default" metadata's "default.audio.sink" ({"name": ...}), which WirePlumber
 * sets and pipewire-pulse reads. */
typedef void (*dp_pw_default_sink_cb)(void *userdata, const char *name);
/* A read of the default sink (dp_pw_read_default_sink) ended: `res` 0 with `name` the
 * default.audio.sink's node.name (NULL: the metadata names none), or a negative errno: -ENOENT
 * when the daemon has no "default" metadata (no WirePlumber). */
typedef void (*dp_pw_default_read_cb)(void *userdata, int res, const char *name);
/* Connects to the PipeWire daemon (PIPEWIRE_REMOTE, else pipewire-0 in XDG_RUNTIME_DIR) with
 * pw_context_connect. NULL on failure, with -errno in *error. */
dp_pw *dp_pw_connect(dp_pw_volumes_cb volumes, dp_pw_lost_cb lost, void *userdata, int *error);
/* Replaces the `userdata` callbacks get. */
void dp_pw_set_userdata(dp_pw *pw, void *userdata);
/* The loop's file descriptor (pw_loop_get_fd): readable when dp_pw_dispatch has work. */
int dp_pw_fd(dp_pw *pw);
/* Runs what is ready without blocking (pw_loop_iterate with timeout 0); callbacks run here.
 * Returns a negative errno when the loop failed. */
int dp_pw_dispatch(dp_pw *pw);
/* Starts following node `node` (pw_registry_bind, pw_node_subscribe_params): the current
 * channel volumes come first, then each change. `serial` is the object.serial the node must
 * have (0: not checked). Returns 0, or -ENOMEM; failures later come through `lost`. */
int dp_pw_watch(dp_pw *pw, uint32_t node, uint64_t serial);
/* Asks a followed node for its channel volumes again (pw_node_enum_params of Props): they
 * come through `volumes` like a change. Returns 0, or -ENOENT when `node` is not followed. */
int dp_pw_refresh(dp_pw *pw, uint32_t node);
/* Stops following `node` (pw_proxy_destroy). */
void dp_pw_unwatch(dp_pw *pw, uint32_t node);
/* Disconnects and frees everything; no callback runs after it. */
void dp_pw_free(dp_pw *pw);
/* Follows the default sink (default_sink.c): finds the "default" metadata in the registry,
 * binds it and calls `changed` with its current default sink, then on each change; `read` gets
 * the answers of dp_pw_read_default_sink. 0, or -errno when the registry cannot be listened
 * to. Once per dp_pw.
 * PipeWire 0.3.65's metadata (module-metadata/metadata.c) stops sending changes to every
 * binding made earlier once any client left while its own bind was pending (the metadata's
 * owner had not answered the daemon's ping): `changed` may then never be called again, while
 * a new binding still gets the current values. */
int dp_pw_follow_default_sink(dp_pw *pw, dp_pw_default_sink_cb changed, dp_pw_default_read_cb read);
/* Reads the default sink as the metadata says now, with a binding of its own (its current
 * properties come with the bind) and a core sync after it (pw_registry_bind, pw_core_sync):
 * `read` is called once the sync returns, and the binding destroyed. A read already in flight
 * serves the call. Needs dp_pw_follow_default_sink first; 0, or -EINVAL without it. */
int dp_pw_read_default_sink(dp_pw *pw);
#endif
