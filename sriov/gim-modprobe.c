/* SPDX-License-Identifier: MIT */
/* gim's vf_num in /etc/modprobe.d/amdsmi-gim.conf: see gim-modprobe.h. */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "gim-modprobe.h"
#include "macro.h"
#include "parse-util.h"
#include "safe-open.h"

#define CONF_MAX_BYTES (1024 * 1024) /* a configuration file larger than this is not read */

/* kmod's directories, the one that wins first (libkmod's default configuration paths). */
/* clang-format off */
static const char *const conf_dirs[] = {
        "/etc/modprobe.d",
        "/run/modprobe.d",
        "/usr/local/lib/modprobe.d",
        "/lib/modprobe.d",
        "/usr/lib/modprobe.d",
};
/* clang-format on */
#define CONF_LEGACY "/etc/modprobe.conf"
#define OWN_NAME "amdsmi-gim.conf"

/* ---- the products' VF layouts ---------------------------------------------------------- */

static const struct gim_vf_mode mi300x_modes[] = {
        { 1, "SPX", "NPS1" },
        { 8, "CPX", "NPS4" },
};
static const struct gim_vf_mode mi325x_modes[] = {
        { 1, "SPX", "NPS1" },
};
static const struct gim_vf_mode mi350_modes[] = {
        { 1, "SPX", "NPS1" },
        { 2, "DPX", "NPS2" },
        { 8, "CPX", "NPS2" },
};

static const struct {
        const char *product;
        const struct gim_vf_mode *modes;
        size_t n;
} product_modes[] = {
        { "MI300X", mi300x_modes, ELEMENTSOF(mi300x_modes) },
        { "MI325X", mi325x_modes, ELEMENTSOF(mi325x_modes) },
        { "MI350X", mi350_modes, ELEMENTSOF(mi350_modes) },
        { "MI355X", mi350_modes, ELEMENTSOF(mi350_modes) },
};

size_t gim_vf_modes(const char *product, const struct gim_vf_mode **ret) {
        for (size_t i = 0; product && i < ELEMENTSOF(product_modes); i++)
                if (strcmp(product_modes[i].product, product) == 0) {
                        if (ret)
                                *ret = product_modes[i].modes;
                        return product_modes[i].n;
                }
        return 0;
}

const struct gim_vf_mode *gim_vf_mode_find(const char *product, unsigned vfs) {
        const struct gim_vf_mode *m = NULL;
        size_t n = gim_vf_modes(product, &m);

        for (size_t i = 0; i < n; i++)
                if (m[i].vfs == vfs)
                        return &m[i];
        return NULL;
}

/* ---- parsing ---------------------------------------------------------------------------- */

static void line_set(struct gim_conf_line *l, const char *path, unsigned line, const char *text) {
        snprintf(l->path, sizeof(l->path), "%s", path);
        l->line = line;
        snprintf(l->text, sizeof(l->text), "%s", text);
}

/* Parameter names compare with '-' and '_' alike (the kernel's parameq()). */
static bool param_is(const char *name, size_t len, const char *want) {
        size_t i;

        for (i = 0; i < len && want[i]; i++) {
                char a = name[i] == '-' ? '_' : name[i], b = want[i] == '-' ? '_' : want[i];

                if (a != b)
                        return false;
        }
        return i == len && want[i] == '\0';
}

/*
 * The next "name=value" of a module option string, as the kernel's next_arg() splits it:
 * separated by white space, double quotes group (and are dropped). Writes the unquoted token
 * into @buf. @return the rest of the string, or NULL at the end.
 */
static const char *next_param(const char *s, char *buf, size_t size) {
        bool quoted = false;
        size_t n = 0;

        while (*s && isspace((unsigned char) *s))
                s++;
        if (*s == '\0')
                return NULL;
        for (; *s && (quoted || !isspace((unsigned char) *s)); s++) {
                if (*s == '"') {
                        quoted = !quoted;
                        continue;
                }
                if (n + 1 < size)
                        buf[n++] = *s;
        }
        buf[n] = '\0';
        return s;
}

