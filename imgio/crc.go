package imgio

import "hash/crc32"

// f2fsMagic is F2FS_SUPER_MAGIC; it also seeds the superblock and checkpoint CRCs.
const f2fsMagic = 0xF2F52010

// f2fsCRC is the kernel's f2fs_crc32: reflected CRC-32 (IEEE polynomial) with the given seed and no
// pre- or post-inversion. hash/crc32 inverts on both ends, so invert the seed going in and the result
// coming out.
func f2fsCRC(seed uint32, b []byte) uint32 {
	return ^crc32.Update(^seed, crc32.IEEETable, b)
}
