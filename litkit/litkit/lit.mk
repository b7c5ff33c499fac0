# lit.mk (litkit): the make rules of a literate module (one noweb source
# holding its lesson and its program). A module's Makefile includes boot.mk
# (the set-up; it defines LIT), sets its variables, then includes
# $(LIT)/lit.mk, which includes cuda.mk when the module has PROGRAMS,
# CHECKED or CK_FILES. Every variable and goal: litkit/README.md. Required:
# NW, HASH_MACRO, TITLE and ROOTS (default: PROGRAMS and CHECKED).
# Helpers: sq (quoting), refuse, dated (boot.mk), changed, TMP, NEED, PY
# (the venv's Python), TEST (pytest, with tests/pytest.ini only), FORCE,
# PAGE_TOOLS (what page tests need: TIDY, CHROMIUM, CHROMEDRIVER), Q and
# show: a recipe line `@$(call show,WHAT,FILE)` then `$(Q)command` prints
# "  WHAT     FILE", or with make V=1 the command in full (kbuild's).

SHELL := /bin/sh
.DELETE_ON_ERROR:
ROOTS     ?= $(PROGRAMS) $(CHECKED)
$(foreach v,NW ROOTS HASH_MACRO TITLE,$(if $(strip $($v)),,$(error lit.mk: \
  set $v before including it (litkit/README.md says what each one is))))
.SUFFIXES:
HASHED    ?= $(ROOTS)
PAGES     ?= index
EVIDENCE  ?= evidence
NOTANGLE  ?= notangle
NOROOTS   ?= noroots
NOWEAVE   ?= noweave
PANDOC    ?= pandoc
export NOTANGLE NOROOTS NOWEAVE PANDOC
NEED := $(LIT)/need.sh
# The page tests' tools, and need.sh's triples for them (PAGE_TOOLS).
TIDY         ?= tidy
CHROMIUM     ?= chromium
CHROMEDRIVER ?= chromedriver
export TIDY CHROMIUM CHROMEDRIVER
PAGE_TOOLS = $(call sq,$(TIDY)) tidy apt $(call sq,$(CHROMIUM)) chromium apt \
  $(call sq,$(CHROMEDRIVER)) chromium-driver apt
# A recipe line's temporary output: its shell's PID in the name, so two
# makes at once (a build on save beside a terminal's) never share one.
TMP = $@.$$$$.tmp
# pytest's own settings only (tests/pytest.ini; litkit's for its own);
# env -u: nothing of the user's reaches the Pythons the tests start either.
# Under make check (LIT_QUICK=1) the tests marked slow are left out.
LIT_TEST := env -u PYTEST_ADDOPTS -u PYTEST_PLUGINS -u PYTHONPATH \
  -u PYTHONHOME -u PYTHONSTARTUP -u PYTHONUSERBASE -u PYTHONWARNINGS \
  -u PYTHONIOENCODING PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 $(PY) -m pytest -q \
  -rs -p no:cacheprovider $(if $(filter 1,$(LIT_QUICK)),-m 'not slow')
TEST := $(LIT_TEST) -c tests/pytest.ini --rootdir=.
# $(call changed,VAR,FILE): FORCE unless FILE holds VAR's value (a command
# file rewritten on change: other flags rebuild).
changed = $(if $(and $(findstring x$($1)x,x$(file <$2)x),$(findstring \
  x$(file <$2)x,x$($1)x)),,FORCE)
ifeq ($(.DEFAULT_GOAL),)
.DEFAULT_GOAL := all
endif
.PHONY: FORCE all tangle facts site help setup deps clean
FORCE: ; @:
LIT_CUDA := $(if $(strip $(PROGRAMS)$(CHECKED)$(CK_FILES)),build)
all: deps tangle $(LIT_CUDA) site ## tangle, build, weave the pages
ifeq ($(V),1)
Q :=
show = :
else
Q := @
show = printf '  %-8s %s\n' '$1' '$2'
endif
# The set-up ran while make read the Makefile (boot.mk): a goal to depend on.
deps:

# The goals a file documents (NAME: ... ## WHAT, or ## NAME: WHAT), a line
# "NAME<tab>WHAT" each: the Makefile's are phony; make help lists them all.
lit_goals = sed -n -e 's/^\([a-z0-9-]*\):.* \#\# /\1\t/p' \
  -e 's/^\#\# \([a-z0-9-]*\): /\1\t/p' $1
LIT_MAKEFILE := $(call sq,$(firstword $(MAKEFILE_LIST)))
.PHONY: $(shell $(call lit_goals,$(LIT_MAKEFILE)) | cut -f 1)
help: ## list the targets a user types (in the Makefile or litkit)
	@echo "$(TITLE). Targets:"
	@$(call lit_goals,$(LIT_MAKEFILE) $(LIT)/lit.mk $(filter $(LIT)/cuda.mk,\
	  $(MAKEFILE_LIST))) | awk -F '\t' -v off=' $(LIT_OFF) ' \
	  '!index(off, " " $$1 " ") { n[++k] = $$1; d[k] = $$2; \
	  if (length($$1) > w) w = length($$1) } END { for (i = 1; i <= k; \
	  i++) printf "  make %-" w "s  %s\n", n[i], d[i] }'
	@$(if $(HELP_VARS),echo $(call sq,Variables: $(foreach \
	  v,$(HELP_VARS),$v=$($v))))
	@echo "make V=1 ... prints each command in full."

