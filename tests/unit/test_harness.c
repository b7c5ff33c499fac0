/* cmocka tests of the host harness (build/harness.c, from day74.nw), no
 * GPU involved; `make unit-test` runs them. Most are tables of cases. */
#define _POSIX_C_SOURCE 200809L /* fmemopen */
#define _GNU_SOURCE /* fopencookie, memmem (glibc) */
#include "harness.h" /* and stddef.h, stdint.h, stdio.h */
#include <stdarg.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <omp.h> /* make builds and links the tests with -fopenmp */
#include <stdlib.h>
#include <string.h>

/* The basic, blocked and wide pairs' tiles, as pipelined_gemm passes them. */
#define TILE 64
static const size_t tiles[DAY74_PAIRS] = {TILE, 128, 256};

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))
#define TEST(name) static void name(void **state __attribute__((unused)))

static void assert_near(double got, double want, double tol, const char *what)
{
    if (!(fabs(got - want) <= tol))
        fail_msg("%s: got %.17g, want %.17g (tolerance %g)", what, got, want,
                 tol);
}

/* err is non-empty and holds each non-NULL word of words[0..n). */
static void expect_mentions(const char *what, const char *err,
                            const char *const *words, size_t n)
{
    assert_true(strlen(err) > 0);
    for (size_t i = 0; i < n; ++i)
        if (words[i] != NULL && strstr(err, words[i]) == NULL)
            fail_msg("%s: message \"%s\" does not mention \"%s\"", what, err,
                     words[i]);
}

/* day74_parse_options of the NULL-terminated args after argv[0]. */
static int parse_args(const char *const *args, day74_options *opt, char *err,
                      size_t err_len)
{
    char *argv[16] = {"pipelined_gemm"};
    int argc = 1;
    for (; args[argc - 1] != NULL; ++argc) {
        assert_true(argc < (int)COUNT_OF(argv) - 1);
        argv[argc] = (char *)args[argc - 1];
    }
    return day74_parse_options(argc, argv, tiles, opt, err, err_len);
}

/* The lines of tests/fixtures/unit/NAME but empty and "#" ones as rows[i]:
   TAB-separated fields (at most 11), NULL after the last; text (4096
   bytes) holds them. Returns the row count (at most max). make unit-test
   runs from the module's root. */
static size_t read_rows(const char *name, char *text, char *rows[][12],
                        size_t max)
{
    char path[128], *rest = text, *line;
    size_t n = 0;
    snprintf(path, sizeof path, "tests/fixtures/unit/%s", name);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    const size_t len = fread(text, 1, 4095, f);
    assert_true(len < 4095 && fclose(f) == 0);
    text[len] = '\0';
    while ((line = strsep(&rest, "\n")) != NULL) {
        size_t k = 0;
        if (*line == '#' || *line == '\0')
            continue;
        assert_true(n < max);
        while (k < 11 && (rows[n][k] = strsep(&line, "\t")) != NULL)
            ++k;
        rows[n++][k] = NULL;
    }
    return n;
}

/* Exact products; only a double accumulator keeps the last's 2^24 + 1. */
typedef struct {
    size_t n;
    float a[9], b[9];
    double want[9];
} gemm_case;
static const gemm_case gemm_cases[] = {
    {1, {3.0f}, {-4.5f}, {-13.5}},
    {2, {1, 2, 3, 4}, {5, 6, 7, 8}, {19, 22, 43, 50}},
    {3, {1, 2, 3, 4, 5, 6, 7, 8, 9}, {9, 8, 7, 6, 5, 4, 3, 2, 1},
     {30, 24, 18, 84, 69, 54, 138, 114, 90}},
    {2, {16777216.0f, 1, 0, 0}, {1, 0, 1, 0}, {16777217.0, 0, 0, 0}},
};

/* The progress calls seen; thread: the first caller's OpenMP thread. */
typedef struct {
    size_t calls, first_done, last_done, min_total, max_total;
    int decreasing, over_total, thread, threads_seen;
} progress_log;

/* A day74_progress_fn logging into ctx, safe from several threads. */
static void record_progress(size_t done, size_t total, void *ctx)
{
    progress_log *log = ctx;
    const int thread = omp_get_thread_num();
#pragma omp critical(day74_test_progress)
    {
        if (log->calls == 0)
            log->first_done = done, log->thread = thread;
        log->decreasing |= log->calls && done < log->last_done;
        log->threads_seen |= thread != log->thread;
        log->over_total |= done > total;
        log->min_total = total < log->min_total ? total : log->min_total;
        log->max_total = total > log->max_total ? total : log->max_total;
        log->last_done = done;
        ++log->calls;
    }
}

/* The reference, logged into *log; on one OpenMP thread if one. */
static void gemm_logged(const float *a, const float *b, double *c, size_t n,
                        int one, progress_log *log)
{
    const int before = omp_get_max_threads();
    memset(log, 0, sizeof *log);
    log->min_total = SIZE_MAX;
    omp_set_num_threads(one ? 1 : before);
    day74_reference_gemm(a, b, c, n, 1, record_progress, log);
    omp_set_num_threads(before);
}

