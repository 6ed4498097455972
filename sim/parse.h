/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-sim: the kernel's number parsers as sysfs stores use them (lib/kstrtox.c semantics):
 * an optional sign, the digits of @base (0: "0x" hex, "0" octal, else decimal), then at most
 * one newline. -EINVAL for anything else, -ERANGE when the value does not fit.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

int kstrtoull(const char *s, unsigned base, unsigned long long *ret);
int kstrtoll(const char *s, unsigned base, long long *ret);
int kstrtou32(const char *s, unsigned base, uint32_t *ret);
int kstrtou16(const char *s, unsigned base, uint16_t *ret);
int kstrtoint(const char *s, unsigned base, int *ret);
int kstrtol(const char *s, unsigned base, long *ret);
/* kstrtobool: 1/y/Y/t/T/on, 0/n/N/f/F/off (first characters), else -EINVAL. */
int kstrtobool(const char *s, bool *ret);
