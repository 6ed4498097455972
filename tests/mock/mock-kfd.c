/* SPDX-License-Identifier: MIT */
/*
 * LD_PRELOAD mock of the KFD's two ioctls the library issues on /dev/kfd, so the SMI-event
 * subscription runs its real code (open, version check, SMI_EVENTS, the mask write) without a
 * KFD. The ioctl numbers are written here from the kernel's uapi (spec health-and-control
 * §7.1), not taken from the header the library uses.
 *
 * Only fds whose path is $MOCK_DEV_ROOT/kfd are answered; every other fd goes to the real
 * ioctl(). On such an fd:
 *   - AMDKFD_IOC_GET_VERSION answers 1.$MOCK_KFD_MINOR (default 11);
 *   - AMDKFD_IOC_SMI_EVENTS answers EINVAL unless gpuid is $MOCK_KFD_GPU_ID, else a new
 *     stream socket pair: one end is the event fd returned, the other is kept for the test
 *     (mock_kfd_peer(): it reads the mask the library wrote and writes event lines);
 *   - anything else fails with ENOTTY.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#define MOCK_EXPORT __attribute__((visibility("default")))

struct mock_version_args {
        uint32_t major, minor;
};
struct mock_smi_events_args {
        uint32_t gpuid, anon_fd;
};
#define MOCK_IOC_GET_VERSION _IOR('K', 0x01, struct mock_version_args)
#define MOCK_IOC_SMI_EVENTS _IOWR('K', 0x1F, struct mock_smi_events_args)

static int peer = -1;

/* The test's end of the last event fd handed out (-1: none yet). */
MOCK_EXPORT int mock_kfd_peer(void);
MOCK_EXPORT int mock_kfd_peer(void) {
        return peer;
}

static int real_ioctl(int fd, unsigned long request, void *arg) {
        static int (*next)(int, unsigned long, ...);

        if (!next) {
                void *sym = dlsym(RTLD_NEXT, "ioctl");
                memcpy(&next, &sym, sizeof(next));
        }
        if (!next) {
                errno = ENOSYS;
                return -1;
        }
        return next(fd, request, arg);
}

static int is_kfd(int fd) {
        const char *root = getenv("MOCK_DEV_ROOT");
        char link[64], target[PATH_MAX], want[PATH_MAX];
        ssize_t n;

        if (!root)
                return 0;
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        n = readlink(link, target, sizeof(target) - 1);
        if (n < 0)
                return 0;
        target[n] = '\0';
        snprintf(want, sizeof(want), "%s/kfd", root);
        return strcmp(target, want) == 0;
}

MOCK_EXPORT int ioctl(int fd, unsigned long request, ...);
MOCK_EXPORT int ioctl(int fd, unsigned long request, ...) {
        const char *env;
        va_list ap;
        void *arg;

        va_start(ap, request);
        arg = va_arg(ap, void *);
        va_end(ap);
        if (!is_kfd(fd))
                return real_ioctl(fd, request, arg);
        if (request == MOCK_IOC_GET_VERSION) {
                struct mock_version_args *v = arg;

                env = getenv("MOCK_KFD_MINOR");
                v->major = 1;
                v->minor = env ? (uint32_t) strtoul(env, NULL, 10) : 11;
                return 0;
        }
        if (request == MOCK_IOC_SMI_EVENTS) {
                struct mock_smi_events_args *a = arg;
                int sv[2];

                env = getenv("MOCK_KFD_GPU_ID");
                if (!env || a->gpuid != (uint32_t) strtoul(env, NULL, 10)) {
                        errno = EINVAL;
                        return -1;
                }
                if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
                        return -1;
                if (peer >= 0)
                        close(peer);
                peer = sv[1];
                a->anon_fd = (uint32_t) sv[0];
                return 0;
        }
        errno = ENOTTY;
        return -1;
}
