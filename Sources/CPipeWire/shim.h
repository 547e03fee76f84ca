#ifndef DUCKPROMPT_CPIPEWIRE_SHIM_H
#define DUCKPROMPT_CPIPEWIRE_SHIM_H
/* libpipewire's headers and link flags (pkg-config libpipewire-0.3) for the C layer in
 * CPipeWireNodes; Swift calls that layer, not libpipewire. No logic here. */
#include <pipewire/pipewire.h>
#endif
