# SPDX-License-Identifier: BSD-3-Clause
"""mpi4py through mpiacc: point-to-point and Allreduce on CUDA arrays.

Run by scripts/clients/mpi4py.sh (2 ranks, mpiacc preloaded, MPIACC_UVA=1).
Arrays: CuPy when importable, else a small ctypes wrapper over libcudart
exposing __cuda_array_interface__, else (--host, or no GPU) NumPy arrays.
Every result is copied back to the host and compared; exit status 1 on a
mismatch.  --help for the options.
"""
import argparse
import ctypes
import ctypes.util
import os
import sys

import numpy as np

MPI = None  # mpi4py.MPI, imported after the options (so that --help needs no MPI)


class CudartArray:
    """A float32 device array from cudaMalloc, with __cuda_array_interface__."""

    lib = None

    @classmethod
    def load(cls, path):
        cls.lib = ctypes.CDLL(path)
        n = ctypes.c_int(0)
        if cls.lib.cudaGetDeviceCount(ctypes.byref(n)) != 0 or n.value == 0:
            raise OSError("no CUDA device")

    def __init__(self, n):
        self.n = n
        self.ptr = ctypes.c_void_p()
        self._ck(self.lib.cudaMalloc(ctypes.byref(self.ptr), ctypes.c_size_t(4 * n)), "cudaMalloc")

    def _ck(self, rc, what):
        if rc != 0:
            raise RuntimeError(f"{what} failed: cudaError {rc}")

    @property
    def __cuda_array_interface__(self):
        return {"shape": (self.n,), "typestr": "<f4", "data": (self.ptr.value, False), "version": 2}

    def set(self, host):
        h = np.ascontiguousarray(host, dtype=np.float32)
        self._ck(self.lib.cudaMemcpy(self.ptr, h.ctypes.data_as(ctypes.c_void_p), ctypes.c_size_t(4 * self.n), 1),
                 "cudaMemcpy H2D")
        self._ck(self.lib.cudaDeviceSynchronize(), "cudaDeviceSynchronize")

    def get(self):
        h = np.empty(self.n, dtype=np.float32)
        self._ck(self.lib.cudaMemcpy(h.ctypes.data_as(ctypes.c_void_p), self.ptr, ctypes.c_size_t(4 * self.n), 2),
                 "cudaMemcpy D2H")
        return h

    def free(self):
        self.lib.cudaFree(self.ptr)


def make_kind(kind, cudart):
    """Returns (name, alloc(host_values) -> array, to_host(array) -> ndarray)."""
    if kind == "cupy":
        import cupy as cp
        return "cupy", lambda h: cp.asarray(h, dtype=cp.float32), lambda a: cp.asnumpy(a)
    if kind == "cudart":
        CudartArray.load(cudart)

        def alloc(h):
            a = CudartArray(len(h))
            a.set(h)
            return a
        return "ctypes/libcudart", alloc, lambda a: a.get()
    return "numpy (host)", lambda h: np.array(h, dtype=np.float32), lambda a: np.asarray(a)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arrays", choices=["auto", "cupy", "cudart", "host"], default="auto",
                    help="array kind (auto: cupy, else cudart, else host)")
    ap.add_argument("--cudart", default=os.environ.get("CUDART", "libcudart.so"), help="libcudart to load (ctypes)")
    ap.add_argument("--n", type=int, default=1 << 18, help="floats per array (default 262144)")
    args = ap.parse_args()
    global MPI
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    if size != 2:
        print("SKIPPED: needs 2 ranks")
        return 77
    kind = args.arrays
    if kind == "auto":
        kind = "host"
        try:
            import cupy  # noqa: F401
            cupy.cuda.runtime.getDeviceCount()
            kind = "cupy"
        except Exception:
            try:
                CudartArray.load(args.cudart)
                kind = "cudart"
            except OSError:
                pass
    if kind != "host":
        # one GPU per rank when there are several, else both on device 0
        local = int(os.environ.get("MPI_LOCALRANKID", rank))
        if kind == "cupy":
            import cupy as cp
            cp.cuda.Device(local % cp.cuda.runtime.getDeviceCount()).use()
        else:
            CudartArray.load(args.cudart)
            n = ctypes.c_int(0)
            CudartArray.lib.cudaGetDeviceCount(ctypes.byref(n))
            CudartArray.lib.cudaSetDevice(local % n.value)
    name, alloc, to_host = make_kind(kind, args.cudart)
    peer, n, bad = 1 - rank, args.n, 0

    def check(what, got, want):
        nonlocal bad
        if not np.array_equal(got, want):
            print(f"[rank {rank}] {what}: WRONG DATA (first {got[:4]} want {want[:4]})", flush=True)
            bad += 1

    base = np.arange(n, dtype=np.float32)
    # Send / Recv (buffer spec with an explicit datatype), both directions
    for src in (0, 1):
        if rank == src:
            a = alloc(base + src)
            comm.Send([a, MPI.FLOAT], dest=peer, tag=1)
        else:
            r = alloc(np.zeros(n, np.float32))
            comm.Recv([r, MPI.FLOAT], source=peer, tag=1)
            check(f"Send/Recv {src}->{rank}", to_host(r), base + src)
    # Isend / Irecv at once (automatic datatype from the array)
    s, r = alloc(base * 2 + rank), alloc(np.zeros(n, np.float32))
    reqs = [comm.Irecv(r, source=peer, tag=2), comm.Isend(s, dest=peer, tag=2)]
    MPI.Request.Waitall(reqs)
    check("Isend/Irecv", to_host(r), base * 2 + peer)
    # Sendrecv
    r2 = alloc(np.zeros(n, np.float32))
    comm.Sendrecv([s, MPI.FLOAT], dest=peer, sendtag=3, recvbuf=[r2, MPI.FLOAT], source=peer, recvtag=3)
    check("Sendrecv", to_host(r2), base * 2 + peer)
    # Allreduce (SUM)
    x, y = alloc(base + rank), alloc(np.zeros(n, np.float32))
    comm.Allreduce([x, MPI.FLOAT], [y, MPI.FLOAT], op=MPI.SUM)
    check("Allreduce", to_host(y), 2 * base + 1)

    total = comm.allreduce(bad)
    if rank == 0:
        print(f"mpi4py {MPI.Get_library_version().splitlines()[0][:40]}..., arrays: {name}, {n} floats: "
              f"Send/Recv, Isend/Irecv, Sendrecv, Allreduce: {'PASS' if total == 0 else f'FAIL ({total})'}")
    return 0 if total == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
