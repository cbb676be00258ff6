/* cpu: the host backend; its table is reached through core.h's
 * mpiacc_cpu_backend(). */
#ifndef MPIACC_CPU_H_INCLUDED
#define MPIACC_CPU_H_INCLUDED
#include "core/core.h"
#endif