/* "05:00.0" or "0000:05:00.0" (any case) as the kernel names it; -EINVAL for anything else. */
static int normalise_bdf(const char *in, size_t len, char *out, size_t size) {
        char tmp[32];

        while (len > 0 && isspace((unsigned char) *in)) {
                in++;
                len--;
        }
        while (len > 0 && isspace((unsigned char) in[len - 1]))
                len--;
        if (len == 0 || len >= sizeof(tmp) - 5)
                return -EINVAL;
        if (len == 7) /* bb:dd.f */
                snprintf(tmp, sizeof(tmp), "0000:%.*s", (int) len, in);
        else
                snprintf(tmp, sizeof(tmp), "%.*s", (int) len, in);
        for (char *p = tmp; *p; p++)
                *p = (char) tolower((unsigned char) *p);
        if (!pci_bdf_valid(tmp) || strlen(tmp) >= size)
                return -EINVAL;
        snprintf(out, size, "%s", tmp);
        return 0;
}

/* enabled_devices="aaaa:xx:yy.z;...": the BDFs, NULL-terminated. */
static int parse_devices(const char *value, char ***ret) {
        char **l = NULL;
        size_t n = 0;

        for (const char *p = value; *p;) {
                size_t len = strcspn(p, ";,");
                char bdf[16], **nl;

                if (len > 0 && strspn(p, " \t") < len) {
                        if (normalise_bdf(p, len, bdf, sizeof(bdf)) < 0) {
                                strv_free(l);
                                return -EBADMSG;
                        }
                        nl = realloc(l, (n + 2) * sizeof(char *));
                        if (!nl) {
                                strv_free(l);
                                return -ENOMEM;
                        }
                        l = nl;
                        l[n] = strdup(bdf);
                        l[n + 1] = NULL;
                        if (!l[n]) {
                                strv_free(l);
                                return -ENOMEM;
                        }
                        n++;
                }
                p += len;
                if (*p)
                        p++;
        }
        if (n == 0) { /* an empty list: as if not set */
                *ret = NULL;
                return 0;
        }
        *ret = l;
        return 1;
}

/* "# vf_num 0000:05:00.0 8" of our file. */
static int parse_pending(struct gim_modprobe_scan *s, const char *line) {
        char bdf[32], extra[2];
        unsigned v;
        struct gim_vf_num *nv;

        if (sscanf(line, "# vf_num %31s %u %1s", bdf, &v, extra) != 2)
                return 0;
        if (!pci_bdf_valid(bdf) || strlen(bdf) >= sizeof(nv->bdf))
                return 0;
        for (size_t i = 0; i < s->n_pending; i++)
                if (strcmp(s->pending[i].bdf, bdf) == 0) {
                        s->pending[i].vf_num = v;
                        return 0;
                }
        nv = realloc(s->pending, (s->n_pending + 1) * sizeof(*nv));
        if (!nv)
                return -ENOMEM;
        s->pending = nv;
        memcpy(nv[s->n_pending].bdf, bdf, strlen(bdf) + 1);
        nv[s->n_pending].vf_num = v;
        s->n_pending++;
        return 0;
}

static void add_conflict(struct gim_modprobe_scan *s, const char *path, unsigned line,
                         const char *text) {
        if (s->n_conflicts < GIM_MODPROBE_MAX_CONFLICTS)
                line_set(&s->conflicts[s->n_conflicts], path, line, text);
        s->n_conflicts++;
}

