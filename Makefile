# Day 74, "Async copies and pipelines": day74.nw, tangled into a CUDA program
# and woven into site/index.html (generated, as is build/). See `make help`.

# ---- what a user may set ----------------------------------------------------
# Only on the command line (make ARCH=sm_90): from the environment, these
# and nvcc's variables are ignored with a note, so it never changes a build.
USER_VARS := NVCC ARCH STAGES CC CFLAGS NVCCFLAGS NVCCFLAGS_EXTRA LDFLAGS \
  LDLIBS RUN_ARGS JOBS PYTHON NOTANGLE NOROOTS NOWEAVE PANDOC TIDY \
  CHROMIUM CHROMEDRIVER CUOBJDUMP NVDISASM CHECK_CU CHECK_DEPS CHECK_DIR \
  NVCC_PREPEND_FLAGS NVCC_APPEND_FLAGS
# The set-up (litkit's boot.mk, read from its source since it installs it):
# the Debian packages, build/venv with litkit, cuobjdump where the toolkit
# lacks it (for the goals that run it), while make reads this file, before
# any goal needs them. Then LIT is the installed litkit's folder.
LIT_SRC  := litkit
LIT_APT  := python3-matplotlib chromium chromium-driver tidy gcc \
            python3-selenium libcmocka-dev pkg-config clang-format-14
LIT_PIP  := nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm
LIT_PIP_UNLESS := CUDA_HOME=$${CUDA_HOME:-/usr/local/cuda} \
                  tools/compile/find-tool.sh cuobjdump
LIT_PIP_GOALS  := all check sm80-check stage-limits evidence-compile \
                  compile-test
LIT_SETUP_DEPS := tools/compile/find-tool.sh
include $(LIT_SRC)/litkit/boot.mk
# nvcc: on PATH, in $CUDA_HOME or /usr/local/cuda; CUDA_HOME: where it lives.
ifndef NVCC
NVCC := $(shell for n in "$$(command -v nvcc)" \
  $(call sq,$(CUDA_HOME))/bin/nvcc /usr/local/cuda/bin/nvcc; do \
  [ -x "$$n" ] && exec printf %s "$$n"; done; echo nvcc)
endif
ifneq ($(origin CUDA_HOME),command line)
CUDA_HOME := $(or $(shell p=$$(command -v $(call sq,$(NVCC))) && \
  dirname "$$(dirname "$$(readlink -f "$$p")")"),/usr/local/cuda)
endif
ARCH      ?= sm_80
STAGES    ?= 2
NVCCFLAGS ?= -O3 -lineinfo
CC        ?= cc
CFLAGS    ?= -O3 -Wall -Wextra -Wpedantic
RUN_ARGS  ?=
# make exercise-check checks student (your chunk) or solution (the page's)
# of part 2, or with PART=1 of part 1 (exercises/deep-EXERCISE.cu);
# ALLOW_DEEP_PIPELINE=1 builds past the exercise's 4 stages.
EXERCISE  ?= student
PART      ?= 2
JOBS      ?= 4
TIDY      ?= tidy
CHROMIUM  ?= chromium
CHROMEDRIVER ?= chromedriver
# Looked for once, when first needed (tools/compile/find-tool.sh).
CUOBJDUMP ?= $(eval CUOBJDUMP := $$(shell $(FIND_TOOL) cuobjdump))$(CUOBJDUMP)
NVDISASM  ?= $(eval NVDISASM := $$(shell $(FIND_TOOL) nvdisasm))$(NVDISASM)
export NVCC CUDA_HOME PYTHON TIDY CHROMIUM CHROMEDRIVER

# Values that cannot work are refused here, by name, before any compiler.
$(call refuse,ARCH,sm_[1-9][0-9]|sm_[1-9][0-9][0-9]|sm_[1-9][0-9]*[af],give \
  a GPU architecture: make ARCH=sm_80 or ARCH=sm_90)
