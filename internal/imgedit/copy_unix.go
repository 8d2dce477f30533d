//go:build !js

package imgedit

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// copyData copies in's data extents to out (size bytes, out already that long) with
// copy_file_range, leaving in's holes holes.
func copyData(tb testing.TB, src string, in, out *os.File, size int64) {
	fd := int(in.Fd())
	for off := int64(0); off < size; {
		data, err := unix.Seek(fd, off, unix.SEEK_DATA)
		if err == unix.ENXIO { // no data after off: the rest is a hole
			break
		}
		if err != nil {
			tb.Fatal(err)
		}
		hole, err := unix.Seek(fd, data, unix.SEEK_HOLE)
		if err != nil {
			tb.Fatal(err)
		}
		for roff, woff := data, data; roff < hole; {
			n, err := unix.CopyFileRange(fd, &roff, int(out.Fd()), &woff, int(hole-roff), 0)
			if err != nil {
				tb.Fatal(err)
			}
			if n == 0 {
				tb.Fatalf("copy %s: no progress at %d", src, roff)
			}
		}
		off = hole
	}
}
