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
#   make timm    the TIMM models PyTorch's dynamo benchmarks run: forward and backward beside the
#                CPU (float64 and float32), as a table
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
BUILD_INPUTS := $(shell find CMakeLists.txt pyproject.toml torch-releases.txt build_support cmake codegen \
                  include loader backends third_party conformance csrc torch_backend test -type f -not -path '*/__pycache__/*' \
                  -not -path 'test/python/*' -not -path 'test/compat/*' 2>/dev/null)
# Inputs of what the wheel carries (the runtimes, the wheel): the full build's but the tests.
PACKAGE_INPUTS = $(filter-out test/%,$(BUILD_INPUTS))
C_SOURCES = $(shell git ls-files -co --exclude-standard -- '*.c' '*.h' '*.cpp' 2>/dev/null)

.PHONY: help deps build envs wheel demo bench profile models timm docs test test-c test-full test-wheel \
        test-docs test-sanitize test-tsan test-compat lint format clean

help:
	@echo "make demo    run the main job (installs and builds what is missing)"
	@echo "make test    run every test"
	@echo "make test-compat  one vendor binary and the wheel under every supported torch release"
	@echo "make wheel   the release wheel (a runtime per supported torch release) into $(BUILD)/wheel"
	@echo "make bench   print the benchmark table, write $(BUILD)/bench.json and bench.png"
	@echo "make profile where a small operator's host time goes (perf samples by category)"
	@echo "make models  the model zoo on the device beside the CPU, as a table"
	@echo "make timm    the TIMM suite (dynamo benchmarks' list) beside the CPU, as a table"
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

# The torch releases torch_backend supports (torch-releases.txt, oldest first): the first is the
# primary -- this environment's, the full suites' and pip's isolated build's; a runtime is built
# against each of the others (build/runtime-<torch>) in a cached environment of its own, the
# wheel carries them all, and test-compat runs a compatibility set under each.  Lines that
# begin with a version are the list; the rest is comment.
RELEASES_FILE := torch-releases.txt
TORCH_RELEASES := $(shell awk '$$1 ~ /^[0-9]/ { print $$1 }' $(RELEASES_FILE))
PRIMARY_TORCH := $(firstword $(TORCH_RELEASES))
OTHER_TORCH := $(wordlist 2,99,$(TORCH_RELEASES))
# $(call torch_pins,VERSION): torch and, where the list names one, its torchvision.
torch_pins = torch==$(1) $(shell awk '$$1 == "$(1)" && $$2 ~ /^[0-9]/ { print "torchvision==" $$2 }' \
  $(RELEASES_FILE))
# $(call release_of,2.15.0) = 2.15: the runtime's directory is lib/torch-<release>.
release_of = $(word 1,$(subst ., ,$(1))).$(word 2,$(subst ., ,$(1)))
# A torch outside the window, for the wheel's unsupported-release check (test-compat), and the
# other release whose environment has the CUDA packages it was built for (2.12.1 and 2.14.1 both
# want CUDA 13.0's): its venv holds that torch alone and borrows the rest -- nvidia's libraries,
# torch's pure-Python dependencies -- instead of a 5 GB environment of its own.  When the window
# moves past 2.13, 2.13.0's CPU wheel, which needs no CUDA libraries, can take its place.
UNSUPPORTED_TORCH := 2.12.1
UNSUPPORTED_BASE := 2.14.1

$(STAMP)/pip: requirements-dev.txt $(RELEASES_FILE) $(STAMP)/apt
	$(PIP) install -q -r requirements-dev.txt $(call torch_pins,$(PRIMARY_TORCH))
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

# PoCL compiles every kernel a second time for each work-group size it is launched with (a
# work-group function specialised to that size, its work-item loops unrolled and vectorised),
# besides the generic function it builds with the program.  The suites launch ~900 programs at
# dozens of sizes: a cold run made 4475 LLVM compiles, 2295 of them specialisations, which were
# most of the opencl job's 1128 s (its warm time: 491 s).  The tests check results, which the
# generic functions compute alike, so the test stages run those alone; make bench keeps PoCL's
# default.  Other OpenCL drivers ignore the variable.
test-c test-full test-wheel test-sanitize test-tsan test-docs test-compat: \
  export POCL_WORK_GROUP_SPECIALIZATION = 0

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
OPENCL_BENCHES := latency,launch_floor,elementwise,mm,training,compile,zoo,allocator
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

