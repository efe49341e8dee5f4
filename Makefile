# torch_backend: one entry point for everything.
#
#   make demo    the main job
#   make test    every test (C-only build, full build, CTest, pytest, a vendor taken from
#                `tb-vendor new` to an installed wheel, sanitizers, lint, the second torch
#                release)
#   make bench   the benchmark table (device vs PyTorch CPU / memcpy), also as build/bench.json
#                and drawn against the aims in build/bench.png
#   make profile where a small operator's host time goes (perf samples by category)
#   make models  the model zoo: one training step of each model on the device beside the CPU
#   make docs    the documentation (Sphinx + Doxygen + Breathe) into build/docs/html
#
# Each target installs what this machine lacks (Debian packages with apt, Python packages with
# pip) and rebuilds only what is stale.  Build trees: build/c (C part alone, no libtorch),
# build/py (the full build that `pip install -e .` drives through scikit-build-core), build/asan
# and build/tsan (the sanitizer builds of test-sanitize and test-tsan), build/compat-<torch>
# (test-compat's build against the second torch release, whose environment is cached outside
# the clone).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

PYTHON ?= python3
PIP := $(PYTHON) -m pip
BUILD := build
STAMP := $(BUILD)/.stamp
JOBS ?= $(shell nproc)
SUDO := $(shell [ "$$(id -u)" -eq 0 ] || echo sudo)
export PIP_ROOT_USER_ACTION := ignore

# Debian packages: compilers and build tools, googletest, clang-format (style check), binutils
# (nm/readelf for the ABI checks), OpenBLAS (emu's matrix products), the OpenCL ICD loader, its
# headers, PoCL and CLBlast (the opencl vendor, run on this machine's cores), Doxygen and Graphviz (the
# docs), Chromium (the docs' browser test), perf (make profile).
APT_PACKAGES := cmake ninja-build gcc g++ clang make binutils libgtest-dev ccache clang-format \
                libopenblas-dev ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd libclblast-dev \
                doxygen graphviz chromium linux-perf

# Inputs of the full build: a change to any of them reinstalls the package.
BUILD_INPUTS := $(shell find CMakeLists.txt pyproject.toml cmake codegen include loader backends third_party \
                  conformance csrc torch_backend test -type f -not -path '*/__pycache__/*' \
                  -not -path 'test/python/*' -not -path 'test/compat/*' 2>/dev/null)
C_SOURCES = $(shell git ls-files -co --exclude-standard -- '*.c' '*.h' '*.cpp' 2>/dev/null)

.PHONY: help deps build demo bench profile models docs test test-c test-full test-wheel test-docs \
        test-sanitize test-tsan test-compat lint format clean

help:
	@echo "make demo    run the main job (installs and builds what is missing)"
	@echo "make test    run every test"
	@echo "make test-compat  one vendor binary in runtimes built against both torch releases"
	@echo "make bench   print the benchmark table, write $(BUILD)/bench.json and bench.png"
	@echo "make profile where a small operator's host time goes (perf samples by category)"
	@echo "make models  the model zoo on the device beside the CPU, as a table"
	@echo "make docs    build the documentation into $(BUILD)/docs/html"
	@echo "make build   install the package in editable mode (build/py)"
	@echo "make format  apply clang-format and ruff format"
	@echo "make clean   remove build/"

$(STAMP)/apt: Makefile
	@mkdir -p $(STAMP)
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "make: installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq; \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi
	@touch $@

$(STAMP)/pip: requirements-dev.txt $(STAMP)/apt
	$(PIP) install -q -r requirements-dev.txt
	@touch $@

deps: $(STAMP)/pip

# The full build: csrc against the installed torch, bundled vendors, tests; installed editable.
$(STAMP)/build: $(BUILD_INPUTS) $(STAMP)/pip
	$(PIP) install -q --no-build-isolation --no-deps -e . \
	  -Ccmake.define.TORCH_BACKEND_BUILD_TESTS=ON
	@touch $@

build: $(STAMP)/build

