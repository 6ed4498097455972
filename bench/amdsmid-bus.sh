# SPDX-License-Identifier: MIT
#
# Sourced by bench/run.sh and bench/compare.sh: amdsmid on a private system bus.
#
#   amdsmid_start AMDSMID TREE   a dbus-daemon and AMDSMID on TREE, their own state, runtime
#                                and configuration directories; sets daemon_pid, bus_pid,
#                                bus_dir and exports DBUS_SYSTEM_BUS_ADDRESS
#   amdsmid_start_metrics AMDSMID TREE PORT
#                                the same, amdsmid under systemd-socket-activate listening on
#                                127.0.0.1:PORT (the socket named "metrics", as
#                                amdsmid-metrics.socket passes it); a first connection starts
#                                amdsmid, which keeps the pid (daemon_pid)
#   amdsmid_stop                 stops both and removes their directory (once: it forgets
#                                the pids and the directory)

amdsmid_bus() {
        bus_dir=$(mktemp -d)
        mkdir "$bus_dir/state" "$bus_dir/run" "$bus_dir/etc"
        cat > "$bus_dir/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$bus_dir/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default"><allow user="*"/><allow own="*"/><allow send_type="method_call"/>
    <allow send_type="signal"/><allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/><allow receive_type="method_call"/>
    <allow receive_type="method_return"/><allow receive_type="error"/><allow receive_type="signal"/>
  </policy>
</busconfig>
CONF
        dbus-daemon --config-file="$bus_dir/bus.conf" --nofork --print-address=1 \
                > "$bus_dir/address" 2>/dev/null &
        bus_pid=$!
        for _ in $(seq 50); do [ -s "$bus_dir/address" ] && break; sleep 0.1; done
        DBUS_SYSTEM_BUS_ADDRESS=$(head -n 1 "$bus_dir/address")
        export DBUS_SYSTEM_BUS_ADDRESS
}

amdsmid_wait() {
        for _ in $(seq 100); do
                busctl --system status org.amdsmi1 >/dev/null 2>&1 && break
                sleep 0.1
        done
}

amdsmid_start() {
        amdsmid_bus
        AMDSMI_SYSFS_ROOT=$2 STATE_DIRECTORY=$bus_dir/state RUNTIME_DIRECTORY=$bus_dir/run \
                CONFIGURATION_DIRECTORY=$bus_dir/etc "$1" 2> "$bus_dir/amdsmid.log" &
        daemon_pid=$!
        amdsmid_wait
}

amdsmid_start_metrics() {
        local pass=(-E AMDSMI_SYSFS_ROOT -E STATE_DIRECTORY -E RUNTIME_DIRECTORY
                -E CONFIGURATION_DIRECTORY -E DBUS_SYSTEM_BUS_ADDRESS) v
        # systemd-socket-activate passes only the variables named with -E
        for v in AMDSMI_DEV_ROOT AMDSMI_SIM_CTL AMDSMI_DEBUG LD_PRELOAD; do
                [ -z "${!v:-}" ] || pass+=(-E "$v")
        done
        amdsmid_bus
        AMDSMI_SYSFS_ROOT=$2 STATE_DIRECTORY=$bus_dir/state RUNTIME_DIRECTORY=$bus_dir/run \
                CONFIGURATION_DIRECTORY=$bus_dir/etc systemd-socket-activate \
                -l "127.0.0.1:$3" --fdname=metrics "${pass[@]}" "$1" 2> "$bus_dir/amdsmid.log" &
        daemon_pid=$!
        # the first connection (once it listens) makes it exec amdsmid
        for _ in $(seq 50); do
                (exec 3<>"/dev/tcp/127.0.0.1/$3") 2>/dev/null && break
                sleep 0.1
        done
        amdsmid_wait
}

amdsmid_stop() {
        kill "$daemon_pid" "$bus_pid" 2>/dev/null || true
        wait "$daemon_pid" "$bus_pid" 2>/dev/null || true
        unset DBUS_SYSTEM_BUS_ADDRESS
        rm -rf "$bus_dir"
        daemon_pid= bus_pid= bus_dir=
}
