/* check_grad.h - `burncc check --grad`: one case's gradient check
 * (check_grad.c says how). */
#ifndef BURN_CHECK_GRAD_H
#define BURN_CHECK_GRAD_H
#include <stddef.h>
#include "codegen/target_iface.h"
/* Check the case in dir through be (NULL: the interpreter); writes "PASS",
 * "FAIL: reason" or "SKIP: reason" into res. */
void grad_case(const Backend *be, const char *dir, char *res, size_t n);
#endif
