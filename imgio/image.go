package imgio

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/zrviz/zrviz/internal/f2fs"
	"github.com/zrviz/zrviz/internal/units"
)

// Image is an open F2FS image. All methods are safe for concurrent use: reads go through
// [io.ReaderAt] and the only mutable state, a cache of NAT blocks, sits behind a mutex.
type Image struct {
	r      io.ReaderAt
	size   int64
	name   string
	format Format
	closer io.Closer // the file Open or Load opened, or nil
	temp   string    // temporary file to remove on Close, or ""

	sb  *superblock
	cp  *checkpoint
	bs  uint32
	vol Volume

	maxNid uint32 // NAT_ENTRY_PER_BLOCK × NAT blocks per copy

	closeOnce sync.Once
	closeErr  error

	natMu    sync.Mutex
	natCache map[uint32][]byte // NAT block address → block

	sharedMu sync.Mutex
	shared   [sharedSlots]sharedEntry // metadata blocks read lately (sharedBlock)
}

// sharedSlots is how many metadata blocks an image keeps from its reads (sharedBlock): 128 blocks,
// at most 512 KiB of 4 KiB blocks.
const (
	sharedSlotBits = 7
	sharedSlots    = 1 << sharedSlotBits
)

// sharedEntry is one slot of the shared block cache.
type sharedEntry struct {
	addr uint32
	blk  []byte
}

// sharedBlock reads the metadata block at addr (a SIT, summary or node block), keeping the last
// blocks read direct-mapped by address. Like the NAT cache's, the blocks are handed out without
// copying and must never be modified. A gc's moves look up the owner of every block of a victim
// (Image.DataOwner), and consecutive blocks share their SIT, summary, inode, indirect and direct
// node blocks: without it each look-up read and allocated some eight blocks.
func (img *Image) sharedBlock(addr uint32, st string) ([]byte, error) {
	// Fibonacci hashing: the areas start at segment boundaries, so the SIT, summary and first node
	// blocks a look-up needs are often equal modulo any power of two.
	i := (addr * 2654435761) >> (32 - sharedSlotBits)
	img.sharedMu.Lock()
	e := img.shared[i]
	img.sharedMu.Unlock()
	if e.blk != nil && e.addr == addr {
		return e.blk, nil
	}
	blk, err := img.readBlock(addr, st)
	if err != nil {
		return nil, err
	}
	img.sharedMu.Lock()
	img.shared[i] = sharedEntry{addr, blk}
	img.sharedMu.Unlock()
	return blk, nil
}

// natCacheMax bounds the NAT block cache (4096 blocks = 16 MiB, enough for 1.8 million nids).
const natCacheMax = 4096

// OpenFileContext opens the named image. A raw image is opened read-only and read in place, never
// loaded into memory. Any other format (gzip, xz, zstd, Android sparse) is expanded into a temporary
// file in opt.TempDir, which [Image.Close] removes; see [LoadContext] for the checks and for ctx.
func OpenFileContext(ctx context.Context, name string, opt *Options) (*Image, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	hdr := make([]byte, HeaderSize)
	n, err := f.ReadAt(hdr, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		f.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if DetectFormat(hdr[:n]) == FormatRaw {
		img, err := NewImage(f, st.Size())
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		img.name, img.closer = name, f
		return img, nil
	}
	defer f.Close()
	return LoadContext(ctx, f, name, opt)
}

// Load is [LoadContext] without a context.
func Load(r io.Reader, name string, opt *Options) (*Image, error) {
	return LoadContext(context.Background(), r, name, opt)
}

// LoadContext reads an image from a stream (an upload, the embedded demo) of any supported format
// into a temporary file in opt.TempDir and opens it. [Image.Close] removes the file. The stream is
// checked as it expands ([ExpandContext]): a start that is not F2FS is refused after its first 8 KiB,
// and nothing is written past the volume its superblock declares. When expansion fails, or ctx ends
// (checked at least every 256 KiB of output), the partial file is removed before LoadContext returns.
func LoadContext(ctx context.Context, r io.Reader, name string, opt *Options) (*Image, error) {
	dir := ""
	if opt != nil {
		dir = opt.TempDir
	}
	tmp, err := os.CreateTemp(dir, "zrviz-*.img")
	if err != nil {
		return nil, fmt.Errorf("imgio: %w", err)
	}
	fail := func(err error) (*Image, error) {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, err
	}
	format, size, err := ExpandContext(ctx, tmp, r, opt)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", name, err))
	}
	img, err := NewImage(tmp, size)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", name, err))
	}
	img.name, img.format, img.closer, img.temp = name, format, tmp, tmp.Name()
	return img, nil
}

//go:embed demo/demo.simg.zst
var demoImage []byte

