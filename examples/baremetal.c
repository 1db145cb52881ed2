/* baremetal.c -- lite_di_lock.h in firmware: no OS, no heap, no libc.
 *
 * A firmware-style main loop on a Cortex-M part. Two tasks share one I2C bus;
 * each owns an ldl_lock on the key "bus:i2c0" in one in-process MemoryStore.
 * Time comes from a SysTick-driven millisecond counter handed to the library
 * through an ldl_clock; the header's built-in clock is compiled out with
 * LDL_NO_DEFAULT_CLOCK. Nothing runs in the background: the loop calls
 * ldl_lock_poll() and sleeps (WFI) for as long as ldl_lock_due_in_ms() allows.
 *
 * The script (simulated milliseconds since boot):
 *     0 ms  task A takes the bus (token 1); task B is refused while A holds it
 *  1000 ms  task A releases; task B takes the bus (token 2)
 *  1400 ms  task B "hangs" for 500 ms (a stuck sensor read) and polls nothing
 *  1900 ms  B's first poll sees that its local lease deadline has passed: LOST,
 *           reason LEASE_EXPIRED, on_lost fires once; the store was not asked
 *  1900 ms  task A takes the bus again (token 3: fencing tokens only go up)
 *  2500 ms  done: A releases, the firmware checks what it saw and reports
 *
 * Build for a board (see mk/ports.mk, target ports-baremetal):
 *   arm-none-eabi-gcc -mcpu=cortex-m0 -mthumb -std=c99 -Os -ffreestanding
 *     -nostdlib -I. -T examples/baremetal/cortex-m.ld
 *     examples/baremetal.c examples/baremetal/startup.c -lgcc -o fw.elf
 * It also runs under qemu-system-arm (-M microbit for the M0, -M mps2-an386 for
 * the M4) with ARM semihosting for its text output and exit status.
 *
 * Built for a hosted system (any cc, no ARM), the same code runs against a
 * simulated SysTick so the script can be checked on a PC:
 *   cc -std=c99 -I. examples/baremetal.c -o baremetal && ./baremetal
 */
#define LDL_NO_DEFAULT_CLOCK           /* firmware supplies the clock */
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"

#include <stdint.h>
#include <stddef.h>

#include "examples/baremetal/board.h"

/* -------------------------------------------------------------- container */
/* Firmware has no DI container: a scope that binds nothing is enough for
 * ldl_lock_run(); acquire/poll/release never touch it. */
static void *fw_scope(void *self) { return self; }
static int fw_value(void *scope, const char *name, void *value)
{
    (void)scope; (void)name; (void)value;
    return 0;
}
static int fw_shutdown(void *scope) { (void)scope; return 0; }

/* ------------------------------------------------------------------ log */
static void fw_log(uint32_t t, const char *who, const char *what, int64_t token)
{
    fw_put_u64(t); board_puts(" ms  "); board_puts(who); board_puts(": ");
    board_puts(what);
    if (token > 0) { board_puts(" (token "); fw_put_u64((uint64_t)token); board_puts(")"); }
    board_puts("\n");
}

/* ---------------------------------------------------------------- firmware */
#define FW_SLOTS 4
static ldl_memstore_slot fw_slots[FW_SLOTS];   /* all state in .bss: no heap */
static ldl_memstore fw_store;
static fw_clock fw_clk;
static ldl_lock fw_task_a, fw_task_b;

static int fw_lost_count, fw_lost_reason;
static void fw_on_lost(void *user, int reason)
{
    (void)user;
    fw_lost_count++;
    fw_lost_reason = reason;
}

static int fw_lock_init(ldl_lock *lock, ldl_store store)
{
    /* every field left out is zero, and zero means "the default" */
    ldl_lock_desc d = {
        .container = { .scope = fw_scope, .value = fw_value, .shutdown = fw_shutdown },
        .key = "bus:i2c0",
        .ttl_ms = 300,                 /* heartbeat 100 ms, drift 5 ms by default */
        .store = &store,               /* the struct is copied by init */
        .clock = { .now_ms = fw_now_ms, .ctx = &fw_clk },
        .on_lost = fw_on_lost,
    };
    return ldl_lock_init(lock, &d);
}

