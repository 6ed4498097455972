/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-sim: what the JSON reader (machine-json.c) and the machine builder (machine.c) share:
 * the parsed, not yet checked description.
 */
#pragma once

#include "machine.h"

/* One GPU as described. Members with an "unset" value take their default from the product,
 * the kernel or the GPU's place in the machine (sim_machine_build()). */
struct sim_gpu_desc {
        char bdf[16];
        char product[32];
        int numa_node; /* INT_MIN: spread over the sockets */
        int driver;    /* enum sim_driver_id */
        enum sim_role role;
        uint64_t hive_id;         /* 0: no XGMI hive */
        uint64_t unique_id;       /* UINT64_MAX: derived */
        char *serial;             /* NULL: derived */
        unsigned nps_supported;   /* UINT_MAX: the product's */
        unsigned nps_current;     /* 0: NPS1 */
        unsigned nps_requested;   /* 0: none */
        enum sim_compute compute; /* SIM_COMPUTE_UNKNOWN: the AUTO rule */
        unsigned kfd_users;
        bool in_reset;
        struct sim_limits_w cap_limits_w; /* UINT32_MAX members: the product's */
        uint32_t cap_w;                   /* UINT32_MAX: the default limit */
        struct sim_limits_w ppt1_limits_w;
        uint32_t ppt1_cap_w;
        int64_t platform_limit_w;                /* -1: none */
        unsigned metrics_rev;                    /* 0: the kernel's */
        unsigned metrics_layout;                 /* SIM_LAYOUT_UNSET: the kernel's */
        const char *link_speed, *link_speed_max; /* NULL: 32.0 GT/s */
        unsigned link_width, link_width_max;     /* 0: x16 */
        struct sim_sensors sensors;              /* UINT_MAX (UINT64_MAX) members: derived */
        unsigned vf_num;                         /* 0: the role's default */
        struct sim_ras_preset ras;               /* owned (but in sim_gpu_desc_from_gpu()) */
        uint32_t fw[_SIM_FW_MAX];                /* UINT32_MAX entries: the product's */
        char *iommu_group_with;                  /* owned (but in sim_gpu_desc_from_gpu()) */
};

struct sim_machine_desc {
        char *name, *description;
        struct sim_kernel kernel;
        struct sim_cpu cpu;
        struct sim_host host; /* NULL strings: the defaults */
        bool bmc_vga;
        struct sim_product **products;
        size_t n_products;
        struct sim_gpu_desc *gpus;
        size_t n_gpus;
};

void sim_machine_desc_init(struct sim_machine_desc *md);
void sim_machine_desc_done(struct sim_machine_desc *md);
void sim_gpu_desc_init(struct sim_gpu_desc *d);
/* The description of a built GPU (for dump-machine); strings point into the GPU. */
void sim_gpu_desc_from_gpu(const struct sim_gpu *g, struct sim_gpu_desc *d);

int sim_product_copy(const struct sim_product *src, const char *name, struct sim_product **ret);
struct sim_product *sim_product_free(struct sim_product *p);
int sim_product_check(const struct sim_product *p, const char *origin, const char *path);

/* Checks the description and makes the machine; takes the products of @md. */
int sim_machine_build(struct sim_machine_desc *md, const char *origin, struct sim_machine **ret);
