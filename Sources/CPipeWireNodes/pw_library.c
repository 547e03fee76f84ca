/* See pw_library.h: libpipewire opened on first use. */
#include "pw_library.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct dp_pw_library dp_pw_lib;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded = -ELIBACC;

/* One call's address, or NULL (and the reason told under PIPEWIRE_DEBUG). */
static void *find(void *library, const char *name) {
    void *address = dlsym(library, name);
    if (address == NULL && getenv("PIPEWIRE_DEBUG") != NULL) fprintf(stderr, "duckprompt: %s\n", dlerror());
    return address;
}

static void load(void) {
    void *library = dlopen("libpipewire-0.3.so.0", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        if (getenv("PIPEWIRE_DEBUG") != NULL) fprintf(stderr, "duckprompt: %s\n", dlerror());
        return;
    }
    struct dp_pw_library lib = {
        .init = find(library, "pw_init"),
        .log_set_level = find(library, "pw_log_set_level"),
        .loop_new = find(library, "pw_loop_new"),
        .loop_destroy = find(library, "pw_loop_destroy"),
        .properties_new = find(library, "pw_properties_new"),
        .context_new = find(library, "pw_context_new"),
        .context_destroy = find(library, "pw_context_destroy"),
        .context_connect = find(library, "pw_context_connect"),
        .context_load_module = find(library, "pw_context_load_module"),
        .core_disconnect = find(library, "pw_core_disconnect"),
        .proxy_add_listener = find(library, "pw_proxy_add_listener"),
        .proxy_add_object_listener = find(library, "pw_proxy_add_object_listener"),
        .proxy_destroy = find(library, "pw_proxy_destroy"),
    };
    void **calls = (void **)&lib;
    for (size_t i = 0; i < sizeof lib / sizeof(void *); i++) {
        if (calls[i] == NULL) {
            dlclose(library);
            return;
        }
    }
    /* Kept open for the process's life: its loop and context may outlive any one client. */
    dp_pw_lib = lib;
    loaded = 0;
}

int dp_pw_library_load(void) {
    pthread_once(&once, load);
    return loaded;
}
