package core

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
)

// DnodeOf returns the first file block and the slot count of the dnode that holds file block index,
// in a file whose inode holds addrsPerInode data slots and whose direct nodes hold [AddrsPerBlock], as
// the kernel's get_node_path places it.
func DnodeOf(index uint64, addrsPerInode int) (start uint64, slots int) {
	p := locate(index, dnodeGeom{api: uint64(max(addrsPerInode, 1)), apb: addrsPerBlock})
	return p.start, p.cap
}
