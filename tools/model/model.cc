// model.cc: the CPU model of the async-copy rules that tools/model/check.py
// links with a kernel file compiled as host C++ (include/lit_gpu.h stands
// in for the GPU): one block of matmulTilePiped, its threads as coroutines,
// failing at the first read or copy the rules (check.py's docstring; each
// below names its PTX ISA section) do not allow. Dynamic shared memory:
// one area of the launch's bytes (lit_launch_piped, check.py's appendix),
// at an address with the declared alignment and no more.
// Usage: model --sizes 64,128 --stage-offset BYTES
// Prints one line: "PASS\truns\tmost" (most: the most K-slices one thread
// had in flight) or "FAIL\tN\torder\tmessage\ttrace" (trace: a failing
// read's return addresses, offsets into the binary); exit 0 or 1.
#include <dlfcn.h>
#include <execinfo.h>
#include <ucontext.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#define LIT_MODEL_IMPL
#include <lit_gpu.h>

void matmulTilePiped(const float* a, const float* b, float* c, int n);
extern "C" const int lit_block_k;             // kBlockK: a slice's depth
extern "C" const std::size_t lit_stage_bytes;  // sizeof(StageTiles)
extern "C" const int lit_threads;              // kThreads
extern "C" const int lit_tile;                 // kBlockM == kBlockN
extern "C" const int lit_stages;               // kStages
extern "C" char __start_lit_shared[], __stop_lit_shared[];
// The program's entry points: configure, then launch matmulTilePiped.
extern "C" int lit_launch_piped(const float* a, const float* b, float* c,
                                int n);

dim3 threadIdx, blockIdx, blockDim, gridDim;

