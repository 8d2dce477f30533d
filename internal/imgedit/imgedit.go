// Package imgedit doctors a copy of a raw F2FS image for tests: a SIT bit, a slot, an inode field,
// a NAT entry, the checkpoint's counters, a node block moved elsewhere as the kernel's copy-on-write
// would. It finds the live copy of each structure through imgio and writes the bytes in place
// (checkpoint CRCs recomputed); the image must be reopened to see the change.
package imgedit

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"

	"github.com/zrviz/zrviz/imgio"
	"github.com/zrviz/zrviz/internal/f2fs"
	"github.com/zrviz/zrviz/internal/f2fscrc"
)

// File is a raw image open for reading and writing.
type File interface {
	io.ReaderAt
	io.WriterAt
}

// Editor edits f, whose structures img (opened on the same bytes) locates.
type Editor struct {
	Img *imgio.Image
	F   File
}

func (e Editor) read(off int64, n int) ([]byte, error) {
	b := make([]byte, n)
	_, err := e.F.ReadAt(b, off)
	return b, err
}

func (e Editor) write(off int64, b []byte) error {
	_, err := e.F.WriteAt(b, off)
	return err
}

// SetSITBit sets or clears bit (block offset) of segment segno's valid map and fixes its count.
func (e Editor) SetSITBit(segno uint32, bit int, on bool) error {
	off, _, err := e.Img.Offsets().SIT(segno)
	if err != nil {
		return err
	}
	ent, err := e.read(off, f2fs.SITEntrySize)
	if err != nil {
		return err
	}
	m := ent[2+bit/8 : 2+bit/8+1]
	if on {
		m[0] |= 0x80 >> (bit % 8)
	} else {
		m[0] &^= 0x80 >> (bit % 8)
	}
	pop := 0
	for _, x := range ent[2:66] {
		pop += bits.OnesCount8(x)
	}
	vb := binary.LittleEndian.Uint16(ent)
	binary.LittleEndian.PutUint16(ent, vb&^f2fs.SITVBlocksMask|uint16(pop))
	return e.write(off, ent)
}

// SetSIT writes segment segno's valid map (its count follows).
func (e Editor) SetSIT(segno uint32, m [64]byte) error {
	off, _, err := e.Img.Offsets().SIT(segno)
	if err != nil {
		return err
	}
	ent, err := e.read(off, f2fs.SITEntrySize)
	if err != nil {
		return err
	}
	copy(ent[2:66], m[:])
	pop := 0
	for _, x := range m {
		pop += bits.OnesCount8(x)
	}
	vb := binary.LittleEndian.Uint16(ent)
	binary.LittleEndian.PutUint16(ent, vb&^f2fs.SITVBlocksMask|uint16(pop))
	return e.write(off, ent)
}

// SetBlockValid sets or clears block addr's SIT bit.
func (e Editor) SetBlockValid(addr uint32, on bool) error {
	v := e.Img.Volume()
	if addr < v.MainBlkaddr {
		return fmt.Errorf("imgedit: block %d is not in the main area", addr)
	}
	return e.SetSITBit(f2fs.SegNo(addr, v.MainBlkaddr), int(f2fs.SegOff(addr, v.MainBlkaddr)), on)
}

// SlotOffset is the byte offset in the image of file ino's slot for block index.
func (e Editor) SlotOffset(ino uint32, index uint64) (int64, error) {
	f, err := e.Img.File(ino)
	if err != nil {
		return 0, err
	}
	d, err := f.Dnode(index)
	if err != nil {
		return 0, err
	}
	if d.Blkaddr == 0 {
		return 0, fmt.Errorf("imgedit: inode %d: no dnode holds index %d", ino, index)
	}
	k := int64(index - d.Start)
	base := int64(d.Blkaddr) * f2fs.BlockSize
	if d.Kind == "inode" {
		return base + f2fs.InodeAddrOffset + int64(f.Inode().ExtraISize) + 4*k, nil
	}
	return base + 4*k, nil
}

// SetSlot writes addr into file ino's slot for block index, in place.
func (e Editor) SetSlot(ino uint32, index uint64, addr uint32) error {
	off, err := e.SlotOffset(ino, index)
	if err != nil {
		return err
	}
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], addr)
	return e.write(off, b[:])
}