/* One logical line (continuations joined): "options gim ..." or "install gim ...". */
static int parse_line(struct gim_modprobe_scan *s, const char *path, unsigned lineno,
                      const char *line, bool own) {
        char cmd[16], module[64], param[4096];
        const char *p = line, *rest;
        bool conflict = false;
        int n = 0;

        if (line[0] == '#')
                return own ? parse_pending(s, line) : 0;
        if (sscanf(line, "%15s %63s %n", cmd, module, &n) < 2 || n <= 0)
                return 0;
        if (strcmp(module, "gim") != 0)
                return 0;
        rest = line + n;

        if (strcmp(cmd, "install") == 0) {
                /* a command line that loads gim itself may pass vf_num */
                if (!own && (strstr(rest, "vf_num=") || strstr(rest, "vf-num=")))
                        add_conflict(s, path, lineno, line);
                return 0;
        }
        if (strcmp(cmd, "options") != 0)
                return 0;

        for (p = rest; (p = next_param(p, param, sizeof(param)));) {
                const char *eq = strchr(param, '=');
                size_t len = eq ? (size_t) (eq - param) : strlen(param);

                if (param_is(param, len, "vf_num")) {
                        if (!own && !conflict)
                                add_conflict(s, path, lineno, line);
                        conflict = true;
                } else if (param_is(param, len, "enabled_devices") && eq && !own) {
                        char **l = NULL;
                        int r = parse_devices(eq + 1, &l);

                        line_set(&s->enabled_devices_line, path, lineno, line);
                        if (r < 0)
                                return r;
                        strv_free(s->enabled_devices);
                        s->enabled_devices = l;
                }
        }
        return 0;
}

int gim_conf_parse(struct gim_modprobe_scan *s, const char *path, const char *text, bool own) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, cap = 0;
        unsigned lineno = 0, first = 0;
        int r;

        /* kmod's reading: a backslash at the end of a line continues it on the next line */
        for (const char *p = text; p && *p;) {
                const char *nl = strchr(p, '\n');
                size_t n = nl ? (size_t) (nl - p) : strlen(p);
                bool cont;

                lineno++;
                if (len == 0)
                        first = lineno;
                cont = n > 0 && p[n - 1] == '\\';
                if (cont)
                        n--;
                if (len + n + 1 > cap) {
                        char *nb;

                        cap = (len + n + 1) * 2;
                        nb = realloc(buf, cap);
                        if (!nb)
                                return -ENOMEM;
                        buf = nb;
                }
                memcpy(buf + len, p, n);
                len += n;
                buf[len] = '\0';
                p = nl ? nl + 1 : p + strlen(p);
                if (cont && *p)
                        continue;
                r = parse_line(s, path, first, buf, own);
                if (r < 0)
                        return r;
                len = 0;
        }
        return 0;
}

void gim_modprobe_scan_done(struct gim_modprobe_scan *s) {
        strv_free(s->enabled_devices);
        s->enabled_devices = NULL;
        free(s->pending);
        s->pending = NULL;
        s->n_pending = 0;
}

/* ---- reading the configuration ------------------------------------------------------------ */

static int root_path(const char *root, const char *path, char *buf, size_t size) {
        int n;

        if (!root || !*root || strcmp(root, "/") == 0)
                root = "";
        n = snprintf(buf, size, "%s%s", root, path);
        if (n < 0 || (size_t) n >= size)
                return -ENAMETOOLONG;
        return 0;
}

/*
 * The whole file; -ENOENT when it does not exist, -EFBIG above CONF_MAX_BYTES. Never waits on
 * a FIFO: anything but a regular file is refused (safe-open.h: -EBADFD, -EISDIR, -ELOOP). Our
 * own file (@own) is never reached through a symbolic link; others may be links, as kmod
 * allows, and one to /dev/null masks the file (read as empty, as kmod does).
 */
