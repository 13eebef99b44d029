#!/usr/bin/env bash
# The fuzz targets (tests/fuzz/fuzz_*.c): libFuzzer with ASan+UBSan,
# clang-14, against the firmware and the unit tests' fake host.
#   tools/fuzz.sh build                  build them into build-fuzz/
#   tools/fuzz.sh run SECONDS [target]   fuzz each (or one) for SECONDS from
#                                        its seed corpus tests/fuzz/corpus/<t>
#                                        (new inputs go to build-fuzz/corpus/)
#   tools/fuzz.sh cover                  line coverage of firmware/ reached by
#                                        replaying both corpora (llvm-cov)
#   tools/fuzz.sh seeds                  regenerate the seed corpus's gen-*
#                                        inputs (tests/fuzz/fuzz_seeds.c)
# Any crash, leak, sanitizer report or timeout fails (status != 0); the
# input is left in build-fuzz/crash-* for replay: build-fuzz/fuzz_rx FILE.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=${SNIC_FUZZ_BUILD:-build-fuzz}
CC=${FUZZ_CC:-clang-14}
TARGETS=(fuzz_rx fuzz_cmd fuzz_wqe fuzz_cores)
# a target's seed corpus (tests/fuzz/corpus/<it>): its own name's, but
# fuzz_cores (fuzz_wqe with two cores per NIC) reads fuzz_wqe's
seeds_of() { [[ $1 == fuzz_cores ]] && echo fuzz_wqe || echo "$1"; }
INC=(-Ifirmware/include -Ihal/include -Ifirmware/src -Ifirmware -Itests/unit -Ihal/fault -Itests/fuzz)
FW=$(ls firmware/src/*/*.c firmware/arch/*/*.c)
HOST=(tests/unit/fake_env.c tests/unit/fake_frames.c tests/unit/fake_hal.c
      tests/unit/fake_host.c hal/fault/fault.c tests/fuzz/fuzz_env.c
      tests/fuzz/fuzz_features.c)

# Every source compiled once (the firmware is most of it), then each
# target linked; -fsanitize=fuzzer only at the link, -fsanitize=
# fuzzer-no-link for the objects.
build_one() { # flags outdir
	local flags=$1 dir=$2 t src objs=()
	mkdir -p "$dir/obj"
	for src in "${HOST[@]}" $FW; do
		objs+=("$dir/obj/$(echo "${src%.c}" | tr / _).o")
	done
	# shellcheck disable=SC2086
	printf '%s\n' "${HOST[@]}" $FW | xargs -P "$(nproc)" -I{} sh -c '
		o="$0/obj/$(echo "${1%.c}" | tr / _).o"
		exec '"$CC"' -std=c11 -g -O1 -D_GNU_SOURCE -fno-strict-aliasing \
			-Wall -Wextra -Wno-unused-parameter '"${flags//-fsanitize=fuzzer/-fsanitize=fuzzer-no-link}"' \
			'"${INC[*]}"' -c "$1" -o "$o"' "$dir" {}
	for t in "${TARGETS[@]}"; do
		# shellcheck disable=SC2086
		$CC -std=c11 -g -O1 -D_GNU_SOURCE -fno-strict-aliasing -Wall -Wextra \
			-Wno-unused-parameter $flags "${INC[@]}" \
			tests/fuzz/$t.c "${objs[@]}" -o "$dir/$t"
	done
}

build() {
	build_one "-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined" "$OUT"
}

run() {
	local secs=$1 only=${2:-} t rc=0
	for t in "${TARGETS[@]}"; do
		[[ -z $only || $only == "$t" ]] || continue
		mkdir -p "$OUT/corpus/$t"
		echo "fuzz: $t for ${secs}s"
		# -timeout: one input taking over 30 s is a hang (x
		# SNIC_TIMEOUT_SCALE; 10 s failed a seed input of fuzz_cmd at
		# load 16 on 2 cores: 13 s building its fake world, 3 execs/s);
		# leaks are checked; the seed corpus is read, never written.
		(cd "$OUT" && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
			UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
			"./$t" -max_total_time="$secs" \
			-timeout=$(( 30 * ${SNIC_TIMEOUT_SCALE:-1} )) -rss_limit_mb=4096 \
			-print_final_stats=1 "corpus/$t" "../tests/fuzz/corpus/$(seeds_of "$t")" \
			> "$t.log" 2>&1) || { rc=1; echo "fuzz: $t FAILED (see $OUT/$t.log)"; tail -40 "$OUT/$t.log"; }
		grep -E "stat::number_of_executed_units|cov:" "$OUT/$t.log" | tail -2 || true
	done
	return $rc
}

cover() {
	local dir=$OUT/cov t files=()
	build_one "-fsanitize=fuzzer -fprofile-instr-generate -fcoverage-mapping" "$dir"
	rm -f "$dir"/*.profraw
	for t in "${TARGETS[@]}"; do
		mkdir -p "$OUT/corpus/$t"
		(cd "$dir" && LLVM_PROFILE_FILE="$t.profraw" "./$t" -runs=0 \
			"../corpus/$t" "../../tests/fuzz/corpus/$(seeds_of "$t")" > "$t.cov.log" 2>&1)
		files+=("$dir/$t.profraw")
	done
	llvm-profdata-14 merge -o "$dir/all.profdata" "${files[@]}"
	local objs=()
	for t in "${TARGETS[@]:1}"; do objs+=(-object "$dir/$t"); done
	# shellcheck disable=SC2086
	llvm-cov-14 report "$dir/${TARGETS[0]}" "${objs[@]}" \
		-instr-profile="$dir/all.profdata" $FW > "$dir/report.txt"
	echo "fuzz: firmware/ coverage (per file: $dir/report.txt)"
	head -1 "$dir/report.txt"
	tail -1 "$dir/report.txt"
}

seeds() {
	local t
	mkdir -p "$OUT"
	$CC -std=c11 -O1 -D_GNU_SOURCE -Wall -Wextra -Werror "${INC[@]}" \
		tests/fuzz/fuzz_seeds.c -o "$OUT/fuzz_seeds"
	for t in "${TARGETS[@]}"; do rm -f tests/fuzz/corpus/$(seeds_of "$t")/gen-*; done
	"$OUT/fuzz_seeds" tests/fuzz/corpus
	echo "fuzz: $(ls tests/fuzz/corpus/*/gen-* | wc -l) generated seeds"
}

case ${1:-} in
build) build ;;
run) build; run "${2:?seconds}" "${3:-}" ;;
cover) cover ;;
seeds) seeds ;;
*) echo "usage: $0 build | run SECONDS [target] | cover | seeds" >&2; exit 2 ;;
esac
