# boot.mk (litkit): what a module's Makefile includes first, from litkit's
# source (LIT_SRC), since it installs the package: the user's variables,
# quoting and refusals, then the set-up (setup.sh: the Debian packages,
# build/venv with litkit installed, the module's Python packages), run while
# make reads the Makefile, before any goal needs what it installs. LIT is
# then the installed package's folder, whose lit.mk the module includes
# once it has set its variables. Its variables (LIT_SRC, LIT_APT, USER_VARS,
# LIT_PIP..., LISTS...): litkit/README.md.

# ---- the user's variables: only from the command line (make CC=clang) -----
# nvcc's own: those NVIDIA's nvcc manual lists ("NVCC Environment Variables").
NVCC_ENV  := NVCC_PREPEND_FLAGS NVCC_APPEND_FLAGS NVCC_CCBIN
USER_VARS += PYTHON NOTANGLE NOROOTS NOWEAVE PANDOC JOBS TIDY CHROMIUM \
  CHROMEDRIVER NVCC ARCH CC CFLAGS NVCCFLAGS NVCCFLAGS_EXTRA LDFLAGS LDLIBS \
  CUOBJDUMP NVDISASM $(NVCC_ENV)
$(foreach v,$(sort $(USER_VARS)),$(if $(filter environment,$(origin $v)),$(if \
  $(MAKE_RESTARTS)$(filter-out 0,$(MAKELEVEL)),,$(warning note: ignoring $v \
  from the environment; give it on the command line: make $v=...))$(eval \
  undefine $v)))
# The system Python, from which build/venv is made with its site packages.
PYTHON ?= $(or $(wildcard /usr/bin/python3),python3)
export PYTHON
VENV   := build/venv
# The venv's Python, which runs every tool. -E -s: no PYTHONPATH,
# PYTHONIOENCODING..., no user site: nothing of the user's reaches a tool.
PY     := $(VENV)/bin/python -B -E -s
sq = '$(subst ','\'',$1)'# a path quoted for the shell, whatever it holds
# $(call dated,FILE,FROM): FILE dated no earlier than any of FROM, one in
# the future too (clock skew): else make remakes an included FILE forever.
dated = for f in $2; do [ $1 -nt "$$f" ] || touch -r "$$f" $1; done
# The goals given, but those that build nothing.
BUILDING := $(filter-out clean help setup $(NOBUILD_GOALS),$(or \
  $(MAKECMDGOALS),all))
# $(call refuse,VAR,CASE-PATTERN,HINT): stop when VAR's value cannot work.
refuse = $(if $(BUILDING),$(if $(shell case $(call sq,$($1)) in ($2) ;; \
  (*) echo x;; esac),$(error $1=$($1) cannot work: $3)))

# ---- set-up: once, and again when setup.sh, LIT_SETUP_DEPS or litkit change
ifneq ($(LIT_SASS_GOALS),)
LIT_PIP        += nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm
LIT_PIP_UNLESS ?= CUDA_HOME=$${CUDA_HOME:-/usr/local/cuda} \
                  $(LIT_SRC)/litkit/find-tool.sh cuobjdump
LIT_PIP_GOALS  += $(LIT_SASS_GOALS)
endif
SETUP := LIT_APT=$(call sq,$(LIT_APT)) LIT_PIP=$(call sq,$(LIT_PIP)) \
  LIT_PIP_UNLESS=$(call sq,$(LIT_PIP_UNLESS)) LIT_SRC=$(call sq,$(LIT_SRC)) \
  PYTHON=$(call sq,$(PYTHON)) $(call sq,$(LIT_SRC))/litkit/setup.sh
# LIT_OLD: the installed litkit is missing or of another source.
LIT_OLD := $(shell $(SETUP) --stale && echo lit)
SETUP_DUE := $(and $(BUILDING),$(if $(MAKE_RESTARTS),,x),$(filter 0,\
  $(MAKELEVEL)),$(if $(findstring n,$(firstword -$(MAKEFLAGS)))$(findstring \
  q,$(firstword -$(MAKEFLAGS))),,x),$(strip $(shell \
  for f in $(call sq,$(LIT_SRC))/litkit/setup.sh $(LIT_SETUP_DEPS); do [ \
  build/.deps-ok -nt "$$f" ] || echo deps; done) $(LIT_OLD)))
ifneq ($(SETUP_DUE),)
PIP_GOALS := $(or $(LIT_PIP_GOALS),all) $(if $(filter check,$(LIT_PIP_GOALS)),\
  check-all)
$(shell $(SETUP) --if-root $(if $(filter deps,$(SETUP_DUE)),$(if $(filter \
  $(PIP_GOALS),$(or $(MAKECMDGOALS),all)),,--no-pip),--lit-only) >&2)
$(if $(filter 0,$(.SHELLSTATUS)),,$(error set-up failed (its message is \
  above); make stopped before anything needs the missing parts))
endif
# The installed litkit's folder (shell tools, filters, theme, lit.mk);
# before any set-up (make -n, make clean in a fresh clone), or when the
# installed one is older than its source and no set-up ran (make help or
# make -n after a pull): its source.
LIT := $(or $(if $(and $(LIT_OLD),$(if $(SETUP_DUE),,x)),,$(shell \
  $(VENV)/bin/python -E -s -c 'import os, litkit; \
  print(os.path.relpath(litkit.DIR))' 2>/dev/null)),$(LIT_SRC)/litkit)
ifeq ($(wildcard $(VENV)/bin/python),)
PY := PYTHONPATH=$(call sq,$(LIT_SRC)) $(PYTHON) -B -s
endif
ifneq ($(and $(LISTS),$(BUILDING)),)
$(if $(shell for f in $(LISTS_FROM); do [ -f $(LISTS) ] && ! [ $$f -nt \
  $(LISTS) ] || { $(LISTS_CMD) $(LISTS) >&2 && $(call dated,$(LISTS),\
  $(LISTS_FROM)) || echo x; break; }; done),$(error \
  $(firstword $(LISTS_FROM)): cannot write $(LISTS)))
include $(LISTS)
endif
