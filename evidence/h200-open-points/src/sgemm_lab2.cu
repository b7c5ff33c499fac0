// sgemm_lab.cu -- FP32 SIMT SGEMM candidates against cuBLAS (issue 22, A/C).
//
// C = A * B, N x N, A column-major (so a K-slice of A is k-major and
// cp.async can copy it without a transpose), B and C row-major, the layout
// of the lesson's blocked pair. cuBLAS is called on the same layout:
// cublasSgemm(N, T, n, n, n, 1, B, n, A, n, 0, C, n) (column-major C^T =
// B^T A^T), once with CUBLAS_DEFAULT_MATH and once with
// CUBLAS_PEDANTIC_MATH. Run with NVIDIA_TF32_OVERRIDE=0 (run.sh does).
//
// Every candidate is one template instance with a pipelined (cp.async.cg,
// S stages, one barrier per slice) kernel and a synchronous twin (LDG to
// registers, STS, two barriers per slice) that share the inner product, so
// their outputs must be bit-identical; both must also equal, bit for bit, a
// CPU emulation of the same FMA chain (fmaf over k ascending) at the check
// size, and lie within K*2^-24*sum|a||b| of a float64 reference.
//
// Modes: --dry (CPU only: argument parsing, reference, emulation, checker
// self-test), default (check, then time interleaved), --profile NAME (one
// launch of NAME's piped kernel and of each cuBLAS mode, for ncu).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CUDA_TRY(x)                                                         \
    do {                                                                    \
        cudaError_t e_ = (x);                                               \
        if (e_ != cudaSuccess) {                                            \
            std::fprintf(stderr, "CUDA error %s at %s:%d: %s\n",            \
                         cudaGetErrorName(e_), __FILE__, __LINE__, #x);     \
            std::exit(3);                                                   \
        }                                                                   \
    } while (0)
#define CUBLAS_TRY(x)                                                       \
    do {                                                                    \
        cublasStatus_t s_ = (x);                                            \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                  \
            std::fprintf(stderr, "cuBLAS error %d at %s:%d: %s\n", (int)s_, \
                         __FILE__, __LINE__, #x);                           \
            std::exit(3);                                                   \
        }                                                                   \
    } while (0)

constexpr double kPeakTflops = 66.9;  // 132 SM x 128 x 2 x 1.98 GHz

// ---------------------------------------------------------------- config --
// BM x BN block tile, BK-deep K-slice, TM x TN thread tile made of 4x4
// sub-tiles spaced LR*4 rows / LC*4 columns apart; a warp is LR x LC lanes
// (warp tile WM = LR*TM by WN = LC*TN); S cp.async stages; MINB blocks/SM
// for __launch_bounds__; MAP 0 = row-major lanes (lr = lane / LC),
// MAP 1 = each quarter-warp (8 lanes) is a 2 x 4 patch of the lane grid,
// MAP 2 = each group of 4 lanes (4j..4j+3) is a 2 x 2 patch (laneRC).
template <int BM_, int BN_, int BK_, int TM_, int TN_, int LR_, int LC_,
          int S_, int MINB_, int MAP_>
struct Cfg {
    static constexpr int BM = BM_, BN = BN_, BK = BK_, TM = TM_, TN = TN_;
    static constexpr int LR = LR_, LC = LC_, S = S_, MINB = MINB_;
    static constexpr int MAP = MAP_;
    static constexpr int WM = LR * TM, WN = LC * TN;
    static constexpr int WARPS_M = BM / WM, WARPS_N = BN / WN;
    static constexpr int T = WARPS_M * WARPS_N * 32;
    static constexpr int A4 = BK * BM / 4, B4 = BK * BN / 4;
    static constexpr int RA = A4 / T, RB = B4 / T;
    static constexpr int STAGE_FLOATS = BK * (BM + BN);
    static constexpr size_t STAGE_BYTES = STAGE_FLOATS * sizeof(float);
    static_assert(LR * LC == 32, "a warp is LR x LC lanes");
    static_assert(TM % 4 == 0 && TN % 4 == 0, "4x4 sub-tiles");
    static_assert(BM % WM == 0 && BN % WN == 0, "warps tile the block");
    static_assert(A4 % T == 0 && B4 % T == 0, "whole float4 per thread");
    static_assert(MAP != 1 || (LC % 4 == 0 && LR % 2 == 0), "2x4 patches");
    static_assert(MAP != 2 || (LC % 2 == 0 && LR % 2 == 0), "2x2 patches");
    static_assert(MAP >= 0 && MAP <= 2, "lane mapping 0, 1 or 2");
    static_assert(T <= 1024, "block size");
};

__device__ __forceinline__ void cpAsync16(float* smem, const float* gmem)
{
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s),
                 "l"(gmem)
                 : "memory");
}
__device__ __forceinline__ void cpAsyncCommit()
{
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void cpAsyncWait()
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ float f4at(const float4& v, int e)
{
    return e == 0 ? v.x : e == 1 ? v.y : e == 2 ? v.z : v.w;
}

// Lane -> (lane row lr, lane col lc) in the warp's LR x LC lane grid; the
// thread's fragments start at row lr*4, col lc*4 of the warp tile. Host and
// device (the --dry address check uses the same function).
// MAP 2: lane = 4 g + w; the 2x2 patch g sits at patch row g / (LC/2),
// patch col g % (LC/2); inside it lr bit = w / 2, lc bit = w % 2. So any 4
// consecutive lanes read 2 distinct A chunks and 2 distinct B chunks.
template <int LR, int LC, int MAP>
__host__ __device__ __forceinline__ void laneRC(int lane, int& lr, int& lc)
{
    if (MAP == 0) {
        lr = lane / LC;
        lc = lane % LC;
    } else if (MAP == 1) {
        const int q = lane / 8, w = lane % 8;
        lr = (q / (LC / 4)) * 2 + w / 4;
        lc = (q % (LC / 4)) * 4 + w % 4;
    } else {
        const int g = lane / 4, w = lane % 4;
        lr = (g / (LC / 2)) * 2 + w / 2;
        lc = (g % (LC / 2)) * 2 + w % 2;
    }
}

// Per-thread geometry, shared by both twins.
template <class C>
struct Geo {
    int bm0, bn0;      // block tile origin (rows, cols)
    int aRead, bRead;  // float offsets of the thread's first fragment
    int rowT, colT;    // thread's first row/col inside the block tile
    __device__ Geo(int n, int group)
    {
        const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
        const int wm = warp / C::WARPS_N, wn = warp % C::WARPS_N;
        int lr, lc;
        laneRC<C::LR, C::LC, C::MAP>(lane, lr, lc);
        rowT = wm * C::WM + lr * 4;
        colT = wn * C::WN + lc * 4;
        aRead = rowT;
        bRead = colT;
        // Rasterisation: groups of `group` tile-rows walked column by
        // column (0 = plain row-major order of tiles).
        const int tilesM = n / C::BM, tilesN = n / C::BN;
        const int pid = blockIdx.x;
        int pm, pn;
        if (group <= 0) {
            pm = pid / tilesN;
            pn = pid % tilesN;
        } else {
            const int inGroup = group * tilesN;
            const int first = pid / inGroup * group;
            const int gsz = min(tilesM - first, group);
            pm = first + (pid % inGroup) % gsz;
            pn = (pid % inGroup) / gsz;
        }
        bm0 = pm * C::BM;
        bn0 = pn * C::BN;
    }
};

// The shared inner product: k ascending, acc[i][j] = fma(a_i, b_j, acc).
// Fragments are double-buffered in registers (k+1 loaded before k's FMAs).
// The k loop is unrolled by template recursion: nvcc's #pragma unroll left
// the 16x8 tile's loop rolled (two k-steps per trip).
template <class C, int K>
__device__ __forceinline__ void kStep(const float* __restrict__ As,
                                      const float* __restrict__ Bs,
                                      float4 (&a)[2][C::TM / 4],
                                      float4 (&b)[2][C::TN / 4],
                                      float (&acc)[C::TM][C::TN])
{
    if constexpr (K < C::BK) {
        constexpr int cur = K & 1;
        if constexpr (K + 1 < C::BK) {
#pragma unroll
            for (int s = 0; s < C::TM / 4; ++s)
                a[cur ^ 1][s] = *reinterpret_cast<const float4*>(
                    As + (K + 1) * C::BM + s * C::LR * 4);
#pragma unroll
            for (int t = 0; t < C::TN / 4; ++t)
                b[cur ^ 1][t] = *reinterpret_cast<const float4*>(
                    Bs + (K + 1) * C::BN + t * C::LC * 4);
        }
#pragma unroll
        for (int i = 0; i < C::TM; ++i)
#pragma unroll
            for (int j = 0; j < C::TN; ++j)
                acc[i][j] = __fmaf_rn(f4at(a[cur][i / 4], i % 4),
                                      f4at(b[cur][j / 4], j % 4), acc[i][j]);
        kStep<C, K + 1>(As, Bs, a, b, acc);
    }
}

template <class C>
__device__ __forceinline__ void innerProduct(const float* __restrict__ As,
                                             const float* __restrict__ Bs,
                                             float (&acc)[C::TM][C::TN])
{
    float4 a[2][C::TM / 4], b[2][C::TN / 4];
#pragma unroll
    for (int s = 0; s < C::TM / 4; ++s)
        a[0][s] = *reinterpret_cast<const float4*>(As + s * C::LR * 4);
#pragma unroll
    for (int t = 0; t < C::TN / 4; ++t)
        b[0][t] = *reinterpret_cast<const float4*>(Bs + t * C::LC * 4);
    kStep<C, 0>(As, Bs, a, b, acc);
}

template <class C>
__device__ __forceinline__ void storeTile(const Geo<C>& g, float* c, int n,
                                          const float (&acc)[C::TM][C::TN])
{
#pragma unroll
    for (int i = 0; i < C::TM; ++i) {
        const int row = g.bm0 + g.rowT + (i / 4) * C::LR * 4 + i % 4;
        float* out = c + static_cast<size_t>(row) * n + g.bn0 + g.colT;
#pragma unroll
        for (int t = 0; t < C::TN / 4; ++t)
            *reinterpret_cast<float4*>(out + t * C::LC * 4) =
                make_float4(acc[i][4 * t], acc[i][4 * t + 1],
                            acc[i][4 * t + 2], acc[i][4 * t + 3]);
    }
}

// Which float4 of a slice thread tid copies as its r-th: smem float offset
// and global offset relative to (k0 row, tile origin).
template <int W, int T>
__device__ __forceinline__ void copySlot(int tid, int r, int n, int& sOff,
                                         size_t& gOff)
{
    const int idx = tid + r * T;
    const int row = idx / (W / 4), c4 = idx % (W / 4);
    sOff = row * W + c4 * 4;
    gOff = static_cast<size_t>(row) * n + c4 * 4;
}

template <class C>
__global__ void __launch_bounds__(C::T, C::MINB)
    sgemmPiped(const float* __restrict__ aCm, const float* __restrict__ b,
               float* __restrict__ c, int n, int group)
{
    extern __shared__ __align__(16) float smem[];
    const Geo<C> g(n, group);
    const int tid = threadIdx.x;
    float acc[C::TM][C::TN];
#pragma unroll
    for (int i = 0; i < C::TM; ++i)
#pragma unroll
        for (int j = 0; j < C::TN; ++j)
            acc[i][j] = 0.0f;
    const float* srcA = aCm + g.bm0;
    const float* srcB = b + g.bn0;
    const int slices = n / C::BK;
    auto fill = [&](int st, int slice) {
        float* As = smem + st * C::STAGE_FLOATS;
        float* Bs = As + C::BK * C::BM;
        const size_t k0 = static_cast<size_t>(slice) * C::BK * n;
#pragma unroll
        for (int r = 0; r < C::RA; ++r) {
            int so;
            size_t go;
            copySlot<C::BM, C::T>(tid, r, n, so, go);
            cpAsync16(As + so, srcA + k0 + go);
        }
#pragma unroll
        for (int r = 0; r < C::RB; ++r) {
            int so;
            size_t go;
            copySlot<C::BN, C::T>(tid, r, n, so, go);
            cpAsync16(Bs + so, srcB + k0 + go);
        }
    };
#pragma unroll
    for (int s = 0; s < C::S - 1; ++s) {
        if (s < slices)
            fill(s, s);
        cpAsyncCommit();
    }
    int st = 0;
    for (int k = 0; k < slices; ++k) {
        cpAsyncWait<C::S - 2>();
        __syncthreads();
        const int next = k + C::S - 1;
        if (next < slices)
            fill(next % C::S, next);
        cpAsyncCommit();
        const float* As = smem + st * C::STAGE_FLOATS;
        innerProduct<C>(As + g.aRead, As + C::BK * C::BM + g.bRead, acc);
        st = st + 1 == C::S ? 0 : st + 1;
    }
    storeTile<C>(g, c, n, acc);
}

template <class C>
__global__ void __launch_bounds__(C::T, C::MINB)
    sgemmSync(const float* __restrict__ aCm, const float* __restrict__ b,
              float* __restrict__ c, int n, int group)
{
    extern __shared__ __align__(16) float smem[];
    const Geo<C> g(n, group);
    const int tid = threadIdx.x;
    float acc[C::TM][C::TN];
#pragma unroll
    for (int i = 0; i < C::TM; ++i)
#pragma unroll
        for (int j = 0; j < C::TN; ++j)
            acc[i][j] = 0.0f;
    const float* srcA = aCm + g.bm0;
    const float* srcB = b + g.bn0;
    float* As = smem;
    float* Bs = As + C::BK * C::BM;
    for (int k = 0; k < n / C::BK; ++k) {
        const size_t k0 = static_cast<size_t>(k) * C::BK * n;
        float4 ra[C::RA], rb[C::RB];
        int so;
        size_t go;
#pragma unroll
        for (int r = 0; r < C::RA; ++r) {
            copySlot<C::BM, C::T>(tid, r, n, so, go);
            ra[r] = *reinterpret_cast<const float4*>(srcA + k0 + go);
        }
#pragma unroll
        for (int r = 0; r < C::RB; ++r) {
            copySlot<C::BN, C::T>(tid, r, n, so, go);
            rb[r] = *reinterpret_cast<const float4*>(srcB + k0 + go);
        }
        __syncthreads();
#pragma unroll
        for (int r = 0; r < C::RA; ++r) {
            copySlot<C::BM, C::T>(tid, r, n, so, go);
            *reinterpret_cast<float4*>(As + so) = ra[r];
        }
#pragma unroll
        for (int r = 0; r < C::RB; ++r) {
            copySlot<C::BN, C::T>(tid, r, n, so, go);
            *reinterpret_cast<float4*>(Bs + so) = rb[r];
        }
        __syncthreads();
        innerProduct<C>(As + g.aRead, Bs + g.bRead, acc);
    }
    storeTile<C>(g, c, n, acc);
}

// The "late barrier" pipelined kernel: the same FMAs in the same order, but
// the wait and the one barrier per slice sit inside the last k-step, so the
// first fragment of slice k+1 is read while the last step of slice k runs
// its FMAs (hides the LDS latency after the barrier). All S stages are
// filled up front; after the barrier of slice k, stage k % S (no longer
// read by anyone) is refilled with slice k + S. Needs BK even.
template <class C, int K, class Hook>
__device__ __forceinline__ void kStepLate(const float* __restrict__ As,
                                          const float* __restrict__ Bs,
                                          float4 (&a)[2][C::TM / 4],
                                          float4 (&b)[2][C::TN / 4],
                                          float (&acc)[C::TM][C::TN],
                                          Hook& hook)
{
    if constexpr (K < C::BK) {
        constexpr int cur = K & 1;
        if constexpr (K + 1 < C::BK) {
#pragma unroll
            for (int s = 0; s < C::TM / 4; ++s)
                a[cur ^ 1][s] = *reinterpret_cast<const float4*>(
                    As + (K + 1) * C::BM + s * C::LR * 4);
#pragma unroll
            for (int t = 0; t < C::TN / 4; ++t)
                b[cur ^ 1][t] = *reinterpret_cast<const float4*>(
                    Bs + (K + 1) * C::BN + t * C::LC * 4);
        } else {
            hook(a[cur ^ 1], b[cur ^ 1]);
        }
#pragma unroll
        for (int i = 0; i < C::TM; ++i)
#pragma unroll
            for (int j = 0; j < C::TN; ++j)
                acc[i][j] = __fmaf_rn(f4at(a[cur][i / 4], i % 4),
                                      f4at(b[cur][j / 4], j % 4), acc[i][j]);
        kStepLate<C, K + 1>(As, Bs, a, b, acc, hook);
    }
}

template <class C>
__global__ void __launch_bounds__(C::T, C::MINB)
    sgemmPipedLate(const float* __restrict__ aCm,
                   const float* __restrict__ b, float* __restrict__ c,
                   int n, int group)
{
    static_assert(C::BK % 2 == 0, "fragment 0 of the next slice is a[0]");
    extern __shared__ __align__(16) float smem[];
    const Geo<C> g(n, group);
    const int tid = threadIdx.x;
    float acc[C::TM][C::TN];
#pragma unroll
    for (int i = 0; i < C::TM; ++i)
#pragma unroll
        for (int j = 0; j < C::TN; ++j)
            acc[i][j] = 0.0f;
    const float* srcA = aCm + g.bm0;
    const float* srcB = b + g.bn0;
    const int slices = n / C::BK;
    auto fill = [&](int st, int slice) {
        float* As = smem + st * C::STAGE_FLOATS;
        float* Bs = As + C::BK * C::BM;
        const size_t k0 = static_cast<size_t>(slice) * C::BK * n;
#pragma unroll
        for (int r = 0; r < C::RA; ++r) {
            int so;
            size_t go;
            copySlot<C::BM, C::T>(tid, r, n, so, go);
            cpAsync16(As + so, srcA + k0 + go);
        }
#pragma unroll
        for (int r = 0; r < C::RB; ++r) {
            int so;
            size_t go;
            copySlot<C::BN, C::T>(tid, r, n, so, go);
            cpAsync16(Bs + so, srcB + k0 + go);
        }
    };
    auto loadFirst = [&](int st, float4 (&fa)[C::TM / 4],
                         float4 (&fb)[C::TN / 4]) {
        const float* As = smem + st * C::STAGE_FLOATS + g.aRead;
        const float* Bs = smem + st * C::STAGE_FLOATS + C::BK * C::BM +
                          g.bRead;
#pragma unroll
        for (int s = 0; s < C::TM / 4; ++s)
            fa[s] = *reinterpret_cast<const float4*>(As + s * C::LR * 4);
#pragma unroll
        for (int t = 0; t < C::TN / 4; ++t)
            fb[t] = *reinterpret_cast<const float4*>(Bs + t * C::LC * 4);
    };
#pragma unroll
    for (int s = 0; s < C::S; ++s) {
        if (s < slices)
            fill(s, s);
        cpAsyncCommit();
    }
    cpAsyncWait<C::S - 1>();
    __syncthreads();
    float4 fa[2][C::TM / 4], fb[2][C::TN / 4];
    loadFirst(0, fa[0], fb[0]);
    int st = 0;
    for (int k = 0; k < slices; ++k) {
        const int nextSt = st + 1 == C::S ? 0 : st + 1;
        auto hook = [&](float4 (&na)[C::TM / 4], float4 (&nb)[C::TN / 4]) {
            cpAsyncWait<C::S - 2>();  // slice k + 1 has landed
            __syncthreads();          // and nobody reads stage st any more
            if (k + C::S < slices)
                fill(st, k + C::S);
            cpAsyncCommit();
            if (k + 1 < slices)
                loadFirst(nextSt, na, nb);
        };
        const float* As = smem + st * C::STAGE_FLOATS;
        kStepLate<C, 0>(As + g.aRead, As + C::BK * C::BM + g.bRead, fa, fb,
                        acc, hook);
        st = nextSt;
    }
    storeTile<C>(g, c, n, acc);
}

// The "lean" pipelined kernel: sgemmPiped's schedule and FMA order, but the
// cp.async addresses are set up once: one global pointer per operand
// advanced by BK*n per slice, one 32-bit shared address per operand, and
// compile-time offsets per copy (r * rows-per-pass) and per stage, so the
// loop body has no index arithmetic (copySlot's div/mod/multiply per copy).
template <class C>
__global__ void __launch_bounds__(C::T, C::MINB)
    sgemmPipedLean(const float* __restrict__ aCm,
                   const float* __restrict__ b, float* __restrict__ c,
                   int n, int group)
{
    constexpr int QA = C::BM / 4, QB = C::BN / 4;  // float4 per tile row
    static_assert(C::T % QA == 0 && C::T % QB == 0, "whole rows per pass");
    constexpr int PA = C::T / QA, PB = C::T / QB;  // rows per pass
    extern __shared__ __align__(16) float smem[];
    const Geo<C> g(n, group);
    const int tid = threadIdx.x;
    float acc[C::TM][C::TN];
#pragma unroll
    for (int i = 0; i < C::TM; ++i)
#pragma unroll
        for (int j = 0; j < C::TN; ++j)
            acc[i][j] = 0.0f;
    const float* gA = aCm + g.bm0 + static_cast<size_t>(tid / QA) * n +
                      (tid % QA) * 4;
    const float* gB = b + g.bn0 + static_cast<size_t>(tid / QB) * n +
                      (tid % QB) * 4;
    const size_t stepA = static_cast<size_t>(PA) * n;
    const size_t stepB = static_cast<size_t>(PB) * n;
    const size_t slice = static_cast<size_t>(C::BK) * n;
    const unsigned s0 =
        static_cast<unsigned>(__cvta_generic_to_shared(smem));
    const unsigned sA = s0 + ((tid / QA) * C::BM + (tid % QA) * 4) * 4;
    const unsigned sB = s0 + (C::BK * C::BM + (tid / QB) * C::BN +
                              (tid % QB) * 4) * 4;
    auto fill = [&](unsigned stOff) {  // copy the slice at gA/gB, bump
#pragma unroll
        for (int r = 0; r < C::RA; ++r)
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::
                             "r"(sA + stOff + r * PA * C::BM * 4),
                         "l"(gA + r * stepA)
                         : "memory");
#pragma unroll
        for (int r = 0; r < C::RB; ++r)
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::
                             "r"(sB + stOff + r * PB * C::BN * 4),
                         "l"(gB + r * stepB)
                         : "memory");
        gA += slice;
        gB += slice;
    };
    const int slices = n / C::BK;
