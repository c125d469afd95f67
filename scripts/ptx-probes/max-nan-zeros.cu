// The GPU's answer to one question the kernels rely on: how `max.NaN.f32` / `min.NaN.f32` (the f32
// Max / Min operators) and `max.f64` / `min.f64` order -0.0 and +0.0 and pass NaN. Run on the GPU
// machine: nvcc -arch=sm_90 -o /tmp/max-nan-zeros scripts/ptx-probes/max-nan-zeros.cu && /tmp/max-nan-zeros
// (docs/performance.md, "The f32 Max and Min in one instruction").
#include <cstdio>
#include <cstring>
#include <cmath>
__global__ void k(const float* a, const float* b, float* mx, float* mn, int n) {
    int i = threadIdx.x;
    if (i < n) {
        float x = a[i], y = b[i], o, p;
        asm("max.NaN.f32 %0, %1, %2;" : "=f"(o) : "f"(x), "f"(y));
        asm("min.NaN.f32 %0, %1, %2;" : "=f"(p) : "f"(x), "f"(y));
        mx[i] = o; mn[i] = p;
    }
}
__global__ void k64(const double* a, const double* b, double* mx, double* mn, int n) {
    int i = threadIdx.x;
    if (i < n) {
        double x = a[i], y = b[i], o, p;
        asm("max.f64 %0, %1, %2;" : "=d"(o) : "d"(x), "d"(y));
        asm("min.f64 %0, %1, %2;" : "=d"(p) : "d"(x), "d"(y));
        mx[i] = o; mn[i] = p;
    }
}
int main() {
    {
        const int n = 4;
        double a[n] = {-0.0, 0.0, -0.0, 2.0}, b[n] = {0.0, -0.0, -0.0, NAN}, mx[n], mn[n];
        double *da, *db, *dx, *dn;
        cudaMalloc(&da, 8 * n); cudaMalloc(&db, 8 * n); cudaMalloc(&dx, 8 * n); cudaMalloc(&dn, 8 * n);
        cudaMemcpy(da, a, 8 * n, cudaMemcpyHostToDevice); cudaMemcpy(db, b, 8 * n, cudaMemcpyHostToDevice);
        k64<<<1, 32>>>(da, db, dx, dn, n);
        cudaMemcpy(mx, dx, 8 * n, cudaMemcpyDeviceToHost); cudaMemcpy(mn, dn, 8 * n, cudaMemcpyDeviceToHost);
        for (int i = 0; i < n; i++) printf("f64 a=%g b=%g max.f64=%g min.f64=%g\n", a[i], b[i], mx[i], mn[i]);
    }
    const int n = 6;
    float a[n] = {-0.0f, 0.0f, NAN, 1.0f, -INFINITY, -0.0f};
    float b[n] = {0.0f, -0.0f, 1.0f, NAN, -0.0f, -0.0f};
    float *da, *db, *dx, *dn, mx[n], mn[n];
    cudaMalloc(&da, 4 * n); cudaMalloc(&db, 4 * n); cudaMalloc(&dx, 4 * n); cudaMalloc(&dn, 4 * n);
    cudaMemcpy(da, a, 4 * n, cudaMemcpyHostToDevice); cudaMemcpy(db, b, 4 * n, cudaMemcpyHostToDevice);
    k<<<1, 32>>>(da, db, dx, dn, n);
    cudaMemcpy(mx, dx, 4 * n, cudaMemcpyDeviceToHost); cudaMemcpy(mn, dn, 4 * n, cudaMemcpyDeviceToHost);
    for (int i = 0; i < n; i++) {
        unsigned ux, un; memcpy(&ux, &mx[i], 4); memcpy(&un, &mn[i], 4);
        printf("a=%g b=%g max=%g (0x%08x) min=%g (0x%08x)\n", a[i], b[i], mx[i], ux, mn[i], un);
    }
}
