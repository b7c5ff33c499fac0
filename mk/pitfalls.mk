# Pitfall variants: each is a root chunk pitfalls/NAME.cu of day74.nw that
# differs from pipelined_gemm.cu in the one chunk it gets wrong. The three
# that compile link with the same harness; misaligned-copy must not compile.

PITFALL_RUNNABLE := wrong-stage barrier-for-wait unmatched-commit
PITFALL_BINS := $(PITFALL_RUNNABLE:%=$(OBJDIR)/pitfalls/%)

$(OBJDIR)/pitfalls/%.o: build/pitfalls/%.cu build/clean/kernels.h | build/kernels.h
	@tools/need $(NVCC) nvcc cuda
	@mkdir -p $(@D)
	$(NVCC) $(NVCCFLAGS) -arch=$(ARCH) -DSTAGES=$(STAGES) -Ibuild -c $< -o $@.tmp.o
	@mv -f $@.tmp.o $@

$(PITFALL_BINS): $(OBJDIR)/pitfalls/%: $(OBJDIR)/pitfalls/%.o $(OBJDIR)/main.o build/host/harness.o
	$(NVCC) -arch=$(ARCH) -o $@.tmp $^ -lcublas -Xcompiler -fopenmp
	@mv -f $@.tmp $@

.PHONY: pitfalls pitfalls-compile
pitfalls: deps tangle $(PITFALL_BINS) build/pitfalls/misaligned-copy.cu ## build every pitfall variant and check it fails as the page says (GPU part needs a GPU)
	@tools/pitfalls --arch $(ARCH) --stages $(STAGES)

pitfalls-compile: deps tangle $(PITFALL_BINS) build/pitfalls/misaligned-copy.cu ## the compile-only pitfall checks (no GPU)
	@tools/pitfalls --arch $(ARCH) --stages $(STAGES) --compile-only

CHECK_TARGETS += pitfalls-compile

# Keep the tangled variants: make would otherwise delete them as intermediates.
.SECONDARY: $(PITFALLS:%=build/pitfalls/%.cu)
