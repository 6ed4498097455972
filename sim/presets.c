/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-sim: built-in products and machines, as data.
 *
 * Products: IDs and topology from spec amdgpu-sysfs.md §1.2, partition capabilities from §2.2
 * and §3.1, power and thermal limits from §4.2 (typical board figures; the spec's numbers are
 * illustrative). Firmware versions, VBIOS part numbers and FRU strings are plausible examples.
 * SR-IOV: the parts with a known VF ID (§1.2) have the capability, TotalVFs 8 (one VF per XCC
 * partition, gim's largest MI300X configuration; the hardware's own count is unverified).
 * MI350X and MI355X have it too (gim supports MI35x VFs), with VF IDs that are UNVERIFIED
 * (§1.2: not in pci.ids nor in the gim source read): 0x75b0 and 0x75b3, the PF's ID + 0x10,
 * are placeholders that a host would read from sriov_vf_device.
 *
 * Machines are JSON descriptions in the format of `amdsmi-sim dump-machine`, written with
 * apostrophes for quotes so that they read as JSON here (no value contains one).
 */
#include "machine.h"

#define GiB (1ULL << 30)
#define MiB (1ULL << 20)

/* Data tables, laid out by hand. */
/* clang-format off */
#define FW_MI300                                                                                \
        [SIM_FW_MC] = 0x13, [SIM_FW_ME] = 0x21, [SIM_FW_PFP] = 0x22, [SIM_FW_RLC] = 0x3c,       \
        [SIM_FW_RLC_SRLC] = 0x2, [SIM_FW_RLC_SRLG] = 0x3, [SIM_FW_RLC_SRLS] = 0x4,              \
        [SIM_FW_MEC] = 0x9b, [SIM_FW_MEC2] = 0x9b, [SIM_FW_SOS] = 0x00210e64,                   \
        [SIM_FW_ASD] = 0x21000110, [SIM_FW_TA_RAS] = 0x1b000251, [SIM_FW_TA_XGMI] = 0x20000019, \
        [SIM_FW_SMC] = 0x00557300, [SIM_FW_SDMA] = 0x13, [SIM_FW_SDMA2] = 0x13,                 \
        [SIM_FW_VCN] = 0x0311000d

#define FW_MI350                                                                                \
        [SIM_FW_MC] = 0x17, [SIM_FW_ME] = 0x25, [SIM_FW_PFP] = 0x26, [SIM_FW_RLC] = 0x51,       \
        [SIM_FW_RLC_SRLC] = 0x2, [SIM_FW_RLC_SRLG] = 0x3, [SIM_FW_RLC_SRLS] = 0x4,              \
        [SIM_FW_MEC] = 0xb4, [SIM_FW_MEC2] = 0xb4, [SIM_FW_SOS] = 0x00240216,                   \
        [SIM_FW_ASD] = 0x21000127, [SIM_FW_TA_RAS] = 0x1b00026c, [SIM_FW_TA_XGMI] = 0x2000001e, \
        [SIM_FW_SMC] = 0x00670b00, [SIM_FW_SDMA] = 0x9, [SIM_FW_SDMA2] = 0x9,                   \
        [SIM_FW_VCN] = 0x0512001a

#define LEVELS(...)                                                          \
        {                                                                    \
                .n = sizeof((unsigned[]){ __VA_ARGS__ }) / sizeof(unsigned), \
                .mhz = { __VA_ARGS__ }                                       \
        }

#define CLOCKS_MI300                                                                   \
        .socclk = LEVELS(100, 400, 800, 1143), .fclk = LEVELS(1200, 1600, 1900, 2000), \
        .vclk = LEVELS(914, 1143, 1333, 1480), .dclk = LEVELS(711, 914, 1143, 1314)

/* SMU 13.0.6 / 13.0.12: the PM policies and the UCLK max of pp_od_clk_voltage (rule-perf.c) */
#define PM_SMU13 .soc_pstate = true, .xgmi_plpd = true, .od_mclk = true