namespace lit {
namespace {

struct Site { const char* file = nullptr; int line = 0; };
enum Mech { GROUP, PIPE };          // thread-scope groups, or cuda::pipeline
enum State { UNINIT, PENDING, LANDED };
enum Block { RUN, BAR, ACQ, WAIT, DONE };

struct Copy {
    int thread, slice;
    char tile;                      // 'A' or 'B': the matrix it copies
    std::size_t first, count;       // its words: first to first + count - 1
    Mech mech;
    long seq = -1;                  // GROUP: commit group; PIPE: stage use
    Site issue, commit, land;
    bool landed = false;
    int lander = -1;                // whose wait it landed at
    long waits = 0;                 // the issuer's waits before the issue
    uint32_t epoch = 0;             // GROUP: the lander's clock then
};
struct Read { int thread; uint32_t epoch; };
struct Word {
    State state = UNINIT;
    int copy = -1, prev = -1;       // the copy into it, and the one before
    float value = 0;
    std::vector<Read> reads;        // since the last copy into it
};
struct Thread {
    ucontext_t ctx;
    Block st = RUN;
    Site at, lastWait, lastBar;
    long seq = 0, waitN = -1, head = 0, tail = 0, waits = 0;
    std::vector<int> open;          // copies not yet committed
    std::deque<std::vector<int>> groups;  // committed, oldest first
    std::map<int, int> flying;      // K-slice: its copies not yet landed
    long nextGroup = 0;
    int mech = -1;  // the completion kind it uses (PTX ISA 9.7.9.25.1)
    Site mechAt;                    // where it first used it
    const char* mechWhat = "";      // and what it used there
};
struct Use {                        // one use of a pipeline stage
    int produced = 0, consumed = 0;
    std::vector<uint32_t> pvc, cvc, waited;
    std::vector<int> copies;
};

int T, cur, n, pipeStages = 0;  // pipeStages: cuda::pipeline's depth
long stageOff = -1;  // -1: no static stage array (dynamic: at dynBase)
// CUDA C++ Programming Guide, "Technical Specifications per Compute
// Capability": 48 KiB of shared memory per block without the opt-in
// (cudaFuncAttributeMaxDynamicSharedMemorySize), 227 KiB with it (9.0).
constexpr std::size_t kStaticMax = 48 * 1024, kOptInMax = 227 * 1024;
constexpr std::size_t kAreaAlign = 256;
__attribute__((section("lit_shared"), aligned(kAreaAlign)))
char dynamicArea[kOptInMax + kAreaAlign];
char* dynBase = nullptr;            // this launch's dynamic shared memory
std::size_t dynBytes = 0, dynAlign = 0;
Site dynSite;                       // its extern __shared__ declaration
int maxDynamic = 0;                 // matmulTilePiped's attribute
std::string launchError;
bool lockstep;
std::vector<Thread> th;
constexpr std::size_t kStack = 256 * 1024;  // each thread's, kept across runs
std::vector<std::unique_ptr<char[]>> stacks;
std::vector<std::vector<uint32_t>> vc;  // vc[t][u]: what t knows of u
std::vector<Word> words;
std::vector<Copy> copies;
std::vector<Use> uses;
std::vector<float> A, B, C;
ucontext_t mainCtx;
std::string failure, trace;  // trace: the failing read's return addresses
std::size_t mostFlying = 0;  // the most K-slices one thread had in flight

constexpr uint32_t kTag = 0x7FE00000u;  // a quiet NaN, payload: the word
float token(std::size_t i)
{
    const uint32_t bits = kTag | static_cast<uint32_t>(i);
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}
bool isToken(float f, std::size_t* i)
{
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    *i = bits & 0x1FFFFFu;
    return (bits & 0xFFE00000u) == kTag;
}

std::string fmt(const char* f, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, f);
    std::vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    return buf;
}
std::string at(Site s)
{
    return s.file ? fmt("%s:%d", s.file, s.line) : std::string("(none)");
}
std::string threads(const std::vector<int>& ts)  // "threads 1-3, 7"
{
    std::string out;
    for (std::size_t i = 0; i < ts.size();) {
        std::size_t j = i;
        while (j + 1 < ts.size() && ts[j + 1] == ts[j] + 1)
            ++j;
        out += (out.empty() ? "" : ", ") + (j == i ? fmt("%d", ts[i])
                : fmt("%d-%d", ts[i], ts[j]));
        i = j + 1;
    }
    return (ts.size() == 1 ? "thread " : "threads ") + out;
}

[[noreturn]] void fail(const std::string& msg)
{
    if (failure.empty())
        failure = msg;
    setcontext(&mainCtx);
    std::abort();
}
void yield() { swapcontext(&th[cur].ctx, &mainCtx); }
void step() { if (lockstep) yield(); }   // lockstep: one primitive a turn

// Where shared word i sits: "stage 1's A tile" (the stages: the static
// array, else carved from the start of dynamic shared memory).
std::string place(std::size_t i)
{
    const long at = stageOff >= 0 ? stageOff
                    : dynBase ? static_cast<long>(dynBase - __start_lit_shared)
                              : -1;
    const long off = static_cast<long>(i * 4) - at;
    const long sb = static_cast<long>(lit_stage_bytes);
    if (at < 0 || off < 0 || off >= lit_stages * sb)
        return fmt("shared memory (byte %zu of the block's)", i * 4);
    return fmt("stage %ld's %c tile", off / sb, off % sb < sb / 2 ? 'A' : 'B');
}
std::string lastWait(int t)
{
    const Thread& me = th[t];
    if (!me.lastWait.file)
        return fmt("thread %d has not waited yet", t);
    return fmt("thread %d's last wait was %s at %s", t, me.waitN >= 0
               ? fmt("__pipeline_wait_prior(%ld)", me.waitN).c_str()
               : "consumer_wait()", at(me.lastWait).c_str());
}
std::string lastBar(int t)
{
    return th[t].lastBar.file ? "its last __syncthreads() at " +
           at(th[t].lastBar) : std::string("no __syncthreads() yet");
}

// PTX ISA, "Completion Mechanisms for Asynchronous Copy Operations": a
// copy is completed through the async-group completion (commit_group and
// wait_group: __pipeline_commit, __pipeline_wait_prior) or the
// mbarrier-based one (cuda::pipeline's producer_commit, consumer_wait).
// The model follows one of them per thread, and fails a thread that uses
// both rather than guess which one completes its copies.
void claim(Mech m, const char* what, Site s)
{
    Thread& me = th[cur];
    if (me.mech < 0)
        me.mech = m, me.mechAt = s, me.mechWhat = what;
    else if (me.mech != m)
        fail(fmt("thread %d uses %s at %s after %s at %s: the model tracks "
                 "a thread's copies through one of the completion "
                 "mechanisms, the async-group one (__pipeline_memcpy_async, "
                 "__pipeline_commit, __pipeline_wait_prior) or the "
                 "mbarrier-based one (cuda::pipeline), not both (PTX ISA, "
                 "Completion Mechanisms for Asynchronous Copy Operations)",
                 cur, what, at(s).c_str(), me.mechWhat,
                 at(me.mechAt).c_str()));
}

void join(std::vector<uint32_t>& into, const std::vector<uint32_t>& from)
{
    for (int u = 0; u < T; ++u)
        into[u] = std::max(into[u], from[u]);
}

// PTX ISA, cp.async.wait_group: the copies of a group
// are complete, and their writes visible, to the thread that waited;
// another thread sees them only through an ordering from that wait, here a
// bar.sync (PTX ISA, bar{.cta}: memory ordering among the CTA's threads).
// Through an mbarrier (cuda::pipeline), the copies are visible to every
// thread that waited on the phase they completed, and to threads ordered
// after one of those.
bool visible(int t, const Copy& c)
{
    if (c.mech == GROUP)
        return c.thread == t || vc[t][c.thread] >= c.epoch;
    const Use& u = uses[c.seq];
    if (u.waited[t])
        return true;
    for (int w = 0; w < T; ++w)
        if (u.waited[w] && vc[t][w] >= u.waited[w])
            return true;
    return false;
}

std::string copyName(const Copy& c)
{
    return fmt("the copy of K-slice %d's %c by thread %d (%s)", c.slice,
               c.tile, c.thread, at(c.issue).c_str());
}

// A read that breaks a rule fails with its call chain, as offsets into the
// binary that check.py turns into day74.nw lines (addr2line): where in the
// kernel the read is.
[[noreturn]] void failRead(const std::string& msg)
{
    void* frames[32];
    const int k = backtrace(frames, 32);
    trace.clear();
    for (int f = 0; f < k; ++f) {
        Dl_info info;
        if (dladdr(frames[f], &info) && info.dli_fbase)
            trace += fmt("%s0x%zx", trace.empty() ? "" : " ",
                         static_cast<std::size_t>(
                             static_cast<char*>(frames[f]) -
                             static_cast<char*>(info.dli_fbase) - 1));
    }
    fail(msg);
}

// Why copy c, still pending, has not landed for thread t.
std::string notLanded(int t, const Copy& c)
{
    if (c.mech == PIPE)
        return fmt("it lands when a consumer_wait() for that stage returns, "
                   "and thread %d has not waited for it (%s)", t,
                   lastWait(t).c_str());
    if (c.seq < 0)
        return fmt("it was never committed (__pipeline_commit), so no wait "
                   "covers it; %s", lastWait(t).c_str());
    if (c.thread == t && c.waits == th[t].waits)
        return fmt("thread %d issued it (and committed its group at %s) "
                   "after its last wait, so no wait covers it yet (%s)", t,
                   at(c.commit).c_str(), lastWait(t).c_str());
    if (c.thread == t)
        return fmt("its group (committed at %s) is still in flight: %s, "
                   "which leaves up to %ld of its newest groups in flight, "
                   "this one among them", at(c.commit).c_str(),
                   lastWait(t).c_str(), th[t].waitN);
    return fmt("it lands only at thread %d's wait that covers its group"
               " (committed at %s), which thread %d has not reached; %s",
               c.thread, at(c.commit).c_str(), c.thread,
               lastWait(c.thread).c_str());
}

float readWord(std::size_t i)
{
    const int t = cur;
    Word& w = words[i];
    if (w.state == UNINIT)
        failRead(fmt("thread %d reads %s before any copy has written it; "
                     "%s; %s", t, place(i).c_str(), lastWait(t).c_str(),
                     lastBar(t).c_str()));
    const Copy& c = copies[w.copy];
    // A read of what the copy overwrites: the copy came too early.
    if (w.state == PENDING && c.thread != t && w.prev >= 0 &&
        copies[w.prev].landed && visible(t, copies[w.prev]))
        failRead(fmt("race: thread %d's copy of K-slice %d's %c into %s (%s) "
                     "overwrites an element of K-slice %d that thread %d "
                     "still reads: no __syncthreads() orders this read "
                     "before that copy (thread %d: %s)", c.thread, c.slice,
                     c.tile, place(i).c_str(), at(c.issue).c_str(),
                     copies[w.prev].slice, t, c.thread,
                     lastBar(c.thread).c_str()));
    if (w.state == PENDING)
        failRead(fmt("thread %d reads %s before %s has landed: %s", t,
                     place(i).c_str(), copyName(c).c_str(),
                     notLanded(t, c).c_str()));
    if (!visible(t, c))
        failRead(fmt("race: thread %d reads %s, written by %s, which "
                     "landed at thread %d's %s at %s, and no __syncthreads() "
                     "orders that wait before this read (thread %d: %s)", t,
                     place(i).c_str(), copyName(c).c_str(), c.lander,
                     c.mech == PIPE ? "consumer_wait()"
                                    : "__pipeline_wait_prior",
                     at(c.land).c_str(), t, lastBar(t).c_str()));
    for (Read& r : w.reads)   // since the last copy: each thread's latest
        if (r.thread == t) {
            r.epoch = vc[t][t];
            return w.value;
        }
    w.reads.push_back({t, vc[t][t]});
    return w.value;
}

float operand(float x)
{
    std::size_t i;
    return isToken(x, &i) && i < words.size() ? readWord(i) : x;
}

// The matrix a copy of `count` words from f reads, 'A' or 'B', and the
// offset of its first word in it.
std::pair<char, std::size_t> source(Site s, const float* f, std::size_t count)
{
    for (const std::vector<float>* m : {&A, &B})
        if (f >= m->data() && f + count <= m->data() + m->size())
            return {m == &A ? 'A' : 'B', f - m->data()};
    fail(fmt("thread %d's copy at %s reads outside A and B", cur,
             at(s).c_str()));
}

// Copy id (c, described by what) starts writing its words: f's first
// `kept` words, zeros after (see issue()).
void writeWords(int id, const Copy& c, const std::string& what,
                const float* f, std::size_t kept)
{
    const int t = c.thread;
    for (std::size_t i = c.first; i < c.first + c.count; ++i) {
        Word& w = words[i];
        if (w.state == PENDING)
            fail(what + " overwrites an element " + copyName(copies[w.copy])
                 + " is still writing: two copies in flight to one address "
                 "land in no defined order");
        if (w.state == LANDED && !visible(t, copies[w.copy]))
            fail(what + " overwrites an element " + copyName(copies[w.copy])
                 + " wrote, with no barrier after that copy landed");
        for (const Read& r : w.reads)
            if (r.thread != t && vc[t][r.thread] < r.epoch)
                fail(fmt("race: %s overwrites an element of K-slice %d that "
                         "thread %d read with no barrier between that read "
                         "and this copy (thread %d: %s); thread %d may still "
                         "be computing on it", what.c_str(),
                         copies[w.copy].slice, r.thread, t,
                         lastBar(t).c_str(), r.thread));
        w.state = PENDING;
        w.prev = std::exchange(w.copy, id);
        w.value = i - c.first < kept ? f[i - c.first] : 0.0f;
        w.reads.clear();
    }
}

// A copy issued: PTX ISA, cp.async: from its issue to
// its completion the destination's bytes are being written, in no order
// with other accesses; so no other thread may read or write them then
// unless ordered before the issue, nor another copy be in flight to them.
// seq: the copy's stage use (PIPE), or -1 until its commit (GROUP).
void issue(Site s, void* dst, const void* src, std::size_t bytes,
           std::size_t zfill, Mech mech, long seq)
{
    claim(mech, mech == PIPE ? "cuda::memcpy_async"
                             : "__pipeline_memcpy_async", s);
    const int t = cur;
    char* d = static_cast<char*>(dst);
    const float* f = static_cast<const float*>(src);
    if (!(bytes == 4 || bytes == 8 || bytes == 16) || zfill > bytes)
        fail(fmt("thread %d copies %zu bytes at %s: cp.async copies 4, 8 or "
                 "16", t, bytes, at(s).c_str()));
    const bool dynamic = d >= dynamicArea &&
                         d < dynamicArea + sizeof dynamicArea;
    if (dynamic && reinterpret_cast<std::uintptr_t>(d) % bytes)
        fail(fmt("thread %d's copy at %s: its destination, byte %ld of "
                 "dynamic shared memory, is not %zu-byte aligned: the "
                 "extern __shared__ array at %s is declared %zu-byte "
                 "aligned, and that is all its address is promised", t,
                 at(s).c_str(), static_cast<long>(d - dynBase), bytes,
                 at(dynSite).c_str(), dynAlign));
    if (d < __start_lit_shared || d + bytes > __stop_lit_shared ||
        reinterpret_cast<std::uintptr_t>(d) % bytes ||
        reinterpret_cast<std::uintptr_t>(src) % bytes)
        fail(fmt("thread %d's copy at %s: the destination is not shared "
                 "memory, or a pointer is not %zu-byte aligned", t,
                 at(s).c_str(), bytes));
    const auto [tile, off] = source(s, f, bytes / 4);
    Copy c;
    c.thread = t, c.tile = tile, c.mech = mech, c.seq = seq, c.issue = s;
    c.waits = th[t].waits;
    c.slice = static_cast<int>((tile == 'A' ? off % n : off / n) /
                               lit_block_k);
    c.first = (d - __start_lit_shared) / 4, c.count = bytes / 4;
    const std::string what = fmt(
        "thread %d's copy of K-slice %d's %c into %s (%s)", t, c.slice,
        tile, place(c.first).c_str(), at(s).c_str());
    if (dynamic && (!dynBase || d < dynBase || d + bytes > dynBase +
                    dynBytes))
        fail(what + fmt(" writes bytes %ld to %ld of dynamic shared memory, "
                        "past the %zu bytes the launch gives "
                        "matmulTilePiped: the launch's bytes (kStageBytes) "
                        "must cover all %d stages, %zu bytes",
                        static_cast<long>(d - dynBase),
                        static_cast<long>(d - dynBase + bytes) - 1, dynBytes,
                        lit_stages, lit_stages * lit_stage_bytes));
    const int id = static_cast<int>(copies.size());
    writeWords(id, c, what, f, (bytes - zfill) / 4);
    copies.push_back(c);
    th[t].open.push_back(id);
    ++th[t].flying[c.slice];
    mostFlying = std::max(mostFlying, th[t].flying.size());
    step();
}

// A copy lands: its words hold its data, visible as visible() says.
void landAll(int id, Site s)
{
    Copy& c = copies[id];
    c.landed = true, c.land = s, c.lander = cur, c.epoch = vc[cur][cur];
    if (--th[c.thread].flying[c.slice] == 0)
        th[c.thread].flying.erase(c.slice);
    for (std::size_t i = c.first; i < c.first + c.count; ++i)
        if (words[i].copy == id && words[i].state == PENDING)
            words[i].state = LANDED;
}

Use& use(long seq)
{
    while (static_cast<long>(uses.size()) <= seq) {
        uses.emplace_back();
        Use& u = uses.back();
        u.pvc.assign(T, 0), u.cvc.assign(T, 0), u.waited.assign(T, 0);
    }
    return uses[seq];
}

bool ready(const Thread& me)
{
    switch (me.st) {
    case RUN: return true;
    case ACQ:
        return me.seq < pipeStages ||
               use(me.seq - pipeStages).consumed == T;
    case WAIT: return use(me.seq).produced == T;
    default: return false;
    }
}
void blockOn(Block b, long seq, Site s)
{
    Thread& me = th[cur];
    me.seq = seq, me.at = s, me.st = b;
    while (!ready(me))
        yield();
    me.st = RUN;
}

void entry()
{
    matmulTilePiped(A.data(), B.data(), C.data(), n);
    th[cur].st = DONE;
}

// The threads whose state p accepts, in order.
template <class P> std::vector<int> threadsWhere(P p)
{
    std::vector<int> ts;
    for (int t = 0; t < T; ++t)
        if (p(th[t]))
            ts.push_back(t);
    return ts;
}

// Why the block hangs: bar, the threads at a barrier; the others wait in
// the pipeline, grouped by where and what, or have returned.
std::string hang(const std::vector<int>& bar)
{
    std::string msg = "the block hangs:";
    if (!bar.empty())
        msg += fmt(" %s wait at __syncthreads() (%s)", threads(bar).c_str(),
                   at(th[bar[0]].at).c_str());
    for (int t = 0; t < T; ++t) {
        const Thread& me = th[t];
        const std::vector<int> same = threadsWhere([&me](const Thread& u) {
            return u.st == me.st && u.seq == me.seq && u.at.line == me.at.line;
        });
        if (me.st == BAR || me.st == DONE || same[0] != t)
            continue;
        const long seq = me.st == ACQ ? me.seq - pipeStages : me.seq;
        const std::vector<int> missing = threadsWhere([&](const Thread& u) {
            return (me.st == WAIT ? u.head : u.tail) <= seq;
        });
        msg += fmt("%s %s wait at %s (%s) for stage %ld (its use %ld)",
                   msg.back() == ':' ? "" : ";", threads(same).c_str(),
                   me.st == WAIT ? "consumer_wait()" : "producer_acquire()",
                   at(me.at).c_str(), seq % pipeStages, seq);
        msg += fmt(", which %s never %s", threads(missing).c_str(),
                   me.st == WAIT ? "committed (producer_commit)"
                                 : "released (consumer_release)");
    }
    const std::vector<int> done =
        threadsWhere([](const Thread& x) { return x.st == DONE; });
    if (!done.empty())
        msg += fmt("; %s returned", threads(done).c_str());
    return msg;
}

// All threads that can go on are stuck: a barrier to release, or a hang.
bool release()
{
    const std::vector<int> bar =
        threadsWhere([](const Thread& x) { return x.st == BAR; });
    if (bar.size() != static_cast<std::size_t>(T)) {
        failure = hang(bar);
        return false;
    }
    // PTX ISA, "bar, barrier": bar.sync (__syncthreads()) is
    // barrier.sync.aligned, so every thread of the CTA must execute the
    // same barrier instruction: a release that mixes call sites fails.
    auto there = [](Site s) {   // "threads 0-127": those waiting at s
        return threads(threadsWhere([s](const Thread& x) {
            return x.at.line == s.line && !std::strcmp(x.at.file, s.file);
        }));
    };
    for (int t = 1; t < T; ++t) {
        const Site a = th[0].at, b = th[t].at;
        if (a.line == b.line && !std::strcmp(a.file, b.file))
            continue;
        failure = fmt("divergent barrier: %s wait at __syncthreads() at "
                      "%s and %s at %s; bar.sync is aligned, every "
                      "thread of the block must reach the same barrier "
                      "statement (PTX ISA, bar, barrier)", there(a).c_str(),
                      at(a).c_str(), there(b).c_str(), at(b).c_str());
        return false;
    }
    std::vector<uint32_t> m(T, 0);
    for (int t = 0; t < T; ++t)
        join(m, vc[t]);
    for (int t = 0; t < T; ++t) {
        vc[t] = m;
        ++vc[t][t];
        th[t].st = RUN;
    }
    return true;
}

bool runBlock(const std::vector<int>& order)
{
    const std::size_t nWords = (__stop_lit_shared - __start_lit_shared) / 4;
    float* sh = reinterpret_cast<float*>(__start_lit_shared);
    words.assign(nWords, Word());
    for (std::size_t i = 0; i < nWords; ++i)
        sh[i] = token(i);   // poison: every read of shared memory is checked
    copies.clear(), uses.clear(), failure.clear(), trace.clear();
    pipeStages = 0;
    vc.assign(T, std::vector<uint32_t>(T, 0));
    th.resize(T);
    for (int t = 0; t < T; ++t) {
        Thread& me = th[t];
        me = Thread();
        if (stacks.size() <= static_cast<std::size_t>(t))
            stacks.emplace_back(new char[kStack]);
        vc[t][t] = 1;
        getcontext(&me.ctx);
        me.ctx.uc_stack.ss_sp = stacks[t].get();
        me.ctx.uc_stack.ss_size = kStack;
        me.ctx.uc_link = &mainCtx;
        makecontext(&me.ctx, entry, 0);
    }
    for (;;) {
        bool any = false;
        for (int t : order)
            if (ready(th[t])) {
                th[t].st = RUN;
                cur = t;
                threadIdx = dim3(static_cast<unsigned>(t));
                swapcontext(&mainCtx, &th[t].ctx);
                if (!failure.empty())
                    return false;
                any = true;
            }
        if (any)
            continue;
        if (std::all_of(th.begin(), th.end(),
                        [](const Thread& x) { return x.st == DONE; }))
            return true;
        if (!release())
            return false;
    }
}

// The last block's tile of C against the exact product: "" if it matches,
// else why not.
std::string wrongTile()
{
    const int r0 = (n / lit_tile - 1) * lit_tile;
    for (int i = r0; i < r0 + lit_tile; ++i)
        for (int j = r0; j < r0 + lit_tile; ++j) {
            float want = 0;
            for (int k = 0; k < n; ++k)
                want += A[i * n + k] * B[k * n + j];
            if (std::isnan(C[i * n + j]))
                return fmt("C[%d][%d] is NaN: the loop uses a value of shared "
                           "memory other than through computeTile's "
                           "__fmaf_rn, which the model cannot check", i, j);
            if (C[i * n + j] != want)
                return fmt("the loop keeps the copy rules, yet C[%d][%d] is "
                           "%g where the product is %g: it computes on the "
                           "wrong slices", i, j,
                           static_cast<double>(C[i * n + j]),
                           static_cast<double>(want));
        }
    return "";
}

// One size: the program's launch, then the last block in each order; prints
// a FAIL line and returns false at the first failure.
bool runSize(int size, int* runs)
{
    n = size;
    const int g = n / lit_tile;
    gridDim = dim3(g, g);
    blockIdx = dim3(g - 1, g - 1);   // the last block: offsets at work
    A.assign(static_cast<std::size_t>(n) * n, 0);
    B = A;
    for (int i = 0; i < n; ++i)
        for (int k = 0; k < n; ++k) {   // small integers: sums exact
            A[i * n + k] = static_cast<float>((i * 7 + k * 3) % 5 - 2);
            B[i * n + k] = static_cast<float>((i * 5 + k * 11) % 7 - 3);
        }
    launchError.clear();
    const int err = lit_launch_piped(A.data(), B.data(), C.data(), n);
    if (err || !launchError.empty()) {
        std::printf("FAIL\t%d\tlaunch\t%s\t\n", n, launchError.empty()
                    ? fmt("the program's launch of matmulTilePiped "
                          "returned error %d", err).c_str()
                    : launchError.c_str());
        return false;
    }
    const char* names[] = {"lockstep", "forward", "reverse", "shuffled"};
    for (int o = 0; o < 4; ++o) {
        std::vector<int> order(T);
        for (int t = 0; t < T; ++t)
            order[t] = o == 2 ? T - 1 - t : t;
        std::mt19937 gen(20);   // raw outputs: the same everywhere
        for (int t = T - 1; o == 3 && t > 0; --t)   // Fisher-Yates
            std::swap(order[t], order[gen() % (t + 1)]);
        lockstep = o == 0;
        C.assign(A.size(), 0);
        const std::string why = runBlock(order) ? wrongTile() : failure;
        if (!why.empty()) {   // trace: "" unless a read failed
            std::printf("FAIL\t%d\t%s\t%s\t%s\n", n, names[o], why.c_str(),
                        trace.c_str());
            return false;
        }
        ++*runs;
    }
    return true;
}

}  // namespace