// demoStream returns the embedded demo: demo/demo.img.zst as an Android sparse image inside zstd
// (demo/mksparse makes it). The zstd decoder fills a run of zeros one byte at a time, and the raw
// image is two-thirds zeros; the sparse image holds them as chunk headers, so the demo opens in a
// third of the time (BenchmarkOpenDemo). Its format is therefore android-sparse.
func demoStream() (io.Reader, func(), error) {
	zr, err := zstd.NewReader(bytes.NewReader(demoImage), zstd.WithDecoderConcurrency(min(2, runtime.GOMAXPROCS(0))))
	if err != nil {
		return nil, nil, fmt.Errorf("imgio: the embedded demo: %w", err)
	}
	return zr, zr.Close, nil
}

// OpenDemo opens the embedded demo image, a 256 MiB volume written by Linux 6.12 (see
// imgio/demo/demo.files.txt). It is expanded into a temporary file like any [Load].
func OpenDemo(opt *Options) (*Image, error) {
	r, done, err := demoStream()
	if err != nil {
		return nil, err
	}
	defer done()
	return Load(r, "demo.img", opt)
}

// OpenDemoMemory opens the embedded demo image held in memory ([LoadMemory]): for the static site,
// which has no file system.
func OpenDemoMemory(opt *Options) (*Image, error) {
	r, done, err := demoStream()
	if err != nil {
		return nil, err
	}
	defer done()
	return LoadMemory(context.Background(), r, "demo.img", opt)
}

// NewImage reads a raw F2FS image of the given size from r. The superblock and the live checkpoint are
// decoded now; everything else is read when asked for.
func NewImage(r io.ReaderAt, size int64) (*Image, error) {
	if size < 0 {
		return nil, errors.New("imgio: negative image size")
	}
	if size == 0 {
		return nil, ErrEmpty
	}
	img := &Image{r: r, size: size, format: FormatRaw, natCache: map[uint32][]byte{}}
	sb, err := readSuperblock(img)
	if err != nil {
		return nil, err
	}
	img.sb, img.bs = sb, sb.blockSize
	img.maxNid = uint32(min(uint64(uint32(f2fs.NATEntryPerBlock))*uint64(sb.raw.SegmentCountNAT/2)<<f2fs.LogBlocksPerSeg, 1<<32-1))
	cp, err := readCheckpoint(img)
	if err != nil {
		return nil, err
	}
	img.cp = cp
	img.vol = img.makeVolume()
	if r := sb.raw.RootIno; r >= img.maxNid {
		return nil, formatErr(sb.off+0x60, "superblock", "root_ino beyond NAT", r)
	}
	return img, nil
}

// Close closes and removes what Open or Load created. It is safe to call more than once.
func (img *Image) Close() error {
	img.closeOnce.Do(func() {
		if img.closer != nil {
			img.closeErr = img.closer.Close()
		}
		if img.temp != "" {
			if err := os.Remove(img.temp); err != nil && img.closeErr == nil {
				img.closeErr = err
			}
		}
	})
	return img.closeErr
}

// Name is the name the image was opened with ("" for [NewImage]).
func (img *Image) Name() string { return img.name }

// Format is the container format the image arrived in.
func (img *Image) Format() Format { return img.format }

// Size is the size of the raw (expanded) image in bytes.
func (img *Image) Size() int64 { return img.size }

// Volume returns the superblock and checkpoint facts decoded at open.
func (img *Image) Volume() Volume {
	v := img.vol
	v.Features = append([]string(nil), v.Features...)
	v.CurrentSegments = append([]CurrentSegment(nil), v.CurrentSegments...)
	return v
}

// readAt fills buf from byte off, reporting a short image as a FormatError on structure st.
func (img *Image) readAt(buf []byte, off int64, st string) error {
	// The numbers in words: a bare "(268435456)" after the message said nothing of what it was.
	if off < 0 || off > img.size || int64(len(buf)) > img.size-off {
		return formatErr(off, st, fmt.Sprintf("needs bytes up to %s, past the end of the image at byte %s",
			units.Group(off+int64(len(buf))), units.Group(img.size)), nil)
	}
	n, err := img.r.ReadAt(buf, off)
	if n == len(buf) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		return formatErr(off, st, fmt.Sprintf("short read: %d of %d bytes", n, len(buf)), nil)
	}
	return fmt.Errorf("imgio: reading %s at 0x%x: %w", st, off, err)
}

func (img *Image) blockOff(addr uint32) int64 { return int64(addr) * int64(img.bs) }

// readBlock reads the block at addr.
func (img *Image) readBlock(addr uint32, st string) ([]byte, error) {
	buf := make([]byte, img.bs)
	if err := img.readAt(buf, img.blockOff(addr), st); err != nil {
		return nil, err
	}
	return buf, nil
}

// validMain reports whether addr is a block of the main area.
func (img *Image) validMain(addr uint32) bool {
	return addr >= img.sb.raw.MainBlkaddr && addr < img.sb.maxBlk
}
