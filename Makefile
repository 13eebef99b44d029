# snic — top-level build.  `make` builds everything into build/.
#   make            firmware core, snic-emu, libibverbs.so.1, tests
#   make demo       install what is missing, start two NICs, run verbs programs
#   make test       install what is missing, build, run every test suite
#   make asan       the same tests under ASan/UBSan (build-asan/)
#   make fuzz       the fuzz targets, FUZZ_SECONDS each, then firmware/
#                   line coverage (build-fuzz/; tools/fuzz.sh)
#   make ARCH=aarch64  the same programs for Linux on Arm (the DPU), cross-
#                   built into build-aarch64/ against an arm64 sysroot
#                   (tools/arm64-sysroot.sh makes and caches it)
#   make interop    snic against Linux soft-RoCE (rdma_rxe) and rdma_cm in a
#                   Debian VM (also under loss)

# ARCH=aarch64: Debian's cross compiler and an arm64 sysroot of Debian's
# -dev packages (DPDK and the rest), made once per machine outside the clone.
# The sysroot is made while the Makefile is read: pkg-config needs it.
ARCH     ?= $(shell uname -m)
ifeq ($(ARCH),aarch64)
ifneq ($(shell uname -m),aarch64)
SYSROOT  := $(shell tools/arm64-sysroot.sh)
$(if $(SYSROOT),,$(error tools/arm64-sysroot.sh could not make the arm64 sysroot))
BUILD    ?= build-aarch64
CC       := aarch64-linux-gnu-gcc --sysroot=$(SYSROOT)
PKG_CONFIG := PKG_CONFIG_SYSROOT_DIR=$(SYSROOT) \
	PKG_CONFIG_LIBDIR=$(SYSROOT)/usr/lib/aarch64-linux-gnu/pkgconfig:$(SYSROOT)/usr/share/pkgconfig pkg-config
DPDK_LIBDIR := $(SYSROOT)/usr/lib/aarch64-linux-gnu
endif
endif
PKG_CONFIG ?= pkg-config
BUILD    ?= build
CC       ?= gcc
OPT      ?= -O2
SAN      ?=
WARN     := -Wall -Wextra -Werror
CSTD     := -std=c11
DEPFLAGS  = -MMD -MP
INC      := -Ifirmware/include -Ihal/include
CFLAGS_BASE := $(CSTD) $(OPT) -g $(WARN) $(SAN) $(INC) -fno-strict-aliasing

# The firmware core: portable, freestanding C11 (only <stdint.h>, <stddef.h>,
# <stdbool.h>, <stdatomic.h> and <string.h>-level functions): one level of
# layer folders (firmware/src/<layer>/*.c, firmware/README.md) and the
# CPU-specific files (firmware/arch/<cpu>/*.c, each builds only on its CPU).
FW_SRCS  := $(sort $(wildcard firmware/src/*/*.c firmware/arch/*/*.c))
FW_OBJS  := $(FW_SRCS:%.c=$(BUILD)/obj/%.o)
FW_LIB   := $(BUILD)/lib/libsnicfw.a
# -ffreestanding on every board (no hosted library assumed; it implies
# -fno-builtin), then -fbuiltin: memcpy/memset of small fixed sizes stay
# inline moves instead of calls, as a firmware's own string.h would make them.
FW_FREESTANDING := -ffreestanding -fbuiltin
# The firmware core at -O3 when the rest is at the default -O2 (its data
# path is small hot loops; make bench-instr: 64-B WRITE -54 instructions),
# and position-dependent: it is only ever linked into executables, and
# -fPIC kept GCC from inlining the core's own global functions (-38).
FW_OPT := $(if $(filter -O2,$(OPT)),-O3,)
# Link-time optimisation of the core into each program that links it
# (snic-emu, snic-bluefield, the unit tests, sim, bench-instr and the
# qemu-virt image): GCC then inlines across the core's files (make
# bench-instr: 64-B WRITE 1,571 -> 1,496).  The sim and wire programs,
# linked from their source, get it too (GCC's linker plugin optimises any
# IR it is given).  Only the core's objects carry GCC's IR: the HALs, the
# boards and the tests' fake HAL are compiled as before, so nothing of
# them is inlined into the core or the core into them (bench-instr's
# callgrind toggles stay on the same code).  Fat objects (machine code
# too): tools/instr-count.sh lists the archive's functions, static ones
# included, from their ELF symbol tables.  Off under the sanitizers (make asan: what they
# report should point at the functions as written, and the instrumented
# LTO link is slow) and at any OPT other than the default -O2; LTO=0
# turns it off.
LTO      ?= 1
FW_LTO   := $(if $(filter 1,$(LTO)),$(if $(SAN),,$(if $(filter -O2,$(OPT)),-flto=auto -ffat-lto-objects)))
# the archive's index must list the IR's symbols: the compiler's ar
GCC_AR   := $(if $(SYSROOT),aarch64-linux-gnu-gcc-ar,gcc-ar)
FW_CFLAGS := $(CFLAGS_BASE) $(FW_FREESTANDING) $(FW_OPT) $(FW_LTO) -Ifirmware/src -Ifirmware
# on the link lines of the programs that link $(FW_LIB), with the warnings
# (-Werror: what shows only after inlining across files) and the core's options
FW_LDFLAGS := $(if $(FW_LTO),-flto=auto $(WARN) $(FW_OPT) -fno-strict-aliasing)

