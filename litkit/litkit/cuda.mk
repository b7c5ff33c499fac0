# cuda.mk (litkit): the make rules of a module's CUDA program, included
# after lit.mk. They compile its tangled roots into objects and link them,
# and compile kernel files to PTX, cubins and SASS for compile checks (no
# GPU needed). The module sets before (defaults in brackets):
#   OBJDIR        one configuration's objects (build/sm_80, say)
#   ARCH [sm_80], NVCCFLAGS [-O3 -lineinfo], CC [cc], CFLAGS [-O3 -Wall
#                 -Wextra -Wpedantic], NVCCFLAGS_EXTRA, LDFLAGS, LDLIBS: the
#                 user's flags, which the module's never replace
#   NVCC_NEEDS, CC_NEEDS, LINK_NEEDS: the flags the program needs (after
#                 the user's); a program with .cu objects links the CUDA
#                 runtime here: -L$(CUDA_HOME)/lib64 -lcudart_static -ldl
#                 -lrt -lpthread -lstdc++ -lm; CUDA_DEFS: more flags for its
#                 .cu objects only; ARCH_FLAGS (for nvcc, instead of
#                 -arch=ARCH) and C_DEFS (for cc): an object's own, as
#                 target-specific variables (OBJDIR/x.o: C_DEFS := -DX=1)
#   LATEST        optional: the binary linked as build/LATEST; BUILT_WITH:
#                 what LINK says it was built with [ARCH=...]; UNIT_OBJS:
#                 what the unit tests link; UNIT_TESTS: the cmocka tests
#                 make unit-test runs [tests/unit/*.c's names]
#   PROGRAMS      optional: binaries OBJDIR/NAME, each linked (LINK) from
#                 OBJDIR/NAME.o and HOST_OBJS, the objects they share (a
#                 rule without recipe gives a binary more of its own)
#   CUDA_HEADERS, C_HEADERS: the tangled headers (build/NAME.h) that every
#                 .cu, every .c object includes; an object depends on its
#                 own clean tangle and these only, so one that includes
#                 build/source_hash.h says so (OBJ: build/source_hash.h),
#                 or it keeps an old hash
#   CK, CK_FILES  optional: the compile checks' folder and kernel files,
#                 tangled paths (build/NAME.cu), each FILE or PREFIX=FILE:
#                 FILE's products are CK/PREFIX<stem>.ptx (...), so at most
#                 one file goes without a prefix
#   CK_PARAM      the macro a product's stem ARCH-sN sets to N (optional:
#                 without it, a stem is ARCH: CK/sm_80.ptx); CK_FLAGS: a
#                 function of the stem ($1) giving more flags
# It gives:
#   NVCC, CUDA_HOME   nvcc on PATH, in $CUDA_HOME or /usr/local/cuda, and
#                 its toolkit (unless the command line gives them);
#                 CUOBJDUMP, NVDISASM: found when first needed
#                 (find-tool.sh); ARCH, CC and NVCC refused by name when
#                 they cannot work
#   OBJDIR/NAME.o from build/clean/NAME.cu (nvcc, -arch=ARCH or the
#                 object's own ARCH_FLAGS) or build/clean/NAME.c (CC, with
#                 the object's C_DEFS), and build/host/NAME.o from
#                 build/clean/NAME.c: they compile the #line twin
#                 build/NAME but depend on the clean one, so a prose edit
#                 recompiles nothing; build/host/cc.cmd, OBJDIR/nvcc.cmd:
#                 the commands, rewritten on change (other flags rebuild)
#   build/LATEST  a link to OBJDIR/LATEST, the configuration last built
#   LINK          a recipe: link $^ into $@ with CC and LINK_NEEDS, then
#                 print "built $@ (BUILT_WITH)"
#   CK/[PREFIX]STEM.ptx, .cubin (ptxas -v in .ptxas.txt), .refused (a
#                 cubin compile that must fail: its exit and output) of a
#                 CK_FILES file, warnings as errors (run-nvcc.sh: command
#                 in .cmd, output in .log; make V=1 prints the command);
#                 CK/NAME.sass: cuobjdump -sass
#                 of CK/NAME.cubin; SASS_TOOLS: need.sh's triples for it;
#                 WERROR: nvcc's warnings-as-errors flags
#   build/tests/NAME  the cmocka unit test tests/unit/NAME.c, linked with
#                 UNIT_OBJS (the objects the program links: it tests those);
#                 unit-test: builds and runs those of UNIT_TESTS (none:
#                 it is in LIT_OFF, which make help leaves out)

