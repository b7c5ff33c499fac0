# mk/robust.mk: robust-build tests (issue #6, section 2), run by `make check`.
#
#   make robust-test  in scratch copies of the repo: a missing tool is named
#                     with its package and install command; Ctrl-C, a full
#                     disk (ulimit -f) or a read-only build/ never leave a
#                     half-written file make would keep; make -j8 builds the
#                     same bytes as a serial make; the page has no build date
#
# Touches nothing in this tree: every case copies the working tree (without
# build/ and the generated page) to a temporary folder. About a minute.

CHECK_TARGETS += robust-test

.PHONY: robust-test
robust-test: tests/robust/run ## interrupted, full-disk, read-only, parallel builds and missing tools, in scratch copies
	@$(PYTHON) tests/robust/run --repo .
