# bluefield board: snic-bluefield, the firmware on a BlueField-2/3 DPU's
# Arm cores (Linux, DPDK mlx5 port, host memory and BAR through NVIDIA
# DOCA).  Included by the top-level Makefile.
#
#   make ARCH=aarch64        builds it with the rest (build-aarch64/bin/)
#   make bluefield           this board alone, for the machine's own arch
#
# This build links the DOCA stubs of hal/doca/ (Debian has no DOCA): the
# binary checks for the card and DOCA and names what is missing.

BF_BIN   := $(BUILD)/bin/snic-bluefield
BF_SRCS  := $(sort $(wildcard boards/bluefield/*.c hal/doca/*.c))
BF_OBJS  := $(BF_SRCS:%.c=$(BUILD)/obj/%.o) \
	$(POSIX_HAL_SRCS:%.c=$(BUILD)/obj/%.o) \
	$(DPDK_HAL_SRCS:%.c=$(BUILD)/obj/%.o) \
	$(BUILD)/obj/boards/common/netaddr.o
# The card's port: DPDK's mlx5 driver on the PCI (and auxiliary, for
# scalable functions) bus, over rdma-core's libmlx5; net_ring because
# hal/dpdk can make ring pairs (on the vdev bus).
BF_PMDS  := bus_pci bus_auxiliary bus_vdev common_mlx5 net_mlx5 mempool_ring net_ring
BF_LDLIBS := -Wl,--whole-archive $(BF_PMDS:%=$(DPDK_LIBDIR)/librte_%.a) \
	-Wl,--no-whole-archive $(DPDK_LIBS_CORE:%=$(DPDK_LIBDIR)/librte_%.a) \
	-lmlx5 -libverbs -lpcap -lnuma -lfdt -lbsd -lelf -lm -ldl -pthread

.PHONY: bluefield
bluefield: $(BF_BIN)
ifeq ($(ARCH),aarch64)
all: $(BF_BIN)
endif

$(BF_SRCS:%.c=$(BUILD)/obj/%.o): EMU_CFLAGS += -Iboards/bluefield -Ihal/doca

$(BF_BIN): $(BF_OBJS) $(FW_LIB)
	@mkdir -p $(@D)
	$(CC) $(SAN) $(FW_LDFLAGS) -o $@ $(BF_OBJS) $(FW_LIB) $(BF_LDLIBS)

-include $(wildcard $(BF_SRCS:%.c=$(BUILD)/obj/%.d))
