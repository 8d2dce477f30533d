package imgio

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
	"github.com/zrviz/zrviz/internal/f2fs"
	"github.com/zrviz/zrviz/internal/units"
)

// DefaultMaxExpanded is the bound on an expanded image when [Options].MaxExpanded is 0: 64 GiB, far
// above any image a demo or a bug report needs, far below what fills a disk by accident.
const DefaultMaxExpanded int64 = 64 << 30

// Options tunes [OpenFileContext], [Load], [OpenDemo] and [ExpandContext]. A nil *Options means the defaults.
type Options struct {
	// TempDir is where expanded images go; "" means os.TempDir().
	TempDir string
	// MaxExpanded bounds the expanded size in bytes; 0 means DefaultMaxExpanded.
	MaxExpanded int64
	// MaxMemory bounds the bytes of non-zero blocks [LoadMemory] keeps; 0 means DefaultMaxMemory.
	MaxMemory int64
	// Progress, when not nil, is called now and then while an image is copied or expanded (about
	// every 8 MiB of output, and once at the end), from the calling goroutine.
	Progress func(Progress)
}

// Progress reports how far an expansion got.
type Progress struct {
	Format  Format // the detected input format
	Read    int64  // input bytes consumed so far
	Written int64  // output bytes produced so far, holes included (the output offset)
	Total   int64  // expected output size when the input declares it (Android sparse), else -1
}

// ErrTooLarge is matched (with errors.Is) by every [*LimitError].
var ErrTooLarge = errors.New("imgio: expanded image too large")

// LimitError reports that an expanded image would exceed [Options].MaxExpanded. Nothing past Limit was
// written.
type LimitError struct {
	Format   Format
	Limit    int64 // the bound in force
	Written  int64 // output bytes accepted before stopping (0 when refused from a header or superblock)
	Read     int64 // input bytes consumed before stopping
	Declared int64 // the size the input declares (Android sparse), or -1 when it declares none
	Volume   int64 // block_count × block size of the image's F2FS superblock, or -1 when not read yet
}

func (e *LimitError) Error() string {
	switch {
	case e.Volume > e.Limit:
		return fmt.Sprintf("imgio: %s image holds an F2FS volume of %d bytes (block_count × block size), over the limit of %d bytes",
			e.Format, e.Volume, e.Limit)
	case e.Declared >= 0 && e.Written == 0:
		return fmt.Sprintf("imgio: %s image declares %d bytes, over the limit of %d bytes", e.Format, e.Declared, e.Limit)
	}
	return fmt.Sprintf("imgio: %s image unpacks to more than the limit of %s (%d bytes): stopped after unpacking %s from %s of the upload",
		e.Format, units.Bytes(e.Limit), e.Limit, units.Bytes(e.Written), units.Bytes(e.Read))
}

// Is makes errors.Is(err, ErrTooLarge) true for a *LimitError.
func (e *LimitError) Is(target error) bool { return target == ErrTooLarge }

// VolumeError reports an input that holds more than the F2FS volume it carries: the superblock met in
// its first blocks says the volume is Volume bytes (block_count × block size), and the input declares
// more (an Android sparse header's total_blks × blk_sz) or goes on producing output past it. Nothing
// past Volume was written. The image is corrupt, not too large for the server: a VolumeError unwraps
// to a *FormatError on the superblock's block_count and does not match [ErrTooLarge]. (An image file
// longer than its volume opens in place with [OpenFileContext]; only expansion refuses the excess, because it
// cannot tell trailing data from a decompression bomb.)
type VolumeError struct {
	Format   Format
	Volume   int64 // block_count × block size
	Declared int64 // the size the input declares (Android sparse), or -1
	Written  int64 // output bytes accepted before stopping (0 when refused from the header)
	Read     int64 // input bytes consumed before stopping
	Off      int64 // byte offset of block_count in the superblock copy in use
}

func (e *VolumeError) Error() string {
	if e.Declared >= 0 {
		return fmt.Sprintf("imgio: %s image declares %d bytes, more than its F2FS volume of %d bytes (block_count × block size)",
			e.Format, e.Declared, e.Volume)
	}
	return fmt.Sprintf("imgio: %s image expands past its F2FS volume of %d bytes (block_count × block size): more output after byte %d (%d bytes of input read)",
		e.Format, e.Volume, e.Written, e.Read)
}

