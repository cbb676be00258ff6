/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * coll/choice.c: which engine runs a communicator's device collectives
 * (comm.h), from every process's facts: a pure function, so every process
 * computes the same answer from the same gathered facts, and the rule is
 * unit-tested on its own (tests/coll/test_coll_choice.c).
 */
#include <string.h>

#include "coll_internal.h"

const char *mpiacc_coll_engine_name(int engine)
{
    switch (engine) {
    case MPIACC_COLL_ENGINE_NCCL: return "NCCL";
    case MPIACC_COLL_ENGINE_IPC: return "IPC";
    case MPIACC_COLL_ENGINE_STAGED: return "staged";
    default: return "auto";
    }
}

int mpiacc_coll_engine_choose(const mpiacc_coll_facts_t *f, int n, const char **why)
{
    int want = n > 0 ? f[0].want : MPIACC_COLL_ENGINE_STAGED; /* rank 0's setting decides */
    int coll_all = 1, ipc_all = 1, one_node = 1, shared = 0;
    for (int i = 0; i < n; i++) {
        coll_all &= f[i].has_coll != 0 && f[i].dev_ok != 0;
        ipc_all &= f[i].has_ipc != 0;
        one_node &= f[i].node == f[0].node;
        for (int j = 0; j < i && !shared; j++)
            shared = f[i].node == f[j].node && f[i].dev_ok && f[j].dev_ok &&
                     !memcmp(f[i].uuid, f[j].uuid, sizeof f[i].uuid);
    }
    *why = NULL;
    if (want == MPIACC_COLL_ENGINE_STAGED) {
        *why = "MPIACC_COLL_ENGINE=staged";
        return MPIACC_COLL_ENGINE_STAGED;
    }
    if (want != MPIACC_COLL_ENGINE_IPC) {
        if (coll_all && !shared) return MPIACC_COLL_ENGINE_NCCL;
        *why = !coll_all ? "NCCL is not loaded on every process" : "two processes share a GPU (NCCL refuses that)";
        if (want == MPIACC_COLL_ENGINE_NCCL) return MPIACC_COLL_ENGINE_STAGED;
    } else {
        *why = "MPIACC_COLL_ENGINE=ipc";
    }
    if (one_node && ipc_all) return MPIACC_COLL_ENGINE_IPC;
    return MPIACC_COLL_ENGINE_STAGED;
}
