/* SPDX-License-Identifier: MIT */
/*
 * RAS error counts and retired pages (spec health-and-control §1): ras/features, the per-block
 * count files ras/aca_<block> (ACA, MI300 and later: "ue: N\nce: N\nde: N\n") or the legacy
 * ras/<block>_err_count ("ue: N\nce: N\n", UMC adds "de: N"), ras/gpu_vram_bad_pages (28-byte
 * records) and the debugfs threshold ras/bad_page_cnt_threshold.
 *
 * Counts are the driver's accumulators since it loaded; a file that reads "Query currently
 * inaccessible" (a reset or init in progress) is unknown (-EBUSY), never zero.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "health-private.h"
#include "parse-util.h"
#include "private.h"
#include "sysfs.h"

#define RAS_INACCESSIBLE "Query currently inaccessible"
/* 1 MiB: 37449 records; a GPU needs replacement long before (the threshold is ~hundreds). */
#define BAD_PAGES_MAX (1024 * 1024)

static const char *const block_names[_AMDSMI_RAS_BLOCK_MAX] = {
        [AMDSMI_RAS_BLOCK_UMC] = "umc",
        [AMDSMI_RAS_BLOCK_SDMA] = "sdma",
        [AMDSMI_RAS_BLOCK_GFX] = "gfx",
        [AMDSMI_RAS_BLOCK_MMHUB] = "mmhub",
        [AMDSMI_RAS_BLOCK_ATHUB] = "athub",
        [AMDSMI_RAS_BLOCK_PCIE_BIF] = "pcie_bif",
        [AMDSMI_RAS_BLOCK_HDP] = "hdp",
        [AMDSMI_RAS_BLOCK_XGMI_WAFL] = "xgmi_wafl",
        [AMDSMI_RAS_BLOCK_DF] = "df",
        [AMDSMI_RAS_BLOCK_SMN] = "smn",
        [AMDSMI_RAS_BLOCK_SEM] = "sem",
        [AMDSMI_RAS_BLOCK_MP0] = "mp0",
        [AMDSMI_RAS_BLOCK_MP1] = "mp1",
        [AMDSMI_RAS_BLOCK_FUSE] = "fuse",
        [AMDSMI_RAS_BLOCK_MCA] = "mca",
        [AMDSMI_RAS_BLOCK_VCN] = "vcn",
        [AMDSMI_RAS_BLOCK_JPEG] = "jpeg",
        [AMDSMI_RAS_BLOCK_MCA_MP0] = "mca_mp0",
        [AMDSMI_RAS_BLOCK_MCA_MP1] = "mca_mp1",
        [AMDSMI_RAS_BLOCK_MCA_MPIO] = "mca_mpio",
        [AMDSMI_RAS_BLOCK_MCA_IOHC] = "mca_iohc",
};

static const char *const source_names[_AMDSMI_RAS_SOURCE_MAX] = {
        [AMDSMI_RAS_SOURCE_NONE] = "none",
        [AMDSMI_RAS_SOURCE_ACA] = "aca",
        [AMDSMI_RAS_SOURCE_LEGACY] = "legacy",
};

static const char *const bad_page_status_names[_AMDSMI_BAD_PAGE_STATUS_MAX] = {
        [AMDSMI_BAD_PAGE_STATUS_UNKNOWN] = "unknown",
        [AMDSMI_BAD_PAGE_STATUS_RESERVED] = "reserved",
        [AMDSMI_BAD_PAGE_STATUS_PENDING] = "pending",
        [AMDSMI_BAD_PAGE_STATUS_UNRESERVABLE] = "unreservable",
};

_public_ const char *amdsmi_ras_block_to_string(enum amdsmi_ras_block block) {
        if ((unsigned) block >= _AMDSMI_RAS_BLOCK_MAX)
                return "unknown";
        return block_names[block];
}

_public_ int amdsmi_ras_block_from_string(const char *s, enum amdsmi_ras_block *ret_block) {
        for (unsigned i = 0; i < _AMDSMI_RAS_BLOCK_MAX; i++)
                if (strcmp(s, block_names[i]) == 0) {
                        *ret_block = (enum amdsmi_ras_block) i;
                        return 0;
                }
        return -EINVAL;
}

_public_ const char *amdsmi_ras_source_to_string(enum amdsmi_ras_source source) {
        if ((unsigned) source >= _AMDSMI_RAS_SOURCE_MAX)
                return "unknown";
        return source_names[source];
}

_public_ const char *amdsmi_bad_page_status_to_string(enum amdsmi_bad_page_status status) {
        if ((unsigned) status >= _AMDSMI_BAD_PAGE_STATUS_MAX)
                return "unknown";
        return bad_page_status_names[status];
}

