# mk/checks.mk: compile-only evidence (no GPU) and the facts the page shows.
# Included by the Makefile before `check:`; owns build/checks/, the
# evidence/compile-nvcc-*.{txt,facts.json} files and build/facts.yaml.
#
#   make sm80-check        PTX at sm_75/80/90 and SASS at sm_80/90: cp.async
#                          only in matmulTilePiped, none below sm_80, LDGSTS
#   make stage-limits      ptxas shared memory for STAGES=2..5; 6 refused
#   make evidence-compile  write evidence/compile-nvcc-<release>.{txt,facts.json}
#   make facts             gather evidence/*.facts.json into build/facts.yaml
#   make checks-test       the tests of all of the above (part of make check)
#
# Every compile goes through tools/checks/run-nvcc, which keeps the exact
# command (X.cmd) and the compiler's output (the ptxas -v report) next to
# its product, so the evidence transcript quotes what really ran, and each
# (arch, depth) pair is compiled once however many checks read it.

# The kernel file the checks compile. Point CHECK_CU (with CHECK_DEPS, what
# it is made from, and CHECK_DIR, where the products go) at another .cu to
# check a variant; the negative-control test does exactly that.
CHECK_CU   ?= build/pipelined_gemm.cu
CHECK_DEPS ?= build/clean/pipelined_gemm.cu build/clean/kernels.h
CHECK_DIR  ?= build/checks/main
CHECKS_NVCCFLAGS ?= $(NVCCFLAGS)

CHECK_PTX_ARCHES  := sm_75 sm_80 sm_90
CHECK_SASS_ARCHES := sm_80 sm_90
LIMIT_STAGES      := 2 3 4 5
REFUSED_STAGES    := 6
# One stage of both tiles: (64*16 + 16*64) floats of 4 bytes. (The pipeline's
# state adds a few bytes per stage on top; stage-limits measures them.)
STAGE_BYTES       := 8192

# cuobjdump and the nvdisasm it runs are found once, when first needed:
# $CUDA_HOME/bin, PATH, then NVIDIA's pip wheels (tools/checks/find-tool).
CUOBJDUMP ?= $(eval CUOBJDUMP := $$(shell CUDA_HOME='$(CUDA_HOME)' PYTHON='$(PYTHON)' tools/checks/find-tool cuobjdump))$(CUOBJDUMP)
NVDISASM  ?= $(eval NVDISASM := $$(shell CUDA_HOME='$(CUDA_HOME)' PYTHON='$(PYTHON)' tools/checks/find-tool nvdisasm))$(NVDISASM)

CK := $(CHECK_DIR)
# A product's stem is ARCH-sSTAGES, e.g. sm_80-s2; depths past the
# exercise's 4 need -DALLOW_DEEP_PIPELINE.
ck_arch   = $(word 1,$(subst -s, ,$1))
ck_stages = $(word 2,$(subst -s, ,$1))
ck_flags  = -arch=$(call ck_arch,$1) -DSTAGES=$(call ck_stages,$1)$(if $(filter-out 2 3 4,$(call ck_stages,$1)), -DALLOW_DEEP_PIPELINE)
CK_NVCC   = $(NVCC) $(CHECKS_NVCCFLAGS) $(call ck_flags,$*) -Ibuild

CK_CHECK_STAGES := $(sort 2 $(STAGES))
CK_LIMIT_CUBINS := $(foreach a,$(CHECK_SASS_ARCHES),$(foreach n,$(LIMIT_STAGES),$(CK)/$(a)-s$(n).cubin))
CK_REFUSED      := $(CK)/sm_80-s$(REFUSED_STAGES).refused
CK_PY           := tools/checks/asmscan.py

CHECK_TARGETS += checks-test

# The compile products are reached through pattern rules; keep them between
# runs (make would otherwise delete them as intermediates). Every one is
# written under a temporary name and renamed, so none is ever half written.
.PRECIOUS: $(CK)/%.ptx $(CK)/%.cubin $(CK)/%.sass

.PHONY: sm80-check stage-limits evidence-compile facts checks-test \
        checks-test-facts checks-test-sm80 checks-test-negative checks-test-stages

# ---- compiles ----------------------------------------------------------------
# The #line tangle is what nvcc reads (errors then name day74.nw's lines);
# the clean tangles are the timestamps that matter (see the Makefile).
$(CK)/%.ptx: $(CHECK_DEPS) tools/checks/run-nvcc | $(CHECK_CU) build/kernels.h
	@tools/need $(NVCC) nvcc cuda
	@tools/checks/run-nvcc $@ $@.log -- $(CK_NVCC) -ptx $(CHECK_CU)

$(CK)/%.cubin: $(CHECK_DEPS) tools/checks/run-nvcc | $(CHECK_CU) build/kernels.h
	@tools/need $(NVCC) nvcc cuda
	@tools/checks/run-nvcc $@ $(CK)/$*.ptxas.txt -- $(CK_NVCC) -cubin -Xptxas -v $(CHECK_CU)

$(CK)/%.sass: $(CK)/%.cubin
	@tools/need $(CUOBJDUMP) nvidia-cuda-cuobjdump pip
	@tools/need $(NVDISASM) nvidia-cuda-nvdisasm pip
	@echo "$(CUOBJDUMP) -sass $< > $@"
	@echo "cuobjdump -sass $< > $@" > $@.cmd
	@PATH='$(dir $(NVDISASM))':"$$PATH" $(CUOBJDUMP) -sass $< > $@.tmp
	@mv -f $@.tmp $@

