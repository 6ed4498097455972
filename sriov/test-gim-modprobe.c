/* SPDX-License-Identifier: MIT */
/* gim-modprobe.c: the products' VF layouts, reading kmod's configuration (conflicts, shadowing,
 * continuation lines, enabled_devices, our own file), the new vf_num list, the file's exact
 * text, the atomic write and the initramfs check; every file in a temporary root. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "gim-modprobe.h"
#include "macro.h"

/* ---- helpers ---------------------------------------------------------------------------- */

static char *make_root(void) {
        char tmpl[] = "/tmp/test-gim-modprobe.XXXXXX";
        char *d = mkdtemp(tmpl);

        assert_non_null(d);
        return strdup(d);
}

static void put(const char *root, const char *path, const char *text) {
        char full[PATH_MAX], dir[PATH_MAX];
        FILE *f;

        snprintf(full, sizeof(full), "%s%s", root, path);
        snprintf(dir, sizeof(dir), "%s", full);
        for (char *p = dir + strlen(root) + 1; *p; p++)
                if (*p == '/') {
                        *p = '\0';
                        (void) mkdir(dir, 0755);
                        *p = '/';
                }
        f = fopen(full, "we");
        assert_non_null(f);
        fputs(text, f);
        assert_int_equal(fclose(f), 0);
}

static char *get(const char *root, const char *path) {
        char full[PATH_MAX];
        char *buf = calloc(1, 65536);
        FILE *f;
        size_t n;

        snprintf(full, sizeof(full), "%s%s", root, path);
        f = fopen(full, "re");
        if (!f) {
                free(buf);
                return NULL;
        }
        n = fread(buf, 1, 65535, f);
        buf[n] = '\0';
        fclose(f);
        return buf;
}

static void rm_rf(const char *path) {
        char cmd[PATH_MAX + 16];

        assert_true(strncmp(path, "/tmp/test-gim-modprobe.", 23) == 0);
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
        assert_int_equal(system(cmd), 0);
}

static size_t count_entries(const char *root, const char *dir) {
        char full[PATH_MAX];
        struct dirent *de;
        size_t n = 0;
        DIR *d;

        snprintf(full, sizeof(full), "%s%s", root, dir);
        d = opendir(full);
        assert_non_null(d);
        while ((de = readdir(d)))
                if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
                        n++;
        closedir(d);
        return n;
}

/* ---- the products' layouts -------------------------------------------------------------- */

static void test_vf_modes(void **state) {
        const struct gim_vf_mode *m = NULL;

        assert_int_equal(gim_vf_modes("MI300X", &m), 2);
        assert_int_equal(m[0].vfs, 1);
        assert_string_equal(m[0].compute_mode, "SPX");
        assert_string_equal(m[0].memory_mode, "NPS1");
        assert_int_equal(m[1].vfs, 8);
        assert_string_equal(m[1].compute_mode, "CPX");
        assert_string_equal(m[1].memory_mode, "NPS4");
        assert_int_equal(gim_vf_modes("MI325X", &m), 1);
        assert_int_equal(m[0].vfs, 1);
        for (int i = 0; i < 2; i++) {
                const char *p = i ? "MI355X" : "MI350X";

                assert_int_equal(gim_vf_modes(p, &m), 3);
                assert_string_equal(gim_vf_mode_find(p, 2)->compute_mode, "DPX");
                assert_string_equal(gim_vf_mode_find(p, 2)->memory_mode, "NPS2");
                assert_string_equal(gim_vf_mode_find(p, 8)->compute_mode, "CPX");
                assert_string_equal(gim_vf_mode_find(p, 8)->memory_mode, "NPS2");
                assert_null(gim_vf_mode_find(p, 4));
        }
        assert_null(gim_vf_mode_find("MI300X", 2));
        assert_null(gim_vf_mode_find("MI325X", 8));
        assert_int_equal(gim_vf_modes("MI300A", &m), 0);
        assert_int_equal(gim_vf_modes("MI300X HF", NULL), 0);
        assert_int_equal(gim_vf_modes(NULL, NULL), 0);
}

/* ---- parsing one file ------------------------------------------------------------------- */

