/* The start-up baseline in C against CUDA's driver API: a whole process that opens the primary
 * context, loads one PTX module (JIT), copies 1,000 floats, launches one kernel and prints their
 * sum. Usage: reduce1000 sum1000.ptx */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                   \
    do {                                                              \
        CUresult status = (call);                                     \
        if (status != CUDA_SUCCESS) {                                 \
            const char* name = "?";                                   \
            cuGetErrorName(status, &name);                            \
            fprintf(stderr, "%s: %s\n", #call, name);                 \
            return 1;                                                 \
        }                                                             \
    } while (0)

int main(int argc, char** argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s sum1000.ptx\n", argv[0]);
        return 2;
    }
    FILE* file = fopen(argv[1], "rb");
    if (!file) {
        perror(argv[1]);
        return 1;
    }
    fseek(file, 0, SEEK_END);
    long length = ftell(file);
    rewind(file);
    char* ptx = malloc(length + 1);
    if (fread(ptx, 1, length, file) != (size_t)length) return 1;
    ptx[length] = 0;
    fclose(file);
    float host[1000];
    for (int i = 0; i < 1000; i++) host[i] = (float)i;
    CUdevice device;
    CUcontext context;
    CUmodule module;
    CUfunction kernel;
    CUdeviceptr x, out;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&device, 0));
    CHECK(cuDevicePrimaryCtxRetain(&context, device));
    CHECK(cuCtxSetCurrent(context));
    CHECK(cuModuleLoadData(&module, ptx));
    CHECK(cuModuleGetFunction(&kernel, module, "sum1000"));
    CHECK(cuMemAlloc(&x, sizeof host));
    CHECK(cuMemAlloc(&out, sizeof(float)));
    CHECK(cuMemcpyHtoD(x, host, sizeof host));
    int n = 1000;
    void* args[] = {&x, &out, &n};
    CHECK(cuLaunchKernel(kernel, 1, 1, 1, 256, 1, 1, 0, 0, args, 0));
    float sum;
    CHECK(cuMemcpyDtoH(&sum, out, sizeof sum));
    printf("%.1f\n", sum);
    return 0;
}
