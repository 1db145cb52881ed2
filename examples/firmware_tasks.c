/* firmware_tasks.c -- two tasks in a super-loop share one MemoryStore; the fence
 * reaches a "flash writer" that refuses a stale one.
 *
 * A firmware update loop: an updater task (A) and a logger task (B) both write pages of
 * one flash bank, each under the lock "flash:bank0". Every page write carries the
 * writer's fencing token; the flash writer keeps a mark (the highest token it has seen)
 * and refuses a write whose token is below it (an equal token passes: the same holder
 * writing its next page). Nothing runs in the background: the super-loop calls each
 * task's step and sleeps (WFI) for as long as ldl_lock_due_in_ms() allows.
 *
 * The script (simulated milliseconds since boot):
 *     0 ms  A takes the bank (token 1) and writes a page every 100 ms
 *   150 ms  A is preempted for 400 ms (a long erase busy-wait) past its 300 ms TTL
 *   ~400 ms B, retrying every 50 ms, takes the bank (token 2: the MemoryStore saw A's
 *           lease expire by its own clock) and writes its pages; the mark is now 2
 *   550 ms  A wakes and, before it polls, writes its next page with token 1: the flash
 *           writer refuses it (stale); A's next poll says LEASE_EXPIRED, on_lost once
 *   later   B releases; A takes the bank again (token 3) and finishes its pages
 * At the end: the bank holds only pages written under a token >= the mark at the time,
 * exactly one write was refused, every lease is back in the store.
 *
 * Build for a Cortex-M4 board and run it under qemu (docs/PLATFORMS.md, "Recipe"):
 *   arm-none-eabi-gcc -mcpu=cortex-m4 -mthumb -std=c99 -Os -ffreestanding \
 *     -ffunction-sections -fdata-sections -DLDL_NO_ASYNC -DLDL_NO_ELECTION \
 *     -nostdlib -I. -T examples/baremetal/cortex-m.ld -Wl,--gc-sections \
 *     examples/firmware_tasks.c examples/baremetal/startup.c -lgcc -o fw.elf
 *   qemu-system-arm -M mps2-an386 -nographic -monitor none -serial null \
 *     -icount shift=0,sleep=off -semihosting-config enable=on,target=native -kernel fw.elf
 * On a PC (simulated SysTick): cc -std=c99 -I. examples/firmware_tasks.c -o fw && ./fw
 * make ports runs both lines on Cortex-M0 and M4; make examples runs the PC build.
 */
#define LDL_NO_DEFAULT_CLOCK           /* firmware supplies the clock */
#define LITE_DI_LOCK_IMPLEMENTATION
#include "lite_di_lock.h"
#include "examples/baremetal/board.h"

/* --------------------------------------------------------------- the flash */
#define FW_PAGES 8
typedef struct fw_flash {
    int64_t  mark;                     /* the highest token a write carried */
    char     page_owner[FW_PAGES];     /* 'A' or 'B': who wrote the page last */
    int64_t  page_token[FW_PAGES];
    uint32_t accepted, refused;
} fw_flash;

/* the resource's half of the fence protocol: below the mark is stale; equal passes */
static int fw_flash_write(fw_flash *f, unsigned page, char who, int64_t token)
{
    if (token < f->mark || page >= FW_PAGES) { f->refused++; return 0; }
    f->mark = token;
    f->page_owner[page] = who;
    f->page_token[page] = token;
    f->accepted++;
    return 1;
}

/* ------------------------------------------------------------ the scope */
/* One do-nothing container serves every lock: acquire/poll/release never touch it. */
static void *fw_scope(void *self) { return self; }
static int fw_value(void *scope, const char *name, void *value)
{
    (void)scope; (void)name; (void)value;
    return 0;
}
static int fw_shutdown(void *scope) { (void)scope; return 0; }

