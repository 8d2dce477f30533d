package imgio

import (
	"encoding/binary"
	"fmt"

	"github.com/zrviz/zrviz/internal/f2fs"
)

// This file locates summary entries (struct f2fs_summary: who owns each main-area block) and the
// NAT/SIT entries of the live state, byte for byte, for the block inspector. A segment's summary
// lives in the SSA block ssa_blkaddr+segno, except for the six current segments: their live
// summaries are written into the checkpoint pack at each checkpoint (compacted or normal data
// summaries, node summaries after an unmount) and the SSA copy is stale (fs/f2fs/segment.c
// restore_curseg_summaries; f2fs-tools mount.c get_sum_block).

// Checkpoint flags and values used only here.
const (
	cpNATBits    = f2fs.CPNATBitsFlag
	allocSSR     = 1    // alloc_type[] value of an SSR log
	sumFooterOff = 4091 // struct summary_footer in a summary block
	sumTypeNode  = 1    // SUM_TYPE_NODE in summary_footer.entry_type
	xattrNodeOfs = 0x1FFFFFFF
)

// SummaryEntry is one struct f2fs_summary (7 bytes) as stored on disk, with where it is stored.
type SummaryEntry struct {
	Nid       uint32 `json:"nid"`       // the node that owns the block: the node itself, or the dnode whose slot holds a data block
	Version   uint8  `json:"version"`   // the NAT entry's version when written
	OfsInNode uint16 `json:"ofsInNode"` // data blocks: index of the slot in the dnode's address array (extra attributes not counted)
	// Type is the summary block's footer entry_type ("data" or "node"); "" for compacted summaries,
	// which have no footer per log.
	Type string `json:"type"`
	// Source is "ssa" (the SSA block), "checkpoint" (a current segment's live summary, kept in the
	// checkpoint pack) or "none" (a current data segment's block past the log's next free block: the
	// checkpoint stores no entry for it).
	Source  string `json:"source"`
	Blkaddr uint32 `json:"blkaddr"` // block storing the entry (0 for "none")
	Offset  int    `json:"offset"`  // byte offset of the entry in that block
}

// packLayout says where the parts of a checkpoint pack are (fs/f2fs/checkpoint.c do_checkpoint).
type packLayout struct {
	start, total  uint32 // first block, cp_pack_total_block_count
	payload       uint32 // cp_payload blocks after the head
	orphans       uint32 // orphan blocks after the payload
	sumStart      uint32 // first summary block (start + cp_pack_start_sum)
	compact       bool   // CP_COMPACT_SUM_FLAG: data summaries compacted
	compactBlocks uint32 // blocks the compacted data summaries take
	nodeSums      bool   // CP_UMOUNT_FLAG or CP_FASTBOOT_FLAG: node summaries present
	dataSum       [3]uint32
	nodeSum       [3]uint32
	natBits       uint32 // blocks of nat_bits at the end of the pack's segment (0 without the flag)
	raw           *rawCheckpoint
}

// layoutOf computes the layout of a pack from its head. It checks that every part lies inside the
// pack and reports a *FormatError otherwise.
func (img *Image) layoutOf(start uint32, r *rawCheckpoint) (packLayout, error) {
	l := packLayout{start: start, total: r.CPPackTotalBlockCount, payload: img.sb.raw.CPPayload, raw: r}
	off := img.blockOff(start)
	if l.total <= 2 || l.total > blocksPerSeg {
		return l, formatErr(off+0x88, "checkpoint", "bad cp_pack_total_block_count", l.total)
	}
	if r.CPPackStartSum < 1+l.payload || r.CPPackStartSum >= l.total {
		return l, formatErr(off+0x8C, "checkpoint", "bad cp_pack_start_sum", r.CPPackStartSum)
	}
	l.orphans = r.CPPackStartSum - 1 - l.payload
	l.sumStart = start + r.CPPackStartSum
	l.compact = r.CkptFlags&cpCompactSum != 0
	l.nodeSums = r.CkptFlags&(cpUmount|cpFastboot) != 0
	if l.nodeSums {
		if l.total < 4+r.CPPackStartSum {
			return l, formatErr(off+0x88, "checkpoint", "pack too short for its node summaries", l.total)
		}
		for t := range 3 {
			l.nodeSum[t] = start + l.total - 4 + uint32(t)
		}
	}
	if l.compact {
		_, _, used, err := img.compactPos(&l, -1, 0)
		if err != nil {
			return l, err
		}
		l.compactBlocks = used
	} else {
		base := uint32(3)
		if l.nodeSums {
			base = 6
		}
		if l.total < base+1+r.CPPackStartSum {
			return l, formatErr(off+0x88, "checkpoint", "pack too short for its data summaries", l.total)
		}
		for t := range 3 {
			l.dataSum[t] = start + l.total - (base + 1) + uint32(t)
		}
	}
	if r.CkptFlags&cpNATBits != 0 {
		natBlocks := uint64(img.sb.raw.SegmentCountNAT/2) << f2fs.LogBlocksPerSeg
		l.natBits = uint32((natBlocks/8*2 + 8 + uint64(img.bs) - 1) / uint64(img.bs))
	}
	return l, nil
}

