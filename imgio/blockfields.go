package imgio

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/zrviz/zrviz/internal/f2fs"
)

// This file decodes the fields of each kind of block for the block inspector: names are those of
// include/linux/f2fs_fs.h, offsets are bytes within the block.

// fieldFmt says how a fixed field is shown.
type fieldFmt int

const (
	fmtDec   fieldFmt = iota // unsigned decimal
	fmtHex                   // 0x…
	fmtStr                   // C string
	fmtBytes                 // hex bytes
	fmtTime                  // seconds since the epoch, with the UTC date
)

// uintAt reads a little-endian unsigned integer of size 1, 2, 4 or 8 bytes.
func uintAt(b []byte, off, size int) uint64 {
	switch size {
	case 1:
		return uint64(b[off])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b[off:]))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b[off:]))
	case 8:
		return binary.LittleEndian.Uint64(b[off:])
	}
	return 0
}

// custom shows one field of a structure itself (a value that needs words, several rows or a link);
// o is the field's offset in the block.
type custom map[string]func(s spec, o int)

// fixed adds the fields of specs for a structure at byte base of the block, in order, each named
// prefix + its C name: through its custom function when it has one, else as its format says. A field
// past the end of the block is left out.
func (in *inspector) fixed(prefix string, base int, specs []spec, c custom) {
	for _, s := range specs {
		o := base + s.off
		if o+s.size > len(in.b.Data) {
			continue
		}
		if f, ok := c[s.name]; ok {
			f(s, o)
			continue
		}
		in.show(prefix+s.name, o, s)
	}
}

// show adds field s at byte o of the block, formatted as its format says.
func (in *inspector) show(name string, o int, s spec) {
	b := in.b.Data
	{
		var v string
		switch s.f {
		case fmtDec:
			v = strconv.FormatUint(uintAt(b, o, s.size), 10)
		case fmtHex:
			v = fmt.Sprintf("%#x", uintAt(b, o, s.size))
		case fmtStr:
			v = strconv.Quote(cString(b[o : o+s.size]))
		case fmtBytes:
			v = hexPreview(b[o : o+s.size])
		case fmtTime:
			t := uintAt(b, o, s.size)
			v = strconv.FormatUint(t, 10)
			if t < 1<<40 {
				v += " (" + time.Unix(int64(t), 0).UTC().Format("2006-01-02 15:04:05") + " UTC)"
			}
		}
		in.field(name, o, s.size, v)
	}
}

// hexPreview shows up to 32 bytes in hex; all-zero runs are said so.
func hexPreview(b []byte) string {
	zero := true
	for _, c := range b {
		if c != 0 {
			zero = false
			break
		}
	}
	if zero {
		return fmt.Sprintf("%d zero bytes", len(b))
	}
	if len(b) <= 32 {
		return hex.EncodeToString(b)
	}
	return hex.EncodeToString(b[:32]) + "…"
}

// quotePreview shows bytes as a quoted string, cut at 64 bytes.
func quotePreview(b []byte) string {
	if len(b) > 64 {
		return strconv.Quote(string(b[:64])) + "…"
	}
	return strconv.Quote(string(b))
}

func flagNames(v uint64, names map[uint64]string) string {
	var out []string
	for bit := uint64(1); bit != 0 && bit <= v; bit <<= 1 {
		if v&bit == 0 {
			continue
		}
		if n, ok := names[bit]; ok {
			out = append(out, n)
		} else {
			out = append(out, fmt.Sprintf("%#x", bit))
		}
	}
	if len(out) == 0 {
		return fmt.Sprintf("%#x", v)
	}
	return fmt.Sprintf("%#x (%s)", v, strings.Join(out, ", "))
}

