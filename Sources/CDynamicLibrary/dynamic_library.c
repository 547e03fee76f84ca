/* See include/dynamic_library.h. glibc: dlopen, dlsym, dlerror, dlclose. */
#include "dynamic_library.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

/* One lock for every table: each is filled once, so it is taken only until then. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int fill(struct dp_library *library) {
    void *handle = dlopen(library->soname, RTLD_LAZY | RTLD_LOCAL);
    if (handle == NULL) {
        const char *reason = dlerror();
        snprintf(library->error, sizeof library->error, "%s", reason != NULL ? reason : library->soname);
        return -1;
    }
    for (size_t i = 0; i < library->count; i++) {
        void *address = dlsym(handle, library->names[i]);
        if (address == NULL) {
            snprintf(library->error, sizeof library->error, "%s has no %s", library->soname, library->names[i]);
            for (size_t j = 0; j < i; j++) library->table[j] = NULL;
            dlclose(handle);
            return -1;
        }
        library->table[i] = address;
    }
    return 1;
}

int dp_library_load(struct dp_library *library) {
    int state = __atomic_load_n(&library->state, __ATOMIC_ACQUIRE);
    if (state == 0) {
        pthread_mutex_lock(&lock);
        state = library->state;
        if (state == 0) {
            state = fill(library);
            __atomic_store_n(&library->state, state, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&lock);
    }
    return state == 1 ? 0 : -1;
}
