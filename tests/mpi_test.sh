#!/usr/bin/env bash
# The MPI search on 2 ranks returns exactly what the single-process search returns.
# Usage: mpi_test.sh path/to/trainsim path/to/trainsim-mpi path/to/mpiexec
set -u
ts=$1 mpi=$2 mpiexec=${3:-mpirun}
args=(search --model llama3-8b --hardware h100_sxm_80gb --gpus 64 --gbs 128 --seq 4096 --top 8 --json)
flags=(--oversubscribe)
[ "$(id -u)" -eq 0 ] && flags+=(--allow-run-as-root)
export OMPI_MCA_plm_rsh_agent=""  # localhost only, no ssh
# The documents go through files: with each candidate's strategy_file they outgrow one argument.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$ts" "${args[@]}" > "$tmp/single.json" || { echo "single-process search failed"; exit 1; }
"$mpiexec" "${flags[@]}" -np 2 "$mpi" "${args[@]}" > "$tmp/multi.json" || { echo "mpirun failed"; exit 1; }
python3 - "$tmp/single.json" "$tmp/multi.json" <<'PY'
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
keys = ("evaluated", "feasible", "rejected", "collapsed")
ok = all(a[k] == b[k] for k in keys)
ok &= [c["strategy"] for c in a["top"]] == [c["strategy"] for c in b["top"]]
ok &= [c["step_time_s"] for c in a["top"]] == [c["step_time_s"] for c in b["top"]]
ok &= [c["variants"] for c in a["top"]] == [c["variants"] for c in b["top"]]
ok &= [c["strategy"] for c in a["pareto"]] == [c["strategy"] for c in b["pareto"]]
print("mpi search equals single-process search:", ok, "| evaluated", b["evaluated"], "feasible",
      b["feasible"], "collapsed", b["collapsed"])
sys.exit(0 if ok else 1)
PY
