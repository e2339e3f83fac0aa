/* check.h - `burncc check`: compile, build, run and compare test cases. */
#ifndef BURN_CHECK_H
#define BURN_CHECK_H
int check_main(int argc, char **argv);
#endif
