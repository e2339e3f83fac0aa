/*
 * main.c - run a freestanding module on the emulated Cortex-M4 and compare
 * its outputs with the ONNX reference (ref.h, written by refh), as burncc
 * check does: |got - want| <= 1e-5 + 1e-3 |want|, NaN equal to NaN.
 * Prints, through semihosting, one line the test reads:
 *   PASS cycles=N systicks=T stack=B arena=A   (FAIL ...: the first mismatch)
 * cycles: the DWT cycle counter around model_run_v, which QEMU does not
 * implement (it reads 0 there; on a real Cortex-M4 it is the cycles);
 * systicks: SysTick's core-clock ticks over the same run, which under
 * QEMU's -icount shift=0 (one instruction per virtual nanosecond, a
 * 25 MHz clock) is the instructions executed / 40: an instruction count,
 * not a cycle count (docs/BENCHMARKS.md).  stack: the deepest the stack
 * went, from its top (reset, main and the run), by a painted pattern.
 */
#include <stdint.h>
#include "model.h"
#include "ref.h"

void sh_puts(const char *s);
extern uint32_t __stack_bottom[], __stack_top[];
extern volatile uint32_t systick_wraps;

static unsigned char arena[MODEL_ARENA_BYTES ? MODEL_ARENA_BYTES : 1]
	__attribute__((aligned(MODEL_ARENA_ALIGN)));
static float out[MODEL_NUM_OUTPUTS][8192];

#define DEMCR    (*(volatile uint32_t *)0xE000EDFC)
#define DWT_CTRL (*(volatile uint32_t *)0xE0001000)
#define DWT_CYC  (*(volatile uint32_t *)0xE0001004)
#define SYST_CSR (*(volatile uint32_t *)0xE000E010)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018)

/* Core clock ticks counted by SysTick (down from 2^24 - 1, wraps counted
 * by its interrupt), read consistently. */
static uint32_t ticks(void)
{
	uint32_t w, v;

	do {
		w = systick_wraps;
		v = SYST_CVR;
	} while (w != systick_wraps);
	return (w << 24) + (0xFFFFFFu - v);
}

static char *put_u(char *p, const char *label, uint32_t v)
{
	char d[12];
	int n = 0;

	while (*label)
		*p++ = *label++;
	do
		d[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (n)
		*p++ = d[--n];
	*p = 0;
	return p;
}

static float absf(float x) { return x < 0 ? -x : x; }

int main(void)
{
	void *outs[MODEL_NUM_OUTPUTS];
	char line[160], *p = line;
	uint32_t t0, t1, s0, s1, *sp, *w;
	int ok = 1, rc;
	long bad = -1;

	/* paint the stack below this frame, leaving 256 bytes */
	sp = (uint32_t *)__builtin_frame_address(0) - 64;
	for (w = __stack_bottom; w < sp; w++)
		*w = 0x5a5aa5a5u;
	for (int i = 0; i < MODEL_NUM_OUTPUTS; i++)
		outs[i] = out[i];
	DEMCR |= 1u << 24;      /* TRCENA */
	DWT_CYC = 0;
	DWT_CTRL |= 1u;         /* CYCCNTENA */
	SYST_RVR = 0xFFFFFFu;
	SYST_CVR = 0;
	SYST_CSR = 7;           /* enable, interrupt, core clock */
	while (SYST_CVR == 0)   /* loaded from RVR at its first tick */
		;
	s0 = ticks();
	t0 = DWT_CYC;
	rc = model_run_v(ref_inputs, outs, arena);
	t1 = DWT_CYC;
	s1 = ticks();
	for (w = __stack_bottom; w < sp && *w == 0x5a5aa5a5u; w++)
		;
	for (int i = 0; i < MODEL_NUM_OUTPUTS && !rc; i++) {
		const float *want = (const float *)(const void *)ref_outputs[i];
		long n = ref_output_bytes[i] / 4;
		if (ref_output_bytes[i] > (long)sizeof out[i] || ref_output_bytes[i] !=
		    (long)model_outputs[i].bytes) {
			ok = 0;
			break;
		}
		for (long j = 0; j < n; j++) {
			float a = out[i][j], b = want[j];
			int nan = a != a && b != b;
			if (!nan && !(absf(a - b) <= 1e-5f + 1e-3f * absf(b))) {
				ok = 0;
				if (bad < 0)
					bad = j;
			}
		}
	}
	ok = ok && rc == 0;
	p = put_u(p, ok ? "PASS cycles=" : "FAIL cycles=", t1 - t0);
	p = put_u(p, " systicks=", s1 - s0);
	p = put_u(p, " stack=", (uint32_t)((char *)__stack_top - (char *)w));
	p = put_u(p, " arena=", MODEL_ARENA_BYTES);
	if (!ok)
		p = put_u(p, rc ? " rc=" : " first_bad=", rc ? (uint32_t)rc : (uint32_t)bad);
	*p++ = '\n';
	*p = 0;
	sh_puts(line);
	return !ok;
}
