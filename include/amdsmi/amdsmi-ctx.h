/* SPDX-License-Identifier: MIT */
#pragma once

#if !defined(__AMDSMI_H_INSIDE__)
#error "Only <amdsmi/amdsmi.h> can be included directly."
#endif

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A library context: one sysfs root, its discovered GPUs and a log handler. */
struct amdsmi_ctx;

/**
 * Log handler. @p priority is an enum amdsmi_log_priority; @p format and @p args are printf
 * style and carry no trailing newline.
 */
typedef void (*amdsmi_log_fn)(struct amdsmi_ctx *ctx, int priority, const char *format,
                              va_list args, void *userdata);

/**
 * Creates a context. The sysfs root is $AMDSMI_SYSFS_ROOT or /sys; the device root is
 * $AMDSMI_DEV_ROOT or "/dev" (if AMDSMI_SYSFS_ROOT names another tree and AMDSMI_DEV_ROOT is
 * unset, no device node is ever opened, so a sysfs snapshot never mixes with real hardware).
 * No GPU is discovered until amdsmi_ctx_enumerate().
 * Debug logging goes to stderr if $AMDSMI_DEBUG=1, else the context is silent.
 * @return 0 or a negative errno.
 * @since 0.1
 */
int amdsmi_ctx_new(struct amdsmi_ctx **ret_ctx) AMDSMI_WARN_UNUSED AMDSMI_NONNULL(1);

/**
 * Creates a context on explicit roots. @p sysfs_root NULL means /sys; @p dev_root NULL
 * means no device node is opened.
 * @since 0.1
 */
int amdsmi_ctx_new_with_roots(const char *sysfs_root, const char *dev_root,
                              struct amdsmi_ctx **ret_ctx) AMDSMI_WARN_UNUSED AMDSMI_NONNULL(3);

/** Takes a reference. Accepts NULL. @since 0.1 */
struct amdsmi_ctx *amdsmi_ctx_ref(struct amdsmi_ctx *ctx);

/** Drops a reference; frees the context at zero. Accepts NULL; returns NULL. @since 0.1 */
struct amdsmi_ctx *amdsmi_ctx_unref(struct amdsmi_ctx *ctx);

/** For __attribute__((cleanup)). @since 0.1 */
static inline void amdsmi_ctx_unrefp(struct amdsmi_ctx **p) {
        if (p && *p)
                amdsmi_ctx_unref(*p);
}

/**
 * Sets the log handler (NULL for silence) and its user data.
 * @since 0.1
 */
void amdsmi_ctx_set_log_fn(struct amdsmi_ctx *ctx, amdsmi_log_fn fn, void *userdata);

/** Messages above @p priority are dropped. Default AMDSMI_LOG_WARNING. @since 0.1 */
void amdsmi_ctx_set_log_priority(struct amdsmi_ctx *ctx, int priority);

/** @return the context's log priority. @since 0.1 */
int amdsmi_ctx_get_log_priority(struct amdsmi_ctx *ctx);

/** @return the sysfs root this context reads (/sys unless overridden). @since 0.1 */
const char *amdsmi_ctx_get_sysfs_root(struct amdsmi_ctx *ctx);

/**
 * @return the device root this context opens device nodes under (/dev unless overridden), or
 * NULL when it opens none (amdsmi_ctx_new() with AMDSMI_SYSFS_ROOT at another directory than
 * /sys and no AMDSMI_DEV_ROOT, or amdsmi_ctx_new_with_roots() with a NULL @p dev_root).
 * @since 0.2
 */
const char *amdsmi_ctx_get_dev_root(struct amdsmi_ctx *ctx);

/**
 * Discovers every AMD PCI function (vendor 0x1002 with a GPU class or a known device ID),
 * whatever it is bound to, and maps KFD topology nodes to their GPUs. GPUs are numbered
 * physical functions first, then virtual functions, each in BDF order, so that creating or
 * removing VFs never renumbers a physical GPU. Calling it again re-discovers and drops the
 * context's references to the GPUs of the previous enumeration: a borrowed handle from before
 * is invalid afterwards; one the caller holds a reference on (amdsmi_gpu_ref()) stays valid
 * but describes the old state.
 * @return the number of GPUs found, or a negative errno (-ENOENT if the sysfs root has no
 * PCI bus).
 * @since 0.1
 */
int amdsmi_ctx_enumerate(struct amdsmi_ctx *ctx) AMDSMI_WARN_UNUSED;

/**
 * Checks whether the KFD topology changed since the last enumeration (its generation_id
 * moved, e.g. after a compute partition switch).
 * @return 0 if current, -ESTALE if the caller must enumerate again, or another negative errno.
 * @since 0.1
 */
int amdsmi_ctx_check_topology(struct amdsmi_ctx *ctx);

/**
 * Checks cheaply whether the devices changed since the last enumeration: the PCI functions
 * present (a hot-plug or unplug, VFs created or removed), the driver of each GPU (bound,
 * unbound, another one) and its hwmon directory, and the KFD topology
 * (amdsmi_ctx_check_topology()). A dozen small reads and no GPU register access, for
 * programs that watch without uevents. Values (power caps, modes) are not compared.
 * @return 0 if nothing changed, -ESTALE if the caller must enumerate again, or another
 * negative errno.
 * @since 0.1
 */
int amdsmi_ctx_check_devices(struct amdsmi_ctx *ctx);

#ifdef __cplusplus
}
#endif