/* ------------------------------------------------------------ the tasks */
typedef struct fw_task {
    char     name;
    ldl_lock lock;
    uint32_t next_ms;                  /* when the task wants to run next */
    unsigned page;                     /* next page to write */
    unsigned pages_to_write;
    int      lost, lost_reason, stale_seen;
    int64_t  tokens[4];                /* tokens this task was granted, in order */
    unsigned ntokens;
} fw_task;

static ldl_memstore_slot fw_slots[2];  /* all state in .bss: no heap */
static ldl_memstore fw_store;
static fw_clock fw_clk;
static fw_flash fw_bank;
static fw_task fw_a, fw_b;

static void fw_on_lost(void *user, int reason)
{
    fw_task *t = (fw_task *)user;
    t->lost++;
    t->lost_reason = reason;
}

static void fw_say(uint32_t now, const fw_task *t, const char *what, int64_t token)
{
    char who[2];
    who[0] = t->name; who[1] = '\0';
    fw_put_u64(now); board_puts(" ms  "); board_puts(who); board_puts(": "); board_puts(what);
    if (token > 0) { board_puts(" (token "); fw_put_u64((uint64_t)token); board_puts(")"); }
    board_puts("\n");
}

/* One step of a task: take the bank if free, write one page per 100 ms while held,
 * release when done. Returns 1 while the task still has work. */
static int fw_task_step(fw_task *t, uint32_t now)
{
    if (t->page >= t->pages_to_write) return 0;
    if (now < t->next_ms) return 1;
    if (ldl_lock_state(&t->lock) == LDL_LOST) {
        ldl_lock_release(&t->lock);    /* hand the lost lease back (the store may say no) */
        fw_say(now, t, "lost the bank", 0);
    }
    if (!ldl_lock_held(&t->lock)) {
        if (ldl_lock_acquire(&t->lock) != 1) { t->next_ms = now + 50; return 1; }
        if (t->ntokens < 4) t->tokens[t->ntokens++] = ldl_lock_fencing_token(&t->lock);
        fw_say(now, t, "took the bank", ldl_lock_fencing_token(&t->lock));
    }
    if (ldl_lock_poll(&t->lock) != 1) { t->next_ms = now; return 1; }   /* lost: next step */
    if (fw_flash_write(&fw_bank, t->page, t->name, ldl_lock_fencing_token(&t->lock))) t->page++;
    if (t->page >= t->pages_to_write) {
        ldl_lock_release(&t->lock);
        fw_say(now, t, "wrote its pages and released the bank", 0);
        return 0;
    }
    t->next_ms = now + 100;
    return 1;
}

static int fw_task_init(fw_task *t, char name, unsigned first_page, unsigned pages)
{
    ldl_lock_desc d = {
        .container = { .scope = fw_scope, .value = fw_value, .shutdown = fw_shutdown },
        .key = "flash:bank0",
        .ttl_ms = 300,                 /* heartbeat 100 ms, drift 5 ms by default */
        .clock = { .now_ms = fw_now_ms, .ctx = &fw_clk },
        .on_lost = fw_on_lost,
        .user = t,
    };
    ldl_store s = ldl_memstore_store(&fw_store);
    d.store = &s;                      /* copied by init */
    t->name = name;
    t->page = first_page;
    t->pages_to_write = first_page + pages;
    return ldl_lock_init(&t->lock, &d);
}

