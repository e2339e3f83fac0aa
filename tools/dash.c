/*
 * dash.c - the training dashboard of dash.h, drawn with ncurses.
 *
 * The screen, top to bottom: the title (model, optimiser); the epoch, the
 * step, steps/s, elapsed time and ETA; a progress bar over the run's
 * steps; the latest numbers (train loss as the mean of the last steps,
 * test loss and accuracy of the last epoch, learning rate); the plot tabs;
 * one text plot; the keys.  Every plot's x axis is the run's steps, 0 to
 * the last, so a plot fills from the left as the run goes and the test
 * points (one per epoch, 'o') sit above the step that ended their epoch.
 * A column of the plot is the mean of the steps it covers.
 *
 * Only ASCII is drawn (no line-drawing characters): what a terminal
 * shows, tmux's capture-pane reads back the same (tests/train/dash_tmux.sh).
 * The terminal is in raw mode while the dashboard is open, so Ctrl-C is a
 * key like q (a clean stop) instead of a signal that would leave the
 * terminal in raw mode.  Keys are read, without blocking, when the screen
 * is redrawn: at most ten times a second, so a step costs one clock read.
 */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include "tools/dash.h"

#ifndef BURN_HAVE_CURSES

Dash *dash_open(const DashInfo *info) { (void)info; return NULL; }
int dash_step(Dash *d, int e, int64_t s, double l, double r)
{
	(void)d, (void)e, (void)s, (void)l, (void)r;
	return 0;
}
void dash_evaluating(Dash *d) { (void)d; }
void dash_epoch(Dash *d, int e, int64_t s, double l, double a)
{
	(void)d, (void)e, (void)s, (void)l, (void)a;
}
void dash_log(Dash *d, const char *line) { (void)d, (void)line; }
void dash_close(Dash *d) { (void)d; }

#else

#include <curses.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { PLOT_LOSS, PLOT_ACC, PLOT_LR, NPLOT };
static const char *const plot_name[NPLOT] = { "loss", "accuracy", "learning rate" };

/* the train loss shown as a number: the mean of this many last steps */
#define LOSS_WINDOW 50

struct Dash {
	SCREEN *scr;
	DashInfo in;
	int plot, quit, evaluating, epoch;
	double t0, drawn;
	int64_t step;              /* the last step reported */
	double lr;
	/* per step since in.first_step: loss and learning rate */
	float *loss, *lrs;
	int64_t n, cap;
	/* per epoch: the step that ended it, test loss, accuracy */
	int64_t *ep_step;
	double *ep_loss, *ep_acc;
	int nep, epcap;
	char **log;
	int nlog, logcap;
};

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

Dash *dash_open(const DashInfo *info)
{
	Dash *d;

	if (!isatty(0) || !isatty(1) || !getenv("TERM"))
		return NULL;
	if (!(d = calloc(1, sizeof *d)))
		return NULL;
	d->in = *info;
	d->step = info->first_step;
	/* newterm, not initscr: a terminal terminfo lacks is NULL here, where
	 * initscr would exit */
	if (!(d->scr = newterm(NULL, stdout, stdin))) {
		free(d);
		return NULL;
	}
	raw();
	noecho();
	nodelay(stdscr, TRUE);
	keypad(stdscr, TRUE);
	curs_set(0);
	d->t0 = now_s();
	d->drawn = -1;
	return d;
}

