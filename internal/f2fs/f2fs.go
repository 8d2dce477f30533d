// Package f2fs holds the F2FS on-disk and kernel constants and formulas zrviz uses, each defined once:
// the reader (imgio), the engine (core), checkpoint and garbage collection (gc) and the packages around
// them all import it, and it imports nothing of zrviz, so none of them needs a copy. Names cite the
// kernel's (include/linux/f2fs_fs.h, fs/f2fs/f2fs.h, fs/f2fs/segment.h, Linux 6.12).
//
// zrviz reads and models 4096-byte blocks and 512-block segments only (imgio refuses other
// geometries, core's input check too); the formulas below take that for granted rather than
// carrying log_blocksize and log_blocks_per_seg around.
package f2fs

// Geometry.
const (
	// LogBlockSize is F2FS_BLKSIZE_BITS (f2fs_fs.h), the superblock's log_blocksize for BlockSize.
	LogBlockSize = 12
	// BlockSize is F2FS_BLKSIZE (f2fs_fs.h), the only block size zrviz takes.
	BlockSize = 1 << LogBlockSize
	// LogBlocksPerSeg is log_blocks_per_seg, the shift of the kernel's BLKS_PER_SEG and
	// SEGS_TO_BLKS/BLKS_TO_SEGS: 9 for every volume zrviz takes.
	LogBlocksPerSeg = 9
	// BlocksPerSeg is BLKS_PER_SEG (segment.h), 1 << log_blocks_per_seg: 512.
	BlocksPerSeg = 1 << LogBlocksPerSeg
	// SmallVolumeSegments is SMALL_VOLUME_SEGMENTS (segment.h:712), 16·512 main segments (16 GiB): a
	// volume of at most this many gets alloc_mode=reuse and ipu_policy FORCE|HONOR_OPU_WRITE by default
	// (f2fs_tuning_parameters).
	SmallVolumeSegments = 16 * BlocksPerSeg
)

// Special block addresses in a data slot (f2fs_fs.h:23–25). Any other value is a block address.
const (
	// NullAddr is NULL_ADDR: a hole, no block, counted nowhere.
	NullAddr uint32 = 0x00000000
	// NewAddr is NEW_ADDR: a block reserved and never written; counted, reads as zeros, no SIT bit.
	NewAddr uint32 = 0xFFFFFFFF
	// CompressAddr is COMPRESS_ADDR: the marker in slot 0 of a compressed cluster, not a block.
	CompressAddr uint32 = 0xFFFFFFFE
)

// NullSegno is NULL_SEGNO (segment.h): no segment.
const NullSegno = ^uint32(0)

// Node capacities (f2fs_fs.h).
const (
	// DefAddrsPerInode is DEF_ADDRS_PER_INODE: the data slots of an inode block before the extra
	// attributes and inline xattrs take theirs.
	DefAddrsPerInode = 923
	// DefAddrsPerBlock is DEF_ADDRS_PER_BLOCK: the data slots of a direct node (ADDRS_PER_BLOCK rounds
	// it down to the cluster size for a compressed inode).
	DefAddrsPerBlock = 1018
	// NidsPerBlock is NIDS_PER_BLOCK: the children of an indirect node.
	NidsPerBlock = 1018
	// DefaultInlineXattrAddrs is DEFAULT_INLINE_XATTR_ADDRS: the inode words inline xattrs take.
	DefaultInlineXattrAddrs = 50
	// InodeAddrOffset is offsetof(struct f2fs_inode, i_addr): the byte where an inode block's data
	// slots start (the extra attributes, i_extra_isize bytes, come first when the inode has them).
	InodeAddrOffset = 360
	// InodeNidOffset is offsetof(struct f2fs_inode, i_nid): the five node ids after i_addr[923].
	InodeNidOffset = InodeAddrOffset + 4*DefAddrsPerInode
)

// NAT and SIT tables (f2fs_fs.h).
const (
	// NATEntrySize is sizeof(struct f2fs_nat_entry).
	NATEntrySize = 9
	// NATEntryPerBlock is NAT_ENTRY_PER_BLOCK: 455 entries in a NAT block.
	NATEntryPerBlock = BlockSize / NATEntrySize
	// SITEntrySize is sizeof(struct f2fs_sit_entry): vblocks, the 64-byte valid map, mtime.
	SITEntrySize = 74
	// SITEntryPerBlock is SIT_ENTRY_PER_BLOCK: 55 entries in a SIT block.
	SITEntryPerBlock = BlockSize / SITEntrySize
	// SITVBlocksShift is SIT_VBLOCKS_SHIFT: a SIT entry's vblocks holds the log type above this bit.
	SITVBlocksShift = 10
	// SITVBlocksMask is SIT_VBLOCKS_MASK: a SIT entry's vblocks holds the valid count below it.
	SITVBlocksMask = 1<<SITVBlocksShift - 1
)