// ---- the primitives (lit_gpu.h) --------------------------------------------
void syncthreads(const char* f, int l)
{
    Thread& me = th[cur];
    me.at = {f, l};
    me.st = BAR;
    yield();                         // the scheduler releases the block
    me.lastBar = {f, l};
}

void memcpyAsync(const char* f, int l, void* dst, const void* src,
                 std::size_t bytes, std::size_t zfill)
{
    issue({f, l}, dst, src, bytes, zfill, GROUP, -1);
}

// PTX ISA, cp.async.commit_group: the thread's copies
// not yet committed form one group, possibly empty; groups are per thread.
void commit(const char* f, int l)
{
    claim(GROUP, "__pipeline_commit", {f, l});
    Thread& me = th[cur];
    for (int id : me.open)
        copies[id].seq = me.nextGroup, copies[id].commit = {f, l};
    ++me.nextGroup;
    me.groups.push_back(std::exchange(me.open, {}));
    step();
}

// PTX ISA, cp.async.wait_group N: waits until at most
// the N most recent groups of this thread are pending; every older group of
// this thread is complete. Copies not committed are not covered. In the
// model a copy lands here, at the latest moment the rule allows.
void waitPrior(std::size_t nGroups, const char* f, int l)
{
    claim(GROUP, "__pipeline_wait_prior", {f, l});
    Thread& me = th[cur];
    while (me.groups.size() > nGroups) {
        for (int id : me.groups.front())
            landAll(id, {f, l});
        me.groups.pop_front();
    }
    me.lastWait = {f, l};
    me.waitN = static_cast<long>(nGroups);
    ++me.waits;
    step();
}

