/* Placeholder until the datatype engine lands (issue 3). */
#include "pack.h"
const mpiacc_backend_t *mpiacc_cpu_backend(void) { return NULL; }