/* Exact products over stale output; N = 0 writes nothing, no progress.
   I * B == B and B * I == B for a random 64x64 B (the OpenMP path). The
   product is as without a callback. Progress: total n, done <= n, at most
   n + 1 calls, one thread. On one thread (N = 3; 40, over one OpenMP
   chunk) done rises from >= 1 to n; on all (N = 256) only bounds hold. */
TEST(test_reference_gemm) {
    enum { N = 256, M = 64 };
    static float a[N * N], b[N * N];
    static double want[N * N], c[N * N];
    for (size_t k = 0; k < COUNT_OF(gemm_cases); ++k) {
        const gemm_case *g = &gemm_cases[k];
        for (int i = 0; i < 9; ++i)
            c[i] = NAN;
        day74_reference_gemm(g->a, g->b, c, g->n, 1, NULL, NULL);
        for (size_t i = 0; i < g->n * g->n; ++i)
            if (c[i] != g->want[i])
                fail_msg("case %zu: c[%zu] = %g, want %g", k, i, c[i],
                         g->want[i]);
    }
    progress_log log;
    c[0] = 42.0;
    day74_reference_gemm(gemm_cases[0].a, gemm_cases[0].b, c, 0, 1, NULL, NULL);
    assert_true(c[0] == 42.0);
    gemm_logged(gemm_cases[0].a, gemm_cases[0].b, c, 0, 0, &log);
    assert_int_equal(log.calls, 0);
    assert_true(c[0] == 42.0);
    uint64_t seed = 1;
    day74_fill_random(b, M * M, &seed);
    for (size_t i = 0; i < M; ++i)
        a[i * M + i] = 1.0f; /* a = I */
    for (int side = 0; side < 2; ++side) {
        day74_reference_gemm(side ? b : a, side ? a : b, c, M, 1, NULL, NULL);
        for (size_t i = 0; i < M * M; ++i)
            assert_true(c[i] == (double)b[i]);
    }
    for (int k = 0; k < 3; ++k) {
        const size_t n = k == 0 ? 3 : k == 1 ? 40 : N;
        const int one = k < 2;
        seed = 8 + (uint64_t)k;
        day74_fill_random(a, n * n, &seed);
        day74_fill_random(b, n * n, &seed);
        day74_reference_gemm(a, b, want, n, 1, NULL, NULL);
        gemm_logged(a, b, c, n, one, &log);
        assert_memory_equal(c, want, n * n * sizeof *c);
        assert_true(log.calls >= 1);
        assert_true(log.calls <= n + 1);
        assert_true(log.first_done >= 1);
        assert_true(log.last_done <= n);
        assert_int_equal(log.over_total, 0);
        assert_int_equal(log.min_total, n);
        assert_int_equal(log.max_total, n);
        assert_int_equal(log.threads_seen, 0);
        if (!one)
            continue;
        assert_int_equal(log.last_done, n);
        assert_int_equal(log.decreasing, 0);
    }
}

/* Checked rows: every row up to N = 2048, one in 64 above; band 1 (and 0) is
   every row; band 64 has one row in each band and visits all 64 offsets in 64
   bands; at N = 4096 and 8192 every 64- and 128-row tile holds a checked row,
   a 128-row tile's at an even row in its top half and an odd one below (so 64
   of its positions); a row past n - 1 is clamped to it. The banded
   reference's row i is row day74_checked_row(i) of the full product, bit for
   bit (N = 58, band 8: 8 rows, the last clamped from 59 to 57), its progress
   counts those rows, and the gather copies the same rows of a product. */
TEST(test_checked_rows) {
    enum { N = 58, BAND = 8, ROWS = (N + BAND - 1) / BAND };
    static float a[N * N], b[N * N], got[N * N], rows[ROWS * N];
    static double full[N * N], part[ROWS * N], band0[N * N];
    assert_int_equal(day74_check_band(2048), 1);
    assert_int_equal(day74_check_band(2049), 64);
    assert_int_equal(day74_check_band(8192), 64);
    for (size_t i = 0; i < 100; ++i)
        assert_int_equal(day74_checked_row(i, 1, 100), i);
    int seen[64] = {0};
    for (size_t i = 0; i < 64; ++i) {
        const size_t r = day74_checked_row(i, 64, 4096);
        assert_int_equal(r / 64, i);
        seen[r % 64] += 1;
    }
    for (size_t i = 0; i < 64; ++i)
        assert_int_equal(seen[i], 1);
    for (size_t n = 4096; n <= 8192; n *= 2)
        for (size_t tile = 64; tile <= 128; tile *= 2) {
            size_t hit[8192 / 64] = {0};
            for (size_t i = 0; i < n / 64; ++i)
                hit[day74_checked_row(i, 64, n) / tile] += 1;
            for (size_t t = 0; t < n / tile; ++t)
                assert_true(hit[t] >= 1);
        }
    for (size_t i = 0; i < 128; ++i) /* a 128-row tile: even rows on top, */
        assert_int_equal(day74_checked_row(i, 64, 8192) % 128 % 2,
                         i % 2); /* odd rows below: 64 of 128 positions */
    assert_int_equal(day74_checked_row(1, 8, 10), 9); /* 8 + 5, clamped */
    assert_int_equal(day74_checked_row(7, 8, N), N - 1); /* 56 + 3 */
    assert_int_equal(day74_checked_row(3, 8, 0), 0);
    uint64_t seed = 3;
    day74_fill_random(a, N * N, &seed);
    day74_fill_random(b, N * N, &seed);
    day74_reference_gemm(a, b, full, N, 1, NULL, NULL);
    day74_reference_gemm(a, b, band0, N, 0, NULL, NULL);
    assert_memory_equal(band0, full, sizeof full);
    progress_log log = {.min_total = SIZE_MAX};
    day74_reference_gemm(a, b, part, N, BAND, record_progress, &log);
    for (size_t i = 0; i < ROWS; ++i)
        assert_memory_equal(&part[i * N],
                            &full[day74_checked_row(i, BAND, N) * N],
                            N * sizeof *part);
    assert_true(log.calls >= 1);
    assert_int_equal(log.min_total, ROWS);
    assert_int_equal(log.max_total, ROWS);
    assert_int_equal(log.last_done, ROWS);
    assert_int_equal(log.decreasing, 0);
    assert_int_equal(log.over_total, 0);
    for (size_t i = 0; i < N * N; ++i)
        got[i] = (float)i;
    day74_gather_checked_rows(got, rows, N, BAND);
    for (size_t i = 0; i < ROWS; ++i)
        for (size_t j = 0; j < N; ++j)
            assert_true(rows[i * N + j] ==
                        (float)(day74_checked_row(i, BAND, N) * N + j));
}