// Unwrap returns the *FormatError on the superblock's block_count that the excess makes the image.
func (e *VolumeError) Unwrap() error {
	return formatErr(e.Off, "superblock", "block_count × block size smaller than the image", e.Volume)
}

// truncater is implemented by *os.File. When dst has it, Expand sets the final size itself.
type truncater interface {
	Truncate(size int64) error
}

const (
	// expandBlock is the granularity of hole detection: an aligned all-zero 4 KiB piece of output is
	// never written. 4 KiB is the F2FS block and the page size of every file system a temp dir
	// lives on, so each skipped piece is a real hole.
	expandBlock = f2fs.BlockSize
	// expandBuf sizes the input buffer and the copy buffer: large enough that a mostly-zero image
	// costs few Read and WriteAt calls, small enough to stay in cache and to be cheap to allocate for
	// each (possibly tiny) input.
	expandBuf = 256 << 10
	// progressEvery is the output distance between two Progress calls.
	progressEvery = 8 << 20
	// zstdMaxWindow bounds the zstd history buffer: 128 MiB admits `zstd --long` (window log 27) and
	// --ultra -22, and refuses frames that ask for gigabytes. Under a MaxExpanded below it the bound is
	// max(MaxExpanded, zstdMinWindow): no frame needs a window larger than the output it may make,
	// and 8 MiB still admits what the zstd tool declares for small streams (-19 uses window log 23).
	zstdMaxWindow = 128 << 20
	zstdMinWindow = 8 << 20
	// xzMaxDict bounds the LZMA2 dictionary of the first xz block. github.com/ulikunitz/xz allocates
	// the whole dictionary up front, and the format allows 4 GiB; xz -9 uses 64 MiB.
	xzMaxDict = 256 << 20
)

// ExpandContext detects the format of r (by content, see [DetectFormat]) and writes the expanded F2FS
// image into dst from offset 0, returning the format and the expanded size.
//
// dst must read as zeros wherever Expand does not write (a new, empty file): all-zero 4 KiB blocks of
// output are skipped, so on a file system with sparse files they stay holes, and a 16 GiB image that
// is mostly empty costs little disk. When dst has a Truncate(int64) error method (as *os.File does),
// Expand truncates it to the expanded size, so trailing zero blocks become a hole too; otherwise the
// caller must extend dst to the returned size.
//
// gzip input may hold several members, xz several streams, zstd several frames and skippable frames;
// they are expanded one after the other, as the command-line tools do. Raw input is copied (with the
// same hole detection).
//
// The output must be an F2FS image, and is checked as it streams in, before anything is written:
//   - The first 8 KiB of output must hold a valid superblock (the magic at byte 0x400, or the backup
//     copy at 0x1400, as [NewImage] reads them); holes count as zeros there. Otherwise expansion
//     stops at once with an error wrapping [ErrNotF2FS] (no magic: a zero-filled start, or not a
//     filesystem at all) or the superblock's *FormatError or *UnsupportedError.
//   - The volume the superblock declares, block_count × block size, bounds the output: a volume over
//     opt.MaxExpanded is a [*LimitError]; an Android sparse image declaring more than the volume, or
//     a stream producing more, is a [*VolumeError] (a corrupt image). Nothing past the bound is
//     written.
//   - Once the output passes the first block of both checkpoint packs, one of them must carry a
//     valid checkpoint CRC (a superblock followed by zeros is refused there, a few MiB in, not at the
//     end of the volume); otherwise it is a *FormatError, as [NewImage] would report.
//
// The expanded size is bounded by opt.MaxExpanded too: Expand stops before writing past it and
// returns a [*LimitError] (errors.Is(err, [ErrTooLarge])). For an Android sparse image the declared
// size is checked against the bound before anything is written. A corrupt or truncated input gives an
// error carrying the input offset: a truncated stream wraps io.ErrUnexpectedEOF, a corrupt one is (or
// wraps) a [*FormatError] whose Off is the offset in the input, and the decoder's own error is
// wrapped as well. Write errors from dst are returned wrapped.
//
// ctx is checked on every read of the input and every write of output (at most 256 KiB apart) and
// between Android sparse chunks; once it ends, expansion stops with an error wrapping ctx.Err().
func ExpandContext(ctx context.Context, dst io.WriterAt, r io.Reader, opt *Options) (Format, int64, error) {
	return expand(ctx, dst, r, opt, true)
}