ARCH      ?= sm_80
NVCCFLAGS ?= -O3 -lineinfo
CC        ?= cc
CFLAGS    ?= -O3 -Wall -Wextra -Wpedantic
BUILT_WITH ?= ARCH=$(ARCH)
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
$(OBJDIR)/%.o: build/clean/%.cu $(OBJDIR)/nvcc.cmd \
    $(call lit_twins,build/%.cu $(CUDA_HEADERS))
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
$(OBJDIR)/%.o: build/clean/%.c build/host/cc.cmd \
    $(call lit_twins,build/%.c $(C_HEADERS))
	$(LIT_CC)
build/host/%.o: build/clean/%.c build/host/cc.cmd \
    $(call lit_twins,build/%.c $(C_HEADERS))
	$(LIT_CC)

ifneq ($(LATEST),)
build/$(LATEST): $(OBJDIR)/$(LATEST) $(if $(filter \
    $(OBJDIR:build/%=%)/$(LATEST),$(shell readlink build/$(LATEST))),,FORCE)
	@ln -sfn $(OBJDIR:build/%=%)/$(LATEST) $@
	@echo "$@ points to $(OBJDIR)/$(LATEST)"
endif
define LINK
@$(call show,LINK,$@)
$(Q)$(CC) $(CC_NEEDS) $(LDFLAGS) -o $(TMP) $^ $(LINK_NEEDS) $(LDLIBS) && \
  mv -f $(TMP) $@ && echo "built $@ ($(BUILT_WITH))"
endef
ifneq ($(PROGRAMS),)
$(PROGRAMS:%=$(OBJDIR)/%): %: %.o $(HOST_OBJS)
	$(LINK)
endif

build/tests/%: tests/unit/%.c $(UNIT_OBJS) $(call lit_twins,$(C_HEADERS))
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
ifneq ($(CK),)
ck_arch  = $(word 1,$(subst -s, ,$1))
ck_param = $(word 2,$(subst -s, ,$1))
CK_QUIET = $(if $(Q),>/dev/null)# run-nvcc.sh prints the command on stdout
CK_NVCC  = $(LIT)/run-nvcc.sh $1 -- $(call sq,$(NVCC)) $(NVCC_NEEDS) \
  $(NVCCFLAGS) $(WERROR) -Ibuild $(strip -arch=$(call ck_arch,$2) $(if \
  $(CK_PARAM),-D$(CK_PARAM)=$(call ck_param,$2)) $(call CK_FLAGS,$2))
# The rules of one file: $1 the products' prefix, $2 the file (a product
# blocked-X matches both X and blocked-X: make takes the shorter stem).
define LIT_CK_RULES
.PRECIOUS: $(CK)/$1%.ptx $(CK)/$1%.cubin
$(CK)/$1%.ptx: $(LIT)/run-nvcc.sh $(call lit_twins,$2 $(CUDA_HEADERS))
	@$$(NEED) $$(call sq,$$(NVCC)) nvcc cuda
	@$$(call show,PTX,$$@)
	@$$(call CK_NVCC,$$@ $$@.log,$$*) -ptx $2 $$(CK_QUIET)
$(CK)/$1%.cubin: $(LIT)/run-nvcc.sh $(call lit_twins,$2 $(CUDA_HEADERS))
	@$$(NEED) $$(call sq,$$(NVCC)) nvcc cuda
	@$$(call show,CUBIN,$$@)
	@$$(call CK_NVCC,$$@ $(CK)/$1$$*.ptxas.txt,$$*) -cubin -Xptxas -v $2 \
	  $$(CK_QUIET)
$(CK)/$1%.refused: $(LIT)/run-nvcc.sh $(call lit_twins,$2 $(CUDA_HEADERS))
	@$$(NEED) $$(call sq,$$(NVCC)) nvcc cuda
	@$$(call show,REFUSED,$$@)
	@$$(call CK_NVCC,--expect-fail $$@ $$@.log,$$*) -cubin $2 $$(CK_QUIET)
endef
ck_prefix = $(if $(findstring =,$1),$(firstword $(subst =, ,$1)))
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
