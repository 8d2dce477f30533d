//go:build js

package imgedit

import (
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/zrviz/zrviz/internal/f2fs"
)

// copyData copies in to out (size bytes, out already that long) under WebAssembly (GOOS=js), which
// has neither SEEK_DATA nor copy_file_range: block by block, skipping all-zero blocks so the copy
// stays as sparse as the image.
func copyData(tb testing.TB, src string, in, out *os.File, size int64) {
	buf, zero := make([]byte, 1<<20), make([]byte, f2fs.BlockSize)
	for off := int64(0); off < size; {
		n, err := in.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		if err != nil && err != io.EOF {
			tb.Fatalf("copy %s: %v", src, err)
		}
		if n == 0 {
			tb.Fatalf("copy %s: no progress at %d", src, off)
		}
		for b := 0; b < n; b += f2fs.BlockSize {
			p := buf[b:min(b+f2fs.BlockSize, n)]
			if bytes.Equal(p, zero[:len(p)]) {
				continue
			}
			if _, err := out.WriteAt(p, off+int64(b)); err != nil {
				tb.Fatal(err)
			}
		}
		off += int64(n)
	}
}
