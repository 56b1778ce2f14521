# Makefile - builds dpprof, runs the tests and reproduces the experiments.
#   make          build ./dpprof (with the CUDA object and -DDPPROF_CUDA when nvcc is found; nvcc and main.c at once)
#   make NVCC=    the same program without CUDA: no nvcc, no CUDA object or libraries
#   make all      install missing Debian packages, build, run every experiment this machine can, render figures
#   make test     every test that needs no GPU (GPU tests print SKIP without one); ends with "N passed, N failed, N skipped"
#   make check    the quick subset a contributor runs before a commit (about 4 minutes on 2 cores)
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:
MAKEFLAGS += --no-builtin-rules

# the usual variables are the user's: CC, CXX, CFLAGS, CPPFLAGS, LDFLAGS, LDLIBS (and NVCC) from the command
# line or the environment; dpprof's own flags are added to them. WERROR=-Werror makes warnings errors (make
# test sets it; a user's build does not). make's own cc, no CC at all (make -R, or -R in MAKEFLAGS) and an
# empty CC= mean gcc (and g++): the origin alone misses the last two, and an empty CC compiles nothing
ifneq ($(filter default undefined,$(origin CC))$(if $(strip $(CC)),,empty),)
override CC := gcc
endif
ifneq ($(filter default undefined,$(origin CXX))$(if $(strip $(CXX)),,empty),)
override CXX := g++
endif
CFLAGS ?= -O2
WERROR ?=
PREFIX ?= /usr/local
# NVCC from the command line or the environment as it is (NVCC= empty: no CUDA); otherwise found here
ifeq ($(origin NVCC),undefined)
NVCC := $(shell command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
endif
CUDA_HOME := $(patsubst %/bin/nvcc,%,$(NVCC))
GIT_COMMIT := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
# the sources the program is compiled from, hashed: every result's meta names them beside the commit, and whether
# that commit holds them (clean), does not (differs: edits not committed, or a copy whose .git is older than its
# files), or there is no git (unknown). what a run measured is then known to be those files, however they travelled
SOURCE_FILES := Makefile dpprof.h dpprof_tools.h dpprof_cli.h dpprof_experiments.h dpprof_kernels.cu main.c
SOURCE_HASH := $(shell cat $(SOURCE_FILES) | sha256sum | cut -d' ' -f1)
# the same hash of a commit's files (those of the list it has, in the list's order)
source_hash_of = for f in $(SOURCE_FILES); do git show $(1):$$f 2>/dev/null || true; done | sha256sum | cut -d' ' -f1
SOURCE_STATE := $(shell if [ '$(GIT_COMMIT)' = unknown ]; then echo unknown; \
  elif [ "$$($(call source_hash_of,HEAD))" = '$(SOURCE_HASH)' ]; then echo clean; \
  else echo differs; fi)
PROVENANCE := -DDPPROF_GIT_COMMIT='"$(GIT_COMMIT)"' -DDPPROF_SOURCE_HASH='"$(SOURCE_HASH)"' -DDPPROF_SOURCE_STATE='"$(SOURCE_STATE)"'

DPPROF_CFLAGS := -std=c11 -Wall -Wextra -pedantic $(WERROR)
# a machine that cannot install libstb-dev (a GPU box without a package mirror) can be handed the
# Debian header at build time: cp -r /usr/include/stb .carry/include/ (ignored by git, never committed)
DPPROF_CFLAGS += $(if $(wildcard .carry/include/stb/stb_image_write.h),-isystem .carry/include)
ALL_CFLAGS = $(DPPROF_CFLAGS) $(CPPFLAGS) $(CFLAGS)
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -g
# hopper first (sm_90a: its arch-specific code, wgmma among it, runs on compute capability 9.0 only), ampere
# supported; ptx for newer gpus (jit-compiled by the driver, without the sm_90a instructions). --threads 0: the
# three targets compiled in parallel where the machine has the cores
comma := ,
NVCCFLAGS := -std=c++17 -O3 --threads 0 -Xcompiler -Wall,-Wextra$(if $(WERROR),$(comma)-Werror) \
             -gencode arch=compute_90a,code=sm_90a -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=compute_90

# NCCL, the cuda backend's collectives between ranks: its header beside CUDA's, in the system's, or in the nvidia-nccl
# Python package (a GPU machine with PyTorch); without it the build has no NCCL (dpprof version says which)
NCCL_H := $(if $(NVCC),$(firstword $(wildcard $(CUDA_HOME)/include/nccl.h /usr/include/nccl.h /usr/local/include/nccl.h)))
NCCL_PY := $(if $(NVCC),$(if $(NCCL_H),,$(shell python3 -c 'import nvidia.nccl as m, os; d = list(m.__path__)[0]; print(d if os.path.exists(d + "/include/nccl.h") else "")' 2>/dev/null)))
NCCL_DEF := $(if $(NCCL_H)$(NCCL_PY),-DDPPROF_NCCL $(if $(NCCL_PY),-I$(NCCL_PY)/include))
NCCL_LIBS := $(if $(NCCL_H),-lnccl,$(if $(NCCL_PY),-L$(NCCL_PY)/lib -Wl,-rpath,$(NCCL_PY)/lib -l:libnccl.so.2))
NVCCFLAGS += $(NCCL_DEF)
# cuDNN's fused attention (dpprof_cudnn_attention_*): cuDNN 9 (cudnn.h and libcudnn beside CUDA's, in the system's, or
# in the nvidia-cudnn Python package) and its C++ frontend's headers (header-only; nvidia-cudnn-frontend on PyPI: in
# CUDNN_FRONTEND, build/cudnn-frontend/include where tests/gpu_session.bash unpacks the wheel, or the Python package's
# include/). without both the build has no cuDNN attention (dpprof version says which)
CUDNN_H := $(if $(NVCC),$(firstword $(wildcard $(CUDA_HOME)/include/cudnn.h /usr/include/cudnn.h /usr/include/x86_64-linux-gnu/cudnn.h)))
CUDNN_PY := $(if $(NVCC),$(if $(CUDNN_H),,$(shell python3 -c 'import nvidia.cudnn as m, os; d = list(m.__path__)[0]; print(d if os.path.exists(d + "/include/cudnn.h") else "")' 2>/dev/null)))
CUDNN_FRONTEND ?= $(if $(NVCC),$(firstword $(patsubst %/cudnn_frontend.h,%,$(wildcard build/cudnn-frontend/include/cudnn_frontend.h)) \
                  $(shell python3 -c 'import sysconfig, os; d = sysconfig.get_paths()["platlib"] + "/include"; print(d if os.path.exists(d + "/cudnn_frontend.h") else "")' 2>/dev/null)))
CUDNN_ON := $(if $(CUDNN_FRONTEND),$(if $(CUDNN_H)$(CUDNN_PY),1))
CUDNN_LIBDIR := $(if $(CUDNN_PY),$(CUDNN_PY)/lib,$(firstword $(patsubst %/libcudnn.so,%,$(wildcard $(CUDA_HOME)/lib/libcudnn.so $(CUDA_HOME)/lib64/libcudnn.so))))
CUDNN_DEF := $(if $(CUDNN_ON),-DDPPROF_CUDNN -isystem $(CUDNN_FRONTEND) $(if $(CUDNN_PY),-isystem $(CUDNN_PY)/include))
CUDNN_LIBS := $(if $(CUDNN_ON),$(if $(CUDNN_LIBDIR),-L$(CUDNN_LIBDIR) -Wl$(comma)-rpath$(comma)$(CUDNN_LIBDIR)) $(if $(CUDNN_PY),-l:libcudnn.so.9,-lcudnn) -lnvrtc)
NVCCFLAGS += $(CUDNN_DEF)

ifneq ($(NVCC),)
CUDA_OBJ := build/dpprof_kernels.o
CUDA_DEF := -DDPPROF_CUDA
DPPROF_LIBS := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudart -lcublas -lcupti $(NCCL_LIBS) $(CUDNN_LIBS) -ldl -lstdc++ -lm
else
CUDA_OBJ :=
CUDA_DEF :=
DPPROF_LIBS := -lm
endif

# MPI (Open MPI from Debian: libopenmpi-dev): where mpicc is, the program runs `mpirun -np N dpprof run --backend
# cpu --ranks N` as N processes; without it, ranks > 1 is the dry backend's model only (dpprof version says which).
# mpicc alone is not enough (a machine can have the wrapper without the headers): a call of MPI_Init is compiled
# and linked with its flags, once a parse and only where mpicc is (hundredths of a second); if that fails the
# build goes on without MPI
hash := \#
MPI_CFLAGS := $(if $(shell command -v mpicc),$(patsubst -I%,-isystem %,$(shell mpicc --showme:compile 2>/dev/null)))
MPI_LIBS := $(if $(MPI_CFLAGS),$(shell mpicc --showme:link 2>/dev/null))
MPI_OK := $(if $(MPI_LIBS),$(shell d=$$(mktemp -d) && printf '$(hash)include <mpi.h>\nint main(void) { return MPI_Init(0, 0); }\n' > $$d/mpi.c \
            && $(CC) $(CPPFLAGS) $(CFLAGS) $(MPI_CFLAGS) $$d/mpi.c -o $$d/mpi $(LDFLAGS) $(MPI_LIBS) >/dev/null 2>&1 && echo yes; rm -rf $$d))
MPI_CFLAGS := $(if $(MPI_OK),$(MPI_CFLAGS))
MPI_LIBS := $(if $(MPI_OK),$(MPI_LIBS))
MPI_DEF := $(if $(MPI_LIBS),-DDPPROF_MPI $(MPI_CFLAGS))
MPI_TEST := $(if $(MPI_LIBS),build/tests/mpi_ranks build/tests/mpi_ranks_cuemu)

# the paper's experiments: experiments/NAME.conf each (README's table); `make NAME` runs one. bench and
# clipgrad measure a GPU whatever BACKEND says: make bench, make clipgrad (the same as make bench-clipgrad)
GPU_EXPERIMENTS := bench clipgrad
# peers-memory runs PyTorch and Opacus (make peers-memory); its figures come from data/peers-memory/
PEER_EXPERIMENTS := peers-memory
EXPERIMENTS_DIR ?= experiments
EXPERIMENTS := $(filter-out $(GPU_EXPERIMENTS) $(PEER_EXPERIMENTS),$(sort $(basename $(notdir $(wildcard $(EXPERIMENTS_DIR)/*.conf)))))
# the backend the experiments run on: `make NAME BACKEND=cuda` (or cpu, auto) runs every configuration there
# (dpprof sweep --backend: it overrides the file's --backend dry), with the binary DPPROF_BIN; its results,
# figures and tables go to MEASURED_DIR/TAG/ (TAG: cpu, or cuda-DEVICE as `dpprof devices` names GPU 0):
# results/TAG/NAME/, results/TAG/figures/, results/TAG/generated/, never over the dry ones that check-repro
# hashes. the default, dry, is what make all and check-repro run
BACKEND ?= dry
MEASURED_DIR ?= results
# the program the experiments and GPU targets run; a configuration on a GPU may take BENCH_TIMEOUT seconds
DPPROF_BIN ?= ./dpprof
BENCH_TIMEOUT ?= 600
SWEEP_JOBS ?= 2
# the command line: main.c and the parts it includes (the library, its tools, options and files, experiments)
CLI_SRC := main.c dpprof.h dpprof_tools.h dpprof_cli.h dpprof_experiments.h
.PHONY: default all test check deps deps-paper deps-test clean figures
# plain make builds in parallel: nvcc (a minute on two cores; --threads 0 spreads its three targets over them)
# and main.c (seconds) at once, then the link. a sub-make with -j2 (the two jobs the program has) rather than
# -j in MAKEFLAGS, which make 4.3 cannot see at parse time and which would reach every target: a -j of the
# user's own (-j1 too) or a parallel make above is kept, and the sub-make then shares its jobserver
default:
	@$(MAKE) --no-print-directory $(if $(filter -j% --jobserver%,$(MAKEFLAGS)),,-j2) dpprof

# what the program is built with (CUDA, MPI, NCCL, cuDNN): main.o, the CUDA object and the link are made again when it
# changes (make NVCC= after make, MPI installed since, a build retried without NCCL: its object must not keep NCCL's
# calls). other flags are not in it, as before: make test's WERROR=-Werror must not make the program the tests run again
DPPROF_CONFIG := $(CUDA_DEF) $(MPI_DEF) $(CUDA_OBJ) $(DPPROF_LIBS) $(MPI_LIBS) $(NCCL_DEF) $(CUDNN_DEF)
ifneq ($(strip $(shell cat build/dpprof.config 2>/dev/null)),$(strip $(DPPROF_CONFIG)))
build/dpprof.config: config-force
endif
.PHONY: config-force
config-force:
build/dpprof.config:
	@mkdir -p build
	echo '$(DPPROF_CONFIG)' > $@.tmp
	mv $@.tmp $@
# the commit, the sources' hash and their state the program names: main.c is compiled again when they change (a
# commit of the files compiled turns differs into clean; an edit of the Makefile changes the hash)
ifneq ($(strip $(shell cat build/dpprof.provenance 2>/dev/null)),$(strip $(GIT_COMMIT) $(SOURCE_HASH) $(SOURCE_STATE)))
build/dpprof.provenance: config-force
endif
build/dpprof.provenance:
	@mkdir -p build
	echo '$(GIT_COMMIT) $(SOURCE_HASH) $(SOURCE_STATE)' > $@.tmp
	mv $@.tmp $@

# the hash a build of commit REV records (default: the files here), for a result that records none: a data
# folder's provenance file states it afterwards ("RECORDED COMPILED SHA256"; dpprof report names it)
.PHONY: source-hash
source-hash:
	@if [ -z '$(REV)' ]; then echo '$(SOURCE_HASH)'; \
	elif ! git rev-parse --verify --quiet '$(REV)^{commit}' >/dev/null; then echo "source-hash: REV=$(REV) is not a commit of this repository" >&2; exit 2; \
	else $(call source_hash_of,$(REV)); fi

# main.c to an object of its own, which needs nothing of the CUDA object's, so that the two compile at once. the
# .cu is a prerequisite (not its object): the program's DPPROF_GIT_COMMIT is that of its newest source, as when
# every link compiled main.c
dpprof: build/main.o $(CUDA_OBJ) build/dpprof.config
	$(CC) $(ALL_CFLAGS) build/main.o $(CUDA_OBJ) -o $@.tmp $(LDFLAGS) $(DPPROF_LIBS) $(MPI_LIBS) $(LDLIBS)
	mv $@.tmp $@

build/main.o: $(CLI_SRC) $(if $(CUDA_OBJ),dpprof_kernels.cu) build/dpprof.config build/dpprof.provenance
	@mkdir -p build
	$(CC) $(ALL_CFLAGS) $(CUDA_DEF) $(MPI_DEF) $(PROVENANCE) -c main.c -o $@.tmp.o
	mv $@.tmp.o $@

build/dpprof_kernels.o: dpprof_kernels.cu dpprof.h build/dpprof.config
	@mkdir -p build
	$(NVCC) $(NVCCFLAGS) $(CPPFLAGS) -I. -c $< -o $@.tmp.o
	mv $@.tmp.o $@

# ---- packages: what a fresh Debian machine lacks --------------------------------------------------
DEB_PACKAGES := libstb-dev fonts-dejavu-core
deps:
	@missing=""; for p in $(DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq $$missing; \
	  else sudo apt-get update -qq && sudo apt-get install -y -qq $$missing; fi; \
	fi

# ---- experiments and figures ------------------------------------------------------------------------
# without a GPU make figures has drawn the bench figures from data/bench/: make bench would draw them again
all: deps
	$(MAKE) dpprof
	$(MAKE) figures
	@if $(DPPROF_BIN) devices >/dev/null 2>&1; then $(MAKE) bench; \
	else echo "make all: no GPU: bench and clipgrad measured nothing; the bench figures are from data/bench/"; fi

.PHONY: $(EXPERIMENTS) check-repro repro-update
figures: $(EXPERIMENTS) bench-figures peers-memory-figures paper/generated/privacy-table.tex paper/generated/fit-table.tex

# what fits an 80 GB GPU: dpprof fit for Llama-3.2-3B and Llama-3.1-8B, ranked by the step time the committed H100
# runs predict: a table and macros for the paper, ~2 s
paper/generated/fit-table.tex: experiments/fit.sh dpprof $(wildcard data/bench/*/*.json data/bench/*/device.txt)
	bash experiments/fit.sh ./dpprof paper/generated

# the accountants side by side (RDP against the tight PLD one): a table and macros for the paper, ~30 s
paper/generated/privacy-table.tex: experiments/privacy.sh dpprof
	bash experiments/privacy.sh ./dpprof paper/generated

# the benchmark's figures and table from the measurements committed to data/bench/ (none: nothing): each
# configuration's newest result on the device of the newest folder (a folder that ran part of the sweep
# replaces those configurations only; the folders' names sort by date)
BENCH_DATA := $(patsubst %/device.txt,%,$(lastword $(sort $(wildcard data/bench/*/device.txt))))
BENCH_DEVICE := $(shell echo '$(notdir $(BENCH_DATA))' | cut -d- -f5-)
bench_space := $(subst ,, )
bench_sep := $(comma)$(bench_space)
BENCH_DIRS := $(patsubst %/device.txt,%,$(sort $(wildcard data/bench/*-$(BENCH_DEVICE)/device.txt)))
# the other devices measured: their figures (the trade-off among them) in figures/bench-DEVICE/
BENCH_OTHER := $(filter-out $(BENCH_DEVICE),$(sort $(foreach d,$(wildcard data/bench/*/device.txt),$(shell echo '$(notdir $(patsubst %/device.txt,%,$(d)))' | cut -d- -f5-))))
.PHONY: bench-figures
bench-figures: dpprof
	@if [ -z "$(BENCH_DATA)" ]; then echo "bench: no GPU measurements in data/bench/: its figure and table are left out"; exit 0; fi; \
	rm -rf results/bench-data; mkdir -p results/bench-data figures paper/generated; \
	for d in $(BENCH_DIRS); do cp $$d/*.json results/bench-data/; [ ! -f $$d/provenance ] || cat $$d/provenance >> results/bench-data/provenance; done; \
	./dpprof report experiments/bench.conf --results results/bench-data --figures figures --tables paper/generated; \
	for dev in $(BENCH_OTHER); do o=results/bench-data-$$dev; rm -rf $$o; mkdir -p $$o; \
	  for d in data/bench/*-$$dev; do [ -f $$d/device.txt ] || continue; cp $$d/*.json $$o/; [ ! -f $$d/provenance ] || cat $$d/provenance >> $$o/provenance; done; \
	  ./dpprof report experiments/bench.conf --results $$o --figures figures/bench-$$dev --tables $$o/generated; done
	$(MAKE) --no-print-directory bench-summaries

# each data/bench/ folder's summary.txt made again from that folder's result JSON alone (dpprof report, as make bench
# made it: its figures and tables go to a scratch tree, so the summary names them as make bench's did), never by hand
BENCH_SUMMARY_DIRS := $(patsubst %/summary.txt,%,$(wildcard data/bench/*/summary.txt))
.PHONY: bench-summaries
bench-summaries: dpprof
	@root=$$PWD; for d in $(BENCH_SUMMARY_DIRS); do ls $$d/bench-*.json >/dev/null 2>&1 || continue; \
	  rm -rf results/bench-summary; mkdir -p results/bench-summary/figures results/bench-summary/paper/generated; \
	  (cd results/bench-summary && $$root/dpprof report $$root/experiments/bench.conf --results $$root/$$d --figures figures --tables paper/generated \
	    >/dev/null 2>log.txt) || { cat results/bench-summary/log.txt; exit 1; }; echo "bench-summaries: $$d/summary.txt"; done

