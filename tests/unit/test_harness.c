/* tests/unit/test_harness.c: cmocka unit tests of the host harness
 * (build/harness.c, tangled from day74.nw). No GPU is involved: every
 * function under test is plain C. Built and run by `make unit-test`. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define TILE 64
#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* ---- helpers ------------------------------------------------------------ */

static void assert_near(double got, double want, double tol, const char *what)
{
    if (!(fabs(got - want) <= tol))
        fail_msg("%s: got %.17g, want %.17g (tolerance %g)", what, got, want, tol);
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
    const int rc = day74_parse_sizes(text, TILE, sizes, DAY74_MAX_SIZES, &count,
                                     err, sizeof err);
    if (rc != -1)
        fail_msg("--sizes \"%s\" was accepted (rc %d, count %zu)", text, rc, count);
    assert_sizes_poisoned(sizes, DAY74_MAX_SIZES, count);
    assert_true(strlen(err) > 0);
    if (strstr(err, mention) == NULL)
        fail_msg("--sizes \"%s\": message \"%s\" does not mention \"%s\"", text,
                 err, mention);
}

/* Parses argv (NULL-terminated) expecting a rejection mentioning `mention`. */
static void expect_options_rejected(const char *const *args, const char *mention)
{
    char *argv[16];
    int argc = 0;
    argv[argc++] = (char *)"pipelined_gemm";
    for (; args[argc - 1] != NULL; ++argc)
        argv[argc] = (char *)args[argc - 1];
    argv[argc] = NULL;
    day74_options opt;
    char err[256] = "";
    const int rc = day74_parse_options(argc, argv, TILE, &opt, err, sizeof err);
    if (rc != -1)
        fail_msg("options starting \"%s\" were accepted", args[0]);
    assert_true(strlen(err) > 0);
    if (strstr(err, mention) == NULL)
        fail_msg("options starting \"%s\": message \"%s\" does not mention \"%s\"",
                 args[0], err, mention);
}

/* Parses argv (NULL-terminated) expecting success. */
static void parse_ok(const char *const *args, day74_options *opt)
{
    char *argv[16];
    int argc = 0;
    argv[argc++] = (char *)"pipelined_gemm";
    for (; args[argc - 1] != NULL; ++argc)
        argv[argc] = (char *)args[argc - 1];
    argv[argc] = NULL;
    char err[256] = "";
    const int rc = day74_parse_options(argc, argv, TILE, opt, err, sizeof err);
    if (rc != 0)
        fail_msg("options were rejected: %s", err);
}

/* ---- the CPU reference -------------------------------------------------- */

/* A 1x1 product is the plain product of the two numbers. */
static void test_gemm_1x1(void **state)
{
    (void)state;
    const float a[] = {3.0f}, b[] = {-4.5f};
    double c[] = {NAN};
    day74_reference_gemm(a, b, c, 1);
    assert_true(c[0] == -13.5);
}

/* A hand-computed 2x2 product is exact (row-major, A on the left). */
static void test_gemm_2x2(void **state)
{
    (void)state;
    const float a[] = {1, 2, 3, 4}, b[] = {5, 6, 7, 8};
    const double want[] = {19, 22, 43, 50};
    double c[4];
    day74_reference_gemm(a, b, c, 2);
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
    day74_reference_gemm(a, b, c, 3);
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
    day74_reference_gemm(id, b, c, N);
    for (size_t i = 0; i < N * N; ++i)
        assert_true(c[i] == (double)b[i]);
    day74_reference_gemm(b, id, c, N);
    for (size_t i = 0; i < N * N; ++i)
        assert_true(c[i] == (double)b[i]);
}

/* The sum is accumulated in double: 2^24 + 1 survives, which float cannot hold. */
static void test_gemm_accumulates_in_double(void **state)
{
    (void)state;
    const float a[] = {16777216.0f, 1.0f, 0.0f, 0.0f};
    const float b[] = {1.0f, 0.0f, 1.0f, 0.0f};
    double c[4];
    day74_reference_gemm(a, b, c, 2);
    assert_true(c[0] == 16777217.0);
    assert_true(c[1] == 0.0 && c[2] == 0.0 && c[3] == 0.0);
}

/* N = 0 writes nothing and does not crash. */
static void test_gemm_empty(void **state)
{
    (void)state;
    double c[1] = {42.0};
    const float a[1] = {1}, b[1] = {1};
    day74_reference_gemm(a, b, c, 0);
    assert_true(c[0] == 42.0);
}