static int read_file(const char *path, bool own, char **ret) {
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *buf = NULL;
        _cleanup_close_ int fd = -EBADF;
        size_t n = 0, cap = 0;
        struct stat st;
        int r;

        if (own)
                fd = safe_open(path, O_RDONLY, 0, 0);
        else {
                fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
                if (fd < 0)
                        fd = -errno;
                else if (fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) &&
                         st.st_rdev == makedev(1, 3)) {
                        buf = strdup(""); /* /dev/null: masked */
                        if (!buf)
                                return -ENOMEM;
                        *ret = TAKE_PTR(buf);
                        return 0;
                } else if ((r = fd_verify_regular(fd, 0)) < 0)
                        return r;
        }
        if (fd < 0)
                return fd;
        f = fdopen(fd, "re");
        if (!f)
                return -errno;
        TAKE_FD(fd);
        for (;;) {
                size_t k;

                if (n + 4096 + 1 > cap) {
                        char *nb;

                        cap = n + 4096 + 1;
                        if (cap > CONF_MAX_BYTES + 4096 + 1)
                                return -EFBIG;
                        nb = realloc(buf, cap);
                        if (!nb)
                                return -ENOMEM;
                        buf = nb;
                }
                k = fread(buf + n, 1, 4096, f);
                n += k;
                if (k < 4096) {
                        if (ferror(f))
                                return -EIO;
                        break;
                }
        }
        if (n > CONF_MAX_BYTES)
                return -EFBIG;
        buf[n] = '\0';
        if (strlen(buf) != n) /* NUL bytes: not a text file kmod would use sensibly */
                return -EBADMSG;
        *ret = TAKE_PTR(buf);
        return 0;
}

static bool conf_name(const char *name) {
        size_t len = strlen(name);

        if (name[0] == '.')
                return false;
        return (len > 5 && strcmp(name + len - 5, ".conf") == 0) ||
               (len > 6 && strcmp(name + len - 6, ".alias") == 0);
}

