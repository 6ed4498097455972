/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-sim: the command line. mount, snapshot, run, ctl, dump-machine, --list-machines.
 *
 * Threads: the FUSE loop runs at most 8 worker threads (4 kept idle) and the notifier; `mount`
 * and `run` also serve the control socket on a thread of its own (ctl.c), and `run` runs the
 * loop on another. `run` unshares its mount and PID namespaces before any thread exists;
 * `mount` starts its threads after it went into the background.
 */
#include "config.h"

#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "ctl.h"
#include "fs.h"
#include "machine.h"
#include "tree.h"

enum {
        EXIT_USAGE = 2,
        EXIT_MACHINE = 3,
};

#define HOOKS_MAX 64

struct hook {
        enum {
                HOOK_KFD_USERS,
                HOOK_IN_RESET,
                HOOK_PLATFORM_LIMIT,
                HOOK_SWITCH_ERROR
        } kind;
        char bdf[16];
        long long value;
        bool always;
};

struct options {
        const char *machine;
        uint64_t seed;
        bool seed_set, frozen, foreground;
        struct hook hooks[HOOKS_MAX];
        size_t n_hooks;
        char **cmd;      /* run: after "--" */
        const char *ctl; /* --ctl: the control socket's path */
        const char *dev_root; /* --dev-root: where the kfd file is made */
};

static void help(void) {
        printf("Usage: amdsmi-sim [OPTIONS] COMMAND ...\n"
               "\n"
               "A simulated AMD Instinct GPU server: the amdgpu, KFD, hwmon and PCI sysfs of a\n"
               "whole machine, served through FUSE, with the kernel's behaviour on writes.\n"
               "\n"
               "Commands:\n"
               "  mount DIR             Serve the simulated sysfs at DIR (in the background\n"
               "                        unless -f); stop it with fusermount3 -u DIR\n"
               "  snapshot DIR          Write the same tree as a plain directory tree into DIR\n"
               "                        (created, or empty)\n"
               "  run -- CMD [ARG...]   Run CMD in private mount and PID namespaces with the\n"
               "                        simulated tree mounted over /sys (root only)\n"
               "  ctl [--socket PATH|--mount DIR] COMMAND ...\n"
               "                        Control a running simulator (amdsmi-sim ctl --help)\n"
               "  dump-machine NAME|FILE\n"
               "                        Print the full JSON description of a machine\n"
               "  list-machines         List the built-in machines (also --list-machines)\n"
               "\n"
               "Options:\n"
               "  -m, --machine NAME|FILE.json  The machine (default: mi300x-8)\n"
               "      --seed N                  Seed of the living telemetry (reproducible runs)\n"
               "      --frozen                  Telemetry stands still (golden tests)\n"
               "  -f, --foreground              mount: stay in the foreground\n"
               "      --ctl PATH                mount, run: the control socket (default:\n"
               "                                $XDG_RUNTIME_DIR/amdsmi-sim-PID.sock, else\n"
               "                                in /run/amdsmi-sim or $TMPDIR/amdsmi-sim-UID)\n"
               "      --kfd-users BDF=N         N processes use the GPU through KFD\n"
               "      --in-reset BDF            The GPU is in a reset\n"
               "      --platform-limit BDF=W    The BMC limits the GPU's power to W watts\n"
               "      --dev-root DIR            mount, run: make DIR/kfd, the device file the\n"
               "                                KFD shim answers (run: a private directory\n"
               "                                by default, exported as AMDSMI_DEV_ROOT)\n"
               "      --inject-switch-error BDF=ERRNO[:always]\n"
               "                                The next (or every) compute partition switch\n"
               "                                of the GPU fails with ERRNO (EIO: KFD re-init)\n"
               "  -h, --help                    Show this help\n"
               "      --version                 Show the version\n"
               "\n"
               "Exit status:\n"
               "  0  success; for run, CMD's exit status (128+N when a signal N ended it,\n"
               "     127 when CMD was not found, 126 when it could not be executed)\n"
               "  1  the simulator failed (mount, namespaces, writing the snapshot)\n"
               "  2  usage error\n"
               "  3  the machine description is invalid or unknown\n");
}

