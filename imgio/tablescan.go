package imgio

import (
	"encoding/binary"
	"fmt"
	"io/fs"
	"slices"

	"github.com/zrviz/zrviz/internal/f2fs"
)

// This file gives the metadata tables whole, for tools that compare two images (imgdiff) or edit a
// copy of one (tests that doctor an image): the NAT a block at a time with its journal laid over,
// raw blocks, and where the live copy of an entry lies.

// NATEntriesPerBlock is NAT_ENTRY_PER_BLOCK for 4096-byte blocks: NAT block b holds nids
// b·455 … b·455+454.
const NATEntriesPerBlock = f2fs.NATEntryPerBlock

// NATEntry is one node's entry in the node address table (struct f2fs_nat_entry), as the kernel
// reads it: from the checkpoint's NAT journal when the nid is there, else from the live copy of its
// NAT block.
type NATEntry struct {
	Nid       uint32 `json:"nid"`
	Ino       uint32 `json:"ino"`
	BlockAddr uint32 `json:"blockAddr"` // block_addr: NULL_ADDR when the nid is free, NEW_ADDR when allocated but not written
	Version   uint8  `json:"version"`
	Journal   bool   `json:"journal"` // read from the NAT journal
}

// NATBlock is one NAT block of the live copy: its address, its bytes and the journal entries of its
// nids.
type NATBlock struct {
	Index   uint32     // nids Index·455 onwards
	Addr    uint32     // the live copy's block address
	Raw     []byte     // the block as on disk (the journal not applied)
	Journal []NATEntry // the NAT journal's entries for nids of this block, which override Raw
}

// Entry returns the entry of the block's k-th nid (Index·455 + k), the journal's when it has one.
func (nb NATBlock) Entry(k int) NATEntry {
	nid := nb.Index*NATEntriesPerBlock + uint32(k)
	for _, j := range nb.Journal {
		if j.Nid == nid {
			return j
		}
	}
	e := nb.Raw[k*natEntrySize:]
	le := binary.LittleEndian
	return NATEntry{Nid: nid, Version: e[0], Ino: le.Uint32(e[1:]), BlockAddr: le.Uint32(e[5:])}
}

// NATBlockCount is the number of NAT blocks in one copy of the table.
func (img *Image) NATBlockCount() uint32 { return img.maxNid / f2fs.NATEntryPerBlock }

// MaxNid is one past the largest node id the NAT can hold.
func (img *Image) MaxNid() uint32 { return img.maxNid }

// natAddr is the live copy's address of NAT block b, current_nat_addr: the checkpoint's NAT version
// bitmap picks the copy, second reporting the second one (a segment after the first).
func (img *Image) natAddr(b uint32) (addr uint32, second bool) {
	addr = f2fs.NATBlockAddr(img.sb.raw.NATBlkaddr, b)
	if testBitMSB(img.cp.natBitmap, b) {
		return addr + blocksPerSeg, true
	}
	return addr, false
}

// sitAddr is the live copy's address of SIT block b, current_sit_addr: the checkpoint's SIT version
// bitmap picks the copy, second reporting the second one (half the SIT area after the first).
func (img *Image) sitAddr(b uint32) (addr uint32, second bool) {
	addr = img.sb.raw.SITBlkaddr + b
	if testBitMSB(img.cp.sitBitmap, b) {
		return addr + img.sitHalf(), true
	}
	return addr, false
}

// sitHalf is the blocks of one SIT copy: half of segment_count_sit, in blocks.
func (img *Image) sitHalf() uint32 { return (img.sb.raw.SegmentCountSIT / 2) << f2fs.LogBlocksPerSeg }

// NATBlock reads NAT block b (not through the NAT cache: a scan of every block would fill it with
// blocks no lookup asks for).
func (img *Image) NATBlock(b uint32) (NATBlock, error) {
	if b >= img.NATBlockCount() {
		return NATBlock{}, fmt.Errorf("imgio: NAT block %d: %w (the NAT has %d)", b, fs.ErrInvalid, img.NATBlockCount())
	}
	addr, _ := img.natAddr(b)
	raw, err := img.readBlock(addr, "NAT block")
	if err != nil {
		return NATBlock{}, err
	}
	per := uint32(f2fs.NATEntryPerBlock)
	nb := NATBlock{Index: b, Addr: addr, Raw: raw}
	for nid, e := range img.cp.natJournal {
		if nid/per == b {
			nb.Journal = append(nb.Journal, NATEntry{Nid: nid, Version: e.Version, Ino: e.Ino, BlockAddr: e.BlockAddr, Journal: true})
		}
	}
	return nb, nil
}

// NAT returns the entry of nid, journal first.
func (img *Image) NAT(nid uint32) (NATEntry, error) {
	e, err := img.natEntry(nid)
	if err != nil {
		return NATEntry{}, err
	}
	_, j := img.cp.natJournal[nid]
	return NATEntry{Nid: nid, Ino: e.Ino, BlockAddr: e.BlockAddr, Version: e.Version, Journal: j}, nil
}

