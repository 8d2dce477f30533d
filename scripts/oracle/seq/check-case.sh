#!/bin/bash
# seq/check-case.sh CASEDIR...: stock vs batched of a kernel-seq case
for c in "$@"; do
	e=$(diff <(cut -f1,2 $c/result) <(cut -f1,2 $c/result.batched) >/dev/null && echo same || echo DIFF)
	t=$(diff $c/trace <(awk '{for (i = 0; i < $3; i++) printf "%s %.0f\n", $1, $2 + i}' $c/trace.batched) >/dev/null && echo same || echo DIFF)
	w=$(diff <(python3 "$(dirname "$0")/wbsum.py" $c/ftrace | grep '^    ') <(python3 "$(dirname "$0")/wbsum.py" $c/ftrace.batched | grep '^    ') >/dev/null && echo same || echo DIFF)
	a=$(diff <(tail -n +2 $c/after.txt) <(tail -n +2 $c/after.batched.txt) >/dev/null && echo same || echo DIFF)
	echo "$(basename $c): errno $e, expanded calls $t, writeback $w, after.txt $a"
done