float fma(float a, float b, float c)
{
    return std::fma(operand(a), operand(b), c);
}

// cuda::pipeline<thread_scope_block>, every thread producer and consumer
// (libcu++'s pipeline: make_pipeline, producer_acquire/commit,
// consumer_wait/release). Stage use q (the q-th commit of each thread) is
// stage q % pipeStages; the copies committed to it complete on its "full"
// barrier once every thread has committed (PTX ISA,
// cp.async.mbarrier.arrive), and are visible to a thread whose consumer_wait
// saw that phase complete (PTX ISA, mbarrier.test_wait/try_wait). Use q
// may be acquired once every thread has released use q - pipeStages.
void pipeMake(int s, const char* f, int l)
{
    if (pipeStages && pipeStages != s)
        fail("two pipelines of different depths in one block");
    pipeStages = s;
    syncthreads(f, l);  // make_pipeline: one thread initialises, all sync
}
void pipeAcquire(PipeHandle& p, const char* f, int l)
{
    blockOn(ACQ, p.head, {f, l});
    if (p.head >= pipeStages)
        join(vc[cur], use(p.head - pipeStages).cvc);
    step();
}
void pipeCopy(PipeHandle& p, const char* f, int l, void* dst,
              const void* src, std::size_t bytes)
{
    issue({f, l}, dst, src, bytes, 0, PIPE, p.head);
}
void pipeCommit(PipeHandle& p, const char* f, int l)
{
    claim(PIPE, "producer_commit()", {f, l});
    Thread& me = th[cur];
    Use& u = use(p.head);
    for (int id : me.open)
        copies[id].commit = {f, l}, u.copies.push_back(id);
    me.open.clear();
    ++u.produced;
    join(u.pvc, vc[cur]);
    ++vc[cur][cur];
    me.head = ++p.head;
    step();
}
void pipeWait(PipeHandle& p, const char* f, int l)
{
    claim(PIPE, "consumer_wait()", {f, l});
    blockOn(WAIT, p.tail, {f, l});
    Use& u = use(p.tail);
    join(vc[cur], u.pvc);
    for (int id : u.copies)
        if (!copies[id].landed)
            landAll(id, {f, l});
    u.waited[cur] = vc[cur][cur];
    th[cur].lastWait = {f, l};
    th[cur].waitN = -1;
    step();
}
void pipeRelease(PipeHandle& p, const char*, int)
{
    Use& u = use(p.tail++);
    th[cur].tail = p.tail;
    ++u.consumed;
    join(u.cvc, vc[cur]);
    ++vc[cur][cur];
    step();
}