// superblockFields decodes struct f2fs_super_block at byte 1024 of blocks 0 and 1.
func (in *inspector) superblockFields() {
	b := in.b.Data
	const base = sbOffset
	copyNo := in.b.Addr
	in.role("superblock copy %d (struct f2fs_super_block at byte 1024); the reader uses the copy at byte %#x", copyNo, in.img.sb.off)
	in.field("unused", 0, base, hexPreview(b[:base]))
	sb := b[base : base+sbSize]
	if binary.LittleEndian.Uint32(sb) != f2fsMagic {
		in.problem([]int64{in.abs(in.b.Addr, base)}, "superblock copy %d has no F2FS magic", copyNo)
	}
	var r rawSuperblock
	if _, err := binary.Decode(sb, binary.LittleEndian, &r); err != nil {
		return
	}
	feat := r.Feature
	in.fixed("", base, specsOf[rawSuperblock](), custom{
		"uuid":        func(s spec, o int) { in.field(s.name, o, s.size, formatUUID(r.UUID)) },
		"volume_name": func(s spec, o int) { in.field(s.name, o, s.size, strconv.Quote(volumeName(r.VolumeName[:]))) },
		"extension_list": func(s spec, o int) {
			var exts []string
			for _, e := range r.ExtensionList {
				if e := cString(e[:]); e != "" {
					exts = append(exts, e)
				}
			}
			in.field(s.name, o, s.size, strings.Join(exts, " "))
		},
		"feature": func(s spec, o int) {
			in.field(s.name, o, s.size, fmt.Sprintf("%#x (%s)", feat, strings.Join(featureList(feat), ", ")))
		},
		"qf_ino": func(s spec, o int) {
			in.field(s.name, o, s.size, fmt.Sprintf("user %d, group %d, project %d", r.QfIno[0], r.QfIno[1], r.QfIno[2]))
		},
		"crc": func(s spec, o int) {
			v := fmt.Sprintf("%#08x", r.CRC)
			if feat&featSBChecksum != 0 {
				if got := f2fsCRC(f2fsMagic, sb[:sbChecksumOff]); got == r.CRC {
					v += " (ok)"
				} else {
					v += fmt.Sprintf(" (bad: computed %#08x)", got)
					in.problem([]int64{in.abs(in.b.Addr, o)}, "superblock copy %d: crc %#08x, computed %#08x", copyNo, r.CRC, got)
				}
			} else {
				v += " (sb_checksum not enabled)"
			}
			in.field(s.name, o, s.size, v)
		},
	})
	if len(b) > base+sbSize {
		in.field("unused", base+sbSize, len(b)-base-sbSize, hexPreview(b[base+sbSize:]))
	}
	for _, l := range []struct {
		name string
		addr uint32
	}{{"segment0_blkaddr", r.Segment0Blkaddr}, {"cp_blkaddr", r.CPBlkaddr}, {"sit_blkaddr", r.SITBlkaddr},
		{"nat_blkaddr", r.NATBlkaddr}, {"ssa_blkaddr", r.SSABlkaddr}, {"main_blkaddr", r.MainBlkaddr}} {
		in.link(l.name, l.addr)
	}
	in.link("root_ino", in.nodeBlockOf(r.RootIno))
}

var ckptFlagNames = map[uint64]string{f2fs.CPUmountFlag: "umount", f2fs.CPOrphanPresentFlag: "orphan_present",
	f2fs.CPCompactSumFlag: "compact_sum", f2fs.CPErrorFlag: "error", f2fs.CPFsckFlag: "fsck",
	f2fs.CPFastbootFlag: "fastboot", f2fs.CPCRCRecoveryFlag: "crc_recovery", f2fs.CPNATBitsFlag: "nat_bits",
	f2fs.CPTrimmedFlag: "trimmed", f2fs.CPNoCRCRecoveryFlag: "nocrc_recovery",
	f2fs.CPLargeNATBitmapFlag: "large_nat_bitmap", f2fs.CPQuotaNeedFsckFlag: "quota_need_fsck",
	f2fs.CPDisabledFlag: "disabled", f2fs.CPDisabledQuickFlag: "disabled_quick", f2fs.CPResizefsFlag: "resizefs"}