/* A product's firmware is its family's with a few versions replaced: later designators win. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"
const struct sim_product sim_builtin_products[] = {
        {
                .name = (char *) "MI300X",
                .device_id = 0x74a1,
                .vf_device_id = 0x74b5,
                .subsystem_vendor = 0x1002,
                .subsystem_device = 0x74a1,
                .revision = 0x00,
                .pci_class = 0x120000,
                .xcc = 8,
                .cu_per_xcc = 38,
                .gc = { 9, 4, 3 },
                .gfx_target_version = 90402,
                .vram_bytes = 192 * GiB,
                .gtt_bytes = 1024 * GiB,
                .kfd_memory_bytes = 192 * GiB,
                .nps_supported = SIM_NPS_BIT(1) | SIM_NPS_BIT(2) | SIM_NPS_BIT(4),
                .power_cap_w = { 0, 750, 750 },
                .sdma_engines = 16,
                .vcn = 4,
                .jpeg_per_vcn = 8,
                .sclk = LEVELS(500, 2100),
                .mclk = LEVELS(900, 1100, 1300),
                CLOCKS_MI300,
                PM_SMU13,
                .junction_crit_c = 110,
                .junction_crit_hyst_c = 100,
                .junction_emergency_c = 115,
                .mem_crit_c = 100,
                .mem_crit_hyst_c = 90,
                .mem_emergency_c = 105,
                .vbios_version = (char *) "113-M3000100-102",
                .fru = true,
                .fru_product_name = (char *) "AMD Instinct MI300X OAM",
                .fru_product_number = (char *) "102-G30211-0C",
                .fru_manufacturer = (char *) "AMD",
                .fru_id = (char *) "",
                .serial_prefix = (char *) "6922510011",
                .fw = { FW_MI300 },
                .idle_power_w = 139,
                .mem_max_bandwidth_gbs = 5300,
                .hbm_width = 8192,
                .max_engine_clk_mhz = 2100,
                .kfd_capability = 0xa8a8a280,
                .kfd_capability2 = 0x1,
                .total_vfs = 8,
        },
        {
                .name = (char *) "MI325X",
                .device_id = 0x74a5,
                .vf_device_id = 0x74b9,
                .subsystem_vendor = 0x1002,
                .subsystem_device = 0x74a5,
                .revision = 0x00,
                .pci_class = 0x120000,
                .xcc = 8,
                .cu_per_xcc = 38,
                .gc = { 9, 4, 4 },
                .gfx_target_version = 90402,
                .vram_bytes = 256 * GiB,
                .gtt_bytes = 1024 * GiB,
                .kfd_memory_bytes = 256 * GiB,
                .nps_supported = SIM_NPS_BIT(1) | SIM_NPS_BIT(4),
                .power_cap_w = { 0, 1000, 1000 },
                .sdma_engines = 16,
                .vcn = 4,
                .jpeg_per_vcn = 8,
                .sclk = LEVELS(500, 2100),
                .mclk = LEVELS(900, 1300, 1500),
                CLOCKS_MI300,
                PM_SMU13,
                .junction_crit_c = 110,
                .junction_crit_hyst_c = 100,
                .junction_emergency_c = 115,
                .mem_crit_c = 100,
                .mem_crit_hyst_c = 90,
                .mem_emergency_c = 105,
                .vbios_version = (char *) "113-M3250100-100",
                .fru = true,
                .fru_product_name = (char *) "AMD Instinct MI325X OAM",
                .fru_product_number = (char *) "102-G32511-00",
                .fru_manufacturer = (char *) "AMD",
                .fru_id = (char *) "",
                .serial_prefix = (char *) "7120480023",
                .fw = { FW_MI300, [SIM_FW_SMC] = 0x00560a00 },
                .idle_power_w = 158,
                .mem_max_bandwidth_gbs = 6000,
                .hbm_width = 8192,
                .max_engine_clk_mhz = 2100,
                .kfd_capability = 0xa8a8a280,
                .kfd_capability2 = 0x1,
                .total_vfs = 8,
        },
        {
                .name = (char *) "MI300A",
                .device_id = 0x74a0,
                .vf_device_id = 0,
                .subsystem_vendor = 0x1002,
                .subsystem_device = 0x74a0,
                .revision = 0x01,
                .pci_class = 0x038000,
                .xcc = 6,
                .cu_per_xcc = 38,
                .apu = true,
                .gc = { 9, 4, 3 },
                .gfx_target_version = 90402,
                .vram_bytes = 512 * MiB,
                .gtt_bytes = 126 * GiB,
                .kfd_memory_bytes = 126 * GiB,
                .nps_supported = 0,
                .power_cap_w = { 0, 550, 550 },
                .sdma_engines = 16,
                .vcn = 3,
                .jpeg_per_vcn = 8,
                .sclk = LEVELS(500, 2100),
                .mclk = LEVELS(900, 1100, 1300),
                CLOCKS_MI300,
                PM_SMU13,
                .junction_crit_c = 100,
                .junction_crit_hyst_c = 0,
                .junction_emergency_c = 105,
                .mem_crit_c = 95,
                .mem_crit_hyst_c = 0,
                .mem_emergency_c = 100,
                .vbios_version = (char *) "113-M3000A00-101",
                .fru = false,
                .serial_prefix = (char *) "",
                .fw = { FW_MI300, [SIM_FW_SOS] = 0x00210e61, [SIM_FW_SMC] = 0x00556200,
                        [SIM_FW_TA_XGMI] = 0x20000017 },
                .idle_power_w = 121,
                .mem_max_bandwidth_gbs = 5300,
                .hbm_width = 8192,
                .max_engine_clk_mhz = 2100,
                .kfd_capability = 0xa8a8a280,
                .kfd_capability2 = 0x1,
        },
        {
                .name = (char *) "MI350X",
                .device_id = 0x75a0,
                .vf_device_id = 0x75b0, /* UNVERIFIED */
                .subsystem_vendor = 0x1002,
                .subsystem_device = 0x75a0,
                .revision = 0x02,
                .pci_class = 0x120000,
                .xcc = 8,
                .cu_per_xcc = 32,
                .gc = { 9, 5, 0 },
                .gfx_target_version = 90500,
                .vram_bytes = 288 * GiB,
                .gtt_bytes = 1024 * GiB,
                .kfd_memory_bytes = 288 * GiB,
                .nps_supported = SIM_NPS_BIT(1) | SIM_NPS_BIT(2),
                .power_cap_w = { 0, 1000, 1000 },
                .ppt1 = true,
                .ppt1_w = { 1000, 1400, 1300 },
                .sdma_engines = 16,
                .vcn = 2,
                .jpeg_per_vcn = 10,
                .sclk = LEVELS(500, 2400),
                .mclk = LEVELS(900, 1400, 2000),
                CLOCKS_MI300,
                PM_SMU13,
                .junction_crit_c = 105,
                .junction_crit_hyst_c = 95,
                .junction_emergency_c = 110,
                .mem_crit_c = 95,
                .mem_crit_hyst_c = 85,
                .mem_emergency_c = 100,
                .vbios_version = (char *) "113-M3500100-100",
                .vbios_build = (char *) "00153276",
                .fru = true,
                .fru_product_name = (char *) "AMD Instinct MI350X OAM",
                .fru_product_number = (char *) "102-G35011-00",
                .fru_manufacturer = (char *) "AMD",
                .fru_id = (char *) "0",
                .serial_prefix = (char *) "7381420027",
                .fw = { FW_MI350 },
                .idle_power_w = 167,
                .mem_max_bandwidth_gbs = 8000,
                .hbm_width = 8192,
                .max_engine_clk_mhz = 2200,
                .kfd_capability = 0xa8a8a280,
                .kfd_capability2 = 0x1,
                .total_vfs = 8,
        },
        {
                .name = (char *) "MI355X",
                .device_id = 0x75a3,
                .vf_device_id = 0x75b3, /* UNVERIFIED */
                .subsystem_vendor = 0x1002,
                .subsystem_device = 0x75a3,
                .revision = 0x02,
                .pci_class = 0x120000,
                .xcc = 8,
                .cu_per_xcc = 32,
                .gc = { 9, 5, 0 },
                .gfx_target_version = 90500,
                .vram_bytes = 288 * GiB,
                .gtt_bytes = 1024 * GiB,
                .kfd_memory_bytes = 288 * GiB,
                .nps_supported = SIM_NPS_BIT(1) | SIM_NPS_BIT(2),
                .power_cap_w = { 0, 1400, 1400 },
                .ppt1 = true,
                .ppt1_w = { 1200, 1800, 1700 },
                .sdma_engines = 16,
                .vcn = 2,
                .jpeg_per_vcn = 10,
                .sclk = LEVELS(500, 2400),
                .mclk = LEVELS(900, 1400, 2000),
                CLOCKS_MI300,
                PM_SMU13,
                .junction_crit_c = 105,
                .junction_crit_hyst_c = 95,
                .junction_emergency_c = 110,
                .mem_crit_c = 95,
                .mem_crit_hyst_c = 85,
                .mem_emergency_c = 100,
                .vbios_version = (char *) "113-M3550100-100",
                .vbios_build = (char *) "00154102",
                .fru = true,
                .fru_product_name = (char *) "AMD Instinct MI355X OAM",
                .fru_product_number = (char *) "102-G35511-00",
                .fru_manufacturer = (char *) "AMD",
                .fru_id = (char *) "0",
                .serial_prefix = (char *) "7381550031",
                .fw = { FW_MI350 },
                .idle_power_w = 182,
                .mem_max_bandwidth_gbs = 8000,
                .hbm_width = 8192,
                .max_engine_clk_mhz = 2400,
                .kfd_capability = 0xa8a8a280,
                .kfd_capability2 = 0x1,
                .total_vfs = 8,
        },
};
#pragma GCC diagnostic pop
const size_t sim_n_builtin_products = ELEMENTSOF(sim_builtin_products);

