/* A system library opened with dlopen on first use instead of linked, and its calls looked up
 * with dlsym into a table: a process that never needs the library does not load it (nor the
 * libraries it pulls in) at exec. libpulse (CPulseAudio), libsndfile (CSndFile) and
 * libpipewire (CPipeWireNodes) are opened through it; it has no other job. */
#ifndef DUCKPROMPT_DYNAMIC_LIBRARY_H
#define DUCKPROMPT_DYNAMIC_LIBRARY_H
#include <stddef.h>

/* One library's table: filled once per process, the first time dp_library_load is called on it
 * (thread-safe); the library then stays loaded for the process's life. */
struct dp_library {
    const char *soname;          /* what dlopen looks for, e.g. "libpulse.so.0" */
    const char *const *names;    /* the calls' names, `count` of them */
    size_t count;
    void **table;                /* `count` slots: the calls' addresses, in `names`' order */
    int state;                   /* 0: not tried; 1: loaded; -1: not loadable (see `error`) */
    char error[256];             /* why not: dlerror()'s message, or the call that is missing */
};

/* Opens `library->soname` (RTLD_LAZY | RTLD_LOCAL) and looks up every name, once. Returns 0, or
 * -1 when the file cannot be opened or lacks a call (then `library->error` says which, and
 * the table is left empty). RTLD_LAZY binds the library's own calls into the libraries it
 * needs as a linked one's are bound, on first use: RTLD_NOW bound all of libpulse's and
 * libsndfile's 17 libraries at once, 0.6 ms more than linking them (a C program, perf stat,
 * 200 runs); every call of the table is looked up here, so none can be missing later. */
int dp_library_load(struct dp_library *library);

/* Declares a library's table, for the header of the library's target:
 *   struct TYPE: a field for each call CALLS lists (the X-macro), of the same name and the
 *   type its own header gives it;
 *   LOAD and ERROR, the two calls DP_LIBRARY_DEFINE defines. */
#define DP_LIBRARY_FIELD(name) __typeof__(name) *_Nonnull name;
#define DP_LIBRARY_DECLARE(TYPE, CALLS, LOAD, ERROR)                                               \
    struct TYPE {                                                                                   \
        CALLS(DP_LIBRARY_FIELD)                                                                     \
    };                                                                                              \
    const struct TYPE *_Nullable LOAD(void);                                                        \
    const char *_Nonnull ERROR(void);

/* Defines a library's table and its two calls, for a C file of the library's target:
 *   struct TYPE TABLE: the table, filled by LOAD;
 *   const struct TYPE *LOAD(void): opens FILE and fills TABLE once; NULL when not loadable;
 *   const char *ERROR(void): why not, after LOAD returned NULL.
 * CALLS is the X-macro listing the calls, the one the header's `struct TYPE` is made from. */
#define DP_LIBRARY_NAME(name) #name,
#define DP_LIBRARY_DEFINE(TYPE, TABLE, CALLS, FILE, LOAD, ERROR)                                   \
    struct TYPE TABLE;                                                                              \
    static const char *const dp_names[] = {CALLS(DP_LIBRARY_NAME)};                               \
    _Static_assert(sizeof TABLE == sizeof dp_names / sizeof dp_names[0] * sizeof(void *),           \
                   "one slot per name");                                                            \
    static struct dp_library dp_library = {                                                         \
        .soname = FILE,                                                                             \
        .names = dp_names,                                                                          \
        .count = sizeof dp_names / sizeof dp_names[0],                                              \
        .table = (void **)&TABLE,                                                                   \
    };                                                                                              \
    const struct TYPE *LOAD(void) { return dp_library_load(&dp_library) == 0 ? &TABLE : NULL; }    \
    const char *ERROR(void) { return dp_library.error; }
#endif
