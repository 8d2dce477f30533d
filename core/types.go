package core

import (
	"errors"
	"fmt"

	"github.com/zrviz/zrviz/internal/f2fs"
)

// Special slot values (f2fs_fs.h, defined in [f2fs]). A data slot holding any other value is a
// block address.
const (
	NullAddr     = f2fs.NullAddr     // hole
	NewAddr      = f2fs.NewAddr      // reserved, never written: counted, no SIT bit
	CompressAddr = f2fs.CompressAddr // compressed-cluster marker in slot 0
)

// The geometry the engine takes, named once in internal/f2fs.
const (
	blockSize      = f2fs.BlockSize
	blocksPerSeg   = f2fs.BlocksPerSeg
	addrsPerBlock  = f2fs.DefAddrsPerBlock // DEF_ADDRS_PER_BLOCK: slots of a direct node
	nidsPerBlock   = f2fs.NidsPerBlock     // NIDS_PER_BLOCK: children of an indirect node
	nullSegno      = f2fs.NullSegno
	fallocKeepSize = 0x01
	fallocZero     = 0x10
)

// Inode flag bits the argument checks look at (f2fs.h, i_flags and i_inline).
const (
	FlagCompressed uint32 = 0x00000004 // F2FS_COMPR_FL
	FlagImmutable  uint32 = 0x00000010 // F2FS_IMMUTABLE_FL
	FlagAppend     uint32 = 0x00000020 // F2FS_APPEND_FL
	FlagVerity     uint32 = 0x00100000 // F2FS_VERITY_FL

	InlineData      uint8 = 0x02 // F2FS_INLINE_DATA
	InlineDentry    uint8 = 0x04 // F2FS_INLINE_DENTRY
	InlineDataExist uint8 = 0x08 // F2FS_DATA_EXIST
	InlinePinFile   uint8 = 0x40 // F2FS_PIN_FILE
	// InlineComprReleased is F2FS_COMPRESS_RELEASED (FI_COMPRESS_RELEASED on the inode):
	// F2FS_IOC_RELEASE_COMPRESS_BLOCKS gave the compressed clusters' saved blocks back. Not the
	// same as i_compr_blocks 0, which a compressed file whose clusters did not compress also has.
	InlineComprReleased uint8 = 0x80

	AdviseCold     uint8 = 0x01 // FADVISE_COLD_BIT in i_advise
	AdviseEncrypt  uint8 = 0x04 // FADVISE_ENCRYPT_BIT
	AdviseKeepSize uint8 = 0x10 // FADVISE_KEEP_SIZE_BIT in i_advise
)

// Mode selects how pass 2 of f2fs_do_zero_range releases blocks.
type Mode int

const (
	// PerBlock is upstream: one f2fs_invalidate_blocks(addr, 1) per block.
	PerBlock Mode = iota
	// Batched is the patch: one f2fs_invalidate_blocks(start, len) per
	// physically contiguous run inside a dnode chunk.
	Batched
)

// Modes lists both modes in their canonical order.
var Modes = [2]Mode{PerBlock, Batched}