int main(void);
int main(void)
{
    ldl_clock clock;
    int ok = 1, a_busy, b_busy, preempted = 0;
    uint32_t now = 0;

    board_init();
    fw_clk.last = board_ticks();
    clock.now_ms = fw_now_ms;
    clock.ctx = &fw_clk;
    if (ldl_memstore_init(&fw_store, fw_slots, 2, clock) != LDL_OK
        || fw_task_init(&fw_a, 'A', 0, 4) != LDL_OK
        || fw_task_init(&fw_b, 'B', 4, 4) != LDL_OK) {
        board_puts("init failed\n");
        board_exit(1);
    }
    board_puts("firmware_tasks: lite_di_lock " LDL_VERSION ", two tasks, one MemoryStore\n");
    fw_b.next_ms = 100;                /* the logger starts a little later */

    do {
        uint32_t sleep_ms = 1000, due;
        now = board_ticks();
        a_busy = fw_task_step(&fw_a, now);
        if (!preempted && now >= 150) {
            /* A busy-waits on a flash erase for 400 ms: nothing polls its lock, and B
               (on a timer interrupt, say) keeps running its own steps meanwhile */
            uint32_t t0 = now;
            preempted = 1;
            fw_say(now, &fw_a, "is preempted for 400 ms", 0);
            while ((uint32_t)(board_ticks() - t0) < 400) {
                uint32_t t = board_ticks();
                (void)fw_task_step(&fw_b, t);
                board_idle();
            }
            now = board_ticks();
            /* A resumes where it was: it writes before it polls, with the token it has */
            if (fw_flash_write(&fw_bank, fw_a.page, 'A', ldl_lock_fencing_token(&fw_a.lock)))
                fw_a.page++;
            else {
                fw_a.stale_seen = 1;
                fw_say(now, &fw_a, "wrote with a stale token: the flash refused it",
                       ldl_lock_fencing_token(&fw_a.lock));
            }
            fw_a.next_ms = now;
        }
        b_busy = fw_task_step(&fw_b, now);

        /* sleep as long as both locks and both tasks allow */
        due = ldl_lock_due_in_ms(&fw_a.lock); if (due < sleep_ms) sleep_ms = due;
        due = ldl_lock_due_in_ms(&fw_b.lock); if (due < sleep_ms) sleep_ms = due;
        if (a_busy && fw_a.next_ms > now && fw_a.next_ms - now < sleep_ms) sleep_ms = fw_a.next_ms - now;
        if (b_busy && fw_b.next_ms > now && fw_b.next_ms - now < sleep_ms) sleep_ms = fw_b.next_ms - now;
        if (!preempted && 150 - now < sleep_ms) sleep_ms = 150 - now;
        if (sleep_ms == 0) sleep_ms = 1;
        while ((uint32_t)(board_ticks() - now) < sleep_ms) board_idle();
    } while ((a_busy || b_busy) && now < 10000);

    ldl_lock_dispose(&fw_a.lock);
    ldl_lock_dispose(&fw_b.lock);

    /* what must hold: one refused write (A's stale one), A lost once by its deadline,
       tokens strictly rising in grant order A1 < B1 < A2, the bank written only with
       tokens that were current, and nothing left in the store */
    ok &= fw_bank.refused == 1 && fw_a.stale_seen;
    ok &= fw_a.lost == 1 && fw_a.lost_reason == LDL_REASON_LEASE_EXPIRED && fw_b.lost == 0;
    ok &= fw_a.ntokens == 2 && fw_b.ntokens == 1;
    ok &= fw_a.tokens[0] >= 1 && fw_b.tokens[0] > fw_a.tokens[0] && fw_a.tokens[1] > fw_b.tokens[0];
    ok &= fw_a.page == 4 && fw_b.page == 8 && fw_bank.accepted == 8;
    ok &= fw_bank.mark == fw_a.tokens[1] && fw_bank.page_token[0] == fw_a.tokens[0];
    ok &= fw_bank.page_owner[2] == 'A' && fw_bank.page_token[2] == fw_a.tokens[1];
    ok &= fw_bank.page_owner[7] == 'B' && fw_bank.page_token[7] == fw_b.tokens[0];
    ok &= ldl_memstore_live(&fw_store) == 0;
    board_puts("flash: "); fw_put_u64(fw_bank.accepted); board_puts(" writes accepted, ");
    fw_put_u64(fw_bank.refused); board_puts(" refused; mark "); fw_put_u64((uint64_t)fw_bank.mark);
    board_puts("; A lost its lease "); fw_put_u64((uint64_t)fw_a.lost);
    board_puts(ok ? " time\nfirmware_tasks: OK\n" : " time(s)\nfirmware_tasks: FAILED\n");
    board_exit(ok ? 0 : 1);
    return ok ? 0 : 1;
}
