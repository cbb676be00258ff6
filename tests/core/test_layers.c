/* SPDX-License-Identifier: BSD-3-Clause */
/* The shared building blocks of the layers: the util pool (size classes,
 * freelists, statistics) and the datatype engine's data slots (install
 * once, compare-and-set, free hook on release). */
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "mpiacc.h"
#include "pack/pack.h"
#include "util/pool.h"

static int nalloc, nfree;

static int counting_alloc(void *ctx, size_t bytes, void **p)
{
    assert_ptr_equal(ctx, &nalloc);
    nalloc++;
    *p = malloc(bytes);
    return *p ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

static void counting_free(void *ctx, void *p, size_t bytes)
{
    nfree++;
    free(p);
}

static void util_pool_classes_and_stats(void **s)
{
    mpiacc_util_pool_t p;
    mpiacc_util_pool_stats_t st;
    void *a, *b, *c, *big;
    int ca, cb, cc, cbig;

    nalloc = nfree = 0;
    mpiacc_util_pool_init(&p, "test", 6, 4, 1, counting_alloc, counting_free, &nalloc);
    assert_int_equal(mpiacc_util_pool_get(&p, 1, &a, &ca), MPI_SUCCESS);
    assert_int_equal(ca, 0);
    assert_int_equal(mpiacc_util_pool_get(&p, 65, &b, &cb), MPI_SUCCESS);
    assert_int_equal(cb, 1);
    memset(b, 1, 128); /* the class size is usable */
    assert_int_equal(mpiacc_util_pool_get(&p, 512, &big, &cbig), MPI_SUCCESS);
    assert_int_equal(cbig, 3);
    assert_int_not_equal(mpiacc_util_pool_get(&p, 513, &c, &cc), MPI_SUCCESS);
    assert_null(c);
    mpiacc_util_pool_stats(&p, &st);
    assert_int_equal(st.allocs, 3);
    assert_int_equal(st.cur_objs, 3);
    assert_int_equal(st.cur_bytes, 64 + 128 + 512);

    mpiacc_util_pool_put(&p, b, cb);
    assert_int_equal(mpiacc_util_pool_get(&p, 100, &c, &cc), MPI_SUCCESS);
    assert_ptr_equal(c, b); /* reused from the freelist */
    mpiacc_util_pool_put(&p, c, cc);
    assert_int_equal(mpiacc_util_pool_get(&p, 128, &c, &cc), MPI_SUCCESS);
    mpiacc_util_pool_put(&p, a, ca);
    mpiacc_util_pool_put(&p, big, cbig);
    /* keep == 1: a second free block of class 1 goes back to the allocator */
    assert_int_equal(mpiacc_util_pool_get(&p, 128, &a, &ca), MPI_SUCCESS);
    assert_int_equal(nalloc, 4);
    mpiacc_util_pool_put(&p, c, cc);
    mpiacc_util_pool_put(&p, a, ca);
    assert_int_equal(nfree, 1);
    mpiacc_util_pool_stats(&p, &st);
    assert_int_equal(st.reuses, 2);
    assert_int_equal(st.frees, 1);
    assert_int_equal(st.hwm_objs, 4);
    assert_int_equal(st.hwm_bytes, 64 + 128 + 128 + 512);
    assert_int_equal(st.cur_objs, 3);
    mpiacc_util_pool_drain(&p);
    mpiacc_util_pool_stats(&p, &st);
    assert_int_equal(st.cur_objs, 0);
    assert_int_equal(st.cur_bytes, 0);
    assert_int_equal(nfree, 4);
}

static void *freed_data;
static int nfreed;

static void slot_free(void *data)
{
    freed_data = data;
    nfreed++;
}

static void pack_slots(void **s)
{
    MPI_Datatype dt, dup;
    mpiacc_pack_type_t *t, *t2;
    int x, y;
    const int slot = 0; /* MPIACC_KIND_NONE: no backend uses it */

    MPI_Type_vector(3, 1, 2, MPI_INT, &dt);
    MPI_Type_commit(&dt);
    assert_int_equal(mpiacc_pack_type_get(dt, &t), MPI_SUCCESS);
    assert_null(mpiacc_pack_slot_get(t, slot));
    assert_int_equal(mpiacc_pack_slot_set(t, slot, NULL, &x), 1);
    assert_int_equal(mpiacc_pack_slot_set(t, slot, NULL, &y), 0); /* already installed */
    assert_ptr_equal(mpiacc_pack_slot_get(t, slot), &x);
    assert_int_equal(mpiacc_pack_slot_set(t, slot, &x, &y), 1);
    assert_ptr_equal(mpiacc_pack_slot_get(t, slot), &y);
    assert_int_equal(mpiacc_pack_slot_set(t, -1, NULL, &x), 0);
    assert_int_equal(mpiacc_pack_slot_set(t, MPIACC_PACK_NSLOTS, NULL, &x), 0);

    /* Dups share the analysis; the hook runs once, at the last release. */
    mpiacc_pack_slot_register(slot, slot_free);
    nfreed = 0;
    MPI_Type_dup(dt, &dup);
    assert_int_equal(mpiacc_pack_type_get(dup, &t2), MPI_SUCCESS);
    assert_ptr_equal(t2, t);
    mpiacc_pack_type_release(t2);
    mpiacc_pack_type_release(t);
    MPI_Type_free(&dt);
    assert_int_equal(nfreed, 0);
    MPI_Type_free(&dup);
    assert_int_equal(nfreed, 1);
    assert_ptr_equal(freed_data, &y);

    /* No hook registered: the data is left alone. */
    mpiacc_pack_slot_register(slot, NULL);
    assert_int_equal(mpiacc_pack_type_analyze(MPI_INT, &t), MPI_SUCCESS);
    assert_int_equal(mpiacc_pack_slot_set(t, slot, NULL, &x), 1);
    mpiacc_pack_type_release(t);
    assert_int_equal(nfreed, 1);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(util_pool_classes_and_stats), cmocka_unit_test(pack_slots),
    };
    MPI_Init(&argc, &argv);
    return mpiacc_test_end(MPIACC_TEST_RUN("layers", tests, NULL, NULL));
}