// checkpointBlock describes a block of the checkpoint area: which pack, which part of it.
func (in *inspector) checkpointBlock() error {
	img, b := in.img, &in.b
	cpStart := img.sb.raw.CPBlkaddr
	rel := b.Addr - cpStart
	pack := rel/blocksPerSeg + 1
	start := cpStart + (pack-1)*blocksPerSeg
	idx := b.Addr - start
	if pack > 2 {
		in.role("checkpoint area beyond the two packs: unused")
		return nil
	}
	live := start == img.cp.start
	state := "the live pack"
	if !live {
		state = "the other pack"
	}
	head, raw, err := img.cpBlock(start)
	var l packLayout
	if err == nil {
		l, err = img.layoutOf(start, raw)
	}
	if err != nil {
		if live {
			if err := in.note("live checkpoint", err); err != nil {
				return err
			}
		}
		in.role("checkpoint pack %d (%s), block %d; the pack's head is not valid: %v", pack, state, idx, err)
		if idx == 0 && b.Data != nil {
			in.checkpointFields(b.Data, nil, nil)
		}
		return nil
	}
	_ = head
	switch {
	case idx == 0 || idx == l.total-1:
		which := "head"
		if idx != 0 {
			which = "trailing copy"
		}
		in.role("checkpoint pack %d (%s, version %d), block %d of %d: the checkpoint %s", pack, state, raw.CheckpointVer, idx, l.total, which)
		in.checkpointFields(b.Data, raw, &l)
	case idx <= l.payload:
		in.role("checkpoint pack %d (%s), block %d: cp_payload (the rest of the SIT version bitmap)", pack, state, idx)
		in.field("sit version bitmap (continued)", 0, len(b.Data), hexPreview(b.Data))
	case idx < 1+l.payload+l.orphans:
		in.role("checkpoint pack %d (%s), block %d: orphan inode block", pack, state, idx)
		in.orphanFields()
	case l.compact && b.Addr >= l.sumStart && b.Addr < l.sumStart+l.compactBlocks:
		in.role("checkpoint pack %d (%s), block %d: compacted summaries of the current data segments", pack, state, idx)
		in.compactFields(&l)
	case !l.compact && b.Addr >= l.dataSum[0] && b.Addr <= l.dataSum[2]:
		t := int(b.Addr - l.dataSum[0])
		in.role("checkpoint pack %d (%s), block %d: summary of the current %s segment %d", pack, state, idx, f2fs.LogName(t), raw.CurDataSegno[t])
		in.summaryFields(raw.CurDataSegno[t], t == 0, t == 2)
	case l.nodeSums && b.Addr >= l.nodeSum[0] && b.Addr <= l.nodeSum[2]:
		t := int(b.Addr - l.nodeSum[0])
		in.role("checkpoint pack %d (%s), block %d: summary of the current %s segment %d", pack, state, idx, f2fs.LogName(3+t), raw.CurNodeSegno[t])
		in.summaryFields(raw.CurNodeSegno[t], false, false)
	case l.natBits > 0 && idx >= blocksPerSeg-l.natBits:
		in.role("checkpoint pack %d (%s): nat_bits block %d of %d (full and empty NAT blocks, an optimisation)", pack, state, idx-(blocksPerSeg-l.natBits), l.natBits)
		in.field("nat_bits", 0, len(b.Data), hexPreview(b.Data))
	case idx < l.total:
		in.role("checkpoint pack %d (%s), block %d of %d: not used by this pack's layout", pack, state, idx, l.total)
	default:
		in.role("checkpoint pack %d (%s), block %d: past the pack's %d blocks, unused", pack, state, idx, l.total)
	}
	if live && idx < l.total {
		in.link("checkpoint head", start)
	}
	return nil
}

// checkpointFields decodes struct f2fs_checkpoint; raw and l are nil when the head is not valid.
func (in *inspector) checkpointFields(blk []byte, raw *rawCheckpoint, l *packLayout) {
	var h rawCheckpoint
	if _, err := binary.Decode(blk, binary.LittleEndian, &h); err != nil {
		return
	}
	main := in.img.sb.raw.MainBlkaddr
	// cur arrays: the first three entries are the node (or data) logs, hot, warm and cold; the
	// other five are unused by a six-log volume.
	cur := func(log0 int, seg bool) func(s spec, o int) {
		return func(s spec, o int) {
			elem := s.size / 8
			for t := range 3 {
				n := fmt.Sprintf("%s[%d]", s.name, t)
				v := uintAt(blk, o+elem*t, elem)
				if !seg {
					in.field(n, o+elem*t, elem, strconv.FormatUint(v, 10))
					continue
				}
				in.field(n, o+elem*t, elem, fmt.Sprintf("%d (%s)", v, f2fs.LogName(log0+t)))
				if v < uint64(in.img.sb.raw.SegmentCountMain) {
					in.link(n, f2fs.SegBlock(main, uint32(v)))
				}
			}
			in.field(s.name+"[3..7]", o+3*elem, 5*elem, hexPreview(blk[o+3*elem:o+s.size]))
		}
	}
	in.fixed("", 0, specsOf[rawCheckpoint](), custom{
		"cur_node_segno":  cur(3, true),
		"cur_node_blkoff": cur(3, false),
		"cur_data_segno":  cur(0, true),
		"cur_data_blkoff": cur(0, false),
		"ckpt_flags": func(s spec, o int) {
			in.field(s.name, o, s.size, flagNames(uint64(h.CkptFlags), ckptFlagNames))
		},
		"alloc_type": func(s spec, o int) {
			var at []string
			for t := range 6 {
				at = append(at, fmt.Sprintf("%s %s", f2fs.LogName(t), map[bool]string{true: "SSR", false: "LFS"}[h.AllocType[t] == allocSSR]))
			}
			in.field(s.name, o, s.size, strings.Join(at, ", "))
		},
	})
	co := int(h.ChecksumOffset)
	if raw == nil || co < cpHeadSize || co > cpChecksumOff {
		return
	}
	// The version bitmaps, where __bitmap_ptr puts them, when they are in this block.
	natSz, sitSz := int(raw.NATVerBitmapBytesize), int(raw.SITVerBitmapBytesize)
	payload := in.img.sb.raw.CPPayload
	switch {
	case raw.CkptFlags&cpLargeNATBitmap != 0:
		in.bitmapField("nat version bitmap", cpHeadSize+4, natSz, co)
		in.bitmapField("sit version bitmap", cpHeadSize+4+natSz, sitSz, co)
	case payload > 0:
		in.bitmapField("nat version bitmap", cpHeadSize, natSz, co)
	default:
		in.bitmapField("sit version bitmap", cpHeadSize, sitSz, co)
		in.bitmapField("nat version bitmap", cpHeadSize+sitSz, natSz, co)
	}
	stored := binary.LittleEndian.Uint32(blk[co:])
	crc := f2fsCRC(f2fsMagic, blk[:co])
	if co < cpChecksumOff {
		crc = f2fsCRC(crc, blk[co+4:])
	}
	v := fmt.Sprintf("%#08x (ok)", stored)
	if crc != stored {
		v = fmt.Sprintf("%#08x (bad: computed %#08x)", stored, crc)
	}
	in.field("checksum", co, 4, v)
}

