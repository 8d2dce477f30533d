package imgio

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"unicode/utf16"

	"github.com/zrviz/zrviz/internal/f2fs"
)

// Feature bits of the superblock's feature field (F2FS_FEATURE_*).
const (
	featEncrypt       = 0x1
	featBlkzoned      = 0x2
	featExtraAttr     = 0x8
	featInodeChecksum = 0x20
	featFlexXattr     = 0x40
	featSBChecksum    = 0x800
	featCompression   = 0x2000
)

// featureNames lists the feature bits in bit order, with the names f2fs-tools and sysfs use.
var featureNames = [...]struct {
	bit  uint32
	name string
}{
	{featEncrypt, "encrypt"}, {featBlkzoned, "blkzoned"}, {0x4, "atomic_write"}, {featExtraAttr, "extra_attr"},
	{0x10, "project_quota"}, {featInodeChecksum, "inode_checksum"}, {featFlexXattr, "flexible_inline_xattr"},
	{0x80, "quota_ino"}, {0x100, "inode_crtime"}, {0x200, "lost_found"}, {0x400, "verity"},
	{featSBChecksum, "sb_checksum"}, {0x1000, "casefold"}, {featCompression, "compression"}, {0x4000, "ro"},
	{0x8000, "device_alias"}, {0x10000, "packed_ssa"},
}

// featureList names the bits set in f; unknown bits are shown in hex so they are never hidden.
func featureList(f uint32) []string {
	out := []string{}
	for _, n := range featureNames {
		if f&n.bit != 0 {
			out = append(out, n.name)
			f &^= n.bit
		}
	}
	for bit := uint32(1); bit != 0; bit <<= 1 {
		if f&bit != 0 {
			out = append(out, fmt.Sprintf("0x%x", bit))
		}
	}
	return out
}

// superblock is the validated superblock with the derived geometry the reader needs.
type superblock struct {
	raw       rawSuperblock
	off       int64  // byte offset of the copy in use
	blockSize uint32 // bytes
	maxBlk    uint32 // MAX_BLKADDR = segment0 + segment_count·512
}

// readSuperblock reads copy 0 at byte 1024 and falls back to copy 1 at BS+1024 when copy 0 is missing or
// invalid, as the kernel does. ErrNotF2FS is returned only when neither copy has the magic.
func readSuperblock(img *Image) (*superblock, error) {
	sb, magic, err := findSuperblock(img, img.size)
	if !magic {
		// Say where the magic was looked for: a user holding a partition table or a tar file instead
		// of a filesystem image learns what was expected.
		return nil, fmt.Errorf("%w: no magic 0xF2F52010 at byte 0x%x or 0x%x (%d-byte input)",
			ErrNotF2FS, sbOffset, sbOffset+f2fs.BlockSize, img.size)
	}
	return sb, err
}