// livePack is the layout of the live checkpoint pack.
func (img *Image) livePack() (packLayout, error) {
	return img.layoutOf(img.cp.start, &img.cp.raw)
}

// logEntries is how many summary entries data log t keeps in compacted summaries: its next free
// block offset, or the whole segment for an SSR log (read_compacted_summaries).
func logEntries(r *rawCheckpoint, t int) uint32 {
	if r.AllocType[t] == allocSSR {
		return blocksPerSeg
	}
	return min(uint32(r.CurDataBlkoff[t]), blocksPerSeg)
}

// compactPos walks the compacted data summaries as read_compacted_summaries does: the NAT and SIT
// journals first, then the entries of the hot, warm and cold data logs, moving to the next block
// whenever an entry would not end before the footer. It returns the block and byte offset of entry j
// of log t (t < 0: none) and how many blocks the summaries take.
func (img *Image) compactPos(l *packLayout, t int, j uint32) (blk uint32, off int, used uint32, err error) {
	offset := 2 * sumJournalSize
	b := l.sumStart
	found := false
	for tt := range 3 {
		n := logEntries(l.raw, tt)
		for jj := range n {
			if tt == t && jj == j {
				blk, off, found = b, offset, true
			}
			offset += sumEntrySize
			if offset+sumEntrySize <= sumFooterOff {
				continue
			}
			b++
			offset = 0
		}
	}
	used = b - l.sumStart
	if offset > 0 {
		used++
	}
	limit := l.start + l.total - 1 // the trailing copy
	if l.nodeSums {
		limit -= 3
	}
	if l.sumStart+used > limit {
		return 0, 0, used, formatErr(img.blockOff(l.start)+0x74, "checkpoint",
			fmt.Sprintf("compacted summaries need %d blocks, the pack has room for %d", used, limit-l.sumStart), used)
	}
	if t >= 0 && !found {
		return 0, 0, used, nil
	}
	return blk, off, used, nil
}

// currentLog returns the log (0..5, CURSEG_*) whose current segment is segno, or -1. Node logs are
// checked first, as f2fs-tools' get_sum_block does.
func (img *Image) currentLog(segno uint32) int {
	r := &img.cp.raw
	for t := range 3 {
		if r.CurNodeSegno[t] == segno {
			return 3 + t
		}
	}
	for t := range 3 {
		if r.CurDataSegno[t] == segno {
			return t
		}
	}
	return -1
}

// summaryEntry returns the live summary entry of block blkoff of main segment segno.
func (img *Image) summaryEntry(segno, blkoff uint32) (SummaryEntry, error) {
	if segno >= img.sb.raw.SegmentCountMain || blkoff >= blocksPerSeg {
		return SummaryEntry{}, formatErr(img.blockOff(img.sb.raw.SSABlkaddr), "SSA", "segment or offset out of range", segno)
	}
	e := SummaryEntry{Source: "ssa", Blkaddr: img.sb.raw.SSABlkaddr + segno, Offset: int(blkoff) * sumEntrySize}
	withFooter := true
	if log := img.currentLog(segno); log >= 0 {
		l, err := img.livePack()
		if err != nil {
			return SummaryEntry{}, err
		}
		switch {
		case log >= 3 && l.nodeSums:
			e.Source, e.Blkaddr = "checkpoint", l.nodeSum[log-3]
		case log >= 3:
			// No node summaries in the pack (no clean unmount): the kernel rebuilds them from the node
			// footers (f2fs_restore_node_summary); the SSA copy is what is stored.
		case l.compact:
			blk, off, _, err := img.compactPos(&l, log, blkoff)
			if err != nil {
				return SummaryEntry{}, err
			}
			if blk == 0 {
				return SummaryEntry{Source: "none"}, nil
			}
			e.Source, e.Blkaddr, e.Offset = "checkpoint", blk, off
			withFooter = false
		default:
			e.Source, e.Blkaddr = "checkpoint", l.dataSum[log]
		}
	}
	blk, err := img.sharedBlock(e.Blkaddr, "summary block")
	if err != nil {
		return SummaryEntry{}, err
	}
	raw := blk[e.Offset : e.Offset+sumEntrySize]
	e.Nid, e.Version, e.OfsInNode = binary.LittleEndian.Uint32(raw), raw[4], binary.LittleEndian.Uint16(raw[5:])
	if withFooter {
		e.Type = "data"
		if blk[sumFooterOff] == sumTypeNode {
			e.Type = "node"
		}
	}
	return e, nil
}