/* 3x3, N = 1 and N = 0 by hand (no expected value is the stale 0); a
   random 37x37 at[k][i] == a[i][k], twice transposed bit for bit a. */
TEST(test_transpose) {
    enum { N = 37 };
    static float a[N * N], at[N * N], att[N * N];
    const float a3[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    const float want[] = {1, 4, 7, 2, 5, 8, 3, 6, 9};
    day74_transpose(a3, at, 3);
    assert_memory_equal(at, want, sizeof want);
    day74_transpose(&want[4], at, 1);
    assert_true(at[0] == 5.0f);
    at[0] = -1.0f;
    day74_transpose(a3, at, 0);
    assert_true(at[0] == -1.0f);
    uint64_t seed = 37;
    day74_fill_random(a, N * N, &seed);
    day74_transpose(a, at, N);
    for (size_t i = 0; i < N; ++i)
        for (size_t k = 0; k < N; ++k)
            if (at[k * N + i] != a[i * N + k])
                fail_msg("at[%zu][%zu] = %g, want a[%zu][%zu] = %g", k, i,
                         (double)at[k * N + i], i, k, (double)a[i * N + k]);
    day74_transpose(at, att, N);
    assert_memory_equal(att, a, sizeof a);
}

/* max 0: the first index off by more than tol (want 0: absolute), NaN and
   infinity always off, count if none. max 1: the worst error (within tol),
   a 0 reference divided by 1e-30, NaN if any is NaN. */
TEST(test_compare) {
    char text[4096], *f[32][12];
    const size_t rows = read_rows("compare.tsv", text, f, 32);
    assert_true(rows > 20);
    for (size_t i = 0; i < rows; ++i) {
        float got[6] = {0};
        double want[6] = {0};
        char what[32], *g = f[i][1], *w = f[i][2];
        for (size_t k = 0; k < 6 && g != NULL; ++k)
            got[k] = (float)strtod(strsep(&g, ","), NULL);
        for (size_t k = 0; k < 6 && w != NULL; ++k)
            want[k] = strtod(strsep(&w, ","), NULL);
        const size_t count = strtoul(f[i][3], NULL, 10);
        const double tol = strtod(f[i][4], NULL);
        const double expect = strtod(f[i][5], NULL);
        const int max = f[i][0][0] == '1';
        const double result =
            max ? day74_max_rel_error(got, want, count)
                : (double)day74_first_mismatch(got, want, count, tol);
        snprintf(what, sizeof what, "compare case %zu", i);
        if (isnan(expect))
            assert_true(isnan(result));
        else
            assert_near(result, expect, max ? tol : 0, what);
    }
}

/* An H200-like card, as cudaGetDeviceProperties reports it. */
#define H200_SMEM_PER_SM 233472
#define H200_RESERVED 1024
#define H200 H200_SMEM_PER_SM, H200_RESERVED, 232448 /* max per block */

/* pad = min(smem_per_sm / blocks - reserved, max_per_block) rounded down
   to 128, minus used; SIZE_MAX if none. used + pad stays a multiple of
   128 within max_per_block. On the H200, 8 KiB padded for B blocks per SM
   fits B, not B + 1; B = 1 to 4, and 25 B in all, have a pad. */
TEST(test_residency_pad) {
    char text[4096], *cases[32][12];
    const size_t n = read_rows("residency-pad.tsv", text, cases, 32);
    assert_true(n > 20);
    for (size_t i = 0; i < n; ++i) {
        size_t v[6]; /* none: SIZE_MAX */
        for (int k = 0; k < 6; ++k)
            v[k] = strcmp(cases[i][k], "none") == 0
                       ? SIZE_MAX
                       : (size_t)strtoll(cases[i][k], NULL, 10);
        const size_t got = day74_residency_pad(v[0], v[1], v[2], v[3],
                                               (int)v[4]);
        if (got != v[5])
            fail_msg("residency pad, %s: got %zu, want %zu", cases[i][6],
                     got, v[5]);
        if (got != SIZE_MAX && ((v[3] + got) % 128 != 0 || v[3] + got > v[2]))
            fail_msg("residency pad, %s: used + pad = %zu is not a "
                     "multiple of 128 within %zu", cases[i][6], v[3] + got,
                     v[2]);
    }
    int padded = 0;
    for (int b = 1; b <= DAY74_MAX_BLOCKS_PER_SM; ++b) {
        const size_t pad = day74_residency_pad(H200, 8192, b);
        if (pad == SIZE_MAX) {
            if (b <= 4)
                fail_msg("no padding for %d blocks per SM", b);
            continue;
        }
        ++padded;
        const size_t per_block = 8192 + pad + H200_RESERVED;
        if (!(per_block * (size_t)b <= H200_SMEM_PER_SM))
            fail_msg("%d blocks of %zu bytes do not fit in %d", b, per_block,
                     H200_SMEM_PER_SM);
        if (!(H200_SMEM_PER_SM < per_block * (size_t)(b + 1)))
            fail_msg("%d blocks of %zu bytes fit in %d, not just %d", b + 1,
                     per_block, H200_SMEM_PER_SM, b);
    }
    assert_int_equal(padded, 25);
}

/* Waves: (n / tile)^2 blocks over sms * blocks_per_sm (132 on the H200:
   the docstring's 1.94, first); 0 if tile, sms or blocks_per_sm is <= 0. */
TEST(test_waves) {
    char text[4096], *f[24][12], *end;
    const size_t rows = read_rows("waves.tsv", text, f, 24);
    assert_true(rows > 10);
    for (size_t i = 0; i < rows; ++i) {
        char what[32];
        double want = strtod(f[i][4], &end);
        want /= *end == '/' ? strtod(end + 1, NULL) : 1.0;
        snprintf(what, sizeof what, "waves case %zu", i);
        assert_near(day74_waves(strtoul(f[i][0], NULL, 10),
                                strtoul(f[i][1], NULL, 10), atoi(f[i][2]),
                                atoi(f[i][3])),
                    want, 1e-12 * want, what);
    }
    assert_near(day74_waves(1024, 64, 132, 1), 1.94, 0.005, "1.94");
}

/* Accepted, in order: 1, 2, 3 (extremes, leading 0), and 16 sizes.
   Rejected (-1), sizes and count untouched, the message naming the item:
   zero, signs, junk, empty items, too large, not a multiple, too many (a
   cap of 2, or 16). */
TEST(test_parse_sizes) {
    static char text[8192], *good[8][12], *bad[32][12];
    const size_t n_good = read_rows("sizes-good.tsv", text, good, 8);
    const size_t n_bad = read_rows("sizes-bad.tsv", text + 4096, bad, 32);
    assert_true(n_good > 3 && n_bad > 20);
    /* sizes, then count; keep: bytes no parser writes */
    size_t out[DAY74_MAX_SIZES + 1], keep[DAY74_MAX_SIZES + 1];
    size_t *count = &out[DAY74_MAX_SIZES];
    memset(keep, 0x5A, sizeof keep);
    for (size_t i = 0; i < n_good; ++i) {
        char got[256] = "";
        assert_int_equal(day74_parse_sizes(good[i][0], TILE, out,
                                           DAY74_MAX_SIZES, count, NULL, 0),
                         0);
        for (size_t k = 0; k < *count; ++k)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%zu",
                     k ? "," : "", out[k]);
        assert_string_equal(got, good[i][1]);
    }
    for (size_t i = 0; i <= n_bad; ++i) { /* and last, NULL: "empty" */
        char err[256] = "", what[300];
        const char *in = i < n_bad ? bad[i][0] : NULL;
        const char *word = i < n_bad ? bad[i][1] : "empty";
        memcpy(out, keep, sizeof out);
        const int rc = day74_parse_sizes(in, TILE, out,
                                         i ? DAY74_MAX_SIZES : 2, count, err,
                                         sizeof err);
        if (rc != -1)
            fail_msg("--sizes \"%s\" was accepted (rc %d, count %zu)", in,
                     rc, *count);
        assert_memory_equal(out, keep, sizeof out);
        snprintf(what, sizeof what, "--sizes \"%s\"", in ? in : "(null)");
        expect_mentions(what, err, &word, 1);
    }
    /* A short error buffer is filled, not overrun; a NULL one is allowed. */
    char small[16];
    memset(small, 'Z', sizeof small);
    assert_int_equal(day74_parse_sizes("100", TILE, out, DAY74_MAX_SIZES,
                                       count, small, 8), -1);
    assert_int_equal(strlen(small), 7);
    for (size_t i = 8; i < sizeof small; ++i)
        assert_int_equal(small[i], 'Z');
    assert_int_equal(day74_parse_sizes("100", TILE, out, DAY74_MAX_SIZES,
                                       count, NULL, 0), -1);
}

