# mk/site.mk: the lesson page (noweave + tools/weave/nw2md + pandoc) and its
# tests.  Included by the Makefile; owns site/index.html and site/downloads/.
#
#   make site        build site/index.html (one self-contained file) and
#                    copy the clean tangled sources to site/downloads/
#   make site-check  round trip, browser, HTML validity, awkward-input and
#                    fuzz tests of the page and of the weave tools

NOWEAVE      ?= noweave
NOTANGLE     ?= notangle
PANDOC       ?= pandoc
CHROMIUM     ?= chromium
CHROMEDRIVER ?= chromedriver
TIDY         ?= tidy
# Debian's python3-selenium lives in /usr/bin/python3's dist-packages.
SITE_PYTHON  ?= /usr/bin/python3
SITE_NW      ?= day74.nw
FACTS        ?= build/facts.yaml
SITE_DOWNLOADS ?= $(or $(PROGRAM_SRC),pipelined_gemm.cu harness.c harness.h main.c)

SITE_TOOLS := tools/weave/nw2md tools/weave/weave.sh tools/weave/facts.lua \
              tools/weave/divs.lua site/template.html site/style.css mk/site.mk
SITE_ASSETS := $(wildcard site/*.svg)

.PHONY: site site-check site-tools site-clean

site: site/index.html $(addprefix site/downloads/,$(SITE_DOWNLOADS)) site/downloads/source_hash.h ## weave day74.nw into site/index.html (+ site/downloads/)

site-tools:
	@tools/need $(NOWEAVE) noweb
	@tools/need $(PANDOC) pandoc

site/index.html: $(SITE_NW) $(FACTS) $(SITE_TOOLS) $(SITE_ASSETS) $(SITE_GENERATED_ASSETS) | site-tools
	@mkdir -p build/site
	NOWEAVE=$(NOWEAVE) PANDOC=$(PANDOC) SITE_EXTRA_RESOURCES=$(SITE_EXTRA_RESOURCES) tools/weave/weave.sh $(SITE_NW) $(FACTS) build/site/index.html
	mv build/site/index.html $@.tmp && mv $@.tmp $@

site/downloads/source_hash.h: build/source_hash.h
	@mkdir -p $(@D)
	cp $< $@.tmp && mv $@.tmp $@

site/downloads/%: build/clean/%
	@mkdir -p $(@D)
	cp $< $@.tmp && mv $@.tmp $@

# Fallback for the facts file.  This is a pattern rule on purpose: the facts
# generator's explicit rule for build/facts.yaml (owned by its author) wins
# over it as soon as it exists.  The fallback has no schema and says so
# (facts_unchecked), so every placeholder renders "not yet measured" and
# facts.lua warns instead of failing on names it cannot check.
build/facts%yaml:
	@mkdir -p $(@D)
	@echo "site.mk: no rule makes $@ yet; writing the empty fallback" >&2
	printf '%s\n' '# fallback from mk/site.mk: no facts generator yet' \
	  'facts_unchecked: "no facts generator yet"' 'facts_schema: {}' 'facts: {}' > $@.tmp
	mv $@.tmp $@

site-check: site | site-tools ## test the page: chunk round trip, browser, tidy, awkward input, fuzz
	@tools/need $(NOTANGLE) noweb
	@tools/need $(TIDY) tidy
	@tools/need $(CHROMIUM) chromium
	@tools/need $(CHROMEDRIVER) chromium-driver
	@$(SITE_PYTHON) -c 'import selenium' 2>/dev/null || { \
	  echo "missing selenium for $(SITE_PYTHON): install with: apt-get install --no-install-recommends python3-selenium" >&2; exit 1; }
	NOWEAVE=$(NOWEAVE) NOTANGLE=$(NOTANGLE) PANDOC=$(PANDOC) TIDY=$(TIDY) \
	CHROMIUM=$(CHROMIUM) CHROMEDRIVER=$(CHROMEDRIVER) \
	  $(SITE_PYTHON) tests/weave/run.py --page site/index.html --nw $(SITE_NW)

site-clean: ## remove the generated page, its downloads and build/site
	rm -f site/index.html
	rm -rf build/site
	rm -rf site/downloads