$(CK_REFUSED): $(CHECK_DEPS) tools/checks/run-nvcc | $(CHECK_CU) build/kernels.h
	@tools/need $(NVCC) nvcc cuda
	@tools/checks/run-nvcc --expect-fail $@ $@.log -- \
	  $(NVCC) $(CHECKS_NVCCFLAGS) $(call ck_flags,sm_80-s$(REFUSED_STAGES)) -Ibuild -cubin $(CHECK_CU)

# ---- the checks ----------------------------------------------------------------
# One report per depth checked: STAGES (the user's) and 2 (the evidence's).
define ck_sm80_rule
$(CK)/sm80-check-s$(1).json: $(foreach a,$(CHECK_PTX_ARCHES),$(CK)/$(a)-s$(1).ptx) \
    $(foreach a,$(CHECK_SASS_ARCHES),$(CK)/$(a)-s$(1).sass) tools/checks/sm80-check $(CK_PY)
	@$(PYTHON) tools/checks/sm80-check --dir $(CK) --stages $(1) --source $(CHECK_CU) \
	  --ptx $(CHECK_PTX_ARCHES) --sass $(CHECK_SASS_ARCHES) --out $$@ >/dev/null
endef
$(foreach n,$(CK_CHECK_STAGES),$(eval $(call ck_sm80_rule,$(n))))

sm80-check: $(CK)/sm80-check-s$(STAGES).json ## no GPU: cp.async only in the piped kernel (PTX sm_75/80/90), LDGSTS in its SASS
	@cat $(CK)/sm80-check-s$(STAGES).txt

$(CK)/stage-limits.json: $(CK_LIMIT_CUBINS) $(CK_REFUSED) tools/checks/stage-limits $(CK_PY)
	@$(PYTHON) tools/checks/stage-limits --dir $(CK) --refused $(CK_REFUSED) \
	  --refused-stages $(REFUSED_STAGES) --arch $(CHECK_SASS_ARCHES) --stages $(LIMIT_STAGES) \
	  --tile-bytes $(STAGE_BYTES) --out $@ >/dev/null

stage-limits: $(CK)/stage-limits.json ## no GPU: shared memory per block for STAGES=2..5, and 6 refused
	@cat $(CK)/stage-limits.txt

# ---- evidence ----------------------------------------------------------------
# Always rewritten when asked for (it is the record of a run); files whose
# content did not change apart from date and host are left untouched.
evidence-compile: $(CK)/sm80-check-s2.json $(CK)/stage-limits.json build/source.sha256 tools/checks/evidence-compile ## no GPU: write evidence/compile-nvcc-<version>.{txt,facts.json}
	@$(if $(filter build/pipelined_gemm.cu,$(CHECK_CU)),:,echo "evidence-compile: CHECK_CU=$(CHECK_CU) is not the lesson's program; refusing to write evidence" >&2; exit 1)
	@tools/need $(NVCC) nvcc cuda
	@$(PYTHON) tools/checks/evidence-compile --dir $(CK) --nvcc $(NVCC) --cuobjdump $(CUOBJDUMP) \
	  --source-hash build/source.sha256 --ptx $(CHECK_PTX_ARCHES) --sass $(CHECK_SASS_ARCHES) \
	  --stages $(LIMIT_STAGES) --refused-stages $(REFUSED_STAGES) --out-dir evidence

# ---- facts -------------------------------------------------------------------
# build/source.sha256 is written by the rule for build/source_hash.h; this
# rule only recreates it if it was deleted on its own.
build/source.sha256: build/source_hash.h
	@cut -d'"' -f2 $< > $@.tmp && mv -f $@.tmp $@

# The evidence folder itself is a prerequisite so that removing a facts
# file (which changes the folder) regathers too.
build/facts.yaml: $(wildcard evidence/*.facts.json) $(wildcard evidence) tools/facts/schema.tsv build/source.sha256 tools/facts/gather
	@$(PYTHON) tools/facts/gather --schema tools/facts/schema.tsv --evidence evidence \
	  --source-hash build/source.sha256 --out $@

facts: build/facts.yaml ## gather evidence/*.facts.json into build/facts.yaml for the page

# ---- tests -------------------------------------------------------------------
checks-test: checks-test-facts checks-test-sm80 checks-test-negative checks-test-stages ## test the facts pipeline, sm80-check (with a negative control) and stage-limits

checks-test-facts: tools/facts/gather tools/facts/schema.tsv tests/checks/run
	@$(PYTHON) tests/checks/run facts

checks-test-sm80: $(CK)/sm80-check-s2.json tests/checks/run
	@$(PYTHON) tests/checks/run sm80 --dir $(CK)

# The negative control: the same program with the piped fill rewritten to go
# through registers, checked by a sub-make pointed at it; sm80-check must fail.
build/checks/negative/pipelined_gemm.cu: build/clean/pipelined_gemm.cu tools/checks/make-register-fill | build/pipelined_gemm.cu
	@$(PYTHON) tools/checks/make-register-fill build/pipelined_gemm.cu $@

checks-test-negative: build/checks/negative/pipelined_gemm.cu build/clean/kernels.h build/kernels.h tests/checks/run
	@MAKE='$(MAKE)' $(PYTHON) tests/checks/run negative --cu build/checks/negative/pipelined_gemm.cu \
	  --dir build/checks/negative

checks-test-stages: $(CK)/stage-limits.json tests/checks/run
	@$(PYTHON) tests/checks/run stages --dir $(CK) --tile-bytes $(STAGE_BYTES)