static void test_parse(void **state) {
        struct gim_modprobe_scan s = {};

        /* not about gim's vf_num: other modules, other parameters, comments */
        assert_int_equal(gim_conf_parse(&s, "/etc/modprobe.d/a.conf",
                                        "# options gim vf_num=4\n"
                                        "options gimx vf_num=2\n"
                                        "options amdgpu vf_num=2\n"
                                        "options gim sch_policy=2 vf_numx=3\n"
                                        "blacklist gim\n"
                                        "options gim\n",
                                        false),
                         0);
        assert_int_equal(s.n_conflicts, 0);
        assert_null(s.enabled_devices);

        /* vf_num, also spelled vf-num, quoted, among others, once per line */
        assert_int_equal(gim_conf_parse(&s, "/etc/modprobe.d/b.conf",
                                        "\n"
                                        "options gim sch_policy=1 vf_num=1,1 vf_num=2\n"
                                        "  options   gim\t\"vf-num=8\"\n",
                                        false),
                         0);
        assert_int_equal(s.n_conflicts, 2);
        assert_string_equal(s.conflicts[0].path, "/etc/modprobe.d/b.conf");
        assert_int_equal(s.conflicts[0].line, 2);
        assert_string_equal(s.conflicts[0].text, "options gim sch_policy=1 vf_num=1,1 vf_num=2");
        assert_int_equal(s.conflicts[1].line, 3);

        /* continued lines count from their first line; install commands passing vf_num */
        assert_int_equal(gim_conf_parse(&s, "/lib/modprobe.d/c.conf",
                                        "options gim \\\n"
                                        "  fullaccess_timeout=10 \\\n"
                                        "  vf_num=4\n"
                                        "install gim /sbin/modprobe --ignore-install gim "
                                        "vf_num=2\n"
                                        "install gim /bin/true\n",
                                        false),
                         0);
        assert_int_equal(s.n_conflicts, 4);
        assert_string_equal(s.conflicts[2].path, "/lib/modprobe.d/c.conf");
        assert_int_equal(s.conflicts[2].line, 1);
        assert_string_equal(s.conflicts[2].text, "options gim   fullaccess_timeout=10   vf_num=4");
        assert_int_equal(s.conflicts[3].line, 4);

        /* enabled_devices: the last one read applies; short and upper-case forms */
        assert_int_equal(gim_conf_parse(&s, "/etc/modprobe.d/d.conf",
                                        "options gim enabled_devices=0000:05:00.0\n"
                                        "options gim enabled_devices=\"26:00.0;0000:C6:00.0;\"\n",
                                        false),
                         0);
        assert_non_null(s.enabled_devices);
        assert_string_equal(s.enabled_devices[0], "0000:26:00.0");
        assert_string_equal(s.enabled_devices[1], "0000:c6:00.0");
        assert_null(s.enabled_devices[2]);
        assert_string_equal(s.enabled_devices_line.path, "/etc/modprobe.d/d.conf");
        assert_int_equal(s.enabled_devices_line.line, 2);
        assert_int_equal(s.n_conflicts, 4);

        /* a malformed one is an error naming its line */
        assert_int_equal(gim_conf_parse(&s, "/etc/modprobe.d/e.conf",
                                        "\noptions gim enabled_devices=0000:05:00.0;../x\n", false),
                         -EBADMSG);
        assert_string_equal(s.enabled_devices_line.path, "/etc/modprobe.d/e.conf");
        assert_int_equal(s.enabled_devices_line.line, 2);

        /* our file: its vf_num is no conflict, its "# vf_num" lines are the pending values */
        assert_int_equal(gim_conf_parse(&s, GIM_MODPROBE_FILE,
                                        "# Written by amdsmi\n"
                                        "# vf_num 0000:05:00.0 8\n"
                                        "# vf_num 0000:26:00.0 1\n"
                                        "# vf_num ../../x 3\n"
                                        "# vf_num 0000:46:00.0 2 junk\n"
                                        "# vf_num 0000:05:00.0 2\n"
                                        "options gim vf_num=2,1\n",
                                        true),
                         0);
        assert_int_equal(s.n_conflicts, 4);
        assert_int_equal(s.n_pending, 2);
        assert_string_equal(s.pending[0].bdf, "0000:05:00.0");
        assert_int_equal(s.pending[0].vf_num, 2);
        assert_string_equal(s.pending[1].bdf, "0000:26:00.0");
        assert_int_equal(s.pending[1].vf_num, 1);

        /* more conflicts than are stored: all counted */
        for (int i = 0; i < GIM_MODPROBE_MAX_CONFLICTS + 3; i++)
                assert_int_equal(gim_conf_parse(&s, "/run/modprobe.d/f.conf",
                                                "options gim vf_num=1\n", false),
                                 0);
        assert_int_equal(s.n_conflicts, 4 + GIM_MODPROBE_MAX_CONFLICTS + 3);
        gim_modprobe_scan_done(&s);
        assert_null(s.enabled_devices);
        assert_null(s.pending);
}