// findSuperblock is readSuperblock's search, with block_count checked against devSize (the device
// size the kernel would compare it with). magic reports whether either copy carries the magic.
func findSuperblock(img *Image, devSize int64) (sb *superblock, magic bool, err error) {
	var firstErr error
	for copyNo := range 2 {
		off := int64(sbOffset + copyNo*f2fs.BlockSize)
		buf := make([]byte, sbSize)
		if err := img.readAt(buf, off, "superblock"); err != nil {
			if firstErr == nil && magic {
				firstErr = err
			}
			continue
		}
		if binary.LittleEndian.Uint32(buf) != f2fsMagic {
			continue
		}
		magic = true
		sb, err := decodeSuperblock(buf, off, devSize)
		if err == nil {
			return sb, true, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, magic, firstErr
}

func decodeSuperblock(buf []byte, off int64, imgSize int64) (*superblock, error) {
	sb := &superblock{off: off}
	if _, err := binary.Decode(buf, binary.LittleEndian, &sb.raw); err != nil {
		return nil, formatErr(off, "superblock", "short", err.Error())
	}
	r := &sb.raw
	bad := func(field int64, msg string, val any) error {
		return formatErr(off+field, "superblock", msg, val)
	}
	if r.Feature&featSBChecksum != 0 {
		if r.ChecksumOffset != sbChecksumOff {
			return nil, bad(0x20, "bad checksum_offset", r.ChecksumOffset)
		}
		if got := f2fsCRC(f2fsMagic, buf[:sbChecksumOff]); got != r.CRC {
			return nil, bad(sbChecksumOff, "bad crc", fmt.Sprintf("stored 0x%08x, computed 0x%08x", r.CRC, got))
		}
	}
	if r.LogSectorsize < 9 || r.LogSectorsize > 12 {
		return nil, bad(0x08, "bad log_sectorsize", r.LogSectorsize)
	}
	if r.LogBlocksize < 9 || r.LogBlocksize > 16 || r.LogSectorsize+r.LogSectorsPerBlock != r.LogBlocksize {
		return nil, bad(0x10, "bad log_blocksize", r.LogBlocksize)
	}
	// Every table size below (NAT entries per block, dentries per block, 1018 slots per node) follows
	// from the block size; only 4 KiB is handled.
	if r.LogBlocksize != f2fs.LogBlockSize {
		return nil, &UnsupportedError{Feature: fmt.Sprintf("block size %d", uint64(1)<<r.LogBlocksize), Off: off + 0x10}
	}
	sb.blockSize = 1 << r.LogBlocksize
	if r.LogBlocksPerSeg != f2fs.LogBlocksPerSeg {
		return nil, bad(0x14, "bad log_blocks_per_seg", r.LogBlocksPerSeg)
	}
	if r.SegsPerSec == 0 || r.SegsPerSec > r.SegmentCount || r.SecsPerZone == 0 || r.SecsPerZone > r.SectionCount {
		return nil, bad(0x18, "bad segs_per_sec/secs_per_zone", fmt.Sprintf("%d/%d", r.SegsPerSec, r.SecsPerZone))
	}
	if r.SegmentCountMain == 0 || r.SectionCount == 0 || uint64(r.SectionCount)*uint64(r.SegsPerSec) != uint64(r.SegmentCountMain) {
		return nil, bad(0x2C, "section_count does not match segment_count_main", r.SectionCount)
	}
	if r.SegmentCountCkpt < 2 || r.SegmentCountSIT < 2 || r.SegmentCountSIT%2 != 0 ||
		r.SegmentCountNAT < 2 || r.SegmentCountNAT%2 != 0 || r.SegmentCountSSA == 0 {
		return nil, bad(0x34, "bad metadata segment counts",
			fmt.Sprintf("ckpt %d sit %d nat %d ssa %d", r.SegmentCountCkpt, r.SegmentCountSIT, r.SegmentCountNAT, r.SegmentCountSSA))
	}
	end := uint64(r.Segment0Blkaddr) + uint64(r.SegmentCount)<<f2fs.LogBlocksPerSeg
	if end > 1<<32 || end > r.BlockCount {
		return nil, bad(0x30, "segment_count beyond block_count", r.SegmentCount)
	}
	sb.maxBlk = uint32(end)
	// The area chain cp → sit → nat → ssa → main must be contiguous (sanity_check_area_boundary).
	chain := []struct {
		field       int64
		name        string
		addr, start uint64
	}{
		{0x4C, "cp_blkaddr", uint64(r.CPBlkaddr), uint64(r.Segment0Blkaddr)},
		{0x50, "sit_blkaddr", uint64(r.SITBlkaddr), uint64(r.CPBlkaddr) + uint64(r.SegmentCountCkpt)<<f2fs.LogBlocksPerSeg},
		{0x54, "nat_blkaddr", uint64(r.NATBlkaddr), uint64(r.SITBlkaddr) + uint64(r.SegmentCountSIT)<<f2fs.LogBlocksPerSeg},
		{0x58, "ssa_blkaddr", uint64(r.SSABlkaddr), uint64(r.NATBlkaddr) + uint64(r.SegmentCountNAT)<<f2fs.LogBlocksPerSeg},
		{0x5C, "main_blkaddr", uint64(r.MainBlkaddr), uint64(r.SSABlkaddr) + uint64(r.SegmentCountSSA)<<f2fs.LogBlocksPerSeg},
	}
	for _, c := range chain {
		if c.addr != c.start {
			return nil, bad(c.field, "areas not contiguous: "+c.name, c.addr)
		}
	}
	if uint64(r.MainBlkaddr)+uint64(r.SegmentCountMain)<<f2fs.LogBlocksPerSeg > end {
		return nil, bad(0x44, "main area beyond segment_count", r.SegmentCountMain)
	}
	if uint64(r.SegmentCountSSA) < uint64(r.SegmentCountMain)/blocksPerSeg {
		return nil, bad(0x40, "SSA too small for main area", r.SegmentCountSSA)
	}
	if uint64(r.SegmentCountMain) > uint64(r.SegmentCountSIT/2)<<f2fs.LogBlocksPerSeg*f2fs.SITEntryPerBlock {
		return nil, bad(0x38, "SIT too small for main area", r.SegmentCountSIT)
	}
	if r.CPPayload > blocksPerSeg-4 {
		return nil, bad(0x680, "bad cp_payload", r.CPPayload)
	}
	if r.RootIno < 3 || r.NodeIno != 1 || r.MetaIno != 2 {
		return nil, bad(0x60, "bad reserved inode numbers", fmt.Sprintf("root %d node %d meta %d", r.RootIno, r.NodeIno, r.MetaIno))
	}
	// The kernel refuses a device smaller than block_count; so do we, which also bounds every table
	// size below by the image size.
	if r.BlockCount > uint64(imgSize)/uint64(sb.blockSize) {
		return nil, truncatedErr(sb, imgSize)
	}
	if r.Feature&featBlkzoned != 0 {
		return nil, &UnsupportedError{Feature: "blkzoned", Off: off + 0x884}
	}
	if r.Devs[0].Path[0] != 0 {
		return nil, &UnsupportedError{Feature: "multi-device", Off: off + 0x899}
	}
	return sb, nil
}

// cString returns b up to its first NUL.
func cString(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// volumeName decodes the UTF-16LE volume_name up to its first NUL unit.
func volumeName(u []uint16) string {
	for i, c := range u {
		if c == 0 {
			u = u[:i]
			break
		}
	}
	return string(utf16.Decode(u))
}

func formatUUID(u [16]byte) string {
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// truncatedErr is the *TruncatedError of an image of size bytes shorter than sb's volume. The
// superblock was checked first (the areas chain up to segment_count, which block_count bounds), so
// the area bounds are those of a sound superblock.
func truncatedErr(sb *superblock, size int64) error {
	r := &sb.raw
	bs := int64(sb.blockSize)
	e := &TruncatedError{Size: size, Need: int64(r.BlockCount) * bs, BlockCount: r.BlockCount, BlockSize: sb.blockSize,
		Off: sb.off + 0x24}
	areas := []struct {
		name string
		from int64 // block address
	}{
		{"the superblock area", 0},
		{"the checkpoint area", int64(r.CPBlkaddr)},
		{"the SIT", int64(r.SITBlkaddr)},
		{"the NAT", int64(r.NATBlkaddr)},
		{"the SSA", int64(r.SSABlkaddr)},
		{"the main area", int64(r.MainBlkaddr)},
		{"the blocks after the main area", int64(r.MainBlkaddr) + int64(r.SegmentCountMain)<<f2fs.LogBlocksPerSeg},
		{"", int64(r.BlockCount)},
	}
	for i := 0; i+1 < len(areas); i++ {
		from, to := areas[i].from*bs, areas[i+1].from*bs
		if size < to && to > from {
			e.Area, e.AreaFrom, e.AreaTo = areas[i].name, from, to
			break
		}
	}
	return e
}