# Whole model libraries (examples/timm_suite.py): every model of torch's
# benchmarks/dynamo/timm_models_list.txt, forward and backward on TORCH_BACKEND_VENDOR's device
# (emu by default) beside the CPU; make test runs a fast subset (test/python/test_timm.py).
# TIMM_FLAGS=--compile: the device's models under torch.compile (Inductor's kernels).
timm: $(STAMP)/build
	$(PYTHON) examples/timm_suite.py --json $(BUILD)/timm.json $(TIMM_FLAGS)

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
# optional parts gets), the fork rule (its count probes in a child), errors at the call
# (csrc's host checks before its kernels), its fused optimizer kernels on check_kernels'
# generated samples, and PyTorch's own test data (module_db's modules, OpInfo's error inputs,
# out= rules and math-bit views: expected_failures.py lists what fails, and why), sparse
# tensors, kernels from source (compile_kernel) and torch.compile's OpenCL C kernels
# (test_compile.py: the MLP, the encoder block, GPT-2 and resnet18), and timm's fast subset
# with nothing on the CPU fallback (test_timm.py), and csrc's composites on its kernels
# (test_composites.py).  The runtime's own error paths, vendor start
# and device properties run on emu, npu and fake.
OPENCL_PYTEST := $(addprefix test/python/,test_opinfo.py test_kernels.py test_device_only_ops.py \
  test_model_zoo.py test_programs.py \
  test_training.py test_streams.py \
  test_events.py test_memory.py test_copy_semantics.py test_multi_device.py \
  test_differential.py test_guard.py test_rng.py test_fallback.py test_placement.py \
  test_overlap.py test_device_checks.py test_faults.py \
  test_quantized.py test_attention.py test_autocast.py test_ipc.py test_storage_meta.py \
  test_errors.py::test_fork_before_use_is_fine test_host_checks.py \
  test_check_kernels.py::test_fused_optimizers_are_checked_on_generated_samples \
  test_modules.py test_error_inputs.py test_math_bits.py test_sparse.py test_compile_kernel.py \
  test_compile.py test_compile_opinfo.py test_foreach.py test_graphs.py test_timm.py \
  test_composites.py)

# Each vendor's suites run as two pytest jobs, each its own process: the longest suites
# (SLOW_PYTEST) in one, the others in the other.  test/lanes.py runs the jobs of a stage on two
# lanes, longest first, so that both cores stay busy to the end; its summary shows each job's
# time and each lane's idle time.
SLOW_PYTEST := $(addprefix test/python/,test_opinfo.py test_distributed.py test_errors.py \
  test_custom_ops.py test_check_kernels.py)
OTHER_PYTEST = $(filter-out $(SLOW_PYTEST),$(sort $(wildcard test/python/test_*.py)))
# The suites that run whole programs and module collections (pytorch/examples' programs,
# module_db, math-bit views, the OpInfo sweeps, timm's models): they check the kernels and the
# fallback beneath them, which emu's pass and opencl's run do through their own kernels, and
# they cost about a third of a vendor's pass.  fake (no kernels: every operator is the CPU
# fallback, which emu guarded takes too) and npu (its kernels checked one by one: OpInfo,
# check_kernels, the kernels' and the model zoo's suites) run the rest.
WHOLE_PROGRAM_PYTEST := $(addprefix test/python/,test_programs.py test_modules.py \
  test_math_bits.py test_sweeps.py test_timm.py)
# $(call vendor_pytest,VENDOR,WHICH,FILES): one job of a vendor's Python suites.
vendor_pytest = echo == pytest, $(2), against vendor $(1) && TORCH_BACKEND_EMU_GUARD=1 \
  TORCH_BACKEND_VENDOR=$(1) $(PYTHON) -m pytest -q $(3)
slow_pytest = $(call vendor_pytest,$(1),the longest suites,$(SLOW_PYTEST))
other_pytest = $(call vendor_pytest,$(1),the other suites,$(OTHER_PYTEST))
lean_pytest = $(call vendor_pytest,$(1),the other suites but the whole programs,\
  $(filter-out $(WHOLE_PROGRAM_PYTEST),$(OTHER_PYTEST)))
OPENCL_PYTEST_RUN = echo == pytest, the suites that exercise a vendor, against vendor opencl && \
  POCL_DEVICES="pthread pthread" TORCH_BACKEND_VENDOR=opencl $(PYTHON) -m pytest -q $(OPENCL_PYTEST)
