#!/usr/bin/env bash
# The sweep workflow on a real scheduler: a single-node Slurm (Debian's slurm-wlm and munge) is
# started on this machine in a private folder, the tiny CI sweep runs through Snakemake's cluster
# submission (sbatch), its summary must equal a local run's (timings aside), and Slurm is stopped
# on every exit path. Usage: slurm_sweep.sh QREPLAY SOURCE_DIR. Needs root (daemons as root);
# otherwise it reports itself skipped (exit 77).
set -euo pipefail
qreplay=$1 src=$2
if [ "$(id -u)" -ne 0 ]; then echo "skipped: needs root to run slurmctld, slurmd and munged"; exit 77; fi
for b in munged slurmctld slurmd sbatch sinfo snakemake; do
    command -v "$b" >/dev/null || { echo "skipped: $b not installed (./waf deps installs slurm-wlm and munge)"; exit 77; }
done
tmp=$(mktemp -d /tmp/qr-slurm-XXXXXX)
pids=()
cleanup() {
    set +e
    SLURM_CONF=$tmp/slurm.conf scancel --quiet --user=root 2>/dev/null
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${pids[@]}"; do for i in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done; kill -9 "$p" 2>/dev/null; done
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

# munge: a private key, socket and state
mkdir -p "$tmp/munge" "$tmp/state" "$tmp/spool" "$tmp/log"
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
chmod 700 "$tmp/munge"; chmod 400 "$tmp/munge/munge.key"
munged --force --key-file="$tmp/munge/munge.key" --socket="$tmp/munge/munge.sock" \
    --pid-file="$tmp/munge/munged.pid" --log-file="$tmp/log/munged.log" --seed-file="$tmp/munge/seed"
sleep 0.5
pids+=("$(cat "$tmp/munge/munged.pid")")

host=$(hostname -s)
cpus=$(nproc)
mem=$(awk '/MemTotal/ {print int($2 / 1024 / 2)}' /proc/meminfo)
cat > "$tmp/slurm.conf" <<CONF
ClusterName=qreplay-test
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$tmp/munge/munge.sock
CredType=cred/munge
SlurmctldPort=16817
SlurmdPort=16818
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
MpiDefault=none
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=qreplay Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$tmp/slurm.conf
slurmctld -i -f "$tmp/slurm.conf"
for i in $(seq 50); do [ -f "$tmp/slurmctld.pid" ] && break; sleep 0.1; done
pids+=("$(cat "$tmp/slurmctld.pid")")
slurmd -f "$tmp/slurm.conf"
for i in $(seq 50); do [ -f "$tmp/slurmd.pid" ] && break; sleep 0.1; done
pids+=("$(cat "$tmp/slurmd.pid")")
for i in $(seq 100); do
    sinfo -h -o %t 2>/dev/null | grep -qE '^idle' && break
    sleep 0.2
done
sinfo -h -o %t | grep -qE '^idle' || { echo "FAIL: the Slurm node did not come up"; tail -20 "$tmp/log/"*.log; exit 1; }
echo "slurm: node $host idle ($cpus CPUs, $mem MB)"

# the tiny sweep through sbatch, and locally
cd "$src"
common=(-s analysis/Snakefile --config scenario=scenarios/fattree-k4-sweep-ci.ini qreplay="$qreplay")
snakemake "${common[@]}" out="$tmp/cluster" --jobs 2 --latency-wait 30 \
    --cluster "sbatch --parsable --cpus-per-task=1 --mem=2G --output=$tmp/log/job-%j.out" \
    > "$tmp/log/snake-cluster.log" 2>&1 || { echo "FAIL: cluster sweep"; tail -30 "$tmp/log/snake-cluster.log"; exit 1; }
jobs=$(grep -c "Submitted job .* with external jobid" "$tmp/log/snake-cluster.log" || true)
# one job per (load, seed): 2 loads x 3 seeds
[ "$jobs" -ge 6 ] || { echo "FAIL: $jobs jobs went through sbatch, not one per seed"; tail -30 "$tmp/log/snake-cluster.log"; exit 1; }
echo "cluster sweep: $jobs jobs submitted through sbatch"
snakemake "${common[@]}" out="$tmp/local" --cores 2 > "$tmp/log/snake-local.log" 2>&1 ||
    { echo "FAIL: local sweep"; tail -30 "$tmp/log/snake-local.log"; exit 1; }
# the same numbers, timings and memory aside
strip() { python3 -c '
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for r in rows:
    print(",".join(v for k, v in r.items() if k not in ("wall_s", "max_rss_mb")))' "$1"; }
if ! diff <(strip "$tmp/cluster/summary.csv") <(strip "$tmp/local/summary.csv"); then
    echo "FAIL: the cluster's summary differs from the local one"; exit 1
fi
echo "cluster summary equals the local one ($(($(wc -l < "$tmp/local/summary.csv") - 1)) rows)"
if ! diff "$tmp/cluster/points.csv" "$tmp/local/points.csv"; then
    echo "FAIL: the cluster's points over seeds differ from the local ones"; exit 1
fi
echo "cluster points over seeds equal the local ones ($(($(wc -l < "$tmp/local/points.csv") - 1)) points)"
echo "1 passed, 0 failed"
