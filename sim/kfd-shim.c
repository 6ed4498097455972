/* SPDX-License-Identifier: MIT */
/*
 * libamdsmi-sim-kfd.so: an LD_PRELOAD shim that stands in for /dev/kfd's ioctls where the
 * machine has no KFD device (and no CUSE to make one): the library's code stays what runs on
 * hardware (open(), ioctl(), write(), poll(), read()).
 *
 * Only descriptors of the file $AMDSMI_DEV_ROOT/kfd (checked through /proc/self/fd/N) are
 * answered; every other ioctl goes to the real one. On such a descriptor:
 *   AMDKFD_IOC_GET_VERSION  1.17 (as current kernels; rocm_smi needs minor >= 3)
 *   AMDKFD_IOC_SMI_EVENTS   asks the simulator at $AMDSMI_SIM_CTL ("kfd-smi-open GPU_ID") for
 *                           a stream of the node's events and returns it as anon_fd (see
 *                           sim/smi.c); an unknown gpuid fails with EINVAL as in the kernel,
 *                           no simulator with ENODEV
 *   any other request       EINVAL (kfd_ioctl() of a command it cannot run here)
 * `amdsmi-sim run` sets LD_PRELOAD to this library and AMDSMI_DEV_ROOT to a directory with an
 * empty kfd file; with `mount`, a test sets them itself.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* <linux/kfd_ioctl.h> (which needs the DRM headers): the two requests answered */
#define AMDKFD_IOCTL_BASE 'K'
struct kfd_ioctl_get_version_args {
        uint32_t major_version;
        uint32_t minor_version;
};
struct kfd_ioctl_smi_events_args {
        uint32_t gpuid;   /* in */
        uint32_t anon_fd; /* out */
};
#define AMDKFD_IOC_GET_VERSION _IOR(AMDKFD_IOCTL_BASE, 0x01, struct kfd_ioctl_get_version_args)
#define AMDKFD_IOC_SMI_EVENTS _IOWR(AMDKFD_IOCTL_BASE, 0x1F, struct kfd_ioctl_smi_events_args)

#define SHIM_EXPORT __attribute__((visibility("default")))
#define KFD_MAJOR 1
#define KFD_MINOR 17

typedef int (*ioctl_fn)(int, unsigned long, ...);

/* Whether @fd is an open file of $AMDSMI_DEV_ROOT/kfd. */
static bool is_kfd(int fd) {
        const char *root = getenv("AMDSMI_DEV_ROOT");
        char link[64], path[PATH_MAX], want[PATH_MAX + 8], *real;
        ssize_t k;

        if (!root || !*root || fd < 0)
                return false;
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        k = readlink(link, path, sizeof(path) - 1);
        if (k <= 0)
                return false;
        path[k] = '\0';
        real = realpath(root, NULL);
        if (!real)
                return false;
        snprintf(want, sizeof(want), "%s/kfd", real);
        free(real);
        return strcmp(path, want) == 0;
}

/* "kfd-smi-open GPU_ID" on the control socket: the stream's descriptor, or -errno. */
static int smi_open(uint32_t gpu_id) {
        const char *sock = getenv("AMDSMI_SIM_CTL");
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        union {
                struct cmsghdr h;
                char buf[CMSG_SPACE(sizeof(int))];
        } cm;
        char req[64], resp[512];
        struct iovec iov = { resp, sizeof(resp) - 1 };
        struct msghdr mh = {
                .msg_iov = &iov, .msg_iovlen = 1, .msg_control = &cm, .msg_controllen = sizeof(cm)
        };
        int fd, got = -1, n, r;
        size_t len = 0;

        if (!sock || !*sock || strlen(sock) >= sizeof(sa.sun_path))
                return -ENODEV;
        strcpy(sa.sun_path, sock);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                close(fd);
                return -ENODEV;
        }
        n = snprintf(req, sizeof(req), "kfd-smi-open %u\n", gpu_id);
        if (send(fd, req, (size_t) n, MSG_NOSIGNAL) != n) {
                close(fd);
                return -EIO;
        }
        (void) shutdown(fd, SHUT_WR);
        /* the descriptor comes with the first bytes; read to the end */
        for (;;) {
                ssize_t k;

                iov.iov_base = resp + len;
                iov.iov_len = sizeof(resp) - 1 - len;
                mh.msg_control = &cm;
                mh.msg_controllen = sizeof(cm);
                k = recvmsg(fd, &mh, 0);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        break;
                for (struct cmsghdr *h = CMSG_FIRSTHDR(&mh); h; h = CMSG_NXTHDR(&mh, h))
                        if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS && got < 0)
                                memcpy(&got, CMSG_DATA(h), sizeof(int));
                len += (size_t) k;
                if (len >= sizeof(resp) - 1)
                        break;
        }
        close(fd);
        resp[len] = '\0';
        if (strncmp(resp, "ok ", 3) == 0 && got >= 0)
                return got;
        if (got >= 0)
                close(got);
        if (strncmp(resp, "error ", 6) == 0 && sscanf(resp + 6, "%*s %d", &r) == 1 && r > 0)
                return -r;
        return -EIO;
}

SHIM_EXPORT int ioctl(int fd, unsigned long request, ...) {
        static ioctl_fn real;
        va_list ap;
        void *arg;

        va_start(ap, request);
        arg = va_arg(ap, void *);
        va_end(ap);
        if (!real)
                real = (ioctl_fn) dlsym(RTLD_NEXT, "ioctl");
        if (_IOC_TYPE(request) != AMDKFD_IOCTL_BASE || !is_kfd(fd))
                return real ? real(fd, request, arg) : (errno = ENOSYS, -1);
        if (request == AMDKFD_IOC_GET_VERSION) {
                struct kfd_ioctl_get_version_args *v = arg;

                v->major_version = KFD_MAJOR;
                v->minor_version = KFD_MINOR;
                return 0;
        }
        if (request == AMDKFD_IOC_SMI_EVENTS) {
                struct kfd_ioctl_smi_events_args *a = arg;
                int r = smi_open(a->gpuid);

                if (r < 0) {
                        errno = -r;
                        return -1;
                }
                a->anon_fd = (uint32_t) r;
                return 0;
        }
        errno = EINVAL;
        return -1;
}
