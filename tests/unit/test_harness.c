/* tests/unit/test_harness.c: cmocka unit tests of the host harness
 * (build/harness.c, tangled from day74.nw). No GPU is involved: every
 * function under test is plain C. Built and run by `make unit-test`. */
#define _POSIX_C_SOURCE 200809L /* fmemopen */
#define _GNU_SOURCE /* fopencookie, memmem (glibc) */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "harness.h"

/* The basic pair's tile, and both pairs' tiles as pipelined_gemm passes
   them to day74_parse_options. */
#define TILE 64
#define BLOCKED_TILE 128
static const size_t tiles[DAY74_PAIRS] = {TILE, BLOCKED_TILE};

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* ---- helpers ------------------------------------------------------------ */

static void assert_near(double got, double want, double tol, const char *what)
{
    if (!(fabs(got - want) <= tol))
        fail_msg("%s: got %.17g, want %.17g (tolerance %g)", what, got, want,
                 tol);
}

/* Fills sizes/count with a pattern no parser would write, so "untouched"
   can be checked afterwards. */
static void poison_sizes(size_t *sizes, size_t n, size_t *count)
{
    for (size_t i = 0; i < n; ++i)
        sizes[i] = (size_t)0xDEADBEEFu + i;
    *count = 12345;
}

static void assert_sizes_poisoned(const size_t *sizes, size_t n, size_t count)
{
    assert_int_equal(count, 12345);
    for (size_t i = 0; i < n; ++i)
        assert_int_equal(sizes[i], (size_t)0xDEADBEEFu + i);
}

/* Parses `text` expecting a rejection whose message contains `mention`. */
static void expect_sizes_rejected(const char *text, const char *mention)
{
    size_t sizes[DAY74_MAX_SIZES], count;
    char err[256] = "";
    poison_sizes(sizes, DAY74_MAX_SIZES, &count);
    const int rc = day74_parse_sizes(text, TILE, sizes, DAY74_MAX_SIZES,
                                     &count, err, sizeof err);
    if (rc != -1)
        fail_msg("--sizes \"%s\" was accepted (rc %d, count %zu)", text, rc,
                 count);
    assert_sizes_poisoned(sizes, DAY74_MAX_SIZES, count);
    assert_true(strlen(err) > 0);
    if (strstr(err, mention) == NULL)
        fail_msg("--sizes \"%s\": message \"%s\" does not mention \"%s\"",
                 text, err, mention);
}

/* Parses the NULL-terminated words args (after the program's name) with
   the two pairs' tiles; returns day74_parse_options' result. */
static int parse_args(const char *const *args, day74_options *opt, char *err,
                      size_t err_len)
{
    char *argv[16];
    int argc = 0;
    argv[argc++] = (char *)"pipelined_gemm";
    for (; args[argc - 1] != NULL; ++argc) {
        assert_true(argc < (int)COUNT_OF(argv) - 1);
        argv[argc] = (char *)args[argc - 1];
    }
    argv[argc] = NULL;
    return day74_parse_options(argc, argv, tiles, opt, err, err_len);
}

/* Parses args expecting a rejection whose message mentions `mention` and,
   unless it is NULL, `also`. */
static void expect_options_rejected(const char *const *args,
                                    const char *mention, const char *also)
{
    day74_options opt;
    char err[256] = "";
    if (parse_args(args, &opt, err, sizeof err) != -1)
        fail_msg("options starting \"%s\" were accepted", args[0]);
    assert_true(strlen(err) > 0);
    if (strstr(err, mention) == NULL)
        fail_msg("options starting \"%s\": message \"%s\" does not mention "
                 "\"%s\"",
                 args[0], err, mention);
    if (also != NULL && strstr(err, also) == NULL)
        fail_msg("options starting \"%s\": message \"%s\" does not mention "
                 "\"%s\"",
                 args[0], err, also);
}

/* Parses args expecting success. */
static void parse_ok(const char *const *args, day74_options *opt)
{
    char err[256] = "";
    if (parse_args(args, opt, err, sizeof err) != 0)
        fail_msg("options were rejected: %s", err);
}

/* ---- the CPU reference -------------------------------------------------- */

/* A 1x1 product is the plain product of the two numbers. */
static void test_gemm_1x1(void **state)
{
    (void)state;
    const float a[] = {3.0f}, b[] = {-4.5f};
    double c[] = {NAN};
    day74_reference_gemm(a, b, c, 1, NULL, NULL);
    assert_true(c[0] == -13.5);
}

/* A hand-computed 2x2 product is exact (row-major, A on the left). */
static void test_gemm_2x2(void **state)
{
    (void)state;
    const float a[] = {1, 2, 3, 4}, b[] = {5, 6, 7, 8};
    const double want[] = {19, 22, 43, 50};
    double c[4];
    day74_reference_gemm(a, b, c, 2, NULL, NULL);
    for (int i = 0; i < 4; ++i)
        assert_true(c[i] == want[i]);
}