#pragma unroll
    for (int s = 0; s < C::S - 1; ++s) {
        if (s < slices)
            fill(s * unsigned(C::STAGE_BYTES));
        cpAsyncCommit();
    }
    int st = 0, fillSt = C::S - 1;
    for (int k = 0; k < slices; ++k) {
        cpAsyncWait<C::S - 2>();
        __syncthreads();
        if (k + C::S - 1 < slices)
            fill(fillSt * unsigned(C::STAGE_BYTES));
        cpAsyncCommit();
        const float* As = smem + st * C::STAGE_FLOATS;
        innerProduct<C>(As + g.aRead, As + C::BK * C::BM + g.bRead, acc);
        st = st + 1 == C::S ? 0 : st + 1;
        fillSt = fillSt + 1 == C::S ? 0 : fillSt + 1;
    }
    storeTile<C>(g, c, n, acc);
}

// ------------------------------------------------------------ candidates --
using LaunchFn = cudaError_t (*)(const float*, const float*, float*, int,
                                 int, cudaStream_t);
using KernelPtr = const void*;

// MODE 0: synchronous twin, 1: pipelined, 2: pipelined, late barrier,
// 3: pipelined, lean addressing.
template <class C, int MODE>
cudaError_t launchCfg(const float* a, const float* b, float* c, int n,
                      int group, cudaStream_t s)
{
    const size_t smem = MODE ? C::S * C::STAGE_BYTES : C::STAGE_BYTES;
    const dim3 grid((n / C::BM) * (n / C::BN));
    if constexpr (MODE == 3)
        sgemmPipedLean<C><<<grid, C::T, smem, s>>>(a, b, c, n, group);
    else if constexpr (MODE == 2)
        sgemmPipedLate<C><<<grid, C::T, smem, s>>>(a, b, c, n, group);
    else if constexpr (MODE == 1)
        sgemmPiped<C><<<grid, C::T, smem, s>>>(a, b, c, n, group);
    else
        sgemmSync<C><<<grid, C::T, smem, s>>>(a, b, c, n, group);
    return cudaGetLastError();
}

