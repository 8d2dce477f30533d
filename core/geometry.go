package core

import "github.com/zrviz/zrviz/internal/f2fs"

// The F2FS geometry the engine models, for the packages that build its input (sandbox's synthetic
// file and volume) so they do not keep copies of it.
const (
	// BlockSize is F2FS_BLKSIZE, the only block size the engine takes.
	BlockSize = blockSize
	// BlocksPerSeg is the blocks of a segment (1 << log_blocks_per_seg), the only value the engine takes.
	BlocksPerSeg = blocksPerSeg
	// AddrsPerBlock is DEF_ADDRS_PER_BLOCK, the data slots of a direct node.
	AddrsPerBlock = addrsPerBlock
	// NidsPerBlock is NIDS_PER_BLOCK, the children of an indirect node.
	NidsPerBlock = nidsPerBlock
	// MaxFileBlocks is max_file_blocks(NULL): the largest file index range a file's node tree covers.
	MaxFileBlocks = maxFileBlocks
	// DefAddrsPerInode is DEF_ADDRS_PER_INODE, the data slots of an inode block without inline
	// xattrs; DefaultInlineXattrAddrs (DEFAULT_INLINE_XATTR_ADDRS) is what inline xattrs take of them.
	DefAddrsPerInode        = f2fs.DefAddrsPerInode
	DefaultInlineXattrAddrs = f2fs.DefaultInlineXattrAddrs
)

// DnodeOf returns the first file block and the slot count of the dnode that holds file block index,
// in a file whose inode holds addrsPerInode data slots and whose direct nodes hold [AddrsPerBlock], as
// the kernel's get_node_path places it.
func DnodeOf(index uint64, addrsPerInode int) (start uint64, slots int) {
	p := locate(index, dnodeGeom{api: uint64(max(addrsPerInode, 1)), apb: addrsPerBlock})
	return p.start, p.cap
}

// NodeBlocks returns the node blocks of a file whose every node from the inode to the dnode that
// holds file block end-1 exists, in the tree get_node_path walks: the inode, the direct nodes, and
// the indirect and double-indirect nodes above them (1, the inode alone, for end ≤ addrsPerInode).
func NodeBlocks(end uint64, addrsPerInode int) uint64 {
	if end == 0 {
		return 1
	}
	p := locate(end-1, dnodeGeom{api: uint64(max(addrsPerInode, 1)), apb: addrsPerBlock})
	const full = 1 + nidsPerBlock // an indirect node and its direct nodes
	n := uint64(1)
	switch top := uint64(p.path[0].top); p.depth {
	case 1: // i_nid[0] or i_nid[1]
		n += top + 1
	case 2: // under i_nid[2] or i_nid[3]: the direct nodes before, then this indirect node's first a+1
		n += 2 + (top-2)*full + 1 + uint64(p.path[1].a) + 1
	case 3: // under i_nid[4]: every node before it, then its first a indirect children, full
		n += 2 + 2*full + 1 + uint64(p.path[1].a)*full + 1 + uint64(p.path[2].b) + 1
	}
	return n
}

// SetValidBit sets block k's bit in a segment's SIT valid map, in the on-disk order (f2fs_set_bit:
// byte k/8, the most significant bit first).
func SetValidBit(m *[64]byte, k uint32) { m[k>>3] |= 0x80 >> (k & 7) }