/* The options as key=value words, as test_parse_options compares them. */
static void describe(const day74_options *o, char *buf, size_t len)
{
    char sizes[256] = "";
    for (size_t i = 0; i < o->n_sizes && i < DAY74_MAX_SIZES; ++i)
        snprintf(sizes + strlen(sizes), sizeof sizes - strlen(sizes),
                 "%s%zu", i ? "," : "", o->sizes[i]);
    assert_true(snprintf(buf, len, "sizes=%s pairs=%u bpsm=%d cold=%d "
                         "seed=%llu reps=%d timeout=%.17g csv=%s check=%d "
                         "help=%d", sizes, o->pairs, o->blocks_per_sm,
                         o->cold_l2, (unsigned long long)o->seed, o->reps,
                         o->timeout_s, o->csv_path ? o->csv_path : "(null)",
                         o->check_only, o->help) < (int)len);
}

/* Accepted: each option as the fixture says (defaults but for what the
   arguments change). The last --kernels wins; sizes must fit the largest
   selected tile. Rejected (-1), the message naming the words: unknown
   options, missing, empty, junk or out-of-range values, sizes not fitting a
   selected tile. A message is cut to err_len - 1, nothing written past it;
   NULL allowed. */
TEST(test_parse_options) {
    static char text[8192], *good[32][12], *bad[48][12];
    assert_string_equal(day74_pair_name(DAY74_PAIR_BASIC), "basic");
    assert_string_equal(day74_pair_name(DAY74_PAIR_BLOCKED), "blocked");
    assert_string_equal(day74_pair_name(DAY74_PAIR_WIDE), "wide");
    day74_options opt;
    const size_t n_good = read_rows("options-good.tsv", text, good, 32);
    for (size_t i = 0; i < n_good; ++i) {
        char got[256];
        memset(&opt, 0x5A, sizeof opt);
        if (parse_args((const char *const *)&good[i][1], &opt, got,
                       sizeof got) != 0)
            fail_msg("case %zu was rejected: %s", i, got);
        describe(&opt, got, sizeof got);
        if (strcmp(got, good[i][0]) != 0)
            fail_msg("case %zu: got \"%s\", want \"%s\"", i, got,
                     good[i][0]);
    }
    const size_t n_bad = read_rows("options-bad.tsv", text + 4096, bad, 48);
    assert_true(n_good > 20 && n_bad > 40);
    for (size_t i = 0; i < n_bad; ++i) {
        char err[256] = "", what[64];
        const char *words[2] = {strsep(&bad[i][0], "|")};
        words[1] = bad[i][0]; /* the second word, or NULL */
        snprintf(what, sizeof what, "case %zu, \"%s\"", i, bad[i][1]);
        if (parse_args((const char *const *)&bad[i][1], &opt, err,
                       sizeof err) != -1)
            fail_msg("%s was accepted", what);
        expect_mentions(what, err, words, 2);
    }
    const char *args[] = {"--kernels", "blocked", "--sizes", "192", NULL};
    char full[256] = "";
    assert_int_equal(parse_args(args, &opt, full, sizeof full), -1);
    const char *suffix = strstr(full, ", the blocked pair's tile");
    assert_non_null(suffix);
    const size_t whole = strlen(full), base = (size_t)(suffix - full);
    /* tiny; the base alone, then 1 or 5 characters more; whole - 1; whole */
    const size_t lens[] = {1, 8, base + 1, base + 2, base + 6, whole,
                           whole + 1};
    for (size_t i = 0; i < COUNT_OF(lens); ++i) {
        char err[300];
        memset(err, 'Z', sizeof err);
        assert_int_equal(parse_args(args, &opt, err, lens[i]), -1);
        const size_t want = lens[i] - 1 < whole ? lens[i] - 1 : whole;
        if (strlen(err) != want || strncmp(err, full, want) != 0)
            fail_msg("err_len %zu: message \"%s\", want the first %zu of "
                     "\"%s\"", lens[i], err, want, full);
        for (size_t k = lens[i]; k < sizeof err; ++k)
            if (err[k] != 'Z')
                fail_msg("err_len %zu: byte %zu overwritten", lens[i], k);
    }
    assert_int_equal(parse_args(args, &opt, NULL, 0), -1);
}