struct Candidate {
    const char* name;
    const char* what;
    int bm, bn, bk, tm, tn, threads, stages, minb, map;
    int lr, lc, mode;
    void (*lane)(int, int&, int&);  // laneRC of the config (host check)
    int group;
    size_t pipedSmem, syncSmem;
    LaunchFn piped, sync;
    KernelPtr pipedFn, syncFn;
};

template <class C, int MODE = 1>
Candidate makeCand(const char* name, const char* what, int group)
{
    Candidate k;
    k.name = name;
    k.what = what;
    k.bm = C::BM;
    k.bn = C::BN;
    k.bk = C::BK;
    k.tm = C::TM;
    k.tn = C::TN;
    k.threads = C::T;
    k.stages = C::S;
    k.minb = C::MINB;
    k.map = C::MAP;
    k.lr = C::LR;
    k.lc = C::LC;
    k.mode = MODE;
    k.lane = laneRC<C::LR, C::LC, C::MAP>;
    k.group = group;
    k.pipedSmem = C::S * C::STAGE_BYTES;
    k.syncSmem = C::STAGE_BYTES;
    k.piped = launchCfg<C, MODE>;
    k.sync = launchCfg<C, 0>;
    if constexpr (MODE == 3)
        k.pipedFn = reinterpret_cast<KernelPtr>(sgemmPipedLean<C>);
    else if constexpr (MODE == 2)
        k.pipedFn = reinterpret_cast<KernelPtr>(sgemmPipedLate<C>);
    else
        k.pipedFn = reinterpret_cast<KernelPtr>(sgemmPiped<C>);
    k.syncFn = reinterpret_cast<KernelPtr>(sgemmSync<C>);
    return k;
}