# The vendors the Python suites run against, each in its own process (faulty, the fault
# injection shim, is exercised by the error-path suite instead): every libtb_vendor_*.so of the
# package -- emu, fake and npu (over the AscendCL stand-in, whose libraries sit in
# lib/ascendcl-standin/ and are no vendors).  opencl runs the suites that exercise a vendor
# (OPENCL_PYTEST): its own stage, on PoCL's two devices.
ALL_VENDORS = $(shell $(PYTHON) -c 'import importlib.util, pathlib; \
  lib = pathlib.Path(importlib.util.find_spec("torch_backend").submodule_search_locations[0]) / "lib"; \
  print(*sorted(p.name[13:-3] for p in lib.glob("libtb_vendor_*.so")))' 2>/dev/null)
PYTEST_VENDORS = $(filter-out faulty opencl,$(ALL_VENDORS))

demo: $(STAMP)/build
	@for vendor in $(filter-out faulty,$(ALL_VENDORS)); do \
	  POCL_DEVICES="$${POCL_DEVICES:-pthread pthread}" tb-conformance $$vendor | \
	    sed -n '1p;/^group  *pass/,$$p'; echo; \
	done
	$(PYTHON) examples/demo.py

# A measurement, not a test: figures side by side in one run (benchmarks/bench.py), on
# TORCH_BACKEND_VENDOR (emu by default), then the rows of the opencl vendor on PoCL -- the
# same cores as PyTorch CPU, so its ratios say what the OpenCL path costs, not what a GPU
# gives -- where the package has it (no collectives, no torch.compile row); and npu's rows of
# what it maps onto CANN's fused operators or leaves to the fallback (attention, quantize).
OPENCL_BENCHES := latency,elementwise,mm,training,zoo,allocator
NPU_BENCHES := attention,quantize,ipc
bench: $(STAMP)/build
	$(PYTHON) benchmarks/bench.py --json $(BUILD)/bench.json --plot $(BUILD)/bench.png
	@if [ -n "$(filter opencl,$(ALL_VENDORS))" ]; then \
	  POCL_DEVICES="pthread pthread" TORCH_BACKEND_VENDOR=opencl $(PYTHON) benchmarks/bench.py \
	    --only $(OPENCL_BENCHES) --json $(BUILD)/bench-opencl.json; \
	fi
	@if [ -n "$(filter npu,$(ALL_VENDORS))" ]; then \
	  TORCH_BACKEND_VENDOR=npu $(PYTHON) benchmarks/bench.py --only $(NPU_BENCHES) \
	    --json $(BUILD)/bench-npu.json; \
	fi

# Where a small operator's host time goes, per category, from perf samples
# (benchmarks/host_profile.py): a measurement, not a test.
profile: $(STAMP)/build
	$(PYTHON) benchmarks/host_profile.py

# The model zoo (examples/zoo.py): torchvision CNNs, Hugging Face language models, a pretrained
# sentence-transformers model and an LSTM/GRU network, one training step each beside the CPU.
models: $(STAMP)/build
	$(PYTHON) examples/zoo.py --json $(BUILD)/zoo.json

# Documentation: Doxygen XML of the public headers, then Sphinx with Breathe; warnings fail
# both.  Sphinx imports torch_backend (autodoc, the op coverage table), hence the build.
DOCS := $(BUILD)/docs
docs: $(STAMP)/build
	rm -rf $(DOCS)/doxygen && mkdir -p $(DOCS)/doxygen
	TB_DOXYGEN_OUT=$(DOCS)/doxygen doxygen docs/Doxyfile
	TB_DOXYGEN_XML=$(abspath $(DOCS))/doxygen/xml $(PYTHON) -m sphinx -E -W --keep-going -q -b html \
	  -d $(DOCS)/doctrees docs $(DOCS)/html
	@echo "docs: $(DOCS)/html/index.html"

test-docs: docs
	TB_DOCS_HTML=$(abspath $(DOCS))/html $(PYTHON) -m pytest -q test/docs

# The C part alone, with no libtorch: proves TORCH_BACKEND_WITH_TORCH=OFF configures and passes.
# The C part is ISO C11 (-std=c11 from CMake, no GNU extensions): every C file of the tree --
# vendors, stand-in, loader, kit, conformance, the tests' vendors -- compiles warning-free with
# -pedantic-errors and -Werror, under gcc (this build, whose tests run) and clang (built only).
C_CONFIGURE = cmake -S . -B $(BUILD)/c -G Ninja -DTORCH_BACKEND_WITH_TORCH=OFF \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS=-pedantic-errors \
  > $(BUILD)/c-configure.log || { cat $(BUILD)/c-configure.log; exit 1; }