/* The usage names every option, the choices, and the exit codes. */
TEST(test_usage_mentions_options) {
    char buf[4096] = "";
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    assert_non_null(f);
    day74_print_usage(f, "prog");
    fclose(f);
    const char *want[] = {"usage: prog", "--sizes", "--seed", "--reps",
                          "--csv", "--timeout", "--check-only", "--help",
                          "--kernels", "basic", "blocked", "wide", "all",
                          "--blocks-per-sm", "natural", "--cold-l2",
                          "exit status"};
    for (size_t i = 0; i < COUNT_OF(want); ++i)
        if (strstr(buf, want[i]) == NULL)
            fail_msg("usage lacks \"%s\"", want[i]);
}

/* Both pairs ran, natural residency, warm L2; kernels' numbers differ. */
static const day74_run_info sample_info = {
    .host = "test-host", .command = "pipelined_gemm --sizes 1024",
    .toolkit_version = 13000, .gpu = "NVIDIA Test GPU", .cc_major = 8,
    .cc_minor = 6, .driver_version = 12040, .runtime_version = 13000,
    .driver = "580.159.04", .build_arch = "sm_80", .stages = 3,
    .source_hash =
        "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    .seed = UINT64_MAX, .reps = 25, .date_utc = "2024-01-02T03:04:05Z",
    .blocks_per_sm = 0, .cold_l2 = 0, .flush_bytes = 125829120,
    .sm_count = 132, .regs_per_sm = 65536, .smem_per_sm_bytes = 233472,
    .l2_bytes = 62914560, .max_sm_clock_mhz = 1980,
    .pairs = (1u << DAY74_PAIR_BASIC) | (1u << DAY74_PAIR_BLOCKED),
    /* name, registers, static and dynamic smem, blocks/SM, PTX, binary */
    .kernels = {
        [DAY74_PAIR_BASIC] = {{"sgemm_sync", 40, 8192, 0, 6, 80, 80},
                              {"sgemm_piped", 48, 16400, 24576, 3, 0, 90}},
        [DAY74_PAIR_BLOCKED] = {
            {"sgemm_blocked_sync", 128, 16384, 4096, 2, 81, 86},
            {"sgemm_blocked_piped", 127, 0, 49152, 1, 82, 87}},
    },
};

