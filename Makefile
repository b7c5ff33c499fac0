# Day 74, "Async copies and pipelines": one noweb source, day74.nw, tangled
# into a CUDA program and woven into the lesson page. `make help` lists the
# targets. Everything under build/ (and site/index.html) is generated.

# ---- variables a user may override -----------------------------------------
# nvcc from PATH, else from the toolkit's usual home.
NVCC      ?= $(or $(shell command -v nvcc 2>/dev/null),$(wildcard /usr/local/cuda/bin/nvcc),nvcc)
ARCH      ?= sm_80
STAGES    ?= 2
NVCCFLAGS ?= -O3 -std=c++17 -lineinfo
CFLAGS    ?= -std=c11 -O3 -Wall -Wextra -Wpedantic -fopenmp
RUN_ARGS  ?=
CUDA_HOME ?= $(or $(patsubst %/bin/nvcc,%,$(realpath $(shell command -v $(NVCC) 2>/dev/null))),/usr/local/cuda)
NOTANGLE  ?= notangle
NOROOTS   ?= noroots
PYTHON    ?= python3

export NOTANGLE NOROOTS NVCC

SHELL := /bin/sh
.DELETE_ON_ERROR:
.SUFFIXES:

# ---- what the source holds ------------------------------------------------
NW          := day74.nw
PROGRAM_SRC := pipelined_gemm.cu kernels.h harness.h harness.c main.c
PITFALLS    := wrong-stage barrier-for-wait unmatched-commit misaligned-copy
ROOTS       := $(PROGRAM_SRC) $(PITFALLS:%=pitfalls/%.cu)

# Tangled with #line directives (what the compilers read) and clean (what
# readers download and what the source hash covers).
LINED := $(PROGRAM_SRC:%=build/%)
CLEAN := $(PROGRAM_SRC:%=build/clean/%)

# One build directory per architecture and pipeline depth, so switching
# ARCH or STAGES never mixes objects.
CONFIG := $(ARCH)-$(STAGES)stages
OBJDIR := build/$(CONFIG)
BIN    := $(OBJDIR)/pipelined_gemm

CHECK_TARGETS :=

.PHONY: all tangle build run check clean help setup deps
all: deps tangle build site ## tangle, build the program and weave the page (the default)

include $(sort $(wildcard mk/*.mk))

help: ## list the targets a user types
	@echo "Day 74: async copies and pipelines. Targets:"
	@grep -hE '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | \
	  sed -E 's/^([a-zA-Z0-9_-]+):.*## (.*)/  make \1\t\2/' | expand -t 26
	@echo "Variables: NVCC=$(NVCC) ARCH=$(ARCH) STAGES=$(STAGES) CC=$(CC)"
	@echo "  NVCCFLAGS=$(NVCCFLAGS) CFLAGS=$(CFLAGS) RUN_ARGS=$(RUN_ARGS)"

setup: ## install the Debian and Python packages this module needs (as root)
	@tools/setup

deps: build/.deps-ok
build/.deps-ok: tools/setup
	@tools/setup --if-root
	@mkdir -p build && touch $@

# ---- tangle -----------------------------------------------------------------
tangle: $(LINED) $(CLEAN) build/source_hash.h build/.roots-ok ## tangle day74.nw into build/ (C, CUDA, clean copies)

build/.roots-ok: $(NW) tools/check-roots
	@tools/need $(NOROOTS) noweb
	@tools/check-roots $(NW) $(ROOTS)
	@mkdir -p build && touch $@

$(LINED): build/%: $(NW) tools/tangle | build/.roots-ok
	@tools/need $(NOTANGLE) noweb
	@tools/tangle -L $(NW) $* $@

$(CLEAN): build/clean/%: $(NW) tools/tangle | build/.roots-ok
	@tools/need $(NOTANGLE) noweb
	@tools/tangle $(NW) $* $@

build/pitfalls/%.cu: $(NW) tools/tangle | build/.roots-ok
	@tools/need $(NOTANGLE) noweb
	@tools/tangle -L $(NW) pitfalls/$*.cu $@

# The sha256 of the clean program sources: it changes when code changes and
# only then, and every binary and evidence file carries it.
build/source_hash.h: $(CLEAN)
	@set -e; h=$$(cat $(CLEAN) | sha256sum | cut -d' ' -f1); \
	 printf '#define DAY74_SOURCE_HASH "%s"\n' "$$h" > $@.tmp; \
	 if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv -f $@.tmp $@; fi
	@cut -d'"' -f2 $@ > build/source.sha256.tmp && mv -f build/source.sha256.tmp build/source.sha256

# ---- build ------------------------------------------------------------------
build: $(BIN) ## build build/pipelined_gemm (ARCH=sm_80, STAGES=2 by default)
	@ln -sfn $(CONFIG)/pipelined_gemm build/pipelined_gemm
	@echo "built $(BIN) (ARCH=$(ARCH), STAGES=$(STAGES)); build/pipelined_gemm points to it"

# Objects depend on the clean tangles, whose timestamps move only when code
# changes; the #line tangles they compile are order-only, so a prose edit
# (which shifts line numbers) recompiles nothing.
$(OBJDIR)/pipelined_gemm.o: build/clean/pipelined_gemm.cu build/clean/kernels.h | build/pipelined_gemm.cu build/kernels.h
	@tools/need $(NVCC) nvcc cuda
	@mkdir -p $(@D)
	$(NVCC) $(NVCCFLAGS) -arch=$(ARCH) -DSTAGES=$(STAGES) -Ibuild -c build/pipelined_gemm.cu -o $@.tmp.o
	@mv -f $@.tmp.o $@

$(OBJDIR)/main.o: build/clean/main.c build/clean/harness.h build/clean/kernels.h build/source_hash.h | build/main.c build/harness.h build/kernels.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -DDAY74_BUILD_ARCH='"$(ARCH)"' -Ibuild -I$(CUDA_HOME)/include -c build/main.c -o $@.tmp.o
	@mv -f $@.tmp.o $@

build/host/harness.o: build/clean/harness.c build/clean/harness.h | build/harness.c build/harness.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Ibuild -c build/harness.c -o $@.tmp.o
	@mv -f $@.tmp.o $@

$(BIN): $(OBJDIR)/pipelined_gemm.o $(OBJDIR)/main.o build/host/harness.o
	$(NVCC) -arch=$(ARCH) -o $@.tmp $^ -lcublas -Xcompiler -fopenmp
	@mv -f $@.tmp $@

# ---- run --------------------------------------------------------------------
run: build ## check and time both kernels on the GPU (RUN_ARGS="--sizes 512,4096")
	$(BIN) $(RUN_ARGS)

# ---- tests ------------------------------------------------------------------
CHECK_TARGETS += site-check

check: deps $(CHECK_TARGETS) ## run every test that needs no GPU
	@echo "make check: all test groups passed ($(CHECK_TARGETS))"

clean: ## remove build/ and the generated page (never evidence/)
	rm -rf build site/index.html site/downloads