# $(call experiment,NAME,RESULTS,FIGURES,TABLES,SWEEP OPTIONS): sweep (resumable, one process per
# configuration), then figures, tables, macros and summary. results made by another binary or another
# version of the conf are stale: they start over
define experiment
	mkdir -p $(2) $(3) $(4); \
	stamp="$$(sha256sum $(DPPROF_BIN) $(EXPERIMENTS_DIR)/$(1).conf | cut -c1-64 | tr '\n' ' ')"; \
	if [ -f $(2)/.stamp ] && [ "$$(cat $(2)/.stamp)" != "$$stamp" ]; then \
	  echo "$(2): made by another dpprof or conf: starting over"; rm -rf $(2); mkdir -p $(2); fi; \
	echo "$$stamp" > $(2)/.stamp; \
	echo "$(DPPROF_BIN) sweep $(EXPERIMENTS_DIR)/$(1).conf --out-dir $(2) --jobs $(SWEEP_JOBS) $(5)"; \
	$(DPPROF_BIN) sweep $(EXPERIMENTS_DIR)/$(1).conf --out-dir $(2) --jobs $(SWEEP_JOBS) $(5); \
	echo "$(DPPROF_BIN) report $(EXPERIMENTS_DIR)/$(1).conf --results $(2) --figures $(3) --tables $(4)"; \
	$(DPPROF_BIN) report $(EXPERIMENTS_DIR)/$(1).conf --results $(2) --figures $(3) --tables $(4)
