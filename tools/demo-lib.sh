# shellcheck shell=bash
# What tools/demo.sh (emu board) and tools/demo-qemu.sh (qemu-virt board)
# share, on top of tests/integration/lib.sh: the step/ok/FAILED lines, the
# steps that are the same on every board (ibv_devinfo, ibv_rc_pingpong, our
# verbs test) and the verdict.  Source it after lib.sh; do not run it.
#
#   demo_step TEXT        a "==> TEXT" heading
#   demo_ok TEXT / demo_bad WHAT [TEXT]   a result line; demo_bad records WHAT
#   demo_indent           stdin, indented
#   demo_devinfo          ibv_devinfo sees the NICs
#   demo_pingpong TITLE   ibv_rc_pingpong, server on snic1, client on snic0
#   demo_verbs_test LINES snic_verbs_test --only write,read,send (the last
#                         LINES lines of its output; 0: all of it)
#   demo_end TEXT         exit 1 with the failed steps, or print TEXT

if [[ -t 1 ]]; then
	DEMO_B=$'\e[1m' DEMO_G=$'\e[32m' DEMO_R=$'\e[31m' DEMO_N=$'\e[0m'
else
	DEMO_B='' DEMO_G='' DEMO_R='' DEMO_N=''
fi
DEMO_FAILED=()

demo_step() { printf '\n%s==> %s%s\n' "$DEMO_B" "$*" "$DEMO_N"; }
demo_ok() { printf '    %sok%s  %s\n' "$DEMO_G" "$DEMO_N" "$*"; }
demo_bad() { printf '    %sFAILED%s  %s\n' "$DEMO_R" "$DEMO_N" "$*"; DEMO_FAILED+=("$1"); }
demo_indent() { sed 's/^/    /'; }
demo_rel() { echo "${1#"$SNIC_ROOT"/}"; }

demo_devinfo() {
	demo_step "2. ibv_devinfo (Debian's ibverbs-utils) sees the NICs"
	if timeout --foreground 20 ibv_devinfo >"$SNIC_CASE_DIR/devinfo.out" 2>&1; then
		demo_indent <"$SNIC_CASE_DIR/devinfo.out"
		demo_ok "ibv_devinfo"
	else
		demo_indent <"$SNIC_CASE_DIR/devinfo.out"
		demo_bad "ibv_devinfo"
	fi
}

demo_pingpong() { # TITLE
	demo_step "3. ibv_rc_pingpong: $1"
	if ( snic_pingpong 18515 ) >"$SNIC_CASE_DIR/pingpong.out" 2>&1; then
		demo_ok "ibv_rc_pingpong: both sides exited 0"
	else
		grep -E '^FAIL|^ibv_rc_pingpong' "$SNIC_CASE_DIR/pingpong.out" | demo_indent || true
		tail -n 8 "$SNIC_CASE_DIR/pingpong-client.out" 2>/dev/null | demo_indent || true
		demo_bad "ibv_rc_pingpong (see $(demo_rel "$SNIC_CASE_DIR")/pingpong*.out)"
	fi
}

demo_verbs_test() { # LINES
	local rc=0 out=$SNIC_CASE_DIR/verbs-test.out
	demo_step "4. snic_verbs_test --only write,read,send (our program: data checked byte for byte)"
	timeout --foreground 300 "$SNIC_BUILD/tests/snic_verbs_test" --dev0 snic0 --dev1 snic1 \
		--only write,read,send >"$out" 2>&1 </dev/null || rc=$?
	if (( $1 > 0 )); then
		tail -n "$1" "$out" | demo_indent
	else
		demo_indent <"$out"
	fi
	if (( rc == 0 )); then
		demo_ok "snic_verbs_test"
	else
		demo_bad "snic_verbs_test (status $rc)"
	fi
}

demo_end() { # TEXT
	if (( ${#DEMO_FAILED[@]} )); then
		printf '%sdemo FAILED%s: %s\n' "$DEMO_R" "$DEMO_N" "$(IFS=';'; echo "${DEMO_FAILED[*]}")"
		echo "logs: $(demo_rel "$SNIC_CASE_DIR")/"
		exit 1
	fi
	printf '%sdemo OK%s: %s\n' "$DEMO_G" "$DEMO_N" "$*"
}