setup: ## install the Debian packages this module needs (as root)
	@$(SETUP)

# ---- tangle ------------------------------------------------------------------
TANGLED := $(ROOTS:%=build/%) $(ROOTS:%=build/clean/%) build/source_hash.h \
           build/source.sha256 build/source.tokens
tangle: $(TANGLED) ## tangle the source into build/

# The roots check, the roots, the sha256 of HASHED (what binaries and
# evidence carry), their token digest (tokens.py) and the stamp.
define LIT_TANGLE
@$(NEED) $(call sq,$(NOTANGLE)) noweb && $(NEED) $(call sq,$(NOROOTS)) noweb
@$(call show,TANGLE,$(NW))
$(Q)$(LIT)/tangle.sh --all $(NW) build $(ROOTS)
$(Q)set -e; h=$$(cat $(HASHED:%=build/clean/%) | sha256sum | cut -d' ' -f1); \
 t=.$$$$.tmp; echo "$$h" > build/source.sha256$$t; \
 echo "#define $(HASH_MACRO) \"$$h\"" > build/source_hash.h$$t; \
 $(PY) -m litkit.tokens $(HASHED:%=build/clean/%) > build/source.tokens$$t; \
 for f in build/source.sha256 build/source_hash.h build/source.tokens; do \
   cmp -s $$f$$t $$f && rm -f $$f$$t || mv -f $$f$$t $$f; done
@{ echo "# make's stamp of the tangle of $(NW), and what each root \
 includes"; $(PY) -m litkit.tokens --includes build/clean $(filter %.c %.h \
 %.cu %.cuh %.cc %.cpp,$(ROOTS)); } > build/tangle.mk
@$(call dated,build/tangle.mk,$^)
endef
build/tangle.mk: $(NW) $(LIT)/tangle.sh $(LIT)/tokens.py
	$(LIT_TANGLE)
$(TANGLED) &: # removed since (by make clean earlier in this run, say)
	$(LIT_TANGLE)
ifneq ($(BUILDING),)
include build/tangle.mk
endif

