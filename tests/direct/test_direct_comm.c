/*
 * Which communicators are direct (4 ranks, no device needed): the info key
 * through MPI_Comm_set_info / MPI_Comm_dup_with_info and the constructors
 * with an info argument (accepted spellings, "false", a bad value), the
 * directness inherited by every wrapped constructor, MPI_Comm_get_info,
 * intercommunicators, the hidden communicators (same ranks, no user
 * attributes copied, node map, agreed eager limit) and their release;
 * one hidden communicator per direct one (800 held at once, thousands made
 * and freed); an info value that differs between processes is an
 * MPI_ERR_ARG everywhere, never a deadlock.
 *
 *   --expect-world         MPIACC_DIRECT=1: MPI_COMM_WORLD is direct
 *   --expect-eager-min N   the agreed eager limit is N (ranks started with
 *                          different MPIACC_EAGER_MAX)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "mpiacc.h"
#include "protocol/direct_comm.h"

static int rank, size, expect_world;
static long long expect_eager = -1;

static MPI_Info info_of(const char *value)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, MPIACC_DIRECT_INFO, value);
    return info;
}

static int is_direct(MPI_Comm c)
{
    return mpiacc_proto_comm_lookup(c) != NULL;
}

/* What MPI_Comm_get_info says for the key: 1 true, 0 false, -1 absent. */
static int info_says(MPI_Comm c)
{
    MPI_Info info;
    char v[64];
    int len = sizeof v - 1, flag = 0, r = -1;
    assert_int_equal(MPI_Comm_get_info(c, &info), MPI_SUCCESS);
    MPI_Info_get_string(info, MPIACC_DIRECT_INFO, &len, v, &flag);
    if (flag) r = !strcmp(v, "true") ? 1 : !strcmp(v, "false") ? 0 : 99;
    MPI_Info_free(&info);
    return r;
}

static MPI_Comm direct_dup(MPI_Comm parent)
{
    MPI_Comm c;
    MPI_Info info = info_of("true");
    assert_int_equal(MPI_Comm_dup_with_info(parent, info, &c), MPI_SUCCESS);
    MPI_Info_free(&info);
    assert_true(is_direct(c));
    return c;
}

static void world_as_configured(void **s)
{
    MPI_Comm d;
    assert_int_equal(is_direct(MPI_COMM_WORLD), expect_world);
    assert_int_equal(info_says(MPI_COMM_WORLD), expect_world);
    assert_int_equal(MPI_Comm_dup(MPI_COMM_WORLD, &d), MPI_SUCCESS);
    assert_int_equal(is_direct(d), expect_world);
    MPI_Comm_free(&d);
    assert_false(is_direct(MPI_COMM_SELF));
}

static void info_key_spellings(void **s)
{
    static const char *on[] = {"true", "TRUE", "True", "1", "yes", "on", "ON"};
    static const char *off[] = {"false", "FALSE", "0", "no", "off"};
    MPI_Comm c, d;
    int live = atomic_load(&mpiacc_proto_comm_live);
    for (size_t i = 0; i < sizeof on / sizeof on[0]; i++) {
        MPI_Info info = info_of(on[i]);
        assert_int_equal(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &c), MPI_SUCCESS);
        assert_true(is_direct(c));
        assert_int_equal(info_says(c), 1);
        assert_int_equal(atomic_load(&mpiacc_proto_comm_live), live + 1);
        MPI_Info_free(&info);
        MPI_Comm_free(&c);
        assert_int_equal(atomic_load(&mpiacc_proto_comm_live), live);
    }
    d = direct_dup(MPI_COMM_WORLD);
    for (size_t i = 0; i < sizeof off / sizeof off[0]; i++) {
        MPI_Info info = info_of(off[i]);
        /* "false" wins over the parent's directness */
        assert_int_equal(MPI_Comm_dup_with_info(d, info, &c), MPI_SUCCESS);
        assert_false(is_direct(c));
        assert_int_equal(info_says(c), 0);
        MPI_Info_free(&info);
        MPI_Comm_free(&c);
    }
    MPI_Comm_free(&d);
    assert_int_equal(atomic_load(&mpiacc_proto_comm_live), live);
}

static void bad_value_is_an_error(void **s)
{
    MPI_Comm c = MPI_COMM_NULL, d;
    MPI_Info info = info_of("maybe");
    int cls = MPI_SUCCESS, err;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
    err = MPI_Comm_dup_with_info(d, info, &c);
    MPI_Error_class(err, &cls);
    assert_int_equal(cls, MPI_ERR_ARG);
    assert_true(c == MPI_COMM_NULL);
    err = MPI_Comm_set_info(d, info);
    MPI_Error_class(err, &cls);
    assert_int_equal(cls, MPI_ERR_ARG);
    assert_int_equal(is_direct(d), expect_world);
    MPI_Info_free(&info);
    MPI_Comm_free(&d);
}