test-c: $(STAMP)/apt
	@mkdir -p $(BUILD)
	$(C_CONFIGURE)
	cmake --build $(BUILD)/c
	TORCH_BACKEND_EMU_GUARD=1 ctest --test-dir $(BUILD)/c --output-on-failure -j$(JOBS)
	CC=clang cmake -S . -B $(BUILD)/c-clang -G Ninja -DTORCH_BACKEND_WITH_TORCH=OFF \
	  -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS=-pedantic-errors \
	  > $(BUILD)/c-clang-configure.log || { cat $(BUILD)/c-clang-configure.log; exit 1; }
	cmake --build $(BUILD)/c-clang

# The suites that compile: run a second time on emu with host access (test-full).
COMPILE_PYTEST := test/python/test_compile.py test/python/test_custom_ops.py
# The suites that exercise a vendor, on opencl (PoCL asked for two devices; other drivers ignore
# POCL_DEVICES): OpInfo over its native kernels, training (fused optimizers, dropout,
# embedding), streams, events, memory, copies, faults, the fallback and the differential
# stress harness, the kernels' own edge cases (test_kernels, test_device_only_ops:
# convolutions, pooling, recurrent cells), the model zoo, in the default
# memory mode (the contract suite covers both), PyTorch's PrivateUse1 expectations (attention's
# route, quantized tensors, autocast, IPC and storage metadata: what a vendor without the
# optional parts gets), and the fork rule (its count probes in a child).  The runtime's own error paths, vendor start and device properties run on emu, npu
# and fake.
OPENCL_PYTEST := $(addprefix test/python/,test_opinfo.py test_kernels.py test_device_only_ops.py \
  test_model_zoo.py \
  test_training.py test_streams.py \
  test_events.py test_memory.py test_copy_semantics.py test_multi_device.py \
  test_differential.py test_guard.py test_rng.py test_fallback.py test_placement.py \
  test_overlap.py test_device_checks.py test_faults.py \
  test_quantized.py test_attention.py test_autocast.py test_ipc.py test_storage_meta.py \
  test_errors.py::test_fork_before_use_is_fine)

# Each vendor's suites run as two pytest jobs, each its own process: the longest suites
# (SLOW_PYTEST) in one, the others in the other.  test/lanes.py runs the jobs of a stage on two
# lanes, longest first, so that both cores stay busy to the end; its summary shows each job's
# time and each lane's idle time.
SLOW_PYTEST := $(addprefix test/python/,test_opinfo.py test_distributed.py test_errors.py \
  test_custom_ops.py test_check_kernels.py)
OTHER_PYTEST = $(filter-out $(SLOW_PYTEST),$(sort $(wildcard test/python/test_*.py)))
# $(call vendor_pytest,VENDOR,WHICH,FILES): one job of a vendor's Python suites.
vendor_pytest = echo == pytest, $(2), against vendor $(1) && TORCH_BACKEND_EMU_GUARD=1 \
  TORCH_BACKEND_VENDOR=$(1) $(PYTHON) -m pytest -q $(3)
slow_pytest = $(call vendor_pytest,$(1),the longest suites,$(SLOW_PYTEST))
other_pytest = $(call vendor_pytest,$(1),the other suites,$(OTHER_PYTEST))
OPENCL_PYTEST_RUN = echo == pytest, the suites that exercise a vendor, against vendor opencl && \
  POCL_DEVICES="pthread pthread" TORCH_BACKEND_VENDOR=opencl $(PYTHON) -m pytest -q $(OPENCL_PYTEST)
COMPILE_PYTEST_RUN = echo == pytest, torch.compile, against vendor emu with host access && \
  TORCH_BACKEND_EMU_GUARD=0 TORCH_BACKEND_VENDOR=emu $(PYTHON) -m pytest -q $(COMPILE_PYTEST)
OTHER_VENDORS = $(wordlist 2,99,$(PYTEST_VENDORS))