/* A hand-computed 3x3 product is exact, and stale output is overwritten. */
static void test_gemm_3x3(void **state)
{
    (void)state;
    const float a[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    const float b[] = {9, 8, 7, 6, 5, 4, 3, 2, 1};
    const double want[] = {30, 24, 18, 84, 69, 54, 138, 114, 90};
    double c[9];
    for (int i = 0; i < 9; ++i)
        c[i] = NAN;
    day74_reference_gemm(a, b, c, 3, NULL, NULL);
    for (int i = 0; i < 9; ++i)
        if (c[i] != want[i])
            fail_msg("c[%d] = %g, want %g", i, c[i], want[i]);
}

/* I * B == B and B * I == B for a random 64x64 B (the OpenMP path). */
static void test_gemm_identity(void **state)
{
    (void)state;
    enum { N = 64 };
    static float id[N * N], b[N * N];
    static double c[N * N];
    uint64_t seed = 1;
    day74_fill_random(b, N * N, &seed);
    for (size_t i = 0; i < N; ++i)
        id[i * N + i] = 1.0f;
    day74_reference_gemm(id, b, c, N, NULL, NULL);
    for (size_t i = 0; i < N * N; ++i)
        assert_true(c[i] == (double)b[i]);
    day74_reference_gemm(b, id, c, N, NULL, NULL);
    for (size_t i = 0; i < N * N; ++i)
        assert_true(c[i] == (double)b[i]);
}

/* The sum is accumulated in double: 2^24 + 1 survives, which float cannot
   hold. */
static void test_gemm_accumulates_in_double(void **state)
{
    (void)state;
    const float a[] = {16777216.0f, 1.0f, 0.0f, 0.0f};
    const float b[] = {1.0f, 0.0f, 1.0f, 0.0f};
    double c[4];
    day74_reference_gemm(a, b, c, 2, NULL, NULL);
    assert_true(c[0] == 16777217.0);
    assert_true(c[1] == 0.0 && c[2] == 0.0 && c[3] == 0.0);
}

/* N = 0 writes nothing and does not crash. */
static void test_gemm_empty(void **state)
{
    (void)state;
    double c[1] = {42.0};
    const float a[1] = {1}, b[1] = {1};
    day74_reference_gemm(a, b, c, 0, NULL, NULL);
    assert_true(c[0] == 42.0);
}

/* ---- the reference's progress callback ---------------------------------- */

/* What record_progress saw. */
typedef struct {
    size_t calls;
    size_t first_done, last_done; /* done of the first and the last call */
    size_t min_total, max_total;
    int decreasing;   /* 1 if some call's done was < the previous call's */
    int over_total;   /* 1 if some call had done > total */
    int thread;       /* OpenMP thread of the first call */
    int threads_seen; /* 1 if a later call came from another thread */
} progress_log;

static void reset_progress_log(progress_log *log)
{
    memset(log, 0, sizeof *log);
    log->min_total = SIZE_MAX;
}

/* A day74_progress_fn that records its calls in the progress_log ctx; safe
   even if an implementation calls it from several threads at once. */
static void record_progress(size_t done, size_t total, void *ctx)
{
    progress_log *log = ctx;
    int thread = 0;
#ifdef _OPENMP
    thread = omp_get_thread_num();
#endif
#pragma omp critical(day74_test_progress)
    {
        if (log->calls == 0) {
            log->first_done = done;
            log->thread = thread;
        } else if (done < log->last_done) {
            log->decreasing = 1;
        }
        if (thread != log->thread)
            log->threads_seen = 1;
        if (done > total)
            log->over_total = 1;
        log->min_total = total < log->min_total ? total : log->min_total;
        log->max_total = total > log->max_total ? total : log->max_total;
        log->last_done = done;
        ++log->calls;
    }
}

/* Runs the reference on one thread (under OpenMP: with the thread count set
   to 1 for the call, then restored). */
static void gemm_one_thread(const float *a, const float *b, double *c,
                            size_t n, progress_log *log)
{
#ifdef _OPENMP
    const int before = omp_get_max_threads();
    omp_set_num_threads(1);
#endif
    day74_reference_gemm(a, b, c, n, record_progress, log);
#ifdef _OPENMP
    omp_set_num_threads(before);
#endif
}

/* On one thread, progress reports done never decreasing, from at least 1 to
   exactly n (once per row, plus the final report of the total), always of
   total n, with the ctx given; the product is the same as without a
   callback. */
static void test_gemm_progress_one_thread(void **state)
{
    (void)state;
    enum { N = 40 }; /* more than one OpenMP chunk of rows */
    static float a[N * N], b[N * N];
    static double want[N * N], c[N * N];
    uint64_t seed = 9;
    day74_fill_random(a, N * N, &seed);
    day74_fill_random(b, N * N, &seed);
    day74_reference_gemm(a, b, want, N, NULL, NULL);

    progress_log log;
    reset_progress_log(&log);
    gemm_one_thread(a, b, c, N, &log);
    assert_memory_equal(c, want, sizeof c);
    assert_true(log.calls >= 1);
    assert_true(log.calls <= N + 1);
    assert_true(log.first_done >= 1);
    assert_int_equal(log.last_done, N);
    assert_int_equal(log.decreasing, 0);
    assert_int_equal(log.over_total, 0);
    assert_int_equal(log.min_total, N);
    assert_int_equal(log.max_total, N);
    assert_int_equal(log.threads_seen, 0);

    /* A 3x3 product, one call per finished row at most. */
    const float a3[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    const float b3[] = {9, 8, 7, 6, 5, 4, 3, 2, 1};
    const double want3[] = {30, 24, 18, 84, 69, 54, 138, 114, 90};
    double c3[9];
    reset_progress_log(&log);
    gemm_one_thread(a3, b3, c3, 3, &log);
    assert_memory_equal(c3, want3, sizeof c3);
    assert_true(log.calls >= 1 && log.calls <= 4);
    assert_int_equal(log.last_done, 3);
    assert_int_equal(log.decreasing, 0);
}

/* With OpenMP's default thread count, progress comes from one thread, at
   least once (the final report of the total always comes), with
   done <= total == n; the product is unchanged. Without OpenMP this is the
   one-thread case again. */
static void test_gemm_progress_threads(void **state)
{
    (void)state;
    enum { N = 256 }; /* 16 chunks of 16 rows */
    static float a[N * N], b[N * N];
    static double want[N * N], c[N * N];
    uint64_t seed = 10;
    day74_fill_random(a, N * N, &seed);
    day74_fill_random(b, N * N, &seed);
    day74_reference_gemm(a, b, want, N, NULL, NULL);

    progress_log log;
    reset_progress_log(&log);
    day74_reference_gemm(a, b, c, N, record_progress, &log);
    assert_memory_equal(c, want, sizeof c);
    assert_true(log.calls >= 1);
    assert_true(log.calls <= N + 1);
    assert_true(log.first_done >= 1);
    assert_true(log.last_done <= N);
    assert_int_equal(log.over_total, 0);
    assert_int_equal(log.min_total, N);
    assert_int_equal(log.max_total, N);
    assert_int_equal(log.threads_seen, 0);
#ifndef _OPENMP
    assert_int_equal(log.last_done, N);
    assert_int_equal(log.decreasing, 0);
#endif
}

/* N = 0 finishes no row, so progress is never called. */
static void test_gemm_progress_empty(void **state)
{
    (void)state;
    double c[1] = {42.0};
    const float a[1] = {1}, b[1] = {1};
    progress_log log;
    reset_progress_log(&log);
    day74_reference_gemm(a, b, c, 0, record_progress, &log);
    assert_int_equal(log.calls, 0);
    assert_true(c[0] == 42.0);
}

/* ---- day74_transpose ---------------------------------------------------- */

/* A hand-written 3x3 transpose; every element of at is written. */
static void test_transpose_3x3(void **state)
{
    (void)state;
    const float a[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    const float want[] = {1, 4, 7, 2, 5, 8, 3, 6, 9};
    float at[9];
    for (int i = 0; i < 9; ++i)
        at[i] = NAN;
    day74_transpose(a, at, 3);
    assert_memory_equal(at, want, sizeof want);
}

/* For a random 37x37 matrix (odd, not a power of two) at[k][i] == a[i][k]
   everywhere, and transposing twice gives a back bit for bit. */
static void test_transpose_random(void **state)
{
    (void)state;
    enum { N = 37 };
    static float a[N * N], at[N * N], att[N * N];
    uint64_t seed = 37;
    day74_fill_random(a, N * N, &seed);
    for (size_t i = 0; i < N * N; ++i)
        at[i] = att[i] = NAN;
    day74_transpose(a, at, N);
    for (size_t i = 0; i < N; ++i)
        for (size_t k = 0; k < N; ++k)
            if (at[k * N + i] != a[i * N + k])
                fail_msg("at[%zu][%zu] = %g, want a[%zu][%zu] = %g", k, i,
                         (double)at[k * N + i], i, k, (double)a[i * N + k]);
    day74_transpose(at, att, N);
    assert_memory_equal(att, a, sizeof a);
}

/* N = 1 copies the element; N = 0 writes nothing. */
static void test_transpose_tiny(void **state)
{
    (void)state;
    const float a[1] = {2.5f};
    float at[1] = {NAN};
    day74_transpose(a, at, 1);
    assert_true(at[0] == 2.5f);
    at[0] = -1.0f;
    day74_transpose(a, at, 0);
    assert_true(at[0] == -1.0f);
}

/* ---- the mismatch finder ------------------------------------------------ */

/* 2^-10: tolerance edges are exact in float and double */
#define TOL 0.0009765625

/* An error exactly at the tolerance passes; the tolerance a hair smaller
   fails. */
static void test_mismatch_tolerance_edge(void **state)
{
    (void)state;
    const float got[] = {1.0f + 0.0009765625f, 3.0f + 3 * 0.0009765625f,
                         -2.0f - 2 * 0.0009765625f};
    const double want[] = {1.0, 3.0, -2.0};
    assert_int_equal(day74_first_mismatch(got, want, 3, TOL), 3);
    const double under = nextafter(TOL, 0.0);
    assert_int_equal(day74_first_mismatch(got, want, 3, under), 0);
    assert_int_equal(day74_first_mismatch(got + 1, want + 1, 2, under), 0);
    assert_int_equal(day74_first_mismatch(got + 2, want + 2, 1, under), 0);
}

/* Just above the tolerance (next float up) fails at that index. */
static void test_mismatch_just_above(void **state)
{
    (void)state;
    const float got[] = {1.0f, nextafterf(1.0f + 0.0009765625f, 2.0f)};
    const double want[] = {1.0, 1.0};
    assert_int_equal(day74_first_mismatch(got, want, 2, TOL), 1);
}

/* A NaN in got never passes, whatever the tolerance. */
static void test_mismatch_nan_fails(void **state)
{
    (void)state;
    const float got[] = {1.0f, NAN};
    const double want[] = {1.0, 1.0};
    assert_int_equal(day74_first_mismatch(got, want, 2, 1e300), 1);
    const double want_nan[] = {NAN};
    assert_int_equal(day74_first_mismatch(got, want_nan, 1, 1e300), 0);
}

/* An infinity in got fails, of either sign. */
static void test_mismatch_inf_fails(void **state)
{
    (void)state;
    const float got[] = {1.0f, INFINITY, -INFINITY};
    const double want[] = {1.0, 1.0, 1.0};
    assert_int_equal(day74_first_mismatch(got, want, 2, 1e300), 1);
    assert_int_equal(day74_first_mismatch(got + 2, want + 2, 1, 1e300), 0);
}

/* Where want is 0 the tolerance is absolute: |got| <= rel_tol passes. */
static void test_mismatch_zero_reference_absolute(void **state)
{
    (void)state;
    const float got[] = {0.0f, 0.0009765625f, -0.0009765625f};
    const double want[] = {0.0, 0.0, 0.0};
    assert_int_equal(day74_first_mismatch(got, want, 3, TOL), 3);
    const float over[] = {nextafterf(0.0009765625f, 1.0f)};
    assert_int_equal(day74_first_mismatch(over, want, 1, TOL), 0);
}

/* All agreeing returns count (also for count 0). */
static void test_mismatch_all_agree(void **state)
{
    (void)state;
    const float got[] = {1, 2, 3, 4, 5};
    const double want[] = {1, 2, 3, 4, 5};
    assert_int_equal(day74_first_mismatch(got, want, 5, 0.0), 5);
    assert_int_equal(day74_first_mismatch(got, want, 0, 0.0), 0);
}

/* With several mismatches the first index is returned. */
static void test_mismatch_first_of_several(void **state)
{
    (void)state;
    const float got[] = {1, 2, 9, 4, 9, 9};
    const double want[] = {1, 2, 3, 4, 5, 6};
    assert_int_equal(day74_first_mismatch(got, want, 6, 1e-4), 2);
}

/* ---- day74_max_rel_error ------------------------------------------------ */

/* Exact agreement gives 0; otherwise the worst relative error is
   returned. */
static void test_max_rel_error_worst(void **state)
{
    (void)state;
    const float got[] = {1.0f, 1.5f, 4.0f, -3.0f};
    const double want[] = {1.0, 1.0, 4.0, -2.0};
    assert_true(day74_max_rel_error(got, want, 1) == 0.0);
    assert_true(day74_max_rel_error(got, want, 0) == 0.0);
    assert_near(day74_max_rel_error(got, want, 4), 0.5, 0.0, "worst of four");
    assert_near(day74_max_rel_error(got, want, 3), 0.5, 0.0,
                "worst of three");
}

/* A zero reference divides by 1e-30, not by zero. */
static void test_max_rel_error_zero_reference(void **state)
{
    (void)state;
    const float got[] = {0.0f, 1.0f};
    const double want[] = {0.0, 0.0};
    assert_true(day74_max_rel_error(got, want, 1) == 0.0);
    assert_near(day74_max_rel_error(got, want, 2), 1e30, 1e15,
                "1 over 1e-30");
}

/* A NaN anywhere makes the result NaN, so it cannot read as small. */
static void test_max_rel_error_nan(void **state)
{
    (void)state;
    const float got[] = {NAN, 1.0f, 2.0f};
    const double want[] = {1.0, 1.0, 1.0};
    assert_true(isnan(day74_max_rel_error(got, want, 3)));
}

/* ---- residency and waves ------------------------------------------------ */

/* An H200-like card, as cudaGetDeviceProperties reports it. */
#define H200_SMEM_PER_SM 233472
#define H200_RESERVED 1024
#define H200_MAX_PER_BLOCK 232448
#define H200_SMS 132

/* One day74_residency_pad case and the padding it must return. */
typedef struct {
    size_t smem_per_sm, reserved, max_per_block, used;
    int blocks;
    size_t want;
    const char *what;
} pad_case;

/* Each case's padding is exactly as the docstring's arithmetic gives it:
   share = smem_per_sm / blocks - reserved, capped at max_per_block,
   rounded down to 128, minus what the block uses; SIZE_MAX if impossible.
   Every finite answer also keeps used + pad a multiple of 128 and within
   max_per_block. */
static void test_residency_pad_cases(void **state)
{
    (void)state;
    static const pad_case cases[] = {
        /* No residency, or a negative one, cannot be padded for. */
        {233472, 1024, 232448, 8192, 0, SIZE_MAX, "blocks 0"},
        {233472, 1024, 232448, 8192, -1, SIZE_MAX, "blocks -1"},
        {233472, 1024, 232448, 0, 0, SIZE_MAX, "blocks 0, nothing used"},
        /* A 1/blocks share smaller than the reservation leaves nothing. */
        {233472, 1024, 232448, 0, 300, SIZE_MAX, "share 778 < 1024"},
        {4096, 1024, 4096, 0, 8, SIZE_MAX, "share 512 < 1024"},
        /* A block already using more than its share cannot be padded. */
        {233472, 1024, 232448, 57345, 4, SIZE_MAX, "used one byte over"},
        {233472, 1024, 232448, 100000, 3, SIZE_MAX, "used far over"},
        /* A block using exactly its share needs no padding. */
        {233472, 1024, 232448, 57344, 4, 0, "used exactly the share"},
        /* The cap: one block may not have more than max_per_block. */
        {233472, 1024, 49152, 8192, 1, 40960, "capped at 48 KiB"},
        {233472, 1024, 49152, 49152, 1, 0, "capped, all used"},
        {233472, 1024, 49152, 49153, 1, SIZE_MAX, "capped, over the cap"},
        /* The cap is applied before the rounding, so the result stays
           under it: 100000 rounds down to 99968. */
        {233472, 1024, 100000, 8192, 1, 91776, "cap, then round"},
        /* Rounding down to 128: 233472 / 5 - 1024 = 45670 -> 45568;
           233472 / 7 - 1024 = 32329 -> 32256. */
        {233472, 1024, 232448, 8192, 5, 37376, "45670 rounds to 45568"},
        {233472, 1024, 232448, 8192, 7, 24064, "32329 rounds to 32256"},
        {1151, 0, 1151, 0, 1, 1024, "1151 rounds to 1024"},
        {1152, 0, 1152, 0, 1, 1152, "1152 is already a multiple"},
        /* Used need not be a multiple of 128: the pad makes up the rest. */
        {233472, 1024, 232448, 8200, 4, 49144, "used 8200"},
        /* The H200-like card at 1 to 4 blocks per SM, 8 KiB used. */
        {233472, 1024, 232448, 8192, 1, 224256, "H200, 1 block"},
        {233472, 1024, 232448, 8192, 2, 107520, "H200, 2 blocks"},
        {233472, 1024, 232448, 8192, 3, 68608, "H200, 3 blocks"},
        {233472, 1024, 232448, 8192, 4, 49152, "H200, 4 blocks"},
        /* The last residency that 8 KiB still fits, and the first it does
           not: 233472 / 25 - 1024 = 8314 -> 8192; / 26 -> 7955. */
        {233472, 1024, 232448, 8192, 25, 0, "H200, 25 blocks"},
        {233472, 1024, 232448, 8192, 26, SIZE_MAX, "H200, 26 blocks"},
    };
    for (size_t i = 0; i < COUNT_OF(cases); ++i) {
        const pad_case *c = &cases[i];
        const size_t got =
            day74_residency_pad(c->smem_per_sm, c->reserved,
                                c->max_per_block, c->used, c->blocks);
        if (got != c->want)
            fail_msg("residency pad, %s: got %zu, want %zu", c->what, got,
                     c->want);
        if (got == SIZE_MAX)
            continue;
        if ((c->used + got) % 128 != 0)
            fail_msg("residency pad, %s: used + pad = %zu is not a "
                     "multiple of 128",
                     c->what, c->used + got);
        if (c->used + got > c->max_per_block)
            fail_msg("residency pad, %s: used + pad = %zu exceeds %zu",
                     c->what, c->used + got, c->max_per_block);
    }
}

/* On the H200-like card, a block using 8 KiB padded for B blocks per SM
   fits exactly B per SM: (used + pad + reserved) * B <= smem_per_sm <
   (used + pad + reserved) * (B + 1); for B = 1 to 4 and for every other B
   up to DAY74_MAX_BLOCKS_PER_SM that has a padding. */
static void test_residency_pad_fits_exactly(void **state)
{
    (void)state;
    const size_t used = 8192;
    int padded = 0;
    for (int b = 1; b <= DAY74_MAX_BLOCKS_PER_SM; ++b) {
        const size_t pad =
            day74_residency_pad(H200_SMEM_PER_SM, H200_RESERVED,
                                H200_MAX_PER_BLOCK, used, b);
        if (pad == SIZE_MAX) {
            if (b <= 4)
                fail_msg("no padding for %d blocks per SM", b);
            continue;
        }
        ++padded;
        const size_t per_block = used + pad + H200_RESERVED;
        if (!(per_block * (size_t)b <= H200_SMEM_PER_SM))
            fail_msg("%d blocks of %zu bytes do not fit in %d", b, per_block,
                     H200_SMEM_PER_SM);
        if (!(H200_SMEM_PER_SM < per_block * (size_t)(b + 1)))
            fail_msg("%d blocks of %zu bytes fit in %d, not just %d", b + 1,
                     per_block, H200_SMEM_PER_SM, b);
    }
    assert_int_equal(padded, 25);
}

/* One day74_waves case. */
typedef struct {
    size_t n, tile;
    int sms, blocks_per_sm;
    double want;
} waves_case;

/* Waves are (n / tile)^2 blocks over sms * blocks_per_sm slots; 0 for a
   zero tile, SM count or residency (or a negative one). */
static void test_waves(void **state)
{
    (void)state;
    static const waves_case cases[] = {
        {1024, 64, H200_SMS, 1, 256.0 / 132.0},
        {1024, 64, H200_SMS, 2, 256.0 / 264.0},
        {2048, 128, H200_SMS, 1, 256.0 / 132.0},
        {8192, 64, H200_SMS, 4, 16384.0 / 528.0},
        {8192, 128, H200_SMS, 1, 4096.0 / 132.0},
        {512, 64, 64, 1, 1.0},
        {512, 64, 16, 2, 2.0},
        {64, 64, 108, 1, 1.0 / 108.0},
        {0, 64, H200_SMS, 1, 0.0},
        {1024, 0, H200_SMS, 1, 0.0},
        {1024, 64, 0, 1, 0.0},
        {1024, 64, -1, 1, 0.0},
        {1024, 64, H200_SMS, 0, 0.0},
        {1024, 64, H200_SMS, -2, 0.0},
    };
    for (size_t i = 0; i < COUNT_OF(cases); ++i) {
        const waves_case *c = &cases[i];
        char what[96];
        snprintf(what, sizeof what, "waves(n %zu, tile %zu, %d SMs, %d/SM)",
                 c->n, c->tile, c->sms, c->blocks_per_sm);
        assert_near(day74_waves(c->n, c->tile, c->sms, c->blocks_per_sm),
                    c->want, 1e-12 * c->want, what);
    }
    /* The docstring's example: 256 blocks on 132 SMs read as 1.94. */
    assert_near(day74_waves(1024, 64, H200_SMS, 1), 1.94, 0.005, "1.94");
}

/* ---- day74_parse_sizes -------------------------------------------------- */

/* One size, two sizes, the smallest and largest legal sizes are
   accepted. */
static void test_sizes_accepted(void **state)
{
    (void)state;
    size_t sizes[DAY74_MAX_SIZES], count = 0;
    char err[128] = "";
    assert_int_equal(day74_parse_sizes("512", TILE, sizes, DAY74_MAX_SIZES,
                                       &count, err, sizeof err),
                     0);
    assert_int_equal(count, 1);
    assert_int_equal(sizes[0], 512);
    assert_int_equal(day74_parse_sizes("512,4096", TILE, sizes,
                                       DAY74_MAX_SIZES, &count, err,
                                       sizeof err),
                     0);
    assert_int_equal(count, 2);
    assert_int_equal(sizes[0], 512);
    assert_int_equal(sizes[1], 4096);
    assert_int_equal(day74_parse_sizes("64,8192,0064", TILE, sizes,
                                       DAY74_MAX_SIZES, &count, err,
                                       sizeof err),
                     0);
    assert_int_equal(count, 3);
    assert_int_equal(sizes[0], 64);
    assert_int_equal(sizes[1], DAY74_MAX_N);
    assert_int_equal(sizes[2], 64);
}

/* Exactly DAY74_MAX_SIZES sizes are accepted, in order. */
static void test_sizes_full_list(void **state)
{
    (void)state;
    char text[256] = "";
    for (int i = 1; i <= DAY74_MAX_SIZES; ++i)
        snprintf(text + strlen(text), sizeof text - strlen(text), "%s%d",
                 i > 1 ? "," : "", 64 * i);
    size_t sizes[DAY74_MAX_SIZES], count = 0;
    char err[128] = "";
    assert_int_equal(day74_parse_sizes(text, TILE, sizes, DAY74_MAX_SIZES,
                                       &count, err, sizeof err),
                     0);
    assert_int_equal(count, DAY74_MAX_SIZES);
    for (size_t i = 0; i < DAY74_MAX_SIZES; ++i)
        assert_int_equal(sizes[i], 64 * (i + 1));
}

/* Zero, negative and non-numeric items are rejected, naming the item. */
static void test_sizes_reject_not_positive_numbers(void **state)
{
    (void)state;
    expect_sizes_rejected("0", "item 1");
    expect_sizes_rejected("512,0", "item 2");
    expect_sizes_rejected("-512", "-512");
    expect_sizes_rejected("abc", "abc");
    expect_sizes_rejected("512,12x", "12x");
    expect_sizes_rejected("+512", "+512");
    expect_sizes_rejected(" 512", "item 1");
    expect_sizes_rejected("512 ", "item 1");
    expect_sizes_rejected("0x200", "0x200");
    expect_sizes_rejected("5.12e2", "5.12e2");
}

/* Empty lists and empty items (leading, trailing, doubled comma) are
   rejected. */
static void test_sizes_reject_empty(void **state)
{
    (void)state;
    expect_sizes_rejected("", "empty");
    expect_sizes_rejected(NULL, "empty");
    expect_sizes_rejected(",512", "item 1");
    expect_sizes_rejected("512,", "item 2");
    expect_sizes_rejected("512,,1024", "item 2");
    expect_sizes_rejected(",", "item 1");
}

/* Overflowing and too-large numbers are rejected, quoting the item. */
static void test_sizes_reject_too_large(void **state)
{
    (void)state;
    expect_sizes_rejected("99999999999999999999", "99999999999999999999");
    expect_sizes_rejected("18446744073709551616", "18446744073709551616");
    expect_sizes_rejected("8256", "8256");
    expect_sizes_rejected("512,8193", "8193");
}

/* A size that is not a multiple of the tile is rejected, naming it. */
static void test_sizes_reject_not_multiple(void **state)
{
    (void)state;
    expect_sizes_rejected("100", "100");
    expect_sizes_rejected("512,65", "65");
    expect_sizes_rejected("32", "32");
}

/* More than DAY74_MAX_SIZES items, or more than cap, are rejected. */
static void test_sizes_reject_too_many(void **state)
{
    (void)state;
    char text[256] = "";
    for (int i = 0; i <= DAY74_MAX_SIZES; ++i)
        snprintf(text + strlen(text), sizeof text - strlen(text), "%s64",
                 i ? "," : "");
    expect_sizes_rejected(text, "more than 16");

    size_t sizes[3], count;
    char err[128] = "";
    poison_sizes(sizes, 3, &count);
    assert_int_equal(day74_parse_sizes("64,128,192", TILE, sizes, 2, &count,
                                       err, sizeof err),
                     -1);
    assert_sizes_poisoned(sizes, 3, count);
    assert_non_null(strstr(err, "more than 2"));
}

/* A short error buffer is filled but never overrun, and a NULL one is
   allowed. */
static void test_sizes_error_buffer_bounds(void **state)
{
    (void)state;
    char err[16];
    memset(err, 'Z', sizeof err);
    size_t sizes[DAY74_MAX_SIZES], count;
    poison_sizes(sizes, DAY74_MAX_SIZES, &count);
    assert_int_equal(day74_parse_sizes("100", TILE, sizes, DAY74_MAX_SIZES,
                                       &count, err, 8),
                     -1);
    assert_int_equal(strlen(err), 7);
    for (size_t i = 8; i < sizeof err; ++i)
        assert_int_equal(err[i], 'Z');
    assert_int_equal(day74_parse_sizes("100", TILE, sizes, DAY74_MAX_SIZES,
                                       &count, NULL, 0),
                     -1);
    assert_sizes_poisoned(sizes, DAY74_MAX_SIZES, count);
}

/* ---- day74_parse_options ------------------------------------------------ */

/* No arguments gives the documented defaults. */
static void test_options_defaults(void **state)
{
    (void)state;
    const char *args[] = {NULL};
    day74_options opt;
    memset(&opt, 0x5A, sizeof opt);
    parse_ok(args, &opt);
    assert_int_equal(opt.n_sizes, 3);
    assert_int_equal(opt.sizes[0], 512);
    assert_int_equal(opt.sizes[1], 1024);
    assert_int_equal(opt.sizes[2], 2048);
    assert_int_equal(opt.pairs, 1u << DAY74_PAIR_BASIC);
    assert_int_equal(opt.blocks_per_sm, 0);
    assert_int_equal(opt.cold_l2, 0);
    assert_true(opt.seed == 74);
    assert_int_equal(opt.reps, DAY74_MIN_REPS);
    assert_true(opt.timeout_s == 20.0);
    assert_null(opt.csv_path);
    assert_int_equal(opt.check_only, 0);
    assert_int_equal(opt.help, 0);
}

/* --sizes, --check-only, --help/-h, --csv, --seed, --reps, --timeout are
   taken. */
static void test_options_accepted(void **state)
{
    (void)state;
    day74_options opt;
    const char *a1[] = {"--sizes", "512,4096", NULL};
    parse_ok(a1, &opt);
    assert_int_equal(opt.n_sizes, 2);
    assert_int_equal(opt.sizes[0], 512);
    assert_int_equal(opt.sizes[1], 4096);

    const char *a2[] = {"--check-only", NULL};
    parse_ok(a2, &opt);
    assert_int_equal(opt.check_only, 1);
    assert_int_equal(opt.help, 0);

    const char *a3[] = {"--help", NULL};
    parse_ok(a3, &opt);
    assert_int_equal(opt.help, 1);
    const char *a4[] = {"-h", NULL};
    parse_ok(a4, &opt);
    assert_int_equal(opt.help, 1);

    const char *a5[] = {"--seed",    "18446744073709551615",
                        "--reps",    "10000",
                        "--timeout", "3600",
                        "--csv",     "out.csv",
                        NULL};
    parse_ok(a5, &opt);
    assert_true(opt.seed == UINT64_MAX);
    assert_int_equal(opt.reps, DAY74_MAX_REPS);
    assert_true(opt.timeout_s == 3600.0);
    assert_string_equal(opt.csv_path, "out.csv");

    const char *a6[] = {"--reps", "20", "--timeout", "1", "--seed", "0", NULL};
    parse_ok(a6, &opt);
    assert_int_equal(opt.reps, 20);
    assert_true(opt.timeout_s == 1.0);
    assert_true(opt.seed == 0);
}

/* One accepted command line and the pairs, residency and L2 setting it
   gives. */
typedef struct {
    const char *args[6];
    unsigned pairs;
    int blocks_per_sm;
    int cold_l2;
} setting_case;

/* --kernels selects the pairs (the last one given wins), --blocks-per-sm
   natural|B sets the residency (natural is 0), --cold-l2 sets its flag;
   none of them disturbs the others' defaults. */
static void test_options_pairs_residency_l2(void **state)
{
    (void)state;
    enum { BASIC = 1u << DAY74_PAIR_BASIC, BLOCKED = 1u << DAY74_PAIR_BLOCKED };
    static const setting_case cases[] = {
        {{"--kernels", "basic", NULL}, BASIC, 0, 0},
        {{"--kernels", "blocked", NULL}, BLOCKED, 0, 0},
        {{"--kernels", "all", NULL}, BASIC | BLOCKED, 0, 0},
        {{"--kernels", "all", "--kernels", "basic", NULL}, BASIC, 0, 0},
        {{"--blocks-per-sm", "natural", NULL}, BASIC, 0, 0},
        {{"--blocks-per-sm", "1", NULL}, BASIC, 1, 0},
        {{"--blocks-per-sm", "3", NULL}, BASIC, 3, 0},
        {{"--blocks-per-sm", "32", NULL}, BASIC, DAY74_MAX_BLOCKS_PER_SM, 0},
        {{"--blocks-per-sm", "4", "--blocks-per-sm", "natural", NULL},
         BASIC, 0, 0},
        {{"--cold-l2", NULL}, BASIC, 0, 1},
        {{"--cold-l2", "--kernels", "blocked", "--blocks-per-sm", "2", NULL},
         BLOCKED, 2, 1},
    };
    for (size_t i = 0; i < COUNT_OF(cases); ++i) {
        const setting_case *c = &cases[i];
        day74_options opt;
        parse_ok(c->args, &opt);
        if (opt.pairs != c->pairs || opt.blocks_per_sm != c->blocks_per_sm ||
            opt.cold_l2 != c->cold_l2)
            fail_msg("case %zu (%s %s): pairs %u, blocks/SM %d, cold %d; "
                     "want %u, %d, %d",
                     i, c->args[0], c->args[1] ? c->args[1] : "", opt.pairs,
                     opt.blocks_per_sm, opt.cold_l2, c->pairs,
                     c->blocks_per_sm, c->cold_l2);
        assert_int_equal(opt.n_sizes, 3);
        assert_true(opt.seed == 74);
        assert_int_equal(opt.reps, DAY74_MIN_REPS);
    }
}

/* Sizes are checked, after every option, against the largest selected
   tile: the blocked pair's 128 wherever --kernels comes, the basic pair's
   64 otherwise. */
static void test_options_sizes_follow_kernels(void **state)
{
    (void)state;
    day74_options opt;
    const char *basic[] = {"--sizes", "192", NULL};
    parse_ok(basic, &opt);
    assert_int_equal(opt.n_sizes, 1);
    assert_int_equal(opt.sizes[0], 192);

    const char *after[] = {"--sizes", "256,8192", "--kernels", "blocked",
                           NULL};
    const char *before[] = {"--kernels", "blocked", "--sizes", "256,8192",
                            NULL};
    const char *const *orders[] = {after, before};
    for (size_t i = 0; i < COUNT_OF(orders); ++i) {
        parse_ok(orders[i], &opt);
        assert_int_equal(opt.pairs, 1u << DAY74_PAIR_BLOCKED);
        assert_int_equal(opt.n_sizes, 2);
        assert_int_equal(opt.sizes[0], 256);
        assert_int_equal(opt.sizes[1], 8192);
    }

    /* The defaults 512,1024,2048 are multiples of both tiles. */
    const char *all[] = {"--kernels", "all", NULL};
    parse_ok(all, &opt);
    assert_int_equal(opt.n_sizes, 3);
    assert_int_equal(opt.sizes[2], 2048);
}

/* One rejected command line: its words after the program name, a word the
   error message must contain, and (unless NULL) a second one. */
typedef struct {
    const char *args[6];
    const char *mention;
    const char *also;
} rejected_case;

/* Every command line below is rejected (-1) with a non-empty message that
   names the offending word. */
static void test_options_rejected(void **state)
{
    (void)state;
    static const rejected_case cases[] = {
        /* Bad --sizes values are rejected through day74_parse_sizes'
           messages. */
        {{"--sizes", "100", NULL}, "100", NULL},
        {{"--sizes", "", NULL}, "empty", NULL},
        {{"--sizes", "512,", NULL}, "item 2", NULL},
        /* Unknown options and options missing their value are rejected,
           naming them. */
        {{"--frobnicate", NULL}, "--frobnicate", NULL},
        {{"512", NULL}, "512", NULL},
        {{"--check-only", "--sizes", NULL}, "--sizes", NULL},
        {{"--reps", NULL}, "--reps", NULL},
        {{"--seed", NULL}, "--seed", NULL},
        {{"--csv", NULL}, "--csv", NULL},
        {{"--timeout", NULL}, "--timeout", NULL},
        {{"--kernels", NULL}, "--kernels", NULL},
        {{"--blocks-per-sm", NULL}, "--blocks-per-sm", NULL},
        /* --cold-l2 is a flag: a word after it is not its value. */
        {{"--cold-l2", "yes", NULL}, "yes", NULL},
        /* --reps outside [DAY74_MIN_REPS, DAY74_MAX_REPS] or not a number
           is rejected. */
        {{"--reps", "19", NULL}, "19", NULL},
        {{"--reps", "10001", NULL}, "10001", NULL},
        {{"--reps", "0", NULL}, "--reps", NULL},
        {{"--reps", "-20", NULL}, "-20", NULL},
        {{"--reps", "twenty", NULL}, "twenty", NULL},
        /* --timeout 0, above 3600 or junk is rejected. */
        {{"--timeout", "0", NULL}, "--timeout", NULL},
        {{"--timeout", "3601", NULL}, "3601", NULL},
        {{"--timeout", "1.5", NULL}, "1.5", NULL},
        /* --seed junk, negative, empty or above UINT64_MAX is rejected. */
        {{"--seed", "junk", NULL}, "junk", NULL},
        {{"--seed", "-1", NULL}, "-1", NULL},
        {{"--seed", "", NULL}, "--seed", NULL},
        {{"--seed", "18446744073709551616", NULL}, "18446744073709551616",
         NULL},
        /* --csv with an empty file name is rejected. */
        {{"--csv", "", NULL}, "--csv", NULL},
        /* --kernels takes basic, blocked or all, exactly. */
        {{"--kernels", "both", NULL}, "both", "--kernels"},
        {{"--kernels", "Basic", NULL}, "Basic", "--kernels"},
        {{"--kernels", "", NULL}, "--kernels", NULL},
        {{"--kernels", "basic,blocked", NULL}, "basic,blocked", NULL},
        /* --blocks-per-sm takes natural or 1 to DAY74_MAX_BLOCKS_PER_SM. */
        {{"--blocks-per-sm", "0", NULL}, "--blocks-per-sm", NULL},
        {{"--blocks-per-sm", "33", NULL}, "33", "--blocks-per-sm"},
        {{"--blocks-per-sm", "-1", NULL}, "-1", NULL},
        {{"--blocks-per-sm", "2.5", NULL}, "2.5", NULL},
        {{"--blocks-per-sm", "Natural", NULL}, "Natural", NULL},
        {{"--blocks-per-sm", "", NULL}, "--blocks-per-sm", NULL},
        /* Sizes are checked against the largest selected tile whatever the
           order, and the message names the pair whose tile it is. */
        {{"--sizes", "192", "--kernels", "blocked", NULL},
         "192", "the blocked pair's tile"},
        {{"--kernels", "blocked", "--sizes", "192", NULL},
         "192", "the blocked pair's tile"},
        {{"--kernels", "all", "--sizes", "512,192", NULL},
         "item 2", "the blocked pair's tile"},
        {{"--sizes", "64", "--kernels", "all", NULL},
         "128", "the blocked pair's tile"},
        {{"--sizes", "96", NULL}, "96", "the basic pair's tile"},
        {{"--kernels", "blocked", "--sizes", "8320", NULL}, "8320", NULL},
    };
    for (size_t i = 0; i < COUNT_OF(cases); ++i)
        expect_options_rejected(cases[i].args, cases[i].mention,
                                cases[i].also);
}

/* A rejection's message, pair name appended, is cut to err_len - 1
   characters and never written past err_len; a NULL buffer is allowed. */
static void test_options_error_buffer_bounds(void **state)
{
    (void)state;
    const char *args[] = {"--kernels", "blocked", "--sizes", "192", NULL};
    day74_options opt;
    char full[256] = "";
    assert_int_equal(parse_args(args, &opt, full, sizeof full), -1);
    const char *suffix = strstr(full, ", the blocked pair's tile");
    assert_non_null(suffix);
    const size_t whole = strlen(full), base = (size_t)(suffix - full);
    /* Buffer sizes: tiny; room for the base message alone (the pair's name
       is then left off); for it and 1 or 5 characters of ", the blocked
       pair's tile"; one short of the whole message; exactly the whole. */
    const size_t lens[] = {1,        8,     base + 1, base + 2,
                           base + 6, whole, whole + 1};
    for (size_t i = 0; i < COUNT_OF(lens); ++i) {
        char err[300];
        memset(err, 'Z', sizeof err);
        assert_int_equal(parse_args(args, &opt, err, lens[i]), -1);
        const size_t want = lens[i] - 1 < whole ? lens[i] - 1 : whole;
        if (strlen(err) != want || strncmp(err, full, want) != 0)
            fail_msg("err_len %zu: message \"%s\", want the first %zu of "
                     "\"%s\"",
                     lens[i], err, want, full);
        for (size_t k = lens[i]; k < sizeof err; ++k)
            if (err[k] != 'Z')
                fail_msg("err_len %zu: byte %zu overwritten", lens[i], k);
    }
    assert_int_equal(parse_args(args, &opt, NULL, 0), -1);
}

/* The pairs are named basic and blocked, and each name is what --kernels
   takes to select that pair alone. */
static void test_pair_names(void **state)
{
    (void)state;
    assert_string_equal(day74_pair_name(DAY74_PAIR_BASIC), "basic");
    assert_string_equal(day74_pair_name(DAY74_PAIR_BLOCKED), "blocked");
    for (int p = 0; p < DAY74_PAIRS; ++p) {
        const char *args[] = {"--kernels", day74_pair_name(p), NULL};
        day74_options opt;
        parse_ok(args, &opt);
        assert_int_equal(opt.pairs, 1u << p);
    }
}

/* The usage text names every option, the --kernels and --blocks-per-sm
   choices, and the exit codes. */
static void test_usage_mentions_options(void **state)
{
    (void)state;
    char buf[4096] = "";
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    assert_non_null(f);
    day74_print_usage(f, "prog");
    fclose(f);
    const char *want[] = {"usage: prog", "--sizes", "--seed", "--reps",
                          "--csv", "--timeout", "--check-only", "--help",
                          "--kernels", "basic", "blocked", "all",
                          "--blocks-per-sm", "natural", "--cold-l2",
                          "exit status"};
    for (size_t i = 0; i < COUNT_OF(want); ++i)
        if (strstr(buf, want[i]) == NULL)
            fail_msg("usage lacks \"%s\"", want[i]);
}

/* ---- the CSV writer ----------------------------------------------------- */

/* Both pairs ran, natural residency, warm L2. Every kernel's numbers
   differ from the others', so a line written for the wrong kernel shows. */
static const day74_run_info sample_info = {
    .host = "test-host",
    .command = "pipelined_gemm --sizes 1024",
    .toolkit_version = 13000,
    .gpu = "NVIDIA Test GPU",
    .cc_major = 8,
    .cc_minor = 6,
    .driver_version = 12040,
    .runtime_version = 13000,
    .driver = "580.159.04",
    .build_arch = "sm_80",
    .stages = 3,
    .source_hash =
        "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    .seed = UINT64_MAX,
    .reps = 25,
    .date_utc = "2024-01-02T03:04:05Z",
    .blocks_per_sm = 0,
    .cold_l2 = 0,
    .flush_bytes = 125829120,
    .sm_count = 132,
    .regs_per_sm = 65536,
    .smem_per_sm_bytes = 233472,
    .l2_bytes = 62914560,
    .max_sm_clock_mhz = 1980,
    .pairs = (1u << DAY74_PAIR_BASIC) | (1u << DAY74_PAIR_BLOCKED),
    .kernels =
        {
            [DAY74_PAIR_BASIC] = {{.name = "sgemm_sync",
                                   .registers = 40,
                                   .static_smem_bytes = 8192,
                                   .dynamic_smem_bytes = 0,
                                   .blocks_per_sm = 6,
                                   .ptx_version = 80,
                                   .binary_version = 80},
                                  {.name = "sgemm_piped",
                                   .registers = 48,
                                   .static_smem_bytes = 16400,
                                   .dynamic_smem_bytes = 24576,
                                   .blocks_per_sm = 3,
                                   .ptx_version = 0,
                                   .binary_version = 90}},
            [DAY74_PAIR_BLOCKED] = {{.name = "sgemm_blocked_sync",
                                     .registers = 128,
                                     .static_smem_bytes = 16384,
                                     .dynamic_smem_bytes = 4096,
                                     .blocks_per_sm = 2,
                                     .ptx_version = 81,
                                     .binary_version = 86},
                                    {.name = "sgemm_blocked_piped",
                                     .registers = 127,
                                     .static_smem_bytes = 0,
                                     .dynamic_smem_bytes = 49152,
                                     .blocks_per_sm = 1,
                                     .ptx_version = 82,
                                     .binary_version = 87}},
        },
};

/* A "# key: value" line the preamble must hold exactly once. */
typedef struct {
    const char *key, *value;
} preamble_line;

/* Keys that do not depend on the pairs, for sample_info. */
static const preamble_line run_lines[] = {
    {"program", "pipelined_gemm (day 74)"},
    {"gpu", "NVIDIA Test GPU"},
    {"compute_capability", "8.6"},
    {"host", "test-host"},
    {"command", "pipelined_gemm --sizes 1024"},
    {"toolkit", "CUDA 13.0"},
    {"driver", "580.159.04"},
    {"driver_api_version", "12040"},
    {"runtime_version", "13000"},
    {"build_arch", "sm_80"},
    {"stages", "3"},
    {"source_sha256",
     "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
    {"seed", "18446744073709551615"},
    {"timed_launches", "25"},
    {"date_utc", "2024-01-02T03:04:05Z"},
    {"blocks_per_sm_setting", "natural"},
    {"l2", "warm"},
    {"l2_flush_bytes", "125829120"},
    {"sm_count", "132"},
    {"regs_per_sm", "65536"},
    {"smem_per_sm_bytes", "233472"},
    {"l2_bytes", "62914560"},
    {"max_sm_clock_mhz", "1980"},
};

/* The basic pair's kernels in sample_info. */
static const preamble_line basic_lines[] = {
    {"basic_sync_kernel", "sgemm_sync"},
    {"basic_piped_kernel", "sgemm_piped"},
    {"basic_sync_registers", "40"},
    {"basic_piped_registers", "48"},
    {"basic_sync_static_smem_bytes", "8192"},
    {"basic_piped_static_smem_bytes", "16400"},
    {"basic_sync_dynamic_smem_bytes", "0"},
    {"basic_piped_dynamic_smem_bytes", "24576"},
    {"basic_sync_blocks_per_sm", "6"},
    {"basic_piped_blocks_per_sm", "3"},
    {"basic_sync_ptx_version", "80"},
    {"basic_piped_ptx_version", "0"},
    {"basic_sync_binary_version", "80"},
    {"basic_piped_binary_version", "90"},
};

/* The blocked pair's kernels in sample_info. */
static const preamble_line blocked_lines[] = {
    {"blocked_sync_kernel", "sgemm_blocked_sync"},
    {"blocked_piped_kernel", "sgemm_blocked_piped"},
    {"blocked_sync_registers", "128"},
    {"blocked_piped_registers", "127"},
    {"blocked_sync_static_smem_bytes", "16384"},
    {"blocked_piped_static_smem_bytes", "0"},
    {"blocked_sync_dynamic_smem_bytes", "4096"},
    {"blocked_piped_dynamic_smem_bytes", "49152"},
    {"blocked_sync_blocks_per_sm", "2"},
    {"blocked_piped_blocks_per_sm", "1"},
    {"blocked_sync_ptx_version", "81"},
    {"blocked_piped_ptx_version", "82"},
    {"blocked_sync_binary_version", "86"},
    {"blocked_piped_binary_version", "87"},
};

/* The column header the CSV must carry. */
static const char csv_columns[] =
    "pair,n,blocks,waves,correct,identical,sync_max_rel_err,"
    "sync_ms_median,sync_ms_min,sync_ms_max,"
    "piped_ms_median,piped_ms_min,piped_ms_max,"
    "cublas_ms_median,cublas_ms_min,cublas_ms_max,"
    "sync_gflops,piped_gflops,cublas_gflops,"
    "piped_over_sync,sync_pct_cublas,piped_pct_cublas,"
    "sync_mhz,piped_mhz,cublas_mhz";

/* The preamble of a CSV: its "# " lines, and the first other line. */
typedef struct {
    char lines[96][256];
    size_t count;
    char header[1024];
} preamble;

/* Reads the next line of f into buf without its newline; 0 at end of
   file. */
static int read_line(FILE *f, char *buf, size_t len)
{
    if (fgets(buf, (int)len, f) == NULL)
        return 0;
    buf[strcspn(buf, "\n")] = '\0';
    return 1;
}

/* Writes day74_csv_header(info) to a temporary file and reads it back into
   *p, checking every preamble line is "# key: value"; returns the file,
   positioned after the header. */
static FILE *write_preamble(const day74_run_info *info, preamble *p)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(day74_csv_header(f, info), 0);
    rewind(f);
    p->count = 0;
    p->header[0] = '\0';
    char line[1024];
    while (read_line(f, line, sizeof line)) {
        if (line[0] != '#') {
            snprintf(p->header, sizeof p->header, "%s", line);
            break;
        }
        assert_true(p->count < COUNT_OF(p->lines));
        assert_true(strlen(line) < sizeof p->lines[0]);
        if (strncmp(line, "# ", 2) != 0 || strstr(line, ": ") == NULL)
            fail_msg("preamble line \"%s\" is not \"# key: value\"", line);
        strcpy(p->lines[p->count++], line);
    }
    return f;
}

/* Asserts that the preamble holds each key of want[0..n) exactly once,
   with its value. */
static void expect_lines(const preamble *p, const preamble_line *want,
                         size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        const size_t klen = strlen(want[i].key);
        int seen = 0;
        for (size_t l = 0; l < p->count; ++l) {
            const char *line = p->lines[l];
            if (strncmp(line + 2, want[i].key, klen) != 0 ||
                strncmp(line + 2 + klen, ": ", 2) != 0)
                continue;
            ++seen;
            if (strcmp(line + 4 + klen, want[i].value) != 0)
                fail_msg("preamble key %s: got \"%s\", want \"%s\"",
                         want[i].key, line + 4 + klen, want[i].value);
        }
        if (seen != 1)
            fail_msg("preamble key %s seen %d times", want[i].key, seen);
    }
}

/* Asserts that no preamble key starts with prefix. */
static void expect_no_key_prefix(const preamble *p, const char *prefix)
{
    for (size_t l = 0; l < p->count; ++l)
        if (strncmp(p->lines[l] + 2, prefix, strlen(prefix)) == 0)
            fail_msg("preamble has \"%s\", though that pair did not run",
                     p->lines[l]);
}

/* With both pairs run, the preamble holds every provenance key with its
   value, seven lines per kernel named <pair>_<sync|piped>_<field>, and
   nothing else; then comes the column header, and nothing after it. */
static void test_csv_preamble_and_header(void **state)
{
    (void)state;
    preamble p;
    FILE *f = write_preamble(&sample_info, &p);
    expect_lines(&p, run_lines, COUNT_OF(run_lines));
    expect_lines(&p, basic_lines, COUNT_OF(basic_lines));
    expect_lines(&p, blocked_lines, COUNT_OF(blocked_lines));
    assert_int_equal(p.count, COUNT_OF(run_lines) + COUNT_OF(basic_lines) +
                                  COUNT_OF(blocked_lines));
    assert_string_equal(p.header, csv_columns);
    char line[1024];
    assert_int_equal(read_line(f, line, sizeof line), 0);
    fclose(f);
}

/* Only the pairs whose bit is set get kernel lines: the other pair's are
   absent, not written from its (here bogus) records. */
static void test_csv_preamble_one_pair(void **state)
{
    (void)state;
    for (int p = 0; p < DAY74_PAIRS; ++p) {
        day74_run_info info = sample_info;
        const int other = 1 - p;
        info.pairs = 1u << p;
        info.kernels[other][0].name = "must-not-appear";
        info.kernels[other][1].name = "must-not-appear";
        preamble pre;
        FILE *f = write_preamble(&info, &pre);
        fclose(f);
        expect_lines(&pre, run_lines, COUNT_OF(run_lines));
        const preamble_line *mine = p == DAY74_PAIR_BASIC ? basic_lines
                                                          : blocked_lines;
        const size_t n = p == DAY74_PAIR_BASIC ? COUNT_OF(basic_lines)
                                               : COUNT_OF(blocked_lines);
        expect_lines(&pre, mine, n);
        char prefix[16];
        snprintf(prefix, sizeof prefix, "%s_", day74_pair_name(other));
        expect_no_key_prefix(&pre, prefix);
        assert_int_equal(pre.count, COUNT_OF(run_lines) + n);
        assert_string_equal(pre.header, csv_columns);
    }
}

/* The residency and L2 settings as the preamble writes them. */
typedef struct {
    int blocks_per_sm, cold_l2;
    const char *setting, *l2;
} setting_line_case;

/* blocks_per_sm_setting is "natural" for 0, else the number; l2 is "warm"
   or "cold". */
static void test_csv_preamble_settings(void **state)
{
    (void)state;
    static const setting_line_case cases[] = {
        {0, 0, "natural", "warm"},
        {0, 1, "natural", "cold"},
        {1, 0, "1", "warm"},
        {4, 1, "4", "cold"},
        {DAY74_MAX_BLOCKS_PER_SM, 1, "32", "cold"},
    };
    for (size_t i = 0; i < COUNT_OF(cases); ++i) {
        day74_run_info info = sample_info;
        info.blocks_per_sm = cases[i].blocks_per_sm;
        info.cold_l2 = cases[i].cold_l2;
        preamble p;
        FILE *f = write_preamble(&info, &p);
        fclose(f);
        const preamble_line want[] = {
            {"blocks_per_sm_setting", cases[i].setting},
            {"l2", cases[i].l2},
        };
        expect_lines(&p, want, COUNT_OF(want));
    }
}

static day74_row sample_row(void)
{
    day74_row r;
    memset(&r, 0, sizeof r);
    r.pair = DAY74_PAIR_BLOCKED;
    r.n = 1024;
    r.blocks = 64;
    r.waves = 64.0 / 132.0;
    r.correct = 1;
    r.identical = 1;
    r.sync_rel_err = 1.25e-6;
    r.sync = (day74_stats){2.0, 1.9, 2.5};
    r.piped = (day74_stats){1.5, 1.25, 1.75};
    r.cublas = (day74_stats){1.0, 0.875, 1.125};
    r.sync_mhz = 1980;
    r.piped_mhz = 1755;
    r.cublas_mhz = 1830;
    return r;
}

/* One CSV column: its header name, the value sample_row() must give in
   it, and the tolerance its printed precision (9 significant digits)
   allows. */
typedef struct {
    const char *column;
    double want, tol;
} csv_column_case;

/* A row starts with its pair's name, has as many columns as the header,
   and each column under its header name parses back to its value (to
   printed precision); the derived columns are right and the three clocks
   come last. */
static void test_csv_row_round_trip(void **state)
{
    (void)state;
    const double gs = 2.0 * 1024.0 * 1024.0 * 1024.0 / 2.0e-3 / 1e9;
    const double gp = gs * 2.0 / 1.5, gc = gs * 2.0;
    /* Every number is printed with 9 significant digits: a relative
       tolerance of 5e-9 (written here as absolute ones). */
    const csv_column_case cols[] = {
        {"n", 1024, 0},
        {"blocks", 64, 0},
        {"waves", 64.0 / 132.0, 5e-9},
        {"correct", 1, 0},
        {"identical", 1, 0},
        {"sync_max_rel_err", 1.25e-6, 1e-14},
        {"sync_ms_median", 2.0, 1e-8},
        {"sync_ms_min", 1.9, 1e-8},
        {"sync_ms_max", 2.5, 2e-8},
        {"piped_ms_median", 1.5, 1e-8},
        {"piped_ms_min", 1.25, 1e-8},
        {"piped_ms_max", 1.75, 1e-8},
        {"cublas_ms_median", 1.0, 1e-8},
        {"cublas_ms_min", 0.875, 1e-8},
        {"cublas_ms_max", 1.125, 1e-8},
        {"sync_gflops", gs, gs * 5e-9},
        {"piped_gflops", gp, gp * 5e-9},
        {"cublas_gflops", gc, gc * 5e-9},
        {"piped_over_sync", 0.75, 0},
        {"sync_pct_cublas", 50.0, 0},
        {"piped_pct_cublas", 200.0 / 3.0, 5e-7}, /* 2/3 of cuBLAS */
        {"sync_mhz", 1980, 0},
        {"piped_mhz", 1755, 0},
        {"cublas_mhz", 1830, 0},
    };
    for (int pair = 0; pair < DAY74_PAIRS; ++pair) {
        day74_row r = sample_row();
        r.pair = pair;
        FILE *f = tmpfile();
        assert_non_null(f);
        assert_int_equal(day74_csv_header(f, &sample_info), 0);
        assert_int_equal(day74_csv_row(f, &r), 0);
        rewind(f);
        char line[1024], header[1024] = "", rest[8];
        while (read_line(f, line, sizeof line) && line[0] == '#')
            ;
        strcpy(header, line);
        assert_int_equal(read_line(f, line, sizeof line), 1);
        assert_int_equal(read_line(f, rest, sizeof rest), 0);
        fclose(f);

        /* The header's column names, split in place. */
        const char *names[32];
        size_t ncols = 0;
        for (char *p = header;; ++p) {
            assert_true(ncols < COUNT_OF(names));
            names[ncols++] = p;
            p = strchr(p, ',');
            if (p == NULL)
                break;
            *p = '\0';
        }
        assert_string_equal(names[0], "pair");
        assert_int_equal(ncols, 1 + COUNT_OF(cols));

        char *comma = strchr(line, ',');
        assert_non_null(comma);
        *comma = '\0';
        assert_string_equal(line, pair == DAY74_PAIR_BASIC ? "basic"
                                                           : "blocked");
        size_t k = 0;
        for (char *p = comma + 1, *end;; p = end + 1) {
            assert_true(k < COUNT_OF(cols));
            const double v = strtod(p, &end);
            assert_true(end != p);
            assert_string_equal(names[k + 1], cols[k].column);
            char what[64];
            snprintf(what, sizeof what, "CSV column %s", cols[k].column);
            assert_near(v, cols[k].want, cols[k].tol, what);
            ++k;
            if (*end == '\0')
                break;
            assert_int_equal(*end, ',');
        }
        assert_int_equal(k, COUNT_OF(cols));
    }
}

/* Writes to a full device fail with -1 when the stream is unbuffered. */
static void test_csv_write_failure_unbuffered(void **state)
{
    (void)state;
    FILE *f = fopen("/dev/full", "w");
    if (f == NULL)
        skip();
    setvbuf(f, NULL, _IONBF, 0);
    const day74_row r = sample_row();
    assert_int_equal(day74_csv_header(f, &sample_info), -1);
    assert_int_equal(day74_csv_row(f, &r), -1);
    fclose(f);
}

/* Buffered, the error on a full device surfaces at fflush at the latest
   (main checks fclose). */
static void test_csv_write_failure_buffered(void **state)
{
    (void)state;
    FILE *f = fopen("/dev/full", "w");
    if (f == NULL)
        skip();
    const day74_row r = sample_row();
    const int header = day74_csv_header(f, &sample_info);
    const int row = day74_csv_row(f, &r);
    assert_true(header == 0 || header == -1);
    assert_true(row == 0 || row == -1);
    assert_int_not_equal(fflush(f), 0);
    assert_true(ferror(f));
    fclose(f);
}

#ifdef __GLIBC__
/* A fopencookie write function that fails (ENOSPC; 0 bytes written, as
   fopencookie(3) asks) every write holding the string cookie, and takes
   every other write whole. */
static ssize_t write_failing_on(void *cookie, const char *buf, size_t size)
{
    const char *needle = cookie;
    if (memmem(buf, size, needle, strlen(needle)) != NULL) {
        errno = ENOSPC;
        return 0;
    }
    return (ssize_t)size;
}
#endif

/* One kernel block's write failing, and every other write succeeding,
   still makes day74_csv_header return -1, whichever block it is; a pair
   that did not run writes nothing that could fail. */
static void test_csv_write_failure_in_kernel_lines(void **state)
{
    (void)state;
#ifdef __GLIBC__
    static const struct {
        unsigned pairs;
        const char *fail_on;
        int want;
    } cases[] = {
        {3, "no line holds this", 0},
        {3, "# basic_sync_kernel: ", -1},
        {3, "# basic_piped_kernel: ", -1},
        {3, "# blocked_sync_kernel: ", -1},
        {3, "# blocked_piped_kernel: ", -1},
        {1, "# blocked_sync_kernel: ", 0},
        {2, "# basic_piped_kernel: ", 0},
        {2, "# blocked_piped_kernel: ", -1},
    };
    const cookie_io_functions_t io = {.write = write_failing_on};
    for (size_t i = 0; i < COUNT_OF(cases); ++i) {
        day74_run_info info = sample_info;
        info.pairs = cases[i].pairs;
        FILE *f = fopencookie((void *)cases[i].fail_on, "w", io);
        assert_non_null(f);
        setvbuf(f, NULL, _IONBF, 0);
        const int rc = day74_csv_header(f, &info);
        fclose(f);
        if (rc != cases[i].want)
            fail_msg("pairs %u, failing on \"%s\": got %d, want %d",
                     cases[i].pairs, cases[i].fail_on, rc, cases[i].want);
    }
#else
    skip();
#endif
}

/* ---- the table ---------------------------------------------------------- */

/* Prints to a string: the table's header, or one row. */
static void table_line(char *buf, size_t len, const day74_row *row)
{
    memset(buf, 0, len);
    FILE *f = fmemopen(buf, len - 1, "w");
    assert_non_null(f);
    if (row == NULL)
        day74_table_header(f);
    else
        day74_table_row(f, row);
    fclose(f);
}

/* The table's header and a row line up (same length), the row starting
   with the pair's name and N and ending with the piped kernel's clock. */
static void test_table_row_lines_up(void **state)
{
    (void)state;
    char header[256], row[256];
    table_line(header, sizeof header, NULL);
    const day74_row r = sample_row();
    table_line(row, sizeof row, &r);
    assert_true(strlen(header) > 1);
    assert_int_equal(strlen(row), strlen(header));
    assert_true(strncmp(header, "pair", 4) == 0);
    assert_true(strncmp(row, "blocked ", 8) == 0);
    assert_non_null(strstr(row, " 1024 "));
    assert_true(strcmp(row + strlen(row) - 6, " 1755\n") == 0);
    assert_true(strcmp(header + strlen(header) - 5, " MHz\n") == 0);
}

/* ---- statistics --------------------------------------------------------- */

/* Odd count: median is the middle value, min/max the extremes, input left
   sorted. */
static void test_summarize_odd(void **state)
{
    (void)state;
    float ms[] = {3.0f, 1.0f, 2.0f, 9.0f, 0.5f};
    day74_stats s;
    assert_int_equal(day74_summarize(ms, 5, &s), 0);
    assert_true(s.median_ms == 2.0);
    assert_true(s.min_ms == 0.5);
    assert_true(s.max_ms == 9.0);
    for (int i = 1; i < 5; ++i)
        assert_true(ms[i - 1] <= ms[i]);
}

/* An even count's median is the mean of the two middle values. */
static void test_summarize_even(void **state)
{
    (void)state;
    float ms[] = {4.0f, 1.0f, 3.0f, 2.0f};
    day74_stats s;
    assert_int_equal(day74_summarize(ms, 4, &s), 0);
    assert_true(s.median_ms == 2.5);
    assert_true(s.min_ms == 1.0);
    assert_true(s.max_ms == 4.0);
    float two[] = {1.0f, 2.0f};
    assert_int_equal(day74_summarize(two, 2, &s), 0);
    assert_true(s.median_ms == 1.5);
}

/* One value is its own median, minimum and maximum; duplicates are
   fine. */
static void test_summarize_single_and_duplicates(void **state)
{
    (void)state;
    float one[] = {7.25f};
    day74_stats s;
    assert_int_equal(day74_summarize(one, 1, &s), 0);
    assert_true(s.median_ms == 7.25 && s.min_ms == 7.25 && s.max_ms == 7.25);
    float dup[] = {2.0f, 2.0f, 1.0f, 2.0f};
    assert_int_equal(day74_summarize(dup, 4, &s), 0);
    assert_true(s.median_ms == 2.0 && s.min_ms == 1.0 && s.max_ms == 2.0);
}

/* Count 0 returns -1 and leaves *out alone. */
static void test_summarize_empty(void **state)
{
    (void)state;
    float ms[1] = {1.0f};
    day74_stats s = {-7.0, -8.0, -9.0};
    assert_int_equal(day74_summarize(ms, 0, &s), -1);
    assert_true(s.median_ms == -7.0 && s.min_ms == -8.0 && s.max_ms == -9.0);
}

/* One day74_median_u32 case: count values and their median. */
typedef struct {
    unsigned x[6];
    size_t count;
    double want;
} median_case;

/* The median of clock samples: the middle value, or the mean of the two
   middle ones (not rounded, not overflowing near UINT_MAX); 0 for no
   samples; the samples are left sorted. */
static void test_median_u32(void **state)
{
    (void)state;
    static const median_case cases[] = {
        {{1755}, 1, 1755.0},
        {{1980, 1755, 1830}, 3, 1830.0},
        {{1980, 1755}, 2, 1867.5},
        {{4, 1, 3, 2}, 4, 2.5},
        {{7, 7, 1, 7}, 4, 7.0},
        {{5, 0, 9, 1, 8, 2}, 6, 3.5},
        {{UINT_MAX, UINT_MAX - 2}, 2, (double)UINT_MAX - 1.0},
        {{UINT_MAX, 0, UINT_MAX}, 3, (double)UINT_MAX},
        {{42}, 0, 0.0},
    };
    for (size_t i = 0; i < COUNT_OF(cases); ++i) {
        unsigned x[6];
        memcpy(x, cases[i].x, sizeof x);
        const double got = day74_median_u32(x, cases[i].count);
        if (got != cases[i].want)
            fail_msg("median case %zu: got %.17g, want %.17g", i, got,
                     cases[i].want);
        for (size_t k = 1; k < cases[i].count; ++k)
            if (x[k - 1] > x[k])
                fail_msg("median case %zu: x not sorted at %zu", i, k);
    }
    unsigned untouched[1] = {42};
    assert_true(day74_median_u32(untouched, 0) == 0.0);
    assert_int_equal(untouched[0], 42);
}

/* GFLOP/s is 2 N^3 operations over the time in seconds, in units of
   1e9. */
static void test_gflops(void **state)
{
    (void)state;
    assert_near(day74_gflops(1000, 1.0), 2000.0, 1e-9, "N=1000, 1 ms");
    assert_near(day74_gflops(4096, 10.0),
                2.0 * 4096.0 * 4096.0 * 4096.0 / 1e-2 / 1e9, 1e-9,
                "N=4096, 10 ms");
    assert_near(day74_gflops(64, 0.5), 2.0 * 64 * 64 * 64 / 5e-4 / 1e9,
                1e-12, "N=64");
}

/* ---- the input generator ------------------------------------------------ */

/* The same seed gives the same values, and the state advances. */
static void test_fill_random_deterministic(void **state)
{
    (void)state;
    float x[1000], y[1000];
    uint64_t s1 = 74, s2 = 74;
    day74_fill_random(x, 1000, &s1);
    day74_fill_random(y, 1000, &s2);
    assert_memory_equal(x, y, sizeof x);
    assert_true(s1 == s2);
    assert_true(s1 != 74);
    day74_fill_random(y, 1000, &s2);
    assert_memory_not_equal(x, y, sizeof x);
}

/* Filling in two calls continues the same stream as filling in one. */
static void test_fill_random_stream_continues(void **state)
{
    (void)state;
    float whole[64], parts[64];
    uint64_t s1 = 5, s2 = 5;
    day74_fill_random(whole, 64, &s1);
    day74_fill_random(parts, 17, &s2);
    day74_fill_random(parts + 17, 47, &s2);
    assert_memory_equal(whole, parts, sizeof whole);
}

/* Every value is in (0, 1]: never 0, never above 1, never NaN. */
static void test_fill_random_range(void **state)
{
    (void)state;
    enum { N = 1 << 16 };
    static float x[N];
    uint64_t s = 0;
    day74_fill_random(x, N, &s);
    float lo = 2.0f, hi = -1.0f;
    for (size_t i = 0; i < N; ++i) {
        if (!(x[i] > 0.0f && x[i] <= 1.0f))
            fail_msg("x[%zu] = %.9g is outside (0, 1]", i, (double)x[i]);
        lo = x[i] < lo ? x[i] : lo;
        hi = x[i] > hi ? x[i] : hi;
    }
    assert_true(lo < 0.001f);
    assert_true(hi > 0.999f);
}

/* From state 0 the first value is splitmix64's known 0xE220A8397B1DCDAF:
   (top 24 bits + 1) / 2^24. */
static void test_fill_random_known_value(void **state)
{
    (void)state;
    float x[1];
    uint64_t s = 0;
    day74_fill_random(x, 1, &s);
    assert_true(x[0] == (float)(0xE220A8u + 1u) / 16777216.0f);
    assert_true(s == 0x9E3779B97F4A7C15ull);
}

/* Different seeds give different sequences. */
static void test_fill_random_seeds_differ(void **state)
{
    (void)state;
    float x[256], y[256];
    uint64_t s1 = 74, s2 = 75;
    day74_fill_random(x, 256, &s1);
    day74_fill_random(y, 256, &s2);
    size_t same = 0;
    for (size_t i = 0; i < 256; ++i)
        same += x[i] == y[i];
    assert_true(same < 8);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm_1x1),
        cmocka_unit_test(test_gemm_2x2),
        cmocka_unit_test(test_gemm_3x3),
        cmocka_unit_test(test_gemm_identity),
        cmocka_unit_test(test_gemm_accumulates_in_double),
        cmocka_unit_test(test_gemm_empty),
        cmocka_unit_test(test_gemm_progress_one_thread),
        cmocka_unit_test(test_gemm_progress_threads),
        cmocka_unit_test(test_gemm_progress_empty),
        cmocka_unit_test(test_transpose_3x3),
        cmocka_unit_test(test_transpose_random),
        cmocka_unit_test(test_transpose_tiny),
        cmocka_unit_test(test_mismatch_tolerance_edge),
        cmocka_unit_test(test_mismatch_just_above),
        cmocka_unit_test(test_mismatch_nan_fails),
        cmocka_unit_test(test_mismatch_inf_fails),
        cmocka_unit_test(test_mismatch_zero_reference_absolute),
        cmocka_unit_test(test_mismatch_all_agree),
        cmocka_unit_test(test_mismatch_first_of_several),
        cmocka_unit_test(test_max_rel_error_worst),
        cmocka_unit_test(test_max_rel_error_zero_reference),
        cmocka_unit_test(test_max_rel_error_nan),
        cmocka_unit_test(test_residency_pad_cases),
        cmocka_unit_test(test_residency_pad_fits_exactly),
        cmocka_unit_test(test_waves),
        cmocka_unit_test(test_sizes_accepted),
        cmocka_unit_test(test_sizes_full_list),
        cmocka_unit_test(test_sizes_reject_not_positive_numbers),
        cmocka_unit_test(test_sizes_reject_empty),
        cmocka_unit_test(test_sizes_reject_too_large),
        cmocka_unit_test(test_sizes_reject_not_multiple),
        cmocka_unit_test(test_sizes_reject_too_many),
        cmocka_unit_test(test_sizes_error_buffer_bounds),
        cmocka_unit_test(test_options_defaults),
        cmocka_unit_test(test_options_accepted),
        cmocka_unit_test(test_options_pairs_residency_l2),
        cmocka_unit_test(test_options_sizes_follow_kernels),
        cmocka_unit_test(test_options_rejected),
        cmocka_unit_test(test_options_error_buffer_bounds),
        cmocka_unit_test(test_pair_names),
        cmocka_unit_test(test_usage_mentions_options),
        cmocka_unit_test(test_csv_preamble_and_header),
        cmocka_unit_test(test_csv_preamble_one_pair),
        cmocka_unit_test(test_csv_preamble_settings),
        cmocka_unit_test(test_csv_row_round_trip),
        cmocka_unit_test(test_csv_write_failure_unbuffered),
        cmocka_unit_test(test_csv_write_failure_buffered),
        cmocka_unit_test(test_csv_write_failure_in_kernel_lines),
        cmocka_unit_test(test_table_row_lines_up),
        cmocka_unit_test(test_summarize_odd),
        cmocka_unit_test(test_summarize_even),
        cmocka_unit_test(test_summarize_single_and_duplicates),
        cmocka_unit_test(test_summarize_empty),
        cmocka_unit_test(test_median_u32),
        cmocka_unit_test(test_gflops),
        cmocka_unit_test(test_fill_random_deterministic),
        cmocka_unit_test(test_fill_random_stream_continues),
        cmocka_unit_test(test_fill_random_range),
        cmocka_unit_test(test_fill_random_known_value),
        cmocka_unit_test(test_fill_random_seeds_differ),
    };
    return cmocka_run_group_tests_name("harness", tests, NULL, NULL) != 0;
}