static const day74_row sample_row = {
    .pair = DAY74_PAIR_BLOCKED, .n = 1024, .blocks = 64, .waves = 64.0 / 132.0,
    .correct = 1, .identical = 1, .sync_rel_err = 1.25e-6,
    .sync = {2.0, 1.9, 2.5}, .piped = {1.5, 1.25, 1.75},
    .cublas = {1.0, 0.875, 1.125}, .sync_mhz = 1980, .piped_mhz = 1755,
    .cublas_mhz = 1830};

/* The columns after "pair": value in sample_row, tolerance (9 digits). */
#define GS (2.0 * 1024.0 * 1024.0 * 1024.0 / 2.0e-3 / 1e9)
static const struct {
    const char *column;
    double want, tol;
} csv_cols[] = {
    {"n", 1024, 0}, {"blocks", 64, 0}, {"waves", 64.0 / 132.0, 5e-9},
    {"correct", 1, 0}, {"identical", 1, 0},
    {"sync_max_rel_err", 1.25e-6, 1e-14},
    {"sync_ms_median", 2.0, 1e-8}, {"sync_ms_min", 1.9, 1e-8},
    {"sync_ms_max", 2.5, 2e-8}, {"piped_ms_median", 1.5, 1e-8},
    {"piped_ms_min", 1.25, 1e-8}, {"piped_ms_max", 1.75, 1e-8},
    {"cublas_ms_median", 1.0, 1e-8}, {"cublas_ms_min", 0.875, 1e-8},
    {"cublas_ms_max", 1.125, 1e-8}, {"sync_gflops", GS, GS * 5e-9},
    {"piped_gflops", GS * 2.0 / 1.5, GS * 2.0 / 1.5 * 5e-9},
    {"cublas_gflops", GS * 2.0, GS * 2.0 * 5e-9},
    {"piped_over_sync", 0.75, 0}, {"sync_pct_cublas", 50.0, 0},
    {"piped_pct_cublas", 200.0 / 3.0, 5e-7}, /* 2/3 of cuBLAS */
    {"sync_mhz", 1980, 0}, {"piped_mhz", 1755, 0}, {"cublas_mhz", 1830, 0},
};

/* Writes the CSV header and row; reads back the "# " lines (*n), the
   column header (checked), the row into row_line, and no more. */
static void read_csv(const day74_run_info *info, const day74_row *row,
                     char lines[][256], size_t *n, char *row_line)
{
    static char text[16384];
    char header[1024] = "pair", *rest = text, *line;
    FILE *f = fmemopen(text, sizeof text, "w");
    assert_non_null(f);
    assert_int_equal(day74_csv_header(f, info), 0);
    assert_int_equal(day74_csv_row(f, row), 0);
    assert_int_equal(fclose(f), 0); /* and a NUL after the text */
    for (*n = 0; (line = strsep(&rest, "\n"))[0] == '#'; ++*n) {
        assert_true(*n < 96 && strlen(line) < 256);
        strcpy(lines[*n], line);
    }
    for (size_t k = 0; k < COUNT_OF(csv_cols); ++k)
        snprintf(header + strlen(header), sizeof header - strlen(header),
                 ",%s", csv_cols[k].column);
    assert_string_equal(line, header);
    strcpy(row_line, strsep(&rest, "\n"));
    assert_non_null(rest);
    assert_string_equal(rest, "");
}

static int by_text(const void *a, const void *b) { return strcmp(a, b); }

/* sample_info's preamble but the settings (a fixture: make unit-test runs
   from the module's root), less the lines of pairs not in pairs. */
static size_t preamble(unsigned pairs, char lines[][256], size_t max)
{
    FILE *f = fopen("tests/fixtures/unit/csv-preamble.txt", "r");
    size_t n = 0;
    assert_non_null(f);
    while (n < max && fgets(lines[n], 256, f) != NULL) {
        lines[n][strcspn(lines[n], "\n")] = '\0';
        n += !(strncmp(lines[n], "# basic_", 8) == 0 && !(pairs & 1)) &&
             !(strncmp(lines[n], "# blocked_", 10) == 0 && !(pairs & 2));
    }
    assert_int_equal(fclose(f), 0);
    return n;
}

