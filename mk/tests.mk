# mk/tests.mk: the tests that need no GPU, run by `make check`.
#
#   make unit-test    cmocka tests of the harness's host code (build/harness.c)
#   make tangle-test  tangling and compiling day74.nw, in a scratch copy
#   make nogpu-test   the binary's exit codes on a machine without a GPU
#
# Everything they build lies under build/tests/; each file is written under a
# temporary name and renamed, so an interrupted or parallel make never sees a
# half-written one.

CMOCKA_CFLAGS ?= $(shell pkg-config --cflags cmocka 2>/dev/null)
CMOCKA_LIBS   ?= $(or $(shell pkg-config --libs cmocka 2>/dev/null),-lcmocka)
TEST_CFLAGS   ?= -std=c11 -O1 -g -Wall -Wextra -Wpedantic -Werror -fopenmp

CHECK_TARGETS += unit-test tangle-test nogpu-test

.PHONY: unit-test tangle-test nogpu-test

unit-test: build/tests/test_harness ## cmocka unit tests of the harness's host code
	@build/tests/test_harness

# The test links the object `make build` links, so it tests that object.
build/tests/test_harness: tests/unit/test_harness.c build/host/harness.o build/clean/harness.h | build/harness.h
	@mkdir -p $(@D)
	@[ -f /usr/include/cmocka.h ] || pkg-config --exists cmocka 2>/dev/null || \
	  { echo "missing: cmocka.h; it comes from the Debian package libcmocka-dev" >&2; exit 1; }
	$(CC) $(TEST_CFLAGS) $(CMOCKA_CFLAGS) -Ibuild -o $@.tmp tests/unit/test_harness.c build/host/harness.o $(CMOCKA_LIBS) -lm
	@mv -f $@.tmp $@

# The scratch copy is seeded from the real build, so $(BIN) first: then the
# scratch `make build` compiles nothing it does not have to. nvcc's verdict on
# pipelined_gemm.cu is cached under build/tests/, keyed by the sources' hash.
tangle-test: $(BIN) ## tangle, rebuild and compile checks in a scratch copy of the repo
	@NVCC=$(NVCC) CC=$(CC) CUDA_HOME=$(CUDA_HOME) ARCH=$(ARCH) STAGES=$(STAGES) \
	  $(PYTHON) tests/tangle/run --repo . --cache build/tests/cache

nogpu-test: $(BIN) ## exit codes of build/pipelined_gemm on a machine without a GPU
	@tests/nogpu/run $(BIN)