COMPILE_PYTEST_RUN = echo == pytest, torch.compile, against vendor emu with host access && \
  TORCH_BACKEND_EMU_GUARD=0 TORCH_BACKEND_VENDOR=emu $(PYTHON) -m pytest -q $(COMPILE_PYTEST)
OTHER_VENDORS = $(wordlist 2,99,$(PYTEST_VENDORS))

# CTest here runs the tests only a build with torch has (label "torch": csrc's googletest suite,
# the ABI 1.1 vendor and the custom-operator tutorial loaded into PyTorch): the rest are the
# C-only build's, which make test-c runs from the same sources.
test-full: $(STAMP)/build
	TORCH_BACKEND_EMU_GUARD=1 ctest --test-dir $(BUILD)/py --output-on-failure -j$(JOBS) -L torch
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
	@# whose OpenCL kernel caches are empty (PoCL compiles about a thousand programs with LLVM:
	@# 990 s in a cold run of make test, 491 s with the caches).
	$(PYTHON) test/lanes.py \
	  $(if $(filter opencl,$(ALL_VENDORS)),'$(OPENCL_PYTEST_RUN)') \
	  '$(call slow_pytest,$(firstword $(PYTEST_VENDORS)))' \
	  '$(call other_pytest,$(firstword $(PYTEST_VENDORS)))' \
	  $(foreach v,$(OTHER_VENDORS),'$(call lean_pytest,$(v))') \
	  $(foreach v,$(OTHER_VENDORS),'$(call slow_pytest,$(v))') \
	  '$(COMPILE_PYTEST_RUN)'

# From zero to a wheel, as a vendor does it (test/vendor_wheel/run.sh): a fresh venv holding
# only the primary torch, numpy and torch_backend's wheel (make wheel); there, every shell block
# of the vendor pages (quickstart, vendor_wheel, writing_kernels, porting, vendor_kit) as
# written (test/docs/shell_blocks.py): `tb-vendor new acme`, the writing-kernels page's
# kernels (examples/vendor_kit/kernels.c, at most 400 lines), a build against the installed
# package, tb-conformance and check_kernels, acme's manylinux wheel, installed; then, with no
# TORCH_BACKEND_VENDOR, `import torch` brings up acme through its entry point and the MLP trains
# like the CPU; tb-conformance by acme's name; the demo and tb-conformance on emu there, and
# tb-conformance from the same wheel under a second CPython.  test-compat installs the same
# wheel under the other releases.
test-wheel: $(STAMP)/build $(STAMP)/wheel $(STAMP)/wheel-isolated
	test/vendor_wheel/run.sh $(PYTHON_EXE) $(abspath $(BUILD))/vendor-wheel \
	  $(abspath $(WHEEL_DIR)) torch==$(PRIMARY_TORCH)

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
# C at -O1, as AddressSanitizer's documentation advises, and line tables only (-g1): all a
# report's stack needs.  C++ (csrc and the googletest suites) at -O0: csrc's compile is ATen's
# templates instantiated, which -O1 made take 1.8 times as long (RegisterKernels_3.cpp: 54 s
# against 30; the whole ASan build of csrc, 900 CPU seconds at -O1, was a quarter of a cold
# test-sanitize), and the suites' time is Python's, libtorch's and the vendors' kernels'.
# RelWithDebInfo's -O2 -g made it twice as slow again.
ASAN_OPT := -O1 -g1 -DNDEBUG
ASAN_CXX_OPT := -O0 -g1 -DNDEBUG
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
	  '-DCMAKE_C_FLAGS_RELWITHDEBINFO=$(ASAN_OPT)' '-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=$(ASAN_CXX_OPT)' \
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
	    $(call asan_pytest,opencl,test_kernels.py test_device_only_ops.py test_compile_kernel.py)')

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

# The other releases' environments (and UNSUPPORTED_TORCH's), each created once and cached
# outside the clone -- keyed by the torch version, the Python version and what it holds -- and
# never modified afterwards; several clones may share the cache, so each is created under a
# lock.  torch's CUDA wheels, about 6 GB each with their nvidia packages, need no GPU and no
# CUDA toolkit.  This machine's pip caps torch (a constraints file): the cap is lifted for these
# environments alone (PIP_CONSTRAINT naming an empty file).  An entry unused for 14 days is
# pruned when another is created.  pip installs without byte-compiling (--no-compile: torch
# 2.15.0's environment in 85 s instead of 151 s); Python compiles the modules a run imports,
# a small part of them, on first import, and caches them there (atomically: clones may share).
ENV_CACHE := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/torch_backend
PY_VERSION := $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
NO_CAP := $(abspath $(BUILD))/no-pip-constraints.txt
$(NO_CAP):
	@mkdir -p $(@D) && : > $@