//                  BM   BN  BK TM TN LR LC S MINB MAP
using K0 = Cfg<128, 128, 16, 8, 8, 4, 8, 2, 2, 0>;  // lesson-like
using K1 = Cfg<128, 128, 8, 8, 8, 4, 8, 3, 2, 1>;
using K2 = Cfg<128, 256, 8, 16, 8, 4, 8, 3, 1, 1>;  // 64x64 warp, 16x8
using K3 = Cfg<128, 256, 8, 16, 8, 4, 8, 3, 1, 0>;  // K2, row-major lanes
using K4 = Cfg<256, 128, 8, 8, 16, 8, 4, 3, 1, 1>;  // 64x64 warp, 8x16
using K5 = Cfg<128, 256, 16, 16, 8, 4, 8, 2, 1, 1>;
using K6 = Cfg<128, 128, 8, 8, 8, 8, 4, 4, 2, 1>;   // 64x32 warp
using K7 = Cfg<128, 256, 8, 16, 8, 4, 8, 4, 1, 1>;
using K8 = Cfg<128, 256, 8, 16, 8, 4, 8, 2, 1, 1>;  // late barrier
using K9 = Cfg<128, 128, 8, 8, 8, 4, 8, 2, 2, 1>;   // late barrier
// MAP 2 (2x2 lane patches: 2 wavefronts per A and per B LDS.128)
using K12 = Cfg<128, 256, 16, 16, 8, 4, 8, 2, 1, 2>;  // k5, MAP 2
using K14 = Cfg<128, 256, 16, 16, 8, 4, 8, 3, 1, 2>;  // 3 st, 72 KiB
using K15 = Cfg<128, 256, 8, 16, 8, 4, 8, 4, 1, 2>;   // cuBLAS-like 8x4