/* The preamble is exactly these lines, in any order: preamble()'s (seven
   per kernel of each pair that ran, none for the other, whose records are
   bogus) and the settings. The row: its pair's name (by turns), then each
   column's value, to its precision. The table's header and row line up:
   pair, N, ..., the piped kernel's clock. */
TEST(test_csv) {
    char text[4096], *c[16][12];
    const size_t cases = read_rows("csv-cases.tsv", text, c, 16);
    assert_true(cases > 5);
    static char want[96][256], got[96][256];
    for (size_t i = 0; i < cases; ++i) {
        day74_run_info info = sample_info;
        day74_row r = sample_row;
        char row[1024], *ls = row;
        r.pair = (int)(i % 2);
        info.pairs = (unsigned)atoi(c[i][0]);
        info.blocks_per_sm = atoi(c[i][1]);
        info.cold_l2 = atoi(c[i][2]);
        size_t n = preamble(info.pairs, want, 94), count;
        snprintf(want[n++], sizeof want[0], "# blocks_per_sm_setting: %s",
                 c[i][3]);
        snprintf(want[n++], sizeof want[0], "# l2: %s", c[i][4]);
        for (int p = 0; p < DAY74_PAIRS; ++p)
            if (!(info.pairs >> p & 1))
                info.kernels[p][0].name = info.kernels[p][1].name =
                    "must-not-appear";
        read_csv(&info, &r, got, &count, row);
        qsort(want, n, sizeof want[0], by_text);
        qsort(got, count, sizeof got[0], by_text);
        for (size_t l = 0; l < n || l < count; ++l)
            if (l >= n || l >= count || strcmp(got[l], want[l]) != 0)
                fail_msg("pairs %u: sorted preamble line %zu is \"%s\", "
                         "want \"%s\"", info.pairs, l,
                         l < count ? got[l] : "", l < n ? want[l] : "");
        assert_string_equal(strsep(&ls, ","), r.pair ? "blocked" : "basic");
        for (size_t k = 0; k < COUNT_OF(csv_cols); ++k) {
            char *text = strsep(&ls, ","), *end, what[64];
            assert_non_null(text);
            const double v = strtod(text, &end);
            assert_true(end != text && *end == '\0');
            snprintf(what, sizeof what, "CSV column %s", csv_cols[k].column);
            assert_near(v, csv_cols[k].want, csv_cols[k].tol, what);
        }
        assert_null(ls);
    }
    char buf[512] = "";
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    assert_non_null(f);
    day74_table_header(f);
    const long header_len = ftell(f);
    day74_table_row(f, &sample_row);
    fclose(f);
    const char *table_row = buf + header_len;
    assert_true(header_len > 5);
    assert_int_equal(strlen(table_row), header_len);
    assert_true(strncmp(buf, "pair", 4) == 0);
    assert_true(strncmp(table_row, "blocked ", 8) == 0);
    assert_non_null(strstr(table_row, " 1024 "));
    assert_true(strcmp(table_row + strlen(table_row) - 6, " 1755\n") == 0);
    assert_true(strncmp(table_row - 5, " MHz\n", 5) == 0);
}

#ifdef __GLIBC__
/* A fopencookie writer: fails writes holding cookie (ENOSPC), takes others. */
static ssize_t write_failing_on(void *cookie, const char *buf, size_t size)
{
    if (memmem(buf, size, cookie, strlen(cookie)) == NULL)
        return (ssize_t)size;
    errno = ENOSPC;
    return 0;
}
#endif

/* glibc: a failing write of a kernel block (pair (k - 1) / 2's) fails the
   header if that pair ran; with none failing, it succeeds. Writes to a
   full device fail: -1 if unbuffered, else at fflush. */
TEST(test_csv_write_failure) {
#ifdef __GLIBC__
    static const char *const fail_on[] = {
        "no line holds this", "# basic_sync_kernel: ", "# basic_piped_kernel: ",
        "# blocked_sync_kernel: ", "# blocked_piped_kernel: "};
    const cookie_io_functions_t io = {.write = write_failing_on};
    for (unsigned pairs = 1; pairs <= 3; ++pairs)
        for (size_t k = 0; k < COUNT_OF(fail_on); ++k) {
            day74_run_info info = sample_info;
            info.pairs = pairs;
            FILE *f = fopencookie((void *)fail_on[k], "w", io);
            assert_non_null(f);
            setvbuf(f, NULL, _IONBF, 0);
            const int rc = day74_csv_header(f, &info);
            const int want = k && pairs >> (k - 1) / 2 & 1 ? -1 : 0;
            fclose(f);
            if (rc != want)
                fail_msg("pairs %u, failing on \"%s\": got %d, want %d",
                         pairs, fail_on[k], rc, want);
        }
#endif
    for (int buffered = 0; buffered < 2; ++buffered) {
        FILE *f = fopen("/dev/full", "w");
        if (f == NULL)
            skip();
        if (!buffered)
            setvbuf(f, NULL, _IONBF, 0);
        const int header = day74_csv_header(f, &sample_info);
        const int row = day74_csv_row(f, &sample_row);
        assert_true(header == -1 || (buffered && header == 0));
        assert_true(row == -1 || (buffered && row == 0));
        if (buffered) {
            assert_int_not_equal(fflush(f), 0);
            assert_true(ferror(f));
        }
        fclose(f);
    }
}