$(call refuse,STAGES,[2-9]|[1-9][0-9],give 2 or more pipeline stages)
$(call refuse,JOBS,[1-9]|[1-9][0-9]|[1-9][0-9][0-9],give a number of jobs)
$(call refuse,CC,$(if $(shell command -v $(firstword $(CC))),*,''),no such \
  command; give a C11 compiler with OpenMP: make CC=gcc or CC=clang)
$(call refuse,NVCC,$(if $(findstring $$,$(NVCC)),'',*),nvcc fails from a \
  folder whose name holds a $$: link the toolkit elsewhere)

# ---- flags the program needs: after the user's (which they never replace) --
NVCC_NEEDS := -std=c++17 $(if $(filter 1,$(ALLOW_DEEP_PIPELINE)),\
              -DALLOW_DEEP_PIPELINE)
CC_NEEDS   := -std=c11 -fopenmp
# RUNPATH: the program finds the toolkit it was built with, even where the
# toolkit has no ld.so.conf entry (NVIDIA's runfile installer adds none).
LINK_NEEDS := -L$(call sq,$(CUDA_HOME)/lib64) \
              -Wl,-rpath,$(call sq,$(CUDA_HOME)/lib64) -lcublas \
              -lcudart_static -ldl -lrt -lpthread -lstdc++ -lm
WERROR     := -Werror all-warnings# what make check compiles with
# Compile commands, in files rewritten on change: other flags rebuild.
CC_CMD   := $(CC) $(CFLAGS) $(CC_NEEDS) $(LDFLAGS) $(LDLIBS)
NVCC_CMD := $(NVCC) $(NVCCFLAGS) $(NVCC_NEEDS) $(NVCCFLAGS_EXTRA)

FIND_TOOL := CUDA_HOME=$(call sq,$(CUDA_HOME)) tools/compile/find-tool.sh

# ---- what the source holds --------------------------------------------------
NW      := day74.nw
# The program: its files are the downloads.
PROGRAM := pipelined_gemm.cu blocked_gemm.cu kernels.h harness.h harness.c \
           main.c wide_gemm.cu
# Kernel files, each a root NAME.cu giving build/<ARCH>-<STAGES>stages/NAME:
# KERNELS replace pipelined_gemm.cu (and link blocked_gemm.o), BLOCKED_KERNELS
# blocked_gemm.cu (and link pipelined_gemm.o); every binary links
# wide_gemm.o. They and the depths are tools/manifest.toml's, as
# build/manifest.mk (rewritten here when stale).
MANIFEST := tools/manifest.toml tools/manifest.py
ifneq ($(BUILDING),)
$(if $(shell for f in $(MANIFEST); do [ build/manifest.mk -nt $$f ] || { \
  $(PY) -m tools.manifest mk build/manifest.mk >&2 || echo x; break; }; \
  done),$(error $(firstword $(MANIFEST)): cannot write build/manifest.mk))
include build/manifest.mk
endif
# The exercise's file, built only by make exercise-check (unwritten, it fails).
STUDENT := exercises/student
# Part 1's files: the stages in dynamic shared memory (not measured).
DEEP    := exercises/deep-student exercises/deep-solution
# Roots that must not compile (the pitfalls say why).
REFUSED := pitfalls/misaligned-copy
ROOTS   := $(sort $(PROGRAM) $(addsuffix .cu,$(KERNELS) $(BLOCKED_KERNELS) \
             $(STUDENT) $(DEEP) $(REFUSED)))
# What the source hash covers: everything measured, the student's file aside
# (editing it must not mark the page's numbers stale).
HASHED  := $(PROGRAM) $(addsuffix .cu,$(filter-out pipelined_gemm,$(KERNELS)) \
             $(BLOCKED_KERNELS))

CONFIG := $(ARCH)-$(STAGES)stages
OBJDIR := build/$(CONFIG)
BIN    := $(OBJDIR)/pipelined_gemm
BINS   := $(KERNELS:%=$(OBJDIR)/%) $(BLOCKED_KERNELS:%=$(OBJDIR)/%)