func (in *inspector) bitmapField(name string, off, size, limit int) {
	if size <= 0 || off+size > limit {
		return
	}
	set := 0
	for _, c := range in.b.Data[off : off+size] {
		for ; c != 0; c &= c - 1 {
			set++
		}
	}
	in.field(name, off, size, fmt.Sprintf("%d of %d bits set (a set bit: that NAT/SIT block's current copy is the second)", set, size*8))
}

// orphanFields decodes struct f2fs_orphan_block.
func (in *inspector) orphanFields() {
	b := in.b.Data
	const maxOrphans = 1020
	count := 0
	for i := range maxOrphans {
		if ino := binary.LittleEndian.Uint32(b[4*i:]); ino != 0 {
			n := fmt.Sprintf("ino[%d]", i)
			in.field(n, 4*i, 4, strconv.FormatUint(uint64(ino), 10))
			in.link(n, in.nodeBlockOf(ino))
			count++
		}
	}
	in.fixed("", 4*maxOrphans, specsOf[rawOrphanTail](), nil)
}

// journalFields decodes a NAT journal (nat) or a SIT journal at byte off of the block.
func (in *inspector) journalFields(off int, nat bool) {
	b := in.b.Data
	n := int(binary.LittleEndian.Uint16(b[off:]))
	if nat {
		in.field("n_nats", off, 2, strconv.Itoa(n))
		if n > natJournalMax {
			in.problem([]int64{in.abs(in.b.Addr, off)}, "NAT journal holds %d entries, at most %d fit", n, natJournalMax)
			n = natJournalMax
		}
		for i := range n {
			eo := off + 2 + i*natJournalEntry
			// struct nat_journal_entry: a nid, then its struct f2fs_nat_entry.
			nid := binary.LittleEndian.Uint32(b[eo:])
			ne, _ := decodeAt[rawNATEntry](b, eo+4)
			ino, a := ne.Ino, ne.BlockAddr
			name := fmt.Sprintf("nat journal[%d]", i)
			in.field(name, eo, natJournalEntry, fmt.Sprintf("nid %d: inode %d, %s, version %d", nid, ino, addrWord(a), ne.Version))
			if in.img.validMain(a) {
				in.link(name, a)
			}
		}
		return
	}
	in.field("n_sits", off, 2, strconv.Itoa(n))
	if n > sitJournalMax {
		in.problem([]int64{in.abs(in.b.Addr, off)}, "SIT journal holds %d entries, at most %d fit", n, sitJournalMax)
		n = sitJournalMax
	}
	for i := range n {
		eo := off + 2 + i*sitJournalEntry
		segno := binary.LittleEndian.Uint32(b[eo:])
		// struct sit_journal_entry: a segment number, then its struct f2fs_sit_entry.
		se, _ := decodeAt[rawSITEntry](b, eo+4)
		vb := se.VBlocks
		name := fmt.Sprintf("sit journal[%d]", i)
		in.field(name, eo, sitJournalEntry, fmt.Sprintf("segment %d: %d valid, type %d (%s)", segno, f2fs.SITValid(vb), f2fs.SITType(vb), logName(f2fs.SITType(vb))))
		if segno < in.img.sb.raw.SegmentCountMain {
			in.link(name, f2fs.SegBlock(in.img.sb.raw.MainBlkaddr, segno))
		}
	}
}

func logName(t int) string {
	if n := f2fs.LogName(t); n != "" {
		return n
	}
	return "not a log type"
}

