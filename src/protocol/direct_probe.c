/* protocol/direct_probe.c: probes of device messages on direct communicators. */
#include "direct.h"

void mpiacc_proto_probe_free(mpiacc_proto_comm_t *dc)
{
    (void)dc;
}