test-full: $(STAMP)/build
	TORCH_BACKEND_EMU_GUARD=1 ctest --test-dir $(BUILD)/py --output-on-failure -j$(JOBS)
	@test -n "$(PYTEST_VENDORS)" || { echo "make: no bundled vendors found"; exit 1; }
	@# The kernels' stated schemas against this torch's (vendor.h "Schemas"), without torch.
	$(PYTHON) -m torch_backend.schemas > $(BUILD)/schemas.txt
	@for vendor in $(PYTEST_VENDORS); do \
	  tb-conformance --schemas $(BUILD)/schemas.txt --filter kernels $$vendor | \
	    sed -n '1p;/^kernels  /p'; \
	done
	@# emu guarded (its device memory unmapped for host code): the suites prove that every byte
	@# moves through the vendor's copies, and torch.compile takes the path of a device without
	@# host access; then the compile suites once more on emu as shipped, with host access.  The
	@# jobs, longest first, on two lanes (test/lanes.py); opencl's is the longest on a machine
	@# whose OpenCL kernel caches are empty (PoCL compiles each program with LLVM: 450 s, 150 s
	@# with the caches).
	$(PYTHON) test/lanes.py \
	  $(if $(filter opencl,$(ALL_VENDORS)),'$(OPENCL_PYTEST_RUN)') \
	  '$(call slow_pytest,$(firstword $(PYTEST_VENDORS)))' \
	  '$(call other_pytest,$(firstword $(PYTEST_VENDORS)))' \
	  $(foreach v,$(OTHER_VENDORS),'$(call other_pytest,$(v))') \
	  $(foreach v,$(OTHER_VENDORS),'$(call slow_pytest,$(v))') \
	  '$(COMPILE_PYTEST_RUN)'

# From zero to a wheel, as a vendor does it (test/vendor_wheel/run.sh, docs/vendor_wheel.rst):
# `tb-vendor new acme`, the porting guide's asynchronous example's kernels
# (examples/vendor_kit/kernels.c), a build against the installed package, tb-conformance and
# check_kernels, the vendor's wheel; torch_backend's own as a user builds it (pip's isolated
# build, in build/wheel-build), repaired by auditwheel into a manylinux wheel and checked with
# `auditwheel show` (test/vendor_wheel/check_wheel.py); then a fresh venv holding only torch,
# numpy and the two wheels, where `import torch` brings up acme through its entry point, with
# no TORCH_BACKEND_VENDOR, and the MLP trains like the CPU; the demo and tb-conformance on emu
# there, and tb-conformance from the same wheel under a second CPython.
test-wheel: $(STAMP)/build
	test/vendor_wheel/run.sh $(PYTHON_EXE) $(abspath $(BUILD))/vendor-wheel

# Sanitizers (cmake/Sanitize.cmake).  libtorch, CPython, OpenBLAS and googletest are prebuilt and
# stay uninstrumented.
#
# test-sanitize: everything of ours -- loader, vendors (npu with the AscendCL stand-in),
# conformance suite, the googletest suites, csrc -- built with AddressSanitizer and
# UndefinedBehaviorSanitizer into build/asan.  CTest runs there with leak detection on (the
# contract suite on npu and the stand-in's own test included).  Then Python suites that drive the runtime (streams, events,
# allocators, copies, kernels, fallback, errors) run on the installed package with build/asan/lib
# first on the library path, so that Python loads the instrumented csrc, loader and vendors; the
# ASan runtime is preloaded into the uninstrumented interpreter, and leak detection is off there
# (CPython and libtorch keep memory until exit by design).  emu runs its kernels too (OpInfo
# samples, training steps); fake has none, so its run stops at the runtime and the fallback;
# opencl runs its kernels' suites (the host side of every kernel: arguments, layouts, places).
ASAN_BUILD := $(BUILD)/asan
# -O1, as AddressSanitizer's documentation advises, and line tables only (-g1): all a report's
# stack needs.  RelWithDebInfo's -O2 -g made the ASan build of csrc twice as slow to compile.
ASAN_OPT := -O1 -g1 -DNDEBUG
TSAN_BUILD := $(BUILD)/tsan
LIBASAN = $(realpath $(shell $(CC) -print-file-name=libasan.so))
LIBUBSAN = $(realpath $(shell $(CC) -print-file-name=libubsan.so))
# use_sigaltstack=0: PoCL compiles OpenCL C with LLVM in-process, and LLVM installs its own
# alternate signal stack on the threads that start it; ASan's, replaced, then fails to unmap at
# thread exit ("unable to unmap").  Without it ASan reports stack overflows less precisely.
ASAN_FLAGS := check_initialization_order=1:detect_stack_use_after_return=1:strict_string_checks=1:use_sigaltstack=0
UBSAN_ENV := UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
SANITIZE_PYTEST_FAKE := test_streams.py test_events.py test_memory.py test_guard.py \
                        test_device.py test_multi_device.py test_errors.py test_fallback.py \
                        test_rng.py test_device_checks.py test_overlap.py test_placement.py \
                        test_copy_semantics.py test_differential.py test_quantized.py \
                        test_storage_meta.py test_ipc.py
