/* SPDX-License-Identifier: MIT */
/**
 * @file amdsmi.h
 * libamdsmi: system management of AMD Instinct GPUs over the amdgpu, KFD, hwmon and PCI sysfs
 * controls. This umbrella header is the only one to include.
 *
 * Conventions: every fallible call returns 0 (or a count) on success and a negative errno on
 * failure; output parameters are named ret_*, come last and are left untouched on failure.
 * Units: power in microwatts, temperature in millidegrees Celsius, clocks in Hz, memory in
 * bytes, energy in microjoules. The library never prints: messages go to the log callback.
 */
#pragma once

#define __AMDSMI_H_INSIDE__

#include <amdsmi/amdsmi-common.h>
#include <amdsmi/amdsmi-ctx.h>
#include <amdsmi/amdsmi-gpu.h>
#include <amdsmi/amdsmi-health.h>
#include <amdsmi/amdsmi-host.h>
#include <amdsmi/amdsmi-partition.h>
#include <amdsmi/amdsmi-perf.h>
#include <amdsmi/amdsmi-power.h>
#include <amdsmi/amdsmi-process.h>
#include <amdsmi/amdsmi-reset.h>
#include <amdsmi/amdsmi-sriov.h>
#include <amdsmi/amdsmi-telemetry.h>
#include <amdsmi/amdsmi-topology.h>

#undef __AMDSMI_H_INSIDE__