static std::vector<Candidate> allCandidates()
{
    return {
        makeCand<K0>("k0_128x128_k16_s2_rm", "lesson-like 8x8, b2", 8),
        makeCand<K1>("k1_128x128_k8_s3_z", "8x8 z-lanes, b2", 8),
        makeCand<K2>("k2_128x256_k8_s3_z", "16x8 warp64x64 z, b1", 8),
        makeCand<K3>("k3_128x256_k8_s3_rm", "k2 row-major lanes", 8),
        makeCand<K4>("k4_256x128_k8_s3_z", "8x16 warp64x64 z, b1", 8),
        makeCand<K5>("k5_128x256_k16_s2_z", "k2 with BK16 2st", 8),
        makeCand<K6>("k6_128x128_k8_s4_z", "8x8 warp64x32 z, b2", 8),
        makeCand<K7>("k7_128x256_k8_s4_z", "k2 with 4 stages", 8),
        makeCand<K2, 2>("k8_128x256_k8_s3_z_late", "k2, late barrier", 8),
        makeCand<K8, 2>("k9_128x256_k8_s2_z_late", "k8 with 2 stages", 8),
        makeCand<K5, 2>("k10_128x256_k16_s2_z_late", "k5, late barrier",
                        8),
        makeCand<K9, 2>("k11_128x128_k8_s2_z_late", "k1, late, 2 st", 8),
        makeCand<K12>("k12_128x256_k16_s2_q", "k5 with MAP 2", 8),
        makeCand<K12, 2>("k13_128x256_k16_s2_q_late", "k10 with MAP 2", 8),
        makeCand<K14>("k14_128x256_k16_s3_q", "k12 with 3 stages", 8),
        makeCand<K15>("k15_128x256_k8_s4_q", "BK8 4 st, MAP 2", 8),
        makeCand<K12, 3>("k16_128x256_k16_s2_q_lean", "k12, lean addr",
                         8),
        makeCand<K14, 3>("k17_128x256_k16_s3_q_lean", "k14, lean addr",
                         8),
    };
}

// ------------------------------------------------------------ host side --
struct Options {
    std::vector<int> sizes{4096};
    int reps = 30;
    int warmup = 5;
    int checkN = 512;
    unsigned seed = 12345u;
    int group = -1;  // -1: each candidate's own
    bool dry = false;
    bool noCheck = false;
    std::string only;     // comma list of candidate names ("" = all)
    std::string profile;  // candidate name for ncu mode
    std::string csv = "sgemm_times.csv";
    std::string tag = "p0";
};

static void usage(const char* argv0)
{
    std::fprintf(stderr,
                 "usage: %s [--sizes N[,N..]] [--reps R] [--warmup W]\n"
                 "  [--check-n N] [--seed S] [--group G] [--only a,b]\n"
                 "  [--csv FILE] [--tag T] [--no-check] [--dry]\n"
                 "  [--profile NAME] [--list]\n"
                 "sizes must be multiples of 256 (>= 256)\n",
                 argv0);
}

static bool parseInt(const char* s, long lo, long hi, long* out)
{
    if (!s || !*s)
        return false;
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static bool parseArgs(int argc, char** argv, Options& o, bool& list)
{
    list = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto val = [&]() -> const char* {
            return i + 1 < argc ? argv[++i] : nullptr;
        };
        long v = 0;
        if (a == "--dry") {
            o.dry = true;
        } else if (a == "--no-check") {
            o.noCheck = true;
        } else if (a == "--list") {
            list = true;
        } else if (a == "--sizes") {
            const char* s = val();
            if (!s)
                return false;
            o.sizes.clear();
            std::string str = s;
            size_t pos = 0;
            while (pos <= str.size()) {
                const size_t comma = str.find(',', pos);
                const std::string tok = str.substr(
                    pos, comma == std::string::npos ? std::string::npos
                                                    : comma - pos);
                if (!parseInt(tok.c_str(), 256, 32768, &v) || v % 256)
                    return false;
                o.sizes.push_back(static_cast<int>(v));
                if (comma == std::string::npos)
                    break;
                pos = comma + 1;
            }
        } else if (a == "--reps") {
            if (!parseInt(val(), 1, 100000, &v))
                return false;
            o.reps = static_cast<int>(v);
        } else if (a == "--warmup") {
            if (!parseInt(val(), 0, 100000, &v))
                return false;
            o.warmup = static_cast<int>(v);
        } else if (a == "--check-n") {
            if (!parseInt(val(), 256, 2048, &v) || v % 256)
                return false;
            o.checkN = static_cast<int>(v);
        } else if (a == "--seed") {
            if (!parseInt(val(), 0, 0x7fffffffL, &v))
                return false;
            o.seed = static_cast<unsigned>(v);
        } else if (a == "--group") {
            if (!parseInt(val(), 0, 4096, &v))
                return false;
            o.group = static_cast<int>(v);
        } else if (a == "--only") {
            const char* s = val();
            if (!s)
                return false;
            o.only = s;
        } else if (a == "--profile") {
            const char* s = val();
            if (!s)
                return false;
            o.profile = s;
        } else if (a == "--csv") {
            const char* s = val();
            if (!s)
                return false;
            o.csv = s;
        } else if (a == "--tag") {
            const char* s = val();
            if (!s)
                return false;
            o.tag = s;
        } else {
            return false;
        }
    }
    return true;
}

// Deterministic uniform [-1, 1) inputs (not constant: catches index bugs).
static void fillRandom(std::vector<float>& x, unsigned seed)
{
    uint64_t s = 0x9E3779B97F4A7C15ull ^ seed;
    for (float& f : x) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        const uint32_t r = static_cast<uint32_t>(s >> 40);  // 24 bits
        f = static_cast<float>(r) / 8388608.0f - 1.0f;
    }
}

// float64 reference and |a||b| bound; aCm column-major, b row-major.
static void cpuReference(const std::vector<float>& aCm,
                         const std::vector<float>& b, int n,
                         std::vector<double>& ref, std::vector<double>& mag)
{
    ref.assign(static_cast<size_t>(n) * n, 0.0);
    mag.assign(static_cast<size_t>(n) * n, 0.0);
    for (int k = 0; k < n; ++k)
        for (int i = 0; i < n; ++i) {
            const double av = aCm[static_cast<size_t>(k) * n + i];
            const float* brow = &b[static_cast<size_t>(k) * n];
            double* r = &ref[static_cast<size_t>(i) * n];
            double* m = &mag[static_cast<size_t>(i) * n];
            for (int j = 0; j < n; ++j) {
                r[j] += av * brow[j];
                m[j] += std::fabs(av * brow[j]);
            }
        }
}

// The kernels' exact FMA chain on the CPU: acc = fmaf(a_ik, b_kj, acc).
static void cpuEmulate(const std::vector<float>& aCm,
                       const std::vector<float>& b, int n,
                       std::vector<float>& c)
{
    c.assign(static_cast<size_t>(n) * n, 0.0f);
    for (int k = 0; k < n; ++k)
        for (int i = 0; i < n; ++i) {
            const float av = aCm[static_cast<size_t>(k) * n + i];
            const float* brow = &b[static_cast<size_t>(k) * n];
            float* r = &c[static_cast<size_t>(i) * n];
            for (int j = 0; j < n; ++j)
                r[j] = std::fmaf(av, brow[j], r[j]);
        }
}

// Max over elements of |c - ref| / mag (NaN counts as failure -> inf).
static double boundErr(const std::vector<float>& c,
                       const std::vector<double>& ref,
                       const std::vector<double>& mag)
{
    double worst = 0.0;
    for (size_t i = 0; i < c.size(); ++i) {
        if (!std::isfinite(c[i]))
            return INFINITY;
        const double d = std::fabs(c[i] - ref[i]) / (mag[i] + 1e-300);
        worst = std::max(worst, d);
    }
    return worst;
}