endef

ifeq ($(BACKEND),dry)
$(EXPERIMENTS): %: results/%/report.done
results/%/report.done: $(EXPERIMENTS_DIR)/%.conf $(DPPROF_BIN)
	@$(call experiment,$*,results/$*,figures,paper/generated,)
	touch $@
# $(call report_outputs,NAME): what the report of experiments/NAME.conf writes, from its figure and table lines;
# a stamp whose outputs are not all there is out of date, so that make NAME draws again what was deleted (the
# sweep resumes: only the report runs again)
report_outputs = results/$(1)/summary.txt paper/generated/$(1)-macros.tex $(shell sed -n \
  -e 's|^figure  *\([^ =]*\) *=.*|figures/$(1)-\1.png|p' -e 's|^table *=.*|paper/generated/$(1)-table.tex|p' \
  -e 's|^table  *\([^ =]*\) *=.*|paper/generated/$(1)-\1-table.tex|p' $(EXPERIMENTS_DIR)/$(1).conf)
.PHONY: report-redraw
report-redraw:
$(foreach e,$(EXPERIMENTS),$(if $(filter-out $(wildcard $(call report_outputs,$(e))),$(call report_outputs,$(e))),$(eval results/$(e)/report.done: report-redraw)))
else
# measured: one configuration at a time on a GPU (a shared GPU distorts the times), BENCH_TIMEOUT seconds each
.PHONY: $(EXPERIMENTS)
$(EXPERIMENTS): %: $(EXPERIMENTS_DIR)/%.conf $(DPPROF_BIN)
	@tag=$(BACKEND); \
	if [ $(BACKEND) = cuda ]; then \
	  if ! $(DPPROF_BIN) devices >/dev/null; then echo "make $* BACKEND=cuda: $$($(DPPROF_BIN) devices): nothing measured"; exit 1; fi; \
	  tag=cuda-$$($(DPPROF_BIN) devices | head -1 | sed 's/^0: //; s/,.*//; s/[^A-Za-z0-9.-]/_/g'); fi; \
	$(call experiment,$*,$(MEASURED_DIR)/$$tag/$*,$(MEASURED_DIR)/$$tag/figures,$(MEASURED_DIR)/$$tag/generated,--backend $(BACKEND) $(if $(filter cuda,$(BACKEND)),--jobs 1 --timeout $(BENCH_TIMEOUT))); \
	echo "make $* BACKEND=$(BACKEND): results, figures and tables in $(MEASURED_DIR)/$$tag/"
endif