// Slot reads file ino's slot for block index.
func (e Editor) Slot(ino uint32, index uint64) (uint32, error) {
	off, err := e.SlotOffset(ino, index)
	if err != nil {
		return 0, err
	}
	b, err := e.read(off, 4)
	if err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b), nil
}

// Inode fields SetInode writes (offsets in struct f2fs_inode).
const (
	ISize   = 0x10 // i_size, 8 bytes
	IBlocks = 0x18 // i_blocks, 8 bytes
	IInline = 0x03 // i_inline, 1 byte
)

// SetInode writes an inode field (ISize, IBlocks: 8 bytes; IInline: 1 byte) in place.
func (e Editor) SetInode(ino uint32, field int, v uint64) error {
	f, err := e.Img.File(ino)
	if err != nil {
		return err
	}
	off := int64(f.Inode().Blkaddr)*f2fs.BlockSize + int64(field)
	if field == IInline {
		return e.write(off, []byte{byte(v)})
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	return e.write(off, b[:])
}

// SetNAT points nid's live NAT entry at addr.
func (e Editor) SetNAT(nid, addr uint32) error {
	off, _, err := e.Img.Offsets().NAT(nid)
	if err != nil {
		return err
	}
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], addr)
	return e.write(off+5, b[:])
}

// MoveNode copies nid's node block to block to (a free main-area block), points the NAT entry at
// it and moves the SIT bit, as f2fs_do_write_node_page does.
func (e Editor) MoveNode(nid, to uint32) error {
	ne, err := e.Img.NAT(nid)
	if err != nil {
		return err
	}
	blk, err := e.read(int64(ne.BlockAddr)*f2fs.BlockSize, f2fs.BlockSize)
	if err != nil {
		return err
	}
	if err := e.write(int64(to)*f2fs.BlockSize, blk); err != nil {
		return err
	}
	if err := e.SetNAT(nid, to); err != nil {
		return err
	}
	// The new block's summary entry (struct f2fs_summary: nid, version, ofs_in_node) in its
	// segment's SSA block, as the kernel writes it: the block inspector reads a block's kind there.
	v := e.Img.Volume()
	sum := make([]byte, 7)
	binary.LittleEndian.PutUint32(sum, nid)
	sum[4] = ne.Version
	if err := e.write(int64(v.SSABlkaddr+f2fs.SegNo(to, v.MainBlkaddr))*f2fs.BlockSize+int64(f2fs.SegOff(to, v.MainBlkaddr))*7, sum); err != nil {
		return err
	}
	if err := e.SetBlockValid(ne.BlockAddr, false); err != nil {
		return err
	}
	return e.SetBlockValid(to, true)
}

// Checkpoint fields SetCheckpoint writes (offsets in struct f2fs_checkpoint).
const (
	CPValidBlockCount = 0x10 // valid_block_count, 8 bytes
	CPValidNodeCount  = 0x90 // valid_node_count, 4 bytes
)

// SetCheckpoint writes a counter of the live checkpoint (head and trailing copy), CRCs recomputed.
func (e Editor) SetCheckpoint(field int, v uint64) error {
	head, tail := e.Img.Offsets().Checkpoint()
	for _, a := range []uint32{head, tail} {
		blk, err := e.read(int64(a)*f2fs.BlockSize, f2fs.BlockSize)
		if err != nil {
			return err
		}
		switch field {
		case CPValidBlockCount:
			binary.LittleEndian.PutUint64(blk[field:], v)
		default:
			binary.LittleEndian.PutUint32(blk[field:], uint32(v))
		}
		co := binary.LittleEndian.Uint32(blk[0xA4:])
		crc := f2fscrc.Checksum(f2fscrc.Magic, blk[:co])
		if co < 4092 {
			crc = f2fscrc.Checksum(crc, blk[co+4:])
		}
		binary.LittleEndian.PutUint32(blk[co:], crc)
		if err := e.write(int64(a)*f2fs.BlockSize, blk); err != nil {
			return err
		}
	}
	return nil
}

// CopyBlock writes block from's bytes over block to (as garbage collection's move_data_block
// copies a block).
func (e Editor) CopyBlock(from, to uint32) error {
	bs := int(e.Img.Volume().BlockSize)
	b, err := e.read(int64(from)*int64(bs), bs)
	if err != nil {
		return err
	}
	return e.write(int64(to)*int64(bs), b)
}