static bool seen(char **names, size_t n, const char *name) {
        for (size_t i = 0; i < n; i++)
                if (strcmp(names[i], name) == 0)
                        return true;
        return false;
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

static int scan_file(struct gim_modprobe_scan *s, const char *root, const char *path, bool own,
                     char *ret_error_path) {
        char full[PATH_MAX];
        _cleanup_free_ char *text = NULL;
        int r;

        r = root_path(root, path, full, sizeof(full));
        if (r < 0)
                return r;
        r = read_file(full, own, &text);
        if (r == -ENOENT || (r == -EISDIR && !own))
                return 0;
        if (r < 0) {
                if (ret_error_path)
                        snprintf(ret_error_path, PATH_MAX, "%s", path);
                /* a FIFO, link...: said as such (safe_open_message()) */
                return r == -ENOMEM || r == -ELOOP || r == -EISDIR || r == -EBADFD ? r : -EIO;
        }
        if (own)
                s->own_exists = true;
        return gim_conf_parse(s, path, text, own);
}

int gim_modprobe_scan(const char *root, struct gim_modprobe_scan *ret, char *ret_error_path) {
        char **names = NULL; /* file names already taken by an earlier directory */
        size_t n_names = 0;
        int r = 0;

        /* our file hides its name in every later directory once it is written */
        names = calloc(1, sizeof(char *));
        if (!names || !(names[n_names++] = strdup(OWN_NAME))) {
                free(names);
                return -ENOMEM;
        }
        r = scan_file(ret, root, GIM_MODPROBE_FILE, true, ret_error_path);

        for (size_t d = 0; r >= 0 && d < ELEMENTSOF(conf_dirs); d++) {
                _cleanup_closedir_ DIR *dir = NULL;
                char full[PATH_MAX], **list = NULL;
                size_t n_list = 0;
                struct dirent *de;

                r = root_path(root, conf_dirs[d], full, sizeof(full));
                if (r < 0)
                        break;
                dir = opendir(full);
                if (!dir) {
                        r = errno == ENOENT || errno == ENOTDIR ? 0 : -EIO;
                        if (r < 0 && ret_error_path)
                                snprintf(ret_error_path, PATH_MAX, "%s", conf_dirs[d]);
                        continue;
                }
                /* the same directory reached twice (/lib a link to /usr/lib): its names are
                 * taken already, so it adds nothing */
                while ((de = readdir(dir))) {
                        char **nl;

                        if (!conf_name(de->d_name) || seen(names, n_names, de->d_name))
                                continue;
                        nl = realloc(list, (n_list + 1) * sizeof(char *));
                        if (!nl || !(nl[n_list] = strdup(de->d_name))) {
                                list = nl ? nl : list;
                                r = -ENOMEM;
                                break;
                        }
                        list = nl;
                        n_list++;
                }
                if (n_list > 0)
                        qsort(list, n_list, sizeof(char *), cmp_str);
                for (size_t i = 0; r >= 0 && i < n_list; i++) {
                        char path[PATH_MAX];

                        if (snprintf(path, sizeof(path), "%s/%s", conf_dirs[d], list[i]) >=
                            (int) sizeof(path))
                                continue;
                        r = scan_file(ret, root, path, false, ret_error_path);
                }
                /* the names of this directory hide the same names in the later ones */
                for (size_t i = 0; i < n_list; i++) {
                        char **nn = r >= 0 ? realloc(names, (n_names + 1) * sizeof(char *)) : NULL;

                        if (!nn) {
                                free(list[i]);
                                if (r >= 0)
                                        r = -ENOMEM;
                                continue;
                        }
                        names = nn;
                        names[n_names++] = list[i];
                }
                free(list);
        }
        if (r >= 0)
                r = scan_file(ret, root, CONF_LEGACY, false, ret_error_path);

        for (size_t i = 0; i < n_names; i++)
                free(names[i]);
        free(names);
        return r < 0 ? r : 0;
}

/* ---- the new list ------------------------------------------------------------------------- */

static int cmp_pf(const void *a, const void *b) {
        return strcmp(((const struct gim_pf *) a)->bdf, ((const struct gim_pf *) b)->bdf);
}

static const struct gim_pf *find_pf(const struct gim_pf *pfs, size_t n, const char *bdf) {
        for (size_t i = 0; i < n; i++)
                if (strcmp(pfs[i].bdf, bdf) == 0)
                        return &pfs[i];
        return NULL;
}

static void set_bdf(char *ret_bdf, const char *bdf) {
        if (ret_bdf)
                snprintf(ret_bdf, 16, "%s", bdf);
}

static int value_of(const struct gim_pf *pf, const struct gim_modprobe_scan *scan, unsigned *ret) {
        if (pf->requested >= 0) {
                *ret = (unsigned) pf->requested;
                return 0;
        }
        for (size_t i = 0; i < scan->n_pending; i++)
                if (strcmp(scan->pending[i].bdf, pf->bdf) == 0) {
                        *ret = scan->pending[i].vf_num;
                        return 0;
                }
        if (pf->loaded < 0)
                return -ENODATA;
        *ret = (unsigned) pf->loaded;
        return 0;
}

int gim_modprobe_build(const struct gim_pf *pfs, size_t n, const struct gim_modprobe_scan *scan,
                       struct gim_vf_num **ret, size_t *ret_n, char *ret_bdf) {
        _cleanup_free_ struct gim_pf *sorted = NULL;
        _cleanup_free_ struct gim_vf_num *out = NULL;
        size_t n_out = 0;

        if (n == 0)
                return -EINVAL;
        sorted = malloc(n * sizeof(*sorted));
        if (!sorted)
                return -ENOMEM;
        memcpy(sorted, pfs, n * sizeof(*sorted));
        qsort(sorted, n, sizeof(*sorted), cmp_pf);

        out = calloc(n, sizeof(*out));
        if (!out)
                return -ENOMEM;

        if (scan->enabled_devices) {
                /* a requested GPU gim would not drive: its value would go nowhere */
                for (size_t i = 0; i < n; i++) {
                        bool listed = false;

                        for (char **d = scan->enabled_devices; *d; d++)
                                if (strcmp(*d, pfs[i].bdf) == 0)
                                        listed = true;
                        if (pfs[i].requested >= 0 && !listed) {
                                set_bdf(ret_bdf, pfs[i].bdf);
                                return -ENXIO;
                        }
                }
        }

        /* every GPU gim is told to drive must be one we know */
        for (char **d = scan->enabled_devices; d && *d; d++)
                if (!find_pf(sorted, n, *d)) {
                        set_bdf(ret_bdf, *d);
                        return -ENXIO;
                }
        /* gim numbers the GPUs it drives in PCI order (enabled_devices only chooses them,
         * the PCI core probes in bus order), as amdsmi_gpu_read_sriov() reads vf_num back */
        for (size_t i = 0; i < n; i++) {
                const struct gim_pf *pf = &sorted[i];
                bool listed = !scan->enabled_devices;
                unsigned v;
                int r;

                for (char **d = scan->enabled_devices; d && *d && !listed; d++)
                        listed = strcmp(*d, pf->bdf) == 0;
                if (!listed)
                        continue;
                r = value_of(pf, scan, &v);
                if (r < 0) {
                        set_bdf(ret_bdf, pf->bdf);
                        return r;
                }
                if (v < GIM_VF_NUM_MIN || v > GIM_VF_NUM_MAX) {
                        set_bdf(ret_bdf, pf->bdf);
                        return -ERANGE;
                }
                snprintf(out[n_out].bdf, sizeof(out[0].bdf), "%s", pf->bdf);
                out[n_out++].vf_num = v;
        }
        *ret = TAKE_PTR(out);
        *ret_n = n_out;
        return 0;
}

/* ---- writing ------------------------------------------------------------------------------ */

int gim_modprobe_render(const struct gim_vf_num *v, size_t n, const char *order_note, time_t now,
                        char **ret) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        char stamp[32];
        struct tm tm;
        FILE *f;

        if (n == 0 || !gmtime_r(&now, &tm) ||
            strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
                return -EINVAL;
        f = open_memstream(&text, &size);
        if (!f)
                return -ENOMEM;
        fprintf(f,
                "# Written by amdsmi on %s: the VF count of each GPU under gim, read when gim\n"
                "# loads. amdsmi rewrites this file: change it with\n"
                "#   amdsmi sriov set -g GPU --num-vfs N --persist\n"
                "# gim's order of the GPUs: %s\n",
                stamp, order_note);
        for (size_t i = 0; i < n; i++)
                fprintf(f, "# vf_num %s %u\n", v[i].bdf, v[i].vf_num);
        fputs("options gim vf_num=", f);
        for (size_t i = 0; i < n; i++)
                fprintf(f, "%s%u", i ? "," : "", v[i].vf_num);
        fputc('\n', f);
        if (fclose(f) != 0)
                return -ENOMEM;
        *ret = TAKE_PTR(text);
        return 0;
}

static int mkdir_parents(const char *path) {
        char buf[PATH_MAX];

        if (snprintf(buf, sizeof(buf), "%s", path) >= (int) sizeof(buf))
                return -ENAMETOOLONG;
        for (char *p = buf + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = '\0';
                if (mkdir(buf, 0755) < 0 && errno != EEXIST)
                        return -errno;
                *p = '/';
        }
        if (mkdir(buf, 0755) < 0 && errno != EEXIST)
                return -errno;
        return 0;
}

int gim_modprobe_write(const char *root, const char *text) {
        char dir[PATH_MAX], path[PATH_MAX], tmp[PATH_MAX];
        _cleanup_close_ int fd = -EBADF, dfd = -EBADF;
        size_t len = strlen(text), done = 0;
        int r;

        r = root_path(root, GIM_MODPROBE_DIR, dir, sizeof(dir));
        if (r >= 0)
                r = root_path(root, GIM_MODPROBE_FILE, path, sizeof(path));
        if (r >= 0 &&
            snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", dir, OWN_NAME) >= (int) sizeof(tmp))
                r = -ENAMETOOLONG;
        if (r < 0)
                return r;
        r = mkdir_parents(dir);
        if (r < 0)
                return r;

        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return -errno;
        while (done < len) {
                ssize_t k = write(fd, text + done, len - done);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0) {
                        r = k < 0 ? -errno : -EIO;
                        goto fail;
                }
                done += (size_t) k;
        }
        if (fchmod(fd, 0644) < 0 || fsync(fd) < 0) {
                r = -errno;
                goto fail;
        }
        if (close(TAKE_FD(fd)) < 0) {
                r = -errno;
                goto fail;
        }
        if (rename(tmp, path) < 0) {
                r = -errno;
                goto fail;
        }
        dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0)
                (void) fsync(dfd);
        return 0;

fail:
        (void) unlink(tmp);
        return r;
}

