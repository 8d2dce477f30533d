package imgio

import (
	"encoding/binary"
	"fmt"

	"github.com/zrviz/zrviz/internal/f2fs"
)

// Checkpoint flags (CP_*_FLAG).
const (
	cpUmount         = f2fs.CPUmountFlag
	cpOrphanPresent  = f2fs.CPOrphanPresentFlag
	cpCompactSum     = f2fs.CPCompactSumFlag
	cpFastboot       = f2fs.CPFastbootFlag
	cpLargeNATBitmap = f2fs.CPLargeNATBitmapFlag
)

// checkpoint is the live checkpoint pack: its head, version bitmaps and the NAT/SIT journals held in
// the current summaries.
type checkpoint struct {
	raw        rawCheckpoint
	pack       int    // 1 or 2
	start      uint32 // block address of the pack
	natBitmap  []byte
	sitBitmap  []byte
	natJournal map[uint32]rawNATEntry
	sitJournal map[uint32]rawSITEntry
}

// cpBlock reads one checkpoint block at addr and checks its CRC (f2fs_checkpoint_chksum).
func (img *Image) cpBlock(addr uint32) ([]byte, *rawCheckpoint, error) {
	buf, err := img.readBlock(addr, "checkpoint")
	if err != nil {
		return nil, nil, err
	}
	cp, err := decodeCPBlock(buf, img.blockOff(addr))
	if err != nil {
		return nil, nil, err
	}
	return buf, cp, nil
}

// decodeCPBlock decodes the checkpoint block buf, found at byte off, and checks its CRC.
func decodeCPBlock(buf []byte, off int64) (*rawCheckpoint, error) {
	cp := new(rawCheckpoint)
	if _, err := binary.Decode(buf, binary.LittleEndian, cp); err != nil {
		return nil, formatErr(off, "checkpoint", "short", err.Error())
	}
	co := cp.ChecksumOffset
	if co < cpHeadSize || co > cpChecksumOff {
		return nil, formatErr(off+0xA4, "checkpoint", "bad checksum_offset", co)
	}
	crc := f2fsCRC(f2fsMagic, buf[:co])
	if co < cpChecksumOff {
		// The CRC skips its own four bytes and carries on to the end of the block.
		crc = f2fsCRC(crc, buf[co+4:])
	}
	if stored := binary.LittleEndian.Uint32(buf[co:]); stored != crc {
		return nil, formatErr(off+int64(co), "checkpoint", "bad crc", fmt.Sprintf("stored 0x%08x, computed 0x%08x", stored, crc))
	}
	return cp, nil
}

// validPack checks a pack starting at start (validate_checkpoint): head and trailing copy must both
// pass their CRCs and agree on the version.
func (img *Image) validPack(start uint32) ([]byte, *rawCheckpoint, error) {
	buf, cp, err := img.cpBlock(start)
	if err != nil {
		return nil, nil, err
	}
	total := cp.CPPackTotalBlockCount
	if total <= 2 || total > blocksPerSeg {
		return nil, nil, formatErr(img.blockOff(start)+0x88, "checkpoint", "bad cp_pack_total_block_count", total)
	}
	_, tail, err := img.cpBlock(start + total - 1)
	if err != nil {
		return nil, nil, err
	}
	if tail.CheckpointVer != cp.CheckpointVer {
		return nil, nil, formatErr(img.blockOff(start+total-1), "checkpoint", "trailing copy version differs",
			fmt.Sprintf("0x%x vs 0x%x", tail.CheckpointVer, cp.CheckpointVer))
	}
	return buf, cp, nil
}

