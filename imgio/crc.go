package imgio

import "github.com/zrviz/zrviz/internal/f2fscrc"

// f2fsMagic is F2FS_SUPER_MAGIC; it also seeds the superblock and checkpoint CRCs.
const f2fsMagic = f2fscrc.Magic

// f2fsCRC is the kernel's f2fs_crc32 (package f2fscrc).
func f2fsCRC(seed uint32, b []byte) uint32 { return f2fscrc.Checksum(seed, b) }