clean: ## remove the pages (site/ if left empty) and build/, all but build/venv
	@$(call show,CLEAN,build/ $(SITE_PAGES))
	$(Q)rm -rf $(filter-out $(VENV) $(VENV).lock,$(wildcard build/* build/.??*)) \
	  $(SITE_PAGES) site/downloads
	$(Q)rmdir --ignore-fail-on-non-empty site 2>/dev/null || true

ifneq ($(LISTS),)
$(LISTS): $(LISTS_FROM) # (boot.mk reads it) again after make clean
	@$(LISTS_CMD) $@
	@$(call dated,$@,$^)
endif

# make clean with other goals (make -j2 clean all): one after another.
ifneq ($(and $(filter clean,$(MAKECMDGOALS)),$(word 2,$(MAKECMDGOALS))),)
.NOTPARALLEL:
endif

# ---- facts -------------------------------------------------------------------
# The evidence folder is a prerequisite: removing a facts file gathers again.
build/facts.json: $(wildcard $(EVIDENCE)/*.facts.json) $(wildcard \
    $(EVIDENCE)) build/source.sha256 build/source.tokens $(SCHEMA) \
    $(FACTS_DEPS) $(LIT)/gather.py $(LIT)/litlib.py
	@$(if $(SCHEMA),$(PY) -m litkit.gather --schema $(SCHEMA) \
	  --evidence $(EVIDENCE) --source-hash build/source.sha256 \
	  --token-hash build/source.tokens $(if $(DERIVE),--derive $(DERIVE)) \
	  --out $@,mkdir -p $(@D) && \
	  echo '{"facts_schema": {}, "facts": {}}' > $(TMP) && mv -f $(TMP) $@)

facts: build/facts.json ## gather the evidence's *.facts.json for the pages
ifeq ($(SCHEMA),)
LIT_OFF += facts# no facts: make help leaves it out
endif

# ---- plots: PLOTTER (a Python module) draws each of PLOTS from the facts ----
PLOT_FILES := $(foreach p,$(PLOTS),$(addprefix build/plots/$p,.svg \
                -narrow.svg .values.tsv))
ifneq ($(PLOTS),)
$(PLOT_FILES) &: build/facts.json $(subst .,/,$(PLOTTER)).py $(LIT)/plot.py
	@$(call show,PLOT,$(PLOTS:%=build/plots/%.svg))
	$(Q)$(PY) -m $(PLOTTER) build/facts.json build/plots
plots: $(filter %.svg,$(PLOT_FILES)) ## draw the pages' plots from the facts
WEAVE_RESOURCES ?= build/plots
else
LIT_OFF += plots
endif

# ---- the pages ---------------------------------------------------------------
WEAVE_TOOLS := $(addprefix $(LIT)/,weave.sh nw2md.py pages.lua facts.lua \
               divs.lua page.lua theme/template.html theme/style.css \
               theme/page.js)
SITE_PAGES := $(PAGES:%=site/%.html)
SITE_DOWNLOADS := $(if $(DOWNLOADS),$(DOWNLOADS:%=site/downloads/%) \
                  site/downloads/source_hash.h)
site: $(SITE_PAGES) $(SITE_DOWNLOADS) ## weave the source into site/*.html

# The pages the source declares (lit-pages), in order: weave.sh fails when
# its list differs from PAGES. The first is the lesson; all made together.
$(SITE_PAGES) &: $(NW) build/facts.json $(WEAVE_TOOLS) $(WEAVE_DEPS) \
    $(filter %.svg,$(PLOT_FILES))
	@$(NEED) $(NOWEAVE) noweb
	@$(NEED) $(PANDOC) pandoc
	@$(call show,WEAVE,$(SITE_PAGES))
	$(Q)WEAVE_PAGES='$(PAGES)' WEAVE_MD=build/site/index.md \
	  LIT_SCHEMA='$(SCHEMA)' SITE_EXTRA_RESOURCES=$(or $(WEAVE_RESOURCES),.) \
	  $(LIT)/weave.sh $(NW) build/facts.json $(firstword $(SITE_PAGES))

site/downloads/%: build/clean/%
	@mkdir -p $(@D)
	$(Q)cp $< $(TMP) && mv $(TMP) $@
site/downloads/source_hash.h: build/source_hash.h
	@mkdir -p $(@D)
	$(Q)cp $< $(TMP) && mv $(TMP) $@

# ---- make check --------------------------------------------------------------
ifneq ($(origin CHECKS),undefined)
JOBS ?= 4
CHECK_FIRST ?= $(if $(DERIVE),stale-evidence)
$(call refuse,JOBS,[1-9]|[1-9][0-9]|[1-9][0-9][0-9],give a number of jobs)
.PHONY: check check-all $(CHECKS) $(CHECK_FIRST)
check: deps ## every test group that needs no GPU, its slow tests left out
	@$(call lit_check,1)
check-all: deps ## make check with the slow tests (whole scratch builds)
	@$(call lit_check,)
lit_check = $(foreach c,$(CHECKS),if $(NEED) $(or $(NEEDS_$c),true -); then \
  run="$$run $c"; else echo "make $@: skipping $c" >&2; fi;) LIT_QUICK=$1 \
  CHECK_NAME=$@ CHECK_FIRST='$(CHECK_FIRST)' $(LIT)/check.sh $(JOBS) $$run
endif

# ---- test groups of any module (for CHECKS, or typed) -----------------------
ifneq ($(PAGE_TESTS),)
.PHONY: page-test page-tools site-check
NEEDS_page-test ?= $(PAGE_TOOLS)
page-test: page-tools site ## the page tests (PAGE_TESTS): Chromium, tidy
	@$(TEST) $(PAGE_TESTS)
page-tools: # first, so that a missing browser fails before the weave
	@$(NEED) $(PAGE_TOOLS)
site-check: page-tools site ## the page tests, screenshots in build/page/
	@PAGE_SHOTS=build/page $(TEST) $(PAGE_TESTS)
	@echo "site-check: screenshots for a reviewer in build/page/"
else
LIT_OFF += page-test site-check
endif

FORMATTED ?= $(filter %.c %.h %.cc %.cpp %.cu %.cuh,$(ROOTS:%=build/clean/%))
ifneq ($(FORMATTED),)
.PHONY: format-check
NEEDS_format-check ?= clang-format-14 clang-format-14 apt
format-check: $(FORMATTED) ## tangles: <= 80 columns, clang-format clean
	@$(NEED) clang-format-14 clang-format-14
	@$(if $(FORMAT_TESTS),$(TEST) $(FORMAT_TESTS))
	@$(PY) -m litkit.check_format $(FORMATTED)
else
LIT_OFF += format-check
endif

.PHONY: litkit-test
NEEDS_litkit-test ?= $(PAGE_TOOLS) clang-format-14 clang-format-14 apt
litkit-test: ## litkit's own tests (LIT_SRC/tests), which need no module
	@$(LIT_TEST) -c $(LIT_SRC)/tests/pytest.ini --rootdir=$(LIT_SRC) \
	  $(LIT_SRC)/tests

ifneq ($(TESTS),)
.PHONY: test
test: all ## the module's own tests (TESTS), after make all
	@$(TEST) $(TESTS)
else
LIT_OFF += test
endif

ifneq ($(EVIDENCE_CMD),)
.PHONY: measure
measure: deps $(LIT_CUDA) ## measure again: EVIDENCE_CMD writes EVIDENCE/
	$(EVIDENCE_CMD)
else
LIT_OFF += measure
endif

ifneq ($(DERIVE),)
.PHONY: stale-evidence
stale-evidence: build/facts.json ## warn when the evidence is of other sources
	@$(PY) -m $(DERIVE) $<
else
LIT_OFF += stale-evidence
endif

ifneq ($(LIT_CUDA),)
include $(LIT)/cuda.mk
endif
