/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_cuda_hetero: heterogeneous transfers through the public API
 * (issue 5 item 5), 2 ranks sharing one GPU.  Built only with OpenCL.
 *
 *  cuda_host_both_ways   CUDA buffer on rank 0 -> plain host receive on
 *                        rank 1, and host -> CUDA back (always runs)
 *  cuda_opencl_roundtrip CUDA buffer on rank 0 -> cl_mem on rank 1 (with a
 *                        different datatype of the same signature, at a
 *                        byte offset given by the datatype) and back
 *  self_cuda_opencl      in each process MPI_Sendrecv to itself from a CUDA
 *                        buffer into a cl_mem, and the reverse
 * The OpenCL platform is chosen by a case-insensitive substring of its name
 * or vendor: --platform SUBSTR, else MPIACC_TEST_OPENCL_PLATFORM, else the
 * first platform with a device.  Without a CUDA device the test is skipped;
 * without the platform only the CUDA<->host part runs and the test then
 * reports SKIPPED (exit 77) naming the missing platform.
 * Device data are written on the stream / in-order queue right before the
 * MPI call (no synchronisation) and read back after completion.
 */
#include "cu_p2p.h"

#include <ctype.h>

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#define NI (1 << 15) /* ints */
#define BYTES ((long long)NI * 4)
#define OCL_OFF 64 /* byte offset of the OpenCL-side data inside the cl_mem */

static char want[128], found[800], seen[1024];
static cl_context ctx;
static cl_command_queue q;
static int have_ocl;
static unsigned char *dA, *h1, *h2, *h3, *h4;
static MPI_Datatype vec2, vec3, off64; /* NI/4 ints each: stride 2, stride 3, dense at byte 64 */
static unsigned seed32;

#define CL_CK(call_)                                                                                  \
    do {                                                                                              \
        cl_int e_ = (call_);                                                                          \
        if (e_ != CL_SUCCESS) {                                                                       \
            fprintf(stderr, "[rank %d] %s:%d: %s failed: OpenCL error %d\n", cu_rank, __FILE__, __LINE__, \
                    #call_, (int)e_);                                                                 \
            MPI_Abort(MPI_COMM_WORLD, 8);                                                             \
        }                                                                                             \
    } while (0)

static int contains_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    if (!n) return 1;
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i])) i++;
        if (i == n) return 1;
    }
    return 0;
}

/* Picks the platform and makes a context + in-order queue on its first
 * device; have_ocl = 0 (with `seen` listing the platforms) if none fits. */
static void ocl_setup(void)
{
    cl_platform_id plats[16];
    cl_uint np = 0;
    if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS) np = 0;
    for (cl_uint i = 0; i < np && i < 16 && !have_ocl; i++) {
        char name[256] = "", vendor[256] = "", both[520];
        cl_device_id dev;
        cl_uint nd = 0;
        cl_int e;
        clGetPlatformInfo(plats[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
        clGetPlatformInfo(plats[i], CL_PLATFORM_VENDOR, sizeof vendor, vendor, NULL);
        snprintf(both, sizeof both, "%s / %s", name, vendor);
        snprintf(seen + strlen(seen), sizeof seen - strlen(seen), "%s\"%s\"", *seen ? ", " : "", both);
        if (!contains_ci(both, want)) continue;
        if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 1, &dev, &nd) != CL_SUCCESS || !nd) continue;
        ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
        if (e != CL_SUCCESS) continue;
        q = clCreateCommandQueue(ctx, dev, 0, &e);
        if (e != CL_SUCCESS) {
            clReleaseContext(ctx);
            continue;
        }
        {
            char dname[256] = "";
            clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof dname, dname, NULL);
            snprintf(found, sizeof found, "%s, device %s", both, dname);
        }
        have_ocl = 1;
    }
}

static MPI_Datatype ocl_tag(MPI_Datatype base)
{
    MPI_Datatype t;
    MPI_CK(MPI_Type_dup(base, &t));
    MPI_CK(MPI_Type_set_attr(t, MPIACC_BUF_TYPE, MPIACC_BUF_OPENCL));
    MPI_CK(MPI_Type_set_attr(t, MPIACC_CL_QUEUE, (void *)q));
    return t;
}

/* expected: pattern(old) with 1 x type holding the ints of pattern(new_)
 * in the order `from` (1 element) packs them */
static void expect(MPI_Datatype from, MPI_Datatype type, unsigned old, unsigned new_, unsigned char *out)
{
    int pos = 0, size;
    cu_hfill(h4, BYTES, new_);
    MPI_CK(MPI_Type_size(from, &size));
    MPI_CK(MPI_Pack(h4, 1, from, h3, size, &pos, MPI_COMM_SELF));
    cu_hfill(out, BYTES, old);
    pos = 0;
    MPI_CK(MPI_Unpack(h3, size, &pos, out, 1, type, MPI_COMM_SELF));
}