// summaryFields decodes a full summary block (an SSA block or a normal checkpoint summary) of main
// segment segno; natJ/sitJ say which journal the block's journal area holds.
func (in *inspector) summaryFields(segno uint32, natJ, sitJ bool) {
	b := in.b.Data
	start := f2fs.SegBlock(in.img.sb.raw.MainBlkaddr, segno)
	inMain := segno < in.img.sb.raw.SegmentCountMain
	for k := range blocksPerSeg {
		eo := k * sumEntrySize
		e, _ := decodeAt[rawSummary](b, eo)
		if e == (rawSummary{}) {
			continue
		}
		name := fmt.Sprintf("entry[%d]", k)
		where := ""
		if inMain {
			where = fmt.Sprintf("block %d: ", start+uint32(k))
			in.link(name, start+uint32(k))
		}
		in.field(name, eo, sumEntrySize, fmt.Sprintf("%snid %d, ofs_in_node %d, version %d", where, e.Nid, e.OfsInNode, e.Version))
	}
	switch {
	case natJ:
		in.journalFields(sumJournalOff, true)
	case sitJ:
		in.journalFields(sumJournalOff, false)
	default:
		in.field("journal", sumJournalOff, sumJournalSize, "unused here: "+hexPreview(b[sumJournalOff:sumJournalOff+sumJournalSize]))
	}
	t := b[sumFooterOff]
	in.field("footer.entry_type", sumFooterOff, 1, map[bool]string{true: "1 (node)", false: fmt.Sprintf("%d (data)", t)}[t == sumTypeNode])
	in.field("footer.check_sum", sumFooterOff+1, 4, fmt.Sprintf("%#08x (not checked by the kernel)", binary.LittleEndian.Uint32(b[sumFooterOff+1:])))
}

// compactFields decodes a compacted summary block: journals (first block) and the entries of the
// current data logs that fall in it.
func (in *inspector) compactFields(l *packLayout) {
	b := in.b.Data
	if in.b.Addr == l.sumStart {
		in.journalFields(0, true)
		in.journalFields(sumJournalSize, false)
	}
	main := in.img.sb.raw.MainBlkaddr
	for t := range 3 {
		segno := l.raw.CurDataSegno[t]
		for j := range logEntries(l.raw, t) {
			blk, off, _, err := in.img.compactPos(l, t, j)
			if err != nil || blk != in.b.Addr {
				continue
			}
			e, _ := decodeAt[rawSummary](b, off)
			name := fmt.Sprintf("%s entry[%d]", f2fs.LogName(t), j)
			addr := f2fs.SegBlock(main, segno) + j
			in.field(name, off, sumEntrySize, fmt.Sprintf("block %d: nid %d, ofs_in_node %d, version %d", addr, e.Nid, e.OfsInNode, e.Version))
			if segno < in.img.sb.raw.SegmentCountMain {
				in.link(name, addr)
			}
		}
	}
}

// sitBlock decodes a SIT block: 55 entries, in one of the two copies.
func (in *inspector) sitBlock() error {
	img, b := in.img, &in.b
	half := img.sitHalf()
	rel := b.Addr - img.sb.raw.SITBlkaddr
	copyNo, blkno := rel/half+1, rel%half
	current := testBitMSB(img.cp.sitBitmap, blkno) == (copyNo == 2)
	perBlock := uint32(f2fs.SITEntryPerBlock)
	first := blkno * perBlock
	state := "current"
	if !current {
		state = fmt.Sprintf("stale: copy %d is current", 3-copyNo)
	}
	main := img.sb.raw.SegmentCountMain
	if first >= main {
		in.role("SIT copy %d, block %d: beyond the %d main segments, unused", copyNo, blkno, main)
		return nil
	}
	in.role("SIT copy %d, block %d (%s): entries of segments %d to %d", copyNo, blkno, state, first, min(first+perBlock, main)-1)
	if b.Data == nil {
		return nil
	}
	for k := range perBlock {
		segno := first + k
		if segno >= main {
			break
		}
		eo := int(k * sitEntrySize)
		var se rawSITEntry
		if _, err := binary.Decode(b.Data[eo:eo+sitEntrySize], binary.LittleEndian, &se); err != nil {
			break
		}
		vb := se.VBlocks
		note := ""
		if _, ok := img.cp.sitJournal[segno]; ok && current {
			note = " (superseded by the SIT journal)"
		}
		pop := 0
		for _, c := range se.ValidMap {
			for ; c != 0; c &= c - 1 {
				pop++
			}
		}
		prefix := fmt.Sprintf("segment %d ", segno)
		in.fixed(prefix, eo, specsOf[rawSITEntry](), custom{
			"vblocks": func(s spec, o int) {
				in.field(prefix+s.name, o, s.size, fmt.Sprintf("%d valid, type %d (%s)%s", f2fs.SITValid(vb), f2fs.SITType(vb), logName(f2fs.SITType(vb)), note))
			},
			"valid_map": func(s spec, o int) {
				in.field(prefix+s.name, o, s.size, fmt.Sprintf("%d bits set", pop))
				in.link(prefix+s.name, f2fs.SegBlock(img.sb.raw.MainBlkaddr, segno))
			},
		})
		if current && note == "" && int(f2fs.SITValid(vb)) != pop {
			in.problem([]int64{in.abs(b.Addr, eo)}, "segment %d: vblocks says %d valid, the valid map has %d bits set", segno, f2fs.SITValid(vb), pop)
		}
	}
	return nil
}