// readCheckpoint chooses the live pack (f2fs_get_valid_checkpoint) and decodes what the reader needs.
func readCheckpoint(img *Image) (*checkpoint, error) {
	sb := &img.sb.raw
	p1 := sb.CPBlkaddr
	p2 := sb.CPBlkaddr + blocksPerSeg
	b1, c1, err1 := img.validPack(p1)
	b2, c2, err2 := img.validPack(p2)
	cp := &checkpoint{}
	var head []byte
	switch {
	case err1 == nil && err2 == nil:
		if int64(c2.CheckpointVer-c1.CheckpointVer) > 0 {
			head, cp.raw, cp.pack, cp.start = b2, *c2, 2, p2
		} else {
			head, cp.raw, cp.pack, cp.start = b1, *c1, 1, p1
		}
	case err1 == nil:
		head, cp.raw, cp.pack, cp.start = b1, *c1, 1, p1
	case err2 == nil:
		head, cp.raw, cp.pack, cp.start = b2, *c2, 2, p2
	default:
		return nil, fmt.Errorf("imgio: no valid checkpoint: pack 1: %w", err1)
	}
	if err := cp.validate(img, head); err != nil {
		return nil, err
	}
	if err := cp.readJournals(img); err != nil {
		return nil, err
	}
	return cp, nil
}

func (cp *checkpoint) validate(img *Image, head []byte) error {
	sb := &img.sb.raw
	r := &cp.raw
	off := img.blockOff(cp.start)
	bad := func(field int64, msg string, val any) error {
		return formatErr(off+field, "checkpoint", msg, val)
	}
	// f2fs_sanity_check_ckpt: the pack must hold at least head, summaries and the trailing copy.
	payload := sb.CPPayload
	if r.CPPackStartSum < 1+payload || r.CPPackStartSum >= r.CPPackTotalBlockCount {
		return bad(0x8C, "bad cp_pack_start_sum", r.CPPackStartSum)
	}
	if r.UserBlockCount == 0 || r.UserBlockCount >= sb.BlockCount || r.ValidBlockCount > r.UserBlockCount {
		return bad(0x08, "bad user/valid block count", fmt.Sprintf("%d/%d", r.UserBlockCount, r.ValidBlockCount))
	}
	if uint64(r.ValidNodeCount) > r.ValidBlockCount || r.ValidInodeCount > r.ValidNodeCount {
		return bad(0x90, "bad valid node/inode count", fmt.Sprintf("%d/%d", r.ValidNodeCount, r.ValidInodeCount))
	}
	main := sb.SegmentCountMain
	for t := range 3 {
		if r.CurNodeSegno[t] >= main || r.CurDataSegno[t] >= main {
			return bad(0x24, "current segment out of range", fmt.Sprintf("node %d data %d", r.CurNodeSegno[t], r.CurDataSegno[t]))
		}
		if r.CurNodeBlkoff[t] > blocksPerSeg || r.CurDataBlkoff[t] > blocksPerSeg {
			return bad(0x44, "current block offset out of range", fmt.Sprintf("node %d data %d", r.CurNodeBlkoff[t], r.CurDataBlkoff[t]))
		}
	}
	// Version bitmaps (__bitmap_ptr). Sizes must match the table sizes exactly.
	natSz := (sb.SegmentCountNAT / 2) << f2fs.LogBlocksPerSeg / 8
	sitSz := (sb.SegmentCountSIT / 2) << f2fs.LogBlocksPerSeg / 8
	if r.NATVerBitmapBytesize != natSz || r.SITVerBitmapBytesize != sitSz {
		return bad(0x9C, "version bitmap sizes do not match NAT/SIT", fmt.Sprintf("sit %d nat %d", r.SITVerBitmapBytesize, r.NATVerBitmapBytesize))
	}
	buf := head
	if payload > 0 {
		buf = make([]byte, 0, (1+int(payload))*int(img.bs))
		buf = append(buf, head...)
		for i := uint32(1); i <= payload; i++ {
			b, err := img.readBlock(cp.start+i, "checkpoint payload")
			if err != nil {
				return err
			}
			buf = append(buf, b...)
		}
	}
	slice := func(from uint64, n uint32, what string) ([]byte, error) {
		if from+uint64(n) > uint64(len(buf)) {
			return nil, bad(int64(from), what+" version bitmap beyond checkpoint", n)
		}
		return buf[from : from+uint64(n)], nil
	}
	var natOff, sitOff uint64
	switch {
	case r.CkptFlags&cpLargeNATBitmap != 0:
		natOff = cpHeadSize + 4
		sitOff = natOff + uint64(natSz)
	case payload > 0:
		natOff, sitOff = cpHeadSize, uint64(img.bs)
	default:
		natOff, sitOff = cpHeadSize+uint64(sitSz), cpHeadSize
	}
	// Without payload or large bitmap both bitmaps share the head block with the CRC.
	if payload == 0 && r.CkptFlags&cpLargeNATBitmap == 0 && uint64(r.ChecksumOffset) < cpHeadSize+uint64(sitSz+natSz) {
		return bad(0xA4, "checksum_offset inside the version bitmaps", r.ChecksumOffset)
	}
	var err error
	if cp.natBitmap, err = slice(natOff, natSz, "NAT"); err != nil {
		return err
	}
	if cp.sitBitmap, err = slice(sitOff, sitSz, "SIT"); err != nil {
		return err
	}
	cp.natBitmap = append([]byte(nil), cp.natBitmap...)
	cp.sitBitmap = append([]byte(nil), cp.sitBitmap...)
	return nil
}