static void cuda_host_both_ways(void **state)
{
    int bad = 0;
    const unsigned s0 = seed32 + 1, s1 = seed32 + 2, old = seed32 + 3;
    MPI_Datatype t = cu_tag(vec2, CU_STREAM, cu_us);
    (void)state;
    cu_watchdog("cuda_host_both_ways", 60);
    if (cu_rank == 0) {
        CU_CK(cu_k_fill(cu_us, dA, BYTES, s0));
        MPI_CK(MPI_Send(dA, 1, t, 1, 1, MPI_COMM_WORLD));
        CU_CK(cu_k_fill(cu_us, dA, BYTES, old));
        MPI_CK(MPI_Recv(dA, 1, t, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        expect(vec3, vec2, old, s1, h2);
        cu_get(h1, dA, BYTES);
        bad += cu_differs(h1, h2, BYTES, "host (stride 3) -> CUDA (stride 2)");
    } else if (cu_rank == 1) {
        cu_hfill(h1, BYTES, old);
        MPI_CK(MPI_Recv(h1, 1, vec3, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        expect(vec2, vec3, old, s0, h2);
        bad += cu_differs(h1, h2, BYTES, "CUDA (stride 2) -> host (stride 3)");
        cu_hfill(h1, BYTES, s1);
        MPI_CK(MPI_Send(h1, 1, vec3, 0, 2, MPI_COMM_WORLD));
    }
    MPI_CK(MPI_Type_free(&t));
    cu_all_ok(bad, "CUDA <-> host");
}

static void cuda_opencl_roundtrip(void **state)
{
    int bad = 0;
    const unsigned s0 = seed32 + 11, s1 = seed32 + 12, old = seed32 + 13;
    (void)state;
    cu_watchdog("cuda_opencl_roundtrip", 120);
    if (cu_rank == 0) {
        MPI_Datatype t = cu_tag(vec2, CU_STREAM, cu_us);
        CU_CK(cu_k_fill(cu_us, dA, BYTES, s0));
        MPI_CK(MPI_Send(dA, 1, t, 1, 11, MPI_COMM_WORLD));
        CU_CK(cu_k_fill(cu_us, dA, BYTES, old));
        MPI_CK(MPI_Recv(dA, 1, t, 1, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        expect(vec3, vec2, old, s1, h2);
        cu_get(h1, dA, BYTES);
        bad += cu_differs(h1, h2, BYTES, "OpenCL (stride 3) -> CUDA (stride 2)");
        MPI_CK(MPI_Type_free(&t));
    } else if (cu_rank == 1) {
        MPI_Datatype toff = ocl_tag(off64), t3 = ocl_tag(vec3);
        cl_int e;
        cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, BYTES, NULL, &e);
        CL_CK(e);
        cu_hfill(h4, BYTES, old);
        CL_CK(clEnqueueWriteBuffer(q, m, CL_FALSE, 0, BYTES, h4, 0, NULL, NULL)); /* ordered by the queue */
        MPI_CK(MPI_Recv(m, 1, toff, 0, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CL_CK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, BYTES, h1, 0, NULL, NULL));
        expect(vec2, off64, old, s0, h2);
        bad += cu_differs(h1, h2, BYTES, "CUDA (stride 2) -> OpenCL (dense at byte 64)");
        cu_hfill(h1, BYTES, s1);
        CL_CK(clEnqueueWriteBuffer(q, m, CL_FALSE, 0, BYTES, h1, 0, NULL, NULL));
        MPI_CK(MPI_Send(m, 1, t3, 0, 12, MPI_COMM_WORLD));
        CL_CK(clFinish(q));
        CL_CK(clReleaseMemObject(m));
        MPI_CK(MPI_Type_free(&toff));
        MPI_CK(MPI_Type_free(&t3));
    }
    cu_all_ok(bad, "CUDA <-> OpenCL between processes");
}

static void self_cuda_opencl(void **state)
{
    int bad = 0;
    const unsigned s0 = seed32 + 21u + (unsigned)cu_rank, s1 = seed32 + 31u + (unsigned)cu_rank, old = seed32 + 41;
    MPI_Datatype tc = cu_tag(vec2, CU_STREAM, cu_us), to = ocl_tag(off64);
    cl_int e;
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, BYTES, NULL, &e);
    MPI_Status st;
    (void)state;
    CL_CK(e);
    cu_watchdog("self_cuda_opencl", 120);
    /* CUDA -> OpenCL */
    CU_CK(cu_k_fill(cu_us, dA, BYTES, s0));
    cu_hfill(h4, BYTES, old);
    CL_CK(clEnqueueWriteBuffer(q, m, CL_FALSE, 0, BYTES, h4, 0, NULL, NULL));
    MPI_CK(MPI_Sendrecv(dA, 1, tc, cu_rank, 21, m, 1, to, cu_rank, 21, MPI_COMM_WORLD, &st));
    CL_CK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, BYTES, h1, 0, NULL, NULL));
    expect(vec2, off64, old, s0, h2);
    bad += cu_differs(h1, h2, BYTES, "MPI_Sendrecv to self, CUDA -> OpenCL");
    /* OpenCL -> CUDA */
    cu_hfill(h1, BYTES, s1);
    CL_CK(clEnqueueWriteBuffer(q, m, CL_FALSE, 0, BYTES, h1, 0, NULL, NULL));
    CU_CK(cu_k_fill(cu_us, dA, BYTES, old));
    MPI_CK(MPI_Sendrecv(m, 1, to, cu_rank, 22, dA, 1, tc, cu_rank, 22, MPI_COMM_WORLD, &st));
    cu_get(h1, dA, BYTES); /* the write from h1 is done: the send waited for it */
    expect(off64, vec2, old, s1, h2);
    bad += cu_differs(h1, h2, BYTES, "MPI_Sendrecv to self, OpenCL -> CUDA");
    CL_CK(clFinish(q));
    CL_CK(clReleaseMemObject(m));
    MPI_CK(MPI_Type_free(&tc));
    MPI_CK(MPI_Type_free(&to));
    cu_all_ok(bad, "MPI_Sendrecv to self between CUDA and OpenCL");
}

int main(int argc, char **argv)
{
    int fails;
    const char *env = getenv("MPIACC_TEST_OPENCL_PLATFORM");
    const struct CMUnitTest cuda_tests[] = {cmocka_unit_test(cuda_host_both_ways)};
    const struct CMUnitTest ocl_tests[] = {
        cmocka_unit_test(cuda_opencl_roundtrip), cmocka_unit_test(self_cuda_opencl),
    };
    MPI_Aint disp = OCL_OFF;
    cu_init(&argc, &argv, MPI_THREAD_SINGLE, 2);
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--platform")) snprintf(want, sizeof want, "%s", argv[i + 1]);
    if (!*want && env) snprintf(want, sizeof want, "%s", env);
    seed32 = (unsigned)mpiacc_test_seed();
    CU_CK(cudaMalloc((void **)&dA, BYTES));
    h1 = malloc(BYTES), h2 = malloc(BYTES), h3 = malloc(BYTES), h4 = malloc(BYTES);
    if (!h1 || !h2 || !h3 || !h4) MPI_Abort(MPI_COMM_WORLD, 6);
    vec2 = cu_vector_int(NI / 4, 2);
    vec3 = cu_vector_int(NI / 4, 3);
    {
        MPI_Datatype c;
        MPI_CK(MPI_Type_contiguous(NI / 4, MPI_INT, &c));
        MPI_CK(MPI_Type_create_hindexed_block(1, 1, &disp, c, &off64));
        MPI_CK(MPI_Type_commit(&off64));
        MPI_Type_free(&c);
    }
    ocl_setup();
    if (cu_rank == 0) {
        if (have_ocl) printf("OpenCL platform matching \"%s\": %s\n", want, found);
        else printf("no OpenCL platform matching \"%s\" with a device (platforms: %s)\n", want, *seen ? seen : "none");
    }
    fails = MPIACC_TEST_RUN("cuda_hetero_host", cuda_tests, NULL, NULL);
    if (have_ocl) fails += MPIACC_TEST_RUN("cuda_hetero_opencl", ocl_tests, NULL, NULL);
    MPI_Type_free(&vec2);
    MPI_Type_free(&vec3);
    MPI_Type_free(&off64);
    CU_CK(cudaFree(dA));
    free(h1), free(h2), free(h3), free(h4);
    if (have_ocl) {
        clReleaseCommandQueue(q);
        clReleaseContext(ctx);
    } else if (!fails) {
        CU_CK(cudaStreamDestroy(cu_us));
        CU_CK(cudaStreamDestroy(cu_us2));
        mpiacc_test_skip_all("OpenCL half: no OpenCL platform matching \"%s\" with a device (platforms: %s); the "
                             "CUDA<->host half passed", want, *seen ? seen : "none");
    }
    return cu_fini(fails);
}
