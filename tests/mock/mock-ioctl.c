/* SPDX-License-Identifier: MIT */
/*
 * LD_PRELOAD mock of ioctl(2) for the amdgpu INFO firmware query, so the library's ioctl path
 * is tested without any DRM device.
 *
 * Only file descriptors whose path (/proc/self/fd/N) lies below $MOCK_DEV_ROOT are answered;
 * every other fd goes to the real ioctl(). On a mocked fd:
 *   - DRM_IOCTL_AMDGPU_INFO with query AMDGPU_INFO_FW_VERSION is answered from the script in
 *     $MOCK_AMDGPU_FW, a comma-separated list of KIND=VALUE: KIND is a firmware type name
 *     (the AMDGPU_INFO_FW_ suffix in lower case: toc, cap, mes, mes_kiq, imu, gfx_mec, ...)
 *     or a number; VALUE is a version (0x16, 22), optionally "/FEATURE", or a negative errno
 *     (-22) to fail with. A type not in the script fails with EINVAL, like a kernel without
 *     it. ip_instance other than 0 fails with EINVAL, as in the kernel.
 *   - any other INFO query fails with EINVAL, any other request with ENOTTY.
 * The environment is read on every call, so a test can change it between cases.
 * If $MOCK_IOCTL_LOG is set, one line per mocked call is appended to that file:
 *   "fw_type=toc result=0x00000016", "fw_type=mes result=-22", "query=0x13 result=-22",
 *   "request=0x5401 result=-25".
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <amdgpu_drm.h>

#ifndef AMDGPU_INFO_FW_CAP
#define AMDGPU_INFO_FW_CAP 0x16
#endif
#ifndef AMDGPU_INFO_FW_GFX_RLCP
#define AMDGPU_INFO_FW_GFX_RLCP 0x17
#endif
#ifndef AMDGPU_INFO_FW_GFX_RLCV
#define AMDGPU_INFO_FW_GFX_RLCV 0x18
#endif
#ifndef AMDGPU_INFO_FW_MES_KIQ
#define AMDGPU_INFO_FW_MES_KIQ 0x19
#endif
#ifndef AMDGPU_INFO_FW_MES
#define AMDGPU_INFO_FW_MES 0x1a
#endif
#ifndef AMDGPU_INFO_FW_IMU
#define AMDGPU_INFO_FW_IMU 0x1b
#endif
#ifndef AMDGPU_INFO_FW_VPE
#define AMDGPU_INFO_FW_VPE 0x1c
#endif

#define MOCK_EXPORT __attribute__((visibility("default")))

static const struct {
        const char *name;
        uint32_t type;
} fw_types[] = {
        { "vce", AMDGPU_INFO_FW_VCE },
        { "uvd", AMDGPU_INFO_FW_UVD },
        { "gmc", AMDGPU_INFO_FW_GMC },
        { "gfx_me", AMDGPU_INFO_FW_GFX_ME },
        { "gfx_pfp", AMDGPU_INFO_FW_GFX_PFP },
        { "gfx_ce", AMDGPU_INFO_FW_GFX_CE },
        { "gfx_rlc", AMDGPU_INFO_FW_GFX_RLC },
        { "gfx_mec", AMDGPU_INFO_FW_GFX_MEC },
        { "smc", AMDGPU_INFO_FW_SMC },
        { "sdma", AMDGPU_INFO_FW_SDMA },
        { "sos", AMDGPU_INFO_FW_SOS },
        { "asd", AMDGPU_INFO_FW_ASD },
        { "vcn", AMDGPU_INFO_FW_VCN },
        { "gfx_rlc_restore_list_cntl", AMDGPU_INFO_FW_GFX_RLC_RESTORE_LIST_CNTL },
        { "gfx_rlc_restore_list_gpm_mem", AMDGPU_INFO_FW_GFX_RLC_RESTORE_LIST_GPM_MEM },
        { "gfx_rlc_restore_list_srm_mem", AMDGPU_INFO_FW_GFX_RLC_RESTORE_LIST_SRM_MEM },
        { "dmcu", AMDGPU_INFO_FW_DMCU },
        { "ta", AMDGPU_INFO_FW_TA },
        { "dmcub", AMDGPU_INFO_FW_DMCUB },
        { "toc", AMDGPU_INFO_FW_TOC },
        { "cap", AMDGPU_INFO_FW_CAP },
        { "gfx_rlcp", AMDGPU_INFO_FW_GFX_RLCP },
        { "gfx_rlcv", AMDGPU_INFO_FW_GFX_RLCV },
        { "mes_kiq", AMDGPU_INFO_FW_MES_KIQ },
        { "mes", AMDGPU_INFO_FW_MES },
        { "imu", AMDGPU_INFO_FW_IMU },
        { "vpe", AMDGPU_INFO_FW_VPE },
};

/* Lets a test check that it runs with this library preloaded. */
MOCK_EXPORT int mock_ioctl_loaded(void);
MOCK_EXPORT int mock_ioctl_loaded(void) {
        return 1;
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

static bool fd_is_mocked(int fd) {
        const char *root = getenv("MOCK_DEV_ROOT");
        char real_root[PATH_MAX], link[64], target[PATH_MAX];
        size_t len;
        ssize_t n;

        if (!root || !*root || !realpath(root, real_root))
                return false;
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        n = readlink(link, target, sizeof(target) - 1);
        if (n < 0)
                return false;
        target[n] = '\0';
        len = strlen(real_root);
        if (len == 1) /* "/" */
                return true;
        return strncmp(target, real_root, len) == 0 && (target[len] == '/' || !target[len]);
}

static const char *fw_type_name(uint32_t type, char *buf, size_t size) {
        for (size_t i = 0; i < sizeof(fw_types) / sizeof(fw_types[0]); i++)
                if (fw_types[i].type == type)
                        return fw_types[i].name;
        snprintf(buf, size, "%u", type);
        return buf;
}

static bool key_matches(const char *key, size_t len, uint32_t type) {
        char name[32];
        const char *n = fw_type_name(type, name, sizeof(name));
        char *end;
        unsigned long v;

        if (strlen(n) == len && strncmp(key, n, len) == 0)
                return true;
        /* A numeric key: "27=0x1234". */
        errno = 0;
        v = strtoul(key, &end, 0);
        return errno == 0 && end == key + len && end != key && v == type;
}

/* Looks the type up in $MOCK_AMDGPU_FW. Returns 0 with the answer, or a negative errno. */
static int script_answer(uint32_t type, uint32_t *ret_ver, uint32_t *ret_feature) {
        const char *p = getenv("MOCK_AMDGPU_FW");

        while (p && *p) {
                size_t len = strcspn(p, ",");
                const char *eq = memchr(p, '=', len);

                if (eq && key_matches(p, (size_t) (eq - p), type)) {
                        const char *v = eq + 1;
                        char *end;
                        long e;

                        if (*v == '-') {
                                e = strtol(v, &end, 10);
                                return e < 0 ? (int) e : -EINVAL;
                        }
                        *ret_ver = (uint32_t) strtoul(v, &end, 0);
                        *ret_feature = 0;
                        if (*end == '/')
                                *ret_feature = (uint32_t) strtoul(end + 1, &end, 0);
                        return 0;
                }
                p += len;
                if (*p == ',')
                        p++;
        }
        return -EINVAL;
}

static void log_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void log_line(const char *fmt, ...) {
        const char *path = getenv("MOCK_IOCTL_LOG");
        va_list ap;
        FILE *f;

        if (!path || !*path)
                return;
        f = fopen(path, "ae");
        if (!f)
                return;
        va_start(ap, fmt);
        vfprintf(f, fmt, ap);
        va_end(ap);
        fputc('\n', f);
        fclose(f);
}

static int mock_info(struct drm_amdgpu_info *info) {
        struct drm_amdgpu_info_firmware fw = {};
        char name_buf[16];
        const char *name;
        int r;

        if (info->query != AMDGPU_INFO_FW_VERSION) {
                log_line("query=0x%x result=%d", info->query, -EINVAL);
                return -EINVAL;
        }
        name = fw_type_name(info->query_fw.fw_type, name_buf, sizeof(name_buf));
        if (info->query_fw.ip_instance != 0)
                r = -EINVAL;
        else
                r = script_answer(info->query_fw.fw_type, &fw.ver, &fw.feature);
        if (r < 0) {
                log_line("fw_type=%s result=%d", name, r);
                return r;
        }
        if (info->return_pointer && info->return_size > 0) {
                size_t n = info->return_size < sizeof(fw) ? info->return_size : sizeof(fw);
                memcpy((void *) (uintptr_t) info->return_pointer, &fw, n);
        }
        log_line("fw_type=%s result=0x%08x", name, fw.ver);
        return 0;
}

MOCK_EXPORT int ioctl(int fd, unsigned long request, ...) {
        int saved_errno = errno;
        void *arg;
        va_list ap;
        int r;

        va_start(ap, request);
        arg = va_arg(ap, void *);
        va_end(ap);

        if (!fd_is_mocked(fd)) {
                errno = saved_errno;
                return real_ioctl(fd, request, arg);
        }
        if (request == DRM_IOCTL_AMDGPU_INFO) {
                r = arg ? mock_info(arg) : -EFAULT;
        } else {
                r = -ENOTTY;
                log_line("request=0x%lx result=%d", request, r);
        }
        if (r < 0) {
                errno = -r;
                return -1;
        }
        errno = saved_errno;
        return r;
}