# HAL implementations and the emu board (Linux process with DPDK ports).
DPDK_CFLAGS := $(shell $(PKG_CONFIG) --cflags libdpdk 2>/dev/null)
DPDK_LIBDIR ?= $(shell $(PKG_CONFIG) --variable=libdir libdpdk 2>/dev/null || echo /usr/lib/x86_64-linux-gnu)
DPDK_PMDS := bus_vdev mempool_ring net_memif net_af_packet net_tap net_pcap \
	     net_ring net_null
DPDK_LIBS_CORE := gso ethdev hash net mbuf mempool meter ring rcu eal \
	     telemetry kvargs pci
DPDK_LDLIBS := -Wl,--whole-archive $(DPDK_PMDS:%=$(DPDK_LIBDIR)/librte_%.a) \
	-Wl,--no-whole-archive $(DPDK_LIBS_CORE:%=$(DPDK_LIBDIR)/librte_%.a) \
	-lpcap -lnuma -lfdt -lbsd -lelf -lm -ldl -pthread
POSIX_HAL_SRCS := $(sort $(wildcard hal/posix/*.c))
DPDK_HAL_SRCS  := $(sort $(wildcard hal/dpdk/*.c))
FAULT_HAL_SRCS := $(sort $(wildcard hal/fault/*.c))
FAULT_HAL_OBJS := $(FAULT_HAL_SRCS:%.c=$(BUILD)/obj/%.o)
EMU_SRCS := $(sort $(wildcard boards/emu/*.c boards/common/*.c boards/common/host/*.c))
EMU_OBJS := $(POSIX_HAL_SRCS:%.c=$(BUILD)/obj/%.o) \
	    $(DPDK_HAL_SRCS:%.c=$(BUILD)/obj/%.o) $(FAULT_HAL_OBJS) \
	    $(EMU_SRCS:%.c=$(BUILD)/obj/%.o)
EMU_BIN  := $(BUILD)/bin/snic-emu
# DPDK headers are not -Wextra clean everywhere; our own code still is.
EMU_CFLAGS := $(CFLAGS_BASE) -D_GNU_SOURCE $(DPDK_CFLAGS) -Ihal/posix -Ihal/dpdk -Ihal/fault -Iboards/emu -Iboards/common -Iboards/common/host

# The host driver: a drop-in libibverbs.so.1.
# (host-driver/rdmacm/ is librdmacm.so.1, below)
HD_SRCS  := $(filter-out host-driver/rdmacm/%,$(sort $(wildcard host-driver/*/*.c)))
HD_OBJS  := $(HD_SRCS:%.c=$(BUILD)/obj/%.o)
HD_LIB   := $(BUILD)/lib/libibverbs.so.1
HD_MAP   := host-driver/abi/libibverbs.map
# Exports are decided by the version script alone (local: *).
HD_CFLAGS := $(CFLAGS_BASE) -D_GNU_SOURCE -fPIC -Ihost-driver -Ihal/posix -pthread