static void clock_str(char *b, size_t n, double s)
{
	long t = s > 0 && s < 1e8 ? (long)(s + 0.5) : 0;
	if (t >= 3600)
		snprintf(b, n, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
	else
		snprintf(b, n, "%ld:%02ld", t / 60, t % 60);
}

/* The value of column j of w: the mean of the steps it covers (NAN: none). */
static double column(const Dash *d, const float *v, int j, int w)
{
	int64_t T = d->in.total_steps, a = T * j / w, b = T * (j + 1) / w;
	double s = 0;
	int64_t k = 0;

	if (b <= a)
		b = a + 1;
	/* step t (1-based) is v[t - 1 - first_step] */
	for (int64_t t = a + 1; t <= b; t++) {
		int64_t i = t - 1 - d->in.first_step;
		if (i >= 0 && i < d->n && isfinite(v[i])) {
			s += v[i];
			k++;
		}
	}
	return k ? s / (double)k : NAN;
}

static int col_of(const Dash *d, int64_t step, int w)
{
	int64_t T = d->in.total_steps > 0 ? d->in.total_steps : 1;
	int64_t j = (step - 1) * w / T;
	return (int)(j < 0 ? 0 : j >= w ? w - 1 : j);
}

static void plot(Dash *d, int top, int h, int w)
{
	const int lm = 10;           /* the y labels' width, then '|' */
	int pw = w - lm - 2, ph = h - 1;
	double lo = INFINITY, hi = -INFINITY;
	double *col;
	const float *series = d->plot == PLOT_LOSS ? d->loss : d->plot == PLOT_LR ? d->lrs : NULL;
	const double *pts = d->plot == PLOT_LOSS ? d->ep_loss : d->plot == PLOT_ACC ? d->ep_acc : NULL;
	double scale = d->plot == PLOT_ACC ? 100 : 1;

	if (pw < 10 || ph < 3 || !(col = malloc(sizeof *col * (size_t)pw)))
		return;
	for (int j = 0; j < pw; j++) {
		col[j] = series ? column(d, series, j, pw) : NAN;
		if (isfinite(col[j])) {
			lo = fmin(lo, col[j]);
			hi = fmax(hi, col[j]);
		}
	}
	for (int e = 0; pts && e < d->nep; e++)
		if (isfinite(pts[e])) {
			lo = fmin(lo, pts[e] * scale);
			hi = fmax(hi, pts[e] * scale);
		}
	if (!(lo <= hi)) {
		mvprintw(top + ph / 2, lm + 2, "(no data yet)");
		lo = 0, hi = 1;
	} else if (hi - lo < 1e-12 * fmax(1, fabs(hi))) {
		lo -= fmax(1e-3, fabs(lo) * 0.05);
		hi += fmax(1e-3, fabs(hi) * 0.05);
	}
	for (int r = 0; r < ph; r++)
		mvaddch(top + r, lm + 1, '|');
	mvaddch(top + ph, lm + 1, '+');
	for (int j = 0; j < pw; j++)
		mvaddch(top + ph, lm + 2 + j, '-');
	mvprintw(top, 0, "%9.4g", hi);
	mvprintw(top + (ph - 1) / 2, 0, "%9.4g", (lo + hi) / 2);
	mvprintw(top + ph - 1, 0, "%9.4g", lo);
	mvprintw(top + ph, 0, "%9s", "step");
	{
		char b[32];
		int n = snprintf(b, sizeof b, "%lld", (long long)d->in.total_steps);
		mvprintw(top + ph, lm + 2, "0");
		if (pw > n + 2)
			mvprintw(top + ph, lm + 2 + pw - n, "%s", b);
	}
#define ROW(v) (top + (ph - 1) - (int)lround(((v) - lo) / (hi - lo) * (ph - 1)))
	for (int j = 0; j < pw; j++)
		if (isfinite(col[j]))
			mvaddch(ROW(col[j]), lm + 2 + j, '*');
	for (int e = 0; pts && e < d->nep; e++)
		if (isfinite(pts[e]))
			mvaddch(ROW(pts[e] * scale), lm + 2 + col_of(d, d->ep_step[e], pw), 'o');
#undef ROW
	free(col);
}

static void draw(Dash *d)
{
	int W = COLS, H = LINES, r = 0;
	double el = now_s() - d->t0, rate = 0, tl = NAN;
	int64_t done = d->step - d->in.first_step, T = d->in.total_steps;
	char eta[32], els[32];

	if (el > 0 && done > 0)
		rate = (double)done / el;
	clock_str(els, sizeof els, el);
	if (rate > 0)
		clock_str(eta, sizeof eta, (double)(T - d->step) / rate);
	else
		snprintf(eta, sizeof eta, "?");
	if (d->n) {
		double s = 0;
		int64_t k = 0;
		for (int64_t i = d->n - 1; i >= 0 && k < LOSS_WINDOW; i--, k++)
			s += d->loss[i];
		tl = s / (double)k;
	}
	erase();
	attron(A_BOLD);
	mvprintw(r++, 0, "burncc train  %s  (%s)", d->in.model, d->in.optim);
	attroff(A_BOLD);
	mvprintw(r++, 0, "epoch %d/%d  step %lld/%lld  %.1f steps/s  elapsed %s  ETA %s",
	         d->epoch, d->in.epochs, (long long)d->step, (long long)T, rate, els, eta);
	{
		int bw = W - 10;
		double f = T > 0 ? (double)d->step / (double)T : 0;
		int fill = (int)(f * bw);
		if (bw > 4) {
			mvaddch(r, 0, '[');
			for (int j = 0; j < bw; j++)
				addch(j < fill ? '#' : '.');
			printw("] %5.1f%%", 100 * f);
		}
		r++;
	}
	mvprintw(r, 0, "train loss %.4f (last %d steps)", tl, LOSS_WINDOW);
	if (d->nep)
		printw("  test loss %.4f  test accuracy %.2f%%", d->ep_loss[d->nep - 1],
		       100 * d->ep_acc[d->nep - 1]);
	printw("  lr %.4g", d->lr);
	r++;
	if (d->evaluating)
		mvprintw(r, 0, "evaluating on the test set ...");
	else if (d->quit)
		mvprintw(r, 0, "quitting ...");
	r++;
	move(r, 0);
	printw("plot:");
	for (int p = 0; p < NPLOT; p++) {
		if (p == d->plot)
			attron(A_REVERSE);
		printw(" %d %s ", p + 1, plot_name[p]);
		if (p == d->plot)
			attroff(A_REVERSE);
	}
	printw(d->plot == PLOT_LOSS ? "   * train loss  o test loss" :
	       d->plot == PLOT_ACC ? "   o test accuracy %%" : "   * learning rate");
	r++;
	if (H - 1 - r >= 4)
		plot(d, r, H - 1 - r, W);
	mvprintw(H - 1, 0, "keys: Tab or 1-3 switch the plot, q quit%s",
	         d->in.steps_per_epoch ? " (saves the checkpoint if --save)" : "");
	refresh();
	d->drawn = now_s();
}

static void keys(Dash *d)
{
	int ch;
	while ((ch = getch()) != ERR) {
		if (ch == 'q' || ch == 'Q' || ch == 3)
			d->quit = 1;
		else if (ch == '\t' || ch == KEY_RIGHT || ch == 'n')
			d->plot = (d->plot + 1) % NPLOT;
		else if (ch == KEY_BTAB || ch == KEY_LEFT || ch == 'p')
			d->plot = (d->plot + NPLOT - 1) % NPLOT;
		else if (ch >= '1' && ch < '1' + NPLOT)
			d->plot = ch - '1';
	}
}

static int grow(void **p, size_t elem, int64_t need, int64_t *cap)
{
	if (need <= *cap)
		return 1;
	int64_t nc = *cap ? *cap * 2 : 256;
	while (nc < need)
		nc *= 2;
	void *q = realloc(*p, elem * (size_t)nc);
	if (!q)
		return 0;
	*p = q;
	return 1;
}

int dash_step(Dash *d, int epoch, int64_t step, double loss, double lr)
{
	int64_t i = step - 1 - d->in.first_step;

	d->epoch = epoch;
	d->step = step;
	d->lr = lr;
	d->evaluating = 0;
	if (i >= 0 && i == d->n) {
		int64_t c1 = d->cap, c2 = d->cap;
		/* out of memory: the plot stops growing, the run goes on */
		if (grow((void **)&d->loss, sizeof *d->loss, i + 1, &c1) &&
		    grow((void **)&d->lrs, sizeof *d->lrs, i + 1, &c2)) {
			d->cap = c1 < c2 ? c1 : c2;
			d->loss[i] = (float)loss;
			d->lrs[i] = (float)lr;
			d->n++;
		}
	}
	if (now_s() - d->drawn >= 0.1) {
		keys(d);
		draw(d);
	}
	return d->quit;
}

void dash_evaluating(Dash *d)
{
	d->evaluating = 1;
	if (now_s() - d->drawn >= 0.1) {
		keys(d);
		draw(d);
	}
}

void dash_epoch(Dash *d, int epoch, int64_t step, double test_loss, double acc)
{
	int64_t c = d->epcap, c2 = d->epcap, c3 = d->epcap;
	if (grow((void **)&d->ep_step, sizeof *d->ep_step, d->nep + 1, &c) &&
	    grow((void **)&d->ep_loss, sizeof *d->ep_loss, d->nep + 1, &c2) &&
	    grow((void **)&d->ep_acc, sizeof *d->ep_acc, d->nep + 1, &c3)) {
		d->epcap = (int)c;
		d->ep_step[d->nep] = step;
		d->ep_loss[d->nep] = test_loss;
		d->ep_acc[d->nep++] = acc;
	}
	d->epoch = epoch;
	d->evaluating = 0;
	if (now_s() - d->drawn >= 0.1) {
		keys(d);
		draw(d);
	}
}

void dash_log(Dash *d, const char *line)
{
	int64_t cap = d->logcap;
	char *s = strdup(line);
	if (!s || !grow((void **)&d->log, sizeof *d->log, d->nlog + 1, &cap)) {
		free(s);
		return;
	}
	d->logcap = (int)cap;
	d->log[d->nlog++] = s;
}

void dash_close(Dash *d)
{
	if (!d)
		return;
	endwin();
	delscreen(d->scr);
	for (int i = 0; i < d->nlog; i++) {
		puts(d->log[i]);
		free(d->log[i]);
	}
	fflush(stdout);
	free(d->log);
	free(d->loss);
	free(d->lrs);
	free(d->ep_step);
	free(d->ep_loss);
	free(d->ep_acc);
	free(d);
}

#endif
