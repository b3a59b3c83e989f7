/* Lab-only: forwards the 8 cuBLAS 12 entry points faiss-gpu-cu12 uses to the machine's cuBLAS 13,
   because the 581 MB cuBLAS 12 wheel cannot be carried to the lent GPU machine (64 MiB per call).
   Signatures are unchanged between cuBLAS 12 and 13 for these functions. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
typedef void *H;
static void *lib;
static void *sym(const char *name, const char *alt) {
  if (!lib) {
    const char *path = getenv("CUBLAS13_PATH");
    lib = dlopen(path ? path : "libcublas.so.13", RTLD_NOW | RTLD_GLOBAL);
    if (!lib) { fprintf(stderr, "cublas shim: %s\n", dlerror()); abort(); }
  }
  void *f = dlsym(lib, name);
  if (!f && alt) f = dlsym(lib, alt);
  if (!f) { fprintf(stderr, "cublas shim: missing %s\n", name); abort(); }
  return f;
}
int cublasCreate_v2(H *h) { return ((int (*)(H *))sym("cublasCreate_v2", "cublasCreate"))(h); }
int cublasDestroy_v2(H h) { return ((int (*)(H))sym("cublasDestroy_v2", "cublasDestroy"))(h); }
int cublasSetStream_v2(H h, void *s) { return ((int (*)(H, void *))sym("cublasSetStream_v2", "cublasSetStream"))(h, s); }
int cublasGetMathMode(H h, int *m) { return ((int (*)(H, int *))sym("cublasGetMathMode", 0))(h, m); }
int cublasSetMathMode(H h, int m) { return ((int (*)(H, int))sym("cublasSetMathMode", 0))(h, m); }
typedef int (*sgemmex_t)(H, int, int, int, int, int, const float *, const void *, int, int, const void *, int, int,
                         const float *, void *, int, int);
int cublasSgemmEx(H h, int ta, int tb, int m, int n, int k, const float *alpha, const void *A, int at, int lda,
                  const void *B, int bt, int ldb, const float *beta, void *C, int ct, int ldc) {
  return ((sgemmex_t)sym("cublasSgemmEx", 0))(h, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct, ldc);
}
typedef int (*gemmex_t)(H, int, int, int, int, int, const void *, const void *, int, int, const void *, int, int,
                        const void *, void *, int, int, int, int);
int cublasGemmEx(H h, int ta, int tb, int m, int n, int k, const void *alpha, const void *A, int at, int lda,
                 const void *B, int bt, int ldb, const void *beta, void *C, int ct, int ldc, int comp, int algo) {
  return ((gemmex_t)sym("cublasGemmEx", 0))(h, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct, ldc,
                                             comp, algo);
}
typedef int (*gemmsb_t)(H, int, int, int, int, int, const void *, const void *, int, int, long long, const void *,
                        int, int, long long, const void *, void *, int, int, long long, int, int, int);
int cublasGemmStridedBatchedEx(H h, int ta, int tb, int m, int n, int k, const void *alpha, const void *A, int at,
                               int lda, long long sa, const void *B, int bt, int ldb, long long sb,
                               const void *beta, void *C, int ct, int ldc, long long sc, int count, int comp,
                               int algo) {
  return ((gemmsb_t)sym("cublasGemmStridedBatchedEx", 0))(h, ta, tb, m, n, k, alpha, A, at, lda, sa, B, bt, ldb, sb,
                                                         beta, C, ct, ldc, sc, count, comp, algo);
}