# The tangle, facts, pages (and their downloads), make help and make setup:
# litkit's rules (lit.mk), for this source.
HASH_MACRO := DAY74_SOURCE_HASH
DOWNLOADS  := $(PROGRAM)
# The pages day74.nw declares (lit-pages), in order; the first is the lesson.
PAGES      := index lab program
# Facts: the schema with tools/manifest.toml's lists in its @{...} rows.
SCHEMA     := build/schema.tsv
DERIVE     := tools.facts.derive
FACTS_DEPS := tools/facts/derive.py
# The page's plots, drawn from the facts: NAME.svg, NAME-narrow.svg (phones)
# and NAME.values.tsv (numbers the page tests find in the tables it names).
PLOT_FILES := $(foreach p,gflops residency stages,$(addprefix build/plots/$p,\
                .svg -narrow.svg .values.tsv))
PLOTS := $(filter %.svg,$(PLOT_FILES))
WEAVE_DEPS := $(wildcard site/*.svg) $(PLOTS)
WEAVE_RESOURCES := build/plots
TITLE      := Day 74: async copies and pipelines
HELP_VARS  := NVCC ARCH STAGES CC NVCCFLAGS CFLAGS RUN_ARGS
# make check: every test group that needs no GPU (targets below), JOBS at a
# time, the longest first, a line each (output in build/check/), then
# stale-evidence. Their tests marked slow run under make check-all.
CHECKS := tangle-test exercise-check-solution page-test compile-test \
          robust-test facts-test setup-test pitfalls-compile format-check \
          example-test unit-test
CHECK_AFTER := stale-evidence
include $(LIT)/lit.mk
# The roots are the manifest's too: a changed manifest tangles again.
build/tangle.mk: $(MANIFEST)

.PHONY: all build build-all run plots sm80-check stage-limits \
        evidence-compile exercise exercise-check evidence-gpu pitfalls \
        pitfalls-compile site-check clean
all: deps tangle build site ## tangle, build the program, weave the page

# ---- build ------------------------------------------------------------------
## build: build build/pipelined_gemm (ARCH=sm_80, STAGES=2 by default)
build: $(BIN) build/pipelined_gemm build/model/model.o
# The CPU model's own half (tools/model), compiled once per checkout by make
# so that a check (make exercise-check) compiles only the kernel file.
build/model/model.o: tools/model/model.cc tools/model/include/lit_gpu.h
	@$(PY) -c 'from tools.model import check; check.model_object("$(@D)")'
	@echo "built $@ (the CPU model)"
build/pipelined_gemm: $(BIN) $(if $(filter $(CONFIG)/pipelined_gemm,$(shell \
    readlink build/pipelined_gemm)),,FORCE)
	@ln -sfn $(CONFIG)/pipelined_gemm $@
	@echo "build/pipelined_gemm points to $(BIN)"

build/host/cc.cmd: $(call changed,CC_CMD,build/host/cc.cmd)
	@mkdir -p $(@D) && printf '%s\n' $(call sq,$(CC_CMD)) > $@
$(OBJDIR)/nvcc.cmd: $(call changed,NVCC_CMD,$(OBJDIR)/nvcc.cmd)
	@mkdir -p $(@D) && printf '%s\n' $(call sq,$(NVCC_CMD)) > $@

# wide_gemm.cu issues cp.async in inline PTX (compute capability 8.0): for
# an older ARCH it is carried as compute_80 PTX only, so the program links;
# its capability gate refuses such a build before any kernel runs.
comma := ,
OLD_ARCH := $(filter sm_35 sm_37 sm_50 sm_52 sm_53 sm_60 sm_61 sm_62 sm_70 \
              sm_72 sm_75,$(ARCH))
arch_of = $(if $(and $(OLD_ARCH),$(filter wide_gemm,$(notdir $1))),-gencode \
  arch=compute_80$(comma)code=compute_80,-arch=$(ARCH))
OBJS := $(BINS:%=%.o) $(OBJDIR)/blocked_gemm.o $(OBJDIR)/wide_gemm.o \
        $(OBJDIR)/$(STUDENT).o $(DEEP:%=$(OBJDIR)/%.o)
$(OBJS): $(OBJDIR)/%.o: build/clean/%.cu build/clean/kernels.h \
    $(OBJDIR)/nvcc.cmd | build/%.cu build/kernels.h
	@$(NEED) $(call sq,$(NVCC)) nvcc cuda
	@$(if $(findstring ",$(CURDIR)),echo 'nvcc cannot compile from a folder \
	  whose name holds a " (ptxas fails); move or rename it' >&2; exit 1)
	@mkdir -p $(@D)
	@$(call show,NVCC,$@)
	$(Q)$(call sq,$(NVCC)) $(NVCCFLAGS) $(NVCC_NEEDS) $(NVCCFLAGS_EXTRA) \
	  $(call arch_of,$*) -DSTAGES=$(STAGES) -Ibuild -c build/$*.cu -o $(TMP) && \
	  mv -f $(TMP) $@

$(OBJDIR)/main.o: build/clean/main.c build/clean/harness.h \
    build/clean/kernels.h build/source_hash.h build/host/cc.cmd \
    | build/main.c build/harness.h
	@mkdir -p $(@D)
	@$(call show,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(CC_NEEDS) -DDAY74_BUILD_ARCH='"$(ARCH)"' -Ibuild \
	  -I$(call sq,$(CUDA_HOME)/include) -c build/main.c -o $(TMP) && \
	  mv -f $(TMP) $@

build/host/harness.o: build/clean/harness.c build/clean/harness.h \
    build/host/cc.cmd | build/harness.c build/harness.h
	@mkdir -p $(@D)
	@$(call show,CC,$@)
	$(Q)$(CC) $(CFLAGS) $(CC_NEEDS) -Ibuild -c build/harness.c -o $(TMP) && \
	  mv -f $(TMP) $@

HOST_OBJS := $(OBJDIR)/main.o build/host/harness.o $(OBJDIR)/wide_gemm.o
define LINK
@$(call show,LINK,$@)
$(Q)$(CC) $(CC_NEEDS) $(LDFLAGS) -o $(TMP) $^ $(LINK_NEEDS) $(LDLIBS) && \
  mv -f $(TMP) $@ && echo "built $@ (ARCH=$(ARCH), STAGES=$(STAGES))"
endef
$(KERNELS:%=$(OBJDIR)/%) $(OBJDIR)/$(STUDENT) $(DEEP:%=$(OBJDIR)/%): %: %.o \
    $(OBJDIR)/blocked_gemm.o $(HOST_OBJS)
	$(LINK)
$(BLOCKED_KERNELS:%=$(OBJDIR)/%): %: %.o $(OBJDIR)/pipelined_gemm.o \
    $(HOST_OBJS)
	$(LINK)

## build-all: build every kernel file's binary: pitfalls, experiments, solution
build-all: $(BINS)

# ---- on a GPU ---------------------------------------------------------------
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
PITFALL_BINS := $(filter $(OBJDIR)/pitfalls/%,$(BINS))
pitfalls: deps $(PITFALL_BINS) build/$(REFUSED).cu
	@$(PY) -m tools.gpu.pitfalls --arch $(ARCH) --stages $(STAGES)

pitfalls-compile: deps $(PITFALL_BINS) build/$(REFUSED).cu ## no GPU: the model
	@$(PY) -m tools.gpu.pitfalls --arch $(ARCH) --stages $(STAGES) --compile-only

# ---- compile checks and compile evidence (no GPU) ---------------------------
# Per stem ARCH-sSTAGES (blocked-ARCH-sSTAGES: the blocked pair) in CHECK_DIR;
# the negative control points CHECK_CU, CHECK_BLOCKED (_DEPS, DIR) elsewhere.
CHECK_CU   ?= build/pipelined_gemm.cu
CHECK_DEPS ?= build/clean/pipelined_gemm.cu build/clean/kernels.h
CHECK_BLOCKED ?= build/blocked_gemm.cu
CHECK_BLOCKED_DEPS ?= build/clean/blocked_gemm.cu build/clean/kernels.h
CHECK_DIR  ?= build/checks/main
CK := $(CHECK_DIR)
PTX_ARCHES  := sm_75 sm_80 sm_90
SASS_ARCHES := sm_80 sm_90
# DEPTHS, BLOCKED_DEPTHS (ptxas -v of each pair), TOO_DEEP (refused): from
# build/manifest.mk; one stage's bytes: from CHECK_CU's tile constants.
# -arch and -DSTAGES of a stem; past the exercise's, -DALLOW_DEEP_PIPELINE.
ck_depth = $(word 2,$(subst -s, ,$1))
ck_flags = -arch=$(word 1,$(subst -s, ,$1)) -DSTAGES=$(call ck_depth,$1) $(if \
  $(filter-out $(EXERCISE_DEPTHS),$(call ck_depth,$1)),-DALLOW_DEEP_PIPELINE)
CK_NVCC  = tools/compile/run-nvcc.sh $1 -- $(call sq,$(NVCC)) $(NVCC_NEEDS) \
           $(NVCCFLAGS) $(WERROR) -Ibuild $(call ck_flags,$2)
CK_TOOLS := tools/compile/checks.py $(LIT)/litlib.py build/manifest.mk
CK_SRC   := $(CHECK_DEPS) tools/compile/run-nvcc.sh | $(CHECK_CU) \
            build/kernels.h
.PRECIOUS: $(CK)/%.sass

# The PTX and cubin rules of a file: $1 the products' prefix, $2 the file,
# $3 the prerequisites (blocked-X matches both; make takes the shorter stem).
define CK_RULES
.PRECIOUS: $(CK)/$1%.ptx $(CK)/$1%.cubin
$(CK)/$1%.ptx: $3
	@$$(NEED) $$(call sq,$$(NVCC)) nvcc cuda
	@$$(call CK_NVCC,$$@ $$@.log,$$*) -ptx $2
$(CK)/$1%.cubin: $3
	@$$(NEED) $$(call sq,$$(NVCC)) nvcc cuda
	@$$(call CK_NVCC,$$@ $(CK)/$1$$*.ptxas.txt,$$*) -cubin -Xptxas -v $2
endef
$(eval $(call CK_RULES,,$(CHECK_CU),$(CK_SRC)))
$(eval $(call CK_RULES,blocked-,$(CHECK_BLOCKED),$(CHECK_BLOCKED_DEPS) \
  tools/compile/run-nvcc.sh | $(CHECK_BLOCKED) build/kernels.h))
# Part 1's dynamic version (deep-ARCH-sN), at the manifest's deep depths.
CHECK_DEEP := build/exercises/deep-solution.cu
$(eval $(call CK_RULES,deep-,$(CHECK_DEEP),\
  build/clean/exercises/deep-solution.cu build/clean/kernels.h \
  tools/compile/run-nvcc.sh | $(CHECK_DEEP) build/kernels.h))

$(CK)/%.sass: $(CK)/%.cubin
	@$(NEED) $(call sq,$(CUOBJDUMP)) nvidia-cuda-cuobjdump pip
	@$(NEED) $(call sq,$(NVDISASM)) nvidia-cuda-nvdisasm pip
	@echo "cuobjdump -sass $< > $@" | tee $@.cmd
	@PATH="$$(dirname $(call sq,$(NVDISASM)))":"$$PATH" \
	  $(call sq,$(CUOBJDUMP)) -sass $< > $(TMP) && mv -f $(TMP) $@

$(CK)/sm_80-s$(TOO_DEEP).refused: $(CK_SRC)
	@$(NEED) $(call sq,$(NVCC)) nvcc cuda
	@$(call CK_NVCC,--expect-fail $@ $@.log,sm_80-s$(TOO_DEEP)) -cubin \
	  $(CHECK_CU)

$(CK)/sm80-check-s%.json: $(CK_TOOLS) $(foreach u,/ /blocked-,\
    $(PTX_ARCHES:%=$(CK)$(u)%-s%.ptx) $(SASS_ARCHES:%=$(CK)$(u)%-s%.sass))
	@$(PY) -m tools.compile.checks sm80 --dir $(CK) --stages $* \
	  --source "$(CHECK_CU) $(CHECK_BLOCKED)" --ptx $(PTX_ARCHES) \
	  --sass $(SASS_ARCHES) --blocked --out $@ >/dev/null

$(CK)/stage-limits.json: $(CK_TOOLS) $(CK)/sm_80-s$(TOO_DEEP).refused \
    $(foreach a,$(SASS_ARCHES),$(DEPTHS:%=$(CK)/$(a)-s%.cubin) \
      $(BLOCKED_DEPTHS:%=$(CK)/blocked-$(a)-s%.cubin) \
      $(DEEP_DEPTHS:%=$(CK)/deep-$(a)-s%.cubin)) | $(CHECK_BLOCKED)
	@$(PY) -m tools.compile.checks stages --dir $(CK) --arch $(SASS_ARCHES) \
	  --refused $(CK)/sm_80-s$(TOO_DEEP).refused --stages $(DEPTHS) \
	  --refused-stages $(TOO_DEEP) --tile-source $(CHECK_CU) \
	  --blocked-stages $(BLOCKED_DEPTHS) --blocked-source $(CHECK_BLOCKED) \
	  --deep-stages $(DEEP_DEPTHS) --out $@ >/dev/null

sm80-check: $(CK)/sm80-check-s$(STAGES).json ## no GPU: where the cp.async are
	@cat $(CK)/sm80-check-s$(STAGES).txt

stage-limits: $(CK)/stage-limits.json ## no GPU: what each depth costs
	@cat $(CK)/stage-limits.txt

## evidence-compile: no GPU: write evidence/compile-nvcc-<version>.*
evidence-compile: $(CK)/sm80-check-s2.json $(CK)/stage-limits.json \
    build/source.sha256 build/source.tokens
	@$(if $(filter build/pipelined_gemm.cu+build/blocked_gemm.cu,\
	  $(CHECK_CU)+$(CHECK_BLOCKED)),,echo "evidence-compile: $(CHECK_CU)" \
	  "$(CHECK_BLOCKED) are not the lesson's program" >&2; exit 1)
	@$(NEED) $(call sq,$(NVCC)) nvcc cuda
	@$(PY) -m tools.compile.checks evidence --dir $(CK) \
	  --nvcc $(call sq,$(NVCC)) --cuobjdump $(call sq,$(CUOBJDUMP)) \
	  --source-hash build/source.sha256 --source-tokens build/source.tokens

# ---- facts, plots and the page ----------------------------------------------
# The schema with tools/manifest.toml's lists in its @{...} rows.
build/schema.tsv: tools/facts/schema.tsv $(MANIFEST)
	@$(PY) -m tools.manifest schema tools/facts/schema.tsv $@
# The manifest's lists for make, again after make clean in the same run.
build/manifest.mk: $(MANIFEST)
	@$(PY) -m tools.manifest mk $@

$(PLOT_FILES) &: build/facts.json tools/plots/plot.py $(LIT)/litlib.py
	@$(PY) -m tools.plots.plot build/facts.json build/plots

plots: $(PLOTS) ## draw the page's plots from the facts with matplotlib

# ---- make check's groups (CHECKS, above) ------------------------------------
# A group missing NEEDS_<group> (COMMAND PACKAGE HOW triples) is skipped.
NEEDS_compile-test = $(call sq,$(CUOBJDUMP)) nvidia-cuda-cuobjdump pip \
  $(call sq,$(NVDISASM)) nvidia-cuda-nvdisasm pip
NEEDS_page-test = $(call sq,$(TIDY)) tidy apt $(call sq,$(CHROMIUM)) \
  chromium apt $(call sq,$(CHROMEDRIVER)) chromium-driver apt
NEEDS_format-check = clang-format-14 clang-format-14 apt
stale-evidence: build/facts.json ## warn when evidence/ is of other sources
	@$(PY) -c 'import json, sys; f = json.load(open(sys.argv[1]))["facts"]; \
	  [print("WARNING: the", w, "evidence is of other sources; the page marks" \
	   " it stale until make", t, "is run and committed", file=sys.stderr) \
	   for k, w, t in (("stale", "GPU", "evidence-gpu"), ("compile_stale", \
	   "compile", "evidence-compile")) if "yes" == f.get("page." + k, \
	   {}).get("text")]' $<

.PHONY: page-tools
unit-test: build/tests/test_harness ## cmocka unit tests of the harness
	@build/tests/test_harness

# The test links the object `make build` links, so it tests that object.
build/tests/test_harness: tests/unit/test_harness.c build/host/harness.o \
    build/clean/harness.h | build/harness.h
	@mkdir -p $(@D)
	@[ -f /usr/include/cmocka.h ] || pkg-config --exists cmocka || { echo \
	  "missing: cmocka.h, from the Debian package libcmocka-dev" >&2; exit 1; }
	@$(call show,CC,$@)
	$(Q)$(CC) $(CC_NEEDS) -O1 -g -Wall -Wextra -Wpedantic -Werror -Ibuild \
	  $$(pkg-config --cflags cmocka) -o $(TMP) tests/unit/test_harness.c \
	  build/host/harness.o $$(pkg-config --libs cmocka || echo -lcmocka) -lm \
	  && mv -f $(TMP) $@

## compile-test: the sm80 check, its negative control (check-all: all builds)
compile-test: $(CK)/sm80-check-s2.json
	@$(TEST) tests/test_compile.py

facts-test: ## the facts pipeline, the verdicts, the GPU facts parser
	@$(TEST) tests/test_facts.py tests/test_manifest.py

PAGE_TEST := tests/test_page.py tests/page_checks.js
page-test: page-tools site $(PAGE_TEST) ## the page: round trip, Chromium, tidy
	@$(TEST) tests/test_page.py
# First, so that a missing browser fails before the weave.
page-tools:
	@$(NEED) $(call sq,$(TIDY)) tidy apt $(call sq,$(CHROMIUM)) chromium \
	  apt $(call sq,$(CHROMEDRIVER)) chromium-driver apt

## site-check: the page tests, and screenshots for a reviewer in build/page/
site-check: site $(PAGE_TEST)
	@$(NEED) $(call sq,$(CHROMIUM)) chromium
	@$(NEED) $(call sq,$(CHROMEDRIVER)) chromium-driver
	@PAGE_SHOTS=build/page $(TEST) tests/test_page.py
	@echo "site-check: screenshots (375 and 1280 px, light and dark) and" \
	  "print.pdf in build/page/"

FORMATTED := $(filter-out %/$(STUDENT).cu %/exercises/deep-student.cu,\
               $(ROOTS:%=build/clean/%))
format-check: $(FORMATTED) ## tangles: <= 80 columns, clang-format clean
	@$(NEED) clang-format-14 clang-format-14
	@$(TEST) tests/test_format.py
	@$(PY) -m litkit.check_format $(FORMATTED)

tangle-test: $(BIN) site ## tangle, build, weave in scratch copies; exit codes
	@$(TEST) tests/test_tangle.py --bin $(BIN)

# The page's solution through make exercise-check (no GPU), then its tests.
## exercise-check-solution: the page's solution, the CPU model's wrong loops
exercise-check-solution: $(OBJDIR)/exercises/solution $(BIN)
	@$(MAKE) --no-print-directory exercise-check EXERCISE=solution
	@$(MAKE) --no-print-directory exercise-check EXERCISE=solution PART=1
	@$(TEST) tests/test_exercise.py

setup-test: $(BIN) site ## a new user's machine: set-up, settings, concurrency
	@$(TEST) tests/test_setup.py --bin $(BIN)

# examples/day00: a module of its own, built from litkit alone (its own
# build/venv), as a new user's make check would run it.
example-test: ## the example module: its build, page and checks
	@env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u MAKEOVERRIDES -u PYTHON \
	  $(MAKE) --no-print-directory -C examples/day00 check

robust-test: ## interrupted, full-disk, read-only, missing tools
	@$(TEST) tests/test_robust.py

clean: ## remove build/ (but its set-up, build/venv) and the pages
	rm -rf $(filter-out $(VENV) $(VENV).lock,$(wildcard build/* build/.??*)) \
	  $(SITE_PAGES) site/downloads
