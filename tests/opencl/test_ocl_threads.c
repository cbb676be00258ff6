/* SPDX-License-Identifier: BSD-3-Clause */
#define _POSIX_C_SOURCE 200809L
/*
 * MPI_THREAD_MULTIPLE with cl_mem buffers (2 ranks): 4 threads per rank,
 * each with its own in-order queue, kernel object and datatype (every
 * other int, tagged with the thread's queue), exchange tagged messages with
 * the same thread of the peer: per iteration a kernel fills the send buffer
 * (no clFinish), MPI_Irecv + MPI_Isend + MPI_Waitall, then the received
 * values are checked (even ints from the peer's kernel, odd ints untouched).
 */
#include <pthread.h>

#include "ocl_fixture.h"
#include "ocl_types.h"

#define NTHREADS 4
#define ITERS 40
#define N 2048 /* ints per buffer; N/2 travel */
static int rank, peer;

typedef struct {
    int id, bad;
} thr_t;

static int value(int r, int k, int i) { return r * 1000000 + k * 1000 + i; }

static void *thread_main(void *p)
{
    thr_t *th = p;
    cl_int e;
    cl_command_queue q = clCreateCommandQueue(fx.ctx, fx.dev, 0, &e);
    cl_kernel fill = clCreateKernel(fx.prog, "fill", &e);
    int *init = malloc(N * sizeof *init), *got = malloc(N * sizeof *got);
    cl_mem sb, rb;
    MPI_Datatype v, t;

    for (int i = 0; i < N; i++) init[i] = -1;
    sb = clCreateBuffer(fx.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, N * sizeof *init, init, &e);
    rb = clCreateBuffer(fx.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, N * sizeof *init, init, &e);
    MPI_Type_vector(N / 2, 1, 2, MPI_INT, &v);
    MPI_Type_commit(&v);
    t = cl_type(v, q, NULL);
    for (int it = 0; it < ITERS && !th->bad; it++) {
        MPI_Request r[2];
        int val = value(rank, th->id, it);
        size_t n = N;
        clSetKernelArg(fill, 0, sizeof sb, &sb);
        clSetKernelArg(fill, 1, sizeof val, &val);
        clSetKernelArg(fill, 2, sizeof(int), &(int){it % 4 ? 0 : 500});
        if (clEnqueueNDRangeKernel(q, fill, 1, NULL, &n, NULL, 0, NULL, NULL) != CL_SUCCESS) th->bad++;
        if (MPI_Irecv(rb, 1, t, peer, th->id, MPI_COMM_WORLD, &r[0]) != MPI_SUCCESS) th->bad++;
        if (MPI_Isend(sb, 1, t, peer, th->id, MPI_COMM_WORLD, &r[1]) != MPI_SUCCESS) th->bad++;
        if (th->bad || MPI_Waitall(2, r, MPI_STATUSES_IGNORE) != MPI_SUCCESS) {
            th->bad++;
            break;
        }
        clEnqueueReadBuffer(q, rb, CL_TRUE, 0, N * sizeof *got, got, 0, NULL, NULL);
        for (int i = 0; i < N; i++) {
            int want = i % 2 ? -1 : value(peer, th->id, it);
            if (got[i] != want) {
                fprintf(stderr, "rank %d thread %d iteration %d: int %d is %d, expected %d\n", rank, th->id, it, i,
                        got[i], want);
                th->bad++;
                break;
            }
        }
    }
    MPI_Type_free(&t);
    MPI_Type_free(&v);
    clReleaseMemObject(sb);
    clReleaseMemObject(rb);
    clReleaseKernel(fill);
    clReleaseCommandQueue(q);
    free(init);
    free(got);
    return NULL;
}

static void threads_exchange(void **state)
{
    pthread_t tid[NTHREADS];
    thr_t th[NTHREADS];
    int bad = 0;
    for (int k = 0; k < NTHREADS; k++) {
        th[k] = (thr_t){.id = k};
        assert_int_equal(pthread_create(&tid[k], NULL, thread_main, &th[k]), 0);
    }
    for (int k = 0; k < NTHREADS; k++) {
        pthread_join(tid[k], NULL);
        bad += th[k].bad;
    }
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    assert_int_equal(bad, 0);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(threads_exchange)};
    int provided;
    fx_init(&argc, &argv);
    MPI_Query_thread(&provided);
    if (provided < MPI_THREAD_MULTIPLE) mpiacc_test_skip_all("MPI_THREAD_MULTIPLE not provided");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    peer = 1 - rank;
    return fx_end(MPIACC_TEST_RUN("opencl_threads", tests, NULL, NULL));
}