/* Eight OAM GPUs behind PCIe switches, four per socket. */
#define GPUS_MI300X_BUSES                                                                   \
        "'gpus': [ { 'bdf': '0000:05:00.0' }, { 'bdf': '0000:26:00.0' },"                   \
        " { 'bdf': '0000:46:00.0' }, { 'bdf': '0000:65:00.0' }, { 'bdf': '0000:85:00.0' }," \
        " { 'bdf': '0000:a6:00.0' }, { 'bdf': '0000:c6:00.0' }, { 'bdf': '0000:e5:00.0' } ]"

#define GPUS_MI350X_BUSES                                                                   \
        "'gpus': [ { 'bdf': '0000:05:00.0' }, { 'bdf': '0000:15:00.0' },"                   \
        " { 'bdf': '0000:65:00.0' }, { 'bdf': '0000:75:00.0' }, { 'bdf': '0000:85:00.0' }," \
        " { 'bdf': '0000:95:00.0' }, { 'bdf': '0000:e5:00.0' }, { 'bdf': '0000:f5:00.0' } ]"

#define CPU_2S "'cpu': { 'sockets': 2, 'cores_per_socket': 64, 'threads_per_core': 2 }"

#define KERNEL_MI300X "'kernel': { 'gpu_metrics_revision': 7, 'nps_compat': 'newer', 'dkms': true"

