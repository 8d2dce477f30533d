// Package f2fscrc is the kernel's f2fs_crc32, shared by the image reader, which checks it, and the
// tests and tools that craft images, which must write it.
package f2fscrc

import "hash/crc32"

// Magic is F2FS_SUPER_MAGIC; it also seeds the superblock and checkpoint CRCs.
const Magic = 0xF2F52010

// Checksum is f2fs_crc32: reflected CRC-32 (IEEE polynomial) with the given seed and no pre- or
// post-inversion. hash/crc32 inverts on both ends, so the seed is inverted going in and the result
// coming out.
func Checksum(seed uint32, b []byte) uint32 {
	return ^crc32.Update(^seed, crc32.IEEETable, b)
}
