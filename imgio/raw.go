package imgio

import "github.com/zrviz/zrviz/internal/f2fs"

// Raw on-disk structures, field for field as in include/linux/f2fs_fs.h. They are decoded with
// binary.Decode (little-endian, packed) and validated before anything else looks at them.

// rawSuperblock is struct f2fs_super_block, 3072 bytes at byte 1024 of blocks 0 and 1.
type rawSuperblock struct {
	Magic              uint32       `f2fs:"magic,hex"`             // 0x000 magic
	MajorVer           uint16       `f2fs:"major_ver"`             // 0x004 major_ver
	MinorVer           uint16       `f2fs:"minor_ver"`             // 0x006 minor_ver
	LogSectorsize      uint32       `f2fs:"log_sectorsize"`        // 0x008 log_sectorsize
	LogSectorsPerBlock uint32       `f2fs:"log_sectors_per_block"` // 0x00C log_sectors_per_block
	LogBlocksize       uint32       `f2fs:"log_blocksize"`         // 0x010 log_blocksize
	LogBlocksPerSeg    uint32       `f2fs:"log_blocks_per_seg"`    // 0x014 log_blocks_per_seg
	SegsPerSec         uint32       `f2fs:"segs_per_sec"`          // 0x018 segs_per_sec
	SecsPerZone        uint32       `f2fs:"secs_per_zone"`         // 0x01C secs_per_zone
	ChecksumOffset     uint32       `f2fs:"checksum_offset"`       // 0x020 checksum_offset
	BlockCount         uint64       `f2fs:"block_count"`           // 0x024 block_count
	SectionCount       uint32       `f2fs:"section_count"`         // 0x02C section_count
	SegmentCount       uint32       `f2fs:"segment_count"`         // 0x030 segment_count
	SegmentCountCkpt   uint32       `f2fs:"segment_count_ckpt"`    // 0x034 segment_count_ckpt
	SegmentCountSIT    uint32       `f2fs:"segment_count_sit"`     // 0x038 segment_count_sit
	SegmentCountNAT    uint32       `f2fs:"segment_count_nat"`     // 0x03C segment_count_nat
	SegmentCountSSA    uint32       `f2fs:"segment_count_ssa"`     // 0x040 segment_count_ssa
	SegmentCountMain   uint32       `f2fs:"segment_count_main"`    // 0x044 segment_count_main
	Segment0Blkaddr    uint32       `f2fs:"segment0_blkaddr"`      // 0x048 segment0_blkaddr
	CPBlkaddr          uint32       `f2fs:"cp_blkaddr"`            // 0x04C cp_blkaddr
	SITBlkaddr         uint32       `f2fs:"sit_blkaddr"`           // 0x050 sit_blkaddr
	NATBlkaddr         uint32       `f2fs:"nat_blkaddr"`           // 0x054 nat_blkaddr
	SSABlkaddr         uint32       `f2fs:"ssa_blkaddr"`           // 0x058 ssa_blkaddr
	MainBlkaddr        uint32       `f2fs:"main_blkaddr"`          // 0x05C main_blkaddr
	RootIno            uint32       `f2fs:"root_ino"`              // 0x060 root_ino
	NodeIno            uint32       `f2fs:"node_ino"`              // 0x064 node_ino
	MetaIno            uint32       `f2fs:"meta_ino"`              // 0x068 meta_ino
	UUID               [16]byte     `f2fs:"uuid"`                  // 0x06C uuid
	VolumeName         [512]uint16  `f2fs:"volume_name"`           // 0x07C volume_name (UTF-16LE)
	ExtensionCount     uint32       `f2fs:"extension_count"`       // 0x47C extension_count
	ExtensionList      [64][8]byte  `f2fs:"extension_list"`        // 0x480 extension_list
	CPPayload          uint32       `f2fs:"cp_payload"`            // 0x680 cp_payload
	Version            [256]byte    `f2fs:"version,str"`           // 0x684 version
	InitVersion        [256]byte    `f2fs:"init_version,str"`      // 0x784 init_version
	Feature            uint32       `f2fs:"feature"`               // 0x884 feature
	EncryptionLevel    uint8        `f2fs:"encryption_level"`      // 0x888 encryption_level
	EncryptPwSalt      [16]byte     `f2fs:"encrypt_pw_salt,bytes"` // 0x889 encrypt_pw_salt
	Devs               [8]rawDevice `f2fs:"devs,bytes"`            // 0x899 devs
	QfIno              [3]uint32    `f2fs:"qf_ino"`                // 0xAB9 qf_ino
	HotExtCount        uint8        `f2fs:"hot_ext_count"`         // 0xAC5 hot_ext_count
	SEncoding          uint16       `f2fs:"s_encoding"`            // 0xAC6 s_encoding
	SEncodingFlags     uint16       `f2fs:"s_encoding_flags,hex"`  // 0xAC8 s_encoding_flags
	SStopReason        [32]byte     `f2fs:"s_stop_reason,bytes"`   // 0xACA s_stop_reason
	SErrors            [16]byte     `f2fs:"s_errors,bytes"`        // 0xAEA s_errors
	Reserved           [258]byte    `f2fs:"reserved,bytes"`        // 0xAFA reserved
	CRC                uint32       `f2fs:"crc"`                   // 0xBFC crc
}