// journalLoc is where the live NAT or SIT journal is: its block and the byte offset of n_nats/n_sits.
type journalLoc struct {
	blk uint32
	off int
}

// journals returns where the live NAT and SIT journals are (the hot and cold data summaries, or the
// first compacted summary block).
func (img *Image) journals() (nat, sit journalLoc, err error) {
	l, err := img.livePack()
	if err != nil {
		return nat, sit, err
	}
	if l.compact {
		return journalLoc{l.sumStart, 0}, journalLoc{l.sumStart, sumJournalSize}, nil
	}
	return journalLoc{l.dataSum[0], sumJournalOff}, journalLoc{l.dataSum[2], sumJournalOff}, nil
}

// entryLoc is where an entry of the live state is stored.
type entryLoc struct {
	blk    uint32
	off    int    // byte offset of the entry (the NAT/SIT entry itself, after the journal's key)
	source string // "journal", or "nat1"/"nat2", "sit1"/"sit2": the copy in use
}

// natLoc returns where the live NAT entry of nid is.
func (img *Image) natLoc(nid uint32) (entryLoc, error) {
	if nid == 0 || nid >= img.maxNid {
		return entryLoc{}, formatErr(img.blockOff(img.sb.raw.NATBlkaddr), "NAT", "nid out of range", nid)
	}
	if _, ok := img.cp.natJournal[nid]; ok {
		nj, _, err := img.journals()
		if err != nil {
			return entryLoc{}, err
		}
		blk, err := img.readBlock(nj.blk, "NAT journal")
		if err != nil {
			return entryLoc{}, err
		}
		n := min(int(binary.LittleEndian.Uint16(blk[nj.off:])), natJournalMax)
		for i := range n {
			eo := nj.off + 2 + i*natJournalEntry
			if binary.LittleEndian.Uint32(blk[eo:]) == nid {
				return entryLoc{nj.blk, eo + 4, "journal"}, nil
			}
		}
	}
	perBlock := uint32(f2fs.NATEntryPerBlock)
	b := nid / perBlock
	loc := entryLoc{source: "nat1"}
	var second bool
	if loc.blk, second = img.natAddr(b); second {
		loc.source = "nat2"
	}
	loc.off = int(nid%perBlock) * natEntrySize
	return loc, nil
}

// sitLoc returns where the live SIT entry of main segment segno is.
func (img *Image) sitLoc(segno uint32) (entryLoc, error) {
	if segno >= img.sb.raw.SegmentCountMain {
		return entryLoc{}, formatErr(img.blockOff(img.sb.raw.SITBlkaddr), "SIT", "segment out of range", segno)
	}
	if _, ok := img.cp.sitJournal[segno]; ok {
		_, sj, err := img.journals()
		if err != nil {
			return entryLoc{}, err
		}
		blk, err := img.readBlock(sj.blk, "SIT journal")
		if err != nil {
			return entryLoc{}, err
		}
		n := min(int(binary.LittleEndian.Uint16(blk[sj.off:])), sitJournalMax)
		for i := range n {
			eo := sj.off + 2 + i*sitJournalEntry
			if binary.LittleEndian.Uint32(blk[eo:]) == segno {
				return entryLoc{sj.blk, eo + 4, "journal"}, nil
			}
		}
	}
	perBlock := uint32(f2fs.SITEntryPerBlock)
	b := segno / perBlock
	loc := entryLoc{source: "sit1", off: int(segno%perBlock) * sitEntrySize}
	var second bool
	if loc.blk, second = img.sitAddr(b); second {
		loc.source = "sit2"
	}
	return loc, nil
}
