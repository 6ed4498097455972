/* SPDX-License-Identifier: MIT */
/* Monotonic milliseconds and sleeping, for the bounded waits of changes (settle, reload). */
#pragma once

#include <stdint.h>

/* CLOCK_MONOTONIC in milliseconds. */
uint64_t now_ms(void);
/* Sleeps ms milliseconds, resuming after signals. */
void sleep_ms(unsigned ms);