// rawDevice is struct f2fs_device (multi-device volumes), 68 bytes.
type rawDevice struct {
	Path          [64]byte `f2fs:"path"`           // 0x00 path
	TotalSegments uint32   `f2fs:"total_segments"` // 0x40 total_segments
}

// rawCheckpoint is the fixed 192-byte head of struct f2fs_checkpoint; sit_nat_version_bitmap follows.
type rawCheckpoint struct {
	CheckpointVer         uint64    `f2fs:"checkpoint_ver"`            // 0x00 checkpoint_ver
	UserBlockCount        uint64    `f2fs:"user_block_count"`          // 0x08 user_block_count
	ValidBlockCount       uint64    `f2fs:"valid_block_count"`         // 0x10 valid_block_count
	RsvdSegmentCount      uint32    `f2fs:"rsvd_segment_count"`        // 0x18 rsvd_segment_count
	OverprovSegmentCount  uint32    `f2fs:"overprov_segment_count"`    // 0x1C overprov_segment_count
	FreeSegmentCount      uint32    `f2fs:"free_segment_count"`        // 0x20 free_segment_count
	CurNodeSegno          [8]uint32 `f2fs:"cur_node_segno"`            // 0x24 cur_node_segno
	CurNodeBlkoff         [8]uint16 `f2fs:"cur_node_blkoff"`           // 0x44 cur_node_blkoff
	CurDataSegno          [8]uint32 `f2fs:"cur_data_segno"`            // 0x54 cur_data_segno
	CurDataBlkoff         [8]uint16 `f2fs:"cur_data_blkoff"`           // 0x74 cur_data_blkoff
	CkptFlags             uint32    `f2fs:"ckpt_flags"`                // 0x84 ckpt_flags
	CPPackTotalBlockCount uint32    `f2fs:"cp_pack_total_block_count"` // 0x88 cp_pack_total_block_count
	CPPackStartSum        uint32    `f2fs:"cp_pack_start_sum"`         // 0x8C cp_pack_start_sum
	ValidNodeCount        uint32    `f2fs:"valid_node_count"`          // 0x90 valid_node_count
	ValidInodeCount       uint32    `f2fs:"valid_inode_count"`         // 0x94 valid_inode_count
	NextFreeNid           uint32    `f2fs:"next_free_nid"`             // 0x98 next_free_nid
	SITVerBitmapBytesize  uint32    `f2fs:"sit_ver_bitmap_bytesize"`   // 0x9C sit_ver_bitmap_bytesize
	NATVerBitmapBytesize  uint32    `f2fs:"nat_ver_bitmap_bytesize"`   // 0xA0 nat_ver_bitmap_bytesize
	ChecksumOffset        uint32    `f2fs:"checksum_offset"`           // 0xA4 checksum_offset
	ElapsedTime           uint64    `f2fs:"elapsed_time"`              // 0xA8 elapsed_time
	AllocType             [16]uint8 `f2fs:"alloc_type"`                // 0xB0 alloc_type
}