/* ---- the mismatch finder ------------------------------------------------ */

#define TOL 0.0009765625 /* 2^-10: tolerance edges are exact in float and double */

/* An error exactly at the tolerance passes; the tolerance a hair smaller fails. */
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

/* Exact agreement gives 0; otherwise the worst relative error is returned. */
static void test_max_rel_error_worst(void **state)
{
    (void)state;
    const float got[] = {1.0f, 1.5f, 4.0f, -3.0f};
    const double want[] = {1.0, 1.0, 4.0, -2.0};
    assert_true(day74_max_rel_error(got, want, 1) == 0.0);
    assert_true(day74_max_rel_error(got, want, 0) == 0.0);
    assert_near(day74_max_rel_error(got, want, 4), 0.5, 0.0, "worst of four");
    assert_near(day74_max_rel_error(got, want, 3), 0.5, 0.0, "worst of three");
}

/* A zero reference divides by 1e-30, not by zero. */
static void test_max_rel_error_zero_reference(void **state)
{
    (void)state;
    const float got[] = {0.0f, 1.0f};
    const double want[] = {0.0, 0.0};
    assert_true(day74_max_rel_error(got, want, 1) == 0.0);
    assert_near(day74_max_rel_error(got, want, 2), 1e30, 1e15, "1 over 1e-30");
}

/* A NaN anywhere makes the result NaN, so it cannot read as small. */
static void test_max_rel_error_nan(void **state)
{
    (void)state;
    const float got[] = {NAN, 1.0f, 2.0f};
    const double want[] = {1.0, 1.0, 1.0};
    assert_true(isnan(day74_max_rel_error(got, want, 3)));
}

/* ---- day74_parse_sizes --------------------------------------------------- */

/* One size, two sizes, the smallest and largest legal sizes are accepted. */
static void test_sizes_accepted(void **state)
{
    (void)state;
    size_t sizes[DAY74_MAX_SIZES], count = 0;
    char err[128] = "";
    assert_int_equal(day74_parse_sizes("512", TILE, sizes, DAY74_MAX_SIZES, &count, err, sizeof err), 0);
    assert_int_equal(count, 1);
    assert_int_equal(sizes[0], 512);
    assert_int_equal(day74_parse_sizes("512,4096", TILE, sizes, DAY74_MAX_SIZES, &count, err, sizeof err), 0);
    assert_int_equal(count, 2);
    assert_int_equal(sizes[0], 512);
    assert_int_equal(sizes[1], 4096);
    assert_int_equal(day74_parse_sizes("64,8192,0064", TILE, sizes, DAY74_MAX_SIZES, &count, err, sizeof err), 0);
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
    assert_int_equal(day74_parse_sizes(text, TILE, sizes, DAY74_MAX_SIZES, &count, err, sizeof err), 0);
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

/* Empty lists and empty items (leading, trailing, doubled comma) are rejected. */
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
        snprintf(text + strlen(text), sizeof text - strlen(text), "%s64", i ? "," : "");
    expect_sizes_rejected(text, "more than 16");

    size_t sizes[3], count;
    char err[128] = "";
    poison_sizes(sizes, 3, &count);
    assert_int_equal(day74_parse_sizes("64,128,192", TILE, sizes, 2, &count, err, sizeof err), -1);
    assert_sizes_poisoned(sizes, 3, count);
    assert_non_null(strstr(err, "more than 2"));
}

/* A short error buffer is filled but never overrun, and a NULL one is allowed. */
static void test_sizes_error_buffer_bounds(void **state)
{
    (void)state;
    char err[16];
    memset(err, 'Z', sizeof err);
    size_t sizes[DAY74_MAX_SIZES], count;
    poison_sizes(sizes, DAY74_MAX_SIZES, &count);
    assert_int_equal(day74_parse_sizes("100", TILE, sizes, DAY74_MAX_SIZES, &count, err, 8), -1);
    assert_int_equal(strlen(err), 7);
    for (size_t i = 8; i < sizeof err; ++i)
        assert_int_equal(err[i], 'Z');
    assert_int_equal(day74_parse_sizes("100", TILE, sizes, DAY74_MAX_SIZES, &count, NULL, 0), -1);
    assert_sizes_poisoned(sizes, DAY74_MAX_SIZES, count);
}

/* ---- day74_parse_options ------------------------------------------------- */

