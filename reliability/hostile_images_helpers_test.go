package reliability

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/zrviz/zrviz/imgio"
)

// Hostile listings and lookups of issue 13 items 2 and 3, crafted from valid images as patches
// (imgio's own tests build the same shapes: imgio/hostile_build_test.go). The images they start from
// have neither inode checksums nor extra attributes, so no CRC needs fixing.

// Dentry layout (struct f2fs_dentry_block, imgio/raw.go and imgio/dir.go): a dentry block holds 214 slots: a 27-byte bitmap, 3 reserved bytes,
// 214 11-byte entries (hash, ino, name_len, file_type), then 8-byte name slots.
const (
	dentryEntry    = 11
	dentryNameSlot = 8
	inlineArea     = 4 * (923 - 50 - 1) // MAX_INLINE_DATA with the default inline xattr area
	inodeIAddr     = 360
)

// Dirent is one entry to write into a crafted directory.
type Dirent struct {
	Name  string
	Ino   uint32
	FType uint8 // F2FS_FT_REG_FILE 1, F2FS_FT_DIR 2
}

// writeDentries lays out ents in an area of nr slots as f2fs_update_dentry does (the hash is left 0:
// zrviz lists by walking, never by hash).
func writeDentries(area []byte, nr, bitmapOff, dentryOff, nameOff int, ents []Dirent) error {
	clear(area)
	slot := 0
	for _, e := range ents {
		slots := max(1, (len(e.Name)+dentryNameSlot-1)/dentryNameSlot)
		if slot+slots > nr {
			return fmt.Errorf("%d entries do not fit in %d slots", len(ents), nr)
		}
		for k := slot; k < slot+slots; k++ {
			area[bitmapOff+k/8] |= 1 << (k % 8)
		}
		de := area[dentryOff+slot*dentryEntry:]
		binary.LittleEndian.PutUint32(de[4:], e.Ino)
		binary.LittleEndian.PutUint16(de[8:], uint16(len(e.Name)))
		de[10] = e.FType
		copy(area[nameOff+slot*dentryNameSlot:], e.Name)
		slot += slots
	}
	return nil
}

// dentryBlock is a struct f2fs_dentry_block holding ents.
func dentryBlock(ents []Dirent) ([]byte, error) {
	b := make([]byte, blockSize)
	err := writeDentries(b, dentryNR, 0, 27+3, 27+3+dentryNR*dentryEntry, ents)
	return b, err
}

// inlineDir turns the inode block blk (a copy, of an inode without extra attributes) into a directory
// whose inline dentry area holds ents, as make_dentry_ptr_inline lays it out.
func inlineDir(blk []byte, ents []Dirent) error {
	binary.LittleEndian.PutUint16(blk[0x00:], 0x41ED) // drwxr-xr-x
	blk[0x03] = blk[0x03]&0x01 | 0x04                 // INLINE_XATTR kept, INLINE_DENTRY
	binary.LittleEndian.PutUint64(blk[0x10:], inlineArea)
	nr := inlineArea * 8 / ((dentryEntry+dentryNameSlot)*8 + 1)
	bm := (nr + 7) / 8
	rsvd := inlineArea - (dentryEntry+dentryNameSlot)*nr - bm
	o := inodeIAddr + 4
	return writeDentries(blk[o:o+inlineArea], nr, 0, bm+rsvd, bm+rsvd+nr*dentryEntry, ents)
}

// blockCopy returns a copy of block addr of data.
func blockCopy(data []byte, addr uint32) []byte {
	return bytes.Clone(data[int64(addr)*blockSize:][:blockSize])
}

