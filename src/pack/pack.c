/* Placeholder until the datatype engine lands (issue 3). */
#include "pack.h"
int mpiacc_pack_init(void) { return MPI_SUCCESS; }
void mpiacc_pack_finalize(void) {}
int mpiacc_pack_type_get(MPI_Datatype type, mpiacc_pack_type_t **out)
{
    *out = NULL;
    return mpiacc_err(MPIACC_ERRK_TYPE, "datatype engine missing");
}
int mpiacc_pack_type_analyze(MPI_Datatype type, mpiacc_pack_type_t **out) { return mpiacc_pack_type_get(type, out); }
void mpiacc_pack_type_release(mpiacc_pack_type_t *t) {}
int mpiacc_pack_cpu_pack(const mpiacc_pack_type_t *t, const void *inbuf, MPI_Count count, MPI_Count first,
                         MPI_Count last, void *out)
{
    return mpiacc_err(MPIACC_ERRK_TYPE, "datatype engine missing");
}
int mpiacc_pack_cpu_unpack(const mpiacc_pack_type_t *t, void *outbuf, MPI_Count count, MPI_Count first,
                           MPI_Count last, const void *in)
{
    return mpiacc_err(MPIACC_ERRK_TYPE, "datatype engine missing");
}