// expand is ExpandContext. With checkF2FS false the output is not checked (no superblock, volume or
// checkpoint check), so the package's tests can exercise the containers on arbitrary bytes.
func expand(ctx context.Context, dst io.WriterAt, r io.Reader, opt *Options, checkF2FS bool) (Format, int64, error) {
	var o Options
	if opt != nil {
		o = *opt
	}
	if o.MaxExpanded <= 0 {
		o.MaxExpanded = DefaultMaxExpanded
	}
	src := &countingReader{r: r, ctx: ctx}
	br := bufio.NewReaderSize(src, expandBuf)
	hdr, err := br.Peek(HeaderSize)
	if err != nil && !errors.Is(err, io.EOF) {
		if src.failure() != nil {
			err = src.failure()
		}
		return FormatRaw, 0, fmt.Errorf("imgio: reading input header: %w", err)
	}
	if len(hdr) == 0 && checkF2FS {
		return FormatRaw, 0, ErrEmpty
	}
	f := DetectFormat(hdr)
	s := newSink(ctx, dst, f, o, src)
	if !checkF2FS {
		s.checked, s.head = true, nil
	}
	if f == FormatXZ {
		// Nothing is consumed yet, so the buffer holds every byte read so far.
		buffered, _ := br.Peek(br.Buffered())
		src.trackTail = true
		src.track(buffered)
	}

	switch f {
	case FormatAndroidSparse:
		err = expandSparse(s, br)
	case FormatRaw:
		err = s.copyFrom(br)
	default:
		err = expandStream(s, f, br)
	}
	if err == nil {
		err = s.finish()
	}
	if err != nil {
		return f, s.off, err
	}
	if t, ok := dst.(truncater); ok {
		if err := t.Truncate(s.off); err != nil {
			return f, s.off, fmt.Errorf("imgio: setting expanded size %d: %w", s.off, err)
		}
	}
	s.report()
	return f, s.off, nil
}

// expandStream runs one of the stream decompressors into s and classifies what went wrong.
func expandStream(s *sink, f Format, br *bufio.Reader) (err error) {
	var dec io.Reader
	switch f {
	case FormatGzip:
		// gzip.Reader reads every member by default (multistream), as gunzip does.
		zr, err := gzip.NewReader(br)
		if err != nil {
			return s.streamErr(err)
		}
		defer zr.Close()
		dec = zr
	case FormatXZ:
		if hdr, _ := br.Peek(HeaderSize); len(hdr) > 0 {
			if dict, ok := xzFirstDict(hdr); ok && dict > xzMaxDict {
				return &UnsupportedError{Feature: fmt.Sprintf("xz dictionary of %d bytes (the limit is %d)", dict, xzMaxDict), Off: 12}
			}
		}
		// Every later block's header (another stream's, or a multi-block stream's) is checked as
		// the decoder reads it, before it allocates that block's dictionary.
		guard := &xzBlockGuard{r: br}
		defer func() {
			if guard.err != nil {
				err = guard.err
			}
		}()
		zr, err := xz.ReaderConfig{}.NewReader(guard)
		if err != nil {
			return s.streamErr(err)
		}
		dec = zr
	case FormatZstd:
		// Concurrency 2 runs the decoder's own goroutine (block decoding, and the RLE-block fill
		// that dominates on mostly-zero images) beside our zero check and writes; more buys
		// nothing on one stream and costs memory. The window bound keeps a hostile frame header from asking
		// for gigabytes; MaxMemory is set to the same value because in streaming mode the decoder
		// uses it only as a second window bound.
		window := uint64(min(zstdMaxWindow, max(s.max, zstdMinWindow)))
		zr, err := zstd.NewReader(br,
			zstd.WithDecoderConcurrency(min(2, runtime.GOMAXPROCS(0))),
			zstd.WithDecoderMaxWindow(window),
			zstd.WithDecoderMaxMemory(window),
			zstd.IgnoreChecksum(false))
		if err != nil {
			return fmt.Errorf("imgio: zstd decoder: %w", err)
		}
		defer zr.Close()
		dec = zr
	}
	if err := s.copyFrom(dec); err != nil {
		if f == FormatZstd && s.max < zstdMaxWindow &&
			(errors.Is(err, zstd.ErrWindowSizeExceeded) || errors.Is(err, zstd.ErrDecoderSizeExceeded)) {
			// The window was capped by MaxExpanded: a frame that needs more history than the
			// output may hold (a single-segment frame's window is its content size) is too large.
			s.err = &LimitError{Format: s.format, Limit: s.max, Written: s.off, Read: s.src.offset(), Declared: -1, Volume: s.volume}
			return s.err
		}
		return s.streamErr(err)
	}
	if f == FormatXZ && s.src.tail != [2]byte{'Y', 'Z'} {
		// github.com/ulikunitz/xz v0.5.17 returns io.EOF, not an error, when the input stops right
		// after a stream header or between blocks. A complete .xz file ends with the stream footer
		// magic "YZ", then only zero padding (xz file format 2.1.2.4, 2.2).
		return fmt.Errorf("imgio: xz stream truncated at input offset %d (no stream footer): %w", s.src.offset(), io.ErrUnexpectedEOF)
	}
	return nil
}