// rawInode is the head of struct f2fs_inode up to i_addr (360 bytes); i_addr[923] and i_nid[5] are read
// with offset loops because part of i_addr may hold extra attributes or inline data.
type rawInode struct {
	Mode         uint16    `f2fs:"i_mode"`          // 0x000 i_mode
	Advise       uint8     `f2fs:"i_advise"`        // 0x002 i_advise
	Inline       uint8     `f2fs:"i_inline"`        // 0x003 i_inline
	UID          uint32    `f2fs:"i_uid"`           // 0x004 i_uid
	GID          uint32    `f2fs:"i_gid"`           // 0x008 i_gid
	Links        uint32    `f2fs:"i_links"`         // 0x00C i_links
	Size         uint64    `f2fs:"i_size"`          // 0x010 i_size
	Blocks       uint64    `f2fs:"i_blocks"`        // 0x018 i_blocks
	Atime        uint64    `f2fs:"i_atime,time"`    // 0x020 i_atime
	Ctime        uint64    `f2fs:"i_ctime,time"`    // 0x028 i_ctime
	Mtime        uint64    `f2fs:"i_mtime,time"`    // 0x030 i_mtime
	AtimeNsec    uint32    `f2fs:"i_atime_nsec"`    // 0x038 i_atime_nsec
	CtimeNsec    uint32    `f2fs:"i_ctime_nsec"`    // 0x03C i_ctime_nsec
	MtimeNsec    uint32    `f2fs:"i_mtime_nsec"`    // 0x040 i_mtime_nsec
	Generation   uint32    `f2fs:"i_generation"`    // 0x044 i_generation
	CurrentDepth uint32    `f2fs:"i_current_depth"` // 0x048 i_current_depth (dirs) / i_gc_failures
	XattrNid     uint32    `f2fs:"i_xattr_nid"`     // 0x04C i_xattr_nid
	Flags        uint32    `f2fs:"i_flags"`         // 0x050 i_flags
	Pino         uint32    `f2fs:"i_pino"`          // 0x054 i_pino
	Namelen      uint32    `f2fs:"i_namelen"`       // 0x058 i_namelen
	Name         [255]byte `f2fs:"i_name"`          // 0x05C i_name
	DirLevel     uint8     `f2fs:"i_dir_level"`     // 0x15B i_dir_level
	Ext          rawExtent `f2fs:"i_ext"`           // 0x15C i_ext
}

// rawExtent is struct f2fs_extent, the inode's cached largest extent.
type rawExtent struct {
	Fofs    uint32 `f2fs:"fofs"`     // 0x0 fofs
	Blkaddr uint32 `f2fs:"blk_addr"` // 0x4 blk_addr
	Len     uint32 `f2fs:"len"`      // 0x8 len
}

// rawExtraAttr is the front of i_addr when the inode has F2FS_EXTRA_ATTR (i_inline 0x20).
type rawExtraAttr struct {
	ExtraISize        uint16 `f2fs:"i_extra_isize"`        // 0x168 i_extra_isize
	InlineXattrSize   uint16 `f2fs:"i_inline_xattr_size"`  // 0x16A i_inline_xattr_size
	Projid            uint32 `f2fs:"i_projid"`             // 0x16C i_projid
	InodeChecksum     uint32 `f2fs:"i_inode_checksum,hex"` // 0x170 i_inode_checksum
	Crtime            uint64 `f2fs:"i_crtime,time"`        // 0x174 i_crtime
	CrtimeNsec        uint32 `f2fs:"i_crtime_nsec"`        // 0x17C i_crtime_nsec
	ComprBlocks       uint64 `f2fs:"i_compr_blocks"`       // 0x180 i_compr_blocks
	CompressAlgorithm uint8  `f2fs:"i_compress_algorithm"` // 0x188 i_compress_algorithm
	LogClusterSize    uint8  `f2fs:"i_log_cluster_size"`   // 0x189 i_log_cluster_size
	CompressFlag      uint16 `f2fs:"i_compress_flag,hex"`  // 0x18A i_compress_flag
}