_public_ int amdsmi_ras_count_delta(uint64_t before, uint64_t after, uint64_t *ret_delta) {
        if (before == AMDSMI_NA || after == AMDSMI_NA)
                return -EINVAL;
        if (after < before) {
                *ret_delta = after;
                return 1;
        }
        *ret_delta = after - before;
        return 0;
}

/* ---- parsers ----------------------------------------------------------------------------- */

int ras_count_parse(const char *text, struct amdsmi_ras_count *ret) {
        uint64_t v[3] = { AMDSMI_NA, AMDSMI_NA, AMDSMI_NA };
        static const char *const keys[3] = { "ue", "ce", "de" };
        const char *p = text;

        if (strcmp(text, RAS_INACCESSIBLE) == 0)
                return -EBUSY;
        if (!*p)
                return -EBADMSG;
        while (*p) {
                const char *eol = strchr(p, '\n'), *colon;
                size_t len = eol ? (size_t) (eol - p) : strlen(p);
                char num[32];
                uint64_t n;
                int k = -1;

                colon = memchr(p, ':', len);
                if (!colon || colon == p || colon[1] != ' ')
                        return -EBADMSG;
                if ((size_t) (p + len - (colon + 2)) >= sizeof(num))
                        return -EBADMSG;
                memcpy(num, colon + 2, (size_t) (p + len - (colon + 2)));
                num[p + len - (colon + 2)] = '\0';
                if (parse_u64(num, 10, &n) < 0 || n == AMDSMI_NA)
                        return -EBADMSG;
                for (int i = 0; i < 3; i++)
                        if ((size_t) (colon - p) == 2 && strncmp(p, keys[i], 2) == 0)
                                k = i;
                if (k >= 0) {
                        if (v[k] != AMDSMI_NA)
                                return -EBADMSG; /* given twice */
                        v[k] = n;
                }
                if (!eol)
                        break;
                p = eol + 1;
                if (!*p)
                        return -EBADMSG; /* an empty last line: two newlines at the end */
        }
        if (v[0] == AMDSMI_NA || v[1] == AMDSMI_NA)
                return -EBADMSG;
        ret->ue = v[0];
        ret->ce = v[1];
        ret->de = v[2];
        return 0;
}

int ras_features_parse(const char *text, uint32_t *ret_mask) {
        static const char prefix[] = "feature mask: ";
        uint64_t v;

        if (strncmp(text, prefix, strlen(prefix)) != 0)
                return -EBADMSG;
        text += strlen(prefix);
        if (strncmp(text, "0x", 2) != 0 || parse_u64(text + 2, 16, &v) < 0 || v > UINT32_MAX)
                return -EBADMSG;
        *ret_mask = (uint32_t) v;
        return 0;
}

static int hex8(const char *p, uint32_t *ret) {
        uint32_t v = 0;

        for (int i = 0; i < 8; i++) {
                int d = unhexchar(p[i]);
                if (d < 0)
                        return -EBADMSG;
                v = v << 4 | (uint32_t) d;
        }
        *ret = v;
        return 0;
}

int bad_pages_parse(const char *buf, size_t size, struct amdsmi_bad_page **ret_pages,
                    size_t *ret_bad) {
        _cleanup_free_ struct amdsmi_bad_page *pages = NULL;
        size_t n = size / BAD_PAGE_RECORD_SIZE;

        if (size % BAD_PAGE_RECORD_SIZE != 0) {
                if (ret_bad)
                        *ret_bad = n; /* the last record is cut */
                return -EBADMSG;
        }
        if (n > 0) {
                pages = calloc(n, sizeof(*pages));
                if (!pages)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                /* 0xPPPPPPPP : 0xSSSSSSSS : F\n */
                const char *r = buf + i * BAD_PAGE_RECORD_SIZE;
                uint32_t pfn, page_size;

                if (memcmp(r, "0x", 2) != 0 || hex8(r + 2, &pfn) < 0 ||
                    memcmp(r + 10, " : 0x", 5) != 0 || hex8(r + 15, &page_size) < 0 ||
                    memcmp(r + 23, " : ", 3) != 0 || r[26] < '!' || r[26] > '~' || r[27] != '\n') {
                        if (ret_bad)
                                *ret_bad = i;
                        return -EBADMSG;
                }
                pages[i] = (struct amdsmi_bad_page){
                        .pfn = pfn,
                        .address = (uint64_t) pfn << 12,
                        .size = page_size,
                        .flag = r[26],
                        .status = r[26] == 'R'   ? AMDSMI_BAD_PAGE_STATUS_RESERVED
                                  : r[26] == 'P' ? AMDSMI_BAD_PAGE_STATUS_PENDING
                                  : r[26] == 'F' ? AMDSMI_BAD_PAGE_STATUS_UNRESERVABLE
                                                 : AMDSMI_BAD_PAGE_STATUS_UNKNOWN,
                };
        }
        *ret_pages = TAKE_PTR(pages);
        return (int) n;
}