// xzFirstDict returns the LZMA2 dictionary size of the first block of an .xz stream, read from the
// block header that follows the 12-byte stream header (xz file format 3.1, 5.3.1). ok is false when
// the header is not there or not LZMA2-only; the decoder then reports whatever is wrong.
func xzFirstDict(b []byte) (dict uint64, ok bool) {
	if len(b) < 14 {
		return 0, false
	}
	return xzBlockDict(b[12:])
}

// xzBlockDict returns the LZMA2 dictionary size a block header h (from its size byte on) declares.
func xzBlockDict(h []byte) (dict uint64, ok bool) {
	if len(h) < 2 || h[0] == 0 { // 0: no blocks, an index follows
		return 0, false
	}
	size := (int(h[0]) + 1) * 4
	if len(h) < size {
		return 0, false
	}
	h = h[:size]
	flags := h[1]
	p := 2
	varint := func() (uint64, bool) {
		var v uint64
		for i := 0; i < 9 && p < len(h); i++ {
			c := h[p]
			p++
			v |= uint64(c&0x7f) << (7 * i)
			if c&0x80 == 0 {
				return v, true
			}
		}
		return 0, false
	}
	if flags&0x40 != 0 { // compressed size present
		if _, ok := varint(); !ok {
			return 0, false
		}
	}
	if flags&0x80 != 0 { // uncompressed size present
		if _, ok := varint(); !ok {
			return 0, false
		}
	}
	for range int(flags&3) + 1 {
		id, ok1 := varint()
		n, ok2 := varint()
		if !ok1 || !ok2 || n > uint64(len(h)-p) {
			return 0, false
		}
		if id == 0x21 && n == 1 { // LZMA2: one byte of properties, the dictionary size
			d := h[p] & 0x3f
			if d > 40 {
				return 0, false
			}
			if d == 40 {
				return 0xFFFFFFFF, true
			}
			return uint64(2|d&1) << (d/2 + 11), true
		}
		p += int(n)
	}
	return 0, false
}

// xzBlockGuard sits between the input and the xz decoder and checks the dictionary of every block
// header the decoder reads before the decoder allocates it (github.com/ulikunitz/xz takes the
// header's size whatever it is, up to 4 GiB, and checks only its CRC). The decoder reads a block
// header as one byte (its size, (n+1)*4) and then a Read of exactly the rest; LZMA2 data it reads a
// byte at a time. A header is recognised by that pattern and its CRC32 (xz file format 3.1.7), so
// compressed data that happens to follow the pattern is not mistaken for one.
type xzBlockGuard struct {
	r    io.Reader
	n    int64  // bytes read so far
	one  int16  // the byte the last one-byte Read returned, or 0
	hdr  []byte // a block header being collected
	want int    // its length; 0 when none is
	at   int64  // its input offset
	err  error  // a refused header
}