/* Every wrapped constructor: made from a direct communicator -> direct,
 * from a plain one -> plain (unless its info asks). */
static void constructors_inherit(void **s)
{
    int live0 = atomic_load(&mpiacc_proto_comm_live);
    for (int from_direct = 0; from_direct < 2; from_direct++) {
        MPI_Comm p, c[12];
        MPI_Group g, half;
        int n = 0, want = from_direct || expect_world;
        int dims[2] = {2, size / 2}, periods[2] = {1, 0}, remain[2] = {1, 0};
        int first_half[8], nh = size / 2;
        int indx[8], edges[16], ring[2];

        if (from_direct) p = direct_dup(MPI_COMM_WORLD);
        else MPI_Comm_dup(MPI_COMM_WORLD, &p);
        assert_int_equal(is_direct(p), want);
        for (int i = 0; i < nh; i++) first_half[i] = i;
        MPI_Comm_group(p, &g);
        MPI_Group_incl(g, nh, first_half, &half);

        assert_int_equal(MPI_Comm_dup(p, &c[n++]), MPI_SUCCESS);
        assert_int_equal(MPI_Comm_split(p, rank % 2, -rank, &c[n++]), MPI_SUCCESS);
        assert_int_equal(MPI_Comm_split_type(p, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c[n++]), MPI_SUCCESS);
        assert_int_equal(MPI_Comm_create(p, half, &c[n++]), MPI_SUCCESS);
        if (rank < nh) assert_int_equal(MPI_Comm_create_group(p, half, 5, &c[n++]), MPI_SUCCESS);
        assert_int_equal(MPI_Cart_create(p, 2, dims, periods, 1, &c[n++]), MPI_SUCCESS);
        assert_int_equal(MPI_Cart_sub(c[n - 1], remain, &c[n]), MPI_SUCCESS);
        n++;
        for (int i = 0; i < size; i++) indx[i] = 2 * (i + 1), edges[2 * i] = (i + 1) % size,
                                      edges[2 * i + 1] = (i + size - 1) % size;
        assert_int_equal(MPI_Graph_create(p, size, indx, edges, 0, &c[n++]), MPI_SUCCESS);
        ring[0] = (rank + 1) % size, ring[1] = (rank + size - 1) % size;
        assert_int_equal(MPI_Dist_graph_create_adjacent(p, 2, ring, MPI_UNWEIGHTED, 2, ring, MPI_UNWEIGHTED,
                                                        MPI_INFO_NULL, 0, &c[n++]),
                         MPI_SUCCESS);
        assert_int_equal(MPI_Dist_graph_create(p, 1, &rank, (int[]){1}, &ring[0], MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                                               &c[n++]),
                         MPI_SUCCESS);
        for (int i = 0; i < n; i++) {
            if (c[i] == MPI_COMM_NULL) {
                assert_true(i == 3 && rank >= nh); /* MPI_Comm_create outside the group */
                continue;
            }
            if (is_direct(c[i]) != want) fail_msg("constructor %d: direct %d, expected %d", i, is_direct(c[i]), want);
        }
        /* an info argument asking for it makes a plain parent's child direct */
        if (!want) {
            MPI_Info info = info_of("true");
            MPI_Comm x;
            assert_int_equal(MPI_Comm_split_type(p, MPI_COMM_TYPE_SHARED, 0, info, &x), MPI_SUCCESS);
            assert_true(is_direct(x));
            MPI_Comm_free(&x);
            assert_int_equal(MPI_Dist_graph_create_adjacent(p, 2, ring, MPI_UNWEIGHTED, 2, ring, MPI_UNWEIGHTED, info,
                                                            0, &x),
                             MPI_SUCCESS);
            assert_true(is_direct(x));
            MPI_Comm_free(&x);
            MPI_Info_free(&info);
        }
        /* split with MPI_UNDEFINED: no communicator, nothing made */
        {
            MPI_Comm x;
            assert_int_equal(MPI_Comm_split(p, rank == 0 ? MPI_UNDEFINED : 1, 0, &x), MPI_SUCCESS);
            assert_true((x == MPI_COMM_NULL) == (rank == 0));
            if (x != MPI_COMM_NULL) {
                assert_int_equal(is_direct(x), want);
                MPI_Comm_free(&x);
            }
        }
        for (int i = 0; i < n; i++)
            if (c[i] != MPI_COMM_NULL) MPI_Comm_free(&c[i]);
        MPI_Group_free(&half);
        MPI_Group_free(&g);
        MPI_Comm_free(&p);
        assert_int_equal(atomic_load(&mpiacc_proto_comm_live), live0);
    }
}