// SITValid is GET_SIT_VBLOCKS: the valid block count in a SIT entry's vblocks.
func SITValid(vblocks uint16) uint32 { return uint32(vblocks & SITVBlocksMask) }

// SITType is GET_SIT_TYPE: the log type (a CURSEG_* number) in a SIT entry's vblocks.
func SITType(vblocks uint16) int { return int(vblocks >> SITVBlocksShift) }

// Checkpoint flags, the bits of struct f2fs_checkpoint's ckpt_flags (f2fs_fs.h CP_*_FLAG), untyped as
// the kernel's #defines are: ckpt_flags is a __le32, the inspector's flag table a map[uint64]string.
const (
	CPUmountFlag         = 0x00000001 // CP_UMOUNT_FLAG
	CPOrphanPresentFlag  = 0x00000002 // CP_ORPHAN_PRESENT_FLAG
	CPCompactSumFlag     = 0x00000004 // CP_COMPACT_SUM_FLAG
	CPErrorFlag          = 0x00000008 // CP_ERROR_FLAG
	CPFsckFlag           = 0x00000010 // CP_FSCK_FLAG
	CPFastbootFlag       = 0x00000020 // CP_FASTBOOT_FLAG
	CPCRCRecoveryFlag    = 0x00000040 // CP_CRC_RECOVERY_FLAG
	CPNATBitsFlag        = 0x00000080 // CP_NAT_BITS_FLAG
	CPTrimmedFlag        = 0x00000100 // CP_TRIMMED_FLAG
	CPNoCRCRecoveryFlag  = 0x00000200 // CP_NOCRC_RECOVERY_FLAG
	CPLargeNATBitmapFlag = 0x00000400 // CP_LARGE_NAT_BITMAP_FLAG
	CPQuotaNeedFsckFlag  = 0x00000800 // CP_QUOTA_NEED_FSCK_FLAG
	CPDisabledFlag       = 0x00001000 // CP_DISABLED_FLAG
	CPDisabledQuickFlag  = 0x00002000 // CP_DISABLED_QUICK_FLAG
	CPResizefsFlag       = 0x00004000 // CP_RESIZEFS_FLAG
)

// The logs, numbered as the kernel's CURSEG_* (f2fs.h, enum log_type order in segment.h).
const (
	CursegHotData = iota
	CursegWarmData
	CursegColdData
	CursegHotNode
	CursegWarmNode
	CursegColdNode
	NrCursegType // NR_CURSEG_TYPE: the six logs
)

// LogName names a log (a CURSEG_* number) as zrviz shows and serves it ("hot-data" … "cold-node"),
// or "" for a number that is no log (a free segment's SIT type may be anything).
func LogName(t int) string {
	if t < 0 || t >= NrCursegType {
		return ""
	}
	return logNames[t]
}

var logNames = [NrCursegType]string{"hot-data", "warm-data", "cold-data", "hot-node", "warm-node", "cold-node"}

// SegNo is GET_SEGNO_FROM_SEG0 counted from the main area, as GET_SEGNO does for a main-area block: the
// segment of block addr, (addr − main_blkaddr) / 512. It takes uint64 too, for the bounds a synthetic
// volume computes past 2^32 without wrapping.
func SegNo[A ~uint32 | ~uint64](addr, mainBlkaddr A) A { return (addr - mainBlkaddr) / BlocksPerSeg }

// SegOff is GET_BLKOFF_FROM_SEG0: block addr's offset in its segment, (addr − base) mod 512, base being
// segment0_blkaddr or main_blkaddr (the main area starts on a segment boundary, so both agree).
func SegOff(addr, base uint32) uint32 { return (addr - base) % BlocksPerSeg }

// SegBlock is the first block of main-area segment segno (START_BLOCK counted from main_blkaddr).
func SegBlock(mainBlkaddr, segno uint32) uint32 { return mainBlkaddr + segno*BlocksPerSeg }

// NATBlockAddr is current_nat_addr's first copy: NAT block b lives at nat_blkaddr + (b/512)·2·512 +
// b mod 512, the pairs of NAT segments alternating; its second copy is 512 blocks further.
func NATBlockAddr(natBlkaddr, b uint32) uint32 {
	return natBlkaddr + 2*BlocksPerSeg*(b/BlocksPerSeg) + b%BlocksPerSeg
}

// NATBlockOf is NATBlockAddr's inverse: the NAT block number b that block addr of the NAT area holds,
// and whether addr is b's second copy.
func NATBlockOf(addr, natBlkaddr uint32) (b uint32, second bool) {
	rel := addr - natBlkaddr
	pair, within := rel/(2*BlocksPerSeg), rel%(2*BlocksPerSeg)
	return pair*BlocksPerSeg + within%BlocksPerSeg, within >= BlocksPerSeg
}
