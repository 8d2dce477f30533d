package testutil

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/zrviz/zrviz/internal/f2fs"
)

// DemoImage returns the path of the embedded demo image (imgio/demo/demo.img.zst) expanded to a raw
// 256 MiB file, which imgio opens in place in a millisecond: [RawImage] of the demo. Expanding the
// demo costs about 0.4 CPU-s; the tests of a `go test ./...` run opened it some 90 times, a quarter
// of the fast tier's CPU. Tests of the expansion itself (imgio's) and of the product's default (no
// image argument) still open the embedded demo.
func DemoImage(tb testing.TB) string {
	tb.Helper()
	name, err := DemoImageFile()
	if err != nil {
		tb.Fatalf("testutil: the demo image: %v", err)
	}
	return name
}

// DemoImageFile is [DemoImage] for a helper that has no testing.TB (a sync.OnceValues).
func DemoImageFile() (string, error) {
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("no source path for internal/testutil")
	}
	return RawImageFile(filepath.Join(filepath.Dir(self), "..", "..", "imgio", "demo", "demo.img.zst"))
}

// RawImage returns the path of the compressed image src (.zst or .gz, a fixture) expanded to a raw,
// sparse, read-only file, shared by every test that asks for it: open it in place, never write it
// (copy it to edit it).
//
// The file is kept between runs in os.TempDir()/zrviz-test, named by the SHA-256 of src's bytes, so
// a changed fixture gets a new file. Tests never write an image (reliability's TestImageNeverWritten
// holds the product to that), but root ignores the file's read-only mode, so each test binary checks
// each file once against the stamp recorded beside it when it was made (inode, size and change
// time: any write, chmod or rename moves the change time, which no program can set back), and makes
// it again when they differ. Reading the file to check a checksum instead cost 0.1 CPU-s per 256 MiB
// per test binary.
func RawImage(tb testing.TB, src string) string {
	tb.Helper()
	name, err := RawImageFile(src)
	if err != nil {
		tb.Fatalf("testutil: %s: %v", src, err)
	}
	return name
}

// RawImageFile is [RawImage] for a helper that has no testing.TB.
func RawImageFile(src string) (string, error) {
	abs, err := filepath.Abs(src)
	if err != nil {
		return "", err
	}
	once, _ := raws.LoadOrStore(abs, sync.OnceValues(func() (string, error) {
		return rawImage(filepath.Join(os.TempDir(), "zrviz-test"), abs)
	}))
	return once.(func() (string, error))()
}

// raws holds, by source path, the check-or-make of each file this test binary has asked for (a
// func() (string, error) from sync.OnceValues): a package variable because the test binary is the
// unit that shares them, and each binary checks each once.
var raws sync.Map

// rawImage returns the checked raw file of src in dir, made when it is missing or differs.
func rawImage(dir, src string) (string, error) {
	packed, err := os.ReadFile(src)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(packed)
	base := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(src), ".zst"), ".gz")
	name := filepath.Join(dir, strings.TrimSuffix(base, ".img")+"-"+hex.EncodeToString(sum[:8])+".img")
	if want, err := os.ReadFile(name + ".stamp"); err == nil {
		if got, err := stampOf(name); err == nil && bytes.Equal(got, want) {
			return name, nil
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	var r io.Reader
	switch {
	case strings.HasSuffix(src, ".zst"):
		dec, err := zstd.NewReader(bytes.NewReader(packed))
		if err != nil {
			return "", err
		}
		defer dec.Close()
		r = dec
	case strings.HasSuffix(src, ".gz"):
		zr, err := gzip.NewReader(bytes.NewReader(packed))
		if err != nil {
			return "", err
		}
		r = zr
	default:
		return "", fmt.Errorf("want a .zst or .gz image")
	}
	if err := expandSparse(name, r); err != nil {
		return "", err
	}
	stamp, err := stampOf(name)
	if err != nil {
		return "", err
	}
	return name, writeAtomic(name+".stamp", stamp)
}

// expandSparse writes the stream dec to name as a sparse, read-only file (zero blocks become holes). It writes a temporary file and renames it, so test binaries that
// race to make it each see a whole file.
func expandSparse(name string, dec io.Reader) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), ".demo-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	var (
		off  int64
		blk  = make([]byte, f2fs.BlockSize)
		zero = make([]byte, f2fs.BlockSize)
	)
	for {
		n, err := io.ReadFull(dec, blk)
		if n > 0 {
			if !bytes.Equal(blk[:n], zero[:n]) {
				if _, err := tmp.WriteAt(blk[:n], off); err != nil {
					return err
				}
			}
			off += int64(n)
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return err
		}
	}
	if err := tmp.Truncate(off); err != nil {
		return err
	}
	if err := tmp.Chmod(0o444); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}

// stampOf is what says name is the file rawImage made: its inode, size and change time.
func stampOf(name string) ([]byte, error) {
	st, err := os.Stat(name)
	if err != nil {
		return nil, err
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return nil, fmt.Errorf("%s: no inode", name)
	}
	sec, nsec := changeTime(sys)
	return fmt.Appendf(nil, "ino %d size %d ctime %d.%09d\n", sys.Ino, st.Size(), sec, nsec), nil
}

func writeAtomic(name string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), ".stamp-*")
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