/* ---- reading ----------------------------------------------------------------------------- */

static bool listed(char **names, const char *name) {
        for (char **n = names; n && *n; n++)
                if (strcmp(*n, name) == 0)
                        return true;
        return false;
}

/* Reads one block's file given the listing of ras/ (NULL: look each file up). */
static int read_block(struct amdsmi_gpu *gpu, char **names, enum amdsmi_ras_block block,
                      struct amdsmi_ras_count *c) {
        char aca[32], legacy[48], path[320], text[256];
        bool has_aca, has_legacy;
        int r;

        snprintf(aca, sizeof(aca), "aca_%s", block_names[block]);
        snprintf(legacy, sizeof(legacy), "%s_err_count", block_names[block]);
        if (names) {
                has_aca = listed(names, aca);
                has_legacy = listed(names, legacy);
        } else {
                snprintf(path, sizeof(path), "%s/ras/%s", gpu->syspath, aca);
                has_aca = sysfs_exists(gpu->ctx, path) == 0;
                snprintf(path, sizeof(path), "%s/ras/%s", gpu->syspath, legacy);
                has_legacy = sysfs_exists(gpu->ctx, path) == 0;
        }
        *c = (struct amdsmi_ras_count){ .ue = AMDSMI_NA, .ce = AMDSMI_NA, .de = AMDSMI_NA };
        if (!has_aca && !has_legacy) {
                c->error = -ENOENT;
                return -ENOENT;
        }
        c->source = has_aca ? AMDSMI_RAS_SOURCE_ACA : AMDSMI_RAS_SOURCE_LEGACY;
        c->both_sources = has_aca && has_legacy;
        snprintf(path, sizeof(path), "%s/ras/%s", gpu->syspath, has_aca ? aca : legacy);
        r = sysfs_read_text(gpu->ctx, path, text, sizeof(text));
        if (r == -EMSGSIZE)
                r = -EBADMSG;
        if (r == 0) {
                r = ras_count_parse(text, c);
                if (r == -EBADMSG)
                        log_debug(gpu->ctx, "%s/%s: not ue/ce/de counts: \"%.64s\"",
                                  gpu->ctx->sysfs_root, path, text);
                else if (r == -EBUSY)
                        log_debug(gpu->ctx, "%s/%s: query currently inaccessible",
                                  gpu->ctx->sysfs_root, path);
        } else if (r == -EBADMSG) {
                log_debug(gpu->ctx, "%s/%s: not text", gpu->ctx->sysfs_root, path);
        }
        c->error = r;
        return r;
}

static int list_ras(struct amdsmi_gpu *gpu, char ***ret_names) {
        char path[300];
        int r;

        snprintf(path, sizeof(path), "%s/ras", gpu->syspath);
        r = sysfs_list_dir(gpu->ctx, path, NULL, ret_names);
        if (r == -ENOENT || r == -ENOTDIR) {
                log_debug(gpu->ctx, "%s/%s: absent: no RAS on this GPU", gpu->ctx->sysfs_root,
                          path);
                return -ENODATA;
        }
        return r < 0 ? r : 0;
}

_public_ int amdsmi_gpu_read_ras(struct amdsmi_gpu *gpu, struct amdsmi_ras_info *ret_info) {
        _cleanup_strv_free_ char **names = NULL;
        struct amdsmi_ras_info info = { .size = sizeof(info) };
        char path[320], text[128];
        uint32_t mask;
        int r;

        if (ret_info->size < sizeof(info))
                return -EINVAL;
        r = list_ras(gpu, &names);
        if (r < 0)
                return r;

        snprintf(path, sizeof(path), "%s/ras/features", gpu->syspath);
        r = sysfs_read_text(gpu->ctx, path, text, sizeof(text));
        if (r == 0) {
                r = ras_features_parse(text, &mask);
                if (r < 0)
                        log_debug(gpu->ctx, "%s/%s: not a feature mask: \"%.64s\"",
                                  gpu->ctx->sysfs_root, path, text);
        } else if (r == -EMSGSIZE) {
                r = -EBADMSG;
        }
        if (r == 0) {
                info.features = mask;
                info.enabled_blocks = mask & ((UINT32_C(1) << 29) - 1);
                info.socket_id = mask >> 29;
        }
        info.features_error = r;

        for (unsigned b = 0; b < _AMDSMI_RAS_BLOCK_MAX; b++)
                (void) read_block(gpu, names, (enum amdsmi_ras_block) b, &info.blocks[b]);
        *ret_info = info;
        return 0;
}

