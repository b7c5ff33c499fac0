# Plots for the page, drawn by gnuplot from the committed GPU evidence.
# GPU_EVIDENCE names the evidence prefix (the first GPU found in evidence/).

GNUPLOT ?= gnuplot
GPU_EVIDENCE ?= $(patsubst %-run-sm_80.csv,%,$(firstword $(wildcard evidence/gpu-*-run-sm_80.csv)))
PLOT_DIR := build/plots
SITE_GENERATED_ASSETS += $(PLOT_DIR)/gflops.svg $(PLOT_DIR)/stages.svg
SITE_EXTRA_RESOURCES := $(PLOT_DIR)

.PHONY: plots
plots: $(PLOT_DIR)/gflops.svg $(PLOT_DIR)/stages.svg ## draw the page's plots from evidence/ with gnuplot

$(PLOT_DIR)/gflops.svg: tools/plots/gflops.gp tools/plots/make-plot $(wildcard $(GPU_EVIDENCE)-run-sm_80.csv)
	@tools/need $(GNUPLOT) gnuplot-nox
	@GNUPLOT=$(GNUPLOT) tools/plots/make-plot $< $(or $(GPU_EVIDENCE),evidence/none)-run-sm_80.csv $@

$(PLOT_DIR)/stages.svg: tools/plots/stages.gp tools/plots/make-plot $(wildcard $(GPU_EVIDENCE)-exercise.csv)
	@tools/need $(GNUPLOT) gnuplot-nox
	@GNUPLOT=$(GNUPLOT) tools/plots/make-plot $< $(or $(GPU_EVIDENCE),evidence/none)-exercise.csv $@