# The drop-in librdmacm.so.1 (host-driver/rdmacm/, issue 12), linked
# against our libibverbs.so.1.
CM_SRCS  := $(sort $(wildcard host-driver/rdmacm/*.c))
CM_OBJS  := $(CM_SRCS:%.c=$(BUILD)/obj/%.o)
CM_LIB   := $(BUILD)/lib/librdmacm.so.1
CM_MAP   := host-driver/rdmacm/librdmacm.map

# Tests.
UNIT_SRCS := $(sort $(wildcard tests/unit/*.c))
UNIT_OBJS := $(UNIT_SRCS:%.c=$(BUILD)/obj/%.o)
UNIT_BIN  := $(BUILD)/tests/unit-tests
VT_COMMON := tests/verbs/vt_common.c
# The host driver's parts on their own (tests/hostdrv): linked with its
# objects, not through the library's exports.
HDT_SRCS  := $(sort $(wildcard tests/hostdrv/*.c))
HDT_BINS  := $(HDT_SRCS:tests/hostdrv/%.c=$(BUILD)/tests/hostdrv/%)
VT_SRCS   := $(filter-out $(VT_COMMON),$(sort $(wildcard tests/verbs/*.c)))
VT_BINS   := $(VT_SRCS:tests/verbs/%.c=$(BUILD)/tests/%)
TEST_CFLAGS := $(CFLAGS_BASE) -D_GNU_SOURCE -Ifirmware/src -Ifirmware -Itests/unit -Ihal/fault

# bench-instr: the firmware in the two-NIC simulation (tests/unit's fake
# HAL and host), counted by callgrind (tools/bench-instr.sh).
# (not in a cross build: valgrind runs, and its headers exist, only here)
BENCH_INSTR_BIN := $(if $(SYSROOT),,$(BUILD)/tests/bench-instr)
BENCH_INSTR_OBJS := $(BUILD)/obj/tests/bench/instr.o \
	$(BUILD)/obj/tests/unit/fake_hal.o $(BUILD)/obj/tests/unit/fake_host.o

# make bench's own programs: verbs programs (registration, QP scaling)
# against Debian's libibverbs, and the port's raw rate on the DPDK HAL.
BENCH_VERBS_SRCS := $(sort $(wildcard tools/bench/snic-*bench.c))
BENCH_VERBS_SRCS := $(filter-out tools/bench/snic-portbench.c,$(BENCH_VERBS_SRCS))
BENCH_BINS := $(BENCH_VERBS_SRCS:tools/bench/%.c=$(BUILD)/bin/%) $(BUILD)/bin/snic-portbench
PORTBENCH_OBJS := $(POSIX_HAL_SRCS:%.c=$(BUILD)/obj/%.o) $(DPDK_HAL_SRCS:%.c=$(BUILD)/obj/%.o)
# The DPDK HAL's ring pair on its own (tests/hal): EAL, pools and ports
# brought up as snic-portbench does, so built and linked as it is; and
# rte_eal_cleanup wrapped, to count the pools after the HAL's teardown
# drained the rings but before EAL's memory goes.
HAL_TEST_OBJ := $(BUILD)/obj/tests/hal/dpdk_ring.o
HAL_TEST_BIN := $(BUILD)/tests/hal/dpdk_ring

# Simulation workloads (two NICs over tests/unit's fake HAL and host, no
# OS): the unit-test helpers without the CUnit suites (some helpers assert
# with CUnit, hence -lcunit).
SIM_SRCS  := $(sort $(wildcard tests/sim/*.c))
SIM_BINS  := $(SIM_SRCS:tests/sim/%.c=$(BUILD)/tests/sim/%)
SIM_OBJS  := $(filter-out $(BUILD)/obj/tests/unit/main.o $(BUILD)/obj/tests/unit/test_%.o,$(UNIT_OBJS))

WIRE_SRCS := $(sort $(wildcard tests/wire/*.c))
WIRE_BINS := $(WIRE_SRCS:tests/wire/%.c=$(BUILD)/tests/wire/%)
# MPI programs (tests/mpi), built with each MPI's compiler wrapper when it
# is installed (tools/setup-deps.sh installs both); not in a cross build
# (the wrappers compile for this machine).
MPI_SRCS  := $(sort $(wildcard tests/mpi/*.c))
MPI_FLAVS := $(if $(SYSROOT),,$(if $(wildcard /usr/bin/mpicc.openmpi),ompi) \
	     $(if $(wildcard /usr/bin/mpicc.mpich),mpich))
MPI_BINS  := $(foreach f,$(MPI_FLAVS),$(MPI_SRCS:tests/mpi/%.c=$(BUILD)/tests/mpi/%_$(f)))
TOOLS_SRCS := $(sort $(wildcard tools/*.c))
TOOLS_BINS := $(TOOLS_SRCS:tools/%.c=$(BUILD)/bin/%)
# The QEMU NIC's host agent (boards/qemu-virt/agent/, started by
# tools/snic-qemu): the shared context broker with a mailbox back end.
QA_SRCS := $(filter-out %/qemu_shim.c,$(sort $(wildcard boards/qemu-virt/agent/*.c))) \
	boards/common/host/ctx_broker.c boards/common/host/peer_id.c \
	hal/posix/users.c
QA_OBJS := $(QA_SRCS:%.c=$(BUILD)/obj/%.o)
QA_BIN  := $(BUILD)/bin/snic-qemu-agent
# preloaded into QEMU by the agent: QEMU non-dumpable before it holds the
# agent's memfds (boards/qemu-virt/agent/qemu_shim.c)
QA_SHIM := $(BUILD)/lib/snic-qemu-shim.so
# The boards' trusted host tools' shared parts on their own
# (tests/hostagent): linked with boards/common/host, a fake back end.
HAT_SRCS := $(sort $(wildcard tests/hostagent/*.c))
HAT_BINS := $(HAT_SRCS:tests/hostagent/%.c=$(BUILD)/tests/hostagent/%)
CBH_OBJS := $(BUILD)/obj/boards/common/host/ctx_broker.o \
	$(BUILD)/obj/boards/common/host/peer_id.o $(BUILD)/obj/hal/posix/users.o

ALL := $(FW_LIB) $(EMU_BIN) $(HD_LIB) $(CM_LIB) $(UNIT_BIN) $(BENCH_INSTR_BIN) \
	$(BENCH_BINS) $(VT_BINS) $(WIRE_BINS) $(TOOLS_BINS) $(MPI_BINS) $(SIM_BINS) \
	$(HDT_BINS) $(QA_BIN) $(QA_SHIM) $(HAT_BINS) $(HAL_TEST_BIN)

.PHONY: all deps demo test unit fuzz asan bench bench-instr clean firmware emu host-driver interop
all: $(ALL)
firmware: $(FW_LIB)
emu: $(EMU_BIN)
host-driver: $(HD_LIB)

$(BUILD)/obj/firmware/%.o: firmware/%.c
	@mkdir -p $(@D)
	$(CC) $(FW_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(FW_LIB): $(FW_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && $(GCC_AR) rcs $@ $^

$(BUILD)/obj/hal/%.o: hal/%.c
	@mkdir -p $(@D)
	$(CC) $(EMU_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/obj/boards/%.o: boards/%.c
	@mkdir -p $(@D)
	$(CC) $(EMU_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(EMU_BIN): $(EMU_OBJS) $(FW_LIB)
	@mkdir -p $(@D)
	$(CC) $(SAN) $(FW_LDFLAGS) -o $@ $(EMU_OBJS) $(FW_LIB) $(DPDK_LDLIBS)

$(QA_OBJS): EMU_CFLAGS += -Iboards/qemu-virt
$(QA_BIN): $(QA_OBJS)
	@mkdir -p $(@D)
	$(CC) $(SAN) -o $@ $(QA_OBJS)

$(QA_SHIM): boards/qemu-virt/agent/qemu_shim.c
	@mkdir -p $(@D)
	$(CC) $(CSTD) $(OPT) -g $(WARN) -D_GNU_SOURCE -fPIC -shared -o $@ $<

$(BUILD)/obj/host-driver/%.o: host-driver/%.c
	@mkdir -p $(@D)
	$(CC) $(HD_CFLAGS) $(DEPFLAGS) -c $< -o $@

# -z nodelete: our libraries run threads of their own (a context's event
# thread, the CM agent); a plug-in that loaded them (Open MPI's openib) and
# is dlclose'd without closing its devices must not unmap their code.
$(HD_LIB): $(HD_OBJS) $(HD_MAP)
	@mkdir -p $(@D)
	$(CC) $(SAN) -shared -o $@ $(HD_OBJS) -Wl,-soname,libibverbs.so.1 \
		-Wl,--version-script=$(HD_MAP) -Wl,-z,defs -Wl,-z,nodelete -pthread
	ln -sf libibverbs.so.1 $(@D)/libibverbs.so

$(CM_LIB): $(CM_OBJS) $(CM_MAP) $(HD_LIB)
	$(CC) $(SAN) -shared -o $@ $(CM_OBJS) -Wl,-soname,librdmacm.so.1 \
		-Wl,--version-script=$(CM_MAP) -Wl,-z,defs -Wl,-z,nodelete \
		-L$(@D) -libverbs -pthread
	ln -sf librdmacm.so.1 $(@D)/librdmacm.so

$(BUILD)/obj/tests/hostdrv/%.o: tests/hostdrv/%.c
	@mkdir -p $(@D)
	$(CC) $(HD_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/tests/hostdrv/%: $(BUILD)/obj/tests/hostdrv/%.o $(HD_OBJS)
	@mkdir -p $(@D)
	$(CC) $(SAN) -o $@ $< $(HD_OBJS) -pthread

$(BUILD)/obj/tests/hostagent/%.o: tests/hostagent/%.c
	@mkdir -p $(@D)
	$(CC) $(EMU_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/tests/hostagent/%: $(BUILD)/obj/tests/hostagent/%.o $(CBH_OBJS)
	@mkdir -p $(@D)
	$(CC) $(SAN) -o $@ $< $(CBH_OBJS)

$(BUILD)/obj/tests/%.o: tests/%.c
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(UNIT_BIN): $(UNIT_OBJS) $(FAULT_HAL_OBJS) $(FW_LIB)
	@mkdir -p $(@D)
	$(CC) $(SAN) $(FW_LDFLAGS) -o $@ $(UNIT_OBJS) $(FAULT_HAL_OBJS) $(FW_LIB) -lcunit -pthread

$(BENCH_INSTR_BIN): $(BENCH_INSTR_OBJS) $(FAULT_HAL_OBJS) $(FW_LIB)
	@mkdir -p $(@D)
	$(CC) $(SAN) $(FW_LDFLAGS) -o $@ $(BENCH_INSTR_OBJS) $(FAULT_HAL_OBJS) $(FW_LIB)

$(BUILD)/bin/snic-portbench: $(BUILD)/obj/tools/bench/snic-portbench.o $(PORTBENCH_OBJS) $(FW_LIB)
	@mkdir -p $(@D)
	$(CC) $(SAN) $(FW_LDFLAGS) -o $@ $< $(PORTBENCH_OBJS) $(FW_LIB) $(DPDK_LDLIBS)

$(BUILD)/obj/tools/bench/snic-portbench.o: tools/bench/snic-portbench.c
	@mkdir -p $(@D)
	$(CC) $(EMU_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(HAL_TEST_BIN): $(HAL_TEST_OBJ) $(PORTBENCH_OBJS) $(FW_LIB)
	@mkdir -p $(@D)
	$(CC) $(SAN) $(FW_LDFLAGS) -Wl,--wrap=rte_eal_cleanup -o $@ $< \
		$(PORTBENCH_OBJS) $(FW_LIB) $(DPDK_LDLIBS)

$(HAL_TEST_OBJ): tests/hal/dpdk_ring.c
	@mkdir -p $(@D)
	$(CC) $(EMU_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/bin/%: tools/bench/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) -D_GNU_SOURCE $(SAN) -o $@ $< -libverbs -pthread -lm

# Our verbs programs are built against Debian's libibverbs (as any user
# program is) and run against build/lib with LD_LIBRARY_PATH.  Both share
# vt_common.c (devices, endpoints, reporting).
$(BUILD)/tests/%: tests/verbs/%.c $(VT_COMMON) tests/verbs/vt_common.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) -D_GNU_SOURCE $(SAN) -o $@ $< $(VT_COMMON) -libverbs -pthread

$(BUILD)/tests/mpi/%_ompi: tests/mpi/%.c
	@mkdir -p $(@D)
	mpicc.openmpi $(CSTD) -D_GNU_SOURCE $(OPT) -g $(WARN) -o $@ $<

$(BUILD)/tests/mpi/%_mpich: tests/mpi/%.c
	@mkdir -p $(@D)
	mpicc.mpich $(CSTD) -D_GNU_SOURCE $(OPT) -g $(WARN) -o $@ $<

$(BUILD)/tests/sim/%: tests/sim/%.c $(SIM_OBJS) $(FAULT_HAL_OBJS) $(FW_LIB)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) $(SAN) -o $@ $< $(SIM_OBJS) $(FAULT_HAL_OBJS) $(FW_LIB) -lcunit

# The hostile tests and verbs_ext (fw_pid) read the BAR: rebuilt when the host interface changes.
$(BUILD)/tests/snic_hostile $(BUILD)/tests/snic_liveness $(BUILD)/tests/snic_verbs_ext: firmware/include/snic/hostif.h

# The rdma_cm test also links Debian's librdmacm.
$(BUILD)/tests/snic_cm_test: tests/verbs/snic_cm_test.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) -D_GNU_SOURCE $(SAN) -o $@ $< -lrdmacm -libverbs -pthread

# Wire-format helpers (pcap generators for the oracle tests).
$(BUILD)/tests/wire/%: tests/wire/%.c $(FW_LIB) hal/posix/pcap_file.c
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -Ihal/posix $(SAN) -o $@ $< hal/posix/pcap_file.c $(FW_LIB)

# (tools read the BAR: rebuilt when the host interface changes)
# snic-membench times the firmware's own ICRC passes too: linked with it.
$(BUILD)/bin/snic-membench: tools/snic-membench.c $(FW_LIB)
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) $(SAN) $(FW_LDFLAGS) -o $@ $< $(FW_LIB)

$(BUILD)/bin/%: tools/%.c firmware/include/snic/hostif.h hal/posix/live_lock.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) -D_GNU_SOURCE -Ihal/posix $(SAN) -o $@ $<

deps:
	tools/setup-deps.sh

demo: deps
	$(MAKE) all
	tools/demo.sh

test: deps
	$(MAKE) all
	tests/run.sh

# Figures against this machine's own limits; no pass/fail on time.
bench: all
	tools/bench.sh

# Firmware instructions per message, counted by callgrind (deterministic).
bench-instr: $(BENCH_INSTR_BIN)
	tools/bench-instr.sh

# snic against Linux's rdma_rxe in a Debian VM (tests/interop/)
interop: deps
	$(MAKE) all
	tests/run.sh interop interop-lossy interop-cm interop-ipv6

unit: $(UNIT_BIN)
	$(UNIT_BIN)

# Fuzz targets (tests/fuzz, libFuzzer + ASan/UBSan, clang-14) for
# FUZZ_SECONDS each from the seed corpus; then firmware/ line coverage.
FUZZ_SECONDS ?= 600
fuzz: deps
	tools/fuzz.sh run $(FUZZ_SECONDS)
	tools/fuzz.sh cover

# With two firmware cores per NIC on real threads (suite cores): the cases
# whose programs are ours (Debian's cannot load an ASan libibverbs).
ASAN_CORES = cores/verbs cores/verbs-ext cores/qp-scale cores/cq-tight cores/hostile-slots
asan:
	$(MAKE) BUILD=build-asan OPT=-O1 \
		SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" all
	SNIC_BUILD=build-asan tests/run.sh unit verbs $(ASAN_CORES)

clean:
	rm -rf build build-asan build-aarch64 build-fuzz build-tsan

# Boards other than emu bring their own rules (e.g. the bare-metal image).
include $(sort $(wildcard boards/*/board.mk))

# Header dependencies: the .d files of the objects this Makefile knows (a
# wildcard, not a walk of the build tree on every invocation).
-include $(wildcard $(patsubst %.o,%.d,$(FW_OBJS) $(EMU_OBJS) $(QA_OBJS) $(HD_OBJS) $(CM_OBJS) \
	$(UNIT_OBJS) $(FAULT_HAL_OBJS) $(BENCH_INSTR_OBJS) $(PORTBENCH_OBJS) \
	$(BUILD)/obj/tools/bench/snic-portbench.o $(HAL_TEST_OBJ)))
