package reliability

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"syscall"

	"github.com/klauspost/compress/zstd"
	"github.com/zrviz/zrviz/imgio"
)

// The many-slots image of issue 13 item 1: one regular file whose every data slot holds a different
// address, no two adjacent, all in the main area with their SIT bits set, so a zero-range over it
// makes one f2fs_invalidate_blocks call per slot in both modes. It is crafted from a real image
// (mkfs.f2fs of a sparse file large enough for twice the slots, and sload.f2fs of one small file) by
// rewriting that file's inode, adding its direct nodes (i_nid[0], i_nid[1], and the children of the
// indirect i_nid[2]) and the NAT entries, node footers, SIT entries and checkpoint counters that make
// imgio accept it (the on-disk format of the kernel's include/linux/f2fs_fs.h). The SSA is left as it was: only the
// block inspector reads it, and it then reports the blocks' owners as stale.
//
// The addresses are laid out in rows so that the image compresses to about 100 KB: row r holds the
// 1,018 addresses span·260,608 + c + 256·i (span = r/128, c = 2·(r%128), i < 1,018) past the first
// data block, so consecutive slots of a node are 256 blocks apart, the 128 rows of a span fill every
// other block of its 509 segments, and the direct node of row r differs from the one of row r−1 (the
// block before it in the image) only in the low byte of each slot. [WriteZstd] stores such a node as
// "one literal, then three bytes from 4,096 back", 1,018 times, in a few bytes.

// SlotLayout is how a many-slots file's addresses are laid out.
type SlotLayout int

const (
	// LayoutRows: the rows described above. Each direct node's 1,018 slots fall in 509 segments, two
	// in each, so every dnode chunk of a zero-range touches 509 segments; the upload is about 380 KB.
	LayoutRows SlotLayout = iota
	// LayoutSequential: slot m at FirstAddr + 2m, so a dnode chunk touches 4 or 5 segments; the
	// upload is about 3.2 MB (klauspost's encoder; the reference zstd -19 makes 1.1 MB of it).
	LayoutSequential
)

func (l SlotLayout) String() string {
	if l == LayoutSequential {
		return "sequential"
	}
	return "rows"
}

// ManySlots describes a crafted many-slots image.
type ManySlots struct {
	Layout    SlotLayout
	Ino       uint32
	Slots     uint64 // data slots of the file, every one mapped
	Directs   int    // direct nodes (i_nid[0], i_nid[1] and the indirect node's children)
	FirstAddr uint32 // first block of the data rows (256-aligned)
	DataSegs  uint32 // main-area segments the data rows span
	NodeAddr  uint32 // the direct nodes in file order, then the indirect node
	FirstNid  uint32 // the new node ids are FirstNid … FirstNid+Directs (the indirect node last)
}

// Row layout (see above).
const (
	msRowsPerSpan = 128
	msSpan        = msPerDirect * 256 // blocks a span of rows covers
)

// Addr returns the address of file block index m: the inode's slots take the row after the direct
// nodes' rows.
func (ms ManySlots) Addr(inodeSlots int, m uint64) uint32 {
	if ms.Layout == LayoutSequential {
		return ms.FirstAddr + 2*uint32(m)
	}
	row, i := uint64(ms.Directs), m
	if m >= uint64(inodeSlots) {
		row, i = (m-uint64(inodeSlots))/msPerDirect, (m-uint64(inodeSlots))%msPerDirect
	}
	return ms.FirstAddr + uint32(row/msRowsPerSpan)*msSpan + 2*uint32(row%msRowsPerSpan) + 256*uint32(i)
}

// Size of the layout's structures (4 KiB blocks, imgio/raw.go).
const (
	msBlock       = 4096
	msPerDirect   = 1018
	msNATPerBlock = 455
	msSITPerBlock = 55
	msSITEntry    = 74
)