_printf_(1, 2) static int usage_error(const char *fmt, ...) {
        va_list ap;

        fprintf(stderr, "amdsmi-sim: ");
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, "\nTry 'amdsmi-sim --help'.\n");
        return EXIT_USAGE;
}

static int parse_errno(const char *s, int *ret) {
        return sim_errno_parse(s, ret); /* the control socket's names */
}

/* "BDF=VALUE" or "BDF" */
static int parse_hook(struct options *o, int kind, const char *opt, const char *arg) {
        struct hook *h;
        const char *eq = strchr(arg, '=');
        size_t blen = eq ? (size_t) (eq - arg) : strlen(arg);
        char *end;

        if (o->n_hooks == HOOKS_MAX)
                return usage_error("%s: too many", opt);
        h = &o->hooks[o->n_hooks];
        *h = (struct hook){ .kind = kind };
        if (blen == 0 || blen >= sizeof(h->bdf))
                return usage_error("%s %s: expected a PCI address like 0000:05:00.0", opt, arg);
        memcpy(h->bdf, arg, blen);
        if (kind == HOOK_IN_RESET) {
                if (eq)
                        return usage_error("%s %s: takes a PCI address only", opt, arg);
        } else if (!eq || !eq[1]) {
                return usage_error("%s %s: expected BDF=VALUE", opt, arg);
        } else if (kind == HOOK_SWITCH_ERROR) {
                _cleanup_free_ char *name = strdup(eq + 1);
                char *colon = name ? strchr(name, ':') : NULL;
                int err;

                if (!name)
                        return 1;
                if (colon) {
                        if (!streq(colon, ":always"))
                                return usage_error("%s %s: only \":always\" may follow the errno",
                                                   opt, arg);
                        *colon = '\0';
                        h->always = true;
                }
                if (parse_errno(name, &err) < 0)
                        return usage_error("%s %s: \"%s\" is not an errno (EIO, EBUSY, ... or a "
                                           "number)",
                                           opt, arg, name);
                h->value = err;
        } else {
                errno = 0;
                h->value = strtoll(eq + 1, &end, 10);
                if (errno || *end || h->value < 0 || h->value > (1 << 20))
                        return usage_error("%s %s: \"%s\" is not a count or watts", opt, arg,
                                           eq + 1);
        }
        o->n_hooks++;
        return 0;
}

static int apply_hooks(struct sim_machine *m, const struct options *o) {
        for (size_t i = 0; i < o->n_hooks; i++) {
                const struct hook *h = &o->hooks[i];
                int r;

                switch (h->kind) {
                case HOOK_KFD_USERS:
                        r = sim_set_kfd_users(m, h->bdf, (unsigned) h->value);
                        break;
                case HOOK_IN_RESET:
                        r = sim_set_in_reset(m, h->bdf, true);
                        break;
                case HOOK_PLATFORM_LIMIT:
                        r = sim_set_platform_limit(m, h->bdf, h->value);
                        break;
                default:
                        r = sim_inject_switch_error(m, h->bdf, (int) h->value, h->always);
                        break;
                }
                if (r == -ENODEV)
                        return usage_error("%s: no GPU at this address in machine %s", h->bdf,
                                           m->name);
                if (r < 0)
                        return usage_error("%s: %s", h->bdf, strerror(-r));
        }
        return 0;
}

/* The machine and its tree, ready to serve. */
static int load(const struct options *o, struct sim_machine **ret_m, struct sim_fs **ret_fs) {
        struct sim_machine *m = NULL;
        struct sim_fs *fs = NULL;
        int r;

        r = sim_machine_load(o->machine, &m);
        if (r < 0)
                return EXIT_MACHINE;
        if (o->seed_set)
                m->seed = o->seed;
        else if (getrandom(&m->seed, sizeof(m->seed), GRND_NONBLOCK) != sizeof(m->seed))
                m->seed = (uint64_t) time(NULL) ^ (uint64_t) getpid() << 32;
        m->frozen = o->frozen;
        r = apply_hooks(m, o);
        if (r != 0) {
                sim_machine_free(m);
                return r;
        }
        r = sim_fs_new(&fs);
        if (r >= 0)
                r = sim_tree_build(m, fs);
        if (r >= 0)
                r = sim_control_init(m); /* the state at load, for replug */
        if (r < 0) {
                fprintf(stderr, "amdsmi-sim: cannot build the tree of %s: %s\n", m->name,
                        strerror(-r));
                sim_fs_free(fs);
                sim_machine_free(m);
                return EXIT_FAILURE;
        }
        *ret_m = m;
        *ret_fs = fs;
        return 0;
}

