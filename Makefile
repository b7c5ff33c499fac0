# Day 74, "Async copies and pipelines": day74.nw, tangled into a CUDA program
# and woven into site/*.html (generated, as is build/). See `make help`. In
# order: what a user sets, what the source holds, the targets a user types,
# the rules. litkit's boot.mk, lit.mk and cuda.mk hold the generic ones.

# ---- what a user may set (on the command line: make ARCH=sm_90) -------------
# From the environment, these, litkit's (NVCC, ARCH, CC, CFLAGS, ...) and
# nvcc's variables are ignored with a note: they never change a build.
USER_VARS := STAGES RUN_ARGS
# The set-up (boot.mk, while make reads this file): Debian packages, litkit
# in build/venv, cuobjdump where the toolkit lacks it (for LIT_SASS_GOALS).
LIT_SRC := litkit
LIT_APT := python3-matplotlib chromium chromium-driver tidy gcc \
           python3-selenium libcmocka-dev pkg-config clang-format-14 \
           python3-pathspec
LIT_SASS_GOALS := all check sm80-check stage-limits evidence-compile \
                  compile-test
# The kernel files and depths: tools/manifest.toml's, for make in LISTS.
LISTS      := build/manifest.mk
LISTS_FROM := tools/manifest.toml tools/manifest.py
LISTS_CMD   = $(PY) -m tools.manifest mk
include $(or $(wildcard $(LIT_SRC)/litkit/boot.mk),$(error litkit is \
  missing from $(LIT_SRC)/; fetch it: git submodule update --init))
# NVCC, ARCH (sm_80), NVCCFLAGS, CC, CFLAGS, LDFLAGS, LDLIBS: see cuda.mk.
STAGES    ?= 2
RUN_ARGS  ?=
# make exercise-check: EXERCISE=student (your chunk) or solution (the page's)
# of part 2, or PART=1's; ALLOW_DEEP_PIPELINE=1 builds past 4 stages.
EXERCISE  ?= student
PART      ?= 2
# A value that cannot work is refused by name before any compiler runs.
$(call refuse,STAGES,[2-9]|[1-9][0-9],give 2 or more pipeline stages)

# ---- what the source holds --------------------------------------------------
NW      := day74.nw
PROGRAM := pipelined_gemm.cu blocked_gemm.cu kernels.h harness.h harness.c \
           main.c wide_gemm.cu# the program: the pages' downloads
# KERNELS (root NAME.cu: build/<ARCH>-<STAGES>stages/NAME, with blocked_gemm.o)
# and BLOCKED_KERNELS (with pipelined_gemm.o), the depths: from LISTS (above).
STUDENT := exercises/student# built only by make exercise-check
DEEP    := exercises/deep-student exercises/deep-solution# part 1's files
REFUSED := pitfalls/misaligned-copy# must not compile (the page says why)
ROOTS   := $(sort $(PROGRAM) $(addsuffix .cu,$(KERNELS) $(BLOCKED_KERNELS) \
             $(STUDENT) $(DEEP) $(REFUSED)))
# The source hash: what is measured (a student's edit makes nothing stale).
HASHED  := $(PROGRAM) $(addsuffix .cu,$(filter-out pipelined_gemm,$(KERNELS)) \
             $(BLOCKED_KERNELS))