/* No arguments gives the documented defaults. */
static void test_options_defaults(void **state)
{
    (void)state;
    const char *args[] = {NULL};
    day74_options opt;
    parse_ok(args, &opt);
    assert_int_equal(opt.n_sizes, 3);
    assert_int_equal(opt.sizes[0], 512);
    assert_int_equal(opt.sizes[1], 1024);
    assert_int_equal(opt.sizes[2], 2048);
    assert_true(opt.seed == 74);
    assert_int_equal(opt.reps, DAY74_MIN_REPS);
    assert_true(opt.timeout_s == 20.0);
    assert_null(opt.csv_path);
    assert_int_equal(opt.check_only, 0);
    assert_int_equal(opt.help, 0);
}

/* --sizes, --check-only, --help/-h, --csv, --seed, --reps, --timeout are taken. */
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

    const char *a5[] = {"--seed", "18446744073709551615", "--reps", "10000",
                        "--timeout", "3600", "--csv", "out.csv", NULL};
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

/* One rejected command line: its words after the program name, and a word the
   error message must contain. */
typedef struct {
    const char *args[4];
    const char *mention;
} rejected_case;

/* Every command line below is rejected (-1) with a non-empty message that
   names the offending word. */
static void test_options_rejected(void **state)
{
    (void)state;
    static const rejected_case cases[] = {
    /* Bad --sizes values are rejected through day74_parse_sizes' messages. */
        {{"--sizes", "100", NULL}, "100"},
        {{"--sizes", "", NULL}, "empty"},
        {{"--sizes", "512,", NULL}, "item 2"},
    /* Unknown options and options missing their value are rejected, naming them. */
        {{"--frobnicate", NULL}, "--frobnicate"},
        {{"512", NULL}, "512"},
        {{"--check-only", "--sizes", NULL}, "--sizes"},
        {{"--reps", NULL}, "--reps"},
        {{"--seed", NULL}, "--seed"},
        {{"--csv", NULL}, "--csv"},
        {{"--timeout", NULL}, "--timeout"},
    /* --reps outside [DAY74_MIN_REPS, DAY74_MAX_REPS] or not a number is rejected. */
        {{"--reps", "19", NULL}, "19"},
        {{"--reps", "10001", NULL}, "10001"},
        {{"--reps", "0", NULL}, "--reps"},
        {{"--reps", "-20", NULL}, "-20"},
        {{"--reps", "twenty", NULL}, "twenty"},
    /* --timeout 0, above 3600 or junk is rejected. */
        {{"--timeout", "0", NULL}, "--timeout"},
        {{"--timeout", "3601", NULL}, "3601"},
        {{"--timeout", "1.5", NULL}, "1.5"},
    /* --seed junk, negative, empty or above UINT64_MAX is rejected. */
        {{"--seed", "junk", NULL}, "junk"},
        {{"--seed", "-1", NULL}, "-1"},
        {{"--seed", "", NULL}, "--seed"},
        {{"--seed", "18446744073709551616", NULL}, "18446744073709551616"},
    /* --csv with an empty file name is rejected. */
        {{"--csv", "", NULL}, "--csv"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
        expect_options_rejected(cases[i].args, cases[i].mention);
}

/* The usage text names every option and the exit codes. */
static void test_usage_mentions_options(void **state)
{
    (void)state;
    char buf[4096] = "";
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    assert_non_null(f);
    day74_print_usage(f, "prog");
    fclose(f);
    const char *want[] = {"usage: prog", "--sizes", "--seed", "--reps", "--csv",
                          "--timeout", "--check-only", "--help", "exit status"};
    for (size_t i = 0; i < COUNT_OF(want); ++i)
        if (strstr(buf, want[i]) == NULL)
            fail_msg("usage lacks \"%s\"", want[i]);
}

/* ---- the CSV writer ------------------------------------------------------ */

static const day74_run_info sample_info = {
    .host = "test-host",
    .command = "pipelined_gemm --sizes 1024",
    .toolkit_version = 13000,
    .gpu = "NVIDIA Test GPU",
    .cc_major = 8,
    .cc_minor = 6,
    .driver_version = 12040,
    .runtime_version = 13000,
    .driver_release = "580.159.04",
    .build_arch = "sm_80",
    .stages = 3,
    .source_hash = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    .seed = UINT64_MAX,
    .reps = 25,
    .date_utc = "2024-01-02T03:04:05Z",
    .registers = {40, 48},
    .static_smem_bytes = {8192, 16400},
    .blocks_per_sm = {6, 3},
    .ptx_version = {80, 0},
    .binary_version = {80, 90},
};

static day74_row sample_row(void)
{
    day74_row r;
    memset(&r, 0, sizeof r);
    r.n = 1024;
    r.correct = 1;
    r.identical = 1;
    r.sync_rel_err = 1.25e-6;
    r.sync = (day74_stats){2.0, 1.9, 2.5};
    r.piped = (day74_stats){1.5, 1.25, 1.75};
    r.cublas = (day74_stats){1.0, 0.875, 1.125};
    return r;
}

/* Reads the next line of f into buf without its newline; 0 at end of file. */
static int read_line(FILE *f, char *buf, size_t len)
{
    if (fgets(buf, (int)len, f) == NULL)
        return 0;
    buf[strcspn(buf, "\n")] = '\0';
    return 1;
}

/* The preamble holds every provenance key with its value, then the header. */
static void test_csv_preamble_and_header(void **state)
{
    (void)state;
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(day74_csv_header(f, &sample_info), 0);
    rewind(f);
    const char *want[][2] = {
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
        {"source_sha256", sample_info.source_hash},
        {"seed", "18446744073709551615"},
        {"timed_launches", "25"},
        {"date_utc", "2024-01-02T03:04:05Z"},
        {"sync_registers", "40"},
        {"piped_registers", "48"},
        {"sync_static_smem_bytes", "8192"},
        {"piped_static_smem_bytes", "16400"},
        {"sync_blocks_per_sm", "6"},
        {"piped_blocks_per_sm", "3"},
        {"sync_ptx_version", "80"},
        {"piped_ptx_version", "0"},
        {"sync_binary_version", "80"},
        {"piped_binary_version", "90"},
    };
    int seen[COUNT_OF(want)] = {0};
    char line[1024];
    int comments = 0;
    while (read_line(f, line, sizeof line) && line[0] == '#') {
        ++comments;
        const char *colon = strstr(line, ": ");
        assert_non_null(colon);
        assert_true(line[1] == ' ');
        for (size_t i = 0; i < COUNT_OF(want); ++i)
            if (strlen(want[i][0]) == (size_t)(colon - line - 2) &&
                strncmp(line + 2, want[i][0], strlen(want[i][0])) == 0) {
                assert_string_equal(colon + 2, want[i][1]);
                ++seen[i];
            }
    }
    assert_true(comments >= (int)COUNT_OF(want));
    for (size_t i = 0; i < COUNT_OF(want); ++i)
        if (seen[i] != 1)
            fail_msg("preamble key %s seen %d times", want[i][0], seen[i]);
    assert_string_equal(line,
        "n,correct,identical,sync_max_rel_err,"
        "sync_ms_median,sync_ms_min,sync_ms_max,"
        "piped_ms_median,piped_ms_min,piped_ms_max,"
        "cublas_ms_median,cublas_ms_min,cublas_ms_max,"
        "sync_gflops,piped_gflops,cublas_gflops,"
        "piped_over_sync,sync_pct_cublas,piped_pct_cublas");
    assert_int_equal(read_line(f, line, sizeof line), 0);
    fclose(f);
}

/* A row parses back to its values (to printed precision); derived columns are right. */
static void test_csv_row_round_trip(void **state)
{
    (void)state;
    const day74_row r = sample_row();
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(day74_csv_header(f, &sample_info), 0);
    assert_int_equal(day74_csv_row(f, &r), 0);
    rewind(f);
    char line[1024], header[1024] = "";
    while (read_line(f, line, sizeof line) && line[0] == '#')
        ;
    strcpy(header, line);
    assert_int_equal(read_line(f, line, sizeof line), 1);

    size_t ncols = 1;
    for (const char *p = header; *p; ++p)
        ncols += *p == ',';
    double v[32];
    size_t k = 0;
    for (char *p = line, *end;; p = end + 1) {
        assert_true(k < COUNT_OF(v));
        v[k++] = strtod(p, &end);
        assert_true(end != p);
        if (*end == '\0')
            break;
        assert_int_equal(*end, ',');
    }
    assert_int_equal(k, ncols);
    assert_int_equal(k, 19);

    const double gs = 2.0 * 1024.0 * 1024.0 * 1024.0 / 2.0e-3 / 1e9;
    const double gp = gs * 2.0 / 1.5, gc = gs * 2.0;
    const double want[] = {1024, 1, 1, 1.25e-6, 2.0, 1.9, 2.5, 1.5, 1.25, 1.75,
                           1.0, 0.875, 1.125, gs, gp, gc, 0.75,
                           100.0 * gs / gc, 100.0 * gp / gc};
    const double tol[] = {0, 0, 0, 1e-9, 5e-5, 5e-5, 5e-5, 5e-5, 5e-5, 5e-5,
                          5e-5, 5e-5, 5e-5, 0.05, 0.05, 0.05, 5e-5, 5e-3, 5e-3};
    for (size_t i = 0; i < COUNT_OF(want); ++i) {
        char what[64];
        snprintf(what, sizeof what, "CSV column %zu", i + 1);
        assert_near(v[i], want[i], tol[i], what);
    }
    assert_near(v[16], 0.75, 0.0, "piped_over_sync = piped / sync");
    assert_near(v[17], 50.0, 0.0, "sync_pct_cublas");
    assert_near(v[18], 66.67, 0.0, "piped_pct_cublas");
    fclose(f);
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

/* Buffered, the error on a full device surfaces at fflush at the latest (main checks fclose). */
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

/* ---- statistics ---------------------------------------------------------- */

/* Odd count: median is the middle value, min/max the extremes, input left sorted. */
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

/* One value is its own median, minimum and maximum; duplicates are fine. */
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

/* GFLOP/s is 2 N^3 operations over the time in seconds, in units of 1e9. */
static void test_gflops(void **state)
{
    (void)state;
    assert_near(day74_gflops(1000, 1.0), 2000.0, 1e-9, "N=1000, 1 ms");
    assert_near(day74_gflops(4096, 10.0),
                2.0 * 4096.0 * 4096.0 * 4096.0 / 1e-2 / 1e9, 1e-9, "N=4096, 10 ms");
    assert_near(day74_gflops(64, 0.5), 2.0 * 64 * 64 * 64 / 5e-4 / 1e9, 1e-12, "N=64");
}

/* ---- the input generator ------------------------------------------------- */

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

/* From state 0 the first value is splitmix64's known 0xE220A8397B1DCDAF: (top 24 bits + 1) / 2^24. */
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

/* ---- the driver release ---------------------------------------------------- */

/* Writes text to a fresh temporary file and returns its path (static buffer). */
static const char *temp_file_with(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/day74-driver-XXXXXX");
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* The release is taken from the "Kernel Module" line of the version file. */
static void test_driver_release_parsed(void **state)
{
    (void)state;
    char out[32];
    const char *path = temp_file_with(
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Sun Oct  5 2025\n"
        "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n");
    assert_int_equal(day74_read_driver_release(path, out, sizeof out), 0);
    assert_string_equal(out, "580.159.04");
    remove(path);
}

/* A missing file, or one without the line, gives -1 and "unknown". */
static void test_driver_release_missing(void **state)
{
    (void)state;
    char out[32] = "stale";
    assert_int_equal(day74_read_driver_release("/nonexistent/nvidia/version", out, sizeof out), -1);
    assert_string_equal(out, "unknown");
    const char *path = temp_file_with("GCC version: 12\n");
    strcpy(out, "stale");
    assert_int_equal(day74_read_driver_release(path, out, sizeof out), -1);
    assert_string_equal(out, "unknown");
    remove(path);
}

/* A short output buffer truncates, never overflows. */
static void test_driver_release_short_buffer(void **state)
{
    (void)state;
    char out[5];
    const char *path = temp_file_with("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04\n");
    assert_int_equal(day74_read_driver_release(path, out, sizeof out), 0);
    assert_string_equal(out, "580.");
    remove(path);
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
        cmocka_unit_test(test_options_rejected),
        cmocka_unit_test(test_usage_mentions_options),
        cmocka_unit_test(test_csv_preamble_and_header),
        cmocka_unit_test(test_csv_row_round_trip),
        cmocka_unit_test(test_csv_write_failure_unbuffered),
        cmocka_unit_test(test_csv_write_failure_buffered),
        cmocka_unit_test(test_summarize_odd),
        cmocka_unit_test(test_summarize_even),
        cmocka_unit_test(test_summarize_single_and_duplicates),
        cmocka_unit_test(test_summarize_empty),
        cmocka_unit_test(test_gflops),
        cmocka_unit_test(test_fill_random_deterministic),
        cmocka_unit_test(test_fill_random_stream_continues),
        cmocka_unit_test(test_fill_random_range),
        cmocka_unit_test(test_fill_random_known_value),
        cmocka_unit_test(test_fill_random_seeds_differ),
        cmocka_unit_test(test_driver_release_parsed),
        cmocka_unit_test(test_driver_release_missing),
        cmocka_unit_test(test_driver_release_short_buffer),
    };
    return cmocka_run_group_tests_name("harness", tests, NULL, NULL) != 0;
}
