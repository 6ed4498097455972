/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-sim: building the sysfs tree from the machine state, and the rules that change both.
 * All of these run with the fs lock held (at load, or inside a store callback).
 */
#pragma once

#include "fs.h"
#include "machine.h"

/* build.c: the whole tree at load. */
int sim_tree_build(struct sim_machine *m, struct sim_fs *fs);
/* Text helpers for show callbacks: returns the length, -ENOSPC if it did not fit. */
int sim_emit(char *buf, const char *fmt, ...) _printf_(2, 3);
/* Lowest free index >= @from in a bitmap of @nbits (as the kernel's IDAs), -ENOSPC if full. */
int sim_bitmap_alloc(uint64_t *bits, unsigned nbits, unsigned from);
void sim_bitmap_free(uint64_t *bits, int idx);
/* "0-63,128-191": the CPUs of NUMA node @node (-1: all). */
void sim_cpulist(const struct sim_machine *m, int node, char *buf, size_t size);

/* host.c: the host around the GPUs: its IOMMU units (sysfs); the texts of /proc/@name
 * ("cmdline", "modules", "interrupts"; -ENOENT for another) and of /etc/group (@current, the
 * host's, with render and video as the machine says, and their gids) that `run` bind-mounts. */
void sim_host_build(struct sim_machine *m);
int sim_host_proc_text(const struct sim_machine *m, const char *name, char **ret);
int sim_host_group_text(const struct sim_machine *m, const char *current, char **ret,
                        unsigned *ret_render_gid, unsigned *ret_video_gid);

/* bus.c: PCI functions, their PCI core files and the driver model. */
void sim_bus_build(struct sim_machine *m);
/* Binds @f to @drv (probe) or unbinds it (remove); what bind, unbind and drivers_probe do. */
int sim_bus_probe(struct sim_func *f, int drv);
void sim_bus_remove(struct sim_func *f);
/* A function plugged in again (control.c): its PCI core files, no driver yet. */
void sim_bus_add_func(struct sim_func *f);

/* bus.c, for SR-IOV: device_attach() (the first matching driver that probes); a VF's PCI
 * core files and links removed (its directory, bus/pci/devices, its IOMMU group). */
void sim_bus_attach(struct sim_func *f);
void sim_bus_del_func(struct sim_func *f);

/* rule-sriov.c: the PCI core's SR-IOV files of a PF; VFs made and removed (sriov_enable() and
 * sriov_disable(): VFs bound to a driver are unbound first); whether a VF may be probed
 * (sriov_drivers_autoprobe or driver_override); gim's probe and remove, its driver files and
 * the modules' parameters. */
void sim_sriov_build_pf(struct sim_func *pf);
int sim_sriov_enable(struct sim_func *pf, unsigned n);
void sim_sriov_disable(struct sim_func *pf);
bool sim_sriov_can_probe(const struct sim_func *f);
int sim_gim_probe(struct sim_func *f);
void sim_gim_remove(struct sim_func *f);
void sim_gim_driver_build(struct sim_machine *m, struct sim_node *drv);
void sim_sriov_modules_build(struct sim_machine *m);

/* gpu.c: what amdgpu creates when it binds a GPU, and removes when it unbinds. */
int sim_gpu_attach(struct sim_gpu *g);
void sim_gpu_detach(struct sim_gpu *g);
/* Remembers a node the driver created, for sim_gpu_detach(). */
struct sim_node *sim_gpu_own(struct sim_gpu *g, struct sim_node *n);
/* A show that fails while the GPU is in reset (pm attributes: EBUSY). */
int sim_gpu_pm_check(const struct sim_gpu *g);

/* rule-perf.c: pp_od_clk_voltage and pm_policy/ of a GPU (gpu.c's build_pm calls it); the
 * performance state's defaults (at probe, at a reset); the level written (the SMU's side
 * effects); the telemetry's clocks held within the soft limits. */
void sim_perf_build(struct sim_gpu *g, struct sim_node *d);
void sim_perf_defaults(struct sim_gpu *g);
void sim_perf_level_changed(struct sim_gpu *g, const char *from, const char *to);
void sim_perf_clamp(struct sim_gpu *g);

