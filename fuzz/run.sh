#!/usr/bin/env bash
# One libFuzzer run of one parser, for `make fuzz` (Makefile; FUZZ_JOBS runs several at once).
# usage: fuzz/run.sh BUILD PARSER RUNS SECONDS SEED   (sanitizer options come from the caller)
# Fuzzes BUILD/trainsim_fuzz's PARSER for RUNS inputs (libFuzzer -runs; SECONDS > 0 stops it
# earlier) from BUILD/corpus/PARSER (which grows), fuzz/seeds/PARSER and, for model and hardware,
# the presets. Crashes land in BUILD/crashes/PARSER-*, the log in BUILD/fuzz-PARSER.log. Prints,
# and writes to BUILD/fuzz-PARSER.summary, one line from libFuzzer's final stats:
#   PARSER: <inputs> inputs, <exec/s> exec/s, <wall> s, <crashes> crashes, exit <code>
# crashes = crash, leak, timeout and out-of-memory artifacts this run wrote (libFuzzer stops at
# its first, so 0 or 1). A failing run also prints its log's tail; the exit code is libFuzzer's.
set -u
build=$1 parser=$2 runs=$3 seconds=$4 seed=$5
log=$build/fuzz-$parser.log
mkdir -p "$build/corpus/$parser" "$build/crashes"
artifacts() { ls "$build/crashes" | grep -cE "^$parser-(crash|leak|timeout|oom)-"; }
stat() { sed -n "s/^stat::$1: *\([0-9]*\).*/\1/p" "$log" | tail -n 1; }
extra=()
[ "$parser" = model ] && extra=(data/models)
[ "$parser" = hardware ] && extra=(data/hardware)
before=$(artifacts)
t0=$(date +%s)
TRAINSIM_FUZZ_TARGET=$parser "$build/trainsim_fuzz" -runs="$runs" -seed="$seed" \
  -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
  -artifact_prefix="$build/crashes/$parser-" "$build/corpus/$parser" "fuzz/seeds/$parser" \
  "${extra[@]}" >"$log" 2>&1
rc=$?
wall=$(($(date +%s) - t0))
inputs=$(stat number_of_executed_units)
rate=$(stat average_exec_per_sec)
crashes=$(($(artifacts) - before))
[ "$rc" -ne 0 ] && tail -n 40 "$log"
line="$parser: ${inputs:-?} inputs, ${rate:-?} exec/s, $wall s, $crashes crashes, exit $rc"
echo "$line" >"$build/fuzz-$parser.summary"
echo "$line"
exit "$rc"