# the generated figures, tables and macros hash the same as the committed list
REPRO_LIST := data/repro.sha256
check-repro: figures
	@if [ ! -f $(REPRO_LIST) ]; then echo "no $(REPRO_LIST): make repro-update writes it"; exit 1; fi
	@if [ -n "$${DPPROF_FONT+set}" ] || [ ! -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ]; then \
	  echo "check-repro: the listed figures are drawn in DejaVu Sans (Debian's fonts-dejavu-core, DPPROF_FONT unset); this machine draws them otherwise"; exit 1; fi
	sha256sum --check --strict $(REPRO_LIST)
	@n=$$(ls figures/*.png paper/generated/*-table.tex paper/generated/*-macros.tex | grep -v '/bench-\|/peers-memory-' | wc -l); m=$$(wc -l < $(REPRO_LIST)); \
	if [ "$$n" != "$$m" ]; then echo "check-repro: $$n generated files, $$m listed in $(REPRO_LIST)"; exit 1; fi
	@echo "check-repro: every generated figure, table and macro file matches $(REPRO_LIST)"

repro-update: figures
	@mkdir -p data
	sha256sum $$(ls figures/*.png paper/generated/*-table.tex paper/generated/*-macros.tex | grep -v '/bench-\|/peers-memory-') > $(REPRO_LIST).tmp
	mv $(REPRO_LIST).tmp $(REPRO_LIST)

# ---- measured on a GPU: make bench and make gpu-check ------------------------------
# both ask `dpprof devices` first: without a GPU they say so and exit 0 (bench draws its figures from the
# measurements committed to data/bench/: make bench-figures). bench runs experiments/bench.conf
# one configuration at a time (a shared GPU would distort the times), renders figures/bench-*.png and
# paper/generated/bench-table.tex (measured, so outside check-repro) and copies every result JSON, with
# the device, driver and date, to data/bench/DATE-TIME-DEVICE/ to be committed.
.PHONY: bench bench-attn bench-clipgrad clipgrad bench-peers gpu-check
# where a GPU run's results go: DATE-TIME-DEVICE (UTC, to the minute, so that runs of one day, of different
# builds, keep apart and sort in time order; RUN_STAMP=... on the command line puts several targets' results
# in one folder), the device as `dpprof devices` names GPU 0 (shell text)
RUN_STAMP ?= $(shell date -u +%Y-%m-%d-%H%M)
RUN_STAMP := $(RUN_STAMP)
# device.txt beside the results: dpprof's view (cuda versions, peaks) and the driver's own version from nvidia-smi
DEVICE_TXT = { $(DPPROF_BIN) devices; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,memory.total --format=csv 2>/dev/null || true; }
RUN_TAG = $(RUN_STAMP)-$$($(DPPROF_BIN) devices | head -1 | sed 's/^0: //; s/,.*//; s/[^A-Za-z0-9.-]/_/g')
BENCH_CONF ?= experiments/bench.conf
# a session with little GPU time can run part of it (BENCH_ONLY=longctx) and come back: the sweep resumes
# (make clean, or rm -rf results/bench, starts over); one configuration may take BENCH_TIMEOUT seconds
BENCH_ONLY ?=
# each configuration run BENCH_REPEATS times, interleaved (dpprof sweep --repeats): the figures and tables give the
# median step and the range of the runs
BENCH_REPEATS ?= 3
bench: dpprof
	@if ! $(DPPROF_BIN) devices >/dev/null; then echo "make bench: $$($(DPPROF_BIN) devices): nothing measured: its figures from the measurements committed to data/bench/"; \
	  $(MAKE) --no-print-directory bench-figures; exit 0; fi; \
	$(DPPROF_BIN) devices; \
	mkdir -p results/bench figures paper/generated; \
	$(DPPROF_BIN) sweep $(BENCH_CONF) --out-dir results/bench --jobs 1 --timeout $(BENCH_TIMEOUT) --repeats $(BENCH_REPEATS) $(if $(BENCH_ONLY),--only $(BENCH_ONLY)); \
	$(DPPROF_BIN) report $(BENCH_CONF) --results results/bench --figures figures --tables paper/generated; \
	d=data/bench/$(RUN_TAG); \
	mkdir -p $$d; cp results/bench/*.json results/bench/summary.csv results/bench/summary.txt paper/generated/bench-*table.tex $$d/; \
	$(DEVICE_TXT) > $$d/device.txt; echo "make bench: measured results in $$d (commit them)"; \
	$(if $(BENCH_ONLY),true,$(MAKE) --no-print-directory bench-attn && $(MAKE) --no-print-directory bench-clipgrad)

# PyTorch and Opacus beside dpprof (experiments/peers.py): a Hugging Face LlamaForCausalLM (SDPA attention) at the
# bench's trainer and long-context shapes (B 1 and 2) in bf16 (autocast, fp32 masters), the same batch, steps, sigma and C:
# PyTorch without privacy, Opacus ghost clipping, Opacus per-sample gradients, one process each; into
# data/bench/DATE-TIME-DEVICE/peers/ with table.md, the side-by-side with the dpprof results of that folder.
# needs torch, transformers and opacus in PEER_PYTHON; PEERS_ONLY=trainer runs a slice, and a rerun resumes
PEER_PYTHON ?= python3
PEERS_ONLY ?=
PEER_ARGS ?=
PEER_BASE = --steps 4 --warmup 2 --sigma 1.0 --dataset-size 100000 --dtype bf16
PEER_SHAPES = trainer:--preset:trainer-1b:--seq:1024:--batch:8 longctx:--preset:longctx:--seq:16384:--batch:1 longctx2:--preset:longctx:--seq:16384:--batch:2
PEER_RUNS = pytorch-vanilla opacus-ghost opacus-persample
.PHONY: bench-peers
bench-peers: dpprof
	@if ! $(DPPROF_BIN) devices >/dev/null; then echo "make bench-peers: $$($(DPPROF_BIN) devices): nothing measured"; exit 0; fi; \
	mkdir -p results/bench-peers; fail=0; \
	for sh in $(PEER_SHAPES); do n=$${sh%%:*}; args=$$(echo "$${sh#*:}" | tr ':' ' '); \
	  for r in $(PEER_RUNS); do id=peers-bf16-$$n-$$r; \
	    case $$id in *"$(PEERS_ONLY)"*) ;; *) continue ;; esac; \
	    if [ -f results/bench-peers/$$id.json ]; then echo "$$id: measured before"; continue; fi; \
	    timeout $(BENCH_TIMEOUT) $(PEER_PYTHON) experiments/peers.py run $(PEER_ARGS) --framework $${r%%-*} --algo $${r#*-} --dpprof $(DPPROF_BIN) \
	      --experiment peers --out results/bench-peers/$$id.json -- $(PEER_BASE) $$args 2>results/bench-peers/$$id.log || fail=1; \
	  done; done; \
	d=data/bench/$(RUN_TAG); mkdir -p $$d/peers; cp results/bench-peers/*.json results/bench-peers/*.log $$d/peers/ 2>/dev/null; \
	$(DEVICE_TXT) > $$d/peers/device.txt; $(PEER_PYTHON) experiments/peers.py table $$d | tee $$d/peers/table.md; \
	echo "make bench-peers: measured results in $$d/peers (commit them)"; exit $$fail

# PyTorch and Opacus beside dpprof without a GPU (experiments/peers-memory.conf; needs torch, transformers, peft and
# opacus in PEER_PYTHON; about an hour on 2 cores): each peer's step on fake tensors under PyTorch's memory tracker,
# reconciled with dpprof's dry plan term by term, and the loops users write at the same shapes (study-shapes.json:
# their own peaks, for dpprof --framework), into data/peers-memory/ (commit it) with reconciliation.md; then
# its figures and tables. PEERS_ONLY=trainer runs a slice, and a rerun resumes (rm -rf results/peers-memory starts over)
.PHONY: peers-memory peers-memory-figures
peers-memory: dpprof
	@$(PEER_PYTHON) -c 'import torch, transformers, peft, opacus' 2>/dev/null || { \
	  echo "make peers-memory: $(PEER_PYTHON) cannot import torch, transformers, peft and opacus (set PEER_PYTHON)"; exit 1; }; \
	rc=0; $(PEER_PYTHON) experiments/peers.py memory-sweep experiments/peers-memory.conf --out-dir results/peers-memory \
	  --dpprof $(DPPROF_BIN) $(if $(PEERS_ONLY),--only $(PEERS_ONLY)) || rc=$$?; \
	$(PEER_PYTHON) experiments/peers.py draws --conf experiments/peers-memory.conf --dpprof $(DPPROF_BIN) --out results/peers-memory/study-shapes.json || rc=$$?; \
	mkdir -p data/peers-memory; cp results/peers-memory/peers-memory-*.json results/peers-memory/study-shapes.json data/peers-memory/; \
	$(MAKE) --no-print-directory peers-memory-figures; echo "make peers-memory: results in data/peers-memory (commit them)"; exit $$rc
# its figures, tables and reconciliation.md from the results committed to data/peers-memory/ (python3, stdlib only)
peers-memory-figures: dpprof
	@if [ ! -d data/peers-memory ]; then echo "peers-memory: no results in data/peers-memory/: its figures and tables are left out"; exit 0; fi; \
	rm -rf results/peers-memory-data; mkdir -p results/peers-memory-data figures paper/generated; cp data/peers-memory/*.json results/peers-memory-data/; \
	./dpprof report experiments/peers-memory.conf --results results/peers-memory-data --figures figures --tables paper/generated && \
	if command -v python3 >/dev/null; then python3 experiments/peers.py memory-table data/peers-memory --conf experiments/peers-memory.conf --tables paper/generated; \
	else echo "peers-memory: no python3: its reconciliation table is left out"; fi; \
	if [ -f data/peers-memory/fit-check.json ]; then ./dpprof plot fit-check data/peers-memory/fit-check.json --out figures/peers-memory-fit.png; fi

# dpprof fit --framework pytorch's (and opacus's) physical batch against PyTorch's own tracker, and fit's answer for
# dpprof's engine, at eight configurations on an 80 GB and a 24 GiB card (experiments/peers.py fit-check; needs torch, transformers and
# peft in PEER_PYTHON; about an hour on 2 cores, the tracker on fake tensors): data/peers-memory/fit-check.json (commit
# it) and figures/peers-memory-fit.png
.PHONY: peers-fit-check
peers-fit-check: dpprof
	@rm -f results/fit-check.json; mkdir -p results; rc=0; \
	for dev in "--device H100:80 GB" "--gpu-memory 24G:24 GiB"; do d=$${dev%%:*}; n=$${dev#*:}; \
	  $(PEER_PYTHON) experiments/peers.py fit-check --out results/fit-check.json --dpprof $(DPPROF_BIN) --label "PyTorch 1B fp32, T=1024, $$n" -- --preset llama-3.2-1b --seq 1024 --batch 32 $$d || rc=1; \
	  $(PEER_PYTHON) experiments/peers.py fit-check --out results/fit-check.json --dpprof $(DPPROF_BIN) --label "PyTorch 1B bf16 LoRA, T=2048, $$n" -- --preset llama-3.2-1b --seq 2048 --batch 32 --dtype bf16 --lora-rank 16 --lora-targets q,v $$d || rc=1; \
	  $(PEER_PYTHON) experiments/peers.py fit-check --out results/fit-check.json --dpprof $(DPPROF_BIN) --label "PyTorch 3B bf16 LoRA, T=1024, $$n" -- --preset llama-3.2-3b --seq 1024 --batch 16 --dtype bf16 --lora-rank 16 --lora-targets q,k,v,o,gate,up,down $$d || rc=1; \
	  $(PEER_PYTHON) experiments/peers.py fit-check --out results/fit-check.json --dpprof $(DPPROF_BIN) --label "PyTorch 8B bf16 LoRA, T=1024, $$n" -- --preset llama-3.1-8b --seq 1024 --batch 16 --dtype bf16 --lora-rank 16 --lora-targets q,v $$d || rc=1; \
	  $(PEER_PYTHON) experiments/peers.py fit-check --out results/fit-check.json --dpprof $(DPPROF_BIN) --label "Opacus 1B fp32, T=512, $$n" -- --framework opacus --preset llama-3.2-1b --untied --seq 512 --batch 16 --sigma 1 $$d || rc=1; \
	  $(PEER_PYTHON) experiments/peers.py fit-check --out results/fit-check.json --dpprof $(DPPROF_BIN) --label "Opacus ghost 1B fp32, T=512, $$n" -- --framework opacus --algo ghost --preset llama-3.2-1b --untied --seq 512 --batch 16 --sigma 1 $$d || rc=1; \
	  $(PEER_PYTHON) experiments/peers.py fit-check --out results/fit-check.json --dpprof $(DPPROF_BIN) --label "Opacus 1B bf16 LoRA, T=1024, $$n" -- --framework opacus --preset llama-3.2-1b --untied --seq 1024 --batch 64 --dtype bf16 --lora-rank 16 --lora-targets q,v --sigma 1 $$d || rc=1; \
	  $(PEER_PYTHON) experiments/peers.py fit-check --out results/fit-check.json --dpprof $(DPPROF_BIN) --label "PyTorch 1B bf16 LoRA, checkpointed, T=4096, $$n" -- --preset llama-3.2-1b --seq 4096 --batch 32 --dtype bf16 --lora-rank 16 --lora-targets q,v --checkpoint layers $$d || rc=1; \
	done; mkdir -p data/peers-memory figures; cp results/fit-check.json data/peers-memory/fit-check.json; \
	./dpprof plot fit-check data/peers-memory/fit-check.json --out figures/peers-memory-fit.png; exit $$rc

# the bf16 clipped weight gradient on cuBLAS per sample and the noise on its own pass (--cublas-clipgrad
# --separate-noise) against the fused kernel and the noise in the optimizer's pass (--fused-clipgrad --fused-noise), every
# bf16 book-keeping algorithm and vanilla at the bench shapes of B=8 (experiments/clipgrad.conf), into
# data/bench/DATE-TIME-DEVICE/clipgrad/ with its figures and table; part of make bench (without BENCH_ONLY),
# a few minutes on an H100; CLIPGRAD_ONLY=trainer runs a slice, and a rerun resumes
CLIPGRAD_ONLY ?=
clipgrad: bench-clipgrad
bench-clipgrad: dpprof
	@if ! $(DPPROF_BIN) devices >/dev/null; then echo "make bench-clipgrad: $$($(DPPROF_BIN) devices): nothing measured (measured before: data/bench/*/clipgrad/)"; exit 0; fi; \
	mkdir -p results/bench-clipgrad; \
	$(DPPROF_BIN) sweep experiments/clipgrad.conf --out-dir results/bench-clipgrad --jobs 1 --timeout $(BENCH_TIMEOUT) $(if $(CLIPGRAD_ONLY),--only $(CLIPGRAD_ONLY)); \
	$(DPPROF_BIN) report experiments/clipgrad.conf --results results/bench-clipgrad --figures results/bench-clipgrad --tables results/bench-clipgrad; \
	d=data/bench/$(RUN_TAG)/clipgrad; mkdir -p $$d; \
	cp results/bench-clipgrad/*.json results/bench-clipgrad/summary.* results/bench-clipgrad/*.png results/bench-clipgrad/*.tex $$d/ 2>/dev/null; \
	$(DEVICE_TXT) > $$d/device.txt; echo "make bench-clipgrad: measured results in $$d (commit them)"