// String returns "per-block" or "batched".
func (m Mode) String() string {
	switch m {
	case PerBlock:
		return "per-block"
	case Batched:
		return "batched"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ErrBadMode is returned by [ParseMode] for an unknown name.
var ErrBadMode = errors.New("core: unknown mode")

// ParseMode parses "per-block" (also "perblock", "stock", "upstream") or
// "batched" (also "batch", "patch").
func ParseMode(s string) (Mode, error) {
	switch s {
	case "per-block", "perblock", "stock", "upstream":
		return PerBlock, nil
	case "batched", "batch", "patch":
		return Batched, nil
	}
	return 0, fmt.Errorf("%w %q", ErrBadMode, s)
}

// MarshalText encodes the mode by name, so JSON shows "per-block".
func (m Mode) MarshalText() ([]byte, error) {
	if m != PerBlock && m != Batched {
		return nil, fmt.Errorf("%w %d", ErrBadMode, int(m))
	}
	return []byte(m.String()), nil
}

// UnmarshalText is the inverse of [Mode.MarshalText].
func (m *Mode) UnmarshalText(b []byte) error {
	v, err := ParseMode(string(b))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// DnodeSource gives the data slots of the dnode (the inode block or a direct
// node) that holds file block index. start is the file block index of
// slots[0]; slots has the node's full capacity (all NullAddr when the node
// does not exist); missing counts the nodes on the path (direct, indirect,
// double-indirect) that do not exist. The engine copies slots and never
// writes to them. *imgio.File satisfies it.
type DnodeSource interface {
	DnodeSlots(index uint64) (start uint64, slots []uint32, missing int, err error)
}

// DnodeLister is optionally implemented by a [DnodeSource]: DnodeStarts lists the file block
// index of slot 0 of every dnode that exists, in increasing order (ok false: not known). A walk
// over holes then jumps from one existing dnode to the next, as the kernel's node lookups find
// them, instead of asking for each missing one.
type DnodeLister interface {
	DnodeStarts() (starts []uint64, ok bool)
}

// NodeAddrSource is optionally implemented by a [DnodeSource]: NodeAddr gives the block address
// the NAT holds for the node at level (0 = the node i_nid points at, 1 its child, 2 its
// grandchild) on the path from the inode to file block index, which truncate_node passes to
// f2fs_invalidate_blocks; ok false when that node does not exist. Truncate needs it to free
// nodes. *imgio.File satisfies it.
type NodeAddrSource interface {
	NodeAddr(index uint64, level int) (blkaddr uint32, ok bool, err error)
}

// SITSource gives a main-area segment's valid block count and its 512-bit
// valid map as stored on disk (bit k of the segment is byte k/8, mask
// 0x80>>(k%8), as f2fs_test_bit reads it). *imgio.Image satisfies it.
type SITSource interface {
	SegmentValidMap(segno uint32) (valid uint32, bitmap [64]byte, err error)
}

// Volume is what the engine needs of the volume: geometry, the
// checkpoint's counters and current segments.
type Volume struct {
	BlockSize       uint32 `json:"blockSize"`    // must be 4096
	BlocksPerSeg    uint32 `json:"blocksPerSeg"` // must be 512
	Segment0Blkaddr uint32 `json:"segment0Blkaddr"`
	MainBlkaddr     uint32 `json:"mainBlkaddr"`
	MaxBlkaddr      uint32 `json:"maxBlkaddr"` // segment0 + segment_count*512
	MainSegments    uint32 `json:"mainSegments"`
	SegsPerSec      uint32 `json:"segsPerSec"`

	UserBlockCount  uint64 `json:"userBlockCount"`
	ValidBlockCount uint64 `json:"validBlockCount"`
	ValidNodeCount  uint32 `json:"validNodeCount"`
	// MaxNodeCount bounds ValidNodeCount (total_node_count); 0 = no bound.
	MaxNodeCount uint32 `json:"maxNodeCount,omitempty"`
	// CurrentReservedBlocks and RootReservedBlocks are subtracted from
	// UserBlockCount to get the space a reservation may use (the caller is
	// modelled as unprivileged). Both are 0 with default mount options.
	CurrentReservedBlocks uint64 `json:"currentReservedBlocks,omitempty"`
	RootReservedBlocks    uint64 `json:"rootReservedBlocks,omitempty"`
	// ReservedBlocks is the reserved_blocks tunable current_reserved_blocks grows back to as
	// blocks are freed (dec_valid_block_count); 0 when it was never written.
	ReservedBlocks uint64 `json:"reservedBlocks,omitempty"`

	// CurrentSegments are the segnos of the active logs; they never enter
	// the dirty or prefree lists.
	CurrentSegments []uint32 `json:"currentSegments"`
	// HotDataSegno and HotDataBlkoff are the checkpoint's
	// cur_data_segno[CURSEG_HOT_DATA] and cur_data_blkoff[CURSEG_HOT_DATA]:
	// f2fs_convert_inline_page sets FI_HOT_DATA before its out-of-place
	// write, so the converted page lands on the first free block of the hot
	// data log's segment at or after that offset (LFS; SSR would also take
	// the first free block).
	HotDataSegno  uint32 `json:"hotDataSegno"`
	HotDataBlkoff uint32 `json:"hotDataBlkoff"`
	// ColdDataSegno and ColdDataBlkoff are the same for CURSEG_COLD_DATA,
	// where a cold file's (FADVISE_COLD_BIT) conversion goes instead.
	ColdDataSegno  uint32 `json:"coldDataSegno"`
	ColdDataBlkoff uint32 `json:"coldDataBlkoff"`
	// WarmDataSegno and WarmDataBlkoff are the same for CURSEG_WARM_DATA, where writeback puts a
	// data page written out of place (f2fs_allocate_data_block) unless the file is hot or cold.
	WarmDataSegno  uint32 `json:"warmDataSegno"`
	WarmDataBlkoff uint32 `json:"warmDataBlkoff"`
	// IPUTuned says IPUPolicy was set (`tune ipu_policy N`, sysfs ipu_policy); otherwise the
	// kernel's default applies: FORCE|HONOR_OPU_WRITE (0x81) on a volume of at most 8,192 main
	// segments (16 GiB, f2fs_tuning_parameters), else FSYNC (0x10, build_segment_manager).
	IPUTuned  bool   `json:"ipuTuned,omitempty"`
	IPUPolicy uint32 `json:"ipuPolicy,omitempty"`
	// NeedFsck is SBI_NEED_FSCK as earlier operations of the mount left it: from then on every
	// data page is written out of place (f2fs_should_update_outplace).
	NeedFsck bool `json:"needFsck,omitempty"`
	// Prefree lists the segments emptied since the last checkpoint: not free (get_new_segment
	// skips them) until a checkpoint (sync, unmount) frees them.
	Prefree []uint32 `json:"prefree,omitempty"`
	// Trimmed is CP_TRIMMED_FLAG: after mount every discard-map bit is set.
	Trimmed bool `json:"trimmed,omitempty"`
	// LFS is the mount option mode=lfs (f2fs_lfs_mode), which an image does not record: every
	// data page is written out of place (f2fs_should_update_outplace) and no log ever takes SSR
	// (f2fs_need_SSR is false), so a nearly full volume is modelled without refusals.
	LFS bool `json:"lfs,omitempty"`
	// CheckpointError is CP_ERROR_FLAG (the fs is shut down): EIO.
	CheckpointError bool `json:"checkpointError,omitempty"`
}

// Inode holds the inode facts the engine uses.
type Inode struct {
	Ino           uint32 `json:"ino"`
	Type          string `json:"type"` // "file", "dir", "symlink", "other"
	Size          int64  `json:"size"`
	Blocks        uint64 `json:"blocks"`        // i_blocks in 4 KiB blocks
	AddrsPerInode int    `json:"addrsPerInode"` // data slots in the inode block
	// AddrsPerBlock is the data slots of a direct node: 1018 (DEF_ADDRS_PER_BLOCK), rounded down to
	// the cluster size for a compressed inode (1016 for 4-block clusters); 0 means 1018.
	AddrsPerBlock int `json:"addrsPerBlock,omitempty"`
	// ClusterSize is the blocks of a compressed cluster (0: not compressed); ComprBlocks is
	// i_compr_blocks, the blocks its compressed clusters save (0: none compressed — random data is
	// stored raw — or released: InlineComprReleased tells which).
	ClusterSize int    `json:"clusterSize,omitempty"`
	ComprBlocks uint64 `json:"comprBlocks,omitempty"`
	Inline      uint8  `json:"inline"` // i_inline
	Advise      uint8  `json:"advise"` // i_advise
	Flags       uint32 `json:"flags"`  // i_flags
	// SlotsEnd is one past the last non-NULL slot of the file (0 if none);
	// the final slot map covers up to it. sim fills it from the reader.
	SlotsEnd uint64 `json:"slotsEnd"`
	// Dirty lists, in index order, the file's pages dirty in the page cache (fill_zero's partial
	// pages, buffered writes): what writeback will write. Never modified in place.
	Dirty []uint64 `json:"dirty,omitempty"`
	// ReadExt is i_ext, the largest extent of the read extent cache as the inode block holds it
	// (f2fs_init_read_extent_tree starts the cache from it); Len 0: none.
	ReadExt ReadExtent `json:"-"`
	// Blkaddr is the block holding the inode (its NAT entry's address) and XattrNid i_xattr_nid:
	// what an unlink's f2fs_remove_inode_page frees after the truncate. 0: not known (an unlink
	// is refused).
	Blkaddr  uint32 `json:"-"`
	XattrNid uint32 `json:"-"`
	// Links is i_links (0: not known). An unlink evicts the inode only when it removes the last
	// link; other counts are refused.
	Links uint32 `json:"-"`
}

// ReadExtent is an extent of the read extent cache: Len pages from file page Fofs.
type ReadExtent struct{ Fofs, Len uint32 }

// Input is everything a run reads.
type Input struct {
	Path   string
	Volume Volume
	Inode  Inode
	Slots  DnodeSource
	SIT    SITSource
}

// Op is the system call a [Request] makes. Each goes through its own kernel entry point; punch
// and truncate share f2fs_truncate_data_blocks_range, the call site upstream batched in 6.14.
type Op uint8

const (
	// OpZero is fallocate(FALLOC_FL_ZERO_RANGE[|KEEP_SIZE]): f2fs_zero_range → f2fs_do_zero_range.
	OpZero Op = iota
	// OpPunch is fallocate(FALLOC_FL_PUNCH_HOLE|FALLOC_FL_KEEP_SIZE): f2fs_punch_hole →
	// f2fs_truncate_hole → f2fs_truncate_data_blocks_range. Offset and Length as for a zero.
	OpPunch
	// OpTruncate is truncate(2) to Offset bytes (Length unused): f2fs_setattr → f2fs_truncate →
	// f2fs_do_truncate_blocks → f2fs_truncate_data_blocks_range and f2fs_truncate_inode_blocks.
	OpTruncate
	// OpUnlink is unlink(2) of the file's last link (Offset and Length unused): f2fs_unlink →
	// f2fs_delete_entry → f2fs_drop_nlink (f2fs_add_orphan_inode), then the last iput's
	// f2fs_evict_inode → f2fs_truncate → f2fs_truncate_blocks(inode, 0) — the walk of a truncate
	// to 0 — and f2fs_remove_inode_page → truncate_node of the inode (f2fs_remove_orphan_inode).
	OpUnlink
)

var opNames = [...]string{"zero", "punch", "truncate", "unlink"}

// String returns "zero", "punch", "truncate" or "unlink".
func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// MarshalText encodes the op by name.
func (o Op) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText is the inverse of [Op.MarshalText].
func (o *Op) UnmarshalText(b []byte) error {
	for i, n := range opNames {
		if n == string(b) {
			*o = Op(i)
			return nil
		}
	}
	return fmt.Errorf("core: unknown op %q", b)
}

// Request is one call on a file: by default fallocate(FALLOC_FL_ZERO_RANGE); Op selects punch hole
// or truncate.
type Request struct {
	// Op is the call; the zero value is a zero range.
	Op       Op    `json:"op,omitempty"`
	Offset   int64 `json:"offset"`
	Length   int64 `json:"length"`
	KeepSize bool  `json:"keepSize"`
	// ExtraFlags are other FALLOC_FL_* bits ORed into the mode, to show the
	// argument checks (normally 0).
	ExtraFlags uint32 `json:"extraFlags,omitempty"`
	// DentryInline (an unlink) says the directory that names the file keeps its dentries in its
	// inode (F2FS_INLINE_DENTRY): f2fs_delete_entry then dirties that inode, not a dentry block.
	// False: a dentry block, or not known; the model refuses the unlink (source.UnlinkRequest
	// looks the directory up).
	DentryInline bool `json:"-"`
}

// ErrInput reports an Input the engine cannot model (geometry it does not
// support, a missing source).
var ErrInput = errors.New("core: unusable input")

// SourceError wraps an error returned by a [DnodeSource] or [SITSource], or
// a source answer that contradicts the geometry.
type SourceError struct {
	Op    string // "DnodeSlots" or "SegmentValidMap"
	Index uint64 // file block index or segno
	Err   error
}

// Error says which source call failed and why.
func (e *SourceError) Error() string {
	return fmt.Sprintf("core: %s(%d): %v", e.Op, e.Index, e.Err)
}

// Unwrap returns the source's error.
func (e *SourceError) Unwrap() error { return e.Err }

// InputError says which part of an [Input] the engine cannot model: the field of [Volume] or
// [Inode] (or the source) and the value it holds. It is an [ErrInput] (errors.Is), so a caller that
// only asks whether the input is unusable need not know the fields.
type InputError struct {
	Field string // "Slots", "SIT", "BlockSize", "BlocksPerSeg", "MainBlkaddr", "MaxBlkaddr", "AddrsPerInode", "AddrsPerBlock"
	Val   int64  // the value the check refused
	Msg   string // what the engine models instead
}

// Error names the field, its value and what the engine models.
func (e *InputError) Error() string {
	return fmt.Sprintf("%v: %s %d: %s", ErrInput, e.Field, e.Val, e.Msg)
}

// Unwrap makes an InputError an [ErrInput].
func (e *InputError) Unwrap() error { return ErrInput }

func (in *Input) check() error {
	v := &in.Volume
	switch {
	case in.Slots == nil:
		return &InputError{Field: "Slots", Msg: "no slot source"}
	case in.SIT == nil:
		return &InputError{Field: "SIT", Msg: "no SIT source"}
	case v.BlockSize != blockSize:
		return &InputError{Field: "BlockSize", Val: int64(v.BlockSize), Msg: "only 4096-byte blocks"}
	case v.BlocksPerSeg != blocksPerSeg:
		return &InputError{Field: "BlocksPerSeg", Val: int64(v.BlocksPerSeg), Msg: "only 512 blocks per segment"}
	case v.MainBlkaddr < v.Segment0Blkaddr:
		return &InputError{Field: "MainBlkaddr", Val: int64(v.MainBlkaddr), Msg: fmt.Sprintf("the main area starts before segment 0 at %d", v.Segment0Blkaddr)}
	case v.MaxBlkaddr < v.MainBlkaddr:
		return &InputError{Field: "MaxBlkaddr", Val: int64(v.MaxBlkaddr), Msg: fmt.Sprintf("the volume ends before its main area at %d", v.MainBlkaddr)}
	case f2fs.SegOff(v.MainBlkaddr, v.Segment0Blkaddr) != 0:
		return &InputError{Field: "MainBlkaddr", Val: int64(v.MainBlkaddr), Msg: fmt.Sprintf("not a whole number of segments after segment 0 at %d", v.Segment0Blkaddr)}
	case in.Inode.Type == "file" && (in.Inode.AddrsPerInode <= 0 || in.Inode.AddrsPerInode > DefAddrsPerInode):
		return &InputError{Field: "AddrsPerInode", Val: int64(in.Inode.AddrsPerInode), Msg: fmt.Sprintf("an inode holds 1 to %d data slots", DefAddrsPerInode)}
	case in.Inode.AddrsPerBlock < 0 || in.Inode.AddrsPerBlock > addrsPerBlock:
		return &InputError{Field: "AddrsPerBlock", Val: int64(in.Inode.AddrsPerBlock), Msg: fmt.Sprintf("a direct node holds at most %d data slots", addrsPerBlock)}
	}
	return nil
}

// geom is the inode's dnode capacities; an inode that is not a regular file still gets a
// non-zero inode capacity so the overlay never divides by zero.
// DnodeStart is the first file block index of the node page (inode or direct node) that holds file
// block index's slot, as get_node_path places it for this inode.
func (i *Inode) DnodeStart(index uint64) uint64 { return locate(index, i.geom()).start }

func (i *Inode) geom() dnodeGeom {
	g := dnodeGeom{api: uint64(max(i.AddrsPerInode, 1)), apb: addrsPerBlock}
	if i.AddrsPerBlock > 0 {
		g.apb = uint64(i.AddrsPerBlock)
	}
	return g
}