empty :=
space := $(empty) $(empty)

# $(call torch_env,VARIABLE,TORCH,PIP ARGUMENTS): the environment's rule; VARIABLE names its
# directory.
define torch_env
$(1) := $(ENV_CACHE)/torch-$(2)-py$(PY_VERSION)-$$(shell { echo '$(3)'; cat requirements-dev.txt; } \
  | sha256sum | cut -c1-12)
$$($(1))/.complete: | $(STAMP)/apt $(NO_CAP)
	@mkdir -p $(ENV_CACHE)
	flock $$($(1)).lock bash -euo pipefail -c ' \
	  test -f $$@ && exit 0; \
	  echo "make: creating the torch $(2) environment in $$($(1))"; \
	  find $(ENV_CACHE) -mindepth 1 -maxdepth 1 -name "torch-*" -type d -mtime +14 \
	    -exec rm -rf {} + ; \
	  rm -rf $$($(1)); \
	  $(PYTHON) -m venv $$($(1)); \
	  PIP_CONSTRAINT=$(NO_CAP) $$($(1))/bin/python -m pip install -q --no-compile $(3); \
	  touch $$@'
endef
$(foreach r,$(OTHER_TORCH),$(eval $(call torch_env,ENV_$(r),$(r),-r requirements-dev.txt $(call torch_pins,$(r)))))
# The unsupported torch's wheel, downloaded once into the cache.
UNSUPPORTED_WHEELS := $(ENV_CACHE)/wheels/torch-$(UNSUPPORTED_TORCH)
$(UNSUPPORTED_WHEELS)/.complete: | $(STAMP)/apt $(NO_CAP)
	@mkdir -p $(UNSUPPORTED_WHEELS)
	flock $(UNSUPPORTED_WHEELS).lock bash -euo pipefail -c ' \
	  test -f $@ && exit 0; \
	  PIP_CONSTRAINT=$(NO_CAP) $(PIP) download -q --no-deps -d $(UNSUPPORTED_WHEELS) \
	    torch==$(UNSUPPORTED_TORCH); \
	  touch $@'
envs: $(foreach r,$(OTHER_TORCH),$(ENV_$(r))/.complete) $(UNSUPPORTED_WHEELS)/.complete

# The runtime (csrc) built against another release, in that release's environment:
# build/runtime-<torch>, installed alone (`cmake --install --component runtime`) into its
# install/lib/torch-<release>/, where the wheel's build takes it (TORCH_BACKEND_EXTRA_RUNTIMES).
# Only csrc and the loader it links are compiled; the rest of the package is the wheel's own.
define torch_runtime
$(STAMP)/runtime-$(1): $(PACKAGE_INPUTS) $$(ENV_$(1))/.complete
	@mkdir -p $(STAMP)
	touch $$(ENV_$(1))
	env -u TORCH_BACKEND_EXTRA_RUNTIMES cmake -S . -B $(BUILD)/runtime-$(1) -G Ninja \
	  -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_LIBDIR=lib -DTORCH_BACKEND_BUILD_TESTS=OFF \
	  -DPython3_EXECUTABLE=$$(ENV_$(1))/bin/python > $(BUILD)/runtime-$(1).log 2>&1 \
	  || { cat $(BUILD)/runtime-$(1).log; exit 1; }
	cmake --build $(BUILD)/runtime-$(1) --target torch_backend
	rm -rf $(BUILD)/runtime-$(1)/install
	cmake --install $(BUILD)/runtime-$(1) --component runtime \
	  --prefix $(abspath $(BUILD))/runtime-$(1)/install > /dev/null
	@touch $$@
endef
$(foreach r,$(OTHER_TORCH),$(eval $(call torch_runtime,$(r))))
EXTRA_RUNTIMES := $(foreach r,$(OTHER_TORCH),\
  $(abspath $(BUILD))/runtime-$(r)/install/lib/torch-$(call release_of,$(r)))