void* dynamicShared(std::size_t align, const char* file, int line)
{
    if (align == 0 || (align & (align - 1)) || align > kAreaAlign) {
        std::fprintf(stderr, "model: %s:%d: dynamic shared memory aligned "
                     "to %zu bytes is not modelled\n", file, line, align);
        std::fflush(nullptr);
        std::_Exit(2);    // on a thread's own stack: no exit handlers here
    }
    dynAlign = align, dynSite = Site{file, line};
    dynBase = dynamicArea + (align < kAreaAlign ? align : 0);
    return dynBase;
}

void setMaxDynamic(const void* kernel, int bytes)
{
    if (kernel == reinterpret_cast<const void*>(&matmulTilePiped))
        maxDynamic = bytes;
}

// The runtime refuses a launch whose dynamic shared memory passes 48 KiB
// without the attribute raised that far, or passes the opt-in limit.
void launched(const void* kernel, std::size_t bytes)
{
    if (kernel != reinterpret_cast<const void*>(&matmulTilePiped))
        return;
    dynBytes = bytes;
    const std::string asks = fmt("the launch of matmulTilePiped asks for "
                                 "%zu bytes of dynamic shared memory, past ",
                                 bytes);
    if (bytes > kOptInMax)
        launchError = asks + fmt("the %zu a block may have (compute "
                                 "capability 9.0)", kOptInMax);
    else if (bytes > kStaticMax && bytes > static_cast<std::size_t>(
                 maxDynamic))
        launchError = asks + fmt("48 KiB, while its cudaFuncAttribute"
                                 "MaxDynamicSharedMemorySize is %d: the "
                                 "runtime refuses the launch", maxDynamic);
}

}  // namespace lit

int main(int argc, char** argv)
{
    using namespace lit;
    std::vector<int> sizes;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--sizes"))
            for (char* s = std::strtok(argv[i + 1], ","); s;
                 s = std::strtok(nullptr, ","))
                sizes.push_back(std::atoi(s));
        else if (!std::strcmp(argv[i], "--stage-offset"))
            stageOff = std::atol(argv[i + 1]);
    }
    T = lit_threads;
    blockDim = dim3(static_cast<unsigned>(T));
    int runs = 0;
    for (int size : sizes)
        if (!runSize(size, &runs))
            return 1;
    std::printf("PASS\t%d\t%zu\n", runs, mostFlying);
    return 0;
}
