/* SPDX-License-Identifier: MIT */
/*
 * gim's VF count for its next load: /etc/modprobe.d/amdsmi-gim.conf (spec amdgpu-sysfs.md §7.3,
 * virtualization.md §1.2). gim takes the VF count of every GPU it drives from its vf_num
 * module parameter, "vf_num=N0,N1,...", 1 to 31 per GPU, in its own order of GPUs: the order
 * of its enabled_devices parameter when that is set, else the PCI address order in which it
 * probes them. gim reads the parameter when it loads, never later.
 *
 * amdsmi owns that one file and touches no other. It refuses to write it while another file
 * of the configuration kmod reads sets gim's vf_num (which value wins would depend on kmod's
 * reading order). That configuration: the *.conf (and *.alias) files of /etc/modprobe.d,
 * /run/modprobe.d, /usr/local/lib/modprobe.d, /lib/modprobe.d and /usr/lib/modprobe.d (a
 * file name in an earlier directory hides the same name in later ones, as in kmod) and
 * /etc/modprobe.conf. The kernel command line (gim.vf_num=) is not looked at.
 *
 * The file says which GPU each value is for ("# vf_num BDF N" lines), so that a later change
 * of one GPU keeps the values written for the others even before gim loaded them.
 *
 * Every function that reads or writes files takes @root, the directory those paths are
 * relative to (NULL: /), so that tests run on a temporary tree. This file knows nothing of
 * libamdsmi: the caller passes the GPUs (amdsmi(1) now, amdsmid later).
 */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#define GIM_MODPROBE_DIR "/etc/modprobe.d"
#define GIM_MODPROBE_FILE "/etc/modprobe.d/amdsmi-gim.conf"
#define GIM_VF_NUM_MIN 1u
#define GIM_VF_NUM_MAX 31u
#define GIM_MODPROBE_MAX_CONFLICTS 16

/* One VF layout gim supports on a product: @vfs VFs, each owning one partition of
 * @compute_mode under @memory_mode. */
struct gim_vf_mode {
        unsigned vfs;
        const char *compute_mode;
        const char *memory_mode;
};

/*
 * The VF layouts of gim's release notes for @product ("MI300X", "MI325X", "MI350X", "MI355X";
 * spec amdgpu-sysfs.md §7.3): MI300X 1 VF SPX/NPS1 or 8 VFs CPX/NPS4; MI325X 1 VF SPX/NPS1;
 * MI350X and MI355X 1 VF SPX/NPS1, 2 VFs DPX/NPS2 or 8 VFs CPX/NPS2.
 * @return the number of layouts (0 for a product without a known table), the table in *ret.
 */
size_t gim_vf_modes(const char *product, const struct gim_vf_mode **ret);

/* The layout of @vfs VFs on @product, or NULL. */
const struct gim_vf_mode *gim_vf_mode_find(const char *product, unsigned vfs);

/* A line of the configuration: where it is (as the system reads it, without @root) and what. */
struct gim_conf_line {
        char path[PATH_MAX];
        unsigned line;  /* 1-based; the first line of a continued (backslash) line */
        char text[256]; /* the line, continuations joined, cut when longer */
};

/* A GPU's value in vf_num. */
struct gim_vf_num {
        char bdf[16];
        unsigned vf_num;
};

/* What the configuration says about gim. */
struct gim_modprobe_scan {
        /* other files' lines that set vf_num (options gim ... vf_num=, install gim ...vf_num=) */
        struct gim_conf_line conflicts[GIM_MODPROBE_MAX_CONFLICTS];
        size_t n_conflicts; /* may exceed GIM_MODPROBE_MAX_CONFLICTS */
        /* the enabled_devices option that applies (the last one kmod reads), NULL: none */
        char **enabled_devices; /* NULL-terminated, normalised BDFs */
        struct gim_conf_line enabled_devices_line;
        /* our file: whether it exists, and the values it holds per GPU */
        bool own_exists;
        struct gim_vf_num *pending;
        size_t n_pending;
};

/* Frees what a scan holds (the struct itself is the caller's). */
void gim_modprobe_scan_done(struct gim_modprobe_scan *s);

/*
 * Adds one file's text to @s (pure; gim_modprobe_scan() calls it for every file). @path is
 * the file as the system names it; @own: it is our file (its vf_num is not a conflict, its
 * "# vf_num BDF N" lines are the pending values).
 * @return 0, -EBADMSG when an enabled_devices value is malformed (then @s->enabled_devices_line
 * names it), or -ENOMEM.
 */
int gim_conf_parse(struct gim_modprobe_scan *s, const char *path, const char *text, bool own);

/*
 * Reads the configuration below @root into @ret (which the caller zeroes and frees with
 * gim_modprobe_scan_done(), also after a failure).
 * @return 0, -EBADMSG (a malformed enabled_devices, named in enabled_devices_line), -EIO with
 * the file in @ret_error_path when one cannot be read (@ret_error_path: PATH_MAX bytes, may
 * be NULL), or -ENOMEM.
 */
int gim_modprobe_scan(const char *root, struct gim_modprobe_scan *ret, char *ret_error_path);

/* A gim GPU as the caller knows it. */
struct gim_pf {
        char bdf[16];
        int loaded;    /* the vf_num gim runs with now, -1 when unknown */
        int requested; /* the new value, -1: keep */
};

/*
 * The vf_num list for the next load: one entry per GPU in gim's order (@scan's enabled_devices,
 * else the PCI address order of @pfs), each the requested value, else the value our file holds
 * for it, else the loaded one. Entries of enabled_devices must be GPUs of @pfs; a requested
 * GPU must be in enabled_devices.
 * @return 0 and a malloc'd array in *ret (*ret_n entries); -ENXIO (an enabled_devices entry
 * is not a gim GPU, or a requested GPU is not in enabled_devices), -ENODATA (a GPU's value is
 * unknown), -ERANGE (a value outside 1..31), with the BDF in @ret_bdf (16 bytes); -EINVAL
 * (no GPU); -ENOMEM.
 */
int gim_modprobe_build(const struct gim_pf *pfs, size_t n, const struct gim_modprobe_scan *scan,
                       struct gim_vf_num **ret, size_t *ret_n, char *ret_bdf);

/*
 * The file's text: a comment header (amdsmi wrote it, at @now in UTC, how to change it, the
 * order of the GPUs: @order_note), one "# vf_num BDF N" line per GPU, and
 * "options gim vf_num=N0,N1,...". @return 0 and a malloc'd string, or -ENOMEM / -EINVAL.
 */
int gim_modprobe_render(const struct gim_vf_num *v, size_t n, const char *order_note, time_t now,
                        char **ret);

/*
 * Writes @text to @root/etc/modprobe.d/amdsmi-gim.conf atomically: a temporary file in the
 * same directory (a dot file, which kmod ignores), fsync, rename over the file, fsync of the
 * directory. Makes the directory (0755) when missing. The file is 0644.
 * @return 0 or a negative errno (nothing changed then).
 */
int gim_modprobe_write(const char *root, const char *text);

/*
 * Whether the initramfs loads gim: a "gim" line in /etc/initramfs-tools/modules, or gim in
 * add_drivers / force_drivers of /etc/dracut.conf or /etc/dracut.conf.d/\*.conf.
 * @return 1 (the line in *ret, may be NULL), 0, or a negative errno.
 */
int gim_modprobe_initramfs(const char *root, struct gim_conf_line *ret);