static void set_info_on_and_off(void **s)
{
    MPI_Comm c, child;
    MPI_Info on = info_of("true"), off = info_of("false"), other;
    int live = atomic_load(&mpiacc_proto_comm_live);
    MPI_Comm_dup(MPI_COMM_SELF, &c);
    assert_false(is_direct(c));
    assert_int_equal(MPI_Comm_set_info(c, on), MPI_SUCCESS);
    assert_true(is_direct(c));
    assert_int_equal(MPI_Comm_set_info(c, on), MPI_SUCCESS); /* again: nothing new */
    assert_int_equal(atomic_load(&mpiacc_proto_comm_live), live + 1);
    MPI_Comm_dup(c, &child);
    assert_true(is_direct(child));
    /* an info without the key leaves it as it is */
    MPI_Info_create(&other);
    MPI_Info_set(other, "mpi_assert_no_any_tag", "false");
    assert_int_equal(MPI_Comm_set_info(c, other), MPI_SUCCESS);
    assert_true(is_direct(c));
    assert_int_equal(MPI_Comm_set_info(c, off), MPI_SUCCESS);
    assert_false(is_direct(c));
    assert_int_equal(info_says(c), 0);
    assert_true(is_direct(child)); /* made before: keeps its own */
    assert_int_equal(atomic_load(&mpiacc_proto_comm_live), live + 1);
    MPI_Comm_free(&child);
    assert_int_equal(atomic_load(&mpiacc_proto_comm_live), live);
    MPI_Comm_free(&c);
    MPI_Info_free(&on);
    MPI_Info_free(&off);
    MPI_Info_free(&other);
}

/* The hidden communicators: same ranks, errors returned, no user attribute
 * copied; all ranks of this test share a node; one agreed eager limit. */
static void hidden_comms(void **s)
{
    int kv, r, n, flag, cmp, copied = 0;
    void *v;
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &kv, NULL);
    MPI_Comm base, c;
    MPI_Comm_dup(MPI_COMM_WORLD, &base);
    MPI_Comm_set_attr(base, kv, &copied);
    MPI_Comm_split(base, 0, size - rank, &c); /* reversed ranks */
    MPI_Comm_set_attr(c, kv, &copied);
    {
        MPI_Info info = info_of("true");
        MPI_Comm_set_info(c, info);
        MPI_Info_free(&info);
    }
    mpiacc_proto_comm_t *dc = mpiacc_proto_comm_lookup(c);
    assert_non_null(dc);
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    assert_int_equal(dc->rank, r);
    assert_int_equal(dc->size, n);
    assert_int_equal(r, size - 1 - rank);
    {   /* data: the one hidden communicator of c */
        MPI_Comm h = dc->data;
        MPI_Errhandler eh;
        MPI_Comm_rank(h, &r);
        assert_int_equal(r, dc->rank);
        MPI_Comm_compare(h, c, &cmp);
        assert_int_equal(cmp, MPI_CONGRUENT);
        MPI_Comm_get_attr(h, kv, &v, &flag);
        assert_false(flag);
        MPI_Comm_get_errhandler(h, &eh);
        assert_true(eh == MPI_ERRORS_RETURN);
        MPI_Errhandler_free(&eh);
    }
    {   /* ctl: the process-wide one, peers by their rank in MPI_COMM_WORLD */
        MPI_Errhandler eh;
        mpiacc_proto_comm_t *dw;
        MPI_Comm x;
        assert_true(dc->own_ctl == MPI_COMM_NULL);
        MPI_Comm_compare(dc->ctl, MPI_COMM_WORLD, &cmp);
        assert_int_equal(cmp, MPI_CONGRUENT);
        for (int i = 0; i < n; i++) assert_int_equal(dc->ctl_rank[i], size - 1 - i);
        MPI_Comm_get_errhandler(dc->ctl, &eh);
        assert_true(eh == MPI_ERRORS_RETURN);
        MPI_Errhandler_free(&eh);
        x = direct_dup(MPI_COMM_WORLD);
        dw = mpiacc_proto_comm_lookup(x);
        assert_true(dw->ctl == dc->ctl); /* shared */
        MPI_Comm_free(&x);
    }
    for (int i = 0; i < n; i++) assert_int_equal(dc->same_node[i], 1);
    assert_true(dc->tag_mod >= 16384);
    if (expect_eager >= 0) assert_int_equal(dc->eager_max, expect_eager);
    else assert_int_equal(dc->eager_max, mpiacc_proto_cfg.eager_max);
    MPI_Comm_free(&c);
    MPI_Comm_free(&base);
    MPI_Comm_free_keyval(&kv);
}

/* One hidden communicator per direct communicator: 800 direct
 * communicators held at once fit MPICH's 2048 context ids (with two
 * hidden ones each they did not: "Too many communicators"), and making
 * and freeing many more leaks none. */