# the attention kernels alone (dpprof attnbench: fp32 and bf16 simt, bf16 tensor cores in blocks of 64 and
# 128 rows, with 16 and 32 query rows a warp; forward and backward at the bench shapes, or
# ATTNBENCH_ARGS="--shape B,T,NH,NKV,HS ..."), into
# data/bench/DATE-TIME-DEVICE/attn/, apart from the run JSON the report reads. part of make bench (without
# BENCH_ONLY); about a minute on an H100
ATTNBENCH_ARGS ?=
bench-attn: dpprof
	@if ! $(DPPROF_BIN) devices >/dev/null; then echo "make bench-attn: $$($(DPPROF_BIN) devices): nothing measured"; exit 0; fi; \
	mkdir -p results/bench-attn; \
	rc=0; $(DPPROF_BIN) attnbench $(ATTNBENCH_ARGS) --out results/bench-attn/attnbench.json | tee results/bench-attn/attnbench.txt || rc=$$?; \
	d=data/bench/$(RUN_TAG)/attn; mkdir -p $$d; cp results/bench-attn/attnbench.* $$d/; \
	echo "make bench-attn: measured results in $$d (commit them)"; exit $$rc

# on a GPU: the gpu test (every op against the cpu reference, whole steps, memory, counters), the same
# under compute-sanitizer (memcheck: out-of-bounds and uninitialised reads; racecheck: shared-memory
# races, on the op groups; API errors are not reported by the sanitizer, because the out-of-memory test
# makes cudaMallocAsync fail on purpose and dpprof checks every API call's status itself), and the long-context configuration with the algorithms that
# must fit 80 GB, in fp32 and bf16. each part is a target of its own (a session whose commands may
# run 10 minutes runs them one by one; each is bounded by GPU_CHECK_TIMEOUT seconds); logs and
# results in results/gpu-check/, copied to data/gpu-check/DATE-TIME-DEVICE/ after each part
GPU_CHECK_PARTS := test memcheck racecheck longctx
GPU_CHECK_TIMEOUT ?= 540
# GPU_CHECK_IN_BENCH=1 (make gpu-run sets it): the logs go to data/bench/DATE-TIME-DEVICE/gpu-check/ instead,
# beside the measurements of the same run
GPU_CHECK_IN_BENCH ?=
.PHONY: $(addprefix gpu-check-,$(GPU_CHECK_PARTS))
gpu-check: dpprof build/tests/test_gpu
	@fail=0; for p in $(GPU_CHECK_PARTS); do $(MAKE) --no-print-directory gpu-check-$$p || fail=1; done; \
	[ $$fail = 0 ] || { echo "make gpu-check: FAILED (see data/gpu-check/)"; exit 1; }

# one command, the measurements worth most first, in one time budget (BUDGET seconds, build included; 540 leaves
# room under a 10-minute limit on a command): the gpu test, the attention kernels alone (dpprof's and cuDNN's, seconds),
# the bf16 bench at the trainer and long-context shapes (every algorithm), the same on cuDNN's attention, PyTorch and
# Opacus at those shapes. everything lands in one
# data/bench/DATE-TIME-DEVICE/: the stamp is kept in GPU_RUN_STAMP_FILE, so a rerun (after a cut, or on a fresh
# machine with results/ carried) resumes there and skips the steps done (rm the file to start a new run). each step
# done is recorded in the folder's gpu-run.txt: without the stamp file (a fresh clone) the newest committed record
# of this plan on this GPU with steps left is resumed (GPU_RUN_NEW=1: a new run)
# what the GPU machine lacks, made here into the two ignored folders the device copies with the tree (name both in
# its carry): .carry/include/stb (libstb-dev's headers: that machine has no Debian packages) and .whl/ (opacus for
# the peers, nvidia-cudnn-frontend for cuDNN's attention: wheels for its Python 3.12 on x86-64, from PyPI)
GPU_WHEELS ?= opacus==1.6.0 nvidia-cudnn-frontend
GPU_WHEEL_PLATFORMS := manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64
.PHONY: gpu-carry
gpu-carry:
	@[ -f /usr/include/stb/stb_image_write.h ] || { echo "make gpu-carry: /usr/include/stb/stb_image_write.h is missing (apt-get install libstb-dev)" >&2; exit 2; }
	mkdir -p .carry/include && rm -rf .carry/include/stb && cp -r /usr/include/stb .carry/include/
	python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
	  $(addprefix --platform ,$(GPU_WHEEL_PLATFORMS)) -d .whl $(GPU_WHEELS)
	@echo "make gpu-carry: $$(ls .whl | tr '\n' ' ')and .carry/include/stb ($$(du -sh .carry .whl | cut -f1 | tr '\n' ' ')): carry .carry and .whl"

GPU_RUN_STEPS := test attn bench:bf16-trainer bench:cudnn-trainer clipgrad:trainer bench:bf16-lora bench:cudnn-lora bench:bf16-longctx bench:cudnn-longctx peers study:checkpoint study:dram
GPU_RUN_STAMP_FILE ?= results/gpu-run.stamp
BUDGET ?= 540
.PHONY: gpu-run
gpu-run:
	@mkdir -p $(dir $(GPU_RUN_STAMP_FILE)); \
	if [ -s $(GPU_RUN_STAMP_FILE) ]; then echo "make gpu-run: run $$(cat $(GPU_RUN_STAMP_FILE)) (its stamp in $(GPU_RUN_STAMP_FILE))"; \
	else echo "make gpu-run: the committed run of this plan on this GPU with steps left (data/bench/*/gpu-run.txt), else a new run"; fi; \
	echo "make gpu-run: BUDGET=$(BUDGET) s: $(GPU_RUN_STEPS)"; \
	GPU_CHECK_IN_BENCH=1 RESUME=1 BUDGET=$(BUDGET) RUN_STAMP_FILE=$(GPU_RUN_STAMP_FILE) bash tests/gpu_session.bash $(GPU_RUN_STEPS)

# the cuda backend's ranks on a machine with several GPUs (NCCL; a build with MPI and mpirun): ZeRO 0-3 against one
# rank and the dry model, results/gpu-ranks/summary.txt (tests/gpu_ranks.bash; RANKS=N, default every GPU)
.PHONY: gpu-ranks
gpu-ranks: dpprof
	bash tests/gpu_ranks.bash