/* A VM: 32 vCPUs and 64 GiB in one NUMA node, the VF on bus 01 behind QEMU's root port. */
#define GUEST_VM                                                                        \
        "'cpu': { 'sockets': 1, 'cores_per_socket': 16, 'threads_per_core': 2,"        \
        " 'memory_bytes_per_socket': 68719476736 }, 'gpus': [ { 'bdf': '0000:01:00.0' } ]"

const struct sim_preset sim_presets[] = {
        {
                "mi300x-8",
                "{ 'name': 'mi300x-8',"
                " 'description': '8x MI300X, bare metal, one XGMI hive, SPX/NPS1 (the default)',"
                " 'kernel': { 'gpu_metrics_revision': 7, 'nps_compat': 'newer', 'dkms': true },"
                " " CPU_2S ","
                " 'gpu_defaults': { 'product': 'MI300X', 'hive_id': '0x3f5a1c8e92b7d461' },"
                " " GPUS_MI300X_BUSES " }",
        },
        {
                /* the layout of the real DKMS capture (gpu-metrics-v1.9.md §5.2): v1.9 with a
                 * u32 accumulation counter, 1150 bytes */
                "mi300x-8-dkms",
                "{ 'name': 'mi300x-8-dkms',"
                " 'description': 'the mi300x-8 server with current AMD DKMS (ROCm 7.2):"
                " gpu_metrics v1.9 in the Linux 6.19 layout, xcp_metrics v1.1',"
                " 'kernel': { 'gpu_metrics_revision': 9, 'gpu_metrics_layout': '6.19',"
                " 'nps_compat': 'newer', 'dkms': true },"
                " " CPU_2S ","
                " 'gpu_defaults': { 'product': 'MI300X', 'hive_id': '0x3f5a1c8e92b7d461' },"
                " " GPUS_MI300X_BUSES " }",
        },
        {
                "mi300x-8-bmc",
                "{ 'name': 'mi300x-8-bmc',"
                " 'description': 'the mi300x-8 server with its BMC ASPEED VGA as card0',"
                " 'kernel': { 'gpu_metrics_revision': 7, 'nps_compat': 'newer', 'dkms': true },"
                " " CPU_2S ", 'bmc_vga': true,"
                " 'gpu_defaults': { 'product': 'MI300X', 'hive_id': '0x3f5a1c8e92b7d461' },"
                " " GPUS_MI300X_BUSES " }",
        },
        {
                "mi325x-8",
                "{ 'name': 'mi325x-8',"
                " 'description': '8x MI325X, bare metal, one XGMI hive, SPX/NPS1',"
                " 'kernel': { 'gpu_metrics_revision': 7, 'nps_compat': 'newer', 'dkms': true },"
                " " CPU_2S ","
                " 'gpu_defaults': { 'product': 'MI325X', 'hive_id': '0x6c0e5b91d2a4f387' },"
                " " GPUS_MI300X_BUSES " }",
        },
        {
                "mi300a-4",
                "{ 'name': 'mi300a-4',"
                " 'description': '4x MI300A APU, one per socket and PCI domain, SPX, NPS fixed',"
                " 'kernel': { 'gpu_metrics_revision': 6, 'nps_compat': 'newer', 'dkms': true },"
                " 'cpu': { 'sockets': 4, 'cores_per_socket': 24, 'threads_per_core': 2,"
                " 'memory_bytes_per_socket': 128849018880 },"
                " 'gpu_defaults': { 'product': 'MI300A', 'hive_id': '0x1d62e07bb4f09a35' },"
                " 'gpus': [ { 'bdf': '0000:01:00.0' }, { 'bdf': '0001:01:00.0' },"
                " { 'bdf': '0002:01:00.0' }, { 'bdf': '0003:01:00.0' } ] }",
        },
        {
                "mi350x-8",
                "{ 'name': 'mi350x-8',"
                " 'description':"
                " '8x MI350X, bare metal, one XGMI hive, SPX/NPS1, newer kernel (PPT1)',"
                " 'kernel': { 'gpu_metrics_revision': 9, 'gpu_metrics_layout': '7.1',"
                " 'nps_compat': 'newer', 'dkms': false, 'partition_config': true },"
                " " CPU_2S ","
                " 'gpu_defaults': { 'product': 'MI350X', 'hive_id': '0x52c4f1a09e3d7b68' },"
                " " GPUS_MI350X_BUSES " }",
        },
        {
                "mi355x-8",
                "{ 'name': 'mi355x-8',"
                " 'description':"
                " '8x MI355X, bare metal, one XGMI hive, SPX/NPS1, newer kernel (PPT1)',"
                " 'kernel': { 'gpu_metrics_revision': 9, 'gpu_metrics_layout': '7.1',"
                " 'nps_compat': 'newer', 'dkms': false, 'partition_config': true },"
                " " CPU_2S ","
                " 'gpu_defaults': { 'product': 'MI355X', 'hive_id': '0x0b7de3261fa95c40' },"
                " " GPUS_MI350X_BUSES " }",
        },
        /* SR-IOV (spec §7, virtualization.md §1.5, §2): gim hosts, VMs, and a synthetic host */
        {
                "mi300x-gim-1vf",
                "{ 'name': 'mi300x-gim-1vf',"
                " 'description': '8x MI300X host under gim, 1 VF per GPU (SPX/NPS1), VFs unbound',"
                " " KERNEL_MI300X " }, " CPU_2S ","
                " 'gpu_defaults': { 'product': 'MI300X', 'hive_id': '0x3f5a1c8e92b7d461',"
                " 'role': 'host-pf', 'driver': 'gim', 'vf_num': 1 },"
                " " GPUS_MI300X_BUSES " }",
        },
        {
                "mi300x-gim-8vf",
                "{ 'name': 'mi300x-gim-8vf',"
                " 'description':"
                " '8x MI300X host under gim, 8 VFs per GPU (CPX/NPS4), VFs bound to vfio-pci',"
                " " KERNEL_MI300X ", 'vfio_pci_ids': '1002:74b5' }, " CPU_2S ","
                " 'gpu_defaults': { 'product': 'MI300X', 'hive_id': '0x3f5a1c8e92b7d461',"
                " 'role': 'host-pf', 'driver': 'gim', 'vf_num': 8 },"
                " " GPUS_MI300X_BUSES " }",
        },
        {
                "mi300x-guest-1vf",
                "{ 'name': 'mi300x-guest-1vf',"
                " 'description': 'a VM given one MI300X VF in one-VF mode (read-only hwmon)',"
                " " KERNEL_MI300X " },"
                " 'gpu_defaults': { 'product': 'MI300X', 'role': 'vf-guest-1vf' },"
                " " GUEST_VM " }",
        },
        {
                "mi300x-guest-multivf",
                "{ 'name': 'mi300x-guest-multivf',"
                " 'description':"
                " 'a VM given one of 8 MI300X VFs (multi-VF: 1 XCC, no hwmon, no pm files)',"
                " " KERNEL_MI300X " },"
                " 'gpu_defaults': { 'product': 'MI300X', 'role': 'vf-guest-multi', 'vf_num': 8 },"
                " " GUEST_VM " }",
        },
        {
                "mi300x-sriov",
                "{ 'name': 'mi300x-sriov',"
                " 'description': 'SYNTHETIC: the mi300x-8 server with an amdgpu that implements"
                " sriov_configure (real MI300 hosts use gim), and vfio-pci.enable_sriov',"
                " " KERNEL_MI300X ", 'amdgpu_sriov_configure': true,"
                " 'vfio_pci_enable_sriov': true }, " CPU_2S ","
                " 'gpu_defaults': { 'product': 'MI300X', 'hive_id': '0x3f5a1c8e92b7d461' },"
                " " GPUS_MI300X_BUSES " }",
        },
};
const size_t sim_n_presets = ELEMENTSOF(sim_presets);

/* clang-format on */

const struct sim_preset *sim_preset_find(const char *name) {
        for (size_t i = 0; i < sim_n_presets; i++)
                if (streq(sim_presets[i].name, name))
                        return &sim_presets[i];
        return NULL;
}
