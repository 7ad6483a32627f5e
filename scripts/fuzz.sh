#!/usr/bin/env bash
# fuzz.sh: run every native Go fuzz target in the repository, one after
# another, each for FUZZTIME, and print a table of what each run did.
#
#   FUZZTIME=60s scripts/fuzz.sh            # all targets (make fuzz)
#   FUZZTIME=20s scripts/fuzz.sh ./decision # only the targets under ./decision
#
# Environment:
#   FUZZTIME     time per target (default 60s; also "10000x" for a count)
#   FUZZPROCS    fuzzing workers per target (go test -parallel; default: GOMAXPROCS)
#   FUZZTIMEOUT  go test -timeout for one target (default 10m more than FUZZTIME needs)
#   FUZZLOGS     directory for each run's full output (default bin/fuzz)
#   GO           the go command (default go)
#
# A target fails when go test exits non-zero; the table then names the
# crasher go wrote under the package's testdata/fuzz/ (commit it: it is a
# seed that `make test` runs from then on), or says that no input was
# written (a worker hung or died: read the log). The script exits 1 when
# any target failed.
set -u

GO=${GO:-go}
FUZZTIME=${FUZZTIME:-60s}
FUZZLOGS=${FUZZLOGS:-bin/fuzz}
FUZZTIMEOUT=${FUZZTIMEOUT:-}
roots=("$@")
[ ${#roots[@]} -eq 0 ] && roots=(.)

cd "$(dirname "$0")/.." || exit 2
mkdir -p "$FUZZLOGS" || exit 2

if [ -z "$FUZZTIMEOUT" ]; then
	# go test's -timeout covers the whole binary: seeds, fuzzing, and the
	# minimisation of a crasher (up to a minute). Give it ample room.
	FUZZTIMEOUT=10m
	case "$FUZZTIME" in
	*[0-9]s | *[0-9]m | *[0-9]h)
		secs=$(
			t=$FUZZTIME
			case "$t" in
			*s) echo "${t%s}" ;;
			*m) echo $((${t%m} * 60)) ;;
			*h) echo $((${t%h} * 3600)) ;;
			esac
		)
		[[ "$secs" =~ ^[0-9]+$ ]] && FUZZTIMEOUT="$((secs + 600))s"
		;;
	esac
fi

# Packages with a fuzz target: those whose test files declare one, confirmed
# and named by go test -list (which honours build tags).
mapfile -t dirs < <(grep -rlE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*\(' "${roots[@]}" |
	grep -v '/node_modules/' | xargs -r -n1 dirname | sort -u)

# deadline_race reports whether a failed run is only go's fuzztime-deadline
# race: the failure message is "context deadline exceeded" and no input was
# written or reported failing.
deadline_race() {
	grep -qE '^[[:space:]]*context deadline exceeded$' "$1" &&
		! grep -qE 'Failing input written|^[[:space:]]+[A-Za-z0-9_]+\.go:[0-9]+: |panic:|hung or terminated' "$1"
}

declare -a rows
failed=0
total=0
for dir in "${dirs[@]}"; do
	pkg="./${dir#./}"
	if ! targets=$("$GO" test -list '^Fuzz' "$pkg" 2>"$FUZZLOGS/list.err"); then
		rows+=("$(printf '%-34s %-32s %12s %8s  %s' "$pkg" "(list)" - - "FAIL: go test -list: $(head -c 200 "$FUZZLOGS/list.err" | tr '\n' ' ')")")
		failed=$((failed + 1))
		continue
	fi
	for target in $(printf '%s\n' "$targets" | grep -E '^Fuzz'); do
		total=$((total + 1))
		log="$FUZZLOGS/$(echo "${dir#./}" | tr '/' '_')_$target.log"
		echo "fuzz: $pkg $target for $FUZZTIME (log $log)" >&2
		args=(test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" -timeout "$FUZZTIMEOUT")
		[ -n "${FUZZPROCS:-}" ] && args+=(-parallel "$FUZZPROCS")
		note=
		"$GO" "${args[@]}" "$pkg" >"$log" 2>&1
		rc=$?
		if [ $rc -ne 0 ] && deadline_race "$log"; then
			# Go 1.26's fuzz coordinator can report its own -fuzztime
			# deadline as a failure (go.dev/issue/75804, fixed in Go 1.27):
			# "context deadline exceeded", nothing written. Run again once.
			mv "$log" "$log.race"
			"$GO" "${args[@]}" "$pkg" >"$log" 2>&1
			rc=$?
			note=" (rerun after go#75804 deadline race; first run in $log.race)"
		fi
		# The last progress line carries the totals:
		# "fuzz: elapsed: 60s, execs: 123456 (2057/sec), new interesting: 12 (total: 80)"
		last=$(grep -E '^fuzz: elapsed: .*execs: ' "$log" | tail -n1)
		execs=$(sed -nE 's/.*execs: ([0-9]+).*/\1/p' <<<"$last")
		newi=$(sed -nE 's/.*new interesting: ([0-9]+).*/\1/p' <<<"$last")
		if [ $rc -eq 0 ]; then
			result="ok$note"
		else
			failed=$((failed + 1))
			crasher=$(sed -nE 's/.*Failing input written to (testdata\/fuzz\/[^ ]+).*/\1/p' "$log" | tail -n1)
			if [ -n "$crasher" ]; then
				result="FAIL: $dir/$crasher"
			else
				why=$(grep -m1 -E 'hung or terminated|panic: test timed out|signal: killed|out of memory|FAIL|--- FAIL' "$log")
				result="FAIL (no input written): ${why:-exit $rc}; see $log"
			fi
		fi
		rows+=("$(printf '%-34s %-32s %12s %8s  %s' "$pkg" "$target" "${execs:--}" "${newi:--}" "$result")")
	done
done

printf '\n%-34s %-32s %12s %8s  %s\n' PACKAGE TARGET EXECS NEW RESULT
for r in "${rows[@]}"; do
	echo "$r"
done
printf '\n%d targets, %d failed, FUZZTIME=%s each\n' "$total" "$failed" "$FUZZTIME"
[ $failed -eq 0 ]
