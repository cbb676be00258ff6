/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers for the request-pool tests: host datatypes gated by an int flag
 * (MPIACC_EVENT on an MPIACC_BUF_HOST type), which the CPU backend treats
 * as the data dependency. */
#ifndef POOL_UTIL_H
#define POOL_UTIL_H
#include <stdatomic.h>

#include "testutil.h"
#include "mpiacc.h"
#include "protocol/protocol.h"

/* count x MPI_INT, as a vector(count, 1, 2) when strided, tagged host with
 * `gate` as its dependency (NULL: no dependency but still through the pool
 * only when gate != NULL). */
static inline MPI_Datatype pool_type(int count, int strided, atomic_int *gate)
{
    MPI_Datatype t;
    if (strided) MPI_Type_vector(count, 1, 2, MPI_INT, &t);
    else MPI_Type_contiguous(count, MPI_INT, &t);
    MPI_Type_commit(&t);
    MPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_HOST);
    if (gate) MPI_Type_set_attr(t, MPIACC_EVENT, (void *)gate);
    return t;
}

static inline long transitions(int from, int to)
{
    return atomic_load(&mpiacc_rp_transitions[from][to]);
}

#define S_NEW MPIACC_RP_NEW
#define S_DEP MPIACC_RP_DEP_PENDING
#define S_PACK MPIACC_RP_PACKING
#define S_READY MPIACC_RP_READY
#define S_FLIGHT MPIACC_RP_IN_FLIGHT
#define S_UNPACK MPIACC_RP_UNPACKING
#define S_DONE MPIACC_RP_DONE
#define S_ERROR MPIACC_RP_T_ERROR
#define S_CANCEL MPIACC_RP_T_CANCEL

/* A cmocka setup: the ranks start every test in step. */
static inline int pool_barrier(void **state)
{
    (void)state;
    MPI_Barrier(MPI_COMM_WORLD);
    return 0;
}

/* MPI_Test on r n times: it must not complete (its dependency is held
 * back, or it may not overtake). */
static inline void pool_not_done(MPI_Request *r, int n)
{
    int flag = 0;
    for (int i = 0; i < n; i++) {
        MPI_Test(r, &flag, MPI_STATUS_IGNORE);
        assert_false(flag);
    }
}

/* MPI_Test on r until an operation made the transition from -> to (count
 * `was` before): r must not complete meanwhile. */
static inline void pool_until_moved(MPI_Request *r, int from, int to, long was)
{
    int flag = 0;
    while (transitions(from, to) == was) {
        MPI_Test(r, &flag, MPI_STATUS_IGNORE);
        assert_false(flag);
    }
}

static inline void fill_ints(int *b, int n, int seed)
{
    for (int i = 0; i < n; i++) b[i] = seed * 100003 + i;
}
#endif
