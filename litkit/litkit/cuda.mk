# cuda.mk (litkit): the make rules of a module's C and CUDA program, which
# lit.mk includes when the module has PROGRAMS, CHECKED or CK_FILES: objects
# from the clean tangles (a prose edit recompiles nothing), each depending
# on the tangled files its root includes (build/tangle.mk); programs linked;
# compile checks (PTX, cubins, SASS: no GPU needed); cmocka unit tests.
# Every variable and goal: litkit/README.md.

ARCH      ?= sm_80
NVCCFLAGS ?= -O3 -lineinfo
CC        ?= cc
CFLAGS    ?= -O3 -Wall -Wextra -Wpedantic
BUILT_WITH ?= ARCH=$(ARCH), CC=$(CC)
OBJDIR    ?= build/$(ARCH)
LATEST    ?= $(basename $(PROGRAMS))
CK        ?= build/checks
CK_FILES  ?= $(if $(word 2,$(CHECKED)),$(foreach r,$(CHECKED),$(basename \
  $r)-=$r),$(CHECKED))
LINK_NEEDS ?= $(if $(filter %.cu,$(PROGRAMS)),-L$(call sq,$(CUDA_HOME)/lib64) \
  -lcudart_static -ldl -lrt -lpthread -lstdc++ -lm)
WERROR    := -Werror all-warnings
ifndef NVCC
NVCC := $(shell for n in "$$(command -v nvcc)" \
  $(call sq,$(CUDA_HOME))/bin/nvcc /usr/local/cuda/bin/nvcc; do \
  [ -x "$$n" ] && exec printf %s "$$n"; done; echo nvcc)
endif
ifneq ($(origin CUDA_HOME),command line)
CUDA_HOME := $(or $(shell p=$$(command -v $(call sq,$(NVCC))) && \
  dirname "$$(dirname "$$(readlink -f "$$p")")"),/usr/local/cuda)
endif
FIND_TOOL := CUDA_HOME=$(call sq,$(CUDA_HOME)) $(LIT)/find-tool.sh
CUOBJDUMP ?= $(eval CUOBJDUMP := $$(shell $(FIND_TOOL) cuobjdump))$(CUOBJDUMP)
NVDISASM  ?= $(eval NVDISASM := $$(shell $(FIND_TOOL) nvdisasm))$(NVDISASM)
SASS_TOOLS = $(call sq,$(CUOBJDUMP)) nvidia-cuda-cuobjdump pip \
  $(call sq,$(NVDISASM)) nvidia-cuda-nvdisasm pip
export NVCC CUDA_HOME

$(call refuse,ARCH,sm_[1-9][0-9]|sm_[1-9][0-9][0-9]|sm_[1-9][0-9]*[af],give \
  a GPU architecture: make ARCH=sm_80 or ARCH=sm_90)
$(call refuse,CC,$(if $(shell command -v $(firstword $(CC))),*,''),no such \
  command; give a C compiler: make CC=gcc or CC=clang)
$(call refuse,NVCC,$(if $(findstring $$,$(NVCC)),'',*),nvcc fails from a \
  folder whose name holds a $$: link the toolkit elsewhere)

# ---- the program's objects --------------------------------------------------
CC_CMD   := $(CC) $(CFLAGS) $(CC_NEEDS) $(LDFLAGS) $(LDLIBS)
NVCC_CMD := $(NVCC) $(NVCCFLAGS) $(NVCC_NEEDS) $(NVCCFLAGS_EXTRA) $(foreach \
  v,$(NVCC_ENV),$($v))# nvcc's variables (make NVCC_CCBIN=...) rebuild too
build/host/cc.cmd: $(call changed,CC_CMD,build/host/cc.cmd)
	@mkdir -p $(@D) && printf '%s\n' $(call sq,$(CC_CMD)) > $@
$(OBJDIR)/nvcc.cmd: $(call changed,NVCC_CMD,$(OBJDIR)/nvcc.cmd)
	@mkdir -p $(@D) && printf '%s\n' $(call sq,$(NVCC_CMD)) > $@