static int cmd_list(void) {
        for (size_t i = 0; i < sim_n_presets; i++) {
                struct sim_machine *m;

                if (sim_machine_load(sim_presets[i].name, &m) < 0)
                        return EXIT_MACHINE;
                printf("%-14s %s\n", m->name, m->description);
                sim_machine_free(m);
        }
        return 0;
}

static int cmd_dump(const char *name) {
        _cleanup_free_ char *json = NULL;
        struct sim_machine *m;
        int r;

        if (sim_machine_load(name, &m) < 0)
                return EXIT_MACHINE;
        r = sim_machine_dump(m, &json);
        sim_machine_free(m);
        if (r < 0) {
                fprintf(stderr, "amdsmi-sim: %s\n", strerror(-r));
                return EXIT_FAILURE;
        }
        printf("%s\n", json);
        return 0;
}

static int make_dev_root(const char *dir);

static int check_dir(const char *dir) {
        struct stat st;

        if (stat(dir, &st) < 0)
                return usage_error("%s: %s", dir, strerror(errno));
        if (!S_ISDIR(st.st_mode))
                return usage_error("%s: not a directory", dir);
        return 0;
}

static int cmd_mount(const struct options *o, const char *dir) {
        struct sim_serve_config cfg = {
                .mountpoint = dir,
                .foreground = o->foreground,
                .allow_other = geteuid() == 0,
                .auto_unmount = true,
        };
        _cleanup_free_ char *real = NULL;
        struct sim_ctl *ctl = NULL;
        struct sim_machine *m;
        struct sim_fs *fs;
        int r;

        r = check_dir(dir);
        if (r != 0)
                return r;
        if (o->dev_root && make_dev_root(o->dev_root) < 0)
                return EXIT_FAILURE;
        /* now: once mounted, a lookup of the mount point needs the loop running */
        real = realpath(dir, NULL);
        if (!real)
                return usage_error("%s: %s", dir, strerror(errno));
        r = load(o, &m, &fs);
        if (r != 0)
                return r;
        r = sim_fs_mount(fs, &cfg);
        if (r < 0)
                fprintf(stderr, "amdsmi-sim: cannot mount at %s\n", dir);
        else {
                /* the socket exists (and is registered) before mount returns; its thread
                 * starts in the background process */
                r = sim_ctl_new(m,
                                &(struct sim_ctl_config){ .socket_path = o->ctl,
                                                          .mountpoint = real,
                                                          .register_mount = true },
                                &ctl);
                if (r >= 0)
                        r = sim_fs_daemonize(fs, o->foreground);
                /* (after daemonize: SIGPIPE is ignored when nobody reads the line) */
                if (r >= 0 && o->foreground) {
                        printf("amdsmi-sim: %s mounted at %s, control socket %s\n", m->name, real,
                               sim_ctl_socket(ctl));
                        fflush(stdout);
                }
                if (r >= 0)
                        r = sim_ctl_start(ctl);
                if (r >= 0)
                        r = sim_fs_loop(fs);
                ctl = sim_ctl_free(ctl);
                sim_fs_unmount(fs);
        }
        sim_fs_free(fs);
        sim_control_free(m);
        sim_machine_free(m);
        return r < 0 ? EXIT_FAILURE : 0;
}

