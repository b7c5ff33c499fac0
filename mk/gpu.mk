# Targets that need a GPU of compute capability 8.0 or newer.

.PHONY: exercise evidence-gpu
exercise: deps tangle ## GPU: build STAGES=2,3,4 and run each at N=2048, the exercise's table
	@$(PYTHON) tools/exercise --arch $(ARCH)

evidence-gpu: deps tangle ## GPU: re-measure everything the page shows, into evidence/
	@tools/gpu/evidence-gpu evidence; rc=$$?; \
	 $(PYTHON) tools/gpu/gpu-facts evidence && exit $$rc