// natBlock decodes a NAT block: 455 entries, in one of the two copies.
func (in *inspector) natBlock() error {
	img, b := in.img, &in.b
	blkno, second := f2fs.NATBlockOf(b.Addr, img.sb.raw.NATBlkaddr)
	copyNo := uint32(1)
	if second {
		copyNo = 2
	}
	current := testBitMSB(img.cp.natBitmap, blkno) == second
	perBlock := uint32(f2fs.NATEntryPerBlock)
	first := blkno * perBlock
	state := "current"
	if !current {
		state = fmt.Sprintf("stale: copy %d is current", 3-copyNo)
	}
	in.role("NAT copy %d, block %d (%s): entries of nids %d to %d", copyNo, blkno, state, first, first+perBlock-1)
	if b.Data == nil {
		return nil
	}
	for k := range perBlock {
		eo := int(k * natEntrySize)
		e, _ := decodeAt[rawNATEntry](b.Data, eo)
		ino, a := e.Ino, e.BlockAddr
		if e == (rawNATEntry{}) {
			continue
		}
		nid := first + k
		note := ""
		if _, ok := img.cp.natJournal[nid]; ok && current {
			note = " (superseded by the NAT journal)"
		}
		name := fmt.Sprintf("nid %d", nid)
		in.field(name, eo, natEntrySize, fmt.Sprintf("inode %d, %s, version %d%s", ino, addrWord(a), e.Version, note))
		if img.validMain(a) {
			in.link(name, a)
		}
	}
	return nil
}

// ssaBlock decodes an SSA block: the summary of one main segment.
func (in *inspector) ssaBlock() error {
	img, b := in.img, &in.b
	segno := b.Addr - img.sb.raw.SSABlkaddr
	if segno >= img.sb.raw.SegmentCountMain {
		in.role("SSA block %d: beyond the %d main segments, unused", segno, img.sb.raw.SegmentCountMain)
		return nil
	}
	state := ""
	if log := img.currentLog(segno); log >= 0 {
		if l, err := img.livePack(); err == nil && (log < 3 || l.nodeSums) {
			state = fmt.Sprintf(" — stale: segment %d is the current %s segment, whose live summary is in the checkpoint", segno, f2fs.LogName(log))
		}
	}
	in.role("SSA block of segment %d (blocks %d to %d)%s", segno, f2fs.SegBlock(img.sb.raw.MainBlkaddr, segno), f2fs.SegBlock(img.sb.raw.MainBlkaddr, segno)+blocksPerSeg-1, state)
	if b.Data != nil {
		in.summaryFields(segno, false, false)
	}
	return nil
}

var inlineNames = map[uint64]string{0x01: "inline_xattr", 0x02: "inline_data", 0x04: "inline_dentry", 0x08: "data_exist",
	0x10: "inline_dots", 0x20: "extra_attr", 0x40: "pin_file", 0x80: "compress_released"}
var adviseNames = map[uint64]string{0x01: "cold", 0x02: "lost_pino", 0x04: "encrypt", 0x08: "enc_name",
	0x10: "keep_size", 0x20: "hot", 0x40: "verity", 0x80: "truncate"}
var iflagNames = map[uint64]string{0x4: "compr", 0x10: "immutable", 0x20: "append", 0x40: "nodump", 0x80: "noatime",
	0x400: "nocompress", 0x1000: "index", 0x20000: "project_inherit", 0x40000000: "casefold", 0x80000000: "device_alias"}