HASH_MACRO := DAY74_SOURCE_HASH
FORMATTED  := $(filter-out %student.cu,$(ROOTS:%=build/clean/%))# not yours
DOWNLOADS  := $(PROGRAM)
PAGES      := index lab program record# as day74.nw declares them; the lesson first
SCHEMA     := tools/facts/schema.tsv# its @{...} rows: DERIVE's schema_rows
DERIVE     := tools.facts.derive# and make stale-evidence
FACTS_DEPS := tools/facts/derive.py tools/facts/cited.tsv $(LISTS_FROM)
# The plots, from the facts: build/plots/NAME.svg, NAME-narrow.svg (phones)
# and NAME.values.tsv (numbers the page tests find in the tables it names).
PLOTS      := gflops residency stages
PLOTTER    := tools.plots.plot
WEAVE_DEPS := $(wildcard site/*.svg)
TITLE      := Day 74: async copies and pipelines
HELP_VARS  := NVCC ARCH STAGES CC NVCCFLAGS CFLAGS RUN_ARGS
# make check: stale-evidence's warning, then the groups that need no GPU
# (below and litkit's), longest first; one missing its NEEDS_ tools: skipped.
CHECKS := tangle-test exercise-check-solution page-test compile-test \
          robust-test litkit-test facts-test setup-test pitfalls-compile \
          format-check example-test unit-test
NEEDS_compile-test = $(SASS_TOOLS)
PAGE_TESTS   := tests/test_page.py# make page-test and site-check
FORMAT_TESTS := tests/test_format.py# make format-check, before the tangles

# The program's build (cuda.mk): its flags, after the user's. The RUNPATH
# finds the toolkit without an ld.so.conf entry (NVIDIA's runfile adds none).
OBJDIR        = build/$(ARCH)-$(STAGES)stages
BUILT_WITH    = ARCH=$(ARCH), STAGES=$(STAGES)
NVCC_NEEDS   := -std=c++17 $(if $(filter 1,$(ALLOW_DEEP_PIPELINE)),\
                -DALLOW_DEEP_PIPELINE)
CUDA_DEFS    := -DSTAGES=$(STAGES)
CC_NEEDS     := -std=c11 -fopenmp
LINK_NEEDS    = -L$(call sq,$(CUDA_HOME)/lib64) \
                -Wl,-rpath,$(call sq,$(CUDA_HOME)/lib64) -lcublas \
                -lcudart_static -ldl -lrt -lpthread -lstdc++ -lm
UNIT_OBJS    := build/host/harness.o# what unit-test links with its tests
LATEST       := pipelined_gemm# build/pipelined_gemm: the last built
PROGRAMS     := $(addsuffix .cu,$(KERNELS) $(BLOCKED_KERNELS) $(STUDENT) \
                $(DEEP))# each a binary OBJDIR/NAME
HOST_OBJS     = $(OBJDIR)/main.o build/host/harness.o $(OBJDIR)/wide_gemm.o
# The compile checks (cuda.mk): CK/[blocked-|deep-|wide-]ARCH-sSTAGES.*,
# with -DALLOW_DEEP_PIPELINE past the exercise's depths.
CK       := build/checks/main
CK_FILES := pipelined_gemm.cu blocked-=blocked_gemm.cu \
            deep-=exercises/deep-solution.cu wide-=wide_gemm.cu
CK_PARAM := STAGES
CK_FLAGS  = $(if $(filter-out $(EXERCISE_DEPTHS),$(call ck_param,$1)),\
              -DALLOW_DEEP_PIPELINE)
include $(LIT)/lit.mk
BIN  := $(OBJDIR)/pipelined_gemm
BINS := $(KERNELS:%=$(OBJDIR)/%) $(BLOCKED_KERNELS:%=$(OBJDIR)/%)
PITFALL_BINS := $(filter $(OBJDIR)/pitfalls/%,$(BINS))
PTX_ARCHES  := sm_75 sm_80 sm_90
SASS_ARCHES := sm_80 sm_90

# ---- the targets a user types (phony: lit.mk) -------------------------------
build: build/model/model.o
build-all: $(BINS) ## build every kernel file: pitfalls, experiments, solution
run: build ## GPU: check and time both kernels (RUN_ARGS="--sizes 512,4096")
	$(BIN) $(RUN_ARGS)
exercise: deps tangle ## GPU: the exercise's depths at N=2048, its table
	@$(PY) -m tools.gpu.exercise --arch $(ARCH)
## exercise-check: check your chunk of part 2 (PART=1: of part 1)
EXERCISE_FILE = $(if $(filter 1,$(PART)),deep-)$(EXERCISE)
exercise-check: deps build/kernels.h \
    $(filter $(ROOTS:%=build/%),build/exercises/$(EXERCISE_FILE).cu)
	@$(PY) -m tools.gpu.exercise_check --exercise '$(EXERCISE_FILE)' \
	  --arch $(ARCH) --stages $(STAGES) \
	  --nvccflags '$(NVCC_NEEDS) $(NVCCFLAGS) $(if $(filter \
	  solution,$(EXERCISE)),$(WERROR))'
evidence-gpu: deps tangle ## GPU: re-measure everything the page shows
	@tools/gpu/evidence-gpu.sh evidence; rc=$$?; \
	 [ -n "$$EVIDENCE_DRY_RUN" ] && exit $$rc; \
	 $(PY) -m tools.gpu.gpu_facts evidence && exit $$rc
## pitfalls: check every pitfall fails as the page says (part needs a GPU)
## pitfalls-compile: no GPU: each pitfall fails in the CPU model as it should
pitfalls pitfalls-compile: deps $(PITFALL_BINS) build/$(REFUSED).cu
	@$(PY) -m tools.gpu.pitfalls --arch $(ARCH) --stages $(STAGES) \
	  $(if $(filter pitfalls-compile,$@),--compile-only)
sm80-check: $(CK)/sm80-check-s$(STAGES).json ## no GPU: where the cp.async are
	@cat $(CK)/sm80-check-s$(STAGES).txt
stage-limits: $(CK)/stage-limits.json ## no GPU: what each depth costs
	@cat $(CK)/stage-limits.txt
## evidence-compile: no GPU: write evidence/compile-nvcc-<version>.*
evidence-compile: $(CK)/sm80-check-s2.json $(CK)/stage-limits.json \
    build/source.sha256 build/source.tokens \
    $(SASS_ARCHES:%=$(CK)/wide-%-s2.cubin)
	@$(NEED) $(call sq,$(NVCC)) nvcc cuda
	@$(PY) -m tools.compile.checks evidence --dir $(CK) \
	  --nvcc $(call sq,$(NVCC)) --cuobjdump $(call sq,$(CUOBJDUMP)) \
	  --source-hash build/source.sha256 --source-tokens build/source.tokens

# make check's groups (CHECKS; page-test, format-check, unit-test: litkit's).
## compile-test: the sm80 check, its negative control (check-all: all builds)
compile-test: $(CK)/sm80-check-s2.json
	@$(TEST) tests/test_compile.py
facts-test: ## the facts pipeline, the verdicts, the GPU facts parser
	@$(TEST) tests/test_facts.py tests/test_manifest.py
tangle-test: $(BIN) site ## tangle, build, weave in scratch copies; exit codes
	@$(TEST) tests/test_tangle.py --bin $(BIN)
## exercise-check-solution: the page's solution, the CPU model's wrong loops
exercise-check-solution: $(OBJDIR)/exercises/solution $(BIN)
	@$(MAKE) --no-print-directory exercise-check EXERCISE=solution
	@$(MAKE) --no-print-directory exercise-check EXERCISE=solution PART=1
	@$(TEST) tests/test_exercise.py
setup-test: $(BIN) site ## a new user's machine: set-up, settings, concurrency
	@$(TEST) tests/test_setup.py --bin $(BIN)
example-test: ## the example module (examples/day00, its own build/venv)
	@env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES -u PYTHON \
	  $(MAKE) --no-print-directory -C examples/day00 check
robust-test: ## interrupted, full-disk, read-only, missing tools
	@$(TEST) tests/test_robust.py

# ---- the rules --------------------------------------------------------------
build/tangle.mk: $(LISTS_FROM)# the roots are the manifest's too
# The CPU model's own half, compiled once (a check compiles the kernel only).
build/model/model.o: tools/model/model.cc tools/model/include/lit_gpu.h
	@$(PY) -c 'from tools.model import check; check.model_object("$(@D)")'
	@echo "built $@ (the CPU model)"

# Objects: cuda.mk's rules. wide_gemm.cu's inline PTX cp.async needs sm_80:
# older ARCHes get compute_80 PTX only (it links; its gate won't run it).
comma := ,
$(OBJDIR)/wide_gemm.o: ARCH_FLAGS = $(if $(filter sm_35 sm_37 sm_5% sm_6% \
  sm_70 sm_72 sm_75,$(ARCH)),-gencode arch=compute_80$(comma)code=compute_80)
$(OBJDIR)/main.o: C_DEFS := -DDAY74_BUILD_ARCH='"$(ARCH)"'
$(KERNELS:%=$(OBJDIR)/%) $(OBJDIR)/$(STUDENT) $(DEEP:%=$(OBJDIR)/%): \
    $(OBJDIR)/blocked_gemm.o
$(BLOCKED_KERNELS:%=$(OBJDIR)/%): $(OBJDIR)/pipelined_gemm.o

# The compile checks' reports, from cuda.mk's products (the depths: the
# manifest; one stage's bytes: pipelined_gemm.cu's tile constants).
CK_TOOLS := tools/compile/checks.py $(LIT)/litlib.py $(LISTS)
$(CK)/sm80-check-s%.json: $(CK_TOOLS) $(foreach u,/ /blocked-,\
    $(PTX_ARCHES:%=$(CK)$(u)%-s%.ptx) $(SASS_ARCHES:%=$(CK)$(u)%-s%.sass))
	@$(PY) -m tools.compile.checks sm80 --dir $(CK) --stages $* \
	  --source "build/pipelined_gemm.cu build/blocked_gemm.cu" --ptx \
	  $(PTX_ARCHES) --sass $(SASS_ARCHES) --blocked --out $@ >/dev/null
$(CK)/stage-limits.json: $(CK_TOOLS) $(CK)/sm_80-s$(TOO_DEEP).refused \
    $(foreach a,$(SASS_ARCHES),$(DEPTHS:%=$(CK)/$(a)-s%.cubin) \
      $(BLOCKED_DEPTHS:%=$(CK)/blocked-$(a)-s%.cubin) \
      $(DEEP_DEPTHS:%=$(CK)/deep-$(a)-s%.cubin)) | build/blocked_gemm.cu
	@$(PY) -m tools.compile.checks stages --dir $(CK) --tile-source \
	  build/pipelined_gemm.cu --blocked-source build/blocked_gemm.cu \
	  --deep-stages $(DEEP_DEPTHS) --out $@ >/dev/null