// Max |c - r| / max |r| (NaN -> inf).
static double relErr(const std::vector<float>& c, const std::vector<float>& r)
{
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < c.size(); ++i) {
        if (!std::isfinite(c[i]))
            return INFINITY;
        num = std::max(num, std::fabs(double(c[i]) - double(r[i])));
        den = std::max(den, std::fabs(double(r[i])));
    }
    return den > 0 ? num / den : num;
}

static size_t countDiff(const std::vector<float>& x,
                        const std::vector<float>& y)
{
    size_t d = 0;
    for (size_t i = 0; i < x.size(); ++i)
        d += std::memcmp(&x[i], &y[i], sizeof(float)) != 0;
    return d;
}

// Shared-memory pattern of one fragment LDS.128 of every warp of a block:
// lane l reads the 16 bytes at 4 * off(l) (floats; the k-row and stage
// bases are multiples of 128 B, so they do not change banks). Returns the
// worst, over warps, of: d4 = distinct 16-byte chunks within any group of
// lanes 4j..4j+3 (wavefronts = max(2, d4), the rule fitted to the lds_bench
// ncu data), conflicts = max distinct words in one bank minus
// ceil(distinct bytes / 128), misaligned = lanes whose address is not a
// multiple of 16 B.
struct LdsPattern {
    int d4, conflicts, misaligned;
};
static LdsPattern ldsPattern(const Candidate& k, bool isA, int frag)
{
    LdsPattern w{0, 0, 0};
    const int wmTile = k.lr * k.tm, wnTile = k.lc * k.tn;
    const int warpsN = k.bn / wnTile;
    for (int warp = 0; warp < k.threads / 32; ++warp) {
        long addr[32];
        for (int lane = 0; lane < 32; ++lane) {
            int lr, lc;
            k.lane(lane, lr, lc);
            const long off = isA ? (warp / warpsN) * wmTile + lr * 4 +
                                       frag * k.lr * 4
                                 : (warp % warpsN) * wnTile + lc * 4 +
                                       frag * k.lc * 4;
            addr[lane] = 4 * off;
            w.misaligned += addr[lane] % 16 != 0;
        }
        for (int g = 0; g < 8; ++g) {
            long ch[4];
            int d = 0;
            for (int j = 0; j < 4; ++j) {
                const long c = addr[4 * g + j] / 16;
                bool seen = false;
                for (int q = 0; q < d; ++q)
                    seen |= ch[q] == c;
                if (!seen)
                    ch[d++] = c;
            }
            w.d4 = std::max(w.d4, d);
        }
        std::vector<long> words;  // distinct 4-byte words read by the warp
        for (int lane = 0; lane < 32; ++lane)
            for (int e = 0; e < 4; ++e)
                words.push_back(addr[lane] / 4 + e);
        std::sort(words.begin(), words.end());
        words.erase(std::unique(words.begin(), words.end()), words.end());
        int perBank[32] = {0};
        for (long wd : words)
            ++perBank[wd % 32];
        const int ways = *std::max_element(perBank, perBank + 32);
        const int ideal = int((words.size() * 4 + 127) / 128);
        w.conflicts = std::max(w.conflicts, ways - ideal);
    }
    return w;
}

// Prints the lane map and the predicted wavefronts per fragment LDS.128 of
// every candidate; fails if any load conflicts or is misaligned, if a
// MAP 2 load needs more than 2 wavefronts, or if a MAP 1 B load does not
// show the 4 distinct chunks per 4 lanes (4 wavefronts) ncu measured.
static bool ldsCheck()
{
    bool ok = true;
    const std::vector<Candidate> cs = allCandidates();
    for (const Candidate& k : cs) {
        if (k.map != 2)
            continue;
        std::printf("lds: %s lane->(lr,lc):", k.name);
        for (int lane = 0; lane < 32; ++lane) {
            int lr, lc;
            k.lane(lane, lr, lc);
            std::printf("%s%d:(%d,%d)", lane % 8 ? " " : "\nlds:   ", lane,
                        lr, lc);
        }
        std::printf("\n");
        break;
    }
    for (const Candidate& k : cs) {
        const int na = k.tm / 4, nb = k.tn / 4;
        int wfA = 0, wfB = 0, conf = 0, mis = 0, d4A = 0, d4B = 0;
        for (int f = 0; f < na; ++f) {
            const LdsPattern p = ldsPattern(k, true, f);
            d4A = std::max(d4A, p.d4);
            wfA += std::max(2, p.d4);
            conf += p.conflicts;
            mis += p.misaligned;
        }
        for (int f = 0; f < nb; ++f) {
            const LdsPattern p = ldsPattern(k, false, f);
            d4B = std::max(d4B, p.d4);
            wfB += std::max(2, p.d4);
            conf += p.conflicts;
            mis += p.misaligned;
        }
        const double avg = double(wfA + wfB) / (na + nb);
        bool good = conf == 0 && mis == 0;
        if (k.map == 2)
            good = good && d4A <= 2 && d4B <= 2 && avg == 2.0;
        if (k.map == 1)  // the 4 wavefronts ncu measured for k5's B reads
            good = good && d4A == 1 && d4B == 4;
        ok = ok && good;
        std::printf("lds: %-26s map%d A %d x LDS.128 d4 %d wf %.2f | "
                    "B %d x d4 %d wf %.2f | avg %.3f conflicts %d "
                    "misaligned %d %s\n",
                    k.name, k.map, na, d4A, double(wfA) / na, nb, d4B,
                    double(wfB) / nb, avg, conf, mis, good ? "ok" : "FAIL");
    }
    return ok;
}

