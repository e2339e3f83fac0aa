/*
 * startup.c - the smallest bare-metal start for QEMU's mps2-an386
 * (Cortex-M4F): a vector table, a reset handler that zeroes .bss, turns
 * the FPU on and calls main, semihosting for output and exit, and the
 * DWT cycle counter.  No C library anywhere (-nostdlib).
 */
#include <stdint.h>

extern uint32_t __bss_start[], __bss_end[], __stack_top[];
int main(void);
void reset(void);
static void hang(void) { for (;;) ; }

/* SysTick wraps (every 2^24 ticks of the core clock): QEMU implements no
 * DWT cycle counter, so main.c also times with SysTick */
volatile uint32_t systick_wraps;
static void systick(void) { systick_wraps++; }

__attribute__((section(".vectors"), used))
static void *const vectors[16] = {
	__stack_top, (void *)reset, (void *)hang, (void *)hang, (void *)hang,
	(void *)hang, (void *)hang, 0, 0, 0, 0, (void *)hang, (void *)hang, 0,
	(void *)hang, (void *)systick,
};

/* ARM semihosting: op in r0, argument in r1, BKPT 0xAB. */
static uint32_t semihost(uint32_t op, const void *arg)
{
	register uint32_t r0 __asm__("r0") = op;
	register const void *r1 __asm__("r1") = arg;
	__asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
	return r0;
}

void sh_puts(const char *s)
{
	semihost(0x04, s);   /* SYS_WRITE0 */
}

void sh_exit(int ok)
{
	/* SYS_EXIT: ADP_Stopped_ApplicationExit, or RunTimeErrorUnknown,
	 * which QEMU turns into exit status 0 or 1 */
	semihost(0x18, (const void *)(ok ? 0x20026u : 0x20023u));
	hang();
}

void reset(void)
{
	for (uint32_t *p = __bss_start; p < __bss_end; p++)
		*p = 0;
	*(volatile uint32_t *)0xE000ED88 |= 0xFu << 20;   /* CPACR: CP10, CP11 */
	__asm__ volatile("dsb\n\tisb");
	sh_exit(main() == 0);
}
