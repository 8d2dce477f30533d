package testutil

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// DemoImage returns the path of the embedded demo image (imgio/demo/demo.img.zst) expanded to a raw
// 256 MiB file, which imgio opens in place in a millisecond. Expanding the demo costs about 0.4 CPU-s;
// the tests of a `go test ./...` run opened it some 90 times, a quarter of the fast tier's CPU.
//
// The file is kept between runs in os.TempDir()/zrviz-test, named by the SHA-256 of the compressed
// demo, so a new demo gets a new file. Tests never write an image (reliability's
// TestImageNeverWritten holds the product to that), but root ignores the file's read-only mode, so
// each test binary checks the file against the CRC32C recorded beside it when it was made, once,
// and makes it again when they differ. Tests of the expansion itself (imgio's) and of the product's
// default (no image argument) still open the embedded demo.
func DemoImage(tb testing.TB) string {
	tb.Helper()
	demo.once.Do(func() { demo.path, demo.err = demoImage(filepath.Join(os.TempDir(), "zrviz-test")) })
	if demo.err != nil {
		tb.Fatalf("testutil: the demo image: %v", demo.err)
	}
	return demo.path
}

// demo is the checked file, shared by the tests of one binary: a package variable because the test
// binary is the unit that shares it, and each binary checks it once.
var demo struct {
	once sync.Once
	path string
	err  error
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// demoImage returns the checked demo file in dir, made when it is missing or differs.
func demoImage(dir string) (string, error) {
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("no source path for %s", "internal/testutil")
	}
	zst, err := os.ReadFile(filepath.Join(filepath.Dir(self), "..", "..", "imgio", "demo", "demo.img.zst"))
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(zst)
	name := filepath.Join(dir, "demo-"+hex.EncodeToString(sum[:8])+".img")
	if want, err := os.ReadFile(name + ".crc"); err == nil && len(want) == 4 {
		if got, err := fileCRC(name); err == nil && got == binary.LittleEndian.Uint32(want) {
			return name, nil
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	crc, err := expandSparse(name, zst)
	if err != nil {
		return "", err
	}
	return name, writeAtomic(name+".crc", binary.LittleEndian.AppendUint32(nil, crc))
}

// expandSparse writes the zstd stream zst to name as a sparse file (zero blocks become holes) and
// returns the CRC32C of its bytes. It writes a temporary file and renames it, so test binaries that
// race to make it each see a whole file.
func expandSparse(name string, zst []byte) (uint32, error) {
	dec, err := zstd.NewReader(bytes.NewReader(zst))
	if err != nil {
		return 0, err
	}
	defer dec.Close()
	tmp, err := os.CreateTemp(filepath.Dir(name), ".demo-*")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	var (
		crc  uint32
		off  int64
		blk  = make([]byte, 4096)
		zero = make([]byte, 4096)
	)
	for {
		n, err := io.ReadFull(dec, blk)
		if n > 0 {
			crc = crc32.Update(crc, castagnoli, blk[:n])
			if !bytes.Equal(blk[:n], zero[:n]) {
				if _, err := tmp.WriteAt(blk[:n], off); err != nil {
					return 0, err
				}
			}
			off += int64(n)
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	if err := tmp.Truncate(off); err != nil {
		return 0, err
	}
	if err := tmp.Chmod(0o444); err != nil {
		return 0, err
	}
	if err := tmp.Close(); err != nil {
		return 0, err
	}
	return crc, os.Rename(tmp.Name(), name)
}

func fileCRC(name string) (uint32, error) {
	f, err := os.Open(name)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	h := crc32.New(castagnoli)
	if _, err := io.CopyBuffer(h, f, make([]byte, 1<<20)); err != nil {
		return 0, err
	}
	return h.Sum32(), nil
}

func writeAtomic(name string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), ".crc-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}