# $(call gpu_part,NAME,COMMAND): runs COMMAND (which sets fail=1 on a failure) on a GPU, then copies the logs
define gpu_part
	@if ! ./dpprof devices >/dev/null; then echo "make gpu-check-$(1): $$(./dpprof devices): nothing checked"; exit 0; fi; \
	./dpprof devices | head -1; mkdir -p results/gpu-check; fail=0; \
	$(2); \
	d=$(if $(GPU_CHECK_IN_BENCH),data/bench/$(RUN_TAG)/gpu-check,data/gpu-check/$(RUN_TAG)); mkdir -p $$d; \
	cp results/gpu-check/* $$d/; $(DEVICE_TXT) > $$d/device.txt; echo "make gpu-check-$(1): logs and results in $$d"; \
	[ $$fail = 0 ] || { echo "make gpu-check-$(1): FAILED (see $$d)"; exit 1; }
endef
gpu-check-test: dpprof build/tests/test_gpu
	$(call gpu_part,test,timeout $(GPU_CHECK_TIMEOUT) build/tests/test_gpu > results/gpu-check/test_gpu.log 2>&1 || fail=1; \
	grep -E '^(FAIL|SKIP)|^#' results/gpu-check/test_gpu.log; grep -q '^FAIL' results/gpu-check/test_gpu.log && fail=1)
gpu-check-memcheck: dpprof build/tests/test_gpu
	$(call gpu_part,memcheck,timeout $(GPU_CHECK_TIMEOUT) compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 9 build/tests/test_gpu model attn dp steps \
	  > results/gpu-check/memcheck.log 2>&1 || fail=1; tail -n 3 results/gpu-check/memcheck.log)
gpu-check-racecheck: dpprof build/tests/test_gpu
	$(call gpu_part,racecheck,timeout $(GPU_CHECK_TIMEOUT) compute-sanitizer --tool racecheck --error-exitcode 9 build/tests/test_gpu model attn dp \
	  > results/gpu-check/racecheck.log 2>&1 || fail=1; tail -n 3 results/gpu-check/racecheck.log)
gpu-check-longctx: dpprof
	$(call gpu_part,longctx,for t in fp32 bf16; do for a in vanilla ghost_bk flash flash_bk; do \
	  timeout $(GPU_CHECK_TIMEOUT) ./dpprof run --preset longctx --seq 16384 --batch 1 --dtype $$t --algo $$a $$([ $$a = vanilla ] || echo --sigma 1 --dataset-size 100000) \
	    --backend cuda --steps 2 --warmup 1 --timeline none --quiet --experiment longctx-gpu --out results/gpu-check/longctx-$$t-$$a.json || fail=1; \
	  echo "longctx T=16384 $$t $$a: $$(grep -o '"status": "[a-z]*"' results/gpu-check/longctx-$$t-$$a.json) $$(grep -o '"peak_memory_mb": [0-9.]*' results/gpu-check/longctx-$$t-$$a.json) $$(grep -o '"step_time_ms_median": [0-9.]*' results/gpu-check/longctx-$$t-$$a.json)"; \
	done; done)

# ---- the paper ----------------------------------------------------------------------------------------
# meta.tex: what the paper says about this build; only stable facts, so regenerating changes nothing. made on
# every make paper (the commit moves without any file changing), rewritten only when its text differs
.PHONY: meta-force
meta-force:
paper/generated/meta.tex: dpprof Makefile meta-force
	@mkdir -p $(@D)
	{ printf '\\dpdef{meta}{x}{version}{%s}\n' "$$(./dpprof --version | cut -d' ' -f2)"; \
	  printf '\\dpdef{meta}{x}{commit}{%s}\n' "$$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"; \
	  printf '\\dpdef{meta}{x}{date}{%s}\n' "$$(git log -1 --format=%cs 2>/dev/null || echo unknown)"; \
	  printf '\\dpdef{meta}{x}{gpu}{none}\n'; \
	  printf '\\dpdef{meta}{x}{bench}{%s}\n' "$(if $(BENCH_DIRS),$(subst _,\_,$(subst $(bench_space),$(bench_sep),$(notdir $(BENCH_DIRS)))),none)"; } > $@.tmp
	if cmp -s $@.tmp $@; then rm $@.tmp; else mv $@.tmp $@; fi

DEB_PACKAGES_PAPER := texlive-latex-base texlive-latex-recommended latexmk poppler-utils
# the tests also compile with clang, fuzz with libFuzzer and run valgrind
DEB_PACKAGES_TEST := libstb-dev fonts-dejavu-core clang clang-format libclang-rt-14-dev valgrind pkgconf man-db libopenmpi-dev openmpi-bin time
deps-test:
	@$(MAKE) --no-print-directory deps DEB_PACKAGES="$(DEB_PACKAGES_TEST)"

deps-paper:
	@$(MAKE) --no-print-directory deps DEB_PACKAGES="$(DEB_PACKAGES_PAPER)"

# ---- paper ------------------------------------------------------------------------------------------
#   make paper         paper/paper.pdf from paper/paper.tex, paper/generated/*.tex, figures/*.png, CITATION.bib
#   make paper-check   render every page to paper/build/pages/page-N.png (pdftoppm) for looking at
#   make paper-clean   remove the LaTeX build folder and the PDF
# Reproducible: SOURCE_DATE_EPOCH is the last commit's time (0 without git), FORCE_SOURCE_DATE=1 makes
# pdfTeX use it for every date, and paper.tex removes the trailer /ID, so the same inputs give a
# byte-identical PDF. Needs texlive-latex-base, texlive-latex-recommended, latexmk (poppler-utils for
# paper-check). Missing generated files or figures do not fail the build: the PDF says what is missing.
PAPER_EPOCH := $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
PAPER_EPOCH := $(if $(PAPER_EPOCH),$(PAPER_EPOCH),0)
PAPER_INPUTS := paper/paper.tex CITATION.bib $(wildcard paper/generated/*.tex) $(wildcard figures/*.png)
PAPER_ENV := SOURCE_DATE_EPOCH=$(PAPER_EPOCH) FORCE_SOURCE_DATE=1 TZ=UTC LC_ALL=C
LATEXMK := latexmk -pdf -e '$$bibtex_fudge=0' -interaction=nonstopmode -halt-on-error -file-line-error -outdir=build

.PHONY: paper paper-check paper-clean
paper: deps-paper
	$(MAKE) figures paper/generated/meta.tex
	$(MAKE) paper/paper.pdf

paper/paper.pdf: $(PAPER_INPUTS)
	rm -rf paper/build
	cd paper && $(PAPER_ENV) $(LATEXMK) paper.tex >/dev/null || { tail -n 40 build/paper.log; exit 1; }
	@grep -A1 'Overfull \\hbox' paper/build/paper.log || true
	@grep -q 'undefined on input line' paper/build/paper.log && { grep 'undefined on input line' paper/build/paper.log; echo "paper: undefined citations or references"; exit 1; } || true
	cp paper/build/paper.pdf $@.tmp
	mv $@.tmp $@

paper-check: paper
	rm -rf paper/build/pages
	mkdir -p paper/build/pages
	pdftoppm -r 100 -png paper/paper.pdf paper/build/pages/page
	@echo "paper-check: $$(ls paper/build/pages | wc -l) pages in paper/build/pages/"
	@grep -c 'Overfull' paper/build/paper.log | sed 's/^/paper-check: overfull boxes: /' || true

paper-clean:
	rm -rf paper/build paper/paper.pdf paper/paper.pdf.tmp

# ---- style: make format applies .clang-format (clang-format 14) to every C, header and CUDA file; make test
# checks it (tests/test_format.sh)
FORMAT_FILES = dpprof.h dpprof_tools.h dpprof_cli.h dpprof_experiments.h dpprof_kernels.cu main.c \
               $(wildcard tests/*.c tests/*.cc tests/*.h tests/fuzz/*.c)
.PHONY: format format-files source-files
format:
	clang-format -i $(FORMAT_FILES)
format-files:
	@echo $(FORMAT_FILES)
source-files:
	@echo $(SOURCE_FILES)

# ---- tests ------------------------------------------------------------------------------------------
TEST_BIN := build/tests
test: deps-test
	$(MAKE) WERROR=-Werror -j$$(nproc) dpprof build/dpprof-nocuda build/dpprof-san build/dpprof.1
	$(MAKE) WERROR=-Werror -j$$(nproc) test-build
	tests/run.sh $(TEST_BIN)

# the same program without the CUDA object: what tests/test_memcheck.sh runs under valgrind (libcudart
# makes valgrind report on the CUDA runtime, not on dpprof)
build/dpprof-nocuda: $(CLI_SRC) build/dpprof.provenance
	@mkdir -p build
	$(CC) $(ALL_CFLAGS) -g $(PROVENANCE) main.c -o $@.tmp -lm
	mv $@.tmp $@

# the command line with AddressSanitizer and UndefinedBehaviorSanitizer (no CUDA): tests/test_sanitized.sh runs
# the shell tests of bad input and hostile outputs on it
build/dpprof-san: $(CLI_SRC) build/dpprof.provenance
	@mkdir -p build
	$(CC) $(ALL_CFLAGS) $(SANFLAGS) -O1 $(PROVENANCE) main.c -o $@.tmp -lm
	mv $@.tmp $@

# test programs: C tests with sanitizers, the gradient check in double, the training test optimised
TESTS_SAN := test_prof test_engine test_ops test_json test_plot test_privacy test_gpu test_dp test_dpops test_zero test_options
.PHONY: test-build
test-build: $(addprefix $(TEST_BIN)/,$(TESTS_SAN) test_ops_double test_dpops_double test_dp_double test_gradcheck test_train test_twotu test_cuemu test_emu) build/dpprof-cuemu build/schema_check $(TEST_BIN)/test_profonly $(MPI_TEST)

# the ranks of an MPI job against one rank (tests/test_mpi.sh runs it under mpirun; not test_*: run.sh would
# start it without mpirun), where mpicc is. undefined-behaviour sanitizer only: the address sanitizer reports
# Open MPI's own allocations
$(TEST_BIN)/mpi_ranks: tests/test_mpi.c dpprof.h tests/test.h
	@mkdir -p $(TEST_BIN)
	$(CC) $(ALL_CFLAGS) $(MPI_DEF) -fsanitize=undefined -fno-sanitize-recover=undefined -g -I. $< -o $@ -lm $(MPI_LIBS)
# the same on the cuda backend: its kernels on the cpu emulator, its NCCL the emulator's over MPI
$(TEST_BIN)/mpi_ranks_cuemu: tests/test_mpi.c dpprof.h tests/test.h build/dpprof_kernels_emu.o
	@mkdir -p $(TEST_BIN)
	$(CC) -std=c11 -Wall -Wextra -Werror -pedantic $(EMU_FLAGS) -DDPPROF_CUDA $(MPI_DEF) -I. $< build/dpprof_kernels_emu.o -o $@ -lstdc++ -lm $(MPI_LIBS)

# the profiler as a user embeds it: no library at all, not even libm (every symbol resolved at link time)
$(TEST_BIN)/test_profonly: tests/test_profonly.c dpprof.h tests/test.h
	@mkdir -p $(TEST_BIN)
	$(CC) $(ALL_CFLAGS) $(SANFLAGS) -I. $< -o $@ -Wl,--no-undefined

# the implementation compiled once for the tests that use no internal name (tests/impl.c), float and double
IMPL_SAN := build/impl-san.o
IMPL_SAN_DOUBLE := build/impl-san-double.o
$(IMPL_SAN): tests/impl.c dpprof.h dpprof_tools.h
	@mkdir -p build
	$(CC) $(ALL_CFLAGS) $(SANFLAGS) -I. -c $< -o $@
$(IMPL_SAN_DOUBLE): tests/impl.c dpprof.h dpprof_tools.h
	@mkdir -p build
	$(CC) $(ALL_CFLAGS) $(SANFLAGS) -DDPPROF_REF_DOUBLE -I. -c $< -o $@

# the checker of results against docs/result.schema.json (tests/test_schema.sh)
build/schema_check: tests/schema_check.c dpprof.h dpprof_tools.h $(IMPL_SAN)
	@mkdir -p build
	$(CC) $(ALL_CFLAGS) $(SANFLAGS) -I. $< $(IMPL_SAN) -o $@ -lm

# these link the shared implementation; the other tests compile it in (they reach internal names)
IMPL_TESTS := test_json test_ops test_dpops test_zero
$(addprefix $(TEST_BIN)/,$(IMPL_TESTS)): $(TEST_BIN)/%: tests/%.c dpprof.h dpprof_tools.h tests/test.h $(IMPL_SAN)
	@mkdir -p $(TEST_BIN)
	$(CC) $(ALL_CFLAGS) $(SANFLAGS) -I. $< $(IMPL_SAN) -o $@ -lm

# the option tables' test reads the command line's parts (static functions: the test calls some of them)
$(TEST_BIN)/test_options: dpprof_cli.h dpprof_experiments.h docs/results.md
$(TEST_BIN)/test_options: CFLAGS += -Wno-unused-function

$(TEST_BIN)/%: tests/%.c dpprof.h dpprof_tools.h tests/test.h
	@mkdir -p $(TEST_BIN)
	$(CC) $(ALL_CFLAGS) $(SANFLAGS) -I. $< -o $@ -lm

$(TEST_BIN)/test_ops_double: tests/test_ops.c dpprof.h dpprof_tools.h tests/test.h $(IMPL_SAN_DOUBLE)
	@mkdir -p $(TEST_BIN)
	$(CC) $(ALL_CFLAGS) $(SANFLAGS) -DDPPROF_REF_DOUBLE -I. $< $(IMPL_SAN_DOUBLE) -o $@ -lm

$(TEST_BIN)/test_dpops_double: tests/test_dpops.c dpprof.h dpprof_tools.h tests/test.h $(IMPL_SAN_DOUBLE)
	@mkdir -p $(TEST_BIN)
	$(CC) $(ALL_CFLAGS) $(SANFLAGS) -DDPPROF_REF_DOUBLE -I. $< $(IMPL_SAN_DOUBLE) -o $@ -lm

# the double build of the dp test is also the float build's reference (test_dp runs it with --ref)
$(TEST_BIN)/test_dp_double: tests/test_dp.c dpprof.h dpprof_tools.h tests/test.h
	@mkdir -p $(TEST_BIN)
	$(CC) $(ALL_CFLAGS) $(SANFLAGS) -DDPPROF_REF_DOUBLE -I. $< -o $@ -lm

$(TEST_BIN)/test_gradcheck: tests/test_gradcheck.c dpprof.h dpprof_tools.h tests/test.h
	@mkdir -p $(TEST_BIN)
	$(CC) $(ALL_CFLAGS) -DDPPROF_REF_DOUBLE -I. $< -o $@ -lm

$(TEST_BIN)/test_train: tests/test_train.c dpprof.h dpprof_tools.h tests/test.h
	@mkdir -p $(TEST_BIN)
	$(CC) $(ALL_CFLAGS) -O3 -march=native -I. $< -o $@ -lm

# two translation units that include the header, one with the implementation: they must link
$(TEST_BIN)/test_twotu: tests/test_twotu_a.c tests/test_twotu_b.c dpprof.h dpprof_tools.h
	@mkdir -p $(TEST_BIN)
	$(CC) $(ALL_CFLAGS) -I. tests/test_twotu_a.c tests/test_twotu_b.c -o $@ -lm

# the quick subset a contributor runs before a commit: the program, the library's unit tests built without the
# sanitizers (test_privacy's shorter sweeps), and the command line's tests of bad input, sweeps, reports and the
# format. about 4 minutes on 2 cores from a fresh clone (most of it nvcc's, where there is one); make test runs
# everything (about 20 minutes: the sanitizer, emulator, valgrind and MPI builds, the peers' harness)
CHECK_BIN := build/check
CHECK_TESTS := test_prof test_engine test_ops test_json test_privacy test_dp test_dp_double test_zero test_options test_gradcheck
CHECK_SCRIPTS := test_cli test_sweep test_report test_format
check: deps-test
	$(MAKE) WERROR=-Werror -j$$(nproc) dpprof $(addprefix $(CHECK_BIN)/,$(CHECK_TESTS))
	TEST_QUICK=1 TEST_SCRIPTS="$(CHECK_SCRIPTS)" tests/run.sh $(CHECK_BIN)
$(CHECK_BIN)/impl.o: tests/impl.c dpprof.h dpprof_tools.h
	@mkdir -p $(CHECK_BIN)
	$(CC) $(ALL_CFLAGS) -I. -c $< -o $@
$(addprefix $(CHECK_BIN)/,$(IMPL_TESTS)): $(CHECK_BIN)/%: tests/%.c dpprof.h dpprof_tools.h tests/test.h $(CHECK_BIN)/impl.o
	$(CC) $(ALL_CFLAGS) -I. $< $(CHECK_BIN)/impl.o -o $@ -lm
$(CHECK_BIN)/test_options: dpprof_cli.h dpprof_experiments.h docs/results.md
$(CHECK_BIN)/test_options: CFLAGS += -Wno-unused-function
$(CHECK_BIN)/test_gradcheck: CPPFLAGS += -DDPPROF_REF_DOUBLE
$(CHECK_BIN)/test_dp_double: tests/test_dp.c dpprof.h dpprof_tools.h tests/test.h
	@mkdir -p $(CHECK_BIN)
	$(CC) $(ALL_CFLAGS) -DDPPROF_REF_DOUBLE -I. $< -o $@ -lm
$(CHECK_BIN)/%: tests/%.c dpprof.h dpprof_tools.h tests/test.h
	@mkdir -p $(CHECK_BIN)
	$(CC) $(ALL_CFLAGS) -I. $< -o $@ -lm

# the GPU test links the real CUDA object when there is one: it prints SKIP without a GPU
GPU_TEST_SRC := tests/test_gpu.c tests/gpu_model.c tests/gpu_attn.c tests/gpu_dp.c tests/gpu_steps.c tests/gpu_counters.c dpprof.h dpprof_tools.h tests/test.h
ifneq ($(NVCC),)
$(TEST_BIN)/test_gpu: $(GPU_TEST_SRC) $(CUDA_OBJ)
	@mkdir -p $(TEST_BIN)
	$(CC) $(ALL_CFLAGS) -DDPPROF_CUDA -I. $< $(CUDA_OBJ) -o $@ $(LDFLAGS) $(DPPROF_LIBS) $(LDLIBS)
endif

# the same kernels compiled by g++ for tests/cuemu.h, the cpu emulator of the cuda subset they use:
# test_cuemu runs the whole gpu test on it, dpprof-cuemu is the command line on it (test_cuemu_cli.sh).
# no -ffp-contract: the noise must be bitwise the cpu's; ubsan yes, asan no (it does not follow fibers)
# where mpicc is, the emulator's NCCL runs over MPI (tests/cuemu.h, part 11): dpprof-cuemu runs the cuda backend's
# ranks as an MPI job
EMU_FLAGS := -O1 -g -ffp-contract=off -fsanitize=undefined -fno-sanitize-recover=undefined
EMU_NCCL := $(if $(MPI_LIBS),-DDPPROF_NCCL $(MPI_CFLAGS))
build/dpprof_kernels_emu.o: dpprof_kernels.cu dpprof.h tests/cuemu.h
	@mkdir -p build
	$(CXX) -std=c++17 $(EMU_FLAGS) -Wall -Wextra -Werror -x c++ -DDPPROF_CUEMU $(EMU_NCCL) -I. -Itests -c $< -o $@.tmp.o
	mv $@.tmp.o $@

$(TEST_BIN)/test_cuemu: $(GPU_TEST_SRC) build/dpprof_kernels_emu.o
	@mkdir -p $(TEST_BIN)
	$(CC) -std=c11 -Wall -Wextra -Werror -pedantic $(EMU_FLAGS) -DDPPROF_CUDA -I. $< build/dpprof_kernels_emu.o -o $@ -lstdc++ -lm $(MPI_LIBS)

# the emulator's own checks: the races, stale shared memory and faults it is there to catch, caught
$(TEST_BIN)/test_emu: tests/test_emu.cc tests/cuemu.h tests/test.h
	@mkdir -p $(TEST_BIN)
	$(CXX) -std=c++17 $(EMU_FLAGS) -Wall -Wextra -Werror -Itests $< -o $@

build/dpprof-cuemu: $(CLI_SRC) build/dpprof_kernels_emu.o build/dpprof.provenance
	$(CC) -std=c11 -Wall -Wextra -Werror -pedantic $(EMU_FLAGS) -DDPPROF_CUDA $(MPI_DEF) $(PROVENANCE) main.c build/dpprof_kernels_emu.o -o $@.tmp -lstdc++ -lm $(MPI_LIBS)
	mv $@.tmp $@

clean:
	rm -rf build dpprof dpprof.tmp results figures paper/generated paper/build paper/paper.pdf

# ---- install: make install [PREFIX=/usr/local] [DESTDIR=staging] ---------------------------------------
# the program, the header (with the CUDA file beside it in share/dpprof for those who build the gpu path),
# a man page made from the program's own --help, and a pkg-config file (pkg-config --cflags --libs dpprof)
BINDIR ?= $(PREFIX)/bin
INCLUDEDIR ?= $(PREFIX)/include
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
PKGCONFIGDIR ?= $(PREFIX)/lib/pkgconfig
VERSION = $(shell sed -n 's/^#define DPPROF_VERSION "\(.*\)"/\1/p' dpprof.h)
MAN_COMMANDS := run fit sweep report plot epsilon attnbench

# the man page: each command's --help verbatim, under a section of its own
build/dpprof.1: dpprof
	@mkdir -p build
	{ printf '.TH DPPROF 1 "" "dpprof $(VERSION)" "User Commands"\n.SH NAME\ndpprof \\- exact memory, time and traffic profiles of DP-SGD transformer training\n'; \
	  printf '.SH SYNOPSIS\n.B dpprof\n\\fICOMMAND\\fR [\\fIoptions\\fR]\n.SH DESCRIPTION\n.nf\n'; \
	  ./dpprof --help | sed 's/\\/\\e/g; s/^[.'"'"']/\\\&&/'; printf '.fi\n'; \
	  for c in $(MAN_COMMANDS); do printf '.SH "DPPROF %s"\n.nf\n' "$$(echo $$c | tr a-z A-Z)"; \
	    ./dpprof $$c --help | sed 's/\\/\\e/g; s/^[.'"'"']/\\\&&/'; printf '.fi\n'; done; \
	  printf '.SH FILES\n.TP\n.I dpprof.h\nthe library, installed with the system headers: profiler, model, DP-SGD, outputs (its manual is at its top)\n'; \
	  printf '.SH "EXIT STATUS"\n0 ok, 1 runtime error, 2 bad input, 3 out of memory.\n'; } > $@.tmp
	mv $@.tmp $@

.PHONY: install uninstall
install: dpprof build/dpprof.1
	install -d '$(DESTDIR)$(BINDIR)' '$(DESTDIR)$(INCLUDEDIR)' '$(DESTDIR)$(MANDIR)/man1' '$(DESTDIR)$(PKGCONFIGDIR)' '$(DESTDIR)$(DATADIR)/dpprof'
	install -m 755 dpprof '$(DESTDIR)$(BINDIR)/dpprof'
	install -m 644 dpprof.h '$(DESTDIR)$(INCLUDEDIR)/dpprof.h'
	install -m 644 dpprof_kernels.cu '$(DESTDIR)$(DATADIR)/dpprof/dpprof_kernels.cu'
	install -m 644 build/dpprof.1 '$(DESTDIR)$(MANDIR)/man1/dpprof.1'
	printf 'prefix=%s\nincludedir=%s\n\nName: dpprof\nDescription: %s\nVersion: %s\nCflags: -I$${includedir}\nLibs: -lm\n' \
	  '$(PREFIX)' '$(INCLUDEDIR)' 'exact memory, time and traffic profiles of DP-SGD training (single-header C library)' '$(VERSION)' \
	  > '$(DESTDIR)$(PKGCONFIGDIR)/dpprof.pc'

uninstall:
	rm -f '$(DESTDIR)$(BINDIR)/dpprof' '$(DESTDIR)$(INCLUDEDIR)/dpprof.h' '$(DESTDIR)$(DATADIR)/dpprof/dpprof_kernels.cu' \
	  '$(DESTDIR)$(MANDIR)/man1/dpprof.1' '$(DESTDIR)$(PKGCONFIGDIR)/dpprof.pc'
	-rmdir '$(DESTDIR)$(DATADIR)/dpprof' 2>/dev/null

# ---- fuzzing (libFuzzer; clang's runtime comes from Debian's libclang-rt-14-dev) -------------------
# make fuzz: each harness of tests/fuzz/ for FUZZ_SECONDS (default 60) from its committed corpus and
# dictionary; new inputs go to build/fuzz/corpus_NAME_run, a crash to build/fuzz/NAME/ (and the make
# fails, naming it). make fuzz-ci: the same for 20 s each (.ci/run).
#   json     the json reader: parse, getters, write back, parse again
#   options  dpprof run's parse_run() + dpprof_config_resolve() + one dry step (cpu when small)
#   conf     experiment files: sweep_parse() and the report's rep_read_lines() + rep_validate()
FUZZ_SECONDS ?= 60
FUZZERS := json options conf
FUZZ_CFLAGS := -std=c11 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -I.
.PHONY: fuzz fuzz-ci fuzz-build
fuzz-build: $(addprefix build/fuzz/fuzz_,$(FUZZERS))

# options and conf include the command line's parts (dpprof_cli.h, dpprof_experiments.h) to reach their parsers
build/fuzz/fuzz_options build/fuzz/fuzz_conf: dpprof_cli.h dpprof_experiments.h
build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c dpprof.h dpprof_tools.h
	@mkdir -p build/fuzz
	clang $(FUZZ_CFLAGS) $< -o $@.tmp -lm
	mv $@.tmp $@

fuzz: fuzz-build
	@failed=""; \
	for f in $(FUZZERS); do \
	  mkdir -p build/fuzz/corpus_$${f}_run build/fuzz/$$f; \
	  echo "fuzz_$$f: $(FUZZ_SECONDS) s (log build/fuzz/fuzz_$$f.log)"; \
	  if build/fuzz/fuzz_$$f -max_total_time=$(FUZZ_SECONDS) -timeout=30 -rss_limit_mb=4096 -print_final_stats=1 \
	       -dict=tests/fuzz/$$f.dict -artifact_prefix=build/fuzz/$$f/ \
	       build/fuzz/corpus_$${f}_run tests/fuzz/corpus_$$f >build/fuzz/fuzz_$$f.log 2>&1; then \
	    grep -E '^stat::number_of_executed_units|^Done ' build/fuzz/fuzz_$$f.log | tr '\n' ' ' | sed 's/^/  /'; echo; \
	  else \
	    failed="$$failed $$f"; \
	    grep -E 'ERROR|runtime error|invariant failed|Test unit written' build/fuzz/fuzz_$$f.log | head -5 | sed 's/^/  /'; \
	  fi; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: FAILED:$$failed (inputs in build/fuzz/NAME/; rerun one: build/fuzz/fuzz_NAME FILE)"; exit 1; fi; \
	echo "fuzz: $(FUZZERS): no crash in $(FUZZ_SECONDS) s each"

fuzz-ci:
	$(MAKE) fuzz FUZZ_SECONDS=20
