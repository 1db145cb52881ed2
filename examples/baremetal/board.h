/* examples/baremetal/board.h -- the board layer of the firmware examples
 * (examples/baremetal.c, examples/firmware_tasks.c): a 1 kHz SysTick counter, WFI,
 * semihosting text and exit on a Cortex-M part; a simulated SysTick on a PC.
 * Include it once, after lite_di_lock.h, in the one .c file of a firmware image.
 */
#ifndef FW_BOARD_H
#define FW_BOARD_H
#include <stdint.h>
#include <stddef.h>

/* ------------------------------------------------------------------ board */
/* Four things the firmware needs from the board: a free-running millisecond
 * counter (32 bits, wraps after 49 days), a way to sleep until the next
 * interrupt, a line of text out, and a way to stop. */
static void board_init(void);
static uint32_t board_ticks(void);
static void board_idle(void);
static void board_puts(const char *s);
static void board_exit(int code);

#if defined(__arm__) && !defined(__linux__) && !defined(_WIN32)
/* Cortex-M: SysTick at 1 kHz from the core clock. */
#ifndef FW_CORE_HZ
#define FW_CORE_HZ 25000000u           /* MPS2 FPGA images; micro:bit runs at 16 MHz */
#endif
#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)

static volatile uint32_t fw_systick_ms;
void SysTick_Handler(void);            /* named in the vector table (startup.c) */
void SysTick_Handler(void) { fw_systick_ms++; }

static void board_init(void)
{
    SYST_RVR = FW_CORE_HZ / 1000u - 1u;
    SYST_CVR = 0;
    SYST_CSR = 7u;                     /* CLKSOURCE = core, TICKINT, ENABLE */
}
static uint32_t board_ticks(void) { return fw_systick_ms; } /* one 32-bit load: atomic */
static void board_idle(void) { __asm__ volatile ("wfi"); }

/* ARM semihosting: a debugger (or qemu -semihosting) services BKPT 0xAB. On a
 * board with no debugger attached, build with -DFW_NO_SEMIHOSTING. */
#ifndef FW_NO_SEMIHOSTING
static int fw_semihost(int op, const void *arg)
{
    register int r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile ("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}
static void board_puts(const char *s) { (void)fw_semihost(0x04 /* SYS_WRITE0 */, s); }
static void board_exit(int code)
{
    /* SYS_EXIT: ADP_Stopped_ApplicationExit for success, RunTimeErrorUnknown
     * otherwise (32-bit semihosting carries no exit code, only the reason). */
    (void)fw_semihost(0x18, (const void *)(uintptr_t)(code == 0 ? 0x20026u : 0x20023u));
    for (;;) board_idle();
}
#else
static void board_puts(const char *s) { (void)s; }
static void board_exit(int code) { (void)code; for (;;) board_idle(); }
#endif

#else
/* Hosted: a simulated SysTick. board_idle() stands for one WFI that the next
 * 1 ms tick wakes up, so simulated time passes only while the firmware sleeps. */
#include <stdio.h>
#include <stdlib.h>
static uint32_t fw_sim_ms;
static void board_init(void) { fw_sim_ms = 0; }
static uint32_t board_ticks(void) { return fw_sim_ms; }
static void board_idle(void) { fw_sim_ms++; }
static void board_puts(const char *s) { fputs(s, stdout); }
static void board_exit(int code) { fflush(stdout); exit(code); }
#endif

/* ------------------------------------------------------------------ clock */
/* The ldl_clock of a firmware: the 32-bit tick counter widened to 64 bits. Only the
 * main loop calls the library, so this state needs no locking. The lock trusts a lease
 * for ttl_ms - drift_ms from a clock read taken before the store call, so the clock
 * must tick in steps well under drift_ms: here 1 ms against a default drift of 5 ms at
 * ttl 300 ms (ttl / 100 + 2). */
typedef struct fw_clock { uint32_t last; uint64_t high; } fw_clock;

static uint64_t fw_now_ms(void *ctx)
{
    fw_clock *c = (fw_clock *)ctx;
    uint32_t t = board_ticks();
    if (t < c->last) c->high += (uint64_t)1 << 32;  /* the counter wrapped */
    c->last = t;
    return c->high | t;
}

/* ------------------------------------------------------------------ text */
static void fw_put_u64(uint64_t v)
{
    char buf[24];
    size_t i = sizeof buf - 1;
    buf[i] = '\0';
    do { buf[--i] = (char)('0' + (int)(v % 10u)); v /= 10u; } while (v != 0 && i > 0);
    board_puts(&buf[i]);
}
#endif