func (g *xzBlockGuard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.r.Read(p)
	switch {
	case g.want > 0:
		g.hdr = append(g.hdr, p[:n]...)
	case len(p) == 1 && n == 1:
		g.one = int16(p[0])
		g.n++
		return n, err
	case g.one > 0 && len(p) == (int(g.one)+1)*4-1:
		g.hdr, g.want, g.at = append(append(g.hdr[:0], byte(g.one)), p[:n]...), len(p)+1, g.n-1
	}
	g.one = 0
	g.n += int64(n)
	if g.want > 0 && len(g.hdr) >= g.want {
		h := g.hdr[:g.want]
		g.want = 0
		body, sum := h[:len(h)-4], h[len(h)-4:]
		if crc32.ChecksumIEEE(body) == binary.LittleEndian.Uint32(sum) {
			if dict, ok := xzBlockDict(h); ok && dict > xzMaxDict {
				g.err = &UnsupportedError{Feature: fmt.Sprintf("xz dictionary of %d bytes (the limit is %d)", dict, xzMaxDict), Off: g.at}
				return 0, g.err
			}
		}
	}
	return n, err
}

// copyFrom copies r into the sink. When r has WriteTo (the zstd decoder, bufio.Reader) it writes its
// own buffers to us without a copy; otherwise a buffer of expandBuf bytes is used.
func (s *sink) copyFrom(r io.Reader) error {
	if s.buf == nil {
		s.buf = make([]byte, expandBuf)
	}
	_, err := io.CopyBuffer(s, r, s.buf)
	if s.err != nil {
		// The sink's own error (limit, dst write) wins over whatever the decoder made of it.
		return s.err
	}
	if err != nil && s.src.failure() != nil {
		return fmt.Errorf("imgio: reading %s input at offset %d: %w", s.format, s.src.offset(), s.src.failure())
	}
	return err
}

// streamErr turns a decompressor error into one that says where in the input it happened.
func (s *sink) streamErr(err error) error {
	if s.err != nil {
		return s.err
	}
	var le *LimitError
	if errors.As(err, &le) {
		return err
	}
	if s.src.failure() != nil {
		return fmt.Errorf("imgio: reading %s input at offset %d: %w", s.format, s.src.offset(), s.src.failure())
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("imgio: %s stream truncated at input offset %d: %w", s.format, s.src.offset(), err)
	}
	if errors.Is(err, io.EOF) {
		// A decoder that wanted more and got a bare io.EOF (a header cut short).
		return fmt.Errorf("imgio: %s stream truncated at input offset %d: %w", s.format, s.src.offset(), io.ErrUnexpectedEOF)
	}
	fe := &FormatError{Off: s.src.offset(), Struct: string(s.format) + " stream", Msg: "corrupt data before this input offset"}
	return fmt.Errorf("%w: %w", fe, err)
}

// countingReader counts what the decoder pulled from the input and remembers how reading ended, so
// that errors can tell a truncated input from a corrupt one.
//
// The zstd decoder reads its input from a goroutine of its own while the sink reports progress, so the
// count is atomic and the failure behind a mutex.
type countingReader struct {
	r   io.Reader
	ctx context.Context
	n   atomic.Int64
	mu  sync.Mutex
	err error // the input failed (not io.EOF)

	trackTail bool    // keep last and tail (xz only: it costs a scan per Read)
	last      byte    // the last byte read
	tail      [2]byte // the two bytes before the trailing run of zero bytes read so far
}

func (c *countingReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		// Recorded as the input's failure, so whatever the decoder makes of it, the error wraps
		// ctx.Err().
		c.mu.Lock()
		if c.err == nil {
			c.err = err
		}
		c.mu.Unlock()
		return 0, err
	}
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	if n > 0 && c.trackTail {
		c.track(p[:n])
	}
	if err != nil && err != io.EOF {
		c.mu.Lock()
		if c.err == nil {
			c.err = err
		}
		c.mu.Unlock()
	}
	return n, err
}

