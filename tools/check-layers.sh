#!/usr/bin/env bash
# check-layers.sh: the firmware's layers depend one way (firmware/README.md).
#
#   arch < core < wire < objects < transport < nic
#
# A file in firmware/src/<layer>/ (or firmware/arch/) may include headers of
# its own layer and of layers below it, the public snic/*.h, and system
# headers; nothing above it, and no header without its layer's folder.
# Also: every `name` written in backticks in firmware/README.md that looks
# like a C function (name followed by "()") exists in the firmware's code.
# Exit 0 when all holds; 1 with one line per violation.
set -u
cd "$(dirname "$0")/.."

declare -A RANK=([arch]=0 [core]=1 [wire]=2 [objects]=3 [transport]=4 [nic]=5)
bad=0
nfiles=0

layer_of() { # path -> layer name
	case $1 in
	firmware/arch/*) echo arch ;;
	firmware/src/*/*) local p=${1#firmware/src/}; echo "${p%%/*}" ;;
	*) echo "" ;;
	esac
}

while IFS= read -r f; do
	nfiles=$((nfiles + 1))
	me=$(layer_of "$f")
	if [[ -z $me || -z ${RANK[$me]+x} ]]; then
		echo "check-layers: $f: not in a known layer folder"
		bad=1
		continue
	fi
	while IFS= read -r line; do
		inc=${line#*\"}
		inc=${inc%%\"*}
		case $inc in
		snic/*) continue ;;
		*/*) them=${inc%%/*} ;;
		*) them= ;;
		esac
		if [[ -z $them || -z ${RANK[$them]+x} ]]; then
			echo "check-layers: $f: \"$inc\" is not a layer's header (use <layer>/<name>.h)"
			bad=1
		elif ((RANK[$them] > RANK[$me])); then
			echo "check-layers: $f ($me) includes \"$inc\" of the higher layer $them"
			bad=1
		fi
	done < <(grep -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f")
done < <(find firmware/src firmware/arch -name '*.[ch]' | sort)

if ((nfiles == 0)); then
	echo "check-layers: no firmware sources found"
	exit 1
fi

# Function names the README cites must exist (defined or declared).
if [[ -f firmware/README.md ]]; then
	names=$(grep -oE '`[A-Za-z_][A-Za-z0-9_]*\(\)`' firmware/README.md |
		tr -d '`()' | sort -u)
	for n in $names; do
		if ! grep -rqE "\b$n\(" firmware/src firmware/arch; then
			echo "check-layers: firmware/README.md cites $n(), which is not in the code"
			bad=1
		fi
	done
fi

if ((bad == 0)); then
	echo "check-layers: $nfiles files, includes run one way; README names exist"
fi
exit $bad