int main(void);
int main(void)
{
    ldl_clock clock;
    int64_t tok_a1 = 0, tok_b = 0, tok_a2 = 0;
    int refused_b = 0, ok = 1, phase = 0;
    uint32_t t = 0, b_next_try = 0, renewals = 0;

    board_init();
    fw_clk.last = board_ticks();
    fw_clk.high = 0;
    clock.now_ms = fw_now_ms;
    clock.ctx = &fw_clk;
    if (ldl_memstore_init(&fw_store, fw_slots, FW_SLOTS, clock) != LDL_OK
        || fw_lock_init(&fw_task_a, ldl_memstore_store(&fw_store)) != LDL_OK
        || fw_lock_init(&fw_task_b, ldl_memstore_store(&fw_store)) != LDL_OK) {
        board_puts("init failed\n");
        board_exit(1);
    }
    board_puts("baremetal: lite_di_lock " LDL_VERSION " on a SysTick clock\n");

    if (ldl_lock_acquire(&fw_task_a) == 1) {
        tok_a1 = ldl_lock_fencing_token(&fw_task_a);
        fw_log(0, "A", "took the bus", tok_a1);
    } else {
        ok = 0;
    }

    for (;;) {
        uint32_t sleep_ms;
        t = board_ticks();

        /* task A: hold the bus until 1000 ms, then again after B's loss */
        if (ldl_lock_held(&fw_task_a)) {
            int64_t before = ldl_lock_fencing_token(&fw_task_a);
            uint32_t valid = ldl_lock_valid_ms(&fw_task_a);
            if (ldl_lock_poll(&fw_task_a) != 1) ok = 0;
            if (ldl_lock_valid_ms(&fw_task_a) > valid) renewals++;
            if (ldl_lock_fencing_token(&fw_task_a) != before) ok = 0;
        }
        if (phase == 0 && t >= 1000) {
            ok &= ldl_lock_release(&fw_task_a) == 1;
            fw_log(t, "A", "released the bus", 0);
            phase = 1;
        }

        /* task B: try every 50 ms while it does not hold the bus */
        if (phase <= 1 && !ldl_lock_held(&fw_task_b) && t >= b_next_try) {
            if (ldl_lock_acquire(&fw_task_b) == 1) {
                tok_b = ldl_lock_fencing_token(&fw_task_b);
                fw_log(t, "B", "took the bus", tok_b);
                phase = 2;
            } else {
                refused_b++;
            }
            b_next_try = t + 50;
        }
        if (phase == 2 && ldl_lock_held(&fw_task_b)) {
            if (t >= 1400) {
                /* B is stuck in a sensor read for 500 ms: nobody polls it */
                fw_log(t, "B", "stalls for 500 ms", 0);
                while ((uint32_t)(board_ticks() - t) < 500) board_idle();
                t = board_ticks();
                if (ldl_lock_poll(&fw_task_b) != 0) ok = 0;
                fw_log(t, "B", ldl_reason_name(ldl_lock_reason(&fw_task_b)), 0);
                ok &= ldl_lock_release(&fw_task_b) >= 0;  /* hand the stale lease back */
                phase = 3;
            } else if (ldl_lock_poll(&fw_task_b) != 1) {
                ok = 0;
            }
        }
        if (phase == 3) {
            if (ldl_lock_acquire(&fw_task_a) == 1) {
                tok_a2 = ldl_lock_fencing_token(&fw_task_a);
                fw_log(t, "A", "took the bus again", tok_a2);
            } else {
                ok = 0;
            }
            phase = 4;
        }
        if (phase == 4 && t >= 2500) break;

        /* sleep as long as the lock allows, at most until the next B attempt */
        sleep_ms = ldl_lock_due_in_ms(&fw_task_a);
        if (phase <= 1 && !ldl_lock_held(&fw_task_b)) {
            uint32_t until_b = b_next_try > t ? b_next_try - t : 0;
            if (until_b < sleep_ms) sleep_ms = until_b;
        }
        if (phase == 2 && ldl_lock_due_in_ms(&fw_task_b) < sleep_ms)
            sleep_ms = ldl_lock_due_in_ms(&fw_task_b);
        if (phase == 0 && 1000 - t < sleep_ms) sleep_ms = 1000 - t;
        if (phase == 2 && t < 1400 && 1400 - t < sleep_ms) sleep_ms = 1400 - t;
        if (phase == 4 && 2500 - t < sleep_ms) sleep_ms = 2500 - t;
        if (sleep_ms == 0) sleep_ms = 1;
        while ((uint32_t)(board_ticks() - t) < sleep_ms) board_idle();
    }

    ok &= ldl_lock_release(&fw_task_a) == 1;
    fw_log(t, "A", "released the bus", 0);
    ldl_lock_dispose(&fw_task_a);
    ldl_lock_dispose(&fw_task_b);

    ok &= tok_a1 >= 1 && tok_b > tok_a1 && tok_a2 > tok_b;
    ok &= refused_b >= 1 && renewals >= 5;
    ok &= fw_lost_count == 1 && fw_lost_reason == LDL_REASON_LEASE_EXPIRED;
    ok &= ldl_memstore_live(&fw_store) == 0;
    board_puts("B was refused "); fw_put_u64((uint64_t)refused_b);
    board_puts(" times; A renewed "); fw_put_u64(renewals);
    board_puts(" times; on_lost fired "); fw_put_u64((uint64_t)fw_lost_count);
    board_puts(ok ? " time\nbaremetal: OK\n" : " time(s)\nbaremetal: FAILED\n");
    board_exit(ok ? 0 : 1);
    return ok ? 0 : 1;
}