// BuildManySlots rewrites the regular file at path file of the raw image at name (made by
// mkfs.f2fs and sload.f2fs, with no inode checksums) into a file of AddrsPerInode + 2·1018 +
// children·1018 mapped slots; children ≤ 1018 direct nodes hang under i_nid[2]. Issue 13's file had
// 873 + 2,036 + 1,000·1,018 = 1,020,909. The volume must hold two main-area blocks per slot past its
// first 16 segments (a 9 GiB volume for the count).
func BuildManySlots(name, file string, children int, layout SlotLayout) (ManySlots, error) {
	var ms ManySlots
	if children < 1 || children > msPerDirect {
		return ms, fmt.Errorf("many-slots: %d children of i_nid[2], want 1 to %d", children, msPerDirect)
	}
	img, err := imgio.OpenFileContext(context.Background(), name, nil)
	if err != nil {
		return ms, err
	}
	v := img.Volume()
	f, err := img.Lookup(file)
	if err != nil {
		img.Close()
		return ms, err
	}
	in := f.Inode()
	img.Close()
	if in.Type != imgio.TypeFile || in.Inline&0x02 != 0 || in.Checksum != "" || v.BlockSize != msBlock {
		return ms, fmt.Errorf("many-slots: %s is not a plain regular file of a 4 KiB-block image without inode checksums", file)
	}
	directs := 2 + children
	ms = ManySlots{Layout: layout, Ino: in.Ino, Directs: directs,
		Slots: uint64(in.AddrsPerInode) + uint64(directs)*msPerDirect}
	const firstSeg = 16 // past mkfs's active logs (segments 0–8 at most)
	rows := uint32(directs + 1)
	ms.DataSegs = ((rows-1)/msRowsPerSpan*msSpan + 2*((rows-1)%msRowsPerSpan) + 256*(msPerDirect-1) + 512) / 512
	if layout == LayoutSequential {
		ms.DataSegs = uint32((2*ms.Slots + 511) / 512)
	}
	nodeSeg := firstSeg + ms.DataSegs
	nodeSegs := uint32((directs + 1 + 511) / 512)
	if nodeSeg+nodeSegs > v.MainSegmentCount {
		return ms, fmt.Errorf("many-slots: %d slots need %d segments, the main area has %d", ms.Slots, nodeSeg+nodeSegs, v.MainSegmentCount)
	}
	ms.FirstAddr = v.MainBlkaddr + firstSeg*512
	if ms.FirstAddr%256 != 0 {
		return ms, fmt.Errorf("many-slots: main area at %d: the rows need a 256-aligned start", v.MainBlkaddr)
	}
	nodeAddr := v.MainBlkaddr + nodeSeg*512
	ms.NodeAddr = nodeAddr
	ms.FirstNid = 2048

	fd, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return ms, err
	}
	defer fd.Close()
	w := &blockRW{f: fd}
	sb := w.read(0)[1024:]
	sitSegs := binary.LittleEndian.Uint32(sb[56:])
	cpPayload := binary.LittleEndian.Uint32(sb[1664:])
	cpAddr := v.CPBlkaddr
	if v.CheckpointPack == 2 {
		cpAddr += 512
	}
	cp := w.read(cpAddr)
	if w.err != nil {
		return ms, w.err
	}
	flags := binary.LittleEndian.Uint32(cp[132:])
	total := binary.LittleEndian.Uint32(cp[136:])
	sitSz, natSz := binary.LittleEndian.Uint32(cp[156:]), binary.LittleEndian.Uint32(cp[160:])
	var natBitmap, sitBitmap []byte
	switch {
	case flags&0x400 != 0: // LARGE_NAT_BITMAP
		natBitmap = cp[196 : 196+natSz]
		sitBitmap = cp[196+natSz : 196+natSz+sitSz]
	case cpPayload > 0:
		natBitmap = cp[192 : 192+natSz]
		sitBitmap = w.read(cpAddr + 1)[:sitSz]
	default:
		sitBitmap = cp[192 : 192+sitSz]
		natBitmap = cp[192+sitSz : 192+sitSz+natSz]
	}
	bit := func(m []byte, i uint32) bool { return m[i/8]&(0x80>>(i%8)) != 0 }

	addr := func(m uint64) uint32 { return ms.Addr(in.AddrsPerInode, m) }
	footer := func(blk []byte, nid, ofs, next uint32, cold bool) {
		fo := msBlock - 24
		binary.LittleEndian.PutUint32(blk[fo:], nid)
		binary.LittleEndian.PutUint32(blk[fo+4:], in.Ino)
		fl := ofs << 3
		if cold {
			fl |= 1
		}
		binary.LittleEndian.PutUint32(blk[fo+8:], fl)
		binary.LittleEndian.PutUint64(blk[fo+12:], v.CheckpointVersion)
		binary.LittleEndian.PutUint32(blk[fo+20:], next)
	}

	// The direct nodes: d = 0, 1 are i_nid[0] and i_nid[1] (node offsets 1, 2), then the children of
	// i_nid[2] (offsets 4+j); the indirect node itself (offset 3) is the last block.
	m := uint64(in.AddrsPerInode)
	indirect := make([]byte, msBlock)
	for d := 0; d < directs; d++ {
		blk := make([]byte, msBlock)
		for i := 0; i < msPerDirect; i++ {
			binary.LittleEndian.PutUint32(blk[4*i:], addr(m))
			m++
		}
		ofs := uint32(d + 1)
		if d >= 2 {
			ofs = uint32(4 + d - 2)
			binary.LittleEndian.PutUint32(indirect[4*(d-2):], ms.FirstNid+uint32(d))
		}
		footer(blk, ms.FirstNid+uint32(d), ofs, nodeAddr+uint32(d)+1, true)
		w.write(nodeAddr+uint32(d), blk)
	}
	indNid := ms.FirstNid + uint32(directs)
	footer(indirect, indNid, 3, 0, false)
	w.write(nodeAddr+uint32(directs), indirect)

	// The inode: size, blocks, slots, node ids; no largest extent.
	ib := w.read(in.Blkaddr)
	binary.LittleEndian.PutUint64(ib[0x10:], ms.Slots*msBlock)
	binary.LittleEndian.PutUint64(ib[0x18:], ms.Slots+uint64(directs)+2)
	clear(ib[0x15C : 0x15C+12])
	base := 360 + int(in.ExtraISize)
	for k := 0; k < in.AddrsPerInode; k++ {
		binary.LittleEndian.PutUint32(ib[base+4*k:], addr(uint64(k)))
	}
	nids := [5]uint32{ms.FirstNid, ms.FirstNid + 1, indNid, 0, 0}
	for k, n := range nids {
		binary.LittleEndian.PutUint32(ib[4052+4*k:], n)
	}
	w.write(in.Blkaddr, ib)

	// NAT: every new nid, written into both copies of its NAT block (the current copy's other
	// entries kept), so the version bitmap may pick either.
	nat := map[uint32][]byte{}
	natCopies := func(b uint32) (uint32, uint32) {
		a := v.NATBlkaddr + 2*512*(b/512) + b%512
		if bit(natBitmap, b) {
			return a + 512, a
		}
		return a, a + 512
	}
	for k := uint32(0); k <= uint32(directs); k++ {
		nid := ms.FirstNid + k
		b := nid / msNATPerBlock
		if nat[b] == nil {
			cur, _ := natCopies(b)
			nat[b] = w.read(cur)
		}
		e := nat[b][(nid%msNATPerBlock)*9:]
		if binary.LittleEndian.Uint32(e[5:]) != 0 {
			return ms, fmt.Errorf("many-slots: nid %d is in use", nid)
		}
		e[0] = 0
		binary.LittleEndian.PutUint32(e[1:], in.Ino)
		binary.LittleEndian.PutUint32(e[5:], nodeAddr+k)
	}
	for b, blk := range nat {
		cur, other := natCopies(b)
		w.write(cur, blk)
		w.write(other, blk)
	}

	// SIT: the data segments (warm data, every other block valid) and the node segments (warm
	// node), in both copies of their SIT blocks.
	sit := map[uint32][]byte{}
	sitCopies := func(b uint32) (uint32, uint32) {
		a := v.SITBlkaddr + b
		if bit(sitBitmap, b) {
			return a + sitSegs/2*512, a
		}
		return a, a + sitSegs/2*512
	}
	setSeg := func(segno uint32, typ uint16, valid []int) error {
		b := segno / msSITPerBlock
		if sit[b] == nil {
			cur, _ := sitCopies(b)
			sit[b] = w.read(cur)
		}
		e := sit[b][(segno%msSITPerBlock)*msSITEntry:][:msSITEntry]
		if binary.LittleEndian.Uint16(e)&0x3FF != 0 {
			return fmt.Errorf("many-slots: segment %d is in use", segno)
		}
		clear(e)
		binary.LittleEndian.PutUint16(e, typ<<10|uint16(len(valid)))
		for _, k := range valid {
			e[2+k/8] |= 0x80 >> (k % 8)
		}
		return nil
	}
	valid := make([][]int, ms.DataSegs)
	for m := uint64(0); m < ms.Slots; m++ {
		o := addr(m) - ms.FirstAddr
		valid[o/512] = append(valid[o/512], int(o%512))
	}
	for k, vs := range valid {
		slices.Sort(vs)
		if err := setSeg(firstSeg+uint32(k), 1, vs); err != nil {
			return ms, err
		}
	}
	for s, done := uint32(0), 0; s < nodeSegs; s++ {
		n := min(directs+1-done, 512)
		vs := make([]int, n)
		for i := range vs {
			vs[i] = i
		}
		done += n
		if err := setSeg(nodeSeg+s, 4, vs); err != nil {
			return ms, err
		}
	}
	for b, blk := range sit {
		cur, other := sitCopies(b)
		w.write(cur, blk)
		w.write(other, blk)
	}

	// The checkpoint's counters (the file had 2 data blocks before, left valid and unreferenced),
	// its CRC, the trailing copy; nat_bits (an optimisation that would now be stale) switched off.
	le := binary.LittleEndian
	le.PutUint64(cp[16:], le.Uint64(cp[16:])+ms.Slots+uint64(directs)+1)
	le.PutUint32(cp[144:], le.Uint32(cp[144:])+uint32(directs)+1)
	le.PutUint32(cp[32:], le.Uint32(cp[32:])-ms.DataSegs-nodeSegs)
	le.PutUint32(cp[132:], flags&^0x80)
	fixCPCRC(cp)
	w.write(cpAddr, cp)
	w.write(cpAddr+total-1, cp)
	if w.err != nil {
		return ms, w.err
	}
	return ms, fd.Sync()
}