static int dryRun(const Options& o)
{
    const int n = 256;
    std::vector<float> a(size_t(n) * n), b(size_t(n) * n), e, bad;
    fillRandom(a, o.seed);
    fillRandom(b, o.seed + 1);
    std::vector<double> ref, mag;
    cpuReference(a, b, n, ref, mag);
    cpuEmulate(a, b, n, e);
    const double tol = n * std::ldexp(1.0, -24);
    const double err = boundErr(e, ref, mag);
    bad = e;
    const size_t at = size_t(n) * 7 + 3;  // push one element past tol
    bad[at] = static_cast<float>(ref[at] + 4.0 * tol * mag[at]);
    const double errBad = boundErr(bad, ref, mag);
    bad[5] = NAN;
    const double errNan = boundErr(bad, ref, mag);
    std::printf("dry: n=%d emul bound_err=%.3e tol=%.3e %s\n", n, err, tol,
                err <= tol ? "ok" : "FAIL");
    std::printf("dry: perturbed bound_err=%.3e -> %s\n", errBad,
                errBad > tol ? "detected" : "MISSED");
    std::printf("dry: NaN -> %s; diffcount(e,bad)=%zu\n",
                std::isinf(errNan) ? "detected" : "MISSED",
                countDiff(e, bad));
    std::printf("dry: relErr(e,e)=%g sizes:", relErr(e, e));
    for (int s : o.sizes)
        std::printf(" %d", s);
    std::printf(" reps=%d warmup=%d\n", o.reps, o.warmup);
    for (const Candidate& k : allCandidates())
        std::printf("dry: cand %-26s %3dx%-3d bk%-2d t%dx%d thr%d s%d b%d "
                    "map%d mode%d smem %zu/%zu\n",
                    k.name, k.bm, k.bn, k.bk, k.tm, k.tn, k.threads,
                    k.stages, k.minb, k.map, k.mode, k.pipedSmem,
                    k.syncSmem);
    const bool ldsOk = ldsCheck();
    const bool ok =
        err <= tol && errBad > tol && std::isinf(errNan) && ldsOk;
    std::printf("dry: %s\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}

// ------------------------------------------------------------ GPU side ----
struct Ctx {
    cudaStream_t stream;
    cublasHandle_t blasDef, blasPed;
    float *a, *b, *c;
    int n;
};

// Variant v: -2 cuBLAS default, -1 cuBLAS pedantic, 2i piped, 2i+1 sync.
static void launchVariant(Ctx& x, const std::vector<Candidate>& cs, int v,
                          int group)
{
    const float one = 1.0f, zero = 0.0f;
    if (v < 0) {
        cublasHandle_t h = v == -2 ? x.blasDef : x.blasPed;
        CUBLAS_TRY(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, x.n, x.n, x.n,
                               &one, x.b, x.n, x.a, x.n, &zero, x.c, x.n));
        return;
    }
    const Candidate& k = cs[v / 2];
    const int g = group >= 0 ? group : k.group;
    CUDA_TRY((v % 2 == 0 ? k.piped : k.sync)(x.a, x.b, x.c, x.n, g,
                                             x.stream));
}

static std::string variantName(const std::vector<Candidate>& cs, int v)
{
    if (v == -2)
        return "cublas_default";
    if (v == -1)
        return "cublas_pedantic";
    return std::string(cs[v / 2].name) + (v % 2 == 0 ? ".piped" : ".sync");
}

static std::vector<float> runOnce(Ctx& x, const std::vector<Candidate>& cs,
                                  int v, int group)
{
    const size_t nn = size_t(x.n) * x.n;
    CUDA_TRY(cudaMemsetAsync(x.c, 0xFF, nn * sizeof(float), x.stream));
    launchVariant(x, cs, v, group);
    CUDA_TRY(cudaStreamSynchronize(x.stream));
    std::vector<float> h(nn);
    CUDA_TRY(cudaMemcpy(h.data(), x.c, nn * sizeof(float),
                        cudaMemcpyDeviceToHost));
    return h;
}

static void setup(Ctx& x, int n, unsigned seed, std::vector<float>* ha,
                  std::vector<float>* hb)
{
    const size_t nn = size_t(n) * n;
    x.n = n;
    std::vector<float> a(nn), b(nn);
    fillRandom(a, seed);
    fillRandom(b, seed + 1);
    CUDA_TRY(cudaMalloc(&x.a, nn * sizeof(float)));
    CUDA_TRY(cudaMalloc(&x.b, nn * sizeof(float)));
    CUDA_TRY(cudaMalloc(&x.c, nn * sizeof(float)));
    CUDA_TRY(cudaMemcpy(x.a, a.data(), nn * sizeof(float),
                        cudaMemcpyHostToDevice));
    CUDA_TRY(cudaMemcpy(x.b, b.data(), nn * sizeof(float),
                        cudaMemcpyHostToDevice));
    if (ha)
        *ha = std::move(a);
    if (hb)
        *hb = std::move(b);
}

static void teardown(Ctx& x)
{
    cudaFree(x.a);
    cudaFree(x.b);
    cudaFree(x.c);
}

// Correctness at one size; returns the number of failed checks.
static int checkSize(Ctx& x, const std::vector<Candidate>& cs, int n,
                     const Options& o, FILE* chk)
{
    std::vector<float> ha, hb;
    setup(x, n, o.seed + n, &ha, &hb);
    const bool cpu = n <= 2048;
    std::vector<double> ref, mag;
    std::vector<float> emu;
    if (cpu) {
        cpuReference(ha, hb, n, ref, mag);
        cpuEmulate(ha, hb, n, emu);
    }
    const double tol = n * std::ldexp(1.0, -24);
    int fails = 0;
    auto row = [&](const std::string& var, const char* what, double val,
                   double lim, bool pass) {
        std::fprintf(chk, "%s,%d,%s,%s,%.6e,%.6e,%s\n", o.tag.c_str(), n,
                     var.c_str(), what, val, lim, pass ? "pass" : "FAIL");
        std::printf("  check n=%d %-34s %-14s %.3e (lim %.1e) %s\n", n,
                    var.c_str(), what, val, lim, pass ? "pass" : "FAIL");
        fails += !pass;
    };
    const std::vector<float> cubD = runOnce(x, cs, -2, o.group);
    const std::vector<float> cubP = runOnce(x, cs, -1, o.group);
    if (cpu) {
        const double eD = boundErr(cubD, ref, mag);
        const double eP = boundErr(cubP, ref, mag);
        row("cublas_default", "bound_err", eD, tol, eD <= tol);
        row("cublas_pedantic", "bound_err", eP, tol, eP <= tol);
    }
    for (size_t i = 0; i < cs.size(); ++i) {
        const int v = int(2 * i);
        const std::vector<float> p = runOnce(x, cs, v, o.group);
        const std::vector<float> s = runOnce(x, cs, v + 1, o.group);
        const std::string nm = cs[i].name;
        const size_t d = countDiff(p, s);
        row(nm, "memcmp_twin", double(d), 0.0, d == 0);
        if (cpu) {
            const double e = boundErr(p, ref, mag);
            row(nm + ".piped", "bound_err", e, tol, e <= tol);
            const size_t de = countDiff(p, emu);
            row(nm + ".piped", "diff_vs_emul", double(de), 0.0, de == 0);
        }
        const double r = relErr(p, cubP);
        row(nm + ".piped", "rel_vs_cublas", r, 1e-4, r <= 1e-4);
    }
    teardown(x);
    return fails;
}

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

static void timeSize(Ctx& x, const std::vector<Candidate>& cs, int n,
                     const Options& o, FILE* csv)
{
    setup(x, n, o.seed + n, nullptr, nullptr);
    std::vector<int> vars{-2, -1};
    for (size_t i = 0; i < cs.size(); ++i) {
        vars.push_back(int(2 * i));
        vars.push_back(int(2 * i + 1));
    }
    const int nv = int(vars.size());
    std::vector<std::vector<double>> ms(nv);
    cudaEvent_t e0, e1;
    CUDA_TRY(cudaEventCreate(&e0));
    CUDA_TRY(cudaEventCreate(&e1));
    for (int rep = 0; rep < o.warmup + o.reps; ++rep) {
        for (int j = 0; j < nv; ++j) {
            const int idx = (j + rep) % nv;  // rotate the order every round
            CUDA_TRY(cudaEventRecord(e0, x.stream));
            launchVariant(x, cs, vars[idx], o.group);
            CUDA_TRY(cudaEventRecord(e1, x.stream));
            CUDA_TRY(cudaEventSynchronize(e1));
            float t = 0;
            CUDA_TRY(cudaEventElapsedTime(&t, e0, e1));
            if (rep >= o.warmup)
                ms[idx].push_back(t);
        }
    }
    const double flop = 2.0 * n * double(n) * n;
    const double mD = median(ms[0]), mP = median(ms[1]);
    const double best = std::min(mD, mP);
    std::printf("  n=%d cuBLAS default %.4f ms, pedantic %.4f ms "
                "(faster: %s)\n",
                n, mD, mP, mD <= mP ? "default" : "pedantic");
    for (int j = 0; j < nv; ++j) {
        const double m = median(ms[j]);
        const double lo = *std::min_element(ms[j].begin(), ms[j].end());
        const double hi = *std::max_element(ms[j].begin(), ms[j].end());
        const double gf = flop / (m * 1e-3) / 1e9;
        const std::string nm = variantName(cs, vars[j]);
        std::fprintf(csv,
                     "%s,%d,%s,%zu,%.5f,%.5f,%.5f,%.1f,%.2f,%.2f,%.2f,%.2f\n",
                     o.tag.c_str(), n, nm.c_str(), ms[j].size(), m, lo, hi,
                     gf, 100 * mD / m, 100 * mP / m, 100 * best / m,
                     100 * gf / (kPeakTflops * 1e3));
        std::printf("  %-34s %8.4f ms %9.1f GF/s  %%def %6.2f  %%ped %6.2f"
                    "  %%best %6.2f  %%peak %5.2f\n",
                    nm.c_str(), m, gf, 100 * mD / m, 100 * mP / m,
                    100 * best / m, 100 * gf / (kPeakTflops * 1e3));
    }
    std::fflush(csv);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    teardown(x);
}

static void resources(const std::vector<Candidate>& cs, const Options& o)
{
    const std::string path = o.csv + ".res";
    FILE* f = std::fopen(path.c_str(), "w");
    if (f)
        std::fprintf(f, "kernel,regs,local_bytes,static_smem,dyn_smem,"
                        "threads,blocks_per_sm\n");
    for (const Candidate& k : cs)
        for (int p = 0; p < 2; ++p) {
            cudaFuncAttributes at;
            const void* fn = p == 0 ? k.pipedFn : k.syncFn;
            const size_t dyn = p == 0 ? k.pipedSmem : k.syncSmem;
            CUDA_TRY(cudaFuncGetAttributes(&at, fn));
            int bps = 0;
            CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                &bps, fn, k.threads, dyn));
            std::printf("  res %-28s %-5s regs %3d local %4zu dyn %6zu B "
                        "blocks/SM %d\n",
                        k.name, p == 0 ? "piped" : "sync", at.numRegs,
                        at.localSizeBytes, dyn, bps);
            if (f)
                std::fprintf(f, "%s.%s,%d,%zu,%zu,%zu,%d,%d\n", k.name,
                             p == 0 ? "piped" : "sync", at.numRegs,
                             at.localSizeBytes, at.sharedSizeBytes, dyn,
                             k.threads, bps);
        }
    if (f)
        std::fclose(f);
}