// offset returns how many input bytes the decoder has pulled.
func (c *countingReader) offset() int64 { return c.n.Load() }

// failure returns the first error reading the input failed with, other than io.EOF.
func (c *countingReader) failure() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// track updates last and tail with the bytes p, read after everything seen so far.
func (c *countingReader) track(p []byte) {
	if len(p) == 0 {
		return
	}
	j := len(p) - 1
	for j >= 0 && p[j] == 0 {
		j--
	}
	switch {
	case j >= 1:
		c.tail = [2]byte{p[j-1], p[j]}
	case j == 0:
		c.tail = [2]byte{c.last, p[0]}
	}
	c.last = p[len(p)-1]
}

// headLen is how much output the sink holds back until it has checked the superblock: both copies
// (at 0x400 and 0x1400, 3 KiB each) lie in the first two 4 KiB blocks.
const headLen = 2 * f2fs.BlockSize

// sink writes expanded output to dst at a moving offset, leaving aligned all-zero blocks unwritten,
// enforcing the size bounds, checking that the output is an F2FS image as it arrives, and reporting
// progress. It is an io.Writer so decoders with WriteTo can push their buffers straight in.
type sink struct {
	ctx    context.Context
	dst    io.WriterAt
	format Format
	max    int64 // opt.MaxExpanded
	limit  int64 // the bound in force: max, then min(max, volume) once the superblock is read
	src    *countingReader
	prog   func(Progress)
	total  int64 // declared output size or -1

	off      int64  // output offset: bytes produced so far, holes included
	pend     []byte // bytes [pendOff, off) of a block not yet complete
	pendOff  int64
	nextProg int64
	err      error // sticky: the first limit, check, context or write error
	zero     []byte
	buf      []byte // copy buffer, made on first use

	head    []byte // the first headLen bytes of output, held until the superblock is checked
	checked bool   // the superblock was checked and head written
	volume  int64  // block_count × block size, -1 until the superblock is read
	sbOff   int64  // byte offset of the superblock copy in use
	cp      cpWatch
}

// cpWatch keeps the first block of each checkpoint pack as it streams past, so that a superblock
// followed by anything but a checkpoint is refused a few MiB in.
type cpWatch struct {
	on   bool
	at   [2]int64  // byte offsets of the two blocks
	blk  [2][]byte // their contents so far (zeros where the output had holes)
	done bool
}

func newSink(ctx context.Context, dst io.WriterAt, f Format, o Options, src *countingReader) *sink {
	return &sink{
		ctx:      ctx,
		dst:      dst,
		format:   f,
		max:      o.MaxExpanded,
		limit:    o.MaxExpanded,
		src:      src,
		prog:     o.Progress,
		total:    -1,
		pend:     make([]byte, 0, expandBlock),
		nextProg: progressEvery,
		zero:     make([]byte, expandBlock),
		head:     make([]byte, 0, headLen),
		volume:   -1,
	}
}

// Write appends p to the output. It never writes past the limit: if p would cross it, nothing of p is
// written and a *LimitError (or *VolumeError) is returned (and kept).
func (s *sink) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if err := s.ctx.Err(); err != nil {
		return 0, s.stopped(err)
	}
	if int64(len(p)) > s.limit-s.off {
		return 0, s.tooLarge(-1)
	}
	n := len(p)
	if !s.checked {
		k := min(len(p), headLen-len(s.head))
		s.head = append(s.head, p[:k]...)
		s.off += int64(k)
		p = p[k:]
		if len(s.head) < headLen {
			s.maybeReport()
			return n, nil
		}
		if err := s.checkHead(); err != nil {
			return 0, err
		}
		if int64(len(p)) > s.limit-s.off {
			return 0, s.tooLarge(-1)
		}
	}
	s.cp.copy(p, s.off)
	for len(p) > 0 {
		if in := int(s.off % expandBlock); in != 0 || len(p) < expandBlock {
			// Unaligned or short: gather the rest of this block.
			k := min(len(p), expandBlock-in)
			if len(s.pend) == 0 {
				s.pendOff = s.off
			}
			s.pend = append(s.pend, p[:k]...)
			s.off += int64(k)
			p = p[k:]
			if s.off%expandBlock == 0 {
				if err := s.flushPend(); err != nil {
					return 0, err
				}
			}
			continue
		}
		k := len(p) &^ (expandBlock - 1)
		if err := s.writeRuns(p[:k], s.off); err != nil {
			return 0, err
		}
		s.off += int64(k)
		p = p[k:]
	}
	if err := s.checkCP(); err != nil {
		return 0, err
	}
	s.maybeReport()
	return n, nil
}