// blockRW reads and writes 4 KiB blocks of a file with a sticky error.
type blockRW struct {
	f   *os.File
	err error
}

func (w *blockRW) read(addr uint32) []byte {
	b := make([]byte, msBlock)
	if w.err == nil {
		if _, err := w.f.ReadAt(b, int64(addr)*msBlock); err != nil {
			w.err = fmt.Errorf("many-slots: read block %d: %w", addr, err)
		}
	}
	return b
}

func (w *blockRW) write(addr uint32, b []byte) {
	if w.err == nil {
		if _, err := w.f.WriteAt(b, int64(addr)*msBlock); err != nil {
			w.err = fmt.Errorf("many-slots: write block %d: %w", addr, err)
		}
	}
}

// WriteZstd writes the file at name as a zstd stream to out without reading its holes: holes
// (found with SEEK_DATA/SEEK_HOLE) become frames of RLE blocks of zeros, 9 bytes per 128 KiB; a run
// of 4 KiB blocks each of which repeats the one before it but for a constant low byte in every
// 32-bit slot (the many-slots image's direct nodes) becomes a frame of its own, encoded by hand (see
// nodeChainFrame); the rest goes through klauspost's encoder at level. A 9 GiB image of a few MB of
// metadata takes a second instead of the minute it takes to read and encode 9 GiB of zeros.
func WriteZstd(name string, out io.Writer, level zstd.EncoderLevel) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(level), zstd.WithWindowSize(8<<20))
	if err != nil {
		return err
	}
	defer enc.Close()
	plain := func(b []byte) error {
		if len(b) == 0 {
			return nil
		}
		enc.Reset(out)
		if _, err := enc.Write(b); err != nil {
			return err
		}
		return enc.Close()
	}
	for off := int64(0); off < size; {
		data, err := seekData(f, off)
		if err != nil {
			return err
		}
		data = min(data, size)
		if err := zeroFrame(out, data-off); err != nil {
			return err
		}
		if data >= size {
			break
		}
		hole, err := seekHole(f, data)
		if err != nil {
			return err
		}
		hole = min(hole, size)
		run := make([]byte, hole-data)
		if _, err := f.ReadAt(run, data); err != nil {
			return err
		}
		// Split the run into chains of similar blocks (a head and at least 8 followers) and the
		// rest; data is block-aligned only when the run is, so look at aligned blocks only.
		lo := 0
		for b := 0; b+msBlock <= len(run); {
			n := 0
			for b+(n+2)*msBlock <= len(run) && similarBlock(run[b+(n+1)*msBlock:][:msBlock], run[b+n*msBlock:][:msBlock]) {
				n++
			}
			if (data+int64(b))%msBlock != 0 || n < 8 {
				b += msBlock
				continue
			}
			if err := plain(run[lo:b]); err != nil {
				return err
			}
			if err := nodeChainFrame(out, run[b:b+(n+1)*msBlock]); err != nil {
				return err
			}
			b += (n + 1) * msBlock
			lo = b
		}
		if err := plain(run[lo:]); err != nil {
			return err
		}
		off = hole
	}
	return nil
}