// openLookup opens data and looks up each path.
func openLookup(data []byte, paths ...string) ([]*imgio.File, error) {
	img, err := imgio.NewImage(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, err
	}
	var out []*imgio.File
	for _, p := range paths {
		f, err := img.Lookup(p)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// FanOutPatches makes the fan-out image from the demo: /seed/bench64.bin (64 MiB: the inode,
// direct nodes under i_nid[0], i_nid[1] and the indirect i_nid[2]) becomes a directory of 3,000
// blocks whose slots all point at one dentry block of 214 entries (f000 … f213, hard links to
// /cases/contiguous.bin). Listed naively it is 3,000 × 214 = 642,000 entries (13.7 M with the
// nested copies the issue saw).
func FanOutPatches(demo []byte) ([]Patch, error) {
	fs, err := openLookup(demo, "/seed/bench64.bin", "/cases/contiguous.bin")
	if err != nil {
		return nil, err
	}
	f, target := fs[0], fs[1].Inode().Ino
	in := f.Inode()
	ext, err := f.Extents()
	if err != nil {
		return nil, err
	}
	dentry := ext[0].Addr
	dns, err := f.Dnodes()
	if err != nil {
		return nil, err
	}
	const slots = 3000
	var ps []Patch
	set := 0
	var inode []byte
	for _, d := range dns {
		blk := blockCopy(demo, d.Blkaddr)
		base := 0
		if d.Kind == "inode" {
			base = inodeIAddr + int(in.ExtraISize)
			inode = blk
		}
		for i := 0; i < d.Len && set < slots; i++ {
			binary.LittleEndian.PutUint32(blk[base+4*i:], dentry)
			set++
		}
		if d.Kind != "inode" {
			ps = append(ps, Patch{Off: int64(d.Blkaddr) * blockSize, Data: blk})
		}
	}
	if set != slots {
		return nil, fmt.Errorf("fan-out: only %d slots in bench64.bin's dnodes", set)
	}
	binary.LittleEndian.PutUint16(inode[0x00:], 0x41ED)
	binary.LittleEndian.PutUint64(inode[0x10:], slots*blockSize)
	ps = append(ps, Patch{Off: int64(in.Blkaddr) * blockSize, Data: inode})
	var ents []Dirent
	for i := range dentryNR {
		ents = append(ents, Dirent{fmt.Sprintf("f%03d", i), target, 1})
	}
	db, err := dentryBlock(ents)
	if err != nil {
		return nil, err
	}
	return append(ps, Patch{Off: int64(dentry) * blockSize, Data: db}), nil
}

// ChainPatches turns /many of basic.img (150 files with inline data) into a chain of directories:
// /many holds one entry, a name of nameLen bytes, for file-001.txt's inode, which becomes a
// directory holding the same name for file-002's inode, and so on, 150 deep. With 255-byte names a
// path passes PATH_MAX (4,096 bytes) at the 16th level.
func ChainPatches(basic []byte, nameLen int) ([]Patch, error) {
	paths := []string{"/many"}
	for i := 1; i <= 150; i++ {
		paths = append(paths, fmt.Sprintf("/many/file-%03d.txt", i))
	}
	fs, err := openLookup(basic, paths...)
	if err != nil {
		return nil, err
	}
	name := strings.Repeat("d", nameLen)
	var ps []Patch
	for i, f := range fs {
		in := f.Inode()
		if in.ExtraISize != 0 {
			return nil, fmt.Errorf("chain: %s has extra attributes", paths[i])
		}
		var ents []Dirent
		if i+1 < len(fs) {
			ents = []Dirent{{name, fs[i+1].Inode().Ino, 2}}
		}
		blk := blockCopy(basic, in.Blkaddr)
		if err := inlineDir(blk, ents); err != nil {
			return nil, err
		}
		ps = append(ps, Patch{Off: int64(in.Blkaddr) * blockSize, Data: blk})
	}
	return ps, nil
}

// SelfLoopPatches turns /emptydir of basic.img into an inline directory holding "s", its own inode
// (a directory entry pointing back at the directory), and "t", /hello.txt: /emptydir/s/s/…/s/t
// resolves, one component at a time, to /hello.txt whatever the number of s.
func SelfLoopPatches(basic []byte) ([]Patch, error) {
	fs, err := openLookup(basic, "/emptydir", "/hello.txt")
	if err != nil {
		return nil, err
	}
	in := fs[0].Inode()
	blk := blockCopy(basic, in.Blkaddr)
	if err := inlineDir(blk, []Dirent{{"s", in.Ino, 2}, {"t", fs[1].Inode().Ino, 1}}); err != nil {
		return nil, err
	}
	return []Patch{{Off: int64(in.Blkaddr) * blockSize, Data: blk}}, nil
}
