# qemu-virt board: the firmware core as a bare-metal aarch64 image (newlib)
# for QEMU's `virt` machine.  Included by the top-level Makefile.
#
#   make qemu      build/qemu-virt/snic-fw.elf (the image) and
#                  build/qemu-virt/snic-fw-fault.elf (the fault-test image)
#
# Needs gcc-aarch64-linux-gnu and newlib-source (tools/setup-deps.sh); the
# first build also builds newlib into a per-machine cache outside the clone
# (tools/build-newlib.sh, ~4-5 min once).  Not part of `make all`: the
# qemu test cases (tests/integration/qemu.sh) build it.

QV_CROSS   ?= aarch64-linux-gnu-
QV_CC      := $(QV_CROSS)gcc
QV_BUILD   := $(BUILD)/qemu-virt
QV_ELF     := $(QV_BUILD)/snic-fw.elf
QV_FAULT_ELF := $(QV_BUILD)/snic-fw-fault.elf
# What needs the cross compiler or the newlib cache is evaluated lazily, on
# first use in a recipe, and once: a `make` that builds no qemu target runs
# neither.  (`V = $(eval V := value)$(V)` memoizes a recursive variable.)
QV_NEWLIB_PREFIX = $(eval QV_NEWLIB_PREFIX := $(shell tools/build-newlib.sh --print-prefix 2>/dev/null))$(QV_NEWLIB_PREFIX)
QV_NEWLIB  = $(QV_NEWLIB_PREFIX)/aarch64-none-elf
QV_GCC_INC = $(eval QV_GCC_INC := $(shell $(QV_CC) -print-file-name=include 2>/dev/null))$(QV_GCC_INC)

# Cortex-A72 (a BlueField-2-class core, ARMv8.0: LL/SC atomics).  No
# outline atomics: their run-time LSE check needs Linux's getauxval.
QV_CFLAGS  = $(CSTD) $(OPT) -g $(WARN) -fno-strict-aliasing \
	-mcpu=cortex-a72 -mno-outline-atomics -fno-pie -fno-pic \
	-ffunction-sections -fdata-sections \
	-nostdinc -isystem $(QV_GCC_INC) -isystem $(QV_NEWLIB)/include \
	-Ifirmware/include -Ifirmware/src -Ifirmware -Ihal/include -Ihal/aarch64 \
	-Ihal/virtio -Iboards/qemu-virt -Iboards/common
QV_LDFLAGS := -nostdlib -static -no-pie -T linker/qemu-virt.ld \
	-Wl,--gc-sections -Wl,--no-warn-rwx-segments -Wl,--build-id=none
QV_LDLIBS  = -Wl,--start-group -L$(QV_NEWLIB)/lib -lc -lm -lgcc -Wl,--end-group

# The firmware objects get the same freestanding flags as on every board,
# and link-time optimisation (the top Makefile's FW_LTO).
QV_FW_OBJS := $(FW_SRCS:%.c=$(QV_BUILD)/obj/%.o)
$(QV_FW_OBJS): QV_CFLAGS += $(FW_FREESTANDING) $(FW_OPT) $(FW_LTO)
QV_SRCS    := $(FW_SRCS) $(sort $(wildcard hal/aarch64/*.c hal/virtio/*.c boards/common/*.c)) \
	$(filter-out boards/qemu-virt/main.c,$(sort $(wildcard boards/qemu-virt/*.c)))
QV_OBJS    := $(QV_SRCS:%.c=$(QV_BUILD)/obj/%.o) \
	$(QV_BUILD)/obj/boards/qemu-virt/start.o
QV_MAIN    := $(QV_BUILD)/obj/boards/qemu-virt/main.o
QV_MAIN_FAULT := $(QV_BUILD)/obj/boards/qemu-virt/main-fault.o

.PHONY: qemu newlib
qemu: $(QV_ELF) $(QV_FAULT_ELF)
# Phony: build-newlib.sh returns at once when the cache is built (it builds
# it, or waits for another build, otherwise); objects only order after it.
newlib:
	@tools/build-newlib.sh >/dev/null

$(QV_BUILD)/obj/%.o: %.c | newlib
	@mkdir -p $(@D)
	$(QV_CC) $(QV_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(QV_MAIN_FAULT): boards/qemu-virt/main.c | newlib
	@mkdir -p $(@D)
	$(QV_CC) $(QV_CFLAGS) -DQV_FAULT_TEST $(DEPFLAGS) -c $< -o $@

$(QV_BUILD)/obj/%.o: %.S
	@mkdir -p $(@D)
	$(QV_CC) $(QV_CFLAGS) -D__ASSEMBLER__ $(DEPFLAGS) -c $< -o $@

$(QV_ELF): $(QV_OBJS) $(QV_MAIN) linker/qemu-virt.ld
	$(QV_CC) $(QV_LDFLAGS) $(FW_LDFLAGS) -Wl,-Map,$@.map -o $@ $(QV_OBJS) $(QV_MAIN) $(QV_LDLIBS)
	@$(QV_CROSS)size $@ | tail -n 1 | awk '{ printf "qemu-virt: %s: text %d data %d bss %d bytes\n", "$@", $$1, $$2, $$3 }'

$(QV_FAULT_ELF): $(QV_OBJS) $(QV_MAIN_FAULT) linker/qemu-virt.ld
	$(QV_CC) $(QV_LDFLAGS) $(FW_LDFLAGS) -Wl,-Map,$@.map -o $@ $(QV_OBJS) $(QV_MAIN_FAULT) $(QV_LDLIBS)

# Header dependencies of the image objects (the top Makefile includes only
# those of its own objects).
-include $(wildcard $(patsubst %.o,%.d,$(QV_OBJS) $(QV_MAIN) $(QV_MAIN_FAULT)))
