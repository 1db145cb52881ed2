# mk/ports.mk -- issue 6: prove the header on the machines its users have.
#
#   make ports            every platform below; one PASS/FAIL line each, then
#                         "ports: N passed, N failed"
#   make ports-<name>     one platform: baremetal-m0 baremetal-m4 win64 m32
#                         armhf s390x powerpc tcc
#
# Nothing is skipped: a missing tool fails its platform with the package to
# install. Output of every run is kept in build/ports/<name>.log.
# See docs/PLATFORMS.md for the table and docs/decisions/0301-*.md for why.

PORTS_B      := $(B)/ports
PORTS_SRC     = $(wildcard tests/core/*.c)
PORTS_INPUTS  = $(PORTS_SRC) $(wildcard tests/core/*.h) $(HDR)
PORTS_NAMES  := baremetal-m0 baremetal-m4 win64 m32 armhf s390x powerpc tcc
PORTS_RUN    := sh tools/ports/check-run.sh

DEPS_PKGS += gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm \
             gcc-mingw-w64-x86-64 wine wine64 \
             gcc-12-multilib \
             qemu-user gcc-arm-linux-gnueabihf libc6-dev-armhf-cross \
             gcc-s390x-linux-gnu libc6-dev-s390x-cross \
             gcc-powerpc-linux-gnu libc6-dev-powerpc-cross \
             tcc
DEPS_CMDS += arm-none-eabi-gcc arm-none-eabi-nm arm-none-eabi-size qemu-system-arm \
             x86_64-w64-mingw32-gcc wine wineserver \
             qemu-arm qemu-s390x qemu-ppc \
             arm-linux-gnueabihf-gcc s390x-linux-gnu-gcc powerpc-linux-gnu-gcc tcc
DEPS_FILES += /usr/lib/wine/wine64 /usr/lib32/libc.so \
              /usr/lib/gcc/x86_64-linux-gnu/*/32/libgcc.a \
              /usr/arm-linux-gnueabihf/lib/libc.a /usr/s390x-linux-gnu/lib/libc.a \
              /usr/powerpc-linux-gnu/lib/libc.a
TEST_TARGETS += ports

# $(call ports-need,COMMAND,PACKAGE): fail loudly when a tool is missing
ports-need = command -v $(1) >/dev/null 2>&1 || { \
  echo "ports: '$(1)' is not installed: apt-get install -y --no-install-recommends $(2)  (or: make deps)" >&2; exit 1; }

.PHONY: ports $(addprefix ports-,$(PORTS_NAMES))

ports:
	@mkdir -p $(PORTS_B); pass=0; fail=0; failed=; \
	for p in $(PORTS_NAMES); do \
	  if $(MAKE) --no-print-directory ports-$$p; then pass=$$((pass + 1)); \
	  else fail=$$((fail + 1)); failed="$$failed $$p"; fi; \
	done; \
	[ $$fail = 0 ] || echo "ports: FAILED:$$failed (logs in $(PORTS_B)/)"; \
	echo "ports: $$pass passed, $$fail failed"; [ $$fail = 0 ]

# ------------------------------------------------------------- bare metal
# Cortex-M0 (armv6-m: no divide instruction, no unaligned access) and
# Cortex-M4 (armv7e-m), -ffreestanding, no C library at all (-nostdlib; libgcc
# for the compiler's helpers; examples/baremetal/startup.c has the vector
# table and the four mem* functions GCC may call).
#
# 1. lite_di_lock.h compiled ALONE with -nostdinc and only the compiler's own
#    include directory: proves it includes nothing but <stdint.h>/<stddef.h>.
#    Its undefined symbols must be compiler helpers (__aeabi_*, __gnu_*) or
#    memcpy/memmove/memset/memcmp (GCC's freestanding requirement).
# 2. examples/baremetal.c linked into a firmware image (+ map file).
# 3. The image run under qemu-system-arm (micro:bit = M0, MPS2 AN386 = M4)
#    with semihosting for text and exit status; -icount ... sleep=off lets
#    virtual time jump over WFI, so 2.5 simulated seconds take ~0.1 s.
# 4. The size of the lock's code in the linked image.
PORTS_ARM_CFLAGS = -mthumb -std=c99 -Os $(WARN) -ffreestanding \
                   -ffunction-sections -fdata-sections
PORTS_CPU_m0 := -mcpu=cortex-m0 -DFW_CORE_HZ=16000000u
PORTS_CPU_m4 := -mcpu=cortex-m4 -DFW_CORE_HZ=25000000u
PORTS_MACHINE_m0 := microbit
PORTS_MACHINE_m4 := mps2-an386
PORTS_LIBC_OK := ^(memcpy|memmove|memset|memcmp|__aeabi_[A-Za-z0-9_]+|__gnu_[A-Za-z0-9_]+)$$

$(PORTS_B)/ldl-m0.o $(PORTS_B)/ldl-m4.o: $(PORTS_B)/ldl-%.o: $(HDR) mk/ports.mk
	@$(call ports-need,arm-none-eabi-gcc,gcc-arm-none-eabi libnewlib-arm-none-eabi)
	@mkdir -p $(@D)
	arm-none-eabi-gcc $(PORTS_CPU_$*) $(PORTS_ARM_CFLAGS) \
	  -nostdinc -isystem "$$(arm-none-eabi-gcc -print-file-name=include)" \
	  -DLDL_NO_DEFAULT_CLOCK -DLITE_DI_LOCK_IMPLEMENTATION -x c -c $(HDR) -o $@

$(PORTS_B)/baremetal-m0.elf $(PORTS_B)/baremetal-m4.elf: $(PORTS_B)/baremetal-%.elf: \
    examples/baremetal.c examples/baremetal/startup.c examples/baremetal/cortex-m.ld $(HDR) mk/ports.mk
	@$(call ports-need,arm-none-eabi-gcc,gcc-arm-none-eabi libnewlib-arm-none-eabi)
	@mkdir -p $(@D)
	arm-none-eabi-gcc $(PORTS_CPU_$*) $(PORTS_ARM_CFLAGS) -I. \
	  -nostdlib -T examples/baremetal/cortex-m.ld -Wl,--gc-sections -Wl,-Map=$(@:.elf=.map) \
	  examples/baremetal.c examples/baremetal/startup.c -lgcc -o $@

ports-baremetal-m0 ports-baremetal-m4: ports-baremetal-%: $(PORTS_B)/ldl-%.o $(PORTS_B)/baremetal-%.elf
	@$(call ports-need,arm-none-eabi-nm,binutils-arm-none-eabi)
	@$(call ports-need,qemu-system-arm,qemu-system-arm)
	@undef=$$(arm-none-eabi-nm -u $(PORTS_B)/ldl-$*.o | awk '{ print $$2 }' | tr '\n' ' '); \
	 echo "ports-baremetal-$*: the header needs from outside: $${undef:-nothing}"; \
	 bad=$$(for s in $$undef; do echo "$$s"; done | grep -Ev '$(PORTS_LIBC_OK)' | tr '\n' ' '); \
	 if [ -n "$$bad" ]; then echo "ports-baremetal-$*: FAIL: lite_di_lock.h pulls in libc symbols: $$bad" >&2; exit 1; fi
	@sh tools/ports/ldl-size.sh arm-none-eabi-nm arm-none-eabi-size \
	  $(PORTS_B)/ldl-$*.o $(PORTS_B)/baremetal-$*.elf ports-baremetal-$*
	@$(PORTS_RUN) ports-baremetal-$* $(PORTS_B)/baremetal-$*.log "baremetal: OK" \
	  qemu-system-arm -M $(PORTS_MACHINE_$*) \
	  -nographic -monitor none -serial null -icount shift=0,sleep=off \
	  -semihosting-config enable=on,target=native -kernel $(PORTS_B)/baremetal-$*.elf

# ---------------------------------------------------------------- Windows
# mingw-w64 build of the core suite, run under wine: the QueryPerformanceCounter
# clock path executes. The wine prefix lives in build/ports/wineprefix (its
# first start takes ~7 s); wineserver is stopped afterwards.
PORTS_WINE = env WINEPREFIX="$(abspath $(PORTS_B))/wineprefix" WINEDEBUG=-all \
             WINEDLLOVERRIDES="mscoree,mshtml=" DISPLAY=

$(PORTS_B)/core-win64.exe: $(PORTS_INPUTS) mk/ports.mk
	@$(call ports-need,x86_64-w64-mingw32-gcc,gcc-mingw-w64-x86-64)
	@mkdir -p $(@D)
	x86_64-w64-mingw32-gcc -std=c99 -O2 $(WARN) -I. $(PORTS_SRC) -static -o $@

ports-win64: $(PORTS_B)/core-win64.exe
	@$(call ports-need,wine,wine wine64)
	@test -x /usr/lib/wine/wine64 || { echo "ports-win64: /usr/lib/wine/wine64 missing: apt-get install wine64" >&2; exit 1; }
	@rc=0; $(PORTS_RUN) ports-win64 $(PORTS_B)/core-win64.log suite \
	  $(PORTS_WINE) wine $(PORTS_B)/core-win64.exe || rc=$$?; \
	 $(PORTS_WINE) wineserver -k >/dev/null 2>&1; exit $$rc

# ----------------------------------------------------------------- 32-bit
# gcc -m32 with UBSan. Debian's gcc-multilib conflicts with every cross
# compiler (it only adds the /usr/include/asm symlink), so the deps install
# gcc-12-multilib and the build finds asm/ through -idirafter instead.
PORTS_M32_FLAGS := -m32 -idirafter /usr/include/x86_64-linux-gnu \
                   -fsanitize=undefined -fno-sanitize-recover=all

$(PORTS_B)/core-m32: $(PORTS_INPUTS) mk/ports.mk
	@test -e /usr/lib32/libc.so || { echo "ports-m32: no 32-bit libc: apt-get install gcc-12-multilib" >&2; exit 1; }
	@mkdir -p $(@D)
	$(CC) -std=c99 -O2 $(WARN) $(PORTS_M32_FLAGS) -I. $(PORTS_SRC) -o $@

ports-m32: $(PORTS_B)/core-m32
	@$(PORTS_RUN) ports-m32 $(PORTS_B)/core-m32.log suite $(PORTS_B)/core-m32

# ------------------------------------------------------ qemu-user targets
# Debian cross compilers, static binaries, run by qemu-user:
#   armhf    32-bit little-endian ARM (int64_t split over two registers)
#   s390x    64-bit big-endian
#   powerpc  32-bit big-endian (both at once)
PORTS_CROSS_armhf   := arm-linux-gnueabihf-gcc
PORTS_CROSS_s390x   := s390x-linux-gnu-gcc
PORTS_CROSS_powerpc := powerpc-linux-gnu-gcc
PORTS_QEMU_armhf    := qemu-arm
PORTS_QEMU_s390x    := qemu-s390x
PORTS_QEMU_powerpc  := qemu-ppc
PORTS_PKG_armhf     := gcc-arm-linux-gnueabihf libc6-dev-armhf-cross
PORTS_PKG_s390x     := gcc-s390x-linux-gnu libc6-dev-s390x-cross
PORTS_PKG_powerpc   := gcc-powerpc-linux-gnu libc6-dev-powerpc-cross

$(PORTS_B)/core-armhf $(PORTS_B)/core-s390x $(PORTS_B)/core-powerpc: $(PORTS_B)/core-%: $(PORTS_INPUTS) mk/ports.mk
	@$(call ports-need,$(PORTS_CROSS_$*),$(PORTS_PKG_$*))
	@mkdir -p $(@D)
	$(PORTS_CROSS_$*) -std=c99 -O2 $(WARN) -static -I. $(PORTS_SRC) -o $@

ports-armhf ports-s390x ports-powerpc: ports-%: $(PORTS_B)/core-%
	@$(call ports-need,$(PORTS_QEMU_$*),qemu-user)
	@$(PORTS_RUN) ports-$* $(PORTS_B)/core-$*.log suite $(PORTS_QEMU_$*) $(PORTS_B)/core-$*

# -------------------------------------------------------------------- tcc
$(PORTS_B)/core-tcc: $(PORTS_INPUTS) mk/ports.mk
	@$(call ports-need,tcc,tcc)
	@mkdir -p $(@D)
	tcc -std=c99 -Wall -Werror -I. $(PORTS_SRC) -o $@

ports-tcc: $(PORTS_B)/core-tcc
	@$(PORTS_RUN) ports-tcc $(PORTS_B)/core-tcc.log suite $(PORTS_B)/core-tcc
