// Reference figures: NVIDIA CUB's device reduce, scan, compaction (select, unique, partition), histogram
// (256 bins, even and range), run-length encoding (encode, non-trivial runs), segmented sums (by
// offsets, by key), sorts (radix sort of keys and of pairs, segmented sort), reduce and unique by key
// (mode by-key) and the top-k of a whole array (mode top-k, where this CCCL has cub::DeviceTopK), timed the way
// `gpu-primitives bench` times ours (CUDA events around the queued work, median of 21 calls after one
// warm-up, temporary storage allocated once outside the timing), next to a device-to-device copy of
// the same n measured in the same run. Built and run on the GPU machine by scripts/cub-baseline/run.
//
// Output: one CSV row per (algorithm, type, n): algorithm,type,n,time_us,gbps,copy_us,copy_gbps,ratio; the
// sort rows add a ninth column, gkeys_per_s (keys sorted per second / 1e9). A sort whose result does not
// check prints a line starting with FAIL and makes the program exit with status 1; so does a by-key or top-k
// result that does not check (those modes print "check ok: ..." when every result checks).
#include <cub/device/device_histogram.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_partition.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <cub/device/device_segmented_sort.cuh>
#include <cub/device/device_select.cuh>
#include <cuda/functional>      // cuda::minimum
#include <cuda/std/functional>  // cuda::std::plus
#include <cuda_runtime.h>

// cub::DeviceTopK first ships in CCCL 3.2.0 (cub/device/device_topk.cuh); CUDA 13.0's CCCL 3.0 lacks it, and then
// the top-k mode only says so. Its env-based API needs cuda::execution::require (the header includes it) and the
// counting iterator of <cuda/iterator> (CCCL 3.1 on) gives the indices.
#if __has_include(<cub/device/device_topk.cuh>)
#include <cub/device/device_topk.cuh>
#include <cuda/iterator>
#define HAVE_DEVICE_TOPK 1
#else
#define HAVE_DEVICE_TOPK 0
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
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

    size_t reduce_bytes = 0, scan_bytes = 0, exclusive_bytes = 0;
    CHECK(cub::DeviceReduce::Sum(nullptr, reduce_bytes, in, out, n));
    CHECK(cub::DeviceScan::InclusiveSum(nullptr, scan_bytes, in, out, n));
    CHECK(cub::DeviceScan::ExclusiveSum(nullptr, exclusive_bytes, in, out, n));
    void* temp;
    size_t temp_bytes = std::max(std::max(reduce_bytes, scan_bytes), exclusive_bytes);
    CHECK(cudaMalloc(&temp, temp_bytes));

    double reduce_us = median_us([&] { CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, in, out, n)); });
    double scan_us = median_us([&] { CHECK(cub::DeviceScan::InclusiveSum(temp, temp_bytes, in, out, n)); });
    double exclusive_us = median_us([&] { CHECK(cub::DeviceScan::ExclusiveSum(temp, temp_bytes, in, out, n)); });
    std::printf("cub reduce sum,%s,%zu,%.2f,%.1f,%.2f,%.1f,%.3f\n", type, n, reduce_us,
                1.0 * n * sizeof(T) / reduce_us / 1e3, copy_us, copy_gbps, reduce_us / copy_us);
    std::printf("cub inclusive scan sum,%s,%zu,%.2f,%.1f,%.2f,%.1f,%.3f\n", type, n, scan_us,
                2.0 * n * sizeof(T) / scan_us / 1e3, copy_us, copy_gbps, scan_us / copy_us);
    std::printf("cub exclusive scan sum,%s,%zu,%.2f,%.1f,%.2f,%.1f,%.3f\n", type, n, exclusive_us,
                2.0 * n * sizeof(T) / exclusive_us / 1e3, copy_us, copy_gbps, exclusive_us / copy_us);
    std::fflush(stdout);
    CHECK(cudaFree(temp));
    CHECK(cudaFree(copy));
    CHECK(cudaFree(out));
    CHECK(cudaFree(in));
}

// The benchmark's hash (crates/cli/src/bench.rs `hash`): uniform 32-bit values.
uint32_t bench_hash(size_t i) {
    uint32_t h = uint32_t(i) * 0x9E3779B1u;
    h ^= h >> 15;
    h *= 0x85EBCA77u;
    return h ^ (h >> 13);
}
float unit(uint32_t bits) { return float(bits >> 8) / float(1 << 24); }
float uniform(float*, uint32_t bits) { return unit(bits); }
uint32_t uniform(uint32_t*, uint32_t bits) { return bits; }
float median(float*) { return 0.5f; }
uint32_t median(uint32_t*) { return 1u << 31; }

template <class T>
struct Below {
    T threshold;
    __host__ __device__ bool operator()(const T& x) const { return x < threshold; }
};