static int cmd_snapshot(const struct options *o, const char *dir) {
        struct sim_machine *m;
        struct sim_fs *fs;
        int r;

        {
                _cleanup_(closedirp) DIR *d = opendir(dir);
                struct dirent *de;

                if (!d && errno != ENOENT)
                        return usage_error("%s: %s", dir, strerror(errno));
                while (d && (de = readdir(d)))
                        if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                                return usage_error("%s: not empty", dir);
        }
        r = load(o, &m, &fs);
        if (r != 0)
                return r;
        if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
                r = -errno;
                fprintf(stderr, "amdsmi-sim: %s: %s\n", dir, strerror(-r));
        } else {
                r = sim_fs_snapshot(fs, dir);
                if (r < 0)
                        fprintf(stderr, "amdsmi-sim: writing the snapshot into %s: %s\n", dir,
                                strerror(-r));
        }
        sim_fs_free(fs);
        sim_control_free(m);
        sim_machine_free(m);
        return r < 0 ? EXIT_FAILURE : 0;
}

/* ---------------------------------------------------------------------------------------- */
/* run */

static volatile pid_t forward_to;

static void forward_signal(int sig) {
        if (forward_to > 0)
                kill(forward_to, sig);
}

static void forward_signals(void) {
        static const int sigs[] = { SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2 };
        struct sigaction sa = { .sa_handler = forward_signal, .sa_flags = SA_RESTART };

        sigemptyset(&sa.sa_mask);
        for (size_t i = 0; i < ELEMENTSOF(sigs); i++)
                sigaction(sigs[i], &sa, NULL);
}

static int exit_status(int status) {
        if (WIFEXITED(status))
                return WEXITSTATUS(status);
        if (WIFSIGNALED(status))
                return 128 + WTERMSIG(status);
        return EXIT_FAILURE;
}

/* DIR/kfd, the file whose descriptors the KFD shim answers (an empty regular file). */
static int make_dev_root(const char *dir) {
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *path = strdupf("%s/kfd", dir);

        if (!path)
                return -ENOMEM;
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
        if (fd < 0 || fchmod(fd, 0666) < 0) {
                int r = -errno;

                fprintf(stderr, "amdsmi-sim: %s: %s\n", path, strerror(-r));
                return r;
        }
        return 0;
}

/* The KFD shim: $AMDSMI_SIM_SHIM, next to this executable (a build directory), or installed. */
static char *shim_path(void) {
        const char *env = getenv("AMDSMI_SIM_SHIM");
        char self[PATH_MAX], *slash, *p;
        ssize_t k;

        if (env && *env)
                return strdup(env);
        k = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (k > 0) {
                self[k] = '\0';
                slash = strrchr(self, '/');
                if (slash) {
                        *slash = '\0';
                        p = strdupf("%s/libamdsmi-sim-kfd.so", self);
                        if (p && access(p, R_OK) == 0)
                                return p;
                        free(p);
                }
        }
        return strdup(SIM_SHIM_DIR "/libamdsmi-sim-kfd.so");
}

/* The host's files outside /sys that CMD sees (struct sim_host): /proc/cmdline, /proc/modules,
 * /proc/interrupts and /etc/group, written into a private directory and bind-mounted by CMD's
 * init over the real ones in its mount namespace (those the running kernel has: a bind mount
 * needs its target, and procfs takes no new file). */
static const char *const host_proc_files[] = { "cmdline", "modules", "interrupts" };

static int write_file(const char *dir, const char *name, const char *text, mode_t mode) {
        _cleanup_free_ char *path = strdupf("%s/%s", dir, name);
        _cleanup_close_ int fd = -1;
        size_t len = strlen(text), off = 0;

        if (!path)
                return -ENOMEM;
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
        if (fd < 0)
                return -errno;
        while (off < len) {
                ssize_t n = write(fd, text + off, len - off);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                off += (size_t) n;
        }
        return fchmod(fd, mode) < 0 ? -errno : 0;
}

static void remove_host_dir(char *dir) {
        if (!dir)
                return;
        for (size_t i = 0; i < ELEMENTSOF(host_proc_files); i++) {
                _cleanup_free_ char *p = strdupf("%s/%s", dir, host_proc_files[i]);

                if (p)
                        (void) unlink(p);
        }
        {
                _cleanup_free_ char *p = strdupf("%s/group", dir);

                if (p)
                        (void) unlink(p);
        }
        (void) rmdir(dir);
        free(dir);
}