// similarBlock reports whether blk repeats prev but for its footer (the last 24 bytes) and the low
// byte of each 32-bit slot, which is the same in all of blk's slots. Blocks of zeros are left to the
// encoder, which does better with them.
func similarBlock(blk, prev []byte) bool {
	if !slices.ContainsFunc(prev[:msPerDirect*4], func(c byte) bool { return c != 0 }) {
		return false
	}
	for i := 0; i < msPerDirect*4; i += 4 {
		if blk[i] != blk[0] || blk[i+1] != prev[i+1] || blk[i+2] != prev[i+2] || blk[i+3] != prev[i+3] {
			return false
		}
	}
	return true
}

// nodeChainFrame writes a chain of similar 4 KiB blocks (similarBlock of each and the one before) as
// one zstd frame (RFC 8878): the first block raw; each next one as compressed blocks whose 1,018
// sequences are all "literal length 1, match length 3, repeat offset 1" (4,096 back), with RLE
// literals and RLE symbol modes, so no entropy-coded bit is needed; its footer raw. The first
// sequence of the frame sets the repeat offset with an explicit offset. klauspost's encoder cannot
// find these matches (it takes none shorter than 4 bytes); the reference zstd does, at -19, in a
// stream ten times the size.
func nodeChainFrame(w io.Writer, chain []byte) error {
	b := []byte{0x28, 0xB5, 0x2F, 0xFD, 0x00, 7 << 3} // magic, no size, a 128 KiB window
	blockHeader := func(typ, size int, last bool) {
		h := uint32(size)<<3 | uint32(typ)<<1
		if last {
			h |= 1
		}
		b = append(b, byte(h), byte(h>>8), byte(h>>16))
	}
	// seqBlock is a compressed block of n sequences (1 literal lit, 3 bytes at ofCode's offset).
	seqBlock := func(n int, lit byte, ofCode byte, ofBits uint32, last bool) {
		var p []byte
		if n < 32 { // literals: RLE, regenerated size n
			p = append(p, byte(1|n<<3))
		} else {
			p = append(p, byte(1|1<<2|(n&15)<<4), byte(n>>4))
		}
		p = append(p, lit)
		if n < 128 {
			p = append(p, byte(n))
		} else {
			p = append(p, byte(0x80+n>>8), byte(n))
		}
		p = append(p, 0x54, 1, ofCode, 0) // LL, OF, ML in RLE mode: literal length code 1, match length code 0 (3)
		// The bitstream: each sequence's ofCode extra bits (all equal), then the end mark.
		var acc uint64
		var nb uint
		for range n {
			acc |= uint64(ofBits) << nb
			nb += uint(ofCode)
			for nb >= 8 {
				p = append(p, byte(acc))
				acc >>= 8
				nb -= 8
			}
		}
		acc |= 1 << nb
		p = append(p, byte(acc))
		if nb >= 8 {
			p = append(p, byte(acc>>8))
		}
		blockHeader(2, len(p), last)
		b = append(b, p...)
	}
	blocks := len(chain) / msBlock
	blockHeader(0, msBlock, blocks == 1)
	b = append(b, chain[:msBlock]...)
	for k := 1; k < blocks; k++ {
		blk := chain[k*msBlock:][:msBlock]
		n := msPerDirect
		if k == 1 {
			// Offset_Value 4096+3 is offset code 12 with extra bits 3.
			seqBlock(1, blk[0], 12, 3, false)
			n--
		}
		seqBlock(n, blk[0], 0, 0, false)
		blockHeader(0, msBlock-msPerDirect*4, k == blocks-1)
		b = append(b, blk[msPerDirect*4:]...)
	}
	_, err := w.Write(b)
	return err
}