# The wheel, as released: the full build's tree (build/py, the primary release) packaged without
# build isolation (no second compile of what make build compiled), carrying the other releases'
# runtimes, repaired by auditwheel into a manylinux wheel that bundles what it needs outside
# torch (OpenBLAS, the OpenCL ICD loader; torch's own libraries stay with torch's wheel) and
# checked with `auditwheel show` (test/vendor_wheel/check_wheel.py).  Into build/wheel/.
WHEEL_DIR := $(BUILD)/wheel
$(STAMP)/wheel: $(STAMP)/build $(addprefix $(STAMP)/runtime-,$(OTHER_TORCH))
	rm -rf $(WHEEL_DIR)
	TORCH_BACKEND_EXTRA_RUNTIMES=$(subst $(space),:,$(strip $(EXTRA_RUNTIMES))) \
	  $(PIP) wheel -q --no-build-isolation --no-deps -w $(WHEEL_DIR)/raw . \
	  -Cbuild-dir=$(BUILD)/py -Ccmake.define.TORCH_BACKEND_BUILD_TESTS=ON
	$(PYTHON) -m auditwheel repair --wheel-dir $(WHEEL_DIR) --exclude 'libtorch*.so' \
	  --exclude 'libc10.so' $(WHEEL_DIR)/raw/torch_backend-*.whl 2>&1 | tail -1
	$(PYTHON) test/vendor_wheel/check_wheel.py $(WHEEL_DIR)/torch_backend-*.whl $(TORCH_RELEASES)
	@touch $@
wheel: $(STAMP)/wheel

# pip's isolated build (`pip wheel .`, what `pip install .` runs): a temporary environment
# holding only what the build requires -- build-system.requires and the primary torch that
# build_support/torch_releases.py adds -- in its own tree (build/wheel-isolated).  It is taken as
# far as the codegen (target tb_codegen, against the environment's torch) and the headers, and
# checked to have configured against that environment's torch, not this machine's: what only
# isolation breaks (a missing build requirement, the wrong torch found).  Compiling csrc there
# again would repeat make build's compile of the same sources against the same torch release,
# without ccache (the environment's path is new each time).
ISOLATED := $(BUILD)/wheel-isolated
$(STAMP)/wheel-isolated: $(PACKAGE_INPUTS) $(STAMP)/pip
	rm -rf $(ISOLATED)/dist
	$(PIP) wheel -q --no-deps -w $(ISOLATED)/dist . -Cbuild-dir=$(abspath $(ISOLATED))/build \
	  -Cbuild.targets=tb_codegen -Cinstall.components=headers
	$(PYTHON) test/vendor_wheel/check_isolated.py $(ISOLATED)/build $(ISOLATED)/dist/torch_backend-*.whl \
	  $(PRIMARY_TORCH)
	@touch $@

# test-compat: one vendor binary under every supported release, and the wheel under each, as a
# user installs it (docs/decisions.md, "Three torch releases").  emu is built once, by the
# C-only build (build/c, no torch), and that very file is loaded into the runtime of the full
# build (build/py, the primary release) and into the wheel's runtimes for the other releases,
# each installed with pip's dependency resolution into a new venv over that release's cached
# environment (build/compat-<torch>/venv: a .pth file adds the cached site-packages), where pip
# must leave torch as it is (test/compat/user_venv.sh).  test/compat/compat.py runs
# tb-conformance and the demo under each, the compatibility set (COMPAT_PYTEST) under the
# others (test-full runs every suite under the primary), and the wheel under a torch outside
# the window (UNSUPPORTED_TORCH, installed with --no-deps): `import torch` works, with one
# warning naming the releases and no device.  It prints one table.
define compat_venv
$(STAMP)/compat-$(1): $(STAMP)/wheel $$($(2))/.complete $(4) | $(NO_CAP)
	touch $$($(2))
	test/compat/user_venv.sh $$($(2)) $(BUILD)/compat-$(1)/venv $(NO_CAP) $(3) \
	  $(WHEEL_DIR)/torch_backend-*.whl
	@touch $$@
endef
$(foreach r,$(OTHER_TORCH),$(eval $(call compat_venv,$(r),ENV_$(r))))
$(eval $(call compat_venv,$(UNSUPPORTED_TORCH),ENV_$(UNSUPPORTED_BASE),--torch \
  $(UNSUPPORTED_WHEELS)/torch-$(UNSUPPORTED_TORCH)-*.whl --no-deps,$(UNSUPPORTED_WHEELS)/.complete))

