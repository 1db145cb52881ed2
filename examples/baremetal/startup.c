/* startup.c -- reset handler, vector table and the four memory functions a
 * freestanding C environment must supply, for examples/baremetal.c.
 *
 * No C library is linked (-nostdlib); libgcc supplies the compiler's helpers
 * (64-bit division on the M0, for instance). GCC may emit calls to memcpy,
 * memmove, memset and memcmp even in -ffreestanding code (struct copies, large
 * zero-initialisations), and requires the environment to provide them, so
 * they live here: byte loops, small and obviously correct. */
#include <stdint.h>
#include <stddef.h>

extern uint32_t __data_start[], __data_end[], __data_load[];
extern uint32_t __bss_start[], __bss_end[];
extern char __stack_top[];

int main(void);
void Reset_Handler(void);
void Default_Handler(void);
void SysTick_Handler(void);

void Reset_Handler(void)
{
    uint32_t *src = __data_load, *dst = __data_start;
    while (dst < __data_end) *dst++ = *src++;
    for (dst = __bss_start; dst < __bss_end; ) *dst++ = 0;
    (void)main();
    for (;;) __asm__ volatile ("wfi");
}

void Default_Handler(void)
{
    for (;;) { }
}

/* Cortex-M vector table: initial stack pointer, then the exception handlers.
 * Entries 1..15 are the core's; external interrupts are not used here. */
typedef void (*fw_vector)(void);
__attribute__((section(".isr_vector"), used))
const fw_vector fw_vectors[16] = {
    (fw_vector)(uintptr_t)__stack_top,   /* 0: initial SP (a data address, by design) */
    Reset_Handler,                       /* 1: reset */
    Default_Handler,                     /* 2: NMI */
    Default_Handler,                     /* 3: HardFault */
    Default_Handler, Default_Handler, Default_Handler, /* 4-6: MemManage, BusFault, UsageFault (M3+) */
    0, 0, 0, 0,                          /* 7-10: reserved */
    Default_Handler,                     /* 11: SVCall */
    Default_Handler,                     /* 12: DebugMonitor (M3+) */
    0,                                   /* 13: reserved */
    Default_Handler,                     /* 14: PendSV */
    SysTick_Handler                      /* 15: SysTick */
};

/* ------------------------------------------------ freestanding mem* */
/* GCC turns a byte-copy loop into a call to memcpy (loop distribution), even
 * with -ffreestanding: inside memcpy that would be infinite recursion. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize ("no-tree-loop-distribute-patterns")
#endif
void *memcpy(void *restrict dst, const void *restrict src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);

void *memcpy(void *restrict dst, const void *restrict src, size_t n)
{
    unsigned char *d = (unsigned char *)dst;
    const unsigned char *s = (const unsigned char *)src;
    while (n--) *d++ = *s++;
    return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
    unsigned char *d = (unsigned char *)dst;
    const unsigned char *s = (const unsigned char *)src;
    if (d < s) { while (n--) *d++ = *s++; }
    else { d += n; s += n; while (n--) *--d = *--s; }
    return dst;
}

void *memset(void *dst, int c, size_t n)
{
    unsigned char *d = (unsigned char *)dst;
    while (n--) *d++ = (unsigned char)c;
    return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
    for (; n; n--, x++, y++) if (*x != *y) return *x < *y ? -1 : 1;
    return 0;
}
