# mk/ports.mk -- issue 6: prove the header on the machines its users have.
#
#   make ports            every platform below; one PASS/FAIL line each, then
#                         "ports: N passed, N failed"
#   make ports-<name>     one platform: baremetal-m0 baremetal-m4 recipe win64 m32
#                         armhf s390x powerpc tcc
#
# Nothing is skipped: a missing tool fails its platform with the package to
# install. Output of every run is kept in build/ports/<name>.log.
# See docs/PLATFORMS.md for the table and docs/decisions/0301-*.md for why.

PORTS_B      := $(B)/ports
PORTS_SRC     = $(wildcard tests/core/*.c)
PORTS_INPUTS  = $(PORTS_SRC) $(wildcard tests/core/*.h) $(HDR)
PORTS_NAMES  := baremetal-m0 baremetal-m4 recipe win64 m32 armhf s390x powerpc tcc
PORTS_RUN    := sh tools/ports/check-run.sh

DEPS_PKGS += gcc-arm-none-eabi binutils-arm-none-eabi qemu-system-arm \
             gcc-mingw-w64-x86-64 wine wine64 \
             gcc-12-multilib \
             qemu-user gcc-arm-linux-gnueabihf libc6-dev-armhf-cross \
             gcc-s390x-linux-gnu libc6-dev-s390x-cross \
             gcc-powerpc-linux-gnu libc6-dev-powerpc-cross \
             tcc
DEPS_CMDS += arm-none-eabi-gcc arm-none-eabi-nm arm-none-eabi-size qemu-system-arm \
             x86_64-w64-mingw32-gcc wine wineserver \
             qemu-arm qemu-s390x qemu-ppc qemu-i386 \
             arm-linux-gnueabihf-gcc s390x-linux-gnu-gcc powerpc-linux-gnu-gcc tcc
DEPS_FILES += /usr/lib/wine/wine64 /usr/lib32/libc.so \
              /usr/lib/gcc/x86_64-linux-gnu/*/32/libgcc.a \
              /usr/arm-linux-gnueabihf/lib/libc.a /usr/s390x-linux-gnu/lib/libc.a \
              /usr/powerpc-linux-gnu/lib/libc.a
TEST_TARGETS += ports
# the firmware example also builds for the host (simulated SysTick): make examples runs it
EXAMPLE_TARGETS += examples-ports examples-tasks

# $(call ports-need,COMMAND,PACKAGE): fail loudly when a tool is missing
ports-need = command -v $(1) >/dev/null 2>&1 || { \
  echo "ports: '$(1)' is not installed: apt-get install -y --no-install-recommends $(2)  (or: make deps)" >&2; exit 1; }

.PHONY: ports examples-ports examples-tasks $(addprefix ports-,$(PORTS_NAMES))

examples-tasks: $(B)/examples/firmware_tasks
	@./$(B)/examples/firmware_tasks >$(B)/examples/firmware_tasks.log 2>&1 || { cat $(B)/examples/firmware_tasks.log; exit 1; }; \
	 echo "examples: firmware_tasks (hosted, simulated SysTick): $$(tail -n 1 $(B)/examples/firmware_tasks.log)"
$(B)/examples/baremetal $(B)/examples/firmware_tasks: examples/baremetal/board.h

examples-ports: $(B)/examples/baremetal
	@./$(B)/examples/baremetal >$(B)/examples/baremetal.log 2>&1 || { cat $(B)/examples/baremetal.log; exit 1; }; \
	 echo "examples: baremetal (hosted, simulated SysTick): $$(tail -n 1 $(B)/examples/baremetal.log)"

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
                   -ffunction-sections -fdata-sections \
                   -nostdinc -isystem "$$(arm-none-eabi-gcc -print-file-name=include)"
PORTS_CPU_m0 := -mcpu=cortex-m0 -DFW_CORE_HZ=16000000u
PORTS_CPU_m4 := -mcpu=cortex-m4 -DFW_CORE_HZ=25000000u
PORTS_MACHINE_m0 := microbit
PORTS_MACHINE_m4 := mps2-an386
PORTS_LIBC_OK := ^(memcpy|memmove|memset|memcmp|__aeabi_[A-Za-z0-9_]+|__gnu_[A-Za-z0-9_]+)$$

$(PORTS_B)/ldl-m0.o $(PORTS_B)/ldl-m4.o: $(PORTS_B)/ldl-%.o: $(HDR) mk/ports.mk
	@$(call ports-need,arm-none-eabi-gcc,gcc-arm-none-eabi)
	@mkdir -p $(@D)
	arm-none-eabi-gcc $(PORTS_CPU_$*) $(PORTS_ARM_CFLAGS) \
	  $(PORTS_XW) -DLDL_NO_DEFAULT_CLOCK -DLITE_DI_LOCK_IMPLEMENTATION -x c -c $(HDR) -o $@

# the same as C++11 (firmware is often C++): no exceptions, no RTTI, no libstdc++
$(PORTS_B)/ldl-m0-cxx.o $(PORTS_B)/ldl-m4-cxx.o: $(PORTS_B)/ldl-%-cxx.o: $(HDR) mk/ports.mk
	@$(call ports-need,arm-none-eabi-g++,gcc-arm-none-eabi)
	@mkdir -p $(@D)
	arm-none-eabi-g++ $(PORTS_CPU_$*) $(subst -std=c99,-std=c++11,$(PORTS_ARM_CFLAGS)) \
	  -fno-exceptions -fno-rtti -Wconversion -Wsign-conversion -Wshadow -Wcast-qual -Wundef \
	  -DLDL_NO_DEFAULT_CLOCK -DLITE_DI_LOCK_IMPLEMENTATION -x c++ -c $(HDR) -o $@

$(PORTS_B)/baremetal-m0.elf $(PORTS_B)/baremetal-m4.elf: $(PORTS_B)/baremetal-%.elf: \
    examples/baremetal.c examples/baremetal/startup.c examples/baremetal/cortex-m.ld \
    examples/baremetal/board.h $(HDR) mk/ports.mk
	@$(call ports-need,arm-none-eabi-gcc,gcc-arm-none-eabi)
	@mkdir -p $(@D)
	arm-none-eabi-gcc $(PORTS_CPU_$*) $(PORTS_ARM_CFLAGS) -I. \
	  -nostdlib -T examples/baremetal/cortex-m.ld -Wl,--gc-sections -Wl,-Map=$(@:.elf=.map) \
	  examples/baremetal.c examples/baremetal/startup.c -lgcc -o $@

# the two-task example (examples/firmware_tasks.c: the fence reaches a flash writer that
# refuses a stale one), with the firmware switches, as the recipe builds it
$(PORTS_B)/tasks-m0.elf $(PORTS_B)/tasks-m4.elf: $(PORTS_B)/tasks-%.elf: \
    examples/firmware_tasks.c examples/baremetal/startup.c examples/baremetal/cortex-m.ld \
    examples/baremetal/board.h $(HDR) mk/ports.mk
	@$(call ports-need,arm-none-eabi-gcc,gcc-arm-none-eabi)
	@mkdir -p $(@D)
	arm-none-eabi-gcc $(PORTS_CPU_$*) $(PORTS_ARM_CFLAGS) -DLDL_NO_ASYNC -DLDL_NO_ELECTION -I. \
	  -nostdlib -T examples/baremetal/cortex-m.ld -Wl,--gc-sections \
	  examples/firmware_tasks.c examples/baremetal/startup.c -lgcc -o $@

ports-baremetal-m0 ports-baremetal-m4: ports-baremetal-%: $(PORTS_B)/ldl-%.o $(PORTS_B)/ldl-%-cxx.o \
    $(PORTS_B)/baremetal-%.elf $(PORTS_B)/tasks-%.elf
	@$(call ports-need,arm-none-eabi-nm,binutils-arm-none-eabi)
	@$(call ports-need,qemu-system-arm,qemu-system-arm)
	@undef=$$(arm-none-eabi-nm -u $(PORTS_B)/ldl-$*.o $(PORTS_B)/ldl-$*-cxx.o | awk 'NF == 2 { print $$2 }' | sort -u | tr '\n' ' '); \
	 echo "ports-baremetal-$*: the header (C99 and C++11, freestanding) needs from outside: $${undef:-nothing}"; \
	 bad=$$(for s in $$undef; do echo "$$s"; done | grep -Ev '$(PORTS_LIBC_OK)' | tr '\n' ' '); \
	 if [ -n "$$bad" ]; then echo "ports-baremetal-$*: FAIL: lite_di_lock.h pulls in libc symbols: $$bad" >&2; exit 1; fi; \
	 rw=$$(arm-none-eabi-size $(PORTS_B)/ldl-$*.o | awk 'NR == 2 { print $$2 + $$3 }'); \
	 if [ "$$rw" != 0 ]; then echo "ports-baremetal-$*: FAIL: the header has $$rw bytes of .data/.bss (mutable global state)" >&2; exit 1; fi
	@other=$$(sed -n 's/^LOAD //p' $(PORTS_B)/baremetal-$*.map | grep -Ev '(\.o|/libgcc\.a|^linker stubs)$$'); \
	 if [ -n "$$other" ]; then echo "ports-baremetal-$*: FAIL: the image links more than libgcc: $$other" >&2; exit 1; fi; \
	 echo "ports-baremetal-$*: the firmware image links no C library; libgcc members:" \
	   $$(sed -n '1,/^Discarded input sections/s/^.*libgcc\.a(\(.*\.o\))$$/\1/p' $(PORTS_B)/baremetal-$*.map | sort -u | tr '\n' ' ')
	@sh tools/ports/ldl-size.sh arm-none-eabi-nm arm-none-eabi-size \
	  $(PORTS_B)/ldl-$*.o $(PORTS_B)/baremetal-$*.elf ports-baremetal-$*
	@$(PORTS_RUN) ports-baremetal-$* $(PORTS_B)/baremetal-$*.log "baremetal: OK" \
	  qemu-system-arm -M $(PORTS_MACHINE_$*) \
	  -nographic -monitor none -serial null -icount shift=0,sleep=off \
	  -semihosting-config enable=on,target=native -kernel $(PORTS_B)/baremetal-$*.elf
	@$(PORTS_RUN) ports-baremetal-$* $(PORTS_B)/tasks-$*.log "firmware_tasks: OK" \
	  qemu-system-arm -M $(PORTS_MACHINE_$*) \
	  -nographic -monitor none -serial null -icount shift=0,sleep=off \
	  -semihosting-config enable=on,target=native -kernel $(PORTS_B)/tasks-$*.elf

# The firmware recipe at the top of docs/PLATFORMS.md, run exactly as printed (the lines
# between its recipe markers, in a scratch directory that links the header and examples/):
# it must build the image and print "firmware_tasks: OK" under qemu (issue 35).
ports-recipe:
	@$(call ports-need,arm-none-eabi-gcc,gcc-arm-none-eabi)
	@$(call ports-need,qemu-system-arm,qemu-system-arm)
	@sh tools/ports/recipe.sh docs/PLATFORMS.md $(PORTS_B)/recipe "firmware_tasks: OK"

# ------------------------------------------------------- hosted platforms
# Each builds two programs and runs both:
#   core         the core test suite (tests/core/*.c, one program)
#   clock_check  tools/ports/clock_check.c: the BUILT-IN clock only (the suite
#                uses fake clocks), slept against for real: advances in ms,
#                never backwards, expires MemoryStore leases
#
#   win64    mingw-w64, run under wine: the QueryPerformanceCounter path.
#            The prefix lives in build/ports/wineprefix (first start ~7 s);
#            wineserver is stopped afterwards.
#   m32      $(CC) -m32 with UBSan, run by qemu-i386 (never the host kernel: some
#            kernels have no IA32 emulation). Debian's gcc-multilib conflicts with every
#            cross compiler (all it adds is the /usr/include/asm symlink), so
#            the deps install gcc-12-multilib and asm/ comes via -idirafter.
#   armhf    32-bit little-endian ARM (int64_t split over two registers)
#   s390x    64-bit big-endian
#   powerpc  32-bit big-endian (both at once)
#            Debian cross compilers, static binaries, run by qemu-user.
#   tcc      the Tiny C Compiler, native, with its bounds checker (-b).
PORTS_WINE = env WINEPREFIX="$(abspath $(PORTS_B))/wineprefix" WINEDEBUG=-all \
             WINEDLLOVERRIDES="mscoree,mshtml=" DISPLAY=

# the header's strict-warning set (as in tests/header/check.sh), applied on each
# target to the implementation in clock_check.c: -Wconversion on a 32-bit or
# big-endian target sees conversions that x86-64 hides (tcc has no such flags)
PORTS_XW = -Wconversion -Wsign-conversion -Wshadow -Wcast-qual -Wcast-align \
           -Wstrict-prototypes -Wmissing-prototypes -Wundef

PORTS_CC_win64     = x86_64-w64-mingw32-gcc -std=c99 -O2 $(WARN) -static
PORTS_CC_m32       = $(CC) -std=c99 -O2 $(WARN) -m32 -idirafter /usr/include/x86_64-linux-gnu \
                     -fsanitize=undefined -fno-sanitize-recover=all
PORTS_CC_armhf     = arm-linux-gnueabihf-gcc -std=c99 -O2 $(WARN) -static
PORTS_CC_s390x     = s390x-linux-gnu-gcc -std=c99 -O2 $(WARN) -static
PORTS_CC_powerpc   = powerpc-linux-gnu-gcc -std=c99 -O2 $(WARN) -static
PORTS_CC_tcc       = tcc -std=c99 -Wall -Werror -b
PORTS_EXEC_win64   = $(PORTS_WINE) wine
# never the host kernel: a kernel without IA32 emulation cannot exec i386 (issue 30)
PORTS_EXEC_m32     = qemu-i386
PORTS_EXEC_armhf   = qemu-arm
PORTS_EXEC_s390x   = qemu-s390x
PORTS_EXEC_powerpc = qemu-ppc
PORTS_EXE_win64    = .exe
# what must be installed: "command:package list" pairs, checked before building
PORTS_NEED_win64   = x86_64-w64-mingw32-gcc:gcc-mingw-w64-x86-64 wine:wine,wine64 \
                     /usr/lib/wine/wine64:wine64
PORTS_NEED_m32     = $(firstword $(CC)):build-essential /usr/lib32/libc.so:gcc-12-multilib \
                     /usr/include/x86_64-linux-gnu/asm/errno.h:linux-libc-dev qemu-i386:qemu-user \
                     /lib/ld-linux.so.2:libc6-i386
PORTS_NEED_armhf   = arm-linux-gnueabihf-gcc:gcc-arm-linux-gnueabihf \
                     /usr/arm-linux-gnueabihf/lib/libc.a:libc6-dev-armhf-cross qemu-arm:qemu-user
PORTS_NEED_s390x   = s390x-linux-gnu-gcc:gcc-s390x-linux-gnu \
                     /usr/s390x-linux-gnu/lib/libc.a:libc6-dev-s390x-cross qemu-s390x:qemu-user
PORTS_NEED_powerpc = powerpc-linux-gnu-gcc:gcc-powerpc-linux-gnu \
                     /usr/powerpc-linux-gnu/lib/libc.a:libc6-dev-powerpc-cross qemu-ppc:qemu-user
PORTS_NEED_tcc     = tcc:tcc
PORTS_AFTER_win64  = $(PORTS_WINE) wineserver -k >/dev/null 2>&1

# $(call ports-check,NAME): every "thing:packages" in PORTS_NEED_NAME exists
ports-check = for n in $(PORTS_NEED_$(1)); do t=$${n%%:*}; \
  case $$t in /*) [ -e "$$t" ] ;; *) command -v "$$t" >/dev/null 2>&1 ;; esac || { \
  echo "ports-$(1): '$$t' is missing: apt-get install -y --no-install-recommends \
$$(echo $${n\#*:} | tr , ' ')  (or: make deps)" >&2; exit 1; }; done

define PORTS_HOSTED
$(PORTS_B)/$(1)/core$(PORTS_EXE_$(1)): $$(PORTS_INPUTS) mk/ports.mk
	@$$(call ports-check,$(1))
	@mkdir -p $$(@D)
	$$(PORTS_CC_$(1)) -I. $$(PORTS_SRC) -o $$@

$(PORTS_B)/$(1)/clock_check$(PORTS_EXE_$(1)): tools/ports/clock_check.c $$(HDR) mk/ports.mk
	@$$(call ports-check,$(1))
	@mkdir -p $$(@D)
	$$(PORTS_CC_$(1)) $$(if $$(filter tcc,$(1)),,$$(PORTS_XW)) -I. tools/ports/clock_check.c -o $$@

ports-$(1): $(PORTS_B)/$(1)/core$(PORTS_EXE_$(1)) $(PORTS_B)/$(1)/clock_check$(PORTS_EXE_$(1))
	@$$(call ports-check,$(1))
	@rc=0; \
	 $$(PORTS_RUN) ports-$(1) $(PORTS_B)/$(1)/core.log suite \
	   $$(PORTS_EXEC_$(1)) $(PORTS_B)/$(1)/core$(PORTS_EXE_$(1)) || rc=1; \
	 $$(PORTS_RUN) ports-$(1) $(PORTS_B)/$(1)/clock.log suite \
	   $$(PORTS_EXEC_$(1)) $(PORTS_B)/$(1)/clock_check$(PORTS_EXE_$(1)) || rc=1; \
	 $$(or $$(PORTS_AFTER_$(1)),:); exit $$$$rc
endef
$(foreach p,win64 m32 armhf s390x powerpc tcc,$(eval $(call PORTS_HOSTED,$(p))))

# ---------------------------------------------------------- doc figures
# The footprint figures in README.md and docs/PLATFORMS.md are tagged <!--fp:NAME-->
# and checked against a fresh measurement (bench/footprint.sh and the firmware image):
# more than 5 % off fails (issue 30). `sh tools/doc-figures.sh --write` regenerates them.
TEST_TARGETS += test-docs-figures
.PHONY: test-docs-figures
test-docs-figures:
	@sh tools/doc-figures.sh