// rawFooter is struct node_footer, the last 24 bytes of every node block.
type rawFooter struct {
	Nid         uint32 `f2fs:"nid"`          // 0x00 nid
	Ino         uint32 `f2fs:"ino"`          // 0x04 ino
	Flag        uint32 `f2fs:"flag"`         // 0x08 flag: bit 0 cold, 1 fsync, 2 dentry, 3+ node offset
	CPVer       uint64 `f2fs:"cp_ver"`       // 0x0C cp_ver
	NextBlkaddr uint32 `f2fs:"next_blkaddr"` // 0x14 next_blkaddr
}

// rawOrphanTail is the end of struct f2fs_orphan_block, after its 1020 ino entries (byte 4080).
type rawOrphanTail struct {
	Reserved   uint32 `f2fs:"reserved,hex"`  // 0x0 reserved
	BlkAddr    uint16 `f2fs:"blk_addr"`      // 0x4 blk_addr
	BlkCount   uint16 `f2fs:"blk_count"`     // 0x6 blk_count
	EntryCount uint32 `f2fs:"entry_count"`   // 0x8 entry_count
	CheckSum   uint32 `f2fs:"check_sum,hex"` // 0xC check_sum
}

// rawNATEntry is struct f2fs_nat_entry, 9 bytes.
type rawNATEntry struct {
	Version   uint8  `f2fs:"version,str"` // 0x0 version
	Ino       uint32 `f2fs:"ino"`         // 0x1 ino
	BlockAddr uint32 `f2fs:"block_addr"`  // 0x5 block_addr
}

// rawSITEntry is struct f2fs_sit_entry, 74 bytes.
type rawSITEntry struct {
	VBlocks  uint16   `f2fs:"vblocks"`   // 0x00 vblocks: bits 0-9 valid count, 10-15 segment type
	ValidMap [64]byte `f2fs:"valid_map"` // 0x02 valid_map, MSB-first
	Mtime    uint64   `f2fs:"mtime"`     // 0x42 mtime
}

// rawSummary is struct f2fs_summary, 7 bytes: the node and slot that own one block of a segment.
type rawSummary struct {
	Nid       uint32 `f2fs:"nid"`         // 0x0 nid
	Version   uint8  `f2fs:"version"`     // 0x4 version
	OfsInNode uint16 `f2fs:"ofs_in_node"` // 0x5 ofs_in_node
}

// rawDirEntry is struct f2fs_dir_entry, 11 bytes.
type rawDirEntry struct {
	HashCode uint32 `f2fs:"hash_code"` // 0x0 hash_code
	Ino      uint32 `f2fs:"ino"`       // 0x4 ino
	NameLen  uint16 `f2fs:"name_len"`  // 0x8 name_len
	FileType uint8  `f2fs:"file_type"` // 0xA file_type
}

// Sizes and offsets fixed by the 4096-byte block format (the F2FS ones named once in internal/f2fs).
const (
	sbOffset         = 1024 // F2FS_SUPER_OFFSET
	sbSize           = 3072
	sbChecksumOff    = 3068
	cpHeadSize       = 192 // offsetof(struct f2fs_checkpoint, sit_nat_version_bitmap)
	cpChecksumOff    = 4092
	blocksPerSeg     = f2fs.BlocksPerSeg
	natEntrySize     = f2fs.NATEntrySize
	sitEntrySize     = f2fs.SITEntrySize
	footerSize       = 24
	inodeAddrOff     = f2fs.InodeAddrOffset // offsetof(struct f2fs_inode, i_addr)
	inodeNidOff      = f2fs.InodeNidOffset  // offsetof(struct f2fs_inode, i_nid)
	defAddrsPerInode = f2fs.DefAddrsPerInode
	defAddrsPerBlock = f2fs.DefAddrsPerBlock
	nidsPerBlock     = f2fs.NidsPerBlock
	inlineXattrDef   = f2fs.DefaultInlineXattrAddrs // in words
	dentrySize       = 11
	dentrySlotLen    = 8
	nrDentryInBlock  = 214
	dentryBitmapLen  = 27
	dentryBlockRsvd  = 3
	sumEntrySize     = 7
	sumJournalOff    = 3584 // SUM_JOURNAL_SIZE starts after 512 summary entries
	sumJournalSize   = 507
	natJournalMax    = 38
	sitJournalMax    = 6
	natJournalEntry  = 13
	sitJournalEntry  = 78
	maxNameLen       = 255
)
