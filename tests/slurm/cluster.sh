#!/bin/sh
# tests/slurm/cluster.sh - a real single-node Slurm cluster for the tests,
# made from Debian's slurmctld, slurmd and munge (installed by `make deps`),
# with a configuration of its own under DIR, on ports of its own and with a
# munge socket of its own, so it touches nothing of the machine's.  As root.
#   sh tests/slurm/cluster.sh start DIR   start munged, slurmctld, slurmd; wait until the node is idle;
#                                         prints the line to eval: export SLURM_CONF=DIR/slurm.conf
#   sh tests/slurm/cluster.sh stop DIR    stop them
set -eu
cmd=${1:-}; D=${2:-}
[ -n "$cmd" ] && [ -n "$D" ] || { echo "usage: cluster.sh start|stop DIR" >&2; exit 2; }
stop() {
	# jobs first, then whatever this cluster's slurmd left behind (step
	# daemons run in $D and log into it), then the daemons
	SLURM_CONF="$D/slurm.conf" scancel --full --quiet --partition=test 2>/dev/null || true
	for proc in /proc/[0-9]*; do
		case "$(readlink "$proc/cwd" 2>/dev/null)" in
		"$D"*) [ "${proc#/proc/}" != $$ ] && kill -9 "${proc#/proc/}" 2>/dev/null ;;
		esac
	done
	for p in slurmd slurmctld munged; do
		pid=$(cat "$D/$p.pid" 2>/dev/null) && kill "$pid" 2>/dev/null || true
	done
	for _ in $(seq 1 50); do
		alive=0
		for p in slurmd slurmctld munged; do
			pid=$(cat "$D/$p.pid" 2>/dev/null) && kill -0 "$pid" 2>/dev/null && alive=1
		done
		[ $alive = 0 ] && break
		sleep 0.1
	done
	for p in slurmd slurmctld munged; do
		pid=$(cat "$D/$p.pid" 2>/dev/null) && kill -9 "$pid" 2>/dev/null || true
		rm -f "$D/$p.pid"
	done
}
case $cmd in
stop) stop; exit 0 ;;
start) ;;
*) echo "cluster.sh: unknown command $cmd" >&2; exit 2 ;;
esac
[ "$(id -u)" = 0 ] || { echo "cluster.sh: the test cluster needs root" >&2; exit 3; }
for b in munged slurmctld slurmd srun; do
	command -v $b >/dev/null 2>&1 || [ -x /usr/sbin/$b ] ||
		{ echo "cluster.sh: $b is missing (make deps installs slurmctld, slurmd, munge)" >&2; exit 3; }
done
mkdir -p "$D/state" "$D/spool" "$D/munge"
chmod 700 "$D/munge"
host=$(hostname -s)
cpus=$(nproc)
mem=$(awk '/MemTotal/ {print int($2 / 1024 / 2)}' /proc/meminfo)
# ports of its own, from the directory's name, so two test runs do not meet
base=$(( 20000 + $(printf '%s' "$D" | cksum | cut -d' ' -f1) % 20000 ))
dd if=/dev/urandom of="$D/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$D/munge/munge.key"
/usr/sbin/munged --key-file="$D/munge/munge.key" --socket="$D/munge/munge.socket" \
	--pid-file="$D/munged.pid" --log-file="$D/munged.log" --seed-file="$D/munge/seed" --force
cat >"$D/slurm.conf" <<CONF
ClusterName=kloop-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$base
SlurmdPort=$((base + 1))
SrunPortRange=$((base + 2))-$((base + 200))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$D/munge/munge.socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/slurmctld.log
SlurmdLogFile=$D/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=2
MinJobAge=10
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF
export SLURM_CONF="$D/slurm.conf"
alive() { pid=$(cat "$D/$1.pid" 2>/dev/null) && kill -0 "$pid" 2>/dev/null; }
/usr/sbin/slurmctld -f "$D/slurm.conf" -i
# the controller first: a slurmd that starts before it answers registers
# late (once, the node stayed "unknown*" past the old 30 s wait)
for _ in $(seq 1 150); do
	scontrol ping 2>/dev/null | grep -q 'is UP' && break
	sleep 0.2
done
/usr/sbin/slurmd -f "$D/slurm.conf"
# ready when the node answers idle; a slurmd that died is started again,
# and a node still not responding after 15 s is asked to register again
st=""
n=0
while [ $n -lt 450 ]; do
	st=$(sinfo -h -o '%T' 2>/dev/null | head -1 || true)
	case $st in idle*|mixed*|allocated*) echo "export SLURM_CONF=$D/slurm.conf"; exit 0 ;; esac
	if ! alive slurmd; then
		echo "cluster.sh: slurmd is not running after $((n / 5)) s: starting it again" >&2
		/usr/sbin/slurmd -f "$D/slurm.conf" || true
	fi
	if [ $n = 75 ] || [ $n = 225 ]; then
		echo "cluster.sh: the node is '$st' after $((n / 5)) s: restarting slurmd" >&2
		pid=$(cat "$D/slurmd.pid" 2>/dev/null) && kill "$pid" 2>/dev/null
		sleep 1
		/usr/sbin/slurmd -f "$D/slurm.conf" || true
		scontrol update NodeName="$host" State=RESUME 2>/dev/null || true
	fi
	sleep 0.2
	n=$((n + 1))
done
# why not: each daemon, the node as the controller sees it, each log's end
{
	echo "cluster.sh: the node did not come up within 90 s (state '$st'); logs in $D"
	for p in munged slurmctld slurmd; do
		alive $p && echo "  $p: running (pid $pid)" || echo "  $p: not running"
	done
	scontrol ping 2>&1 | sed 's/^/  /'
	scontrol show node "$host" 2>&1 | sed 's/^/  /'
	for f in slurmctld slurmd munged; do
		echo "  --- the end of $D/$f.log"
		tail -n 15 "$D/$f.log" 2>&1 | sed 's/^/  /'
	done
} >&2
stop
exit 1
