#!/bin/sh
# gen-stage1.sh N SIZE: prints stage 1's ops: N files of SIZE bytes written a second apart,
# then a different part of most of them overwritten or zeroed (a second apart, so the
# segments' mtimes differ), one unlinked, and a checkpoint.
n=$1 size=$2 u=$((size / 32))
echo "# stage 1: $n files of $size bytes of different ages, then overwrites, zero ranges,"
echo "# an unlink and a checkpoint (made by gen-stage1.sh $n $size)"
echo "mkdir /d"
i=0
while [ $i -lt $n ]; do
	printf 'pwrite /d/f%02d 0 %d\nsleep 1\n' $i $size
	i=$((i + 1))
done
i=0
while [ $i -lt $n ]; do
	off=$(( (i * 7 % 13) * u )) len=$(( ((i * 11) % 19 + 1) * u ))
	case $((i % 6)) in
	0) printf 'zero /d/f%02d %d %d\n' $i $off $len ;;
	1) printf 'pwrite /d/f%02d %d %d\n' $i $off $len ;;
	2) printf 'zero /d/f%02d %d %d\n' $i $off $((len / 2)) ;;
	3) [ $i = 9 ] && printf 'unlink /d/f%02d\n' $i || printf 'zero /d/f%02d 0 %d\n' $i $len ;;
	4) ;; # left whole
	5) printf 'zero /d/f%02d %d %d\nsleep 1\n' $i $((off + 12345)) $len ;;
	esac
	i=$((i + 1))
done
echo "sleep 1"
echo "checkpoint"
