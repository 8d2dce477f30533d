package reliability

import (
	"encoding/binary"

	"github.com/zrviz/zrviz/internal/f2fscrc"
)

// f2fsMagic is the superblock magic, also the seed of f2fs_crc32.
const f2fsMagic = f2fscrc.Magic

// cpCRC computes a checkpoint block's CRC the way the kernel does
// (f2fs_checkpoint_chksum): over [0, co) and, when co leaves room, the
// bytes after the stored checksum. ok is false when co is out of range,
// in which case no CRC can be stored.
func cpCRC(blk []byte, co uint32) (crc uint32, ok bool) {
	if co < 192 || int(co) > len(blk)-4 {
		return 0, false
	}
	crc = f2fscrc.Checksum(f2fsMagic, blk[:co])
	if int(co) < len(blk)-4 {
		crc = f2fscrc.Checksum(crc, blk[co+4:])
	}
	return crc, true
}

// fixCPCRC stores the recomputed CRC in a checkpoint block, if its
// checksum_offset allows one.
func fixCPCRC(blk []byte) {
	co := binary.LittleEndian.Uint32(blk[164:])
	if crc, ok := cpCRC(blk, co); ok {
		binary.LittleEndian.PutUint32(blk[co:], crc)
	}
}
