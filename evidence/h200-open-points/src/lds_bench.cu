// lds_bench.cu -- shared-memory wavefronts per LDS of a known pattern
// (issue 22, B).
//
// Each kernel ldsKernel<W, P> has every lane of every warp issue
// kIters * kUnroll shared loads of W bytes (W = 4, 8, 16: LDS, LDS.64,
// LDS.128) from one fixed address, unit index pattern(P, lane) * W bytes
// into a 32 KiB buffer (ld.volatile.shared in asm volatile: plain
// ld.shared of one address was merged by ptxas into one LDS). Under ncu,
//   l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum /
//   smsp__sass_inst_executed_op_shared_ld.sum
// is the wavefronts per instruction of that pattern. Without ncu the program
// still prints clock64 cycles per load per SM (16 warps/block, one block per
// SM, all warps loading): with the shared pipe the bottleneck, that is
// roughly wavefronts per instruction too.
//
// Patterns (unit = W bytes; 128 B = one row of the 32 banks):
//  0 consec      lane               (W=16: 512 B, 32 distinct)
//  1 bcast       0
//  2 m8          lane % 8           (each quarter-warp all 8: blocked B)
//  3 d4          lane / 4           (quarter q reads 2q, 2q+1)
//  4 strided8    (lane%4)*2+lane/16 (8 distinct, 4 per quarter)
//  5 m4          lane % 4           (z-lanes B, LC=4)
//  6 d8          lane / 8           (1 per quarter: blocked A)
//  7 m2          lane % 2
//  8 d16         lane / 16
//  9 m16         lane % 16          (lesson 4x4 B)
// 10 d2          lane / 2           (16 distinct, pairs)
// 11 l4x4A       (lane/16)*16       (lesson 4x4 A: 2 rows 256 B apart)
// 12 zA4         2*(q/2) + w/4      (z-lanes A, LR=4; q=lane/8, w=lane%8)
// 13 zB8         4*(q%2) + w%4      (z-lanes B, LC=8)
// 14 zA8         2*q + w/4          (z-lanes A, LR=8)
// 15 stride2     lane * 2           (W=16: 1 KiB, 2-way per bank)
// 16 stride8     lane * 8           (W=16: 32 rows, same banks)
// 17 m8perm      (lane%8)^(lane/8)  (m8, permuted per quarter)
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

constexpr int kPatterns = 18;
constexpr int kIters = 256;
constexpr int kUnroll = 16;
constexpr int kThreads = 512;
constexpr int kBufBytes = 32 * 1024;

static const char* kNames[kPatterns] = {
    "consec", "bcast",   "m8",    "d4",     "strided8", "m4",
    "d8",     "m2",      "d16",   "m16",    "d2",       "l4x4A",
    "zA4",    "zB8",     "zA8",   "stride2", "stride8", "m8perm"};

__host__ __device__ constexpr int pattern(int p, int lane)
{
    const int q = lane / 8, w = lane % 8;
    switch (p) {
    case 0: return lane;
    case 1: return 0;
    case 2: return lane % 8;
    case 3: return lane / 4;
    case 4: return (lane % 4) * 2 + lane / 16;
    case 5: return lane % 4;
    case 6: return lane / 8;
    case 7: return lane % 2;
    case 8: return lane / 16;
    case 9: return lane % 16;
    case 10: return lane / 2;
    case 11: return (lane / 16) * 16;
    case 12: return 2 * (q / 2) + w / 4;
    case 13: return 4 * (q % 2) + w % 4;
    case 14: return 2 * q + w / 4;
    case 15: return lane * 2;
    case 16: return lane * 8;
    default: return (lane % 8) ^ (lane / 8);
    }
}

template <int W>
__device__ __forceinline__ void ld(unsigned addr, float4& acc)
{
    if (W == 16) {
        float x, y, z, w;
        asm volatile("ld.volatile.shared.v4.f32 {%0,%1,%2,%3}, [%4];\n"
                     : "=f"(x), "=f"(y), "=f"(z), "=f"(w)
                     : "r"(addr));
        acc.x += x;
        acc.y += y;
        acc.z += z;
        acc.w += w;
    } else if (W == 8) {
        float x, y;
        asm volatile("ld.volatile.shared.v2.f32 {%0,%1}, [%2];\n"
                     : "=f"(x), "=f"(y)
                     : "r"(addr));
        acc.x += x;
        acc.y += y;
    } else {
        float x;
        asm volatile("ld.volatile.shared.f32 %0, [%1];\n" : "=f"(x) : "r"(addr));
        acc.x += x;
    }
}