// inodeFields decodes struct f2fs_inode from the block itself (not through the NAT, which may point
// elsewhere when the block is stale or the NAT corrupt).
func (in *inspector) inodeFields(f rawFooter) {
	img, blk := in.img, in.b.Data
	ino := f.Nid
	dec, derr := img.decodeInode(ino, blk, in.b.Addr)
	if derr != nil {
		var fe *FormatError
		off := in.abs(in.b.Addr, 0)
		if errors.As(derr, &fe) {
			off = fe.Off
		}
		in.problem([]int64{off}, "inode %d: %v", ino, derr)
	}
	var r rawInode
	if _, err := binary.Decode(blk, binary.LittleEndian, &r); err != nil {
		return
	}
	in.fixed("", 0, specsOf[rawInode](), custom{
		"i_mode":   func(s spec, o int) { in.field(s.name, o, s.size, fmt.Sprintf("%#o (%s)", r.Mode, modeType(r.Mode))) },
		"i_advise": func(s spec, o int) { in.field(s.name, o, s.size, flagNames(uint64(r.Advise), adviseNames)) },
		"i_inline": func(s spec, o int) { in.field(s.name, o, s.size, flagNames(uint64(r.Inline), inlineNames)) },
		"i_xattr_nid": func(s spec, o int) {
			in.show(s.name, o, s)
			in.link(s.name, in.nodeBlockOf(r.XattrNid))
		},
		"i_flags": func(s spec, o int) { in.field(s.name, o, s.size, flagNames(uint64(r.Flags), iflagNames)) },
		"i_pino": func(s spec, o int) {
			in.show(s.name, o, s)
			if r.Pino != 0 {
				in.link(s.name, in.nodeBlockOf(r.Pino))
			}
		},
		"i_name": func(s spec, o int) {
			nl := int(min(r.Namelen, maxNameLen))
			in.field(s.name, o, max(nl, 1), quotePreview(r.Name[:nl]))
		},
		"i_ext": func(s spec, o int) {
			in.field(s.name, o, s.size, fmt.Sprintf("fofs %d, blk_addr %d, len %d", r.Ext.Fofs, r.Ext.Blkaddr, r.Ext.Len))
			if img.validMain(r.Ext.Blkaddr) && r.Ext.Len > 0 {
				in.link(s.name, r.Ext.Blkaddr)
			}
		},
	})
	extra, xattr := 0, 0
	var ds Inode
	if derr == nil {
		ds = dec
		extra, xattr = int(dec.ExtraISize), int(dec.InlineXattrSize)
		if derr == nil && dec.Checksum == "bad" {
			in.problem([]int64{in.abs(in.b.Addr, inodeAddrOff+offsetOf[rawExtraAttr]("i_inode_checksum"))}, "inode %d: i_inode_checksum does not match the inode", ino)
		}
	} else if blk[3]&(inlineXattr|inlineDentry) != 0 {
		xattr = inlineXattrDef
	}
	if extra > 0 {
		var keep []spec
		for _, s := range specsOf[rawExtraAttr]() {
			if s.off+s.size <= extra {
				keep = append(keep, s)
			}
		}
		in.fixed("", inodeAddrOff, keep, nil)
	}
	inline := blk[3]&(inlineData|inlineDentry) != 0
	addrs := defAddrsPerInode - extra/4 - xattr
	if derr == nil {
		addrs = ds.AddrsPerInode
	}
	switch {
	case inline && derr == nil:
		o := inlineOff(ds)
		size := img.maxInline(ds)
		if blk[3]&inlineDentry != 0 {
			in.dentryArea(blk[o:o+size], inlineDentryArea(size), o, ds)
		} else {
			n := int(min(max(ds.Size, 0), int64(size)))
			in.field("inline data", o, max(n, 1), quotePreview(blk[o:o+n]))
		}
	case !inline:
		base := inodeAddrOff + extra
		for k := range max(addrs, 0) {
			a := binary.LittleEndian.Uint32(blk[base+4*k:])
			if a == NullAddr {
				continue
			}
			name := fmt.Sprintf("i_addr[%d]", extra/4+k)
			in.field(name, base+4*k, 4, fmt.Sprintf("file block %d: %s", k, addrWord(a)))
			if img.validMain(a) {
				in.link(name, a)
			}
		}
	}
	if xattr > 0 {
		xo := inodeNidOff - 4*xattr
		in.field("inline xattrs", xo, 4*xattr, hexPreview(blk[xo:inodeNidOff]))
	}
	for k := range 5 {
		nid := binary.LittleEndian.Uint32(blk[inodeNidOff+4*k:])
		name := fmt.Sprintf("i_nid[%d]", k)
		kind := [5]string{"direct", "direct", "indirect", "indirect", "double indirect"}[k]
		in.field(name, inodeNidOff+4*k, 4, fmt.Sprintf("%d (%s)", nid, kind))
		in.link(name, in.nodeBlockOf(nid))
	}
}