# The differential stress harness's programs under the sanitizers (2000 in test-full).
SANITIZE_STRESS_PROGRAMS := 300
SANITIZE_PYTEST_EMU := $(SANITIZE_PYTEST_FAKE) test_kernels.py test_training.py test_opinfo.py \
                       test_boxed_ops.py test_custom_ops.py
# emu's longest suites under the sanitizers, a job of their own.
SANITIZE_SLOW_EMU := test_opinfo.py test_custom_ops.py test_errors.py
# Python under ASan: the runtime preloaded, build/asan/lib searched before the package's lib/.
ASAN_PYTHON = env LD_PRELOAD="$(LIBASAN) $(LIBUBSAN)" LD_LIBRARY_PATH=$(abspath $(ASAN_BUILD))/lib \
  ASAN_OPTIONS=detect_leaks=0:$(ASAN_FLAGS) $(UBSAN_ENV) $(PYTHON)
# $(call asan_pytest,VENDOR,SUITES): first a check that Python loads the instrumented vendor.
asan_pytest = echo == pytest under ASan+UBSan against vendor $(1) && \
  TORCH_BACKEND_VENDOR=$(1) $(ASAN_PYTHON) test/sanitize/check_loaded.py \
    $(abspath $(ASAN_BUILD))/lib/ && \
  TB_STRESS_PROGRAMS=$(SANITIZE_STRESS_PROGRAMS) TORCH_BACKEND_EMU_GUARD=1 TORCH_BACKEND_VENDOR=$(1) \
    $(ASAN_PYTHON) -m pytest -q $(addprefix test/python/,$(2))

test-sanitize: $(STAMP)/build
	@mkdir -p $(ASAN_BUILD)
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  '-DCMAKE_C_FLAGS_RELWITHDEBINFO=$(ASAN_OPT)' '-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=$(ASAN_OPT)' \
	  '-DTORCH_BACKEND_SANITIZE=address;undefined' \
	  -DPython3_EXECUTABLE=$$($(PYTHON) -c 'import sys; print(sys.executable)') \
	  > $(ASAN_BUILD)/configure.log || { cat $(ASAN_BUILD)/configure.log; exit 1; }
	cmake --build $(ASAN_BUILD)
	TORCH_BACKEND_EMU_GUARD=1 ASAN_OPTIONS=detect_leaks=1:$(ASAN_FLAGS) $(UBSAN_ENV) \
	  ctest --test-dir $(ASAN_BUILD) --output-on-failure -j$(JOBS)
	@# the jobs, longest first, on two lanes (test/lanes.py): emu's suites in two
	$(PYTHON) test/lanes.py '$(call asan_pytest,emu,$(SANITIZE_SLOW_EMU))' \
	  '$(call asan_pytest,emu,$(filter-out $(SANITIZE_SLOW_EMU),$(SANITIZE_PYTEST_EMU)))' \
	  '$(call asan_pytest,fake,$(SANITIZE_PYTEST_FAKE))' \
	  $(if $(filter opencl,$(ALL_VENDORS)),'export POCL_DEVICES="pthread pthread" && \
	    $(call asan_pytest,opencl,test_kernels.py test_device_only_ops.py)')