# The compatibility set: the suites a release difference would break first -- the kernels'
# schemas and edge cases, training, torch.compile, graphs, IPC, the profiler, streams, events,
# memory, serialization, autoload and the runtime's loading -- about a fifth of test-full's
# time per release.
COMPAT_PYTEST := $(addprefix test/python/,test_schemas.py test_kernels.py test_training.py \
  test_compile.py test_graphs.py test_ipc.py test_profiler.py test_streams.py test_events.py \
  test_memory.py test_serialization.py test_autoload.py test_runtime_load.py test_accelerator.py \
  test_device_only_ops.py test_rng.py)
# Under each other release, Inductor's OpenCL C backend too (torch_backend/inductor_opencl.py
# follows Inductor's internals): torch.compile's suites against the opencl vendor on PoCL.
COMPAT_OPENCL_PYTEST := $(addprefix test/python/,test_compile.py test_compile_opinfo.py)
test-compat: $(STAMP)/build $(addprefix $(STAMP)/compat-,$(OTHER_TORCH) $(UNSUPPORTED_TORCH))
	@mkdir -p $(BUILD)
	$(C_CONFIGURE)
	cmake --build $(BUILD)/c --target tb_vendor_emu \
	  $(if $(filter opencl,$(ALL_VENDORS)),tb_vendor_opencl)
	$(PYTHON) test/compat/compat.py --vendor $(BUILD)/c/lib/libtb_vendor_emu.so \
	  --runtime $(PYTHON) $(BUILD)/py \
	  $(foreach r,$(OTHER_TORCH),--runtime $(BUILD)/compat-$(r)/venv/bin/python \
	    $(BUILD)/runtime-$(r) --pytest $(BUILD)/compat-$(r)/venv/bin/python) \
	  --unsupported $(BUILD)/compat-$(UNSUPPORTED_TORCH)/venv/bin/python \
	  --pytest-args $(COMPAT_PYTEST) \
	  $(if $(filter opencl,$(ALL_VENDORS)),--opencl-vendor $(BUILD)/c/lib/libtb_vendor_opencl.so \
	    --opencl-pytest-args $(COMPAT_OPENCL_PYTEST))

lint: $(STAMP)/pip
	clang-format --dry-run -Werror $(C_SOURCES)
	$(PYTHON) -m ruff check .
	$(PYTHON) -m ruff format --check .

# Every stage in turn, stopping at the first that fails; the time of each is printed at the end
# (and kept in build/test-times.txt), whether the run passed or not.  The other releases'
# environments (make envs: mostly downloads and unpacking) are created in the background from
# the start, at the lowest CPU priority so that the stages that compile and test meanwhile keep
# the cores, and waited for at the start of the first stage that needs them (test-wheel, whose
# time includes the wait); their own time is printed too.
TEST_STAGES := lint test-c test-full test-wheel test-sanitize test-tsan test-docs test-compat
test:
	@mkdir -p $(BUILD); : > $(BUILD)/test-times.txt; status=0; \
	$(MAKE) --no-print-directory $(STAMP)/apt > /dev/null; \
	{ start=$$(date +%s); \
	  if nice -n 19 $(MAKE) --no-print-directory envs > $(BUILD)/envs.log 2>&1; then echo 0; \
	    else echo 1; fi > $(BUILD)/envs.status; \
	  echo "(envs) $$(( $$(date +%s) - start ))" >> $(BUILD)/test-times.txt; } & envs=$$!; \
	for stage in $(TEST_STAGES); do \
	  start=$$(date +%s); \
	  if [ $$stage = test-wheel ]; then \
	    wait $$envs; cat $(BUILD)/envs.log; \
	    [ "$$(cat $(BUILD)/envs.status)" = 0 ] || { status=1; echo "make test: make envs failed"; break; }; \
	  fi; \
	  $(MAKE) --no-print-directory $$stage || status=$$?; \
	  echo "$$stage $$(( $$(date +%s) - start ))" >> $(BUILD)/test-times.txt; \
	  [ $$status -eq 0 ] || { echo "make test: $$stage failed"; break; }; \
	done; \
	wait; \
	echo "== make test: stage times"; \
	awk '{ printf "  %-14s %5d s  (%dm%02ds)\n", $$1, $$2, $$2 / 60, $$2 % 60 } \
	  $$1 !~ /^\(/ { total += $$2 } \
	  END { printf "  %-14s %5d s  (%dm%02ds)  (envs: in the background)\n", "total", total, \
	    total / 60, total % 60 }' $(BUILD)/test-times.txt; \
	exit $$status

format: $(STAMP)/pip
	clang-format -i $(C_SOURCES)
	$(PYTHON) -m ruff format .

clean:
	rm -rf $(BUILD)