// zeroFrame writes n zero bytes as one zstd frame of RLE blocks (RFC 8878 §3.1.1): a frame header
// without content size or checksum, then blocks of at most 128 KiB, the last one flagged.
func zeroFrame(w io.Writer, n int64) error {
	if n <= 0 {
		return nil
	}
	// Magic, then the frame header descriptor 0 (no single segment, no checksum, no dictionary, no
	// size), then the window descriptor: 2^(10+7) = 128 KiB.
	b := []byte{0x28, 0xB5, 0x2F, 0xFD, 0x00, 7 << 3}
	for n > 0 {
		k := min(n, 128<<10)
		n -= k
		h := uint32(k)<<3 | 1<<1 // block type RLE
		if n == 0 {
			h |= 1 // last block
		}
		b = append(b, byte(h), byte(h>>8), byte(h>>16), 0)
		if len(b) > 64<<10 {
			if _, err := w.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	_, err := w.Write(b)
	return err
}

// seekData and seekHole are lseek(2) with SEEK_DATA and SEEK_HOLE: the next data from off (1<<62
// when there is none: ENXIO), and the next hole (the end of the file at worst).
func seekData(f *os.File, off int64) (int64, error) {
	n, err := f.Seek(off, 3)
	if errors.Is(err, syscall.ENXIO) {
		return 1 << 62, nil
	}
	return n, err
}

func seekHole(f *os.File, off int64) (int64, error) { return f.Seek(off, 4) }
