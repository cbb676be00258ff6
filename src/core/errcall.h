/* SPDX-License-Identifier: BSD-3-Clause */
/* core/errcall.h: error.c's use of errcall.c. */
#ifndef MPIACC_CORE_ERRCALL_H_INCLUDED
#define MPIACC_CORE_ERRCALL_H_INCLUDED

#include "core.h"

/* The current call with its arguments ("MPI_Isend(buf=..., ...)") into
 * out[0, size); returns its length, 0 (and "") outside any call.  An error
 * of kind MPIACC_ERRK_COMM does not ask MPI the communicator's name. */
size_t mpiacc_err_call_text(char *out, size_t size, mpiacc_errk_t kind);

#endif