/* Writes the host's files into a new directory (*ret, for remove_host_dir()) and gives
 * DEV_ROOT/kfd the machine's mode and group. */
static int make_host_files(const struct sim_machine *m, const char *dev_root, char **ret) {
        const char *t = getenv("TMPDIR");
        char *dir = strdupf("%s/amdsmi-sim-host.XXXXXX", t && *t == '/' ? t : "/tmp");
        _cleanup_free_ char *current = NULL, *group = NULL, *kfd = NULL;
        unsigned render = 0, video = 0;
        int r;

        if (!dir)
                return -ENOMEM;
        if (!mkdtemp(dir) || chmod(dir, 0755) < 0) {
                r = -errno;
                free(dir);
                return r;
        }
        for (size_t i = 0; i < ELEMENTSOF(host_proc_files); i++) {
                _cleanup_free_ char *text = NULL;

                r = sim_host_proc_text(m, host_proc_files[i], &text);
                if (r >= 0)
                        r = write_file(dir, host_proc_files[i], text, 0444);
                if (r < 0)
                        goto fail;
        }
        {
                _cleanup_fclose_ FILE *f = fopen("/etc/group", "re");
                size_t n = 0;

                if (f && getdelim(&current, &n, '\0', f) < 0) {
                        free(current);
                        current = NULL;
                }
        }
        r = sim_host_group_text(m, current ? current : "root:x:0:\n", &group, &render, &video);
        if (r >= 0)
                r = write_file(dir, "group", group, 0644);
        if (r < 0)
                goto fail;
        kfd = strdupf("%s/kfd", dev_root);
        if (!kfd) {
                r = -ENOMEM;
                goto fail;
        }
        if (chown(kfd, 0,
                  streq(m->host.kfd_group, "render")  ? render
                  : streq(m->host.kfd_group, "video") ? video
                                                      : 0) < 0 ||
            chmod(kfd, (mode_t) strtoul(m->host.kfd_mode, NULL, 8)) < 0) {
                r = -errno;
                goto fail;
        }
        *ret = dir;
        return 0;
fail:
        remove_host_dir(dir);
        return r;
}

/* In CMD's mount namespace: the host's files over the real ones. */
static int mount_host_files(const char *dir) {
        for (size_t i = 0; i <= ELEMENTSOF(host_proc_files); i++) {
                const char *name = i < ELEMENTSOF(host_proc_files) ? host_proc_files[i] : "group";
                _cleanup_free_ char *src = strdupf("%s/%s", dir, name),
                                    *dst = i < ELEMENTSOF(host_proc_files)
                                                   ? strdupf("/proc/%s", name)
                                                   : strdup("/etc/group");

                if (!src || !dst)
                        return -ENOMEM;
                /* a kernel without loadable modules has no /proc/modules: nothing to hide */
                if (access(dst, F_OK) < 0 && errno == ENOENT)
                        continue;
                if (mount(src, dst, NULL, MS_BIND, NULL) < 0) {
                        fprintf(stderr, "amdsmi-sim: run: cannot mount %s over %s: %m\n", src, dst);
                        return -errno;
                }
        }
        return 0;
}

/* What CMD finds in its environment: the control socket (AMDSMI_SIM_CTL), the device root
 * with the kfd file (AMDSMI_DEV_ROOT) and the KFD shim preloaded (LD_PRELOAD). */
