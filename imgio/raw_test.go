package imgio

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/zrviz/zrviz/internal/testutil"
)

// TestRawSizes pins the raw structs to the sizes of their C counterparts in f2fs_fs.h.
func TestRawSizes(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want int
	}{
		{"f2fs_super_block", rawSuperblock{}, 3072},
		{"f2fs_device", rawDevice{}, 68},
		{"f2fs_checkpoint (fixed part)", rawCheckpoint{}, cpHeadSize},
		{"f2fs_inode (up to i_addr)", rawInode{}, inodeAddrOff},
		{"extra attributes", rawExtraAttr{}, extraAttrMax},
		{"node_footer", rawFooter{}, footerSize},
		{"f2fs_nat_entry", rawNATEntry{}, natEntrySize},
		{"f2fs_sit_entry", rawSITEntry{}, sitEntrySize},
		{"f2fs_dir_entry", rawDirEntry{}, dentrySize},
		{"f2fs_extent", rawExtent{}, 12},
		{"f2fs_summary", rawSummary{}, sumEntrySize},
		{"f2fs_orphan_block (after ino[1020])", rawOrphanTail{}, 4096 - 4*1020},
	}
	for _, tc := range tests {
		if got := binary.Size(tc.v); got != tc.want {
			t.Errorf("binary.Size(%s) = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestCRC(t *testing.T) {
	// f2fs_crc32 has no pre/post inversion: the empty input returns the seed.
	if got := f2fsCRC(f2fsMagic, nil); got != f2fsMagic {
		t.Errorf("f2fsCRC(seed, nil) = %#x, want the seed", got)
	}
	// Splitting the input must not change the result (the checkpoint CRC is computed in two parts).
	b := []byte("0123456789abcdef")
	if f2fsCRC(f2fsCRC(1, b[:5]), b[5:]) != f2fsCRC(1, b) {
		t.Error("f2fsCRC is not incremental")
	}
}

func TestOpenAndClose(t *testing.T) {
	dir := t.TempDir()
	img, err := OpenFileContext(context.Background(), "testdata/basic.img.gz", &Options{TempDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	tmp, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(tmp) != 1 || img.Format() != FormatGzip || img.Name() != "testdata/basic.img.gz" || img.Size() != 128<<20 {
		t.Errorf("temp files %v, format %q, name %q, size %d", tmp, img.Format(), img.Name(), img.Size())
	}
	if err := img.Close(); err != nil {
		t.Fatal(err)
	}
	if err := img.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Errorf("Close left %v", left)
	}

	// A raw image is read in place: no temporary file. The shared raw demo is one.
	raw := testutil.DemoImage(t)
	img, err = OpenFileContext(context.Background(), raw, &Options{TempDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer img.Close()
	if img.Format() != FormatRaw {
		t.Errorf("format %q", img.Format())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Errorf("raw open made %v", left)
	}

	if _, err := OpenFileContext(context.Background(), filepath.Join(dir, "missing.img"), nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Open missing: %v", err)
	}
	notF2FS := filepath.Join(dir, "zeros.img")
	os.WriteFile(notF2FS, make([]byte, 1<<20), 0o644)
	if _, err := OpenFileContext(context.Background(), notF2FS, nil); !errors.Is(err, ErrNotF2FS) {
		t.Errorf("Open zeros: %v", err)
	}
}

// TestConcurrent reads one image from many goroutines (run with -race to check the NAT cache).
func TestConcurrent(t *testing.T) {
	img := openDemo(t)
	want, err := img.Files()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			got, err := img.Files()
			if err != nil || !slices.Equal(got, want) {
				errs <- errors.New("Files differs under concurrency")
				return
			}
			for _, e := range got {
				f, err := img.File(e.Ino)
				if err != nil {
					errs <- err
					return
				}
				if _, err := f.Extents(); err != nil {
					errs <- err
					return
				}
			}
			if _, err := img.Segments(); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestDecodeRawInode checks the offset decoder against binary.Decode on every inode of the demo.
func TestDecodeRawInode(t *testing.T) {
	img := openDemo(t)
	ents, err := img.Files()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		f, err := img.File(e.Ino)
		if err != nil {
			t.Fatal(err)
		}
		var want rawInode
		if _, err := binary.Decode(f.blk, binary.LittleEndian, &want); err != nil {
			t.Fatal(err)
		}
		if got := decodeRawInode(f.blk); got != want {
			t.Errorf("%s: decodeRawInode differs from binary.Decode:\n%+v\n%+v", e.Path, got, want)
		}
	}
}
