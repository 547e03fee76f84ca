#ifndef DUCKPROMPT_CSYSTEMD_SHIM_H
#define DUCKPROMPT_CSYSTEMD_SHIM_H
/* libsystemd's sd-bus (pkg-config libsystemd, apt libsystemd-dev) for the service's bus layer
 * (DuckPromptService/Bus/) and the C vtable in CBusObject. No logic here. */
#include <systemd/sd-bus.h>
#endif
