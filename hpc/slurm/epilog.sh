#!/bin/bash
# scout job-epilogue hook: analyzes the trace a job has just written.
#
# Install as a SLURM TaskEpilog (runs as the job's user after each task;
# it acts once, on task 0), or call it at the end of a batch script:
#   TaskEpilog=/path/to/scout/hpc/slurm/epilog.sh      (slurm.conf)
#
# It looks for the Score-P experiment in $SCOREP_EXPERIMENT_DIRECTORY or
# the newest scorep-*/traces.otf2 below the job's submit directory, runs
# scout on it (the MPI build with srun when available and inside an
# allocation, with one process per traced rank or as many as the job
# has tasks if that is fewer; otherwise the in-process analysis), and leaves trace.stat,
# the report and scout.log in the experiment directory. It never fails
# the job: problems are logged and the hook exits 0.
#
# Settings (environment): SCOUT (default: scout), SCOUT_MPI (default:
# scout-mpi), SCOUT_ARGS (extra flags), SCOUT_TIME_LIMIT (seconds the
# analysis may take before it is stopped, so that the hook can never hold
# up the end of the job; default 1800), SCOUT_EPILOG_DISABLE=1 to skip.
set -u

log() { echo "scout-epilog: $*" >&2; }

[ "${SCOUT_EPILOG_DISABLE:-0}" = 1 ] && exit 0
[ "${SLURM_PROCID:-0}" = 0 ] || exit 0   # once per job step

exp=${SCOREP_EXPERIMENT_DIRECTORY:-}
if [ -z "$exp" ] || [ ! -f "$exp/traces.otf2" ]; then
  base=${SLURM_SUBMIT_DIR:-$PWD}
  exp=$(ls -1dt "$base"/scorep-*/ 2>/dev/null | while read -r d; do
          [ -f "$d/traces.otf2" ] && { echo "${d%/}"; break; }; done)
fi
if [ -z "$exp" ] || [ ! -f "$exp/traces.otf2" ]; then
  log "no trace found (set SCOREP_EXPERIMENT_DIRECTORY); nothing to analyze"
  exit 0
fi
if [ -f "$exp/trace.stat" ] && [ "$exp/trace.stat" -nt "$exp/traces.otf2" ]; then
  log "$exp is already analyzed"
  exit 0
fi

SCOUT=${SCOUT:-scout}
SCOUT_MPI=${SCOUT_MPI:-scout-mpi}
# shellcheck disable=SC2086
if [ -n "${SLURM_JOB_ID:-}" ] && command -v srun >/dev/null && command -v "$SCOUT_MPI" >/dev/null; then
  # one process per traced rank: master-thread locations have ids < 2^32
  ranks=$(ls "$exp/traces/" | awk -F. '$2 == "evt" && $1 < 4294967296' | wc -l)
  # scout hosts several ranks per process when it has fewer processes than
  # the trace has ranks, so a smaller allocation works too.
  procs=$ranks
  if [ -n "${SLURM_NTASKS:-}" ] && [ "$SLURM_NTASKS" -lt "$ranks" ]; then procs=$SLURM_NTASKS; fi
  cmd=(srun --ntasks="$procs" "$SCOUT_MPI" ${SCOUT_ARGS:-} "$exp")
else
  cmd=("$SCOUT" ${SCOUT_ARGS:-} "$exp")
fi
limit=${SCOUT_TIME_LIMIT:-1800}
case "$limit" in
  ''|*[!0-9]*|0) log "SCOUT_TIME_LIMIT=$limit is not a positive number of seconds; using 1800"; limit=1800 ;;
esac
log "analyzing $exp (time limit ${limit}s): ${cmd[*]}"
# SIGTERM first (scout then removes its temporary files), SIGKILL 30 s later.
timeout --kill-after=30 "$limit" "${cmd[@]}" > "$exp/scout.log" 2>&1
status=$?
case $status in
  0) log "done: $exp/trace.stat" ;;
  124|137) log "scout stopped after the time limit of ${limit}s (SCOUT_TIME_LIMIT); see $exp/scout.log" ;;
  *) log "scout failed (exit $status); see $exp/scout.log" ;;
esac
exit 0
