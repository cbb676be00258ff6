/* SPDX-License-Identifier: BSD-3-Clause */
/* core/state.c: the library state the entry layer sets (core.h). */
#include "core.h"

int mpiacc_core_disabled;
int mpiacc_core_initialized;
int mpiacc_core_thread_level = MPI_THREAD_SINGLE;
atomic_int mpiacc_core_classify;
_Atomic(uint64_t) mpiacc_core_handle_filter[MPIACC_CORE_HANDLE_WORDS];

void mpiacc_core_handle_note(const void *p)
{
    unsigned b = mpiacc_core_handle_bit(p);
    atomic_fetch_or(&mpiacc_core_handle_filter[b / 64], (uint64_t)1 << (b % 64));
    if (!(atomic_load_explicit(&mpiacc_core_classify, memory_order_relaxed) & MPIACC_CORE_CLASSIFY_HANDLES))
        atomic_fetch_or(&mpiacc_core_classify, MPIACC_CORE_CLASSIFY_HANDLES);
}

void mpiacc_core_handle_forget(void)
{
    atomic_fetch_and(&mpiacc_core_classify, ~MPIACC_CORE_CLASSIFY_HANDLES);
    for (int i = 0; i < MPIACC_CORE_HANDLE_WORDS; i++) atomic_store(&mpiacc_core_handle_filter[i], 0);
}
int mpiacc_core_wildcard_probe;
