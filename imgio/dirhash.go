package imgio

import (
	"encoding/binary"
	"fmt"
)

// This file finds one name in one directory the way the kernel does (__f2fs_find_entry): hash the
// name, then look only in the name's bucket at each hash level. The block inspector uses it to
// confirm a path step by step without listing whole directories.

// dentryHash is f2fs_dentry_hash for a plain name (fs/f2fs/hash.c TEA_hash_name): "." and ".." hash
// to 0. Casefolded and encrypted directories hash something else; lookups there scan instead.
func dentryHash(name []byte) uint32 {
	if string(name) == "." || string(name) == ".." {
		return 0
	}
	buf := [4]uint32{0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476}
	var in [4]uint32
	p := name
	n := len(name)
	for {
		str2hashbuf(p, n, in[:])
		teaTransform(&buf, &in)
		if n <= 16 {
			break
		}
		p = p[16:]
		n -= 16
	}
	// F2FS_HASH_COL_BIT is bit 63 and the hash is 32 bits: the mask keeps every bit.
	return buf[0]
}

func teaTransform(buf *[4]uint32, in *[4]uint32) {
	const delta = 0x9E3779B9
	var sum uint32
	b0, b1 := buf[0], buf[1]
	a, b, c, d := in[0], in[1], in[2], in[3]
	for range 16 {
		sum += delta
		b0 += ((b1 << 4) + a) ^ (b1 + sum) ^ ((b1 >> 5) + b)
		b1 += ((b0 << 4) + c) ^ (b0 + sum) ^ ((b0 >> 5) + d)
	}
	buf[0] += b0
	buf[1] += b1
}

// str2hashbuf packs up to 16 bytes of msg (len bytes remain) into 4 words, padding with the length.
func str2hashbuf(msg []byte, n int, out []uint32) {
	pad := uint32(n) | uint32(n)<<8
	pad |= pad << 16
	val := pad
	num := len(out)
	if n > num*4 {
		n = num * 4
	}
	k := 0
	for i := 0; i < n; i++ {
		if i%4 == 0 {
			val = pad
		}
		val = uint32(msg[i]) + (val << 8)
		if i%4 == 3 {
			out[k] = val
			k++
			val = pad
			num--
		}
	}
	if num--; num >= 0 {
		out[k] = val
		k++
	}
	for num--; num >= 0; num-- {
		out[k] = pad
		k++
	}
}

// Directory hash geometry (fs/f2fs/dir.c).
const (
	maxDirHashDepth   = 63
	maxDirBuckets     = 1 << ((maxDirHashDepth / 2) - 1)
	flagCasefold      = 0x40000000 // F2FS_CASEFOLD_FL
	adviseLostPino    = 0x02       // FADVISE_LOST_PINO_BIT: i_pino may not name the parent
	adviseEncryptName = 0x08       // FADVISE_ENC_NAME_BIT: the name is ciphertext
	// lookupScanMax bounds the dentry blocks a scan of a directory reads when the hash cannot be used
	// (casefolded or encrypted names) or the name is not in its bucket.
	lookupScanMax = 256
)

func dirBuckets(level, dirLevel uint32) uint64 {
	if level+dirLevel < maxDirHashDepth/2 {
		return 1 << (level + dirLevel)
	}
	return maxDirBuckets
}

func bucketBlocks(level uint32) uint64 {
	if level < maxDirHashDepth/2 {
		return 2
	}
	return 4
}

// dirBlockIndex is dir_block_index: the first block of bucket idx at level.
func dirBlockIndex(level, dirLevel uint32, idx uint64) uint64 {
	var b uint64
	for i := range level {
		b += dirBuckets(i, dirLevel) * bucketBlocks(i)
	}
	return b + idx*bucketBlocks(level)
}

// dentryRef is one used entry of a dentry area, with where it lies.
type dentryRef struct {
	slot    int // dentry index in the area
	hash    uint32
	ino     uint32
	nameLen int
	ftype   uint8
	name    []byte // raw name bytes
	entOff  int    // byte offset of the f2fs_dir_entry in the area
	nameOff int    // byte offset of the name in the area
}

// dentryArea is the layout of a dentry area: a block (214 entries) or an inline dentry region.
type dentryArea struct {
	nr, bitmapOff, dentryOff, nameOff int
}

var dentryBlockArea = dentryArea{nrDentryInBlock, 0, dentryBitmapLen + dentryBlockRsvd,
	dentryBitmapLen + dentryBlockRsvd + nrDentryInBlock*dentrySize}

// inlineDentryArea is make_dentry_ptr_inline's layout for an inline area of size bytes.
func inlineDentryArea(size int) dentryArea {
	nr := size * 8 / ((dentrySize+dentrySlotLen)*8 + 1)
	bm := (nr + 7) / 8
	rsvd := size - (dentrySize+dentrySlotLen)*nr - bm
	return dentryArea{nr, 0, bm + rsvd, bm + rsvd + nr*dentrySize}
}