# Tangled files by their clean twins, and the #line twins order-only.
lit_twins = $(patsubst build/%,build/clean/%,$1) | $(filter build/%,$1)
# What root $1 includes (LIT_INCLUDES_$1: build/tangle.mk), as twins; its
# objects depend on them (a .c root has one in build/host too).
lit_inc = $(patsubst build/clean/source_hash.h,build/source_hash.h,$(call \
  lit_twins,$(LIT_INCLUDES_$1:%=build/%)))
lit_objs = $(OBJDIR)/$(basename $1).o $(if $(filter %.c,$1),$(addprefix \
  build/host/,$(1:.c=.o)))
$(foreach r,$(filter %.c %.cu,$(ROOTS)),$(eval $(call lit_objs,$r): $(call \
  lit_inc,$r)))
$(OBJDIR)/%.o: build/clean/%.cu $(OBJDIR)/nvcc.cmd | build/%.cu
	@$(NEED) $(call sq,$(NVCC)) nvcc cuda
	@$(if $(findstring ",$(CURDIR)),echo 'nvcc cannot compile from a folder \
	  whose name holds a " (ptxas fails); move or rename it' >&2; exit 1)
	@mkdir -p $(@D)
	@$(call show,NVCC,$@)
	$(Q)$(call sq,$(NVCC)) $(NVCCFLAGS) $(NVCC_NEEDS) $(NVCCFLAGS_EXTRA) \
	  $(or $(ARCH_FLAGS),-arch=$(ARCH)) $(CUDA_DEFS) -Ibuild -c build/$*.cu \
	  -o $(TMP) && mv -f $(TMP) $@
define LIT_CC
@mkdir -p $(@D)
@$(call show,CC,$@)
$(Q)$(CC) $(CFLAGS) $(CC_NEEDS) $(C_DEFS) -Ibuild \
  -I$(call sq,$(CUDA_HOME)/include) -c build/$*.c -o $(TMP) && mv -f $(TMP) $@
endef
$(OBJDIR)/%.o: build/clean/%.c build/host/cc.cmd | build/%.c
	$(LIT_CC)
build/host/%.o: build/clean/%.c build/host/cc.cmd | build/%.c
	$(LIT_CC)

# build/NAME of LATEST: a link to OBJDIR/NAME, the configuration last built.
define LIT_LATEST
build/$1: $(OBJDIR)/$1 $(if $(filter $(OBJDIR:build/%=%)/$1,$(shell \
    readlink build/$1)),,FORCE)
	@ln -sfn $(OBJDIR:build/%=%)/$1 $$@
	@echo "$$@ points to $(OBJDIR)/$1"
endef
$(foreach l,$(LATEST),$(eval $(call LIT_LATEST,$l)))
define LINK
@$(call show,LINK,$@)
$(Q)$(CC) $(CC_NEEDS) $(LDFLAGS) -o $(TMP) $^ $(LINK_NEEDS) $(LDLIBS) && \
  mv -f $(TMP) $@ && echo "built $@ ($(BUILT_WITH))"
endef
ifneq ($(PROGRAMS),)
$(addprefix $(OBJDIR)/,$(basename $(PROGRAMS))): %: %.o $(HOST_OBJS)
	$(LINK)
endif

build/tests/%: tests/unit/%.c $(UNIT_OBJS) $(call lit_twins,$(addprefix \
    build/,$(filter %.h,$(ROOTS))))
	@mkdir -p $(@D)
	@[ -f /usr/include/cmocka.h ] || pkg-config --exists cmocka || { echo \
	  "missing: cmocka.h, from the Debian package libcmocka-dev" >&2; exit 1; }
	@$(call show,CC,$@)
	$(Q)$(CC) $(CC_NEEDS) -O1 -g -Wall -Wextra -Wpedantic -Werror -Ibuild \
	  $$(pkg-config --cflags cmocka) -o $(TMP) $< $(UNIT_OBJS) \
	  $$(pkg-config --libs cmocka || echo -lcmocka) -lm && mv -f $(TMP) $@
UNIT_TESTS ?= $(patsubst tests/unit/%.c,%,$(wildcard tests/unit/*.c))
ifneq ($(UNIT_TESTS),)
.PHONY: unit-test
unit-test: $(UNIT_TESTS:%=build/tests/%) ## the cmocka unit tests (tests/unit)
	@$(foreach t,$^,$t &&) :
else
LIT_OFF += unit-test
endif

# ---- compile checks: PTX, cubins, SASS --------------------------------------
ck_prefix = $(if $(findstring =,$1),$(firstword $(subst =, ,$1)))
ifneq ($(CK_FILES),)
ck_arch  = $(word 1,$(subst -s, ,$1))
ck_param = $(word 2,$(subst -s, ,$1))
CK_QUIET = $(if $(Q),>/dev/null)# run-nvcc.sh prints the command on stdout
CK_NVCC  = $(LIT)/run-nvcc.sh $1 -- $(call sq,$(NVCC)) $(NVCC_NEEDS) \
  $(NVCCFLAGS) $(WERROR) -Ibuild $(strip -arch=$(call ck_arch,$2) $(if \
  $(CK_PARAM),-D$(CK_PARAM)=$(call ck_param,$2)) $(call CK_FLAGS,$2))
# The rules of one file: $1 the products' prefix, $2 the root (a product
# blocked-X matches both X and blocked-X: make takes the shorter stem).
define LIT_CK_RULES
.PRECIOUS: $(CK)/$1%.ptx $(CK)/$1%.cubin
$(CK)/$1%.ptx: $(LIT)/run-nvcc.sh build/clean/$2 $(call lit_inc,$2) build/$2
	@$$(NEED) $$(call sq,$$(NVCC)) nvcc cuda
	@$$(call show,PTX,$$@)
	@$$(call CK_NVCC,$$@ $$@.log,$$*) -ptx build/$2 $$(CK_QUIET)
$(CK)/$1%.cubin: $(LIT)/run-nvcc.sh build/clean/$2 $(call lit_inc,$2) build/$2
	@$$(NEED) $$(call sq,$$(NVCC)) nvcc cuda
	@$$(call show,CUBIN,$$@)
	@$$(call CK_NVCC,$$@ $(CK)/$1$$*.ptxas.txt,$$*) -cubin -Xptxas -v \
	  build/$2 $$(CK_QUIET)
$(CK)/$1%.refused: $(LIT)/run-nvcc.sh build/clean/$2 $(call lit_inc,$2) \
    build/$2
	@$$(NEED) $$(call sq,$$(NVCC)) nvcc cuda
	@$$(call show,REFUSED,$$@)
	@$$(call CK_NVCC,--expect-fail $$@ $$@.log,$$*) -cubin build/$2 \
	  $$(CK_QUIET)
endef
$(foreach f,$(CK_FILES),$(eval $(call LIT_CK_RULES,$(call \
  ck_prefix,$f),$(lastword $(subst =, ,$f)))))

.PRECIOUS: $(CK)/%.sass
$(CK)/%.sass: $(CK)/%.cubin
	@$(NEED) $(SASS_TOOLS)
	@$(call show,SASS,$@)
	@echo "cuobjdump -sass $< > $@" > $@.cmd
	@PATH="$$(dirname $(call sq,$(NVDISASM)))":"$$PATH" \
	  $(call sq,$(CUOBJDUMP)) -sass $< > $(TMP) && mv -f $(TMP) $@
endif

.PHONY: build
## build: build the programs (build/NAME), compile the CHECKED roots to PTX
build: $(LATEST:%=build/%) $(if $(CHECKED),$(foreach f,$(CK_FILES),\
  $(CK)/$(call ck_prefix,$f)$(ARCH).ptx))
