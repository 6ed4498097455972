/* SPDX-License-Identifier: MIT */
/*
 * <linux/kfd_ioctl.h> (linux-libc-dev) includes <drm/drm.h>, which Debian ships only as
 * libdrm's copy of the same uapi header (/usr/include/libdrm/drm.h, on the libdrm include
 * path). lib/ is an include directory of the library, so this file answers that include
 * with libdrm's header; kfd_ioctl.h uses nothing of it but the __u32/__u64 types.
 */
#pragma once

#include <drm.h>
