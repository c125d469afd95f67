// Reference figures for issue 4: NVIDIA CUB's device reduce and scan, timed the way
// `gpu-primitives bench` times ours (CUDA events around the queued work, median of 21 calls after one
// warm-up, temporary storage allocated once outside the timing), next to a device-to-device copy of
// the same n measured in the same run. Built and run on the GPU machine by scripts/cub-baseline/run.
//
// Output: one CSV row per (algorithm, type, n): algorithm,type,n,time_us,gbps,copy_us,copy_gbps,ratio.
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                          \
    do {                                                                                     \
        cudaError_t err_ = (call);                                                           \
        if (err_ != cudaSuccess) {                                                           \
            std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); \
            std::exit(1);                                                                    \
        }                                                                                    \
    } while (0)

constexpr int kRuns = 21;

// Median time in microseconds of `kRuns` calls of `work` (after one untimed call).
template <class Work>
double median_us(Work work) {
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    work();
    CHECK(cudaDeviceSynchronize());
    std::vector<float> times;
    for (int i = 0; i < kRuns; ++i) {
        CHECK(cudaEventRecord(start));
        work();
        CHECK(cudaEventRecord(stop));
        CHECK(cudaEventSynchronize(stop));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, start, stop));
        times.push_back(ms * 1000.0f);
    }
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    std::sort(times.begin(), times.end());
    return times[kRuns / 2];
}

template <class T>
void measure(const char* type, size_t n) {
    T *in, *out, *copy;
    CHECK(cudaMalloc(&in, n * sizeof(T)));
    CHECK(cudaMalloc(&out, n * sizeof(T)));
    CHECK(cudaMalloc(&copy, n * sizeof(T)));
    CHECK(cudaMemset(in, 0, n * sizeof(T)));
    double copy_us = median_us([&] { CHECK(cudaMemcpyAsync(copy, in, n * sizeof(T), cudaMemcpyDeviceToDevice)); });
    double copy_gbps = 2.0 * n * sizeof(T) / copy_us / 1e3;

    size_t reduce_bytes = 0, scan_bytes = 0;
    CHECK(cub::DeviceReduce::Sum(nullptr, reduce_bytes, in, out, n));
    CHECK(cub::DeviceScan::InclusiveSum(nullptr, scan_bytes, in, out, n));
    void* temp;
    size_t temp_bytes = std::max(reduce_bytes, scan_bytes);
    CHECK(cudaMalloc(&temp, temp_bytes));

    double reduce_us = median_us([&] { CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, in, out, n)); });
    double scan_us = median_us([&] { CHECK(cub::DeviceScan::InclusiveSum(temp, temp_bytes, in, out, n)); });
    std::printf("cub reduce sum,%s,%zu,%.2f,%.1f,%.2f,%.1f,%.3f\n", type, n, reduce_us,
                1.0 * n * sizeof(T) / reduce_us / 1e3, copy_us, copy_gbps, reduce_us / copy_us);
    std::printf("cub inclusive scan sum,%s,%zu,%.2f,%.1f,%.2f,%.1f,%.3f\n", type, n, scan_us,
                2.0 * n * sizeof(T) / scan_us / 1e3, copy_us, copy_gbps, scan_us / copy_us);
    std::fflush(stdout);
    CHECK(cudaFree(temp));
    CHECK(cudaFree(copy));
    CHECK(cudaFree(out));
    CHECK(cudaFree(in));
}

// With an argument, only f32 at n = 2^argument (for profiling one size with ncu).
int main(int argc, char** argv) {
    if (argc > 1) {
        measure<float>("f32", size_t(1) << std::atoi(argv[1]));
        return 0;
    }
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("# %s, CUB_VERSION %d\n", prop.name, CUB_VERSION);
    std::printf("algorithm,type,n,time_us,gbps,copy_us,copy_gbps,ratio\n");
    for (int log2 = 10; log2 <= 30; log2 += 2) measure<float>("f32", size_t(1) << log2);
    measure<double>("f64", size_t(1) << 28);
    measure<int32_t>("i32", size_t(1) << 28);
    measure<int64_t>("i64", size_t(1) << 28);
    measure<uint64_t>("u64", size_t(1) << 28);
    return 0;
}
