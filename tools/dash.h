/*
 * dash.h - `burncc train`'s terminal dashboard (ncurses): a progress bar
 * with ETA and steps/s, the live train loss, the test loss and accuracy
 * and the learning rate as text plots, the epoch; Tab or 1-3 switch the
 * plot, q (or Ctrl-C) asks the run to stop.  tools/dash.c says how.
 *
 * dash_open returns NULL where there is no dashboard to draw: stdin or
 * stdout not a terminal, TERM unknown to terminfo, or burncc built without
 * ncurses; the caller then prints its plain log lines.  While a dashboard
 * is open nothing else may write to the terminal: the caller hands its
 * log lines to dash_log, which prints them after dash_close.
 */
#ifndef BURN_DASH_H
#define BURN_DASH_H

#include <stdint.h>

typedef struct Dash Dash;

typedef struct DashInfo {
	const char *model;      /* the title line */
	const char *optim;      /* e.g. "adam lr 0.001" */
	int epochs;
	int64_t total_steps;    /* the run's last step (1-based) */
	int64_t first_step;     /* the steps done before this run (resume) */
	int64_t steps_per_epoch;
} DashInfo;

Dash *dash_open(const DashInfo *info);
/* Step `step` of epoch `epoch` gave `loss` at learning rate `lr`.  Redraws
 * at most ten times a second and reads the keys then.  Returns 1 once the
 * user asked to quit (q or Ctrl-C), else 0. */
int dash_step(Dash *d, int epoch, int64_t step, double loss, double lr);
/* The run is evaluating (shown until the next dash_epoch or dash_step). */
void dash_evaluating(Dash *d);
/* Epoch `epoch`, ended at step `step`: its test loss and accuracy. */
void dash_epoch(Dash *d, int epoch, int64_t step, double test_loss, double acc);
/* A log line (no newline) printed to stdout after the dashboard closes. */
void dash_log(Dash *d, const char *line);
/* Restore the terminal, print the log lines, free d (NULL: nothing). */
void dash_close(Dash *d);

#endif