// writeRuns writes whole, aligned blocks p at output offset at, one WriteAt per run of non-zero
// blocks.
func (s *sink) writeRuns(p []byte, at int64) error {
	run := -1 // start of the current non-zero run in p, or -1
	for i := 0; i < len(p); i += expandBlock {
		if bytes.Equal(p[i:min(i+expandBlock, len(p))], s.zero[:min(expandBlock, len(p)-i)]) {
			if run >= 0 {
				if err := s.writeAt(p[run:i], at+int64(run)); err != nil {
					return err
				}
				run = -1
			}
		} else if run < 0 {
			run = i
		}
	}
	if run >= 0 {
		if err := s.writeAt(p[run:], at+int64(run)); err != nil {
			return err
		}
	}
	return nil
}

// skip advances the output over n zero bytes without writing them.
func (s *sink) skip(n int64) error {
	if s.err != nil {
		return s.err
	}
	if err := s.ctx.Err(); err != nil {
		return s.stopped(err)
	}
	if n > s.limit-s.off {
		return s.tooLarge(-1)
	}
	if !s.checked {
		k := min(n, int64(headLen-len(s.head)))
		s.head = append(s.head, make([]byte, k)...)
		s.off += k
		n -= k
		if len(s.head) < headLen {
			s.maybeReport()
			return nil
		}
		if err := s.checkHead(); err != nil {
			return err
		}
		if n > s.limit-s.off {
			return s.tooLarge(-1)
		}
	}
	if err := s.flushPend(); err != nil {
		return err
	}
	s.off += n
	if err := s.checkCP(); err != nil {
		return err
	}
	s.maybeReport()
	return nil
}

// checkHead checks the superblock in the output held back so far (headLen bytes, or less at the end
// of a short input), sets the volume bound, and writes the held-back output.
func (s *sink) checkHead() error {
	s.checked = true
	head := s.head
	s.head = nil
	devSize := int64(math.MaxInt64) // the final size is not known yet: block_count is checked below
	if s.total >= 0 {
		devSize = s.total
	}
	sb, magic, err := findSuperblock(&Image{r: bytes.NewReader(head), size: int64(len(head))}, devSize)
	switch {
	case !magic:
		what := "the input" // raw input is copied as it is
		if s.format != FormatRaw {
			what = fmt.Sprintf("unpacked from %s, the image", s.format)
		}
		if len(head) < headLen {
			// The head is held back until headLen bytes or the end: the whole output is this short.
			s.err = fmt.Errorf("%w: %s holds only %d bytes, too few for an F2FS superblock (magic 0xF2F52010 at byte 0x%x or 0x%x)",
				ErrNotF2FS, what, len(head), sbOffset, sbOffset+f2fs.BlockSize)
			return s.err
		}
		s.err = fmt.Errorf("%w: %s holds no F2FS superblock in its first %s (magic 0xF2F52010 at byte 0x%x or 0x%x; %s of the input read)",
			ErrNotF2FS, what, units.Bytes(int64(len(head))), sbOffset, sbOffset+f2fs.BlockSize, units.Bytes(s.src.offset()))
		return s.err
	case err != nil:
		s.err = fmt.Errorf("imgio: expanded %s input: %w", s.format, err)
		return s.err
	}
	bs := int64(sb.blockSize)
	vol := int64(math.MaxInt64)
	if sb.raw.BlockCount <= uint64(math.MaxInt64/bs) {
		vol = int64(sb.raw.BlockCount) * bs
	}
	s.volume, s.sbOff = vol, sb.off
	switch {
	case vol > s.limit:
		s.err = &LimitError{Format: s.format, Limit: s.limit, Read: s.src.offset(), Declared: s.total, Volume: vol}
		return s.err
	case s.total > vol:
		s.err = &VolumeError{Format: s.format, Volume: vol, Declared: s.total, Read: s.src.offset(), Off: s.sbOff + 0x24}
		return s.err
	}
	s.limit = vol
	if cp := int64(sb.raw.CPBlkaddr) * bs; cp+(blocksPerSeg+1)*bs <= vol {
		s.cp = cpWatch{on: true, at: [2]int64{cp, cp + blocksPerSeg*bs}, blk: [2][]byte{make([]byte, bs), make([]byte, bs)}}
	}
	s.cp.copy(head, 0)
	full := len(head) &^ (expandBlock - 1)
	if err := s.writeRuns(head[:full], 0); err != nil {
		return err
	}
	if full < len(head) {
		s.pendOff = int64(full)
		s.pend = append(s.pend[:0], head[full:]...)
	}
	return s.checkCP()
}