/* ---- the initramfs ------------------------------------------------------------------------ */

/* A line of initramfs-tools' modules file: the module name first. */
static bool modules_line_is_gim(const char *line) {
        char word[64];

        return sscanf(line, "%63s", word) == 1 && word[0] != '#' && strcmp(word, "gim") == 0;
}

/* dracut: add_drivers+=" gim " / force_drivers+="gim" (the word gim inside the value). */
static bool dracut_line_is_gim(const char *line) {
        const char *eq, *p;

        while (isspace((unsigned char) *line))
                line++;
        if (line[0] == '#' ||
            !(strncmp(line, "add_drivers", 11) == 0 || strncmp(line, "force_drivers", 13) == 0))
                return false;
        eq = strchr(line, '=');
        if (!eq)
                return false;
        for (p = eq + 1; (p = strstr(p, "gim")); p += 3) {
                bool start = !(isalnum((unsigned char) p[-1]) || p[-1] == '_' || p[-1] == '-');
                bool end = !(isalnum((unsigned char) p[3]) || p[3] == '_' || p[3] == '-');

                if (start && end)
                        return true;
        }
        return false;
}

static int find_line(const char *root, const char *path, bool (*match)(const char *),
                     struct gim_conf_line *ret) {
        char full[PATH_MAX];
        _cleanup_free_ char *text = NULL;
        unsigned lineno = 0;
        int r;

        r = root_path(root, path, full, sizeof(full));
        if (r < 0)
                return r;
        r = read_file(full, false, &text);
        if (r == -ENOENT || r == -ENOTDIR || r == -EISDIR)
                return 0;
        if (r < 0)
                return r;
        for (char *p = text; *p;) {
                char *nl = strchr(p, '\n');

                if (nl)
                        *nl = '\0';
                lineno++;
                if (match(p)) {
                        if (ret)
                                line_set(ret, path, lineno, p);
                        return 1;
                }
                if (!nl)
                        break;
                p = nl + 1;
        }
        return 0;
}