// scanDentries calls fn for each used entry of area (the whole dentry region) in slot order.
// Entries whose name would run past the area are reported as a problem through bad and skipped;
// so are names of length 0, which the kernel skips too. fn returns false to stop.
func scanDentries(area []byte, lay dentryArea, bad func(entOff int, msg string, val any), fn func(d dentryRef) bool) {
	if lay.nr <= 0 || lay.nameOff+lay.nr*dentrySlotLen > len(area) {
		return
	}
	bitmap := area[lay.bitmapOff : lay.bitmapOff+(lay.nr+7)/8]
	for i := 0; i < lay.nr; {
		if bitmap[i/8]&(1<<(i%8)) == 0 {
			i++
			continue
		}
		eo := lay.dentryOff + i*dentrySize
		e := area[eo : eo+dentrySize]
		d := dentryRef{slot: i, hash: binary.LittleEndian.Uint32(e), ino: binary.LittleEndian.Uint32(e[4:]),
			nameLen: int(binary.LittleEndian.Uint16(e[8:])), ftype: e[10], entOff: eo, nameOff: lay.nameOff + i*dentrySlotLen}
		if d.nameLen == 0 {
			if bad != nil {
				bad(eo, fmt.Sprintf("dentry %d: bit set but name_len 0", i), nil)
			}
			i++
			continue
		}
		slots := (d.nameLen + dentrySlotLen - 1) / dentrySlotLen
		if d.nameLen > maxNameLen || i+slots > lay.nr {
			if bad != nil {
				bad(eo, fmt.Sprintf("dentry %d: name_len %d runs past the dentry area", i, d.nameLen), d.nameLen)
			}
			i++
			continue
		}
		d.name = area[d.nameOff : d.nameOff+d.nameLen]
		if !fn(d) {
			return
		}
		i += slots
	}
}

// lookupResult is where a name was found in a directory.
type lookupResult struct {
	ino     uint32
	blkaddr uint32 // dentry block (or the inode, for inline dentries)
	off     int    // byte offset of the entry in that block
	hashed  bool   // found in its hash bucket (always true for inline dentries)
}

// lookupName finds name in directory dir without listing it: inline dentries are searched directly,
// others by hash level as the kernel does, falling back to a bounded scan. spend is charged one unit
// per block read. found is false when the name is not there (or not within the bounds).
func (img *Image) lookupName(dir *File, name []byte, spend func(int) error) (lookupResult, bool, error) {
	in := &dir.inode
	match := func(d dentryRef) bool { return string(d.name) == string(name) }
	if in.Inline&inlineDentry != 0 {
		size := img.maxInline(*in)
		o := inlineOff(*in)
		if size <= 0 || o+size > len(dir.blk) {
			return lookupResult{}, false, formatErr(img.blockOff(in.Blkaddr), "inode", "inline dentry area out of the block", size)
		}
		var res lookupResult
		found := false
		scanDentries(dir.blk[o:o+size], inlineDentryArea(size), nil, func(d dentryRef) bool {
			if match(d) {
				res, found = lookupResult{ino: d.ino, blkaddr: in.Blkaddr, off: o + d.entOff, hashed: true}, true
			}
			return !found
		})
		return res, found, nil
	}
	bs := uint64(img.bs)
	nblocks := (uint64(in.Size) + bs - 1) / bs
	var cache Dnode
	haveCache := false
	// searchBlock reads dentry block bidx of dir (skipping holes) and looks for name in it.
	searchBlock := func(bidx uint64, useHash bool, h uint32) (lookupResult, bool, error) {
		if bidx >= nblocks {
			return lookupResult{}, false, nil
		}
		if !haveCache || bidx < cache.Start || bidx >= cache.Start+uint64(len(cache.Slots)) {
			if err := spend(1); err != nil {
				return lookupResult{}, false, err
			}
			d, err := dir.Dnode(bidx)
			if err != nil {
				return lookupResult{}, false, err
			}
			cache, haveCache = d, true
		}
		a := cache.Slots[bidx-cache.Start]
		if a == NullAddr || a == NewAddr || !img.validMain(a) {
			return lookupResult{}, false, nil
		}
		if err := spend(1); err != nil {
			return lookupResult{}, false, err
		}
		blk, err := img.readBlock(a, "dentry block")
		if err != nil {
			return lookupResult{}, false, err
		}
		var res lookupResult
		found := false
		scanDentries(blk, dentryBlockArea, nil, func(d dentryRef) bool {
			if match(d) && (!useHash || d.hash == h) {
				res, found = lookupResult{ino: d.ino, blkaddr: a, off: d.entOff, hashed: useHash}, true
			}
			return !found
		})
		return res, found, nil
	}
	hashable := in.Advise&adviseEncryptName == 0 && in.Advise&adviseEncrypt == 0 && in.Flags&flagCasefold == 0
	if hashable {
		h := dentryHash(name)
		depth := min(binary.LittleEndian.Uint32(dir.blk[0x48:]), maxDirHashDepth)
		dirLevel := uint32(dir.blk[0x15B])
		for level := range depth {
			nb := dirBuckets(level, dirLevel)
			start := dirBlockIndex(level, dirLevel, uint64(h)%nb)
			if start >= nblocks {
				break
			}
			for b := start; b < start+bucketBlocks(level); b++ {
				res, ok, err := searchBlock(b, true, h)
				if err != nil || ok {
					return res, ok, err
				}
			}
		}
	}
	// Not where the hash says (or no usable hash): scan the first blocks of the directory.
	for b := uint64(0); b < min(nblocks, lookupScanMax); b++ {
		res, ok, err := searchBlock(b, false, 0)
		if err != nil || ok {
			if ok && !hashable {
				res.hashed = true // nothing better to expect
			}
			return res, ok, err
		}
	}
	return lookupResult{}, false, nil
}