/* Medians (odd or even count), input left sorted: summarize's (u32 0),
   with min and max, count 0: -1, *out untouched; the clocks' (u32 1),
   unrounded, not overflowing, count 0: 0, x untouched. GFLOP/s: 2 N^3
   operations over the time in seconds, in units of 1e9. */
TEST(test_stats) {
    char text[4096], *f[24][12];
    const size_t rows = read_rows("stats.tsv", text, f, 24);
    assert_true(rows > 12);
    for (size_t i = 0; i < rows; ++i) {
        const size_t n = strtoul(f[i][4], NULL, 10);
        const day74_stats want = {strtod(f[i][1], NULL),
                                  strtod(f[i][2], NULL),
                                  strtod(f[i][3], NULL)};
        day74_stats s = {-7.0, -8.0, -9.0};
        float ms[6] = {0};
        unsigned x[6] = {0};
        for (size_t k = 0; k < 6 && f[i][5 + k] != NULL; ++k) {
            ms[k] = (float)strtod(f[i][5 + k], NULL);
            x[k] = (unsigned)strtoul(f[i][5 + k], NULL, 10);
        }
        const unsigned x0 = x[0];
        if (f[i][0][0] == '1')
            s = (day74_stats){day74_median_u32(x, n), 0, 0};
        else
            assert_int_equal(day74_summarize(ms, n, &s), n ? 0 : -1);
        if (memcmp(&s, &want, sizeof s) != 0)
            fail_msg("median case %zu: got %.17g %g %g", i, s.median_ms,
                     s.min_ms, s.max_ms);
        for (size_t k = 1; k < n; ++k)
            if (f[i][0][0] == '1' ? x[k - 1] > x[k] : ms[k - 1] > ms[k])
                fail_msg("median case %zu: not sorted at %zu", i, k);
        if (n == 0)
            assert_int_equal(x[0], x0);
    }
    assert_near(day74_gflops(1000, 1.0), 2000.0, 1e-9, "N=1000, 1 ms");
    assert_near(day74_gflops(4096, 10.0),
                2.0 * 4096.0 * 4096.0 * 4096.0 / 1e-2 / 1e9, 1e-9, "N=4096");
    assert_near(day74_gflops(64, 0.5), 2.0 * 64 * 64 * 64 / 5e-4 / 1e9,
                1e-12, "N=64");
}

/* Same seed, same values; two calls, one stream; seeds differ; from 0 the
   first is splitmix64's 0xE220A8397B1DCDAF: (top 24 bits + 1) / 2^24.
   Every value is in (0, 1]: never 0, never above 1, never NaN. */
TEST(test_fill_random) {
    float x[1000], y[1000];
    uint64_t s1 = 74, s2 = 74;
    day74_fill_random(x, 1000, &s1);
    day74_fill_random(y, 1000, &s2);
    assert_memory_equal(x, y, sizeof x);
    assert_true(s1 == s2);
    assert_true(s1 != 74);
    day74_fill_random(y, 1000, &s2);
    assert_memory_not_equal(x, y, sizeof x);

    s1 = s2 = 5;
    day74_fill_random(x, 64, &s1);
    day74_fill_random(y, 17, &s2);
    day74_fill_random(y + 17, 47, &s2);
    assert_memory_equal(x, y, 64 * sizeof *x);

    s1 = 74, s2 = 75;
    day74_fill_random(x, 256, &s1);
    day74_fill_random(y, 256, &s2);
    size_t same = 0;
    for (size_t i = 0; i < 256; ++i)
        same += x[i] == y[i];
    assert_true(same < 8);

    s1 = 0;
    day74_fill_random(x, 1, &s1);
    assert_true(x[0] == (float)(0xE220A8u + 1u) / 16777216.0f);
    assert_true(s1 == 0x9E3779B97F4A7C15ull);

    enum { N = 1 << 16 };
    static float z[N];
    uint64_t s = 0;
    day74_fill_random(z, N, &s);
    float lo = 2.0f, hi = -1.0f;
    for (size_t i = 0; i < N; ++i) {
        if (!(z[i] > 0.0f && z[i] <= 1.0f))
            fail_msg("z[%zu] = %.9g is outside (0, 1]", i, (double)z[i]);
        lo = z[i] < lo ? z[i] : lo;
        hi = z[i] > hi ? z[i] : hi;
    }
    assert_true(lo < 0.001f);
    assert_true(hi > 0.999f);
}

#define T(name) cmocka_unit_test(name)
int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_reference_gemm), T(test_checked_rows), T(test_transpose),
        T(test_compare),
        T(test_residency_pad), T(test_waves), T(test_parse_sizes),
        T(test_parse_options), T(test_usage_mentions_options), T(test_csv),
        T(test_csv_write_failure), T(test_stats), T(test_fill_random),
    };
    return cmocka_run_group_tests_name("harness", tests, NULL, NULL) != 0;
}