static int run_environment(const char *ctl_socket, const char *dev_root) {
        _cleanup_free_ char *shim = shim_path(), *preload = NULL;
        const char *old = getenv("LD_PRELOAD");

        if (ctl_socket && setenv("AMDSMI_SIM_CTL", ctl_socket, 1) < 0)
                return -errno;
        if (dev_root && setenv("AMDSMI_DEV_ROOT", dev_root, 1) < 0)
                return -errno;
        if (!shim)
                return -ENOMEM;
        preload = old && *old ? strdupf("%s %s", shim, old) : strdup(shim);
        if (!preload || setenv("LD_PRELOAD", preload, 1) < 0)
                return -ENOMEM;
        /* a sanitized CMD would refuse to run with the shim loaded before its runtime */
        {
                const char *asan = getenv("ASAN_OPTIONS");
                _cleanup_free_ char *opts = asan && *asan
                                                    ? strdupf("%s:verify_asan_link_order=0", asan)
                                                    : strdup("verify_asan_link_order=0");

                if (!opts || setenv("ASAN_OPTIONS", opts, 1) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* PID 1 of the new PID namespace: mounts its /proc, starts CMD, passes signals on, reaps
 * orphans, and ends with CMD's status. */
_Noreturn static void run_init(char **cmd, const char *ctl_socket, const char *dev_root,
                               const char *host_dir) {
        pid_t child;
        int status;

        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
            mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
                fprintf(stderr, "amdsmi-sim: run: cannot mount /proc of the PID namespace: %m\n");
                _exit(EXIT_FAILURE);
        }
        if (host_dir && mount_host_files(host_dir) < 0)
                _exit(EXIT_FAILURE);
        if (run_environment(ctl_socket, dev_root) < 0)
                _exit(EXIT_FAILURE);
        child = fork();
        if (child < 0) {
                fprintf(stderr, "amdsmi-sim: run: fork: %m\n");
                _exit(EXIT_FAILURE);
        }
        if (child == 0) {
                sigset_t none;

                sigemptyset(&none);
                sigprocmask(SIG_SETMASK, &none, NULL);
                signal(SIGPIPE, SIG_DFL);
                execvp(cmd[0], cmd);
                fprintf(stderr, "amdsmi-sim: run: %s: %m\n", cmd[0]);
                _exit(errno == ENOENT ? 127 : 126);
        }
        forward_to = child;
        forward_signals();
        for (;;) {
                pid_t p = wait(&status);

                if (p == child)
                        _exit(exit_status(status));
                if (p < 0 && errno != EINTR)
                        _exit(EXIT_FAILURE);
        }
}

static void *loop_thread(void *fs) {
        sim_fs_loop(fs);
        return NULL;
}

static int cmd_run(const struct options *o) {
        struct sim_serve_config cfg = {
                .mountpoint = "/sys",
                .allow_other = true,
                .auto_unmount = true,
        };
        _cleanup_close_ int own_pidns = -1;
        _cleanup_free_ char *tmp_dev = NULL;
        char *host_dir = NULL;
        const char *dev_root = o->dev_root;
        struct sim_ctl *ctl = NULL;
        struct sim_machine *m;
        struct sim_fs *fs;
        pthread_t thread;
        pid_t init;
        int r, status;

        if (geteuid() != 0) {
                fprintf(stderr,
                        "amdsmi-sim: run: needs root (it mounts over /sys in a private "
                        "mount namespace); use mount DIR and AMDSMI_SYSFS_ROOT otherwise\n");
                return EXIT_FAILURE;
        }
        if (!dev_root) {
                const char *t = getenv("TMPDIR");

                tmp_dev = strdupf("%s/amdsmi-sim-dev.XXXXXX", t && *t == '/' ? t : "/tmp");
                if (!tmp_dev || !mkdtemp(tmp_dev) || chmod(tmp_dev, 0755) < 0) {
                        fprintf(stderr, "amdsmi-sim: run: cannot make a device directory: %m\n");
                        return EXIT_FAILURE;
                }
                dev_root = tmp_dev;
        }
        if (make_dev_root(dev_root) < 0) {
                r = EXIT_FAILURE;
                goto dev;
        }
        r = load(o, &m, &fs);
        if (r != 0)
                goto dev;
        r = make_host_files(m, dev_root, &host_dir);
        if (r < 0) {
                fprintf(stderr, "amdsmi-sim: run: cannot write the host's files: %s\n",
                        strerror(-r));
                r = EXIT_FAILURE;
                goto out;
        }
        /* Namespaces first: no thread exists yet. */
        if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
                fprintf(stderr, "amdsmi-sim: run: cannot make a private mount namespace: %m\n");
                r = EXIT_FAILURE;
                goto out;
        }
        if (sim_fs_mount(fs, &cfg) < 0) {
                fprintf(stderr, "amdsmi-sim: run: cannot mount over /sys\n");
                r = EXIT_FAILURE;
                goto out;
        }
        /* listening before CMD starts; served once the simulator's threads may start */
        if (sim_ctl_new(m, &(struct sim_ctl_config){ .socket_path = o->ctl, .mountpoint = "/sys" },
                        &ctl) < 0) {
                r = EXIT_FAILURE;
                goto unmount;
        }
        /* The PID namespace is CMD's. A process whose children go to another PID namespace
         * may not start threads, so the simulator returns to its own once CMD's init runs. */
        own_pidns = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
        if (own_pidns < 0 || unshare(CLONE_NEWPID) < 0) {
                fprintf(stderr, "amdsmi-sim: run: cannot make a PID namespace: %m\n");
                r = EXIT_FAILURE;
                goto unmount;
        }
        signal(SIGPIPE, SIG_IGN);
        init = fork();
        if (init < 0) {
                fprintf(stderr, "amdsmi-sim: run: fork: %m\n");
                r = EXIT_FAILURE;
                goto unmount;
        }
        if (init == 0)
                run_init(o->cmd, sim_ctl_socket(ctl), dev_root, host_dir);
        if (setns(own_pidns, CLONE_NEWPID) < 0) {
                fprintf(stderr, "amdsmi-sim: run: cannot return to the PID namespace: %m\n");
                kill(init, SIGKILL);
        }
        forward_to = init;
        forward_signals();
        r = pthread_create(&thread, NULL, loop_thread, fs);
        if (r != 0) {
                fprintf(stderr, "amdsmi-sim: run: cannot start the FUSE loop: %s\n", strerror(r));
                kill(init, SIGKILL);
        } else if (sim_ctl_start(ctl) < 0)
                fprintf(stderr, "amdsmi-sim: run: cannot serve the control socket\n");
        while (waitpid(init, &status, 0) < 0)
                if (errno != EINTR) {
                        status = EXIT_FAILURE << 8;
                        break;
                }
        forward_to = 0;
        if (r == 0) {
                sim_fs_stop(fs);
                pthread_join(thread, NULL);
        }
        r = r == 0 ? exit_status(status) : EXIT_FAILURE;
unmount:
        ctl = sim_ctl_free(ctl);
        sim_fs_unmount(fs);
out:
        remove_host_dir(host_dir);
        sim_fs_free(fs);
        sim_control_free(m);
        sim_machine_free(m);
dev:
        if (tmp_dev) {
                _cleanup_free_ char *kfd = strdupf("%s/kfd", tmp_dev);

                if (kfd)
                        (void) unlink(kfd);
                (void) rmdir(tmp_dev);
        }
        return r;
}

/* ---------------------------------------------------------------------------------------- */

int main(int argc, char **argv) {
        enum {
                OPT_SEED = 0x100,
                OPT_FROZEN,
                OPT_KFD_USERS,
                OPT_IN_RESET,
                OPT_PLATFORM_LIMIT,
                OPT_SWITCH_ERROR,
                OPT_LIST,
                OPT_VERSION,
                OPT_CTL,
                OPT_DEV_ROOT,
        };
        static const struct option longopts[] = {
                { "machine", required_argument, NULL, 'm' },
                { "seed", required_argument, NULL, OPT_SEED },
                { "frozen", no_argument, NULL, OPT_FROZEN },
                { "foreground", no_argument, NULL, 'f' },
                { "kfd-users", required_argument, NULL, OPT_KFD_USERS },
                { "in-reset", required_argument, NULL, OPT_IN_RESET },
                { "platform-limit", required_argument, NULL, OPT_PLATFORM_LIMIT },
                { "inject-switch-error", required_argument, NULL, OPT_SWITCH_ERROR },
                { "list-machines", no_argument, NULL, OPT_LIST },
                { "ctl", required_argument, NULL, OPT_CTL },
                { "dev-root", required_argument, NULL, OPT_DEV_ROOT },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, OPT_VERSION },
                {},
        };
        struct options o = { .machine = "mi300x-8" };
        bool list = false;
        const char *verb;
        int c, r, nargs;

        /* ctl has options and arguments of its own (ctl.c) */
        if (argc > 1 && streq(argv[1], "ctl"))
                return sim_ctl_main(argc - 1, argv + 1);
        /* "run ... -- CMD": what follows "--" is CMD's, never ours */
        for (int i = 1; i < argc; i++)
                if (streq(argv[i], "--")) {
                        o.cmd = argv + i + 1;
                        argc = i;
                        break;
                }
        while ((c = getopt_long(argc, argv, "m:fh", longopts, NULL)) >= 0) {
                r = 0;
                switch (c) {
                case 'm':
                        o.machine = optarg;
                        break;
                case OPT_SEED: {
                        char *end;

                        errno = 0;
                        o.seed = strtoull(optarg, &end, 0);
                        if (errno || !*optarg || *end || *optarg == '-')
                                return usage_error("--seed %s: not a number", optarg);
                        o.seed_set = true;
                        break;
                }
                case OPT_FROZEN:
                        o.frozen = true;
                        break;
                case 'f':
                        o.foreground = true;
                        break;
                case OPT_KFD_USERS:
                        r = parse_hook(&o, HOOK_KFD_USERS, "--kfd-users", optarg);
                        break;
                case OPT_IN_RESET:
                        r = parse_hook(&o, HOOK_IN_RESET, "--in-reset", optarg);
                        break;
                case OPT_PLATFORM_LIMIT:
                        r = parse_hook(&o, HOOK_PLATFORM_LIMIT, "--platform-limit", optarg);
                        break;
                case OPT_SWITCH_ERROR:
                        r = parse_hook(&o, HOOK_SWITCH_ERROR, "--inject-switch-error", optarg);
                        break;
                case OPT_LIST:
                        list = true;
                        break;
                case OPT_CTL:
                        o.ctl = optarg;
                        break;
                case OPT_DEV_ROOT:
                        o.dev_root = optarg;
                        break;
                case 'h':
                        help();
                        return 0;
                case OPT_VERSION:
                        printf("amdsmi-sim %s\n", PACKAGE_VERSION);
                        return 0;
                default:
                        fprintf(stderr, "Try 'amdsmi-sim --help'.\n");
                        return EXIT_USAGE;
                }
                if (r != 0)
                        return r;
        }
        nargs = argc - optind;
        if (list) {
                if (nargs > 0 || o.cmd)
                        return usage_error("--list-machines takes no arguments");
                return cmd_list();
        }
        if (nargs == 0)
                return usage_error("a command is needed: mount, snapshot, run, ctl, "
                                   "dump-machine or list-machines");
        verb = argv[optind];
        if (!streq(verb, "run") && o.cmd)
                return usage_error("%s: \"--\" belongs to run", verb);
        if (streq(verb, "list-machines")) {
                if (nargs != 1)
                        return usage_error("list-machines takes no arguments");
                return cmd_list();
        }
        if (streq(verb, "dump-machine")) {
                if (nargs != 2)
                        return usage_error("dump-machine NAME|FILE: one machine");
                return cmd_dump(argv[optind + 1]);
        }
        if (streq(verb, "mount") || streq(verb, "snapshot")) {
                if (nargs != 2)
                        return usage_error("%s DIR: one directory", verb);
                return streq(verb, "mount") ? cmd_mount(&o, argv[optind + 1])
                                            : cmd_snapshot(&o, argv[optind + 1]);
        }
        if (streq(verb, "ctl"))
                return usage_error("ctl takes no simulator options: amdsmi-sim ctl [--socket "
                                   "PATH] COMMAND ...");
        if (streq(verb, "run")) {
                if (nargs != 1)
                        return usage_error("run: unexpected \"%s\"; write run -- CMD",
                                           argv[optind + 1]);
                if (!o.cmd || !o.cmd[0])
                        return usage_error("run: no command; write run -- CMD [ARG...]");
                return cmd_run(&o);
        }
        return usage_error("%s: unknown command", verb);
}
