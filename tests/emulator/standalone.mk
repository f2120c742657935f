# standalone.mk - build the NCCL emulator and its fixture plugins with plain
# gcc, outside the autotools build (which uses tests/emulator/Makefile.inc).
#
#   make -f tests/emulator/standalone.mk [O=/tmp/nccl-emu] [SIM=0] [TABLE=0]
#   $(O)/nccl-emu --plugin $PWD/tuner/libnccl-tuner-bot.so
#
# Run from the repository root. SIM=0 builds without sim/sim*.c (internal
# cost model), TABLE=0 without common/table_*.c (no step tables).
O ?= /tmp/nccl-emu
SIM ?= 1
TABLE ?= 1
CC ?= gcc
CFLAGS ?= -O2 -g
EMU_CFLAGS = -std=c11 -D_GNU_SOURCE -Wall -Wextra -I. $(CFLAGS)

EMU_SRC = tests/emulator/emu_main.c tests/emulator/emu_rank.c tests/emulator/emu_cost.c \
	tests/emulator/emu_table.c tests/emulator/emu_alloc.c tests/emulator/emu_loop.c
EMU_DEPS = $(EMU_SRC) tests/emulator/emu.h tests/emulator/nccl_abi.h
LIB_SRC =
LIBS = -ldl -lpthread
# nccl-emu answers ncclGetVersion() like libnccl, for the plugin to find
EMU_LDFLAGS = -Wl,--export-dynamic-symbol=ncclGetVersion
ifeq ($(SIM),1)
LIB_SRC += sim/sim.c sim/sim_auto.c sim/sim_model.c sim/sim_calib.c sim/sim_family.c common/sweep.c
else
EMU_CFLAGS += -DEMU_NO_SIM
endif
ifeq ($(TABLE),1)
LIB_SRC += common/table_decode.c common/table_encode.c
else
EMU_CFLAGS += -DEMU_NO_TABLE
endif
ifneq ($(LIB_SRC),)
LIB_SRC += $(wildcard policies/*.c)
LIBS += -lm
endif

FIXTURES = good noop nosym bad_regbuff bad_counter bad_prof bad_cap
FIX_SO = $(patsubst %,$(O)/fixture-%.so,$(FIXTURES))

all: $(O)/nccl-emu $(FIX_SO)

$(O)/nccl-emu: $(EMU_DEPS) $(LIB_SRC)
	@mkdir -p $(O)
	$(CC) $(EMU_CFLAGS) $(EMU_LDFLAGS) -o $@ $(EMU_SRC) $(LIB_SRC) $(LIBS)

$(O)/fixture-%.so: tests/emulator/fixture.c tests/emulator/nccl_abi.h
	@mkdir -p $(O)
	$(CC) $(EMU_CFLAGS) -fPIC -shared -DFIX_$(shell echo $* | tr a-z A-Z) -o $@ $<

clean:
	rm -f $(O)/nccl-emu $(FIX_SO)

.PHONY: all clean
