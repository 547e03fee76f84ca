#ifndef DUCKPROMPT_CLINUX_SHIM_H
#define DUCKPROMPT_CLINUX_SHIM_H
/* Stand-ins for Linux calls Swift cannot import: prctl(2) is variadic. No logic here; the
   one caller is DuckPrompt/Support/POSIX.swift (swift-nio's CNIOLinux does the same). */
#include <sys/prctl.h>

/* prctl(PR_SET_PDEATHSIG, signal): the kernel sends `signal` to this process when the thread
   that created it exits. Returns 0, or -1 with errno set. */
static inline int duckprompt_set_parent_death_signal(int signal) {
    return prctl(PR_SET_PDEATHSIG, (unsigned long)signal, 0UL, 0UL, 0UL);
}
#endif