// directFields decodes a direct node's 1018 addresses; owner (may be nil) gives the file indexes.
func (in *inspector) directFields(owner *File, nofs uint32) {
	blk := in.b.Data
	var start uint64
	known := owner != nil
	if known {
		start = startBidx(nofs, &owner.inode)
	}
	for k := range defAddrsPerBlock {
		a := binary.LittleEndian.Uint32(blk[4*k:])
		if a == NullAddr {
			continue
		}
		name := fmt.Sprintf("addr[%d]", k)
		v := addrWord(a)
		if known {
			v = fmt.Sprintf("file block %d: %s", start+uint64(k), v)
		}
		in.field(name, 4*k, 4, v)
		if in.img.validMain(a) {
			in.link(name, a)
		}
	}
}

// indirectFields decodes an indirect node's 1018 nids, linking each to its node block.
func (in *inspector) indirectFields() {
	blk := in.b.Data
	for k := range nidsPerBlock {
		nid := binary.LittleEndian.Uint32(blk[4*k:])
		if nid == 0 {
			continue
		}
		name := fmt.Sprintf("nid[%d]", k)
		a := in.nodeBlockOf(nid)
		in.field(name, 4*k, 4, fmt.Sprintf("nid %d: %s", nid, addrWord(a)))
		in.link(name, a)
	}
}

// nodeFooterFields decodes struct node_footer.
func (in *inspector) nodeFooterFields(f rawFooter) {
	fo := int(in.img.bs) - footerSize
	in.fixed("footer.", fo, specsOf[rawFooter](), custom{
		"flag": func(s spec, o int) {
			var marks []string
			for bit, n := range []string{"cold", "fsync", "dentry"} {
				if f.Flag&(1<<bit) != 0 {
					marks = append(marks, n)
				}
			}
			v := fmt.Sprintf("node offset %d", f.Flag>>3)
			if f.Flag>>3 == xattrNodeOfs {
				v = "xattr node"
			}
			if len(marks) > 0 {
				v += ", " + strings.Join(marks, ", ")
			}
			in.field("footer."+s.name, o, s.size, v)
		},
	})
	if in.img.validMain(f.NextBlkaddr) {
		in.link("footer.next_blkaddr", f.NextBlkaddr)
	}
	if f.Ino != 0 && f.Ino != f.Nid {
		in.link("footer.ino", in.nodeBlockOf(f.Ino))
	}
}

// dentryFields decodes a dentry block of directory dir.
func (in *inspector) dentryFields(dir *File) {
	in.dentryArea(in.b.Data, dentryBlockArea, 0, dir.inode)
}

var fileTypeNames = [...]string{"unknown", "regular", "dir", "chardev", "blockdev", "fifo", "socket", "symlink"}

// dentryArea decodes the bitmap, entries and names of a dentry area at byte base of the block.
func (in *inspector) dentryArea(area []byte, lay dentryArea, base int, dir Inode) {
	bm := area[lay.bitmapOff : lay.bitmapOff+(lay.nr+7)/8]
	used := 0
	for i := range lay.nr {
		if bm[i/8]&(1<<(i%8)) != 0 {
			used++
		}
	}
	in.field("dentry bitmap", base+lay.bitmapOff, len(bm), fmt.Sprintf("%d of %d slots in use", used, lay.nr))
	hashable := dir.Advise&(adviseEncrypt|adviseEncryptName) == 0 && dir.Flags&flagCasefold == 0
	bad := func(eo int, msg string, val any) {
		in.problem([]int64{in.abs(in.b.Addr, base+eo)}, "%s", msg)
	}
	scanDentries(area, lay, bad, func(d dentryRef) bool {
		tn := "?"
		if int(d.ftype) < len(fileTypeNames) {
			tn = fileTypeNames[d.ftype]
		}
		name := fmt.Sprintf("dentry[%d]", d.slot)
		shown := string(d.name)
		if !utf8.Valid(d.name) || dir.Advise&adviseEncrypt != 0 {
			shown = "~" + hex.EncodeToString(d.name)
		}
		in.field(name, base+d.entOff, dentrySize, fmt.Sprintf("%q: inode %d, %s, hash %#08x", shown, d.ino, tn, d.hash))
		in.field(fmt.Sprintf("name[%d]", d.slot), base+d.nameOff, d.nameLen, strconv.Quote(shown))
		if d.ino != 0 && d.ino < in.img.maxNid {
			in.link(name, in.nodeBlockOf(d.ino))
		}
		if hashable {
			if want := dentryHash(d.name); want != d.hash {
				in.problem([]int64{in.abs(in.b.Addr, base+d.entOff)}, "dentry %d (%q): stored hash %#08x, the name hashes to %#08x", d.slot, shown, d.hash, want)
			}
		}
		return true
	})
}