template <int W, int P>
__global__ void __launch_bounds__(kThreads)
    ldsKernel(float4* out, long long* cycles)
{
    __shared__ __align__(16) float buf[kBufBytes / 4];
    for (int i = threadIdx.x; i < kBufBytes / 4; i += blockDim.x)
        buf[i] = static_cast<float>(i & 7);
    __syncthreads();
    const int lane = threadIdx.x % 32;
    const unsigned base =
        static_cast<unsigned>(__cvta_generic_to_shared(buf));
    const unsigned addr = base + pattern(P, lane) * W;
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
    __syncthreads();
    const long long t0 = clock64();
    for (int it = 0; it < kIters; ++it) {
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
            ld<W>(addr, acc);
    }
    __syncthreads();
    const long long t1 = clock64();
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
    if (threadIdx.x == 0)
        cycles[blockIdx.x] = t1 - t0;
}

struct Entry {
    int w, p;
    void (*fn)(float4*, long long*);
};

template <int W, int P>
static void addAll(Entry* e, int& n)
{
    e[n++] = Entry{W, P, ldsKernel<W, P>};
    if constexpr (P + 1 < kPatterns)
        addAll<W, P + 1>(e, n);
}

static int gcheck(cudaError_t e, const char* what)
{
    if (e != cudaSuccess) {
        std::fprintf(stderr, "CUDA error %s: %s\n", cudaGetErrorName(e),
                     what);
        return 1;
    }
    return 0;
}

int main(int argc, char** argv)
{
    Entry table[3 * kPatterns];
    int n = 0;
    addAll<16, 0>(table, n);
    addAll<8, 0>(table, n);
    addAll<4, 0>(table, n);
    int onlyW = 0;
    bool dry = false;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--dry"))
            dry = true;
        else if (!std::strcmp(argv[i], "--width") && i + 1 < argc)
            onlyW = std::atoi(argv[++i]);
        else {
            std::fprintf(stderr, "usage: %s [--width 4|8|16] [--dry]\n",
                         argv[0]);
            return 2;
        }
    }
    // Pattern table: distinct units per quarter-warp and per warp.
    std::printf("launch,width,pattern,name,distinct_warp,distinct_q0,"
                "distinct_q1,distinct_q2,distinct_q3,bytes_warp\n");
    int launch = 0;
    for (int i = 0; i < n; ++i) {
        const Entry& e = table[i];
        if (onlyW && e.w != onlyW)
            continue;
        int dq[4] = {0, 0, 0, 0}, dw = 0;
        for (int l = 0; l < 32; ++l) {
            bool seenW = false, seenQ = false;
            for (int m = 0; m < l; ++m)
                if (pattern(e.p, m) == pattern(e.p, l)) {
                    seenW = true;
                    if (m / 8 == l / 8)
                        seenQ = true;
                }
            dw += !seenW;
            dq[l / 8] += !seenQ;
        }
        std::printf("%d,%d,%d,%s,%d,%d,%d,%d,%d,%d\n", launch++, e.w, e.p,
                    kNames[e.p], dw, dq[0], dq[1], dq[2], dq[3], dw * e.w);
    }
    if (dry)
        return 0;
    int sms = 0;
    if (gcheck(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount,
                                      0),
               "attr"))
        return 3;
    const int blocks = sms;
    float4* out = nullptr;
    long long* cyc = nullptr;
    if (gcheck(cudaMalloc(&out, sizeof(float4) * blocks * kThreads), "out") ||
        gcheck(cudaMalloc(&cyc, sizeof(long long) * blocks), "cyc"))
        return 3;
    long long* h = new long long[blocks];
    std::printf("\nwidth,pattern,name,cycles_per_load_per_sm\n");
    for (int i = 0; i < n; ++i) {
        const Entry& e = table[i];
        if (onlyW && e.w != onlyW)
            continue;
        e.fn<<<blocks, kThreads>>>(out, cyc);
        if (gcheck(cudaGetLastError(), "launch") ||
            gcheck(cudaDeviceSynchronize(), "sync") ||
            gcheck(cudaMemcpy(h, cyc, sizeof(long long) * blocks,
                              cudaMemcpyDeviceToHost),
                   "copy"))
            return 3;
        long long sum = 0;
        for (int b = 0; b < blocks; ++b)
            sum += h[b];
        const double loads = double(kIters) * kUnroll * (kThreads / 32);
        std::printf("%d,%d,%s,%.3f\n", e.w, e.p, kNames[e.p],
                    double(sum) / blocks / loads);
    }
    delete[] h;
    cudaFree(out);
    cudaFree(cyc);
    return 0;
}