// copy keeps the bytes of p (output at offset at) that fall in a watched block.
func (w *cpWatch) copy(p []byte, at int64) {
	if !w.on || w.done {
		return
	}
	for i, b := range w.blk {
		lo, hi := max(at, w.at[i]), min(at+int64(len(p)), w.at[i]+int64(len(b)))
		if lo < hi {
			copy(b[lo-w.at[i]:hi-w.at[i]], p[lo-at:hi-at])
		}
	}
}

// checkCP checks the watched checkpoint blocks once the output has passed both: one must be a valid
// checkpoint block (f2fs_get_valid_checkpoint needs at least one valid pack).
func (s *sink) checkCP() error {
	w := &s.cp
	if !w.on || w.done || s.off < w.at[1]+int64(len(w.blk[1])) {
		return nil
	}
	w.done = true
	_, err1 := decodeCPBlock(w.blk[0], w.at[0])
	_, err2 := decodeCPBlock(w.blk[1], w.at[1])
	w.blk = [2][]byte{}
	if err1 != nil && err2 != nil {
		s.err = fmt.Errorf("imgio: expanded %s input: no valid checkpoint: pack 1: %w", s.format, err1)
		return s.err
	}
	return nil
}

// flushPend writes the gathered partial block unless it is all zeros.
func (s *sink) flushPend() error {
	if len(s.pend) == 0 {
		return nil
	}
	p := s.pend
	s.pend = s.pend[:0]
	if bytes.Equal(p, s.zero[:len(p)]) {
		return nil
	}
	return s.writeAt(p, s.pendOff)
}

func (s *sink) writeAt(p []byte, off int64) error {
	if _, err := s.dst.WriteAt(p, off); err != nil {
		s.err = fmt.Errorf("imgio: writing expanded image at offset %d: %w", off, err)
		return s.err
	}
	return nil
}

// finish checks a head that never reached headLen bytes and writes what is left of the last block.
func (s *sink) finish() error {
	if s.err != nil {
		return s.err
	}
	if !s.checked {
		if err := s.checkHead(); err != nil {
			return err
		}
	}
	return s.flushPend()
}

// tooLarge stops the output at the bound in force: the volume (a *VolumeError) once the superblock
// is known, MaxExpanded (a *LimitError) before.
func (s *sink) tooLarge(declared int64) error {
	if s.volume >= 0 {
		s.err = &VolumeError{Format: s.format, Volume: s.volume, Declared: declared, Written: s.off, Read: s.src.offset(), Off: s.sbOff + 0x24}
		return s.err
	}
	s.err = &LimitError{Format: s.format, Limit: s.limit, Written: s.off, Read: s.src.offset(), Declared: declared, Volume: -1}
	return s.err
}

// stopped records that ctx ended the expansion.
func (s *sink) stopped(err error) error {
	s.err = fmt.Errorf("imgio: %s expansion stopped after %d bytes of output: %w", s.format, s.off, err)
	return s.err
}

func (s *sink) maybeReport() {
	if s.prog != nil && s.off >= s.nextProg {
		s.report()
		s.nextProg = s.off + progressEvery
	}
}

func (s *sink) report() {
	if s.prog != nil {
		s.prog(Progress{Format: s.format, Read: s.src.offset(), Written: s.off, Total: s.total})
	}
}