// NATJournal returns the checkpoint's NAT journal entries in nid order.
func (img *Image) NATJournal() []NATEntry {
	out := make([]NATEntry, 0, len(img.cp.natJournal))
	for nid, e := range img.cp.natJournal {
		out = append(out, NATEntry{Nid: nid, Ino: e.Ino, BlockAddr: e.BlockAddr, Version: e.Version, Journal: true})
	}
	slices.SortFunc(out, func(a, b NATEntry) int { return int(a.Nid) - int(b.Nid) })
	return out
}

// ReadBlock returns a copy of block addr as on disk.
func (img *Image) ReadBlock(addr uint32) ([]byte, error) {
	if uint64(addr) >= img.sb.raw.BlockCount {
		return nil, fmt.Errorf("imgio: block %d: %w (the volume has %d)", addr, fs.ErrInvalid, img.sb.raw.BlockCount)
	}
	return img.readBlock(addr, "block")
}

// EntryOffsets says where the live copies of metadata entries lie, as byte offsets in the image,
// for tools that edit a copy of an image (a test's doctored after-image).
type EntryOffsets struct{ img *Image }

// Offsets returns the image's [EntryOffsets].
func (img *Image) Offsets() EntryOffsets { return EntryOffsets{img} }

// SIT is the byte offset of segment segno's live struct f2fs_sit_entry: in the checkpoint's SIT
// journal (journal true; the entry is preceded there by its 4-byte segno) or in the live SIT block.
func (o EntryOffsets) SIT(segno uint32) (off int64, journal bool, err error) {
	img := o.img
	if segno >= img.sb.raw.SegmentCountMain {
		return 0, false, fmt.Errorf("imgio: segment %d: %w", segno, fs.ErrInvalid)
	}
	if _, ok := img.cp.sitJournal[segno]; ok {
		base, err := img.sitJournalOff()
		if err != nil {
			return 0, false, err
		}
		buf := make([]byte, 2+sitJournalMax*sitJournalEntry)
		if err := img.readAt(buf, base, "SIT journal"); err != nil {
			return 0, false, err
		}
		for i := range int(binary.LittleEndian.Uint16(buf)) {
			if binary.LittleEndian.Uint32(buf[2+i*sitJournalEntry:]) == segno {
				return base + 2 + int64(i*sitJournalEntry) + 4, true, nil
			}
		}
	}
	per := uint32(f2fs.SITEntryPerBlock)
	b := segno / per
	addr, _ := img.sitAddr(b)
	return img.blockOff(addr) + int64((segno%per)*sitEntrySize), false, nil
}

// NAT is the byte offset of nid's live struct f2fs_nat_entry: in the NAT journal (journal true) or
// in the live NAT block.
func (o EntryOffsets) NAT(nid uint32) (off int64, journal bool, err error) {
	img := o.img
	if nid == 0 || nid >= img.maxNid {
		return 0, false, fmt.Errorf("imgio: nid %d: %w", nid, fs.ErrInvalid)
	}
	if _, ok := img.cp.natJournal[nid]; ok {
		base, err := img.natJournalOff()
		if err != nil {
			return 0, false, err
		}
		buf := make([]byte, 2+natJournalMax*natJournalEntry)
		if err := img.readAt(buf, base, "NAT journal"); err != nil {
			return 0, false, err
		}
		for i := range int(binary.LittleEndian.Uint16(buf)) {
			if binary.LittleEndian.Uint32(buf[2+i*natJournalEntry:]) == nid {
				return base + 2 + int64(i*natJournalEntry) + 4, true, nil
			}
		}
	}
	per := uint32(f2fs.NATEntryPerBlock)
	addr, _ := img.natAddr(nid / per)
	return img.blockOff(addr) + int64((nid%per)*natEntrySize), false, nil
}

// Checkpoint returns the block addresses of the live checkpoint pack's head and its trailing copy.
func (o EntryOffsets) Checkpoint() (head, tail uint32) {
	cp := o.img.cp
	return cp.start, cp.start + cp.raw.CPPackTotalBlockCount - 1
}

// journalOffs is where the NAT and SIT journals of the live pack start (their n_nats / n_sits).
func (img *Image) journalOffs() (nat, sit int64, err error) {
	r := &img.cp.raw
	if r.CkptFlags&cpCompactSum != 0 {
		off := img.blockOff(img.cp.start + r.CPPackStartSum)
		return off, off + sumJournalSize, nil
	}
	base := uint32(3)
	if r.CkptFlags&(cpUmount|cpFastboot) != 0 {
		base = 6
	}
	hot := img.cp.start + r.CPPackTotalBlockCount - (base + 1)
	return img.blockOff(hot) + sumJournalOff, img.blockOff(hot+2) + sumJournalOff, nil
}

func (img *Image) natJournalOff() (int64, error) { n, _, err := img.journalOffs(); return n, err }
func (img *Image) sitJournalOff() (int64, error) { _, s, err := img.journalOffs(); return s, err }