int main(int argc, char** argv)
{
    Options o;
    bool list = false;
    if (!parseArgs(argc, argv, o, list)) {
        usage(argv[0]);
        return 2;
    }
    std::vector<Candidate> cs = allCandidates();
    if (list) {
        for (const Candidate& k : cs)
            std::printf("%s\t%s\n", k.name, k.what);
        return 0;
    }
    if (o.dry)
        return dryRun(o);
    if (!o.only.empty() || !o.profile.empty()) {
        const std::string want = "," + (o.profile.empty() ? o.only
                                                           : o.profile) + ",";
        std::vector<Candidate> keep;
        for (const Candidate& k : cs)
            if (want.find("," + std::string(k.name) + ",") !=
                std::string::npos)
                keep.push_back(k);
        if (keep.empty()) {
            std::fprintf(stderr, "no candidate matches '%s'\n",
                         want.c_str());
            return 2;
        }
        cs = keep;
    }
    Ctx x{};
    CUDA_TRY(cudaStreamCreateWithFlags(&x.stream, cudaStreamNonBlocking));
    CUBLAS_TRY(cublasCreate(&x.blasDef));
    CUBLAS_TRY(cublasCreate(&x.blasPed));
    CUBLAS_TRY(cublasSetStream(x.blasDef, x.stream));
    CUBLAS_TRY(cublasSetStream(x.blasPed, x.stream));
    CUBLAS_TRY(cublasSetMathMode(x.blasDef, CUBLAS_DEFAULT_MATH));
    CUBLAS_TRY(cublasSetMathMode(x.blasPed, CUBLAS_PEDANTIC_MATH));
    for (const Candidate& k : cs) {
        CUDA_TRY(cudaFuncSetAttribute(
            k.pipedFn, cudaFuncAttributeMaxDynamicSharedMemorySize,
            int(k.pipedSmem)));
        CUDA_TRY(cudaFuncSetAttribute(
            k.syncFn, cudaFuncAttributeMaxDynamicSharedMemorySize,
            int(k.syncSmem)));
    }
    if (!o.profile.empty()) {
        // One launch each, nothing else launched: the piped kernel of
        // every named candidate (list order), then cuBLAS default and
        // pedantic: ncu --launch-count (names + 2).
        const int n = o.sizes[0];
        setup(x, n, o.seed + n, nullptr, nullptr);
        for (size_t i = 0; i < cs.size(); ++i)
            launchVariant(x, cs, int(2 * i), o.group);
        launchVariant(x, cs, -2, o.group);
        launchVariant(x, cs, -1, o.group);
        CUDA_TRY(cudaStreamSynchronize(x.stream));
        teardown(x);
        std::printf("profile:");
        for (const Candidate& k : cs)
            std::printf(" %s", k.name);
        std::printf(", cublas_default, cublas_pedantic at %d\n", n);
        return 0;
    }
    cudaDeviceProp prop;
    CUDA_TRY(cudaGetDeviceProperties(&prop, 0));
    int clk = 0;
    cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0);
    std::printf("device: %s, %d SMs, CC %d.%d, clock attr %d kHz\n",
                prop.name, prop.multiProcessorCount, prop.major, prop.minor,
                clk);
    resources(cs, o);
    int fails = 0;
    if (!o.noCheck) {
        FILE* chk = std::fopen((o.csv + ".checks").c_str(), "w");
        if (!chk) {
            std::perror("checks csv");
            return 4;
        }
        std::fprintf(chk, "tag,n,variant,check,value,limit,verdict\n");
        fails += checkSize(x, cs, o.checkN, o, chk);
        for (int n : o.sizes)
            if (n == 4096)
                fails += checkSize(x, cs, n, o, chk);
        std::fclose(chk);
    }
    const std::string tmp = o.csv + ".tmp";
    FILE* csv = std::fopen(tmp.c_str(), "w");
    if (!csv) {
        std::perror("csv");
        return 4;
    }
    std::fprintf(csv, "tag,n,variant,reps,median_ms,min_ms,max_ms,gflops,"
                      "pct_cublas_default,pct_cublas_pedantic,"
                      "pct_cublas_best,pct_peak\n");
    for (int n : o.sizes)
        timeSize(x, cs, n, o, csv);
    std::fclose(csv);
    std::rename(tmp.c_str(), o.csv.c_str());
    cublasDestroy(x.blasDef);
    cublasDestroy(x.blasPed);
    std::printf("checks failed: %d\n", fails);
    return fails ? 1 : 0;
}
