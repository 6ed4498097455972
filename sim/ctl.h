/* SPDX-License-Identifier: MIT */
/*
 * amdsmi-sim: the control socket, its server (a thread of `mount` and `run`) and its client
 * (`amdsmi-sim ctl`).
 *
 * Where: `--ctl PATH`, else $XDG_RUNTIME_DIR/amdsmi-sim-<pid>.sock, else
 * <rundir>/amdsmi-sim-<pid>.sock where <rundir> is /run/amdsmi-sim for root and
 * ${TMPDIR:-/tmp}/amdsmi-sim-<uid> for others (made 0700). `mount -f` prints the path in its
 * startup line; `run` exports it to CMD as AMDSMI_SIM_CTL. `mount` also writes it, one line, to
 * <rundir>/mounts/<mount point> (<rundir> as above, or $XDG_RUNTIME_DIR/amdsmi-sim; the mount
 * point's real path escaped as systemd-escape --path does: "/tmp/x/sys" is "tmp-x-sys"),
 * outside the served tree; `amdsmi-sim ctl --mount DIR` reads it there. The socket is mode
 * 0600; both files go when the simulator ends.
 *
 * Protocol: a unix stream socket; one request, one response, in order; a connection may carry
 * any number of requests.
 *
 *   request  = WORD *(SP WORD) LF     at most 4096 bytes of printable ASCII; words separated
 *                                     by spaces or tabs
 *   response = "ok" SP LENGTH LF BODY                  BODY: the LENGTH bytes of the output
 *                                                      (empty for most commands)
 *            | "error" SP NAME SP NUMBER SP MESSAGE LF errno name and number ("EINVAL 22"),
 *                                                      and what was wrong, in words
 *
 * A request too long or not text is answered with an error, and the connection is closed.
 * `kfd-users add` may carry a pidfd of the process (SCM_RIGHTS with the request's bytes, as
 * `amdsmi-sim ctl` sends it): the PID is then the one of the requester's PID namespace (inside
 * `run`: CMD's, whose /proc shows it). Without a pidfd the PID is the simulator's.
 *
 * Commands (BDF: DDDD:BB:DD.F, or BB:DD.F in domain 0; PATH: below the tree's root, or
 * absolute under the mount point, every link followed; ERRNO: EIO, EBUSY, ... or 1..511):
 *
 *   kfd-users add BDF PID [VRAM_BYTES]
 *           A live process uses the GPU through KFD: class/kfd/kfd/proc/<PID>/ appears (pasid;
 *           queues/; per KFD node of its GPUs, in topology order: stats_<gpu_id>/evicted_ms,
 *           stats_<gpu_id>/cu_occupancy, vram_<gpu_id> (VRAM_BYTES on the GPU's first node),
 *           sdma_<gpu_id>, counters_<gpu_id>/{faults,page_in,page_out}; all 0444), and compute
 *           partition writes on the GPU fail with EBUSY. The user is dropped when the process
 *           exits (checked at once by those writes, and within 200 ms otherwise).
 *           ESRCH: no such process; EEXIST: already a user of that GPU; ENODEV: no such GPU,
 *           or it has no KFD nodes.
 *   kfd-users remove BDF PID          ENOENT: not a user of that GPU
 *   kfd-users list                    output: "BDF PID PASID COMM" per user, and
 *                                     "BDF - - (N without a process)" for counted users
 *                                     (--kfd-users, the description's kfd_users)
 *   inject PATH ERRNO [once|always] [open|read|write]...
 *           Operations on PATH fail with ERRNO (default: always, read and write). open applies
 *           to files and directories, read (a read at offset 0) and write to files. This is a
 *           fault seen by the caller only: the driver's state does not change (for a partition
 *           switch failing inside the driver use switch-error).
 *   delay PATH MS [once|always] [open|read|write]...
 *           Operations on PATH take MS (1..600000) ms longer (default: always, read and
 *           write); no lock is held meanwhile, other files are served.
 *   no-effect PATH [once|always]      writes of PATH succeed and change nothing
 *   clear-faults [PATH]               removes the faults of PATH, or all
 *           (A new fault replaces the operations it names in faults of its kind on PATH.)
 *   switch-time BDF MS
 *           A compute partition switch of the GPU takes MS (0..600000) ms: its KFD nodes go at
 *           once, the new ones come at the end; meanwhile reads of its
 *           current_compute_partition and other switches of it wait (the kernel's partition
 *           mutex); nothing else waits.
 *   switch-error BDF ERRNO|none [once|always]
 *           The next (default once) or every compute partition switch of the GPU fails with
 *           ERRNO in the driver (as --inject-switch-error): EIO fails the KFD re-init after
 *           the hardware switched (below); another errno refuses the switch before anything.
 *   sensor BDF NAME VALUE|auto
 *           Holds a sensor at VALUE until set to auto (telemetry moves it again):
 *           power_w (0..5000), temp_junction_c, temp_mem_c (0..200), gfx_busy_pct,
 *           mem_busy_pct (0..100), sclk_mhz, mclk_mhz (0..10000): hwmon, gpu_metrics and
 *           *_busy_percent show them; vram_used_bytes (0..VRAM; auto: the value at load):
 *           mem_info_vram_used, KFD used_memory. ERANGE: out of range.
 *   platform-limit BDF WATTS|none     the BMC's power limit (1..4294 W), or none
 *   limit BDF ppt|socket_thermal|hbm_thermal|vr_thermal|prochot PERCENT
 *           From now on the limiter holds the GPU PERCENT (0..100) % of the time: its
 *           gpu_metrics residency counter advances by exactly PERCENT % of the accumulation
 *           counter's ticks (100 ticks per 100 ms step: PERCENT ticks per step), and for ppt and
 *           the thermal ones the per-XCC GFX_BELOW_HOST_LIMIT_{PPT,THM,TOTAL}_ACC of every XCC
 *           too (THM: the largest thermal share, TOTAL: the larger of PPT and THM). 0 gives the
 *           counter back to its rule (ppt: power at the cap). ERANGE: over 100.
 *   counter BDF accumulation VALUE
 *           Sets the accumulation counter (0..2^64-1); it goes on from there. Tables that
 *           carry it as u32 (v1.6 to v1.8, v1.9 of 6.19) show it modulo 2^32.
 *   reset BDF begin|end
 *           A GPU reset in progress: EPERM on current_compute_partition reads and writes
 *           (DKMS kernels) and current_memory_partition reads, EBUSY on pm and hwmon reads and
 *           writes (gpu_metrics, power1_cap, ...), "Query currently inaccessible" in the RAS
 *           count files, until end. KFD SMI events GPU_PRE_RESET at begin (the reset's
 *           seqno counted, cause "user trigger") and GPU_POST_RESET at end (no cause).
 *   reset-fail BDF ERRNO|none [read] [wedged] [once|always]
 *           The next (default once) or every GPU reset of the GPU (a read of its debugfs
 *           amdgpu_gpu_recover, or of gim's reset_gpu) fails: reset_res is -ERRNO (the read
 *           answers "-110" for ETIMEDOUT), or with read the read itself fails with ERRNO and
 *           nothing is reset; wedged: the GPUs of the reset stay in reset (busy pm files, no
 *           GPU_POST_RESET) until `reset BDF end`. A failed reset has none of the effects.
 *   reset-hang BDF MS|forever|none
 *           The next GPU reset of the GPU blocks MS (1..600000) ms instead of the machine's
 *           kernel.reset_ms, or until reset-release.
 *   reset-release BDF                 ends a reset hanging forever. ESRCH: none is running
 *   reset-config time_ms|kfd_down_ms|keeps_cap|keeps_perf VALUE
 *           The effects of a GPU reset on this machine (kernel.reset_ms, reset_kfd_down_ms,
 *           reset_keeps_cap, reset_keeps_perf of its description): how long one takes (ms),
 *           how long the KFD nodes are gone after it (0: they persist), whether the power
 *           caps and the performance level keep their values (1) or go to their defaults (0).
 *           The dump's "reset" of each GPU: count (resets it went through, its own or its
 *           hive's), running, fail, fail_read, fail_wedged, fail_always, hang_ms.
 *   ras-inject BDF BLOCK ue|ce|de [N]
 *           N (default 1, up to 2^32-1) more errors of the type in the block's count file
 *           (ras/aca_<block> or <block>_err_count); a deferred error is also a poison
 *           creation in ras/event_state. EOPNOTSUPP: the GPU has no RAS on BLOCK.
 *   retire-page BDF PFN R|P|F
 *           Page frame PFN (0x... or decimal, within VRAM) in gpu_vram_bad_pages with that
 *           status, appended, or changed if listed (P becomes R when its reservation is done).
 *           The page that takes the table over kernel.bad_page_threshold writes the
 *           bad-page-threshold CPER record (RMA). EOPNOTSUPP: no bad-page table.
 *   cper BDF fatal|corrected|uncorrected [--bad-page-threshold]
 *           Appends a CPER record to the debugfs ring as amdgpu writes it, and counts it as the
 *           driver does: fatal = a UE (and a fatal error in event_state), uncorrected = a
 *           deferred error (poison creation), corrected = a CE, on umc (else the first block
 *           with RAS). --bad-page-threshold (fatal only): the RMA record, not counted.
 *           EOPNOTSUPP: no CPER ring (no ACA).
 *   kfd-event BDF[.P] KIND [pid=PID] [PAYLOAD...]
 *           Raises a KFD SMI event on the GPU's KFD nodes (or partition P's): KIND is vmfault,
 *           thermal_throttle, gpu_pre_reset, gpu_post_reset, migrate_start, migrate_end,
 *           page_fault_start, page_fault_end, queue_eviction, queue_restore, unmap_from_gpu,
 *           process_start, process_end (or 1..13). PAYLOAD (its words joined by spaces) is the
 *           line after the "%x " id as given; without it the event's own format. PID tags the
 *           event as the process's (kfd_smi_ev_enabled()); 0 by default: every client.
 *   kfd-smi-open GPU_ID
 *           The KFD shim's AMDKFD_IOC_SMI_EVENTS: the response carries the client's end of a
 *           new event stream of the KFD node (SCM_RIGHTS). EINVAL: no such node.
 *   unplug BDF
 *           Hot-unplug: the driver is removed (DRM cards and render nodes, the XCP platform
 *           devices, hwmon, the KFD nodes with generation_id moving, the KFD users of the GPU),
 *           then the PCI function (its directory, bus/pci/devices/BDF, its IOMMU group link).
 *           A switch in progress ends first.
 *   replug BDF
 *           The function comes back as at load: the description's state (modes, caps,
 *           platform limit, sensors, counted users), bound to the driver it had at load, new
 *           KFD nodes appended (generation_id moves). EEXIST: it is plugged in.
 *   dump    output: the state as JSON: "machine" (name, description, seed, frozen, kernel
 *           {gpu_metrics_revision, gpu_metrics_layout, nps_compat, dkms, partition_config}),
 *           "kfd" (generation_id, cpu_nodes, gpu_nodes), "gpus" (per GPU: bdf, product, role,
 *           present, driver, attached, compute_partition, available_compute_partitions,
 *           memory_partition, memory_partition_requested, memory_partition_armed,
 *           switch_time_ms, switching, switch_error, switch_error_always, kfd_lost, in_reset,
 *           kfd_gpu_ids, power {cap_w, cap_min_w, cap_max_w, cap_default_w, effective_cap_w,
 *           platform_limit_w, ppt1}, kfd_users {count, without_process, pids}, sensors {...,
 *           held}, gpu_metrics_revision, gpu_metrics_layout (revision 9's: "6.19", "7.0", "7.1";
 *           else null), limiters_pct {ppt, socket_thermal, hbm_thermal, vr_thermal, prochot},
 *           accumulation_counter, ras {aca, counts {BLOCK: {ue, ce, de}}, bad_pages
 *           {reserved, pending, unreservable}, cper_ring {bytes, rptr, wptr, records} or null,
 *           reset_seq}), "kfd_processes" (pid, comm, pasid, gpus [{bdf,
 *           vram_bytes}]), "faults" (path, kind errno|delay|no-effect, errno, ms, ops, once,
 *           hits)
 *   help    output: this command list
 *
 * EIO in a partition switch (switch-error BDF EIO): the state the kernel leaves
 * (amdgpu_xcp_switch_partition_mode() re-reads the hardware mode after a failure): the hardware
 * switched, so current_compute_partition shows the NEW mode; KFD init failed, so the GPU has no
 * KFD nodes (generation_id moved once per node removed, none added); available_compute_partition
 * is not recomputed (it depends on the memory mode only, so it is unchanged). KFD stays down
 * until the driver is loaded again (unbind and bind, or unplug and replug): later switches of the
 * GPU skip KFD as the kernel does without kfd.init_complete, so they succeed (no EBUSY check)
 * and change the mode, and bring no KFD nodes back.
 *
 * Client exit status: 0 ok (the output on stdout), 1 cannot connect (or no answer), 2 usage,
 * 3 the simulator refused (its message on stderr).
 */
#pragma once

#include <stdbool.h>

struct sim_machine;
struct sim_ctl;

struct sim_ctl_config {
        const char *socket_path; /* NULL: the default */
        const char *mountpoint;  /* the real path of the mount point: absolute paths under it */
        bool register_mount;     /* write <rundir>/mounts/<mount point> (background mount) */
};

/* Listens (no thread yet: call sim_ctl_start() once the process will not fork any more). */
int sim_ctl_new(struct sim_machine *m, const struct sim_ctl_config *cfg, struct sim_ctl **ret);
const char *sim_ctl_socket(const struct sim_ctl *c);
/* Serves on a thread of its own, which takes the fs lock for each request. */
int sim_ctl_start(struct sim_ctl *c);
/* Stops the thread, closes and removes the socket and the mount's file. NULL-safe. */
struct sim_ctl *sim_ctl_free(struct sim_ctl *c);

/* `amdsmi-sim ctl [--socket PATH | --mount DIR] COMMAND [ARG...]`: argv[0] is "ctl". */
int sim_ctl_main(int argc, char **argv);
