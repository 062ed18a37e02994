#!/usr/bin/env bash
# Runs every fuzz target (one directory per target in Fuzz/Corpus) for FUZZ_SECONDS each, from a
# scratch copy of its committed seeds, so the corpus in git stays as it is. Prints each target's
# executions and exec/s, then a summary; exits 1 if any target crashed, naming the crash file.
#
#   Fuzz/run.sh BINARY [TARGET...]      (make fuzz builds BINARY and calls this)
set -uo pipefail
cd "$(dirname "$0")/.."

bin=${1:?usage: Fuzz/run.sh BINARY [TARGET...]}
shift
seconds=${FUZZ_SECONDS:-60}
work=${FUZZ_WORK:-.build-fuzz/work}
if [ $# -gt 0 ]; then targets=("$@"); else targets=($(ls Fuzz/Corpus)); fi

rm -rf "$work"
mkdir -p "$work"
summary=()
failed=()
n=${#targets[@]}
i=0
for t in "${targets[@]}"; do
  i=$((i + 1))
  if [ ! -d "Fuzz/Corpus/$t" ]; then echo "no seed corpus Fuzz/Corpus/$t" >&2; exit 2; fi
  corpus="$work/corpus/$t"
  crashes="$work/crashes/$t"
  log="$work/logs/$t.log"
  mkdir -p "$corpus" "$crashes" "$(dirname "$log")"
  cp Fuzz/Corpus/"$t"/* "$corpus"/
  # Swift's own crash backtracer is off: it fights AddressSanitizer; libFuzzer prints the stack.
  # New inputs go to the first directory (the scratch copy); the committed crash reproducers
  # are read as seeds too.
  seeds=("$corpus")
  if [ -d "Fuzz/Regressions/$t" ] && [ -n "$(ls -A "Fuzz/Regressions/$t")" ]; then seeds+=("Fuzz/Regressions/$t"); fi
  echo "[$i/$n] $t: fuzzing for ${seconds}s"
  SWIFT_BACKTRACE=enable=no LSAN_OPTIONS="suppressions=$PWD/Fuzz/lsan.supp:print_suppressions=0" \
    FOLIO_FUZZ_TARGET="$t" "$bin" "${seeds[@]}" \
    -max_total_time="$seconds" -print_final_stats=1 -timeout=20 -rss_limit_mb=2048 \
    -artifact_prefix="$crashes/" >"$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  added=$(sed -n 's/^stat::new_units_added: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  if [ "$rc" -eq 0 ]; then
    result=ok
  else
    crash=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
    result="CRASH ${crash:-(see $log)}"
    failed+=("$t")
    echo "---- $t crashed (exit $rc); the end of $log:"
    grep -v '^#[0-9]' "$log" | tail -40
    echo "---- reproduce: FOLIO_FUZZ_TARGET=$t $bin ${crash:-CRASH_FILE}"
  fi
  echo "[$i/$n] $t: ${execs:-?} executions, ${rate:-?} exec/s, coverage ${cov:-?}, ${added:-0} new inputs: $result"
  summary+=("$(printf '%-17s %12s %9s %6s  %s' "$t" "${execs:-?}" "${rate:-?}" "${cov:-?}" "$result")")
done

echo
echo "fuzzing summary (${seconds}s per target)"
printf '%-17s %12s %9s %6s  %s\n' target executions exec/s cov result
for line in "${summary[@]}"; do echo "$line"; done
if [ ${#failed[@]} -gt 0 ]; then
  echo "${#failed[@]} target(s) crashed: ${failed[*]}; minimize a crash with -minimize_crash=1, save it in Fuzz/Regressions/<target>/ and fix the reader"
  exit 1
fi