#define NHOLD 800
static void many_direct_comms(void **s)
{
    static MPI_Comm c[NHOLD];
    MPI_Comm p;
    int live = atomic_load(&mpiacc_proto_comm_live), err;
    p = direct_dup(MPI_COMM_WORLD);
    MPI_Comm_set_errhandler(p, MPI_ERRORS_RETURN);
    for (int i = 0; i < NHOLD; i++) {
        err = MPI_Comm_split(p, 0, size - rank, &c[i]);
        if (err != MPI_SUCCESS) fail_msg("communicator %d of %d: error %d", i, NHOLD, err);
        assert_true(is_direct(c[i]));
    }
    assert_int_equal(atomic_load(&mpiacc_proto_comm_live), live + 1 + NHOLD);
    for (int i = 0; i < NHOLD; i++) MPI_Comm_free(&c[i]);
    for (int i = 0; i < NHOLD; i++) {
        MPI_Comm x;
        err = MPI_Comm_dup(p, &x);
        if (err != MPI_SUCCESS) fail_msg("dup %d: error %d", i, err);
        assert_true(is_direct(x));
        MPI_Comm_free(&x);
    }
    MPI_Comm_free(&p);
    assert_int_equal(atomic_load(&mpiacc_proto_comm_live), live);
}

static int err_class(int err)
{
    int cls = MPI_SUCCESS;
    MPI_Error_class(err, &cls);
    return cls;
}

/* The info value differs between processes (set on rank 0 only, the others
 * leave it absent or say the opposite): an MPI_ERR_ARG on every process,
 * no communicator made direct, no deadlock (the test's timeout). */
static void info_mismatch_is_an_error(void **s)
{
    const char *mine = expect_world ? "false" : "true", *theirs = expect_world ? "true" : "false";
    int live = atomic_load(&mpiacc_proto_comm_live);
    for (int variant = 0; variant < 2; variant++) {
        MPI_Comm d, c = MPI_COMM_WORLD;
        MPI_Info info = MPI_INFO_NULL;
        if (rank == 0) info = info_of(mine);
        else if (variant == 1) info = info_of(theirs);
        MPI_Comm_dup(MPI_COMM_WORLD, &d);
        MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
        assert_int_equal(err_class(MPI_Comm_dup_with_info(d, info, &c)), MPI_ERR_ARG);
        assert_true(c == MPI_COMM_NULL);
        assert_int_equal(err_class(MPI_Comm_split_type(d, MPI_COMM_TYPE_SHARED, 0, info, &c)), MPI_ERR_ARG);
        assert_true(c == MPI_COMM_NULL);
        assert_int_equal(err_class(MPI_Comm_set_info(d, info == MPI_INFO_NULL ? MPI_INFO_ENV : info)),
                         MPI_ERR_ARG);
        assert_int_equal(is_direct(d), expect_world); /* as it was */
        /* the communicator still works, and agreeing works again */
        MPI_Barrier(d);
        {
            MPI_Info on = info_of("true");
            assert_int_equal(MPI_Comm_set_info(d, on), MPI_SUCCESS);
            assert_true(is_direct(d));
            MPI_Info_free(&on);
        }
        if (info != MPI_INFO_NULL) MPI_Info_free(&info);
        MPI_Comm_free(&d);
    }
    assert_int_equal(atomic_load(&mpiacc_proto_comm_live), live);
}

static void intercomm_never_direct(void **s)
{
    MPI_Comm half, inter;
    MPI_Info on = info_of("true");
    int live;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    live = atomic_load(&mpiacc_proto_comm_live);
    assert_int_equal(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 9, &inter), MPI_SUCCESS);
    assert_int_equal(MPI_Comm_set_info(inter, on), MPI_SUCCESS);
    assert_false(is_direct(inter));
    assert_int_equal(atomic_load(&mpiacc_proto_comm_live), live);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
    MPI_Info_free(&on);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(world_as_configured),  cmocka_unit_test(info_key_spellings),
        cmocka_unit_test(bad_value_is_an_error), cmocka_unit_test(constructors_inherit),
        cmocka_unit_test(set_info_on_and_off),  cmocka_unit_test(hidden_comms),
        cmocka_unit_test(intercomm_never_direct), cmocka_unit_test(info_mismatch_is_an_error),
        cmocka_unit_test(many_direct_comms),
    };
    int failed;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--expect-world")) expect_world = 1;
        else if (!strcmp(argv[i], "--expect-eager-min") && i + 1 < argc) expect_eager = atoll(argv[++i]);
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size % 2 || size > 8) mpiacc_test_skip_all("needs an even number of ranks, at most 8");
    failed = MPIACC_TEST_RUN("direct_comm", tests, NULL, NULL);
    MPI_Finalize();
    return failed ? 1 : 0;
}