// readJournals loads the NAT and SIT journals from the pack's data summaries, compact or normal.
func (cp *checkpoint) readJournals(img *Image) error {
	r := &cp.raw
	var natJ, sitJ []byte
	var natOff, sitOff int64
	if r.CkptFlags&cpCompactSum != 0 {
		addr := cp.start + r.CPPackStartSum
		b, err := img.readBlock(addr, "compact summary")
		if err != nil {
			return err
		}
		natJ, sitJ = b[:sumJournalSize], b[sumJournalSize:2*sumJournalSize]
		natOff = img.blockOff(addr)
		sitOff = natOff + sumJournalSize
	} else {
		base := uint32(3)
		if r.CkptFlags&(cpUmount|cpFastboot) != 0 {
			base = 6
		}
		if r.CPPackTotalBlockCount < base+1+r.CPPackStartSum {
			return formatErr(img.blockOff(cp.start)+0x88, "checkpoint", "pack too short for its summaries", r.CPPackTotalBlockCount)
		}
		hot := cp.start + r.CPPackTotalBlockCount - (base + 1)
		hb, err := img.readBlock(hot, "data summary")
		if err != nil {
			return err
		}
		cb, err := img.readBlock(hot+2, "data summary")
		if err != nil {
			return err
		}
		natJ, sitJ = hb[sumJournalOff:sumJournalOff+sumJournalSize], cb[sumJournalOff:sumJournalOff+sumJournalSize]
		natOff = img.blockOff(hot) + sumJournalOff
		sitOff = img.blockOff(hot+2) + sumJournalOff
	}
	n := int(binary.LittleEndian.Uint16(natJ))
	if n > natJournalMax {
		return formatErr(natOff, "NAT journal", "too many entries", n)
	}
	cp.natJournal = make(map[uint32]rawNATEntry, n)
	for i := range n {
		e := natJ[2+i*natJournalEntry:]
		var ne rawNATEntry
		binary.Decode(e[4:4+natEntrySize], binary.LittleEndian, &ne)
		cp.natJournal[binary.LittleEndian.Uint32(e)] = ne
	}
	n = int(binary.LittleEndian.Uint16(sitJ))
	if n > sitJournalMax {
		return formatErr(sitOff, "SIT journal", "too many entries", n)
	}
	cp.sitJournal = make(map[uint32]rawSITEntry, n)
	for i := range n {
		e := sitJ[2+i*sitJournalEntry:]
		segno := binary.LittleEndian.Uint32(e)
		if segno >= img.sb.raw.SegmentCountMain {
			return formatErr(sitOff+2+int64(i*sitJournalEntry), "SIT journal", "segno out of range", segno)
		}
		var se rawSITEntry
		binary.Decode(e[4:4+sitEntrySize], binary.LittleEndian, &se)
		cp.sitJournal[segno] = se
	}
	return nil
}

// testBitMSB tests bit i of an MSB-first bitmap (f2fs_test_bit); bits beyond b read as clear.
func testBitMSB(b []byte, i uint32) bool {
	if uint64(i/8) >= uint64(len(b)) {
		return false
	}
	return b[i/8]&(0x80>>(i%8)) != 0
}
