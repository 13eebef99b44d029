# snic — top-level build.  `make` builds everything into build/.
#   make            firmware core, snic-emu, libibverbs.so.1, tests
#   make demo       install what is missing, start two NICs, run verbs programs
#   make test       install what is missing, build, run every test suite
#   make asan       the same tests under ASan/UBSan (build-asan/)
#   make interop    snic against Linux soft-RoCE (rdma_rxe) in a Debian VM

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
# <stdbool.h>, <stdatomic.h> and <string.h>-level functions).
FW_SRCS  := $(sort $(wildcard firmware/src/*.c))
FW_OBJS  := $(FW_SRCS:%.c=$(BUILD)/obj/%.o)
FW_LIB   := $(BUILD)/lib/libsnicfw.a
FW_CFLAGS := $(CFLAGS_BASE) -fPIC -Ifirmware/src

# HAL implementations and the emu board (Linux process with DPDK ports).
DPDK_CFLAGS := $(shell pkg-config --cflags libdpdk 2>/dev/null)
DPDK_LIBDIR := $(shell pkg-config --variable=libdir libdpdk 2>/dev/null || echo /usr/lib/x86_64-linux-gnu)
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
EMU_SRCS := $(sort $(wildcard boards/emu/*.c boards/common/*.c))
EMU_OBJS := $(POSIX_HAL_SRCS:%.c=$(BUILD)/obj/%.o) \
	    $(DPDK_HAL_SRCS:%.c=$(BUILD)/obj/%.o) $(FAULT_HAL_OBJS) \
	    $(EMU_SRCS:%.c=$(BUILD)/obj/%.o)
EMU_BIN  := $(BUILD)/bin/snic-emu
# DPDK headers are not -Wextra clean everywhere; our own code still is.
EMU_CFLAGS := $(CFLAGS_BASE) -D_GNU_SOURCE $(DPDK_CFLAGS) -Ihal/posix -Ihal/dpdk -Ihal/fault -Iboards/emu -Iboards/common

# The host driver: a drop-in libibverbs.so.1.
HD_SRCS  := $(sort $(wildcard host-driver/*.c))
HD_OBJS  := $(HD_SRCS:%.c=$(BUILD)/obj/%.o)
HD_LIB   := $(BUILD)/lib/libibverbs.so.1
HD_MAP   := host-driver/libibverbs.map
# Exports are decided by the version script alone (local: *).
HD_CFLAGS := $(CFLAGS_BASE) -D_GNU_SOURCE -fPIC -Ihost-driver -pthread

# Tests.
UNIT_SRCS := $(sort $(wildcard tests/unit/*.c))
UNIT_OBJS := $(UNIT_SRCS:%.c=$(BUILD)/obj/%.o)
UNIT_BIN  := $(BUILD)/tests/unit-tests
VT_SRCS   := $(sort $(wildcard tests/verbs/*.c))
VT_BINS   := $(VT_SRCS:tests/verbs/%.c=$(BUILD)/tests/%)
TEST_CFLAGS := $(CFLAGS_BASE) -D_GNU_SOURCE -Ifirmware/src -Itests/unit -Ihal/fault

WIRE_SRCS := $(sort $(wildcard tests/wire/*.c))
WIRE_BINS := $(WIRE_SRCS:tests/wire/%.c=$(BUILD)/tests/wire/%)
TOOLS_SRCS := $(sort $(wildcard tools/*.c))
TOOLS_BINS := $(TOOLS_SRCS:tools/%.c=$(BUILD)/bin/%)

ALL := $(FW_LIB) $(EMU_BIN) $(HD_LIB) $(UNIT_BIN) $(VT_BINS) $(WIRE_BINS) $(TOOLS_BINS)

.PHONY: all deps demo test unit asan bench clean firmware emu host-driver interop
all: $(ALL)
firmware: $(FW_LIB)
emu: $(EMU_BIN)
host-driver: $(HD_LIB)

$(BUILD)/obj/firmware/%.o: firmware/%.c
	@mkdir -p $(@D)
	$(CC) $(FW_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(FW_LIB): $(FW_OBJS)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/obj/hal/%.o: hal/%.c
	@mkdir -p $(@D)
	$(CC) $(EMU_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(BUILD)/obj/boards/%.o: boards/%.c
	@mkdir -p $(@D)
	$(CC) $(EMU_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(EMU_BIN): $(EMU_OBJS) $(FW_LIB)
	@mkdir -p $(@D)
	$(CC) $(SAN) -o $@ $(EMU_OBJS) $(FW_LIB) $(DPDK_LDLIBS)

$(BUILD)/obj/host-driver/%.o: host-driver/%.c
	@mkdir -p $(@D)
	$(CC) $(HD_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(HD_LIB): $(HD_OBJS) $(HD_MAP)
	@mkdir -p $(@D)
	$(CC) $(SAN) -shared -o $@ $(HD_OBJS) -Wl,-soname,libibverbs.so.1 \
		-Wl,--version-script=$(HD_MAP) -Wl,-z,defs -pthread
	ln -sf libibverbs.so.1 $(@D)/libibverbs.so

$(BUILD)/obj/tests/%.o: tests/%.c
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(UNIT_BIN): $(UNIT_OBJS) $(FAULT_HAL_OBJS) $(FW_LIB)
	@mkdir -p $(@D)
	$(CC) $(SAN) -o $@ $(UNIT_OBJS) $(FAULT_HAL_OBJS) $(FW_LIB) -lcunit

# Our verbs programs are built against Debian's libibverbs (as any user
# program is) and run against build/lib with LD_LIBRARY_PATH.
$(BUILD)/tests/%: tests/verbs/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) -D_GNU_SOURCE $(SAN) -o $@ $< -libverbs -pthread

# Wire-format helpers (pcap generators for the oracle tests).
$(BUILD)/tests/wire/%: tests/wire/%.c $(FW_LIB) hal/posix/pcap_file.c
	@mkdir -p $(@D)
	$(CC) $(TEST_CFLAGS) -Ihal/posix $(SAN) -o $@ $< hal/posix/pcap_file.c $(FW_LIB)

$(BUILD)/bin/%: tools/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_BASE) -D_GNU_SOURCE $(SAN) -o $@ $<

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

# snic against Linux's rdma_rxe in a Debian VM (tests/interop/)
interop: deps
	$(MAKE) all
	tests/run.sh interop

unit: $(UNIT_BIN)
	$(UNIT_BIN)

asan:
	$(MAKE) BUILD=build-asan OPT=-O1 \
		SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" all
	SNIC_BUILD=build-asan tests/run.sh unit verbs

clean:
	rm -rf build build-asan

# Boards other than emu bring their own rules (e.g. the bare-metal image).
include $(sort $(wildcard boards/*/board.mk))

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