// The compactions of `gpu-primitives bench`, on the same inputs: select_if / partition_if keep
// x < median of uniform values, select_flagged keeps (hash >> 7) & 1, unique reads runs of two.
template <class T>
void measure_compaction(const char* type, size_t n) {
    std::vector<T> host(n), pairs(n);
    std::vector<uint8_t> host_flags(n);
    for (size_t i = 0; i < n; ++i) {
        host[i] = uniform((T*)nullptr, bench_hash(i));
        pairs[i] = uniform((T*)nullptr, bench_hash(i / 2));
        host_flags[i] = (bench_hash(i) >> 7) & 1;
    }
    T *in, *runs, *out, *copy;
    uint8_t* flags;
    unsigned long long* count;
    CHECK(cudaMalloc(&in, n * sizeof(T)));
    CHECK(cudaMalloc(&runs, n * sizeof(T)));
    CHECK(cudaMalloc(&out, n * sizeof(T)));
    CHECK(cudaMalloc(&copy, n * sizeof(T)));
    CHECK(cudaMalloc(&flags, n));
    CHECK(cudaMalloc(&count, sizeof(*count)));
    CHECK(cudaMemcpy(in, host.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(runs, pairs.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(flags, host_flags.data(), n, cudaMemcpyHostToDevice));
    double copy_us = median_us([&] { CHECK(cudaMemcpyAsync(copy, in, n * sizeof(T), cudaMemcpyDeviceToDevice)); });
    double copy_gbps = 2.0 * n * sizeof(T) / copy_us / 1e3;
    Below<T> half{median((T*)nullptr)};
    size_t b1 = 0, b2 = 0, b3 = 0, b4 = 0, b5 = 0;
    CHECK(cub::DeviceSelect::If(nullptr, b1, in, out, count, n, half));
    CHECK(cub::DeviceSelect::Flagged(nullptr, b2, in, flags, out, count, n));
    CHECK(cub::DeviceSelect::Unique(nullptr, b3, runs, out, count, n));
    CHECK(cub::DevicePartition::If(nullptr, b4, in, out, count, n, half));
    CHECK(cub::DevicePartition::Flagged(nullptr, b5, in, flags, out, count, n));
    size_t temp_bytes = std::max(std::max(std::max(b1, b2), std::max(b3, b4)), b5);
    void* temp;
    CHECK(cudaMalloc(&temp, temp_bytes));
    auto kept = [&] {
        unsigned long long k = 0;
        CHECK(cudaMemcpy(&k, count, sizeof(k), cudaMemcpyDeviceToHost));
        return double(k);
    };
    auto row = [&](const char* name, double us, double bytes) {
        std::printf("cub %s,%s,%zu,%.2f,%.1f,%.2f,%.1f,%.3f\n", name, type, n, us, bytes / us / 1e3, copy_us,
                    copy_gbps, us / copy_us);
    };
    double s = sizeof(T);
    double us = median_us([&] { CHECK(cub::DeviceSelect::If(temp, temp_bytes, in, out, count, n, half)); });
    row("select_if half", us, (n + kept()) * s);
    us = median_us([&] { CHECK(cub::DeviceSelect::Flagged(temp, temp_bytes, in, flags, out, count, n)); });
    row("select_flagged half", us, (n + kept()) * s + n);
    us = median_us([&] { CHECK(cub::DeviceSelect::Unique(temp, temp_bytes, runs, out, count, n)); });
    row("unique half", us, (n + kept()) * s);
    us = median_us([&] { CHECK(cub::DevicePartition::If(temp, temp_bytes, in, out, count, n, half)); });
    row("partition_if half (rejected reversed)", us, 2.0 * n * s);
    us = median_us([&] { CHECK(cub::DevicePartition::Flagged(temp, temp_bytes, in, flags, out, count, n)); });
    row("partition_flagged half (rejected reversed)", us, 2.0 * n * s + n);
    std::fflush(stdout);
    for (void* p : {(void*)temp, (void*)in, (void*)runs, (void*)out, (void*)copy, (void*)flags, (void*)count})
        CHECK(cudaFree(p));
}

// The 257 levels of 256 equal bins over the values `uniform` gives: f32 k / 256 in [0, 1], u32 k << 24
// with the last level 0xFFFFFFFF (the even case's upper level, exclusive like every upper level).
float bin_level(float*, int k) { return k / 256.0f; }
uint32_t bin_level(uint32_t*, int k) { return k < 256 ? uint32_t(k) << 24 : 0xFFFFFFFFu; }

// Histograms of uniform values into 256 bins with unsigned int counters: histogram_even from the lower
// and upper level (f32 0 and 1, u32 0 and 0xFFFFFFFF), histogram_range from the same 257 levels as a
// sorted array on the device. Both read the n samples once.
template <class T>
void measure_histogram(const char* type, size_t n) {
    constexpr int kLevels = 257;
    std::vector<T> host(n), host_levels(kLevels);
    for (size_t i = 0; i < n; ++i) host[i] = uniform((T*)nullptr, bench_hash(i));
    for (int k = 0; k < kLevels; ++k) host_levels[k] = bin_level((T*)nullptr, k);
    T *in, *levels, *copy;
    unsigned int* histogram;
    CHECK(cudaMalloc(&in, n * sizeof(T)));
    CHECK(cudaMalloc(&copy, n * sizeof(T)));
    CHECK(cudaMalloc(&levels, kLevels * sizeof(T)));
    CHECK(cudaMalloc(&histogram, (kLevels - 1) * sizeof(unsigned int)));
    CHECK(cudaMemcpy(in, host.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(levels, host_levels.data(), kLevels * sizeof(T), cudaMemcpyHostToDevice));
    double copy_us = median_us([&] { CHECK(cudaMemcpyAsync(copy, in, n * sizeof(T), cudaMemcpyDeviceToDevice)); });
    double copy_gbps = 2.0 * n * sizeof(T) / copy_us / 1e3;
    T lower = host_levels[0], upper = host_levels[kLevels - 1];
    int num_samples = int(n);  // CUB's OffsetT (signed); n is at most 2^28 here
    void* temp = nullptr;      // a void* (not a bare nullptr) so only the temp-storage overloads match
    size_t b1 = 0, b2 = 0;
    CHECK(cub::DeviceHistogram::HistogramEven(temp, b1, in, histogram, kLevels, lower, upper, num_samples));
    CHECK(cub::DeviceHistogram::HistogramRange(temp, b2, in, histogram, kLevels, levels, num_samples));
    size_t temp_bytes = std::max(b1, b2);
    CHECK(cudaMalloc(&temp, temp_bytes));
    auto row = [&](const char* name, double us, double bytes) {
        std::printf("cub %s,%s,%zu,%.2f,%.1f,%.2f,%.1f,%.3f\n", name, type, n, us, bytes / us / 1e3, copy_us,
                    copy_gbps, us / copy_us);
    };
    double s = sizeof(T);
    double us = median_us([&] {
        CHECK(cub::DeviceHistogram::HistogramEven(temp, temp_bytes, in, histogram, kLevels, lower, upper,
                                                  num_samples));
    });
    row("histogram_even 256 bins", us, n * s);
    us = median_us([&] {
        CHECK(cub::DeviceHistogram::HistogramRange(temp, temp_bytes, in, histogram, kLevels, levels, num_samples));
    });
    row("histogram_range 256 bins", us, n * s);
    std::fflush(stdout);
    for (void* p : {(void*)temp, (void*)in, (void*)levels, (void*)copy, (void*)histogram}) CHECK(cudaFree(p));
}

// The sorted key with rank k: u32 k itself, f32 the positive float with bits 0x3F800000 + k (increasing in k).
float sorted_key(float*, uint32_t k) {
    uint32_t bits = 0x3F800000u + k;
    float f;
    std::memcpy(&f, &bits, sizeof(f));
    return f;
}
uint32_t sorted_key(uint32_t*, uint32_t k) { return k; }

// Run-length encodings of sorted keys whose runs are distributed like those of 2^28 sorted uniform 32-bit
// values: item i >= 1 starts a new key unless hash(i) & 15 == 0 (mostly runs of one, some of two or more).
// run_length_encode writes a key and a uint32 length per run, non_trivial_runs a uint32 offset and length
// per run longer than one; the figures count the n keys read and those writes.
template <class T>
void measure_rle(const char* type, size_t n) {
    std::vector<T> host(n);
    uint32_t k = 0;
    for (size_t i = 0; i < n; ++i) {
        if (i > 0 && (bench_hash(i) & 15) != 0) ++k;
        host[i] = sorted_key((T*)nullptr, k);
    }
    T *in, *unique, *copy;
    uint32_t *lengths, *offsets, *num_runs;
    CHECK(cudaMalloc(&in, n * sizeof(T)));
    CHECK(cudaMalloc(&unique, n * sizeof(T)));
    CHECK(cudaMalloc(&copy, n * sizeof(T)));
    CHECK(cudaMalloc(&lengths, n * sizeof(uint32_t)));
    CHECK(cudaMalloc(&offsets, n * sizeof(uint32_t)));
    CHECK(cudaMalloc(&num_runs, sizeof(*num_runs)));
    CHECK(cudaMemcpy(in, host.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    double copy_us = median_us([&] { CHECK(cudaMemcpyAsync(copy, in, n * sizeof(T), cudaMemcpyDeviceToDevice)); });
    double copy_gbps = 2.0 * n * sizeof(T) / copy_us / 1e3;
    int num_items = int(n);  // n is at most 2^28 here
    void* temp = nullptr;    // a void* (not a bare nullptr) so only the temp-storage overloads match
    size_t b1 = 0, b2 = 0;
    CHECK(cub::DeviceRunLengthEncode::Encode(temp, b1, in, unique, lengths, num_runs, num_items));
    CHECK(cub::DeviceRunLengthEncode::NonTrivialRuns(temp, b2, in, offsets, lengths, num_runs, num_items));
    size_t temp_bytes = std::max(b1, b2);
    CHECK(cudaMalloc(&temp, temp_bytes));
    auto runs = [&] {
        uint32_t r = 0;
        CHECK(cudaMemcpy(&r, num_runs, sizeof(r), cudaMemcpyDeviceToHost));
        return double(r);
    };
    auto row = [&](const char* name, double us, double bytes) {
        std::printf("cub %s,%s,%zu,%.2f,%.1f,%.2f,%.1f,%.3f\n", name, type, n, us, bytes / us / 1e3, copy_us,
                    copy_gbps, us / copy_us);
    };
    double s = sizeof(T);
    double us = median_us([&] {
        CHECK(cub::DeviceRunLengthEncode::Encode(temp, temp_bytes, in, unique, lengths, num_runs, num_items));
    });
    row("run_length_encode", us, n * s + runs() * (s + 4));
    us = median_us([&] {
        CHECK(cub::DeviceRunLengthEncode::NonTrivialRuns(temp, temp_bytes, in, offsets, lengths, num_runs, num_items));
    });
    row("non_trivial_runs", us, n * s + runs() * 8);
    std::fflush(stdout);
    for (void* p : {(void*)temp, (void*)in, (void*)unique, (void*)copy, (void*)lengths, (void*)offsets,
                    (void*)num_runs})
        CHECK(cudaFree(p));
}

// The value of index i in the segment rows (gpu-primitives bench's `pattern`): exact sums.
float pattern(float*, size_t i) { return (float(i % 17) - 8.0f) * 0.25f; }
uint32_t pattern(uint32_t*, size_t i) { return uint32_t(i % 1001); }

// Segmented sums: DeviceSegmentedReduce::Sum over u64 CSR offsets (segments of 1000 items; one huge
// segment after n / 256 segments of one item), DeviceSegmentedReduce::Max over both, ArgMin and ArgMax over the 1000-item segments,
// and DeviceScan::InclusiveSumByKey / ExclusiveSumByKey over u32 keys whose runs are those of the run-length rows. The figures count the n values read (with the offsets or keys) and
// the values written.
template <class T>
void measure_segments(const char* type, size_t n) {
    std::vector<T> host(n);
    std::vector<uint32_t> keys(n);
    uint32_t k = 0;
    for (size_t i = 0; i < n; ++i) {
        host[i] = pattern((T*)nullptr, i);
        if (i > 0 && (bench_hash(i) & 15) != 0) ++k;
        keys[i] = k;
    }
    T *in, *out, *copy;
    uint32_t* d_keys;
    CHECK(cudaMalloc(&in, n * sizeof(T)));
    CHECK(cudaMalloc(&out, n * sizeof(T)));
    CHECK(cudaMalloc(&copy, n * sizeof(T)));
    CHECK(cudaMalloc(&d_keys, n * sizeof(uint32_t)));
    CHECK(cudaMemcpy(in, host.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_keys, keys.data(), n * sizeof(uint32_t), cudaMemcpyHostToDevice));
    double copy_us = median_us([&] { CHECK(cudaMemcpyAsync(copy, in, n * sizeof(T), cudaMemcpyDeviceToDevice)); });
    double copy_gbps = 2.0 * n * sizeof(T) / copy_us / 1e3;
    auto row = [&](const std::string& name, double us, double bytes) {
        std::printf("cub %s,%s,%zu,%.2f,%.1f,%.2f,%.1f,%.3f\n", name.c_str(), type, n, us, bytes / us / 1e3,
                    copy_us, copy_gbps, us / copy_us);
    };
    double s = sizeof(T);
    std::vector<std::pair<std::string, std::vector<uint64_t>>> layouts(2);
    layouts[0].first = "1000-item segments";
    for (size_t o = 0; o < n; o += 1000) layouts[0].second.push_back(o);
    layouts[0].second.push_back(n);
    layouts[1].first = "uneven segments";
    for (size_t o = 0; o <= n / 256; ++o) layouts[1].second.push_back(o);
    layouts[1].second.push_back(n);
    for (auto& [layout, offsets] : layouts) {
        uint64_t* d_offsets;
        CHECK(cudaMalloc(&d_offsets, offsets.size() * sizeof(uint64_t)));
        CHECK(cudaMemcpy(d_offsets, offsets.data(), offsets.size() * sizeof(uint64_t), cudaMemcpyHostToDevice));
        int64_t segments = int64_t(offsets.size()) - 1;
        void* temp = nullptr;
        size_t temp_bytes = 0;
        CHECK(cub::DeviceSegmentedReduce::Sum(temp, temp_bytes, in, out, segments, d_offsets, d_offsets + 1));
        CHECK(cudaMalloc(&temp, temp_bytes));
        double us = median_us([&] {
            CHECK(cub::DeviceSegmentedReduce::Sum(temp, temp_bytes, in, out, segments, d_offsets, d_offsets + 1));
        });
        row("segmented_reduce sum, " + layout, us, n * s + 8.0 * offsets.size() + segments * s);
        CHECK(cudaFree(temp));
        temp = nullptr;
        temp_bytes = 0;
        CHECK(cub::DeviceSegmentedReduce::Max(temp, temp_bytes, in, out, segments, d_offsets, d_offsets + 1));
        CHECK(cudaMalloc(&temp, temp_bytes));
        us = median_us([&] {
            CHECK(cub::DeviceSegmentedReduce::Max(temp, temp_bytes, in, out, segments, d_offsets, d_offsets + 1));
        });
        row("segmented_reduce max, " + layout, us, n * s + 8.0 * offsets.size() + segments * s);
        CHECK(cudaFree(temp));
        CHECK(cudaFree(d_offsets));
    }
    {
        // ArgMin over the 1000-item segments: a (index within the segment, value) pair per segment.
        auto& offsets = layouts[0].second;
        uint64_t* d_offsets;
        CHECK(cudaMalloc(&d_offsets, offsets.size() * sizeof(uint64_t)));
        CHECK(cudaMemcpy(d_offsets, offsets.data(), offsets.size() * sizeof(uint64_t), cudaMemcpyHostToDevice));
        int64_t segments = int64_t(offsets.size()) - 1;
        cub::KeyValuePair<int, T>* pairs;
        CHECK(cudaMalloc(&pairs, segments * sizeof(*pairs)));
        void* temp = nullptr;
        size_t temp_bytes = 0;
        size_t argmax_bytes = 0;
        CHECK(cub::DeviceSegmentedReduce::ArgMin(temp, temp_bytes, in, pairs, segments, d_offsets, d_offsets + 1));
        CHECK(cub::DeviceSegmentedReduce::ArgMax(temp, argmax_bytes, in, pairs, segments, d_offsets, d_offsets + 1));
        temp_bytes = std::max(temp_bytes, argmax_bytes);
        CHECK(cudaMalloc(&temp, temp_bytes));
        double us = median_us([&] {
            CHECK(cub::DeviceSegmentedReduce::ArgMin(temp, temp_bytes, in, pairs, segments, d_offsets, d_offsets + 1));
        });
        row("segmented_argmin, 1000-item segments", us, n * s + 8.0 * offsets.size() + segments * (s + 4));
        us = median_us([&] {
            CHECK(cub::DeviceSegmentedReduce::ArgMax(temp, temp_bytes, in, pairs, segments, d_offsets, d_offsets + 1));
        });
        row("segmented_argmax, 1000-item segments", us, n * s + 8.0 * offsets.size() + segments * (s + 4));
        for (void* p : {(void*)temp, (void*)pairs, (void*)d_offsets}) CHECK(cudaFree(p));
    }
    void* temp = nullptr;
    size_t temp_bytes = 0;
    int num_items = int(n);  // n is at most 2^28 here
    size_t exclusive_bytes = 0;
    CHECK(cub::DeviceScan::InclusiveSumByKey(temp, temp_bytes, d_keys, in, out, num_items));
    CHECK(cub::DeviceScan::ExclusiveSumByKey(temp, exclusive_bytes, d_keys, in, out, num_items));
    temp_bytes = std::max(temp_bytes, exclusive_bytes);
    CHECK(cudaMalloc(&temp, temp_bytes));
    double us = median_us([&] { CHECK(cub::DeviceScan::InclusiveSumByKey(temp, temp_bytes, d_keys, in, out, num_items)); });
    row("inclusive_scan_by_key sum", us, n * (4 + 2 * s));
    us = median_us([&] { CHECK(cub::DeviceScan::ExclusiveSumByKey(temp, temp_bytes, d_keys, in, out, num_items)); });
    row("exclusive_scan_by_key sum", us, n * (4 + 2 * s));
    std::fflush(stdout);
    for (void* p : {(void*)temp, (void*)in, (void*)out, (void*)copy, (void*)d_keys}) CHECK(cudaFree(p));
}

// The issue-12 rows: histograms, run-length encodings, segmented sums, f32 and u32 at 2^20, 2^24, 2^28.
void measure_issue12() {
    for (int log2 : {20, 24, 28}) measure_histogram<float>("f32", size_t(1) << log2);
    for (int log2 : {20, 24, 28}) measure_histogram<uint32_t>("u32", size_t(1) << log2);
    for (int log2 : {20, 24, 28}) measure_rle<float>("f32", size_t(1) << log2);
    for (int log2 : {20, 24, 28}) measure_rle<uint32_t>("u32", size_t(1) << log2);
    for (int log2 : {20, 24, 28}) measure_segments<float>("f32", size_t(1) << log2);
    for (int log2 : {20, 24, 28}) measure_segments<uint32_t>("u32", size_t(1) << log2);
}

// Keys of the sorts: u32 the benchmark's hash (uniform and, as the hash is a bijection, distinct below 2^32),
// u64 two hashes (of 2i and 2i + 1), f32 finite floats with uniform bit patterns (an all-ones exponent loses
// its lowest bit, so no infinity or NaN; both signs, zeros and subnormals occur).
uint32_t random_key(uint32_t*, size_t i) { return bench_hash(i); }
uint64_t random_key(uint64_t*, size_t i) { return uint64_t(bench_hash(2 * i)) << 32 | bench_hash(2 * i + 1); }
float random_key(float*, size_t i) {
    uint32_t bits = bench_hash(i);
    if ((bits & 0x7F800000u) == 0x7F800000u) bits &= ~0x00800000u;
    float f;
    std::memcpy(&f, &bits, sizeof(f));
    return f;
}

// The bit pattern of a key, widened to 64 bits.
template <class K>
uint64_t key_bits(K key) {
    uint64_t bits = 0;
    std::memcpy(&bits, &key, sizeof(K));
    return bits;
}

// A multiset fingerprint of keys: the sum of a 64-bit mix (splitmix64's finalizer) of each key's bits, so a
// sort that drops, duplicates or alters a key changes it (almost surely) while any permutation keeps it.
template <class K>
uint64_t fingerprint(const K* keys, size_t n) {
    uint64_t sum = 0;
    for (size_t i = 0; i < n; ++i) {
        uint64_t x = key_bits(keys[i]) + 0x9E3779B97F4A7C15ull;
        x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
        x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
        sum += x ^ (x >> 31);
    }
    return sum;
}

// The index of the first key of keys[0..n) below its predecessor, or n when they are non-decreasing (floats
// compared with <, so -0.0 and +0.0 are equal here).
template <class K>
size_t first_unsorted(const K* keys, size_t n) {
    for (size_t i = 1; i < n; ++i)
        if (keys[i] < keys[i - 1]) return i;
    return n;
}

int sort_failures = 0;  // FAIL lines printed (sorts, by-key, top-k): main returns 1 when there is any

// A FAIL line for the sort row `row` (its algorithm, type and n, as in the CSV row).
void sort_fail(const std::string& row, const std::string& what) {
    std::printf("FAIL %s: %s\n", row.c_str(), what.c_str());
    std::fflush(stdout);
    ++sort_failures;
}

// One sort row: the eight columns of every row, then the keys sorted per second / 1e9.
void sort_row(const std::string& name, const char* type, size_t n, double us, double bytes, double copy_us,
              double copy_gbps) {
    std::printf("cub %s,%s,%zu,%.2f,%.1f,%.2f,%.1f,%.3f,%.3f\n", name.c_str(), type, n, us, bytes / us / 1e3, copy_us,
                copy_gbps, us / copy_us, n / us / 1e3);
    std::fflush(stdout);
}

// DeviceRadixSort::SortKeys of n random keys (random_key) over all their bits, and with kPairs
// DeviceRadixSort::SortPairs with values of V, u32 or u64 (each key's input index). Both run out of place, as CUB's docs
// show: the input is never written, so every timed call sorts the same unsorted keys and nothing needs
// copying back between calls (CUB keeps its alternate buffer in the temporary storage, which is allocated
// once outside the timing). The figures count one read and one write of every key (and value), whatever the
// number of digit passes: bytes = n * (key bytes + value bytes) * 2. The copy moves the same n * (key bytes +
// value bytes) (keys and values lie in one allocation), its GB/s counting read and write like every row's.
// The result of the last timed call is checked once afterwards: keys non-decreasing with the input's
// fingerprint, and for pairs every value the input index of a key equal (bit for bit) to the one beside it.
template <class K, bool kPairs, class V = uint32_t>
void measure_radix_sort(const char* type, size_t n) {
    const size_t key_bytes = n * sizeof(K), value_bytes = kPairs ? n * sizeof(V) : 0;
    std::vector<K> host(n);
    for (size_t i = 0; i < n; ++i) host[i] = random_key((K*)nullptr, i);
    std::vector<V> host_values(kPairs ? n : 0);
    for (size_t i = 0; i < host_values.size(); ++i) host_values[i] = V(i);
    char *in, *out, *copy;  // keys, then (for pairs) values
    CHECK(cudaMalloc(&in, key_bytes + value_bytes));
    CHECK(cudaMalloc(&out, key_bytes + value_bytes));
    CHECK(cudaMalloc(&copy, key_bytes + value_bytes));
    K* keys_in = reinterpret_cast<K*>(in);
    K* keys_out = reinterpret_cast<K*>(out);
    V* values_in = reinterpret_cast<V*>(in + key_bytes);
    V* values_out = reinterpret_cast<V*>(out + key_bytes);
    CHECK(cudaMemcpy(keys_in, host.data(), key_bytes, cudaMemcpyHostToDevice));
    if (kPairs) CHECK(cudaMemcpy(values_in, host_values.data(), value_bytes, cudaMemcpyHostToDevice));
    double copy_us =
        median_us([&] { CHECK(cudaMemcpyAsync(copy, in, key_bytes + value_bytes, cudaMemcpyDeviceToDevice)); });
    double copy_gbps = 2.0 * (key_bytes + value_bytes) / copy_us / 1e3;
    int num_items = int(n);  // 32-bit offsets inside CUB; n is at most 2^28 here
    void* temp = nullptr;    // a void* (not a bare nullptr) so only the temp-storage overloads match
    size_t temp_bytes = 0;
    auto sort = [&] {
        if constexpr (kPairs) {
            CHECK(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys_in, keys_out, values_in, values_out,
                                                  num_items));
        } else {
            CHECK(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, keys_in, keys_out, num_items));
        }
    };
    sort();  // temp is null: only sets temp_bytes
    CHECK(cudaMalloc(&temp, temp_bytes));
    double us = median_us(sort);
    std::string name = !kPairs ? "radix_sort_keys"
                       : sizeof(V) == 4 ? "radix_sort_pairs (u32 values)"
                                        : "radix_sort_pairs (u64 values)";
    sort_row(name, type, n, us, 2.0 * (key_bytes + value_bytes), copy_us, copy_gbps);

    std::string label = "cub " + name + "," + type + "," + std::to_string(n);
    std::vector<K> sorted(n);
    CHECK(cudaMemcpy(sorted.data(), keys_out, key_bytes, cudaMemcpyDeviceToHost));
    size_t bad = first_unsorted(sorted.data(), n);
    if (bad < n) sort_fail(label, "key " + std::to_string(bad) + " is below key " + std::to_string(bad - 1));
    if (fingerprint(sorted.data(), n) != fingerprint(host.data(), n))
        sort_fail(label, "the sorted keys are not the input keys (fingerprints differ)");
    if (kPairs) {
        std::vector<V> values(n);
        CHECK(cudaMemcpy(values.data(), values_out, value_bytes, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < n; ++i) {
            if (values[i] >= n || key_bits(host[values[i]]) != key_bits(sorted[i])) {
                sort_fail(label, "value " + std::to_string(i) + " (" + std::to_string(values[i]) +
                                     ") is not the input index of key " + std::to_string(i));
                break;
            }
        }
    }
    for (void* p : {(void*)temp, (void*)in, (void*)out, (void*)copy}) CHECK(cudaFree(p));
}

// DeviceSegmentedSort::SortKeys of `rows` rows of `cols` random finite f32 keys (random_key of the flat
// index), one segment per row: int offsets i * cols, d_offsets as the begin offsets and d_offsets + 1 as the
// end offsets (CUB's documented aliasing), out of place like the radix sorts. n = rows * cols; the same byte
// convention (n * 4 * 2) and a copy of the n * 4 key bytes. Checked once afterwards: every row non-decreasing
// with its input row's fingerprint.
void measure_segmented_sort(size_t rows, size_t cols) {
    using K = float;
    const size_t n = rows * cols, key_bytes = n * sizeof(K);
    std::vector<K> host(n);
    for (size_t i = 0; i < n; ++i) host[i] = random_key((K*)nullptr, i);
    std::vector<int> offsets(rows + 1);
    for (size_t r = 0; r <= rows; ++r) offsets[r] = int(r * cols);  // n is at most 2^28 here
    K *keys_in, *keys_out, *copy;
    int* d_offsets;
    CHECK(cudaMalloc(&keys_in, key_bytes));
    CHECK(cudaMalloc(&keys_out, key_bytes));
    CHECK(cudaMalloc(&copy, key_bytes));
    CHECK(cudaMalloc(&d_offsets, offsets.size() * sizeof(int)));
    CHECK(cudaMemcpy(keys_in, host.data(), key_bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_offsets, offsets.data(), offsets.size() * sizeof(int), cudaMemcpyHostToDevice));
    double copy_us = median_us([&] { CHECK(cudaMemcpyAsync(copy, keys_in, key_bytes, cudaMemcpyDeviceToDevice)); });
    double copy_gbps = 2.0 * key_bytes / copy_us / 1e3;
    int64_t num_items = int64_t(n), segments = int64_t(rows);
    void* temp = nullptr;  // a void* (not a bare nullptr) so only the temp-storage overloads match
    size_t temp_bytes = 0;
    auto sort = [&] {
        CHECK(cub::DeviceSegmentedSort::SortKeys(temp, temp_bytes, keys_in, keys_out, num_items, segments, d_offsets,
                                                 d_offsets + 1));
    };
    sort();  // temp is null: only sets temp_bytes
    CHECK(cudaMalloc(&temp, temp_bytes));
    double us = median_us(sort);
    std::string name = "segmented_sort_keys (" + std::to_string(rows) + " rows of " + std::to_string(cols) + ")";
    sort_row(name, "f32", n, us, 2.0 * key_bytes, copy_us, copy_gbps);

    std::string label = "cub " + name + ",f32," + std::to_string(n);
    std::vector<K> sorted(n);
    CHECK(cudaMemcpy(sorted.data(), keys_out, key_bytes, cudaMemcpyDeviceToHost));
    for (size_t r = 0; r < rows; ++r) {
        const K* row = sorted.data() + r * cols;
        size_t bad = first_unsorted(row, cols);
        if (bad < cols) {
            sort_fail(label, "row " + std::to_string(r) + ": key " + std::to_string(bad) + " is below key " +
                                 std::to_string(bad - 1));
            break;
        }
        if (fingerprint(row, cols) != fingerprint(host.data() + r * cols, cols)) {
            sort_fail(label, "row " + std::to_string(r) + ": the sorted keys are not the row's keys (fingerprints differ)");
            break;
        }
    }
    for (void* p : {(void*)temp, (void*)keys_in, (void*)keys_out, (void*)copy, (void*)d_offsets}) CHECK(cudaFree(p));
}

// The sort rows: radix sort of u32 keys and of u32 keys with u32 values at 2^20, 2^24, 2^28, of f32 and of u64
// keys at 2^28, and the segmented sort of 65536 rows of 4096 f32 (2^28 keys).
void measure_sort() {
    for (int log2 : {20, 24, 28}) measure_radix_sort<uint32_t, false>("u32", size_t(1) << log2);
    for (int log2 : {20, 24, 28}) measure_radix_sort<uint32_t, true>("u32", size_t(1) << log2);
    measure_radix_sort<float, false>("f32", size_t(1) << 28);
    measure_radix_sort<uint64_t, false>("u64", size_t(1) << 28);
    measure_segmented_sort(65536, 4096);
}

// The values of the by-key rows: uniform in [0, 1) (the top 24 bits of the benchmark's hash, as `uniform` makes
// them) of i | 2^31, an index range the run lengths' hashes (of run numbers below 2^31) never reach; the same
// on every run.
float by_key_value(size_t i) { return unit(bench_hash(i | size_t(1) << 31)); }

// DeviceReduce::ReduceByKey (cuda::std::plus<> and cuda::minimum<>) and DeviceSelect::UniqueByKey of n u32 keys
// and f32 values, the keys in runs of 1 to 15 (1 + hash(run) % 15, 8 on average; the last run cut at n) whose key
// is the run's number, as `gpu-primitives bench`'s "runs of 8" rows: int num_items, an unsigned long long count.
// The figures count the n keys and values read, a key and a value written per run and the 8-byte count:
// bytes = n * (4 + 4) + runs * (4 + 4) + 8. The copy columns are the copy of the n values (n * 4 bytes, as the
// bench's copy column); a row "copy" is the copy of the n keys and values (n * 8 bytes, one call; its GB/s counts
// read and write). Each result is checked once after its timing: the run count, the unique keys (0, 1, ...), the
// sums within 1e-3 relative of the host's (in double), the minima and the unique values (each run's first)
// exactly. Returns after printing a FAIL line for every result that does not check, or "check ok".
void measure_by_key(size_t n) {
    const char* type = "u32 f32";
    std::vector<uint32_t> keys(n);
    std::vector<float> values(n);
    std::vector<size_t> starts;  // every run's first index, then n
    for (size_t i = 0; i < n;) {
        uint32_t run = uint32_t(starts.size());
        starts.push_back(i);
        size_t len = std::min<size_t>(1 + bench_hash(run) % 15, n - i);
        for (size_t j = 0; j < len; ++j) keys[i++] = run;
    }
    const size_t runs = starts.size();
    starts.push_back(n);
    for (size_t i = 0; i < n; ++i) values[i] = by_key_value(i);
    char *in, *copy;  // the keys, then the values (one allocation: the copy row moves both in one call)
    uint32_t* unique_keys;
    float* out;
    unsigned long long* count;
    CHECK(cudaMalloc(&in, n * 8));
    CHECK(cudaMalloc(&copy, n * 8));
    CHECK(cudaMalloc(&unique_keys, n * sizeof(uint32_t)));
    CHECK(cudaMalloc(&out, n * sizeof(float)));
    CHECK(cudaMalloc(&count, sizeof(*count)));
    uint32_t* d_keys = reinterpret_cast<uint32_t*>(in);
    float* d_values = reinterpret_cast<float*>(in + n * sizeof(uint32_t));
    CHECK(cudaMemcpy(d_keys, keys.data(), n * sizeof(uint32_t), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_values, values.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    double copy_us = median_us([&] { CHECK(cudaMemcpyAsync(copy, d_values, n * 4, cudaMemcpyDeviceToDevice)); });
    double copy_gbps = 2.0 * n * 4 / copy_us / 1e3;
    double pair_copy_us = median_us([&] { CHECK(cudaMemcpyAsync(copy, in, n * 8, cudaMemcpyDeviceToDevice)); });
    int num_items = int(n);  // n is at most 2^30 here
    void* temp = nullptr;    // a void* (not a bare nullptr) so only the temp-storage overloads match
    auto sum = [&](size_t& bytes) {
        CHECK(cub::DeviceReduce::ReduceByKey(temp, bytes, d_keys, unique_keys, d_values, out, count,
                                             cuda::std::plus<>{}, num_items));
    };
    auto min = [&](size_t& bytes) {
        CHECK(cub::DeviceReduce::ReduceByKey(temp, bytes, d_keys, unique_keys, d_values, out, count,
                                             cuda::minimum<>{}, num_items));
    };
    auto unique = [&](size_t& bytes) {
        CHECK(cub::DeviceSelect::UniqueByKey(temp, bytes, d_keys, d_values, unique_keys, out, count, num_items));
    };
    size_t b1 = 0, b2 = 0, b3 = 0;
    sum(b1);  // temp is null: these only set the sizes
    min(b2);
    unique(b3);
    size_t temp_bytes = std::max(std::max(b1, b2), b3);
    CHECK(cudaMalloc(&temp, temp_bytes));
    auto row = [&](const char* name, double us, double bytes) {
        std::printf("cub %s,%s,%zu,%.2f,%.1f,%.2f,%.1f,%.3f\n", name, type, n, us, bytes / us / 1e3, copy_us,
                    copy_gbps, us / copy_us);
        std::fflush(stdout);
    };
    const double bytes = double(n) * (4 + 4) + double(runs) * (4 + 4) + 8;
    const int failures = sort_failures;
    std::vector<uint32_t> got_keys(runs);
    std::vector<float> got(runs);
    // The result of the row `name`: false (after a FAIL line) when the run count or a unique key is wrong.
    auto download = [&](const char* name) {
        std::string label = std::string("cub ") + name + "," + type + "," + std::to_string(n);
        unsigned long long found = 0;
        CHECK(cudaMemcpy(&found, count, sizeof(found), cudaMemcpyDeviceToHost));
        if (found != runs) {
            sort_fail(label, std::to_string(found) + " runs, expected " + std::to_string(runs));
            return false;
        }
        CHECK(cudaMemcpy(got_keys.data(), unique_keys, runs * sizeof(uint32_t), cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(got.data(), out, runs * sizeof(float), cudaMemcpyDeviceToHost));
        for (size_t r = 0; r < runs; ++r) {
            if (got_keys[r] != uint32_t(r)) {
                sort_fail(label, "unique key " + std::to_string(r) + " is " + std::to_string(got_keys[r]));
                return false;
            }
        }
        return true;
    };
    // A FAIL line for run r of the row `name` when `bad`: its value and the host's.
    auto check_run = [&](const char* name, size_t r, bool bad, double expected) {
        if (bad) {
            sort_fail(std::string("cub ") + name + "," + type + "," + std::to_string(n),
                      "run " + std::to_string(r) + " (items " + std::to_string(starts[r]) + ".." +
                          std::to_string(starts[r + 1]) + "): " + std::to_string(got[r]) + ", expected " +
                          std::to_string(expected));
        }
        return !bad;
    };

    const char* name = "reduce_by_key u32 f32 sum";
    double us = median_us([&] { sum(temp_bytes); });
    row(name, us, bytes);
    if (download(name)) {
        for (size_t r = 0; r < runs; ++r) {
            double s = 0;
            for (size_t i = starts[r]; i < starts[r + 1]; ++i) s += values[i];
            if (!check_run(name, r, std::abs(double(got[r]) - s) > 1e-3 * std::abs(s), s)) break;
        }
    }
    name = "reduce_by_key u32 f32 min";
    us = median_us([&] { min(temp_bytes); });
    row(name, us, bytes);
    if (download(name)) {
        for (size_t r = 0; r < runs; ++r) {
            float m = values[starts[r]];
            for (size_t i = starts[r] + 1; i < starts[r + 1]; ++i) m = std::min(m, values[i]);
            if (!check_run(name, r, got[r] != m, m)) break;
        }
    }
    name = "unique_by_key u32 f32";
    us = median_us([&] { unique(temp_bytes); });
    row(name, us, bytes);
    if (download(name)) {
        for (size_t r = 0; r < runs; ++r) {
            float first = values[starts[r]];
            if (!check_run(name, r, got[r] != first, first)) break;
        }
    }
    std::printf("copy,%s,%zu,%.2f,%.1f,%.2f,%.1f,%.3f\n", type, n, pair_copy_us, 2.0 * n * 8 / pair_copy_us / 1e3,
                copy_us, copy_gbps, pair_copy_us / copy_us);
    if (sort_failures == failures)
        std::printf("check ok: reduce_by_key sum and min, unique_by_key: %zu runs of %zu items\n", runs, n);
    std::fflush(stdout);
    for (void* p : {(void*)temp, (void*)in, (void*)copy, (void*)unique_keys, (void*)out, (void*)count})
        CHECK(cudaFree(p));
}

#if HAVE_DEVICE_TOPK
// DeviceTopK::MaxPairs of n f32 keys uniform in [0, 1) (`uniform` of the benchmark's hash, the keys of `gpu-primitives
// bench`'s top_k_of_all rows): the k largest keys with their u32 indices (a cuda::counting_iterator as the values),
// for k = 2^10 and 2^20 (at most n), in CUB's only supported mode (not deterministic, unsorted output; the
// requirements passed as the env). int num_items and k; temporary storage for the larger k allocated once. The
// figures count one read of the keys: bytes = n * 4; the copy columns are the copy of the n keys. Each result is
// checked once after its timing: the indices below n and distinct, every key the input key at its index, and the
// keys (sorted on the host) the k largest of the input.
void measure_top_k(size_t n) {
    const char* type = "f32";
    std::vector<float> host(n);
    for (size_t i = 0; i < n; ++i) host[i] = uniform((float*)nullptr, bench_hash(i));
    const size_t ks[] = {std::min<size_t>(size_t(1) << 10, n), std::min<size_t>(size_t(1) << 20, n)};
    const size_t most = ks[1];
    // The `most` largest keys, in decreasing order.
    std::vector<float> largest(host);
    std::nth_element(largest.begin(), largest.begin() + (most - 1), largest.end(), std::greater<float>());
    largest.resize(most);
    std::sort(largest.begin(), largest.end(), std::greater<float>());
    float *in, *copy, *keys_out;
    uint32_t* indices_out;
    CHECK(cudaMalloc(&in, n * sizeof(float)));
    CHECK(cudaMalloc(&copy, n * sizeof(float)));
    CHECK(cudaMalloc(&keys_out, most * sizeof(float)));
    CHECK(cudaMalloc(&indices_out, most * sizeof(uint32_t)));
    CHECK(cudaMemcpy(in, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    double copy_us = median_us([&] { CHECK(cudaMemcpyAsync(copy, in, n * sizeof(float), cudaMemcpyDeviceToDevice)); });
    double copy_gbps = 2.0 * n * sizeof(float) / copy_us / 1e3;
    auto indices = cuda::make_counting_iterator(uint32_t{0});
    auto requirements = cuda::execution::require(cuda::execution::determinism::not_guaranteed,
                                                 cuda::execution::output_ordering::unsorted);
    int num_items = int(n);  // n is at most 2^30 here
    void* temp = nullptr;    // a void* (not a bare nullptr) so only the temp-storage overloads match
    auto top_k = [&](size_t& bytes, int k) {
        CHECK(cub::DeviceTopK::MaxPairs(temp, bytes, in, keys_out, indices, indices_out, num_items, k, requirements));
    };
    size_t temp_bytes = 0;
    for (size_t k : ks) {
        size_t b = 0;
        top_k(b, int(k));  // temp is null: only sets b
        temp_bytes = std::max(temp_bytes, b);
    }
    CHECK(cudaMalloc(&temp, std::max<size_t>(temp_bytes, 1)));
    const int failures = sort_failures;
    for (size_t k : ks) {
        std::string name = "top_k_of_all f32 k=" + std::to_string(k);
        double us = median_us([&] { top_k(temp_bytes, int(k)); });
        std::printf("cub %s,%s,%zu,%.2f,%.1f,%.2f,%.1f,%.3f\n", name.c_str(), type, n, us, n * 4.0 / us / 1e3, copy_us,
                    copy_gbps, us / copy_us);
        std::fflush(stdout);

        std::string label = "cub " + name + "," + type + "," + std::to_string(n);
        std::vector<float> got(k);
        std::vector<uint32_t> at(k);
        CHECK(cudaMemcpy(got.data(), keys_out, k * sizeof(float), cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(at.data(), indices_out, k * sizeof(uint32_t), cudaMemcpyDeviceToHost));
        bool ok = true;
        for (size_t i = 0; i < k && ok; ++i) {
            if (at[i] >= n) {
                sort_fail(label, "index " + std::to_string(i) + " is " + std::to_string(at[i]) + ", not below n");
                ok = false;
            } else if (host[at[i]] != got[i]) {
                sort_fail(label, "key " + std::to_string(i) + " (" + std::to_string(got[i]) + ") is not the input key " +
                                     std::to_string(host[at[i]]) + " at its index " + std::to_string(at[i]));
                ok = false;
            }
        }
        std::sort(at.begin(), at.end());
        for (size_t i = 1; i < k && ok; ++i) {
            if (at[i] == at[i - 1]) {
                sort_fail(label, "index " + std::to_string(at[i]) + " is given twice");
                ok = false;
            }
        }
        std::sort(got.begin(), got.end(), std::greater<float>());
        for (size_t i = 0; i < k && ok; ++i) {
            if (got[i] != largest[i]) {
                sort_fail(label, "the " + std::to_string(i) + "-th largest key found is " + std::to_string(got[i]) +
                                     ", the input's is " + std::to_string(largest[i]));
                ok = false;
            }
        }
    }
    if (sort_failures == failures)
        std::printf("check ok: top_k_of_all k=%zu and k=%zu of %zu keys\n", ks[0], ks[1], n);
    std::fflush(stdout);
    for (void* p : {(void*)temp, (void*)in, (void*)copy, (void*)keys_out, (void*)indices_out}) CHECK(cudaFree(p));
}
#endif


// With "compaction", only the compaction rows (f32 and u32 at 2^20, 2^24, 2^28; "compaction 28": f32 at
// 2^28 only, for ncu); with "issue12", only the
// histogram, run-length-encoding and segment rows (the same types and sizes); with "segments", only the
// segment rows ("segments 28": f32 at 2^28 only, for ncu); with "sort", only the sort rows (measure_sort); with a number, only f32 reduce and
// scan at n = 2^number (for profiling one size with ncu). The default run and "sort" exit with status 1 when a
// sort printed a FAIL line. With "by-key [log2]", only the reduce / unique by key rows and the copy row at
// n = 2^log2 (28 when not given; measure_by_key); with "top-k [log2]", only the top_k_of_all rows at n = 2^log2
// (28 when not given; measure_top_k), or one line saying this CCCL has no cub::DeviceTopK (status 0). Both exit
// with status 1 when a result did not check (a FAIL line), and print "check ok: ..." when all did.
int main(int argc, char** argv) {
    if (argc > 1 && (std::string(argv[1]) == "by-key" || std::string(argv[1]) == "top-k")) {
        int log2 = argc > 2 ? std::atoi(argv[2]) : 28;
        if (log2 < 1 || log2 > 30) {  // int num_items inside CUB, and at most 2^30 for these modes
            std::fprintf(stderr, "%s: log2 n must be 1 to 30, not %s\n", argv[1], argv[2]);
            return 2;
        }
        if (std::string(argv[1]) == "by-key") {
            std::printf("algorithm,type,n,time_us,gbps,copy_us,copy_gbps,ratio\n");
            measure_by_key(size_t(1) << log2);
            return sort_failures > 0 ? 1 : 0;
        }
#if HAVE_DEVICE_TOPK
        std::printf("algorithm,type,n,time_us,gbps,copy_us,copy_gbps,ratio\n");
        measure_top_k(size_t(1) << log2);
        return sort_failures > 0 ? 1 : 0;
#else
        std::printf("top-k: cub::DeviceTopK is not available in this CCCL (CUB_VERSION %d; it first ships in CCCL "
                    "3.2.0, cub/device/device_topk.cuh; CUDA 13.0 has CCCL 3.0)\n",
                    CUB_VERSION);
        return 0;
#endif
    }
    if (argc > 1 && std::string(argv[1]) == "compaction") {
        std::printf("algorithm,type,n,time_us,gbps,copy_us,copy_gbps,ratio\n");
        if (argc > 2) {
            measure_compaction<float>("f32", size_t(1) << std::atoi(argv[2]));
            return 0;
        }
        for (int log2 : {20, 24, 28}) measure_compaction<float>("f32", size_t(1) << log2);
        for (int log2 : {20, 24, 28}) measure_compaction<uint32_t>("u32", size_t(1) << log2);
        return 0;
    }
    if (argc > 1 && std::string(argv[1]) == "segments") {
        std::printf("algorithm,type,n,time_us,gbps,copy_us,copy_gbps,ratio\n");
        if (argc > 2) {
            measure_segments<float>("f32", size_t(1) << std::atoi(argv[2]));
            return 0;
        }
        for (int log2 : {20, 24, 28}) measure_segments<float>("f32", size_t(1) << log2);
        for (int log2 : {20, 24, 28}) measure_segments<uint32_t>("u32", size_t(1) << log2);
        return 0;
    }
    if (argc > 1 && std::string(argv[1]) == "issue12") {
        std::printf("algorithm,type,n,time_us,gbps,copy_us,copy_gbps,ratio\n");
        measure_issue12();
        return 0;
    }
    if (argc > 1 && std::string(argv[1]) == "sort-values") {
        std::printf("algorithm,type,n,time_us,gbps,copy_us,copy_gbps,ratio,gkeys_per_s\n");
        for (int log2 : {20, 24, 28}) measure_radix_sort<uint64_t, true>("u64", size_t(1) << log2);
        for (int log2 : {20, 24, 28}) measure_radix_sort<uint64_t, true, uint64_t>("u64", size_t(1) << log2);
        for (int log2 : {24, 28}) measure_radix_sort<uint32_t, true, uint64_t>("u32", size_t(1) << log2);
        return sort_failures > 0 ? 1 : 0;
    }
    if (argc > 1 && std::string(argv[1]) == "sort") {
        std::printf("algorithm,type,n,time_us,gbps,copy_us,copy_gbps,ratio,gkeys_per_s\n");
        measure_sort();
        return sort_failures > 0 ? 1 : 0;
    }
    if (argc > 1 && std::string(argv[1]) == "wide") {
        std::printf("algorithm,type,n,time_us,gbps,copy_us,copy_gbps,ratio\n");
        measure<double>("f64", size_t(1) << 28);
        measure<int64_t>("i64", size_t(1) << 28);
        measure<uint64_t>("u64", size_t(1) << 28);
        return 0;
    }
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
    for (int log2 : {20, 24, 28}) measure_compaction<float>("f32", size_t(1) << log2);
    for (int log2 : {20, 24, 28}) measure_compaction<uint32_t>("u32", size_t(1) << log2);
    measure_issue12();
    std::printf("# sort rows: algorithm,type,n,time_us,gbps,copy_us,copy_gbps,ratio,gkeys_per_s\n");
    measure_sort();
    return sort_failures > 0 ? 1 : 0;
}