int gim_modprobe_initramfs(const char *root, struct gim_conf_line *ret) {
        _cleanup_closedir_ DIR *dir = NULL;
        char full[PATH_MAX], **list = NULL;
        size_t n_list = 0;
        struct dirent *de;
        int r;

        r = find_line(root, "/etc/initramfs-tools/modules", modules_line_is_gim, ret);
        if (r != 0)
                return r;
        r = find_line(root, "/etc/dracut.conf", dracut_line_is_gim, ret);
        if (r != 0)
                return r;
        r = root_path(root, "/etc/dracut.conf.d", full, sizeof(full));
        if (r < 0)
                return r;
        dir = opendir(full);
        if (!dir)
                return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
        while ((de = readdir(dir))) {
                size_t len = strlen(de->d_name);
                char **nl;

                if (de->d_name[0] == '.' || len <= 5 || strcmp(de->d_name + len - 5, ".conf") != 0)
                        continue;
                nl = realloc(list, (n_list + 1) * sizeof(char *));
                if (!nl) {
                        r = -ENOMEM;
                        break;
                }
                list = nl;
                if (!(list[n_list] = strdup(de->d_name))) {
                        r = -ENOMEM;
                        break;
                }
                n_list++;
        }
        if (r >= 0 && n_list > 0)
                qsort(list, n_list, sizeof(char *), cmp_str);
        for (size_t i = 0; r == 0 && i < n_list; i++) {
                char path[PATH_MAX];

                snprintf(path, sizeof(path), "/etc/dracut.conf.d/%s", list[i]);
                r = find_line(root, path, dracut_line_is_gim, ret);
        }
        for (size_t i = 0; i < n_list; i++)
                free(list[i]);
        free(list);
        return r;
}
