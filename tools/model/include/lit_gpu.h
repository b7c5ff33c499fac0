// lit_gpu.h: what the GPU provides, stood in for on the host, so that a
// kernel file tangled from day74.nw compiles with g++ and runs one block
// in the CPU model of tools/model/model.cc (see tools/model/check.py).
// The primitives record their call site (__FILE__, __LINE__: through the
// tangle's #line directives, a line of day74.nw) for the model's messages.
#ifndef LIT_GPU_H
#define LIT_GPU_H

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
// Every __shared__ variable lands in one section, which the model poisons
// at the start of each block and tracks word by word.
#define __shared__ static __attribute__((section("lit_shared"), aligned(16)))
#define __align__(n) alignas(n)
// `extern __shared__ T name[];` (dynamic shared memory, in a function):
// check.py rewrites it to LIT_DYNAMIC_SHARED(name, T), a pointer to the
// block's dynamic shared memory, sized by the launch, whose address has
// the declared alignment and no more (the model's dynamicShared()).
#define LIT_DYNAMIC_SHARED(name, ...)                                        \
    struct lit_dynamic_##name { __VA_ARGS__ name[1]; };                      \
    auto* const name = static_cast<                                          \
        std::remove_reference_t<decltype(lit_dynamic_##name::name[0])>*>(    \
        lit::dynamicShared(alignof(lit_dynamic_##name), __FILE__, __LINE__))

struct dim3 {
    unsigned x, y, z;
    constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1)
        : x(x_), y(y_), z(z_) {}
};
struct alignas(16) float4 { float x, y, z, w; };
extern dim3 threadIdx, blockIdx, blockDim, gridDim;

namespace lit {
void syncthreads(const char* file, int line);
void memcpyAsync(const char* file, int line, void* dst, const void* src,
                 std::size_t bytes, std::size_t zfill = 0);
void commit(const char* file, int line);
void waitPrior(std::size_t n, const char* file, int line);
float fma(float a, float b, float c);
// The launch's dynamic shared memory, aligned to `align` exactly.
void* dynamicShared(std::size_t align, const char* file, int line);
// What the runtime is told: the attribute, and each launch's bytes.
void setMaxDynamic(const void* kernel, int bytes);
void launched(const void* kernel, std::size_t dynamicBytes);
// cuda::pipeline at block scope: the model keeps the shared state; each
// thread's object holds its head and tail (counts of stage uses).
struct PipeHandle { long head = 0, tail = 0; };
void pipeMake(int stages, const char* file, int line);
void pipeAcquire(PipeHandle& p, const char* file, int line);
void pipeCommit(PipeHandle& p, const char* file, int line);
void pipeWait(PipeHandle& p, const char* file, int line);
void pipeRelease(PipeHandle& p, const char* file, int line);
void pipeCopy(PipeHandle& p, const char* file, int line, void* dst,
              const void* src, std::size_t bytes);
}  // namespace lit

#define __syncthreads() lit::syncthreads(__FILE__, __LINE__)
#define __pipeline_memcpy_async(...) \
    lit::memcpyAsync(__FILE__, __LINE__, __VA_ARGS__)
#define __pipeline_commit() lit::commit(__FILE__, __LINE__)
#define __pipeline_wait_prior(n) lit::waitPrior((n), __FILE__, __LINE__)
#define __fmaf_rn(a, b, c) lit::fma((a), (b), (c))

// ---- cooperative groups and libcu++'s pipeline (block scope) ------------
namespace cooperative_groups {
struct thread_block {
    void sync_at(const char* file, int line) const
    { lit::syncthreads(file, line); }
};
inline thread_block this_thread_block() { return thread_block(); }
}  // namespace cooperative_groups

namespace cuda {
enum thread_scope { thread_scope_system, thread_scope_device,
                    thread_scope_block, thread_scope_thread };
template <std::size_t Align> struct aligned_size_t {
    std::size_t value;
    explicit constexpr aligned_size_t(std::size_t v) : value(v) {}
    constexpr operator std::size_t() const { return value; }
};
// The state lives in the model; this is its placeholder in shared memory.
template <thread_scope Scope, std::uint8_t Stages>
struct pipeline_shared_state { alignas(8) unsigned char unused[16]; };
template <thread_scope Scope> class pipeline {
public:
    lit::PipeHandle h;
    void producer_acquire_at(const char* f, int l)
    { lit::pipeAcquire(h, f, l); }
    void producer_commit_at(const char* f, int l) { lit::pipeCommit(h, f, l); }
    void consumer_wait_at(const char* f, int l) { lit::pipeWait(h, f, l); }
    void consumer_release_at(const char* f, int l)
    { lit::pipeRelease(h, f, l); }
};
template <class Group, thread_scope Scope, std::uint8_t Stages>
pipeline<Scope> make_pipeline_at(const char* f, int l, const Group&,
                                 pipeline_shared_state<Scope, Stages>*)
{
    static_assert(Scope == thread_scope_block,
                  "the model knows block-scope pipelines only");
    lit::pipeMake(Stages, f, l);
    return pipeline<Scope>();
}
template <class Size, thread_scope Scope>
void memcpy_async_at(const char* f, int l, void* dst, const void* src,
                     Size size, pipeline<Scope>& pipe)
{
    lit::pipeCopy(pipe.h, f, l, dst, src, static_cast<std::size_t>(size));
}
}  // namespace cuda

#ifndef LIT_MODEL_IMPL  // the model itself calls none of these
#define sync() sync_at(__FILE__, __LINE__)
#define producer_acquire() producer_acquire_at(__FILE__, __LINE__)
#define producer_commit() producer_commit_at(__FILE__, __LINE__)
#define consumer_wait() consumer_wait_at(__FILE__, __LINE__)
#define consumer_release() consumer_release_at(__FILE__, __LINE__)
#define make_pipeline(...) make_pipeline_at(__FILE__, __LINE__, __VA_ARGS__)
#define memcpy_async(...) memcpy_async_at(__FILE__, __LINE__, __VA_ARGS__)
#endif

// ---- the runtime API the file's host half names (never called) ----------
typedef struct lit_stream* cudaStream_t;
enum cudaError_t { cudaSuccess = 0, cudaErrorInvalidValue = 1,
                   cudaErrorMisalignedAddress = 716,
                   cudaErrorNoKernelImageForDevice = 209 };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
                         cudaFuncAttributePreferredSharedMemoryCarveout = 9 };
enum { cudaSharedmemCarveoutDefault = -1,
       cudaSharedmemCarveoutMaxShared = 100 };
struct cudaFuncAttributes {
    std::size_t sharedSizeBytes; int numRegs, ptxVersion, binaryVersion;
};
inline cudaError_t cudaFuncSetAttribute(const void* fn, cudaFuncAttribute a,
                                       int value)
{
    if (a == cudaFuncAttributeMaxDynamicSharedMemorySize)
        lit::setMaxDynamic(fn, value);
    return cudaSuccess;
}
inline cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* a, const void*)
{ *a = cudaFuncAttributes(); return cudaSuccess; }
inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(
    int* b, const void*, int, std::size_t) { *b = 1; return cudaSuccess; }
inline cudaError_t cudaGetLastError() { return cudaSuccess; }
// kernel<<<grid, block, bytes, stream>>>(args): check.py rewrites it to
// LIT_LAUNCH(kernel, grid, block, bytes, stream)(args), which records the
// dynamic shared memory asked for (the model runs the kernel itself).
struct LitLaunch {
    template <class K>
    LitLaunch(K* kernel, dim3, dim3, std::size_t bytes = 0,
              cudaStream_t = nullptr)
    { lit::launched(reinterpret_cast<const void*>(kernel), bytes); }
    template <class... A> void operator()(A&&...) const {}
};
#define LIT_LAUNCH(...) LitLaunch(__VA_ARGS__)

#endif