# test-tsan: the C part built with ThreadSanitizer into build/tsan; the whole contract suite (its
# thread checks, and every stream and event check, which run on emu's stream workers) against emu,
# fake and npu (whose streams are the AscendCL stand-in's worker threads), test/sanitize's large
# copies from several threads, which reach emu's worker pool, and the stand-in's own test
# (ascendcl.runtime: its threads, streams and events).
# Then the differential stress harness (test/stress) on the installed runtime with the
# instrumented emu and npu (and the stand-in) loaded as the vendor, the ThreadSanitizer runtime
# preloaded into the uninstrumented interpreter: the vendors' streams, events and kernels racing
# the host's calls, under the runtime's real use.
LIBTSAN = $(realpath $(shell $(CC) -print-file-name=libtsan.so))
PYTHON_EXE = $(shell $(PYTHON) -c 'import sys; print(sys.executable)')
test-tsan: $(STAMP)/build
	@mkdir -p $(TSAN_BUILD)
	cmake -S . -B $(TSAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DTORCH_BACKEND_SANITIZE=thread -DTORCH_BACKEND_WITH_TORCH=OFF \
	  > $(TSAN_BUILD)/configure.log || { cat $(TSAN_BUILD)/configure.log; exit 1; }
	cmake --build $(TSAN_BUILD) --target tb_contract_tests tb_emu_thread_tests tb_vendor_emu \
	  tb_vendor_fake tb_vendor_npu ascendcl_runtime_test npu_runtime_test ascendcl_ops_test \
	  ascendcl_structured_test
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 ctest --test-dir $(TSAN_BUILD) \
	  --output-on-failure -j$(JOBS) -R '^(contract\.(emu|fake|fake_2dev|npu)\.|sanitize\.|ascendcl\.(runtime|ops|structured)$$|npu\.runtime$$)'
	@for vendor in emu npu; do \
	  echo "== differential stress under ThreadSanitizer, vendor $(TSAN_BUILD)/lib/libtb_vendor_$$vendor.so"; \
	  LD_PRELOAD=$(LIBTSAN) TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
	    TORCH_BACKEND_VENDOR=$(abspath $(TSAN_BUILD))/lib/libtb_vendor_$$vendor.so \
	    $(PYTHON_EXE) test/stress/differential.py --programs $(SANITIZE_STRESS_PROGRAMS) || exit 1; \
	done

# test-compat: one vendor binary, runtimes built against two torch releases (docs/decisions.md,
# "Two torch releases").  emu is built once, by the C-only build (build/c, no torch), and that
# very file is loaded into the runtime of the full build (build/py, torch 2.13.0 from
# requirements-dev.txt) and into one built against the release in requirements-compat.txt
# (torch 2.14.1, a CUDA wheel: no GPU or CUDA toolkit needed).  test/compat/compat.py runs
# tb-conformance and the demo on each, the Python suites on the second (build/py's run in
# test-full), and prints the table.
#
# The second release's environment -- requirements-dev.txt with requirements-compat.txt's pins
# in place of its torch and torchvision, about 6 GB -- is created once and cached outside the
# clone, keyed by the torch version, the Python version and both files' contents; it is never
# modified after creation.  Each run overlays a small venv of its own in the clone
# (build/compat-<torch>/venv: a .pth file adds the cached site-packages) and installs
# torch_backend there, built in build/compat-<torch>/build.  Entries unused for 14 days are
# pruned when a new one is created.
COMPAT_TORCH := $(shell sed -n 's/^torch==//p' requirements-compat.txt)
COMPAT_PY := $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
COMPAT_HASH := $(shell cat requirements-dev.txt requirements-compat.txt | sha256sum | cut -c1-12)
COMPAT_CACHE := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/torch_backend
COMPAT_ENV := $(COMPAT_CACHE)/torch-$(COMPAT_TORCH)-py$(COMPAT_PY)-$(COMPAT_HASH)
COMPAT_DIR := $(BUILD)/compat-$(COMPAT_TORCH)
COMPAT_PYTHON := $(COMPAT_DIR)/venv/bin/python

# The cached environment, created under a lock (several clones may share the cache).
$(COMPAT_ENV)/.complete: | $(STAMP)/apt
	@mkdir -p $(COMPAT_CACHE)
	flock $(COMPAT_ENV).lock bash -euo pipefail -c ' \
	  test -f $@ && exit 0; \
	  echo "make: creating the torch $(COMPAT_TORCH) environment in $(COMPAT_ENV)"; \
	  find $(COMPAT_CACHE) -mindepth 1 -maxdepth 1 -name "torch-*" -type d -mtime +14 \
	    -exec rm -rf {} + ; \
	  rm -rf $(COMPAT_ENV); \
	  $(PYTHON) -m venv $(COMPAT_ENV); \
	  { grep -v -E "^(torch|torchvision)==" requirements-dev.txt; cat requirements-compat.txt; } \
	    > $(COMPAT_ENV)/requirements.txt; \
	  $(COMPAT_ENV)/bin/python -m pip install -q -r $(COMPAT_ENV)/requirements.txt; \
	  touch $@'

# The overlay venv and the build against the second release; rebuilt when an input changes.
$(STAMP)/compat-$(COMPAT_TORCH): $(BUILD_INPUTS) $(COMPAT_ENV)/.complete
	@mkdir -p $(STAMP)
	touch $(COMPAT_ENV)
	rm -rf $(COMPAT_DIR)/venv
	$(PYTHON) -m venv --without-pip $(COMPAT_DIR)/venv
	site=$$($(COMPAT_ENV)/bin/python -c "import sysconfig; print(sysconfig.get_path('purelib'))"); \
	  own=$$($(COMPAT_PYTHON) -c "import sysconfig; print(sysconfig.get_path('purelib'))"); \
	  echo "import site; site.addsitedir('$$site')" > $$own/torch_backend_compat_env.pth
	$(COMPAT_PYTHON) -m pip install -q --no-build-isolation --no-deps -e . \
	  -Cbuild-dir=$(COMPAT_DIR)/build
	@touch $@

COMPAT = $(PYTHON) test/compat/compat.py
COMPAT_RUNTIME = --runtime $(COMPAT_PYTHON) $(COMPAT_DIR)/build --pytest $(COMPAT_PYTHON)
test-compat: $(STAMP)/build $(STAMP)/compat-$(COMPAT_TORCH)
	@mkdir -p $(BUILD)
	$(C_CONFIGURE)
	cmake --build $(BUILD)/c --target tb_vendor_emu $(if $(filter opencl,$(ALL_VENDORS)),tb_vendor_opencl)
	@# The jobs, longest first, on two lanes (test/lanes.py): emu on both runtimes with its
	@# longest suites under the other release, emu's other suites there, and the opencl vendor on
	@# PoCL: its kernels' suites, the zoo and the fault paths under the other release (test-full
	@# runs its whole set under the first).
	$(PYTHON) test/lanes.py '$(COMPAT) --vendor $(BUILD)/c/lib/libtb_vendor_emu.so \
	  --runtime $(PYTHON) $(BUILD)/py $(COMPAT_RUNTIME) --pytest-args $(SLOW_PYTEST)' \
	  '$(COMPAT) --vendor $(BUILD)/c/lib/libtb_vendor_emu.so $(COMPAT_RUNTIME) \
	  --pytest-args $(OTHER_PYTEST)' \
	  $(if $(filter opencl,$(ALL_VENDORS)),'POCL_DEVICES="pthread pthread" $(COMPAT) \
	  --vendor $(BUILD)/c/lib/libtb_vendor_opencl.so --runtime $(PYTHON) $(BUILD)/py \
	  $(COMPAT_RUNTIME) --pytest-args $(addprefix test/python/,test_kernels.py \
	    test_model_zoo.py test_faults.py test_fallback.py)')

lint: $(STAMP)/pip
	clang-format --dry-run -Werror $(C_SOURCES)
	$(PYTHON) -m ruff check .
	$(PYTHON) -m ruff format --check .

# Every stage in turn, stopping at the first that fails; the time of each is printed at the end
# (and kept in build/test-times.txt), whether the run passed or not.
TEST_STAGES := lint test-c test-full test-wheel test-sanitize test-tsan test-docs test-compat
test:
	@mkdir -p $(BUILD); : > $(BUILD)/test-times.txt; status=0; \
	for stage in $(TEST_STAGES); do \
	  start=$$(date +%s); \
	  $(MAKE) --no-print-directory $$stage || status=$$?; \
	  echo "$$stage $$(( $$(date +%s) - start ))" >> $(BUILD)/test-times.txt; \
	  [ $$status -eq 0 ] || { echo "make test: $$stage failed"; break; }; \
	done; \
	echo "== make test: stage times"; \
	awk '{ printf "  %-14s %5d s  (%dm%02ds)\n", $$1, $$2, $$2 / 60, $$2 % 60; total += $$2 } \
	  END { printf "  %-14s %5d s  (%dm%02ds)\n", "total", total, total / 60, total % 60 }' \
	  $(BUILD)/test-times.txt; \
	exit $$status

format: $(STAMP)/pip
	clang-format -i $(C_SOURCES)
	$(PYTHON) -m ruff format .

clean:
	rm -rf $(BUILD)