_public_ int amdsmi_gpu_read_ras_block(struct amdsmi_gpu *gpu, enum amdsmi_ras_block block,
                                       struct amdsmi_ras_count *ret_count) {
        char path[300];
        int r;

        if ((unsigned) block >= _AMDSMI_RAS_BLOCK_MAX)
                return -EINVAL;
        snprintf(path, sizeof(path), "%s/ras", gpu->syspath);
        r = sysfs_exists(gpu->ctx, path);
        if (r == -ENOENT)
                return -ENODATA;
        if (r < 0)
                return r;
        return read_block(gpu, NULL, block, ret_count);
}

_public_ int amdsmi_gpu_read_bad_pages(struct amdsmi_gpu *gpu, struct amdsmi_bad_page **ret_pages) {
        _cleanup_free_ char *buf = NULL;
        struct amdsmi_bad_page *pages = NULL;
        char path[320];
        size_t size, bad = 0;
        int r;

        snprintf(path, sizeof(path), "%s/ras/gpu_vram_bad_pages", gpu->syspath);
        r = sysfs_read_all(gpu->ctx, path, BAD_PAGES_MAX, &buf, &size);
        if (r == -ENOENT) {
                log_debug(gpu->ctx, "%s/%s: absent: page retirement disabled or no RAS",
                          gpu->ctx->sysfs_root, path);
                return -ENODATA;
        }
        if (r < 0)
                return r;
        r = bad_pages_parse(buf, size, &pages, &bad);
        if (r == -EBADMSG)
                log_debug(gpu->ctx,
                          "%s/%s: record %zu (byte %zu) is not \"0x%%08x : 0x%%08x : F\\n\"",
                          gpu->ctx->sysfs_root, path, bad, bad * BAD_PAGE_RECORD_SIZE);
        if (r < 0)
                return r;
        *ret_pages = pages;
        return r;
}

int health_debugfs_path(struct amdsmi_gpu *gpu, const char *file, char *buf, size_t size) {
        char dir[64];
        int r;

        /* Newer kernels: dri/<dev->unique> is the directory (the PCI address), dri/<minor> a
         * link to it; older ones: dri/<primary minor index> (the card number). */
        snprintf(dir, sizeof(dir), "kernel/debug/dri/%s", gpu->bdf);
        r = sysfs_exists(gpu->ctx, dir);
        if (r < 0 && r != -EACCES && r != -EPERM) {
                gpu_load_drm(gpu);
                if (gpu->card_minor < 0)
                        return -ENODATA;
                snprintf(dir, sizeof(dir), "kernel/debug/dri/%d", gpu->card_minor);
                r = sysfs_exists(gpu->ctx, dir);
        }
        if (r == -EACCES || r == -EPERM) {
                log_debug(gpu->ctx, "%s/%s: permission denied: debugfs is readable by root only",
                          gpu->ctx->sysfs_root, dir);
                return -EACCES;
        }
        if (r < 0) {
                log_debug(gpu->ctx, "%s/%s: %s: no debugfs directory of this GPU",
                          gpu->ctx->sysfs_root, dir, strerror(-r));
                return -ENODATA;
        }
        if ((size_t) snprintf(buf, size, "%s/%s", dir, file) >= size)
                return -ENAMETOOLONG;
        return 0;
}

_public_ int amdsmi_gpu_read_bad_page_threshold(struct amdsmi_gpu *gpu, uint32_t *ret_threshold) {
        char path[256];
        uint64_t v;
        int r;

        r = health_debugfs_path(gpu, "ras/bad_page_cnt_threshold", path, sizeof(path));
        if (r < 0)
                return r;
        r = sysfs_read_u64(gpu->ctx, path, 10, &v);
        if (r == -ENOENT)
                return -ENODATA;
        if (r == -EPERM)
                return -EACCES;
        if (r == -ENOMSG)
                r = -EBADMSG;
        if (r < 0)
                return r;
        if (v > UINT32_MAX) {
                log_debug(gpu->ctx, "%s/%s: %llu is not a 32-bit threshold", gpu->ctx->sysfs_root,
                          path, (unsigned long long) v);
                return -EBADMSG;
        }
        *ret_threshold = (uint32_t) v;
        return 0;
}