/* kfd.c is the pure text module; build-kfd.c keeps the topology. */
void sim_topology_build(struct sim_machine *m);
void sim_topology_remove_gpu(struct sim_gpu *g);
void sim_topology_add_gpu(struct sim_gpu *g);
/* Writes nodes/ again from the list (the kernel rebuilds it on every change). */
void sim_topology_refresh(struct sim_machine *m);

/* rule-partition.c */
extern const struct sim_attr_ops sim_compute_current_ops, sim_compute_available_ops;
extern const struct sim_attr_ops sim_enforce_isolation_ops, sim_cleaner_shader_ops,
        sim_mem_alloc_mode_ops;
extern const struct sim_attr_ops sim_xcp_config_ops, sim_xcp_nps_configs_ops, sim_xcp_resource_ops;
enum {
        SIM_XCP_RES_XCC,
        SIM_XCP_RES_DMA,
        SIM_XCP_RES_DEC,
        SIM_XCP_RES_JPEG
};
#define SIM_XCP_RES_ARG(res, shared) ((intptr_t) ((res) *2 + (shared)))

/* rule-memory.c */
extern const struct sim_attr_ops sim_memory_current_ops;
/* At amdgpu remove: the last GPU of a hive going down sends the hive's request. */
void sim_memory_on_remove(struct sim_gpu *g);
/* At amdgpu probe: a sent request takes effect, and the compute mode is picked again. */
void sim_memory_on_probe(struct sim_gpu *g);

/* rule-reset.c: the debugfs amdgpu_gpu_recover of a GPU's dri/ directory; a reset of the
 * GPU's XGMI hive (the GPU alone without one), run by a read of that file or of gim's
 * reset_gpu: returns the reset's result (0, or -errno as reset_res), or in *@read_err the
 * errno the read fails with; waits with the lock released. The performance state a reset
 * takes back to its defaults (the performance level to auto): extend it with new fields. */
void sim_reset_build_debugfs(struct sim_gpu *g, struct sim_node *dir);
long long sim_reset_run(struct sim_gpu *g, int *read_err);
void sim_reset_perf_defaults(struct sim_gpu *g);
struct json_object;
struct json_object *sim_reset_dump(const struct sim_gpu *g);

/* rule-power.c: hwmon of amdgpu. */
enum sim_hwmon_attr {
        SIM_HW_NAME,
        SIM_HW_POWER1_INPUT,
        SIM_HW_POWER1_CAP,
        SIM_HW_POWER1_CAP_MAX,
        SIM_HW_POWER1_CAP_MIN,
        SIM_HW_POWER1_CAP_DEFAULT,
        SIM_HW_POWER1_LABEL,
        SIM_HW_POWER2_CAP,
        SIM_HW_POWER2_CAP_MAX,
        SIM_HW_POWER2_CAP_MIN,
        SIM_HW_POWER2_CAP_DEFAULT,
        SIM_HW_POWER2_LABEL,
        SIM_HW_TEMP2_INPUT,
        SIM_HW_TEMP2_LABEL,
        SIM_HW_TEMP2_CRIT,
        SIM_HW_TEMP2_CRIT_HYST,
        SIM_HW_TEMP2_EMERGENCY,
        SIM_HW_TEMP3_INPUT,
        SIM_HW_TEMP3_LABEL,
        SIM_HW_TEMP3_CRIT,
        SIM_HW_TEMP3_CRIT_HYST,
        SIM_HW_TEMP3_EMERGENCY,
        SIM_HW_FREQ1_INPUT,
        SIM_HW_FREQ1_LABEL,
        SIM_HW_FREQ2_INPUT,
        SIM_HW_FREQ2_LABEL,
        _SIM_HW_MAX,
};
extern const char *const sim_hwmon_names[_SIM_HW_MAX];
extern const struct sim_attr_ops sim_hwmon_ops;

/* telemetry.c */
void sim_telemetry_init(struct sim_machine *m);
/* Brings every GPU's sensors and counters to now (no-op when frozen). */
void sim_telemetry_sync(struct sim_machine *m);
/* The GPU's gpu_metrics values as of the last sync. */
struct sim_metrics;
void sim_telemetry_metrics(const struct sim_gpu *g, struct sim_metrics *mt);

/* xcp-metrics.c: xcp/xcp_metrics of the valid partitions (§5.5); none when !@present. */
void sim_xcp_metrics_refresh(struct sim_gpu *g, bool present);
extern const struct sim_attr_ops sim_gpu_metrics_ops, sim_busy_ops;