/* ---- the configuration in a root -------------------------------------------------------- */

static void test_scan(void **state) {
        _cleanup_free_ char *root = make_root();
        struct gim_modprobe_scan s = {};
        char err[PATH_MAX] = "";

        /* nothing at all */
        assert_int_equal(gim_modprobe_scan(root, &s, err), 0);
        assert_int_equal(s.n_conflicts, 0);
        assert_false(s.own_exists);
        gim_modprobe_scan_done(&s);

        put(root, "/etc/modprobe.d/blacklist.conf", "blacklist amdgpu\n");
        put(root, "/etc/modprobe.d/gim-devices.conf",
            "options gim enabled_devices=0000:26:00.0;"
            "0000:05:00.0\n");
        put(root, "/etc/modprobe.d/notes.txt", "options gim vf_num=4\n");       /* not *.conf */
        put(root, "/etc/modprobe.d/.hidden.conf", "options gim vf_num=4\n");    /* dot file */
        put(root, "/lib/modprobe.d/blacklist.conf", "options gim vf_num=4\n");  /* hidden */
        put(root, "/lib/modprobe.d/amdsmi-gim.conf", "options gim vf_num=4\n"); /* ours hides */
        put(root, GIM_MODPROBE_FILE, "# vf_num 0000:05:00.0 1\noptions gim vf_num=1\n");
        assert_int_equal(gim_modprobe_scan(root, &s, err), 0);
        assert_int_equal(s.n_conflicts, 0);
        assert_true(s.own_exists);
        assert_int_equal(s.n_pending, 1);
        assert_string_equal(s.enabled_devices[0], "0000:26:00.0");
        assert_string_equal(s.enabled_devices_line.path, "/etc/modprobe.d/gim-devices.conf");
        gim_modprobe_scan_done(&s);

        /* each directory and the legacy file, in kmod's order (names sorted in a directory) */
        put(root, "/run/modprobe.d/zz.conf", "options gim vf_num=2\n");
        put(root, "/run/modprobe.d/aa.alias", "options gim vf_num=3\n");
        put(root, "/usr/local/lib/modprobe.d/gim.conf", "\n\noptions gim vf_num=8\n");
        put(root, "/usr/lib/modprobe.d/gim2.conf", "options gim vf-num=8\n");
        put(root, "/etc/modprobe.conf", "options gim vf_num=1\n");
        memset(&s, 0, sizeof(s));
        assert_int_equal(gim_modprobe_scan(root, &s, err), 0);
        assert_int_equal(s.n_conflicts, 5);
        assert_string_equal(s.conflicts[0].path, "/run/modprobe.d/aa.alias");
        assert_string_equal(s.conflicts[1].path, "/run/modprobe.d/zz.conf");
        assert_string_equal(s.conflicts[2].path, "/usr/local/lib/modprobe.d/gim.conf");
        assert_int_equal(s.conflicts[2].line, 3);
        assert_string_equal(s.conflicts[2].text, "options gim vf_num=8");
        assert_string_equal(s.conflicts[3].path, "/usr/lib/modprobe.d/gim2.conf");
        assert_string_equal(s.conflicts[4].path, "/etc/modprobe.conf");
        gim_modprobe_scan_done(&s);

        /* a malformed enabled_devices fails the scan, naming the file */
        put(root, "/etc/modprobe.d/gim-devices.conf", "options gim enabled_devices=junk\n");
        memset(&s, 0, sizeof(s));
        assert_int_equal(gim_modprobe_scan(root, &s, err), -EBADMSG);
        assert_string_equal(s.enabled_devices_line.path, "/etc/modprobe.d/gim-devices.conf");
        gim_modprobe_scan_done(&s);

        /* an unreadable file (a directory named *.conf is skipped; a file without read
         * permission is not, for root it reads anyway): NUL bytes are an error */
        put(root, "/etc/modprobe.d/gim-devices.conf", "\n");
        {
                char full[PATH_MAX];
                int fd;

                snprintf(full, sizeof(full), "%s/etc/modprobe.d/bin.conf", root);
                fd = open(full, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
                assert_true(fd >= 0);
                assert_int_equal(write(fd, "a\0b", 3), 3);
                close(fd);
        }
        memset(&s, 0, sizeof(s));
        assert_int_equal(gim_modprobe_scan(root, &s, err), -EIO);
        assert_string_equal(err, "/etc/modprobe.d/bin.conf");
        gim_modprobe_scan_done(&s);

        rm_rf(root);
}

/* What is at the path of a modprobe file: ours must be a regular file (a FIFO, a directory or
 * any symbolic link is refused by name, never waited on); others may be links as kmod allows,
 * one to /dev/null masks the file, but a FIFO among them is refused too. */
static void test_scan_not_regular(void **state) {
        _cleanup_free_ char *root = make_root();
        struct gim_modprobe_scan s = {};
        char err[PATH_MAX] = "", own[PATH_MAX], other[PATH_MAX], target[PATH_MAX];

        snprintf(own, sizeof(own), "%s%s", root, GIM_MODPROBE_FILE);
        snprintf(other, sizeof(other), "%s/etc/modprobe.d/other.conf", root);
        snprintf(target, sizeof(target), "%s/target.conf", root);
        put(root, "/target.conf", "# vf_num 0000:05:00.0 1\noptions gim vf_num=1\n");
        put(root, "/etc/modprobe.d/keep.conf", "\n");

        alarm(10); /* a hang fails the test */
        assert_int_equal(mkfifo(own, 0644), 0);
        assert_int_equal(gim_modprobe_scan(root, &s, err), -EBADFD);
        assert_string_equal(err, GIM_MODPROBE_FILE);
        gim_modprobe_scan_done(&s);
        assert_int_equal(unlink(own), 0);
        assert_int_equal(mkdir(own, 0755), 0);
        memset(&s, 0, sizeof(s));
        assert_int_equal(gim_modprobe_scan(root, &s, err), -EISDIR);
        gim_modprobe_scan_done(&s);
        assert_int_equal(rmdir(own), 0);
        assert_int_equal(symlink(target, own), 0);
        memset(&s, 0, sizeof(s));
        assert_int_equal(gim_modprobe_scan(root, &s, err), -ELOOP);
        gim_modprobe_scan_done(&s);
        assert_int_equal(unlink(own), 0);

        /* others: a link is read, one to /dev/null masks, a FIFO is refused */
        assert_int_equal(symlink(target, other), 0);
        memset(&s, 0, sizeof(s));
        assert_int_equal(gim_modprobe_scan(root, &s, err), 0);
        assert_int_equal(s.n_conflicts, 1);
        gim_modprobe_scan_done(&s);
        assert_int_equal(unlink(other), 0);
        assert_int_equal(symlink("/dev/null", other), 0);
        memset(&s, 0, sizeof(s));
        assert_int_equal(gim_modprobe_scan(root, &s, err), 0);
        assert_int_equal(s.n_conflicts, 0);
        gim_modprobe_scan_done(&s);
        assert_int_equal(unlink(other), 0);
        assert_int_equal(mkfifo(other, 0644), 0);
        memset(&s, 0, sizeof(s));
        assert_int_equal(gim_modprobe_scan(root, &s, err), -EBADFD);
        assert_string_equal(err, "/etc/modprobe.d/other.conf");
        gim_modprobe_scan_done(&s);
        alarm(0);

        rm_rf(root);
}

/* ---- the new list ----------------------------------------------------------------------- */

static void test_build(void **state) {
        struct gim_pf pfs[] = {
                { "0000:26:00.0", 8, -1 },
                { "0000:05:00.0", 8, 1 },
                { "0000:46:00.0", 8, -1 },
        };
        struct gim_modprobe_scan s = {};
        struct gim_vf_num *v = NULL;
        char bdf[16] = "";
        size_t n = 0;

        /* PCI address order; the requested value for the selected, the loaded for the rest */
        assert_int_equal(gim_modprobe_build(pfs, 3, &s, &v, &n, bdf), 0);
        assert_int_equal(n, 3);
        assert_string_equal(v[0].bdf, "0000:05:00.0");
        assert_int_equal(v[0].vf_num, 1);
        assert_string_equal(v[1].bdf, "0000:26:00.0");
        assert_int_equal(v[1].vf_num, 8);
        assert_string_equal(v[2].bdf, "0000:46:00.0");
        assert_int_equal(v[2].vf_num, 8);
        free(v);

        /* values our file holds for the others win over the loaded ones */
        assert_int_equal(gim_conf_parse(&s, GIM_MODPROBE_FILE,
                                        "# vf_num 0000:46:00.0 1\n# vf_num 0000:05:00.0 8\n", true),
                         0);
        assert_int_equal(gim_modprobe_build(pfs, 3, &s, &v, &n, bdf), 0);
        assert_int_equal(v[0].vf_num, 1); /* requested */
        assert_int_equal(v[1].vf_num, 8); /* loaded */
        assert_int_equal(v[2].vf_num, 1); /* pending */
        free(v);

        /* enabled_devices chooses the GPUs, not their order: gim numbers them in PCI order */
        assert_int_equal(gim_conf_parse(&s, "/etc/modprobe.d/x.conf",
                                        "options gim enabled_devices=0000:46:00.0;0000:05:00.0;"
                                        "0000:26:00.0\n",
                                        false),
                         0);
        assert_int_equal(gim_modprobe_build(pfs, 3, &s, &v, &n, bdf), 0);
        assert_int_equal(n, 3);
        assert_string_equal(v[0].bdf, "0000:05:00.0");
        assert_string_equal(v[1].bdf, "0000:26:00.0");
        assert_string_equal(v[2].bdf, "0000:46:00.0");
        assert_int_equal(v[0].vf_num, 1);
        free(v);

        /* ... and a GPU gim would not drive is left out; requested, it is an error */
        assert_int_equal(gim_conf_parse(&s, "/etc/modprobe.d/x.conf",
                                        "options gim enabled_devices=0000:26:00.0;0000:05:00.0\n",
                                        false),
                         0);
        assert_int_equal(gim_modprobe_build(pfs, 3, &s, &v, &n, bdf), 0);
        assert_int_equal(n, 2);
        free(v);
        pfs[2].requested = 8;
        assert_int_equal(gim_modprobe_build(pfs, 3, &s, &v, &n, bdf), -ENXIO);
        assert_string_equal(bdf, "0000:46:00.0");
        pfs[2].requested = -1;

        /* an entry of enabled_devices that is no gim GPU */
        assert_int_equal(gim_conf_parse(&s, "/etc/modprobe.d/x.conf",
                                        "options gim enabled_devices=0000:05:00.0;0000:99:00.0\n",
                                        false),
                         0);
        assert_int_equal(gim_modprobe_build(pfs, 3, &s, &v, &n, bdf), -ENXIO);
        assert_string_equal(bdf, "0000:99:00.0");
        gim_modprobe_scan_done(&s);
        memset(&s, 0, sizeof(s));

        /* unknown or out-of-range values */
        pfs[0].loaded = -1;
        assert_int_equal(gim_modprobe_build(pfs, 3, &s, &v, &n, bdf), -ENODATA);
        assert_string_equal(bdf, "0000:26:00.0");
        pfs[0].loaded = 32;
        assert_int_equal(gim_modprobe_build(pfs, 3, &s, &v, &n, bdf), -ERANGE);
        assert_string_equal(bdf, "0000:26:00.0");
        pfs[0].loaded = 0;
        assert_int_equal(gim_modprobe_build(pfs, 3, &s, &v, &n, bdf), -ERANGE);
        pfs[0].loaded = 8;
        pfs[1].requested = 0;
        assert_int_equal(gim_modprobe_build(pfs, 3, &s, &v, &n, bdf), -ERANGE);
        assert_string_equal(bdf, "0000:05:00.0");
        assert_int_equal(gim_modprobe_build(pfs, 0, &s, &v, &n, bdf), -EINVAL);
}

/* ---- the text, the write ---------------------------------------------------------------- */

static const char expected[] =
        "# Written by amdsmi on 2025-01-31T08:15:02Z: the VF count of each GPU under gim, read "
        "when gim\n"
        "# loads. amdsmi rewrites this file: change it with\n"
        "#   amdsmi sriov set -g GPU --num-vfs N --persist\n"
        "# gim's order of the GPUs: PCI address order\n"
        "# vf_num 0000:05:00.0 8\n"
        "# vf_num 0000:26:00.0 1\n"
        "options gim vf_num=8,1\n";

static void test_render_write(void **state) {
        const struct gim_vf_num v[] = { { "0000:05:00.0", 8 }, { "0000:26:00.0", 1 } };
        _cleanup_free_ char *root = make_root(), *text = NULL, *back = NULL, *other = NULL;
        struct gim_modprobe_scan s = {};
        char full[PATH_MAX];
        struct stat st;

        assert_int_equal(gim_modprobe_render(v, 2, "PCI address order", 1738311302, &text), 0);
        assert_string_equal(text, expected);
        assert_int_equal(gim_modprobe_render(v, 0, "x", 1738311302, &back), -EINVAL);

        /* the directory is made when missing */
        assert_int_equal(gim_modprobe_write(root, text), 0);
        back = get(root, GIM_MODPROBE_FILE);
        assert_string_equal(back, expected);
        snprintf(full, sizeof(full), "%s%s", root, GIM_MODPROBE_FILE);
        assert_int_equal(stat(full, &st), 0);
        assert_int_equal(st.st_mode & 07777, 0644);
        assert_int_equal(count_entries(root, GIM_MODPROBE_DIR), 1); /* no temporary left */

        /* what it wrote reads back as ours, with its values */
        assert_int_equal(gim_modprobe_scan(root, &s, NULL), 0);
        assert_true(s.own_exists);
        assert_int_equal(s.n_conflicts, 0);
        assert_int_equal(s.n_pending, 2);
        assert_string_equal(s.pending[1].bdf, "0000:26:00.0");
        assert_int_equal(s.pending[1].vf_num, 1);
        gim_modprobe_scan_done(&s);

        /* a rewrite replaces it and leaves the other files alone */
        put(root, "/etc/modprobe.d/other.conf", "options gim sch_policy=1\n");
        free(text);
        text = NULL;
        assert_int_equal(gim_modprobe_render(v, 1, "enabled_devices (/x.conf:1)", 0, &text), 0);
        assert_int_equal(gim_modprobe_write(root, text), 0);
        free(back);
        back = get(root, GIM_MODPROBE_FILE);
        assert_string_equal(back, text);
        assert_non_null(strstr(back, "# Written by amdsmi on 1970-01-01T00:00:00Z"));
        assert_non_null(strstr(back, "\noptions gim vf_num=8\n"));
        other = get(root, "/etc/modprobe.d/other.conf");
        assert_string_equal(other, "options gim sch_policy=1\n");
        assert_int_equal(count_entries(root, GIM_MODPROBE_DIR), 2);

        /* a directory that cannot be made: an error, nothing changes */
        rm_rf(root);
        assert_int_equal(mkdir(root, 0700), 0);
        put(root, "/etc/modprobe.d", "a file, not a directory\n");
        assert_true(gim_modprobe_write(root, text) < 0);
        free(other);
        other = get(root, "/etc/modprobe.d");
        assert_string_equal(other, "a file, not a directory\n");
        rm_rf(root);
}

/* ---- the initramfs ------------------------------------------------------------------------ */

static void test_initramfs(void **state) {
        _cleanup_free_ char *root = make_root();
        struct gim_conf_line l = {};

        assert_int_equal(gim_modprobe_initramfs(root, &l), 0);
        put(root, "/etc/initramfs-tools/modules", "# gim\nraid1\ngimx\n");
        assert_int_equal(gim_modprobe_initramfs(root, &l), 0);
        put(root, "/etc/dracut.conf.d/10-x.conf",
            "add_drivers+=\" amdgpu gim_x \"\n"
            "# add_drivers+=\" gim \"\n");
        assert_int_equal(gim_modprobe_initramfs(root, &l), 0);
        put(root, "/etc/dracut.conf.d/20-gim.conf",
            "omit_drivers+=\" x \"\n"
            "force_drivers+=\" vfio-pci gim \"\n");
        assert_int_equal(gim_modprobe_initramfs(root, &l), 1);
        assert_string_equal(l.path, "/etc/dracut.conf.d/20-gim.conf");
        assert_int_equal(l.line, 2);
        put(root, "/etc/initramfs-tools/modules", "raid1\ngim vf_num=1\n");
        assert_int_equal(gim_modprobe_initramfs(root, &l), 1);
        assert_string_equal(l.path, "/etc/initramfs-tools/modules");
        assert_int_equal(l.line, 2);
        assert_string_equal(l.text, "gim vf_num=1");
        rm_rf(root);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_vf_modes),  cmocka_unit_test(test_parse),
                cmocka_unit_test(test_scan),      cmocka_unit_test(test_scan_not_regular),
                cmocka_unit_test(test_build),     cmocka_unit_test(test_render_write),
                cmocka_unit_test(test_initramfs),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
