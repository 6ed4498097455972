/* SPDX-License-Identifier: MIT */
/* Clocks and sleeping: bounded waits of changes (settle, reload), times of records. */
#pragma once

#include <stdint.h>

/* CLOCK_MONOTONIC in milliseconds. */
uint64_t now_ms(void);
/* CLOCK_MONOTONIC in microseconds: when a telemetry sample was taken. */
uint64_t now_monotonic_us(void);
/* CLOCK_REALTIME in microseconds since the epoch: when a power source was set, a cap applied. */
uint64_t now_realtime_us(void);
/* Sleeps ms milliseconds, resuming after signals. */
void sleep_ms(unsigned ms);
