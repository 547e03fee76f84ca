#ifndef DUCKPROMPT_CLINUX_SHIM_H
#define DUCKPROMPT_CLINUX_SHIM_H
/* Stand-ins for Linux calls Swift cannot import: prctl(2) is variadic. No logic here; the
   one caller is DuckPrompt/Support/POSIX.swift (swift-nio's CNIOLinux does the same). */
#include <asm/unistd.h>
#include <linux/memfd.h>
#include <sys/prctl.h>

/* glibc's, declared here: <unistd.h> would bring its own struct definitions into this module. */
extern long int syscall(long int sysno, ...);

/* prctl(PR_SET_PDEATHSIG, signal): the kernel sends `signal` to this process when the thread
   that created it exits. Returns 0, or -1 with errno set. */
static inline int duckprompt_set_parent_death_signal(int signal) {
    return prctl(PR_SET_PDEATHSIG, (unsigned long)signal, 0UL, 0UL, 0UL);
}

/* memfd_create(name, MFD_CLOEXEC): an anonymous file in memory, its descriptor close-on-exec
   (glibc declares memfd_create only under _GNU_SOURCE: the system call itself). Returns the
   descriptor, or -1 with errno set. */
static inline int duckprompt_memfd_create(const char *name) {
    return (int)syscall(__NR_memfd_create, name, MFD_CLOEXEC);
}
#endif
