// NVIDIA CUB's DeviceReduce::ReduceByKey (sum, min) and DeviceSelect::UniqueByKey on n uint32 keys in runs of
// 1..15 (8 on average; a key its run's number) and float values in [0, 1), timed as gpu-primitives bench times
// (CUDA events, median of 21 after one warm-up, temporary storage allocated once), beside a device-to-device
// copy of the n values; the sums are checked once against the host's. The rows to set beside bench's
// "reduce_by_key sum, runs of 8" and "unique_by_key, runs of 8" (docs/performance.md).
// On the GPU machine: nvcc -O3 -std=c++17 -arch=sm_90 -o by_key scripts/cub-baseline/by_key.cu && ./by_key 28
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_select.cuh>
#include <cuda/functional>
#include <cuda/std/functional>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
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

// Median time in microseconds of 21 calls of `work` (after one untimed call).
template <class Work>
double median_us(Work work) {
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    work();
    CHECK(cudaDeviceSynchronize());
    std::vector<float> times;
    for (int i = 0; i < 21; ++i) {
        CHECK(cudaEventRecord(start));
        work();
        CHECK(cudaEventRecord(stop));
        CHECK(cudaEventSynchronize(stop));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, start, stop));
        times.push_back(ms * 1000.0f);
    }
    std::sort(times.begin(), times.end());
    return times[10];
}

// SplitMix64: the run lengths and the values.
static uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

int main(int argc, char** argv) {
    size_t n = size_t(1) << (argc > 1 ? std::atoi(argv[1]) : 28);
    std::vector<uint32_t> keys(n);
    std::vector<float> values(n);
    size_t runs = 0;
    for (size_t i = 0; i < n; ++runs) {
        size_t len = 1 + mix(runs) % 15;
        for (size_t j = 0; j < len && i < n; ++j) keys[i++] = uint32_t(runs);
    }
    for (size_t i = 0; i < n; ++i) values[i] = float(mix(i ^ 0x5555) >> 40) / float(1 << 24);
    uint32_t *d_keys, *d_unique;
    float *d_values, *d_out, *d_copy;
    unsigned long long* d_count;
    CHECK(cudaMalloc(&d_keys, n * 4));
    CHECK(cudaMalloc(&d_unique, n * 4));
    CHECK(cudaMalloc(&d_values, n * 4));
    CHECK(cudaMalloc(&d_out, n * 4));
    CHECK(cudaMalloc(&d_copy, n * 4));
    CHECK(cudaMalloc(&d_count, 8));
    CHECK(cudaMemcpy(d_keys, keys.data(), n * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_values, values.data(), n * 4, cudaMemcpyHostToDevice));
    int items = int(n);
    auto sum = [&](void* temp, size_t& bytes) {
        return cub::DeviceReduce::ReduceByKey(temp, bytes, d_keys, d_unique, d_values, d_out, d_count,
                                              cuda::std::plus<float>{}, items);
    };
    auto min = [&](void* temp, size_t& bytes) {
        return cub::DeviceReduce::ReduceByKey(temp, bytes, d_keys, d_unique, d_values, d_out, d_count,
                                              cuda::minimum<float>{}, items);
    };
    auto unique = [&](void* temp, size_t& bytes) {
        return cub::DeviceSelect::UniqueByKey(temp, bytes, d_keys, d_values, d_unique, d_out, d_count, items);
    };
    size_t sum_bytes = 0, min_bytes = 0, unique_bytes = 0;
    CHECK(sum(nullptr, sum_bytes));
    CHECK(min(nullptr, min_bytes));
    CHECK(unique(nullptr, unique_bytes));
    size_t temp_bytes = std::max(sum_bytes, std::max(min_bytes, unique_bytes));
    void* temp;
    CHECK(cudaMalloc(&temp, temp_bytes));
    // The copy of the n values (4 bytes each), as gpu-primitives bench's copy column.
    double copy_us = median_us([&] { CHECK(cudaMemcpyAsync(d_copy, d_values, n * 4, cudaMemcpyDeviceToDevice)); });
    double bytes = double(n) * 8 + double(runs) * 8 + 8;
    std::printf("algorithm,type,n,time_us,gbps,copy_us,copy_gbps,ratio\n");
    auto row = [&](const char* name, double us) {
        std::printf("%s,u32 f32,%zu,%.1f,%.1f,%.1f,%.1f,%.3f\n", name, n, us, bytes / us / 1e3, copy_us,
                    2.0 * n * 4 / copy_us / 1e3, us / copy_us);
    };
    size_t t = temp_bytes;
    row("reduce_by_key sum, runs of 8", median_us([&] { CHECK(sum(temp, t)); }));
    unsigned long long found = 0;
    CHECK(cudaMemcpy(&found, d_count, 8, cudaMemcpyDeviceToHost));
    std::vector<float> sums(runs);
    CHECK(cudaMemcpy(sums.data(), d_out, runs * 4, cudaMemcpyDeviceToHost));
    row("reduce_by_key min, runs of 8", median_us([&] { CHECK(min(temp, t)); }));
    row("unique_by_key, runs of 8", median_us([&] { CHECK(unique(temp, t)); }));
    // The sums, once, against the host's.
    double worst = 0;
    size_t r = 0;
    for (size_t i = 0; i < n; ++r) {
        double s = 0;
        size_t j = i;
        while (j < n && keys[j] == keys[i]) s += values[j++];
        if (r < sums.size()) worst = std::max(worst, std::abs(s - sums[r]) / std::max(1.0, std::abs(s)));
        i = j;
    }
    if (found != runs || worst > 1e-3) {
        std::printf("FAIL runs %llu expected %zu, worst relative error %g\n", found, runs, worst);
        return 1;
    }
    std::printf("check ok: %zu runs\n", runs);
    return 0;
}
